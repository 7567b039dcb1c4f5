"""The command line: parse options, run the engine for every environment and patch, render, pick the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

import hfpatch
from hfpatch import engine
from hfpatch.catalog import Patch, load_catalog
from hfpatch.environment import Installation, Interpreter, locate, resolve_interpreter
from hfpatch.errors import ExitCode, HfpatchError, UsageError

JSON_SCHEMA = 1

Operation = Callable[[Patch, Interpreter, "Installation | None"], engine.Outcome]


@dataclass
class PatchResult:
    patch: Patch
    outcome: engine.Outcome | None = None
    error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.ERROR if self.outcome is None else self.outcome.exit_code


@dataclass
class EnvironmentResult:
    requested: str | None
    interpreter: Interpreter | None = None
    installations: dict[str, Installation | None] = field(default_factory=dict)
    patches: list[PatchResult] = field(default_factory=list)
    error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        codes = [result.exit_code for result in self.patches]
        return max([ExitCode.ERROR if self.error else ExitCode.OK, *codes])


def run(pythons: Sequence[str], patch_ids: Sequence[str], operation: Operation) -> list[EnvironmentResult]:
    """Run `operation` for every selected patch in every environment; failures are gathered, not raised."""
    patches = _select(patch_ids)
    results = []
    requested: list[str | None] = list(pythons) if pythons else [None]
    for python in requested:
        result = EnvironmentResult(requested=python)
        results.append(result)
        try:
            result.interpreter = resolve_interpreter(python)
        except HfpatchError as error:
            result.error = str(error)
            continue
        for patch in patches:
            result.patches.append(_run_one(result, patch, operation))
    return results


def _run_one(result: EnvironmentResult, patch: Patch, operation: Operation) -> PatchResult:
    assert result.interpreter is not None
    try:
        if patch.package not in result.installations:
            result.installations[patch.package] = locate(
                result.interpreter, patch.package, patch.distribution, patch.target
            )
        return PatchResult(patch, operation(patch, result.interpreter, result.installations[patch.package]))
    except HfpatchError as error:
        return PatchResult(patch, error=str(error))


def _select(patch_ids: Sequence[str]) -> list[Patch]:
    catalog = load_catalog()
    if not patch_ids:
        return list(catalog)
    known = {patch.id: patch for patch in catalog}
    unknown = [patch_id for patch_id in patch_ids if patch_id not in known]
    if unknown:
        raise UsageError(f"no patch named {unknown[0]!r} in the catalog; `hfpatch list` shows them.")
    return [known[patch_id] for patch_id in patch_ids]


def exit_code(results: Sequence[EnvironmentResult]) -> ExitCode:
    return max((result.exit_code for result in results), default=ExitCode.OK)


# ------------------------------------------------------------------------------------------------------- rendering


def render_text(results: Sequence[EnvironmentResult], show_diff: bool = False) -> None:
    for result in results:
        if result.error:
            click.echo(f"hfpatch: error: {result.error}", err=True)
            continue
        click.echo(_environment_heading(result))
        for item in result.patches:
            if item.outcome is None:
                click.echo(f"  {item.patch.id}: error: {item.error}", err=True)
                continue
            outcome = item.outcome
            label = outcome.assessment.condition.value if outcome.action == "checked" else outcome.action
            stream_err = outcome.exit_code is ExitCode.ERROR
            click.echo(f"  {item.patch.id}: {label}: {outcome.message}", err=stream_err)
            for note in outcome.notes:
                click.echo(f"    note: {note}")
            if show_diff and outcome.diff:
                click.echo(outcome.diff, nl=False)


def _environment_heading(result: EnvironmentResult) -> str:
    if result.interpreter is None:
        return f"{result.requested}:"
    where = result.interpreter.executable or result.requested or "python"
    found = [
        f"{installation.distribution} {installation.version or '(no version metadata)'} at {installation.package_dir}"
        for installation in result.installations.values()
        if installation is not None
    ]
    suffix = f" ({'; '.join(found)})" if found else ""
    return f"{where} [Python {result.interpreter.version}]{suffix}"


def render_json(command: str, results: Sequence[EnvironmentResult]) -> None:
    document = {
        "schema": JSON_SCHEMA,
        "hfpatch_version": hfpatch.__version__,
        "command": command,
        "exit_code": int(exit_code(results)),
        "environments": [_environment_json(result) for result in results],
    }
    import json

    click.echo(json.dumps(document, indent=2))


def _environment_json(result: EnvironmentResult) -> dict[str, Any]:
    interpreter = result.interpreter
    return {
        "python": interpreter.executable if interpreter else result.requested,
        "python_version": interpreter.version if interpreter else None,
        "error": result.error,
        "exit_code": int(result.exit_code),
        "patches": [_patch_json(item) for item in result.patches],
    }


def _patch_json(item: PatchResult) -> dict[str, Any]:
    patch = item.patch
    data: dict[str, Any] = {
        "id": patch.id,
        "upstream": patch.upstream,
        "upstream_url": patch.upstream_url,
        "fixed_in": patch.fixed_in,
        "exit_code": int(item.exit_code),
        "error": item.error,
    }
    if item.outcome is None:
        return data
    outcome, assessment = item.outcome, item.outcome.assessment
    installation = assessment.installation
    data.update(
        {
            "condition": assessment.condition.value,
            "action": outcome.action,
            "message": outcome.message,
            "notes": list(outcome.notes),
            "distribution": patch.distribution,
            "version": installation.version if installation else None,
            "file": str(assessment.target) if assessment.target else None,
            "file_sha256": assessment.file_sha256,
            "stale_record": assessment.stale_record,
            "record": None if assessment.record is None else assessment.record.__dict__,
        }
    )
    if outcome.diff is not None:
        data["diff"] = outcome.diff
    return data


def _finish(command: str, results: Sequence[EnvironmentResult], as_json: bool, show_diff: bool = False) -> None:
    if as_json:
        render_json(command, results)
    else:
        render_text(results, show_diff=show_diff)
    raise SystemExit(int(exit_code(results)))


# --------------------------------------------------------------------------------------------------------- commands

_python_option = click.option(
    "--python",
    "pythons",
    multiple=True,
    metavar="PATH",
    help="Act on this interpreter's environment instead of hfpatch's own. Repeat for several environments.",
)
_patch_option = click.option(
    "--patch", "patch_ids", multiple=True, metavar="ID", help="Only this patch (repeatable). Default: all."
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(hfpatch.__version__, prog_name="hfpatch")
def cli() -> None:
    """Backport upstream fixes into an installed transformers, on disk, with a backup and a record.

    \b
    Exit codes: 0 all is as it must be; 1 action needed (check); 2 error or refusal.
    """


@cli.command()
@_python_option
@_patch_option
@_json_option
@click.option("--dry-run", is_flag=True, help="Print the unified diff; write nothing.")
def apply(pythons: tuple[str, ...], patch_ids: tuple[str, ...], as_json: bool, dry_run: bool) -> None:
    """Patch the installed code where it needs it (run it in the image build)."""
    results = run(pythons, patch_ids, lambda p, i, inst: engine.apply(p, i, inst, dry_run=dry_run))
    _finish("apply", results, as_json, show_diff=dry_run)


@cli.command()
@_python_option
@_patch_option
@_json_option
@click.option(
    "--fail-on-obsolete",
    is_flag=True,
    help="Exit 1 when upstream already ships a fix, so that dead `hfpatch apply` steps get removed.",
)
def check(pythons: tuple[str, ...], patch_ids: tuple[str, ...], as_json: bool, fail_on_obsolete: bool) -> None:
    """Say whether every patch is as it must be: exit 0 yes, 1 action needed, 2 error."""
    results = run(pythons, patch_ids, lambda p, i, inst: engine.check(p, i, inst, fail_on_obsolete))
    _finish("check", results, as_json)


@cli.command()
@_python_option
@_patch_option
@_json_option
@click.option("--dry-run", is_flag=True, help="Print the unified diff; write nothing.")
@click.option("--force", is_flag=True, help="Restore the original even over a file someone edited since apply.")
def revert(pythons: tuple[str, ...], patch_ids: tuple[str, ...], as_json: bool, dry_run: bool, force: bool) -> None:
    """Put the original bytes back (run it before upgrading transformers)."""
    results = run(pythons, patch_ids, lambda p, i, inst: engine.revert(p, i, inst, force=force, dry_run=dry_run))
    _finish("revert", results, as_json, show_diff=dry_run)


@cli.command()
@_python_option
@_patch_option
@_json_option
def verify(pythons: tuple[str, ...], patch_ids: tuple[str, ...], as_json: bool) -> None:
    """Prove the fix where it runs: load a throwaway hub-cache snapshot with the real loader, offline."""
    from hfpatch.verification import verify as run_probe

    results = run(pythons, patch_ids, run_probe)
    _finish("verify", results, as_json)


@cli.command(name="list")
@_python_option
@_patch_option
@_json_option
def list_(pythons: tuple[str, ...], patch_ids: tuple[str, ...], as_json: bool) -> None:
    """Show the catalog and each patch's condition in the target environment (exit codes as for check)."""
    results = run(pythons, patch_ids, lambda p, i, inst: engine.check(p, i, inst, fail_obsolete=False))
    if not as_json:
        for patch in _select(patch_ids):
            click.echo(f"{patch.id}: {patch.title}")
            click.echo(
                f"  upstream {patch.upstream} ({patch.upstream_url}), fixed in {patch.distribution} {patch.fixed_in}"
            )
            click.echo(f"  patches {patch.function} in {patch.target}")
        click.echo("")
    _finish("list", results, as_json)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script; returns the exit code instead of exiting, so that tests can call it."""
    try:
        cli.main(args=list(argv) if argv is not None else sys.argv[1:], prog_name="hfpatch", standalone_mode=False)
    except SystemExit as stop:
        return int(stop.code or 0)
    except click.exceptions.Abort:
        click.echo("hfpatch: aborted", err=True)
        return int(ExitCode.ERROR)
    except click.ClickException as error:
        error.show()
        return int(ExitCode.ERROR)
    except HfpatchError as error:
        click.echo(f"hfpatch: error: {error}", err=True)
        return int(error.exit_code)
    except Exception:
        # A bug in hfpatch: keep its traceback, and never let it pass for exit 1 ("action needed").
        import traceback

        traceback.print_exc()
        click.echo("hfpatch: internal error (a bug in hfpatch; the traceback is above)", err=True)
        return int(ExitCode.ERROR)
    return 0
