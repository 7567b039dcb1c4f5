"""What a person reads and what a program reads: the results of a command as text, or as one JSON document.

Conditions and actions are rendered by their enum values here and nowhere else. The text names each environment
once, in its heading (the interpreter, and where each distribution lies), and each path inside those directories
relative to them; a command to copy (in backticks) and the JSON document keep every path whole.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import hfpatch
from hfpatch import advisory_render, reasons, state
from hfpatch.catalog import is_builtin
from hfpatch.commands import EnvironmentResult, exit_code
from hfpatch.diagnosis import Condition
from hfpatch.engine import Outcome
from hfpatch.entry import Patch, Verdict, release_span
from hfpatch.errors import ExitCode
from hfpatch.facts import FileFacts
from hfpatch.reasons import Reason

JSON_SCHEMA = 3


class View(NamedTuple):
    """How the text is to read."""

    show_diff: bool = False  # a dry run: each change as a unified diff
    # --quiet: only what needs action or is an error; nothing at all where every patch is as it must be.
    quiet: bool = False
    # Patches that, where they do not concern the environment (not installed, not applicable, not covered, fixed
    # upstream), are only counted in one line of it: those nobody asked for (neither --patch nor [tool.hfpatch]).
    foldable: frozenset[str] = frozenset()
    config: Path | None = None  # the pyproject.toml whose [tool.hfpatch] chose the catalogs and patches
    required: frozenset[str] = frozenset()  # the patches it requires
    # -v (and --patch): every patch and every advisory in its own line, the fixed and not-affected ones too.
    verbose: bool = False
    # -v: every file a sentence names (else a long list is its first and a count).
    every_file: bool = False


# The longest line the text has (a command or a path longer than that aside: never broken).
WIDTH = 120
# What does not concern an environment: counted in one line of it unless asked for.
_NOT_CONCERNED = (
    Condition.NOT_INSTALLED,
    Condition.NOT_APPLICABLE,
    Condition.NOT_COVERED,
    Condition.FIXED_UPSTREAM,
)


def text(results: Sequence[EnvironmentResult], view: View, out: TextIO) -> None:
    shown_any = False
    if view.config is not None and not view.quiet:
        print(f"[tool.hfpatch] of {view.config}", file=out)
    for result in results:
        if result.environment is None:
            if result.error:
                print(f"hfpatch: error: {result.error}", file=sys.stderr)
            continue
        shown = [outcome for outcome in result.outcomes if not view.quiet or outcome.exit_code is not ExitCode.OK]
        open_by = frozenset() if result.advisories is None else result.advisories.open_by()
        folds = [_folds(outcome, view, open_by) for outcome in shown]
        folded = [outcome for outcome, fold in zip(shown, folds, strict=True) if fold]
        shown = [outcome for outcome, fold in zip(shown, folds, strict=True) if not fold]
        if shown or result.obsolete or not view.quiet:
            shown_any = True
            _environment_text(result, shown, folded, view, out)
        if result.error:
            print(f"hfpatch: error: {result.error}", file=sys.stderr)
    if len(results) > 1 and (shown_any or any(result.error for result in results)):
        print(summary(results), file=out)


def _environment_text(
    result: EnvironmentResult, shown: list[Outcome], folded: list[Outcome], view: View, out: TextIO
) -> None:
    assert result.environment is not None
    roots = sorted({found.root for found in result.environment.installations}, key=lambda root: -len(str(root)))
    _print(heading(result), out)
    for outcome in shown:
        _print(f"  {outcome.patch.id}: {label(outcome)}: {words(outcome.message, roots, view.every_file)}", out)
        for note in outcome.notes:
            _print(f"    note: {_within(note, roots)}", out)
        if view.show_diff and outcome.diff:
            out.write(outcome.diff)
    if folded:
        _print(f"  {folded_line(folded)}", out)
    for line in advisory_render.text_lines(result.advisories, verbose=view.verbose, quiet=view.quiet):
        _print(line, out)
    if result.obsolete:
        _print(f"  obsolete: {result.obsolete}", out)


def folded_line(folded: Sequence[Outcome]) -> str:
    """The patches that do not concern the environment, counted by condition."""
    counts = {condition: sum(outcome.condition is condition for outcome in folded) for condition in _NOT_CONCERNED}
    named = ", ".join(f"{count} {condition.value}" for condition, count in counts.items() if count)
    return f"not concerned here: {named} (-v lists them)"


def _folds(outcome: Outcome, view: View, open_by: frozenset[str]) -> bool:
    """`open_by`: the entries by which an advisory is open in the environment (audit.Audit.open_by)."""
    open_here = outcome.patch.id in open_by
    return (
        not view.verbose
        and outcome.patch.id in view.foldable
        and outcome.condition in _NOT_CONCERNED
        and outcome.action.changed_nothing
        and outcome.exit_code is ExitCode.OK
        and not outcome.notes
        and not open_here
    )


def _print(line: str, out: TextIO) -> None:
    print(wrapped(line), file=out)


def wrapped(line: str, width: int = WIDTH) -> str:
    """A line longer than `width` broken between words, each further line indented four more than the first;
    a command in backticks is never broken (it is there to be copied), nor a path."""
    if len(line) <= width:
        return line
    import textwrap  # only for a long line

    indent = " " * (len(line) - len(line.lstrip(" ")))
    parts = line.split("`")
    kept = "`".join(part.replace(" ", "\0") if index % 2 else part for index, part in enumerate(parts))
    lines = textwrap.wrap(
        kept,
        width,
        initial_indent="",
        subsequent_indent=indent + "    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(lines).replace("\0", " ")


def _within(text: str, roots: Sequence[Path]) -> str:
    """`text` with each path inside one of the environment's directories relative to it, outside backticks."""
    if not roots:
        return text
    inside = re.compile("(?<![^\\s(\"'=,])(?:" + "|".join(re.escape(f"{root}{os.sep}") for root in roots) + ")")
    parts = text.split("`")
    return "`".join(part if index % 2 else inside.sub("", part) for index, part in enumerate(parts))


# ------------------------------------------------------------------------------------------------- reasons

# A list of files in a sentence is given whole up to this many; beyond, its first and how many more (-v: whole).
_LISTED = 3


def words(reason: Reason, roots: Sequence[Path] = (), verbose: bool = True) -> str:
    """A reason in words: each installed path relative to the environment's directory that holds it (`roots`,
    longest first; none: paths whole, as --json has them), a long list of files cut short unless `verbose`."""
    if isinstance(reason, str):  # a sentence not yet a value (hfpatch.reasons)
        return _within(reason, roots)
    return _WORDS[type(reason)](reason, roots, verbose)


def _listed(items: Sequence[str], verbose: bool) -> str:
    if verbose or len(items) <= _LISTED:
        return ", ".join(items)
    return f"{items[0]} and {len(items) - 1} more"


def _where(path: Path, roots: Sequence[Path]) -> str:
    text = str(path)
    for root in roots:
        if text.startswith(f"{root}{os.sep}"):
            return text[len(str(root)) + 1 :]
    return text


def _paths(paths: Sequence[Path], roots: Sequence[Path], verbose: bool) -> str:
    return _listed([_where(path, roots) for path in paths], verbose)


def _patched(reason: reasons.Patched, roots: Sequence[Path], verbose: bool) -> str:
    where = "upstream in no release yet" if reason.fixed_in is None else f"upstream in {reason.fixed_in}"
    edited = [path for path in reason.paths if path not in reason.added]
    has = "has" if len(edited) == 1 else "have"
    said = f"{_paths(edited, roots, verbose)} now {has} the fix ({reason.upstream}, {where})"
    if not reason.added:
        return said
    module = "the module" if len(reason.added) == 1 else "the modules"
    return f"{said}; created {_paths(reason.added, roots, verbose)}, {module} the fix adds"


def _restored(reason: reasons.Restored, roots: Sequence[Path], verbose: bool) -> str:
    if not reason.already:
        edited = [path for path in reason.paths if path not in reason.removed]
        said = f"restored the original {_paths(edited, roots, verbose)}"
        if not reason.removed:
            return said
        return f"{said}; removed {_paths(reason.removed, roots, verbose)}, which the patch had added"
    paths = _paths(reason.paths, roots, verbose)
    return f"{paths} {'was' if len(reason.paths) == 1 else 'were'} already the original; cleared hfpatch's state"


def _took_out(reason: reasons.TookOut, roots: Sequence[Path], verbose: bool) -> str:
    stay = "stays" if len(reason.staying) == 1 else "stay"
    return (
        f"took {reason.patch} out of {_paths(reason.paths, roots, verbose)}; {', '.join(reason.staying)} {stay} applied"
    )


# What a dry run would do, by the action the plan would take (reasons.WouldDo).
_WOULD = {
    "patched": "would patch {paths}",
    "completed": "would finish the interrupted apply on {paths}",
    "refreshed-bytecode": "would rebuild the stale bytecode of {paths}",
    "reverted": "would restore the original {paths}",
    "cleared-stale": "would clear hfpatch's stale state of {patch}",
    "nothing-to-do": "would remove the backup an interrupted apply left behind for {patch}",
}


def _would(reason: reasons.WouldDo, roots: Sequence[Path], verbose: bool) -> str:
    return _WOULD[reason.action].format(paths=_paths(reason.paths, roots, verbose), patch=reason.patch)


def _never_shipped(reason: reasons.NeverShipped, roots: Sequence[Path], verbose: bool) -> str:
    said = (
        f"{reason.distribution} {reason.version} has no {_listed(reason.files, verbose)} (its RECORD does not list it)"
    )
    if not reason.others:
        return said
    return f"{said}, which {reason.patch} changes with {_listed(reason.others, verbose)}: hfpatch leaves this release"


def _known_forms(reason: reasons.KnownForms, roots: Sequence[Path], verbose: bool) -> str:
    details = [_within(detail, roots) for detail in reason.details]
    if verbose or len(details) <= _LISTED:
        return "; ".join(details)
    return f"{details[0]}; and {len(details) - 1} more files"


def _needs_patch(reason: reasons.NeedsPatch, roots: Sequence[Path], verbose: bool) -> str:
    found = _known_forms(reason.found, roots, verbose)
    return f"{found}, which has the bug {reason.upstream} fixed {reason.fixed_upstream}"


def _nothing_to_revert(reason: reasons.NothingToRevert, roots: Sequence[Path], verbose: bool) -> str:
    said = f"nothing to revert: hfpatch holds no state here ({words(reason.finding, roots, verbose)})"
    return f"{said}; removed the backup an interrupted apply left behind" if reason.removed_backup else said


def _with_advice(reason: reasons.WithAdvice, roots: Sequence[Path], verbose: bool) -> str:
    return f"{words(reason.finding, roots, verbose)}; {_within(reason.advice, roots)}"


_WORDS: dict[type, Callable[[Any, Sequence[Path], bool], str]] = {
    reasons.Patched: _patched,
    reasons.FinishedApply: lambda reason, roots, verbose: (
        f"finished the interrupted apply on {_paths(reason.paths, roots, verbose)}"
    ),
    reasons.RebuiltBytecode: lambda reason, roots, verbose: (
        f"rebuilt the stale bytecode of {_paths(reason.paths, roots, verbose)}; its source already had the fix"
    ),
    reasons.Restored: _restored,
    reasons.TookOut: _took_out,
    reasons.WouldDo: _would,
    reasons.KnownForms: _known_forms,
    reasons.NeedsPatch: _needs_patch,
    reasons.NeverShipped: _never_shipped,
    reasons.NothingToRevert: _nothing_to_revert,
    reasons.WithAdvice: _with_advice,
    reasons.NotInstalled: lambda reason, roots, verbose: (
        f"{_within(reason.executable, roots)} imports no {reason.distribution}"
    ),
    reasons.Missing: lambda reason, roots, verbose: (
        f"{_where(reason.path, roots)} is missing; reinstall {reason.distribution}"
    ),
    reasons.Unreadable: lambda reason, roots, verbose: f"cannot read {_where(reason.path, roots)}",
    reasons.EmptyInTheWay: lambda reason, roots, verbose: (
        f"{_where(reason.path, roots)} is there, empty, where {reason.patch} adds a module; hfpatch will not "
        "overwrite it"
    ),
    reasons.UnknownCode: lambda reason, roots, verbose: (
        f"{_within(reason.detail, roots)} (in {_where(reason.path, roots)}); hfpatch will not touch code it does "
        "not know"
    ),
    reasons.StaleBytecode: lambda reason, roots, verbose: (
        f"the source has the fix, but cached bytecode still runs other code: {_where(reason.path, roots)}"
    ),
}


def summary(results: Sequence[EnvironmentResult]) -> str:
    """One line for several environments: how many, how many need action."""

    def count(n: int, one: str, more: str) -> str:
        return f"{n} {one if n == 1 else more}"

    interrupted = sum(bool(result.interrupted) for result in results)
    unreached = sum(result.not_reached for result in results)
    codes = [result.exit_code for result in results]
    parts = [
        count(interrupted, "interrupted", "interrupted"),
        count(unreached, "not reached", "not reached"),
        count(codes.count(ExitCode.ERROR), "error", "errors"),
        count(codes.count(ExitCode.ACTION_NEEDED), "needs action", "need action"),
        count(codes.count(ExitCode.OK), "as it must be", "as they must be"),
    ]
    return f"{len(results)} environments: {', '.join(part for part in parts if not part.startswith('0 '))}"


def interruption(command: str, results: Sequence[EnvironmentResult], err: TextIO) -> None:
    """Ctrl-C: where the run stopped and what that environment holds now, in one sentence on stderr."""
    stopped = next((result for result in results if result.interrupted), None)
    if stopped is None:
        return
    later = sum(result.not_reached for result in results)
    rest = f"; {later} more {'environment was' if later == 1 else 'environments were'} not reached" if later else ""
    print(f"hfpatch: {command} interrupted {stopped.interrupted}{rest}.", file=err)


def pip_audit_options(result: EnvironmentResult, out: TextIO) -> None:
    """check --pip-audit: `--ignore-vuln ID` for each advisory pip-audit may ignore here, on one line."""
    if result.environment is None:
        print(f"hfpatch: error: {result.error}", file=sys.stderr)
        return
    options = advisory_render.pip_audit_options(result.advisories)
    if options:
        print(" ".join(options), file=out)


def vex_document(result: EnvironmentResult, request: advisory_render.VexRequest, out: TextIO) -> None:
    """check --vex: the environment's OpenVEX document on stdout."""
    if result.environment is None:
        print(f"hfpatch: error: {result.error}", file=sys.stderr)
        return
    document = advisory_render.vex_document(result.advisories, result.environment.python.executable, request)
    print(json.dumps(document, indent=2), file=out)


def label(outcome: Outcome) -> str:
    """The condition where nothing was done, else what was done: one word that the sentence does not repeat."""
    return outcome.condition.value if outcome.action.changed_nothing else outcome.action.value


def _lying(result: EnvironmentResult) -> list[str]:
    assert result.environment is not None
    where: dict[Path, list[str]] = {}
    for found in result.environment.installations:
        where.setdefault(found.root, []).append(f"{found.distribution} {found.version or '(no version metadata)'}")
    return [f"{', '.join(names)} in {root}" for root, names in where.items()]


def heading(result: EnvironmentResult) -> str:
    """The interpreter, and each directory it imports the patches' distributions from, with what lies there."""
    assert result.environment is not None
    python = result.environment.python
    lying = "; ".join(_lying(result))
    return f"{python.executable} [Python {python.version}]" + (f": {lying}" if lying else "")


def catalog_table(patches: Sequence[Patch], results: Sequence[EnvironmentResult], view: View, out: TextIO) -> None:
    """`list`: the catalog as a table, with each patch's condition in each environment."""
    columns = ["here"] if len(results) == 1 else [str(number) for number in range(1, len(results) + 1)]
    rows = [["id", "distribution", "releases", "fixed in", *columns, "what it fixes"]]
    for index, patch in enumerate(patches):
        marked = f"{patch.id} *" if patch.id in view.required else patch.id
        rows.append([marked, patch.distribution, _needing(patch), patch.fixed_in or "none yet"])
        fixes = f" (fixes {', '.join(patch.advisories)})" if patch.advisories else ""
        rows[-1] += [*(_condition(result, index) for result in results), patch.title + fixes]
    for line in _table_lines(rows):
        print(line, file=out)
    kept = dict.fromkeys(patch.directory.parent for patch in patches)
    named = [f"{where} (built-in)" if is_builtin(where) else str(where) for where in kept]
    print(f"catalogs: {'; '.join(named) or 'none'}", file=out)
    for column, result in zip(columns, results, strict=True):
        print(
            f"{column}: {heading(result) if result.environment else result.requested or 'this interpreter'}", file=out
        )
    if view.required and view.config is not None:
        print(f"*: required by [tool.hfpatch] of {view.config}", file=out)
    for column, result in zip(columns, results, strict=True):  # patches known from hfpatch's state alone
        for outcome in result.outcomes[len(patches) :]:
            print(f"{column}: {outcome.patch.id}: {label(outcome)}: {words(outcome.message)}", file=out)
    for result in results:  # a column that says "error" has its sentence, as every command's text has
        if result.error:
            print(f"hfpatch: error: {result.error}", file=sys.stderr)


def terminal_columns(fallback: int = WIDTH) -> int:
    """The terminal's width as shutil.get_terminal_size gives it (COLUMNS, else standard output's terminal, else
    `fallback`), without importing shutil (and the compression modules it imports) on every command's path."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else fallback


def _table_lines(rows: list[list[str]]) -> list[str]:
    """The table in columns, its last one (the title) wrapped to fit the terminal's width (COLUMNS; WIDTH where
    the output is no terminal), its further lines starting where the column starts."""
    import textwrap

    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    columns = terminal_columns()
    start = sum(widths) + 2 * len(widths)
    # Too narrow for the title beside the rest: it goes below its row, indented.
    start, below = (start, False) if columns - start >= 30 else (4, True)
    lines = []
    for row in rows:
        head = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        title = textwrap.wrap(row[-1], max(columns - start, 20), break_long_words=False, break_on_hyphens=False)
        if below:
            lines += [head.rstrip(), *(" " * start + part for part in title)]
            continue
        lines.append(f"{head}  {title[0] if title else ''}".rstrip())
        lines += [" " * start + part for part in title[1:]]
    return lines


def _condition(result: EnvironmentResult, index: int) -> str:
    if index < len(result.outcomes):
        return result.outcomes[index].condition.value
    return "error" if result.error and result.environment is None else "-"


def _needing(patch: Patch) -> str:
    """The releases that need the patch, as read off their wheels."""
    from hfpatch import versions  # packaging: only list sorts releases

    releases = {
        release
        for file in patch.files
        for target in file.targets
        for form in target.forms
        if form.verdict is Verdict.NEEDS_PATCH
        for release in form.releases
    }
    parsed = {release: versions.parse(release) for release in releases}
    ordered = sorted(releases, key=lambda release: (parsed[release] is None, parsed[release] or 0, release))
    return release_span(ordered, "-")


def json_document(command: str, results: Sequence[EnvironmentResult], out: TextIO, config: Path | None = None) -> None:
    print(json.dumps(_document(command, results, config=config), indent=2), file=out)


def json_error(command: str, error: str, out: TextIO) -> None:
    """The one document a --json caller reads when the command could not run at all."""
    print(json.dumps(_document(command, [], error=error), indent=2), file=out)


def _document(
    command: str, results: Sequence[EnvironmentResult], error: str | None = None, config: Path | None = None
) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "hfpatch_version": hfpatch.__version__,
        "command": command,
        "config": None if config is None else str(config),
        "exit_code": int(ExitCode.ERROR if error else exit_code(results)),
        "error": error,
        "environments": [_environment(result) for result in results],
    }


def _environment(result: EnvironmentResult) -> dict[str, Any]:
    python = None if result.environment is None else result.environment.python
    return {
        "python": python.executable if python else result.requested,
        "python_version": python.version if python else None,
        "error": result.error,
        "obsolete": result.obsolete,
        "exit_code": int(result.exit_code),
        # check: the ids of the advisories the catalog knows here, by status, and each with its fields.
        **advisory_render.json_fields(result.advisories),
        "interrupted": result.interrupted,
        "not_reached": result.not_reached,
        "patches": [_outcome(outcome, result) for outcome in result.outcomes],
    }


def _file(file: FileFacts) -> dict[str, Any]:
    return {"file": str(file.path), "sha256": file.source_sha256}


def _outcome(outcome: Outcome, result: EnvironmentResult) -> dict[str, Any]:
    patch, facts = outcome.patch, outcome.facts
    advisory_status = None if result.advisories is None else result.advisories.of_patch(patch.id)
    installation = None if facts is None else facts.installation
    return {
        "id": patch.id,
        "upstream": patch.upstream,
        "url": patch.url,
        "fixed_in": patch.fixed_in,
        "distribution": patch.distribution,
        "advisories": list(patch.advisories),
        "advisory_status": None if advisory_status is None else advisory_status.value,
        "condition": outcome.condition.value,
        "action": outcome.action.value,
        "exit_code": int(outcome.exit_code),
        "message": words(outcome.message),
        "notes": list(outcome.notes),
        "version": None if installation is None else installation.version,
        # The patch's first file (all a patch of schema 2 had), then every file.
        "file": None if facts is None or not facts.files else str(facts.first.path),
        "file_sha256": None if facts is None or not facts.files else facts.first.source_sha256,
        "files": [] if facts is None else [_file(file) for file in facts.files],
        "state": None if facts is None or facts.state is None else state.as_json(facts.state),
        "diff": outcome.diff,
    }
