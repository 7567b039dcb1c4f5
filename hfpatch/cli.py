"""The command line: parse the options, run every selected patch in every environment, print, pick the exit code.

argparse, not click: `hfpatch check` runs on every container start and in CI, and click's import alone costs it
about 30 ms of a 70 ms run (python -X importtime), where argparse costs 6 ms.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import hfpatch
from hfpatch import catalog, engine, files, state
from hfpatch.diagnosis import Condition, Suggest, plain
from hfpatch.entry import Patch
from hfpatch.environment import Installation, Python, locate, resolve_python
from hfpatch.errors import ExitCode, HfpatchError, UsageError
from hfpatch.plan import Action, Command, Options

JSON_SCHEMA = 2
# What hfpatch imports beyond the standard library; a checkout run without them gets a sentence, not a traceback.
_DEPENDENCIES = {"libcst", "packaging"}

Operation = Callable[[Patch, Python, "Installation | None", Options], engine.Outcome]

EXIT_CODES = """\
exit codes:
  0  everything is as it must be (patched where needed, not needed elsewhere)
  1  action needed: check or verify found the bug live or unpatched, an
     interrupted run, or stale bytecode; check --fail-on-obsolete found every
     patch fixed upstream or not applicable (the apply step is dead)
  2  error or refusal, nothing touched: unexpected or edited code, a linked or
     read-only target, a bad --python, no catalog distribution installed, bad input"""


class EnvironmentResult:
    """What every patch came to in one environment (filled in as the run goes)."""

    def __init__(self, requested: str | None) -> None:
        self.requested = requested
        self.python: Python | None = None
        self.installations: dict[str, Installation | None] = {}
        self.outcomes: list[engine.Outcome] = []
        self.error: str | None = None
        self.obsolete: str | None = None  # check --fail-on-obsolete: why the environment needs hfpatch no more

    @property
    def exit_code(self) -> ExitCode:
        codes = [outcome.exit_code for outcome in self.outcomes]
        obsolete = ExitCode.ACTION_NEEDED if self.obsolete else ExitCode.OK
        return max([ExitCode.ERROR if self.error else ExitCode.OK, obsolete, *codes])


def run(
    command: str,
    pythons: Sequence[str],
    patches: Sequence[Patch],
    operation: Operation,
    options: Options,
    advice_for: Callable[[str | None], Suggest] = lambda given: plain,
) -> list[EnvironmentResult]:
    """Run `operation` for every patch in every environment; failures are gathered, not raised. `advice_for` spells
    the commands suggested in each environment (with its own --python: another one given may need nothing)."""
    results = []
    requested: list[str | None] = [*pythons] if pythons else [None]
    for given in requested:
        result = EnvironmentResult(requested=given)
        results.append(result)
        try:
            result.python = resolve_python(given)
        except HfpatchError as error:
            result.error = str(error)
            continue
        here = options._replace(suggest=advice_for(given))
        for patch in patches:
            result.outcomes.append(_run_one(result, result.python, patch, operation, here))
        if command != "list" and _found_nothing(result):
            result.error = _nothing_installed(command, result.python, patches, given is not None)
    return results


# Conditions that leave `hfpatch apply` nothing to do, now or ever, in an environment.
_DEAD = {Condition.FIXED_UPSTREAM, Condition.NOT_APPLICABLE, Condition.NOT_INSTALLED}


def flag_obsolete(results: Sequence[EnvironmentResult]) -> None:
    """check --fail-on-obsolete: an environment where every patch is fixed upstream or not applicable, one at least
    fixed upstream, has a dead `hfpatch apply` step. A patch obsolete beside one still needed is no such thing."""
    for result in results:
        conditions = {outcome.condition for outcome in result.outcomes}
        if conditions and conditions <= _DEAD and Condition.FIXED_UPSTREAM in conditions:
            result.obsolete = (
                "every patch is fixed upstream or not applicable here, so `hfpatch apply` does nothing: remove it"
            )


def _found_nothing(result: EnvironmentResult) -> bool:
    """None of the patches' distributions is installed, and nothing else was done: the wrong interpreter."""
    nothing = all(found is None for found in result.installations.values())
    return bool(result.outcomes) and nothing and not any(o.action is Action.CLEARED for o in result.outcomes)


def _run_one(
    result: EnvironmentResult, python: Python, patch: Patch, operation: Operation, options: Options
) -> engine.Outcome:
    try:
        if patch.package not in result.installations:
            result.installations[patch.package] = locate(python, patch.package, patch.distribution, patch.file)
        return operation(patch, python, result.installations[patch.package], options)
    except HfpatchError as error:
        result.installations.setdefault(patch.package, None)
        return engine.Outcome(patch, None, Condition.ERROR, Action.REFUSED, ExitCode.ERROR, str(error))


def _nothing_installed(command: str, python: Python, patches: Sequence[Patch], given: bool) -> str:
    names = ", ".join(sorted({patch.distribution for patch in patches}))
    what = f"{python.executable} has none of the distributions the patches are for ({names}), so there is nothing to"
    if given:
        return f"{what} {command}; is it the application's interpreter (the one that imports {names})?"
    return (
        f"{what} {command}; point --python at the application's interpreter: "
        f"`hfpatch {command} --python /path/to/app/bin/python`"
    )


def suggestion(pythons: Sequence[str], patch_ids: Sequence[str], catalogs: Sequence[str]) -> Suggest:
    """The command to suggest, with the options the user gave, so that following it acts on the same thing."""

    def suggest(command: str) -> str:
        words = ["hfpatch", command]
        for option, values in (("--python", pythons), ("--patch", patch_ids), ("--catalog", catalogs)):
            for value in values:
                words += [option, value]
        return shlex.join(words)

    return suggest


# ------------------------------------------------------------------------------------------------------- rendering


def render_text(results: Sequence[EnvironmentResult], show_diff: bool, out: TextIO) -> None:
    for result in results:
        if result.python is None:
            print(f"hfpatch: error: {result.error}", file=sys.stderr)
            continue
        print(_heading(result), file=out)
        for outcome in result.outcomes:
            print(f"  {outcome.patch.id}: {_label(outcome)}: {outcome.message}", file=out)
            for note in outcome.notes:
                print(f"    note: {note}", file=out)
            if show_diff and outcome.diff:
                out.write(outcome.diff)
        if result.obsolete:
            print(f"  obsolete: {result.obsolete}", file=out)
        if result.error:
            print(f"hfpatch: error: {result.error}", file=sys.stderr)


def _label(outcome: engine.Outcome) -> str:
    """The condition where nothing was done, else what was done: one word that the sentence does not repeat."""
    return outcome.condition.value if outcome.action.changed_nothing else outcome.action.value


def _heading(result: EnvironmentResult) -> str:
    assert result.python is not None
    found = [
        f"{found.distribution} {found.version or '(no version metadata)'} at {found.package_dir}"
        for found in result.installations.values()
        if found is not None
    ]
    suffix = f" ({'; '.join(found)})" if found else ""
    return f"{result.python.executable} [Python {result.python.version}]{suffix}"


def render_json(command: str, results: Sequence[EnvironmentResult], out: TextIO) -> None:
    print(json.dumps(_document(command, results), indent=2), file=out)


def _document(command: str, results: Sequence[EnvironmentResult], error: str | None = None) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "hfpatch_version": hfpatch.__version__,
        "command": command,
        "exit_code": int(ExitCode.ERROR if error else exit_code(results)),
        "error": error,
        "environments": [_environment_json(result) for result in results],
    }


def _environment_json(result: EnvironmentResult) -> dict[str, Any]:
    python = result.python
    return {
        "python": python.executable if python else result.requested,
        "python_version": python.version if python else None,
        "error": result.error,
        "obsolete": result.obsolete,
        "exit_code": int(result.exit_code),
        "patches": [_outcome_json(outcome) for outcome in result.outcomes],
    }


def _outcome_json(outcome: engine.Outcome) -> dict[str, Any]:
    patch, facts = outcome.patch, outcome.facts
    installation = None if facts is None else facts.installation

    return {
        "id": patch.id,
        "upstream": patch.upstream,
        "url": patch.url,
        "fixed_in": patch.fixed_in,
        "distribution": patch.distribution,
        "condition": outcome.condition.value,
        "action": outcome.action.value,
        "exit_code": int(outcome.exit_code),
        "message": outcome.message,
        "notes": list(outcome.notes),
        "version": None if installation is None else installation.version,
        "file": None if facts is None or facts.file is None else str(facts.file),
        "file_sha256": None if facts is None else facts.source_sha256,
        "state": None if facts is None or facts.state is None else state.as_json(facts.state),
        "diff": outcome.diff,
    }


def exit_code(results: Sequence[EnvironmentResult]) -> ExitCode:
    return max((result.exit_code for result in results), default=ExitCode.OK)


# ------------------------------------------------------------------------------------------------------ the parser


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # An abbreviated option (--fail-on-obsolet) is refused: a CI line must not depend on what else exists.
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # one line, exit 2, as every other refusal
        raise UsageError(f"{message} (see `{self.prog} --help`)")


_SUMMARIES = {
    "apply": "patch the installed code where it needs it (run it in the image build)",
    "check": "say whether every patch is as it must be; exit 0, 1 (action needed) or 2 (error)",
    "revert": "put the original bytes back (run it before upgrading the package)",
    "verify": "run each patch's probe with the real code in the target interpreter",
    "list": "show the catalog and each patch's condition; exit 0 unless the input is bad",
}
COMMANDS = (*_SUMMARIES, "new")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or, given the command the arguments name, one whose other commands have only their names
    and summaries: argparse spends about 0.1 ms on each option it adds, and a command parses only its own."""
    parser = _Parser(
        prog="hfpatch",
        description="Backport upstream fixes into an installed package (transformers and others), on disk,\n"
        "with a byte-exact backup and a state to revert from.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hfpatch {hfpatch.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for name, summary in _SUMMARIES.items():
        sub = commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        sub.epilog = EXIT_CODES
        sub.formatter_class = argparse.RawDescriptionHelpFormatter
        if command not in (None, name):
            continue
        _common_options(sub)
        if name in ("apply", "revert"):
            sub.add_argument("--dry-run", action="store_true", help="print the unified diff; write nothing")
        if name == "revert":
            sub.add_argument(
                "--force", action="store_true", help="restore the original even over a file edited since apply"
            )
        if name == "check":
            sub.add_argument(
                "--fail-on-obsolete",
                action="store_true",
                help="exit 1 where every patch is fixed upstream or not applicable, so that a dead `hfpatch apply` "
                "gets removed",
            )
    _add_new_parser(commands, with_options=command in (None, "new"))
    return parser


NEW_EPILOG = """\
which releases are read:
  by default, --fixed-in, the newest release, and every release before --fixed-in
  back to the first that defines a target (with the one before it, which shows
  the targets absent). Pre-releases are left out, and pip never lists a yanked
  release.
  --since V       start at release V instead of walking back (narrow the range,
                  or read past a release that lacks the targets)
  --until V       also read every release after --fixed-in up to V (instead of
                  only the newest)
  --all-releases  also read every release after --fixed-in
  --release V     also read release V (repeatable): a yanked release or a
                  pre-release is read when named
  --pre           count pre-releases as releases

the entry has no probe: `hfpatch verify` says "no probe" until you add probe.py.

exit codes:
  0  the entry is written
  2  nothing written: bad input, a release that cannot be read, no release that
     needs the patch, or a release where the fix would use a name it lacks"""


def _add_new_parser(commands: argparse._SubParsersAction[_Parser], *, with_options: bool) -> None:
    summary = "write a catalog entry for an upstream fix, from the wheels of the distribution's releases"
    parser = commands.add_parser("new", help=summary, description=summary[0].upper() + summary[1:] + ".")
    parser.epilog = NEW_EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    if not with_options:
        return
    parser.add_argument(
        "patch_id", metavar="PATCH_ID", help="the entry's id and directory name, e.g. transformers-46618"
    )
    parser.add_argument(
        "--target",
        dest="targets",
        action="append",
        default=[],
        required=True,
        metavar="DIST:MODULE:QUALNAME",
        help="a function or Class.method the fix changes, e.g. transformers:transformers.dynamic_module_utils:"
        "_compute_local_source_files_hash (repeatable: one module of one distribution)",
    )
    parser.add_argument("--fixed-in", required=True, metavar="VERSION", help="the first release with the fix")
    parser.add_argument("--catalog", required=True, metavar="DIR", help="the catalog to write DIR/PATCH_ID into")
    parser.add_argument("--find-links", metavar="DIR", help="read only the wheels in DIR (no network, no pip)")
    parser.add_argument(
        "--cache",
        metavar="DIR",
        help="where wheels from the package index are kept (default: $XDG_CACHE_HOME/hfpatch/wheels or "
        "~/.cache/hfpatch/wheels)",
    )
    parser.add_argument("--upstream", metavar="URL", help="the fix upstream (a pull request's URL)")
    parser.add_argument("--title", metavar="TEXT", help="one line: what the bug is")
    parser.add_argument("--since", metavar="VERSION", help="read releases from VERSION on (see below)")
    parser.add_argument("--until", metavar="VERSION", help="read releases after --fixed-in up to VERSION")
    parser.add_argument("--all-releases", action="store_true", help="read every release after --fixed-in")
    parser.add_argument(
        "--release", dest="releases", action="append", default=[], metavar="VERSION", help="also read this release"
    )
    parser.add_argument("--pre", action="store_true", help="count pre-releases")
    parser.add_argument("--force", action="store_true", help="replace an existing DIR/PATCH_ID")


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--python",
        dest="pythons",
        action="append",
        default=[],
        metavar="PATH",
        help="act on this interpreter's environment instead of hfpatch's own (repeatable)",
    )
    parser.add_argument(
        "--patch", dest="patch_ids", action="append", default=[], metavar="ID", help="only this patch (repeatable)"
    )
    parser.add_argument(
        "--catalog",
        dest="catalogs",
        action="append",
        default=[],
        metavar="DIR",
        help=f"a catalog of your own beside the built-in one (repeatable; also ${catalog.CATALOG_VARIABLE}, "
        "separated by ':')",
    )
    parser.add_argument("--json", dest="as_json", action="store_true", help="print one JSON document on stdout")


def _operation(command: str) -> Operation:
    if command == "verify":
        from hfpatch.verification import verify

        return verify
    chosen = Command.CHECK if command == "list" else Command(command)
    return lambda patch, python, installation, options: engine.run(chosen, patch, python, installation, options)


def _list_catalog(patches: Sequence[Patch], out: TextIO) -> None:
    for patch in patches:
        print(f"{patch.id}: {patch.title}", file=out)
        print(f"  upstream {patch.upstream} ({patch.url}), fixed in {patch.distribution} {patch.fixed_in}", file=out)
        print(f"  replaces {patch.target_names} in {patch.file} ({patch.directory})", file=out)
    print("", file=out)


def parse(arguments: list[str]) -> argparse.Namespace:
    """The command line read as the whole parser reads it. A line that starts with its command needs only that
    command's options; one that puts options first gets the command line that reads, if there is one."""
    if arguments and arguments[0] in COMMANDS:
        args, unknown = build_parser(arguments[0]).parse_known_args(arguments)
        if unknown:  # argparse's top-level parser would say it, pointing at `hfpatch --help`
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)} (see `hfpatch {arguments[0]} --help`)")
        return args
    if arguments[:1] == ["migrate"]:
        raise UsageError("converting a catalog hfpatch 0.1 wrote is `python -m hfpatch.migrate DIR`, not a command")
    parser = build_parser()
    try:
        return parser.parse_args(arguments)
    except UsageError:
        reordered = _command_first(parser, arguments)
        if reordered is None:
            raise
        raise UsageError(f"the command comes first, then its options: `hfpatch {shlex.join(reordered)}`") from None


def _command_first(parser: argparse.ArgumentParser, arguments: list[str]) -> list[str] | None:
    """`--json check` → `check --json`: the last command word moved first that makes a valid command line (the last,
    since an earlier one may be an option's value, as in `--patch list check`)."""
    if not arguments or not arguments[0].startswith("-") or {"-h", "--help"} & set(arguments):
        return None
    for index in reversed(range(len(arguments))):
        if arguments[index] in COMMANDS:
            candidate = [arguments[index], *arguments[:index], *arguments[index + 1 :]]
            try:
                parser.parse_args(candidate)
            except UsageError:
                continue
            return candidate
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """The console script; returns the exit code instead of exiting, so that tests can call it in process."""
    args = None
    try:
        args = parse(list(argv) if argv is not None else sys.argv[1:])
        if args.command == "new":
            # Each command loads what it needs: `new` reads wheels and rewrites, which `check` never pays for.
            from hfpatch import newentry

            return newentry.run(args, sys.stdout)
        patches = catalog.select(list(dict.fromkeys(args.patch_ids)), args.catalogs)
        options = Options(dry_run=getattr(args, "dry_run", False), force=getattr(args, "force", False))

        def advice_for(given: str | None) -> Suggest:
            return suggestion([given] if given else [], args.patch_ids, args.catalogs)

        results = run(args.command, args.pythons, patches, _operation(args.command), options, advice_for)
        if getattr(args, "fail_on_obsolete", False):
            flag_obsolete(results)
    except HfpatchError as error:
        print(f"hfpatch: error: {error}", file=sys.stderr)
        if args is not None and getattr(args, "as_json", False):  # a --json caller reads stdout: one document
            print(json.dumps(_document(args.command, [], error=str(error)), indent=2))
        return int(error.exit_code)
    except ModuleNotFoundError as error:
        if error.name not in _DEPENDENCIES:
            raise
        # A checkout run with a Python that lacks hfpatch's dependencies (`check` needs none of them).
        print(
            f"hfpatch: error: this needs {error.name}, which {sys.executable} cannot import: "
            f"`{sys.executable} -m pip install -e .` in the checkout installs it.",
            file=sys.stderr,
        )
        return int(ExitCode.ERROR)
    except KeyboardInterrupt:
        print("hfpatch: interrupted", file=sys.stderr)
        return int(ExitCode.ERROR)
    except Exception:
        # A bug in hfpatch: keep its traceback, and never let it pass for exit 1 ("action needed").
        import traceback

        traceback.print_exc()
        print("hfpatch: internal error (a bug in hfpatch; the traceback is above)", file=sys.stderr)
        return int(ExitCode.ERROR)
    try:
        if args.as_json:
            render_json(args.command, results, sys.stdout)
        else:
            if args.command == "list":
                _list_catalog(patches, sys.stdout)
            render_text(results, show_diff=getattr(args, "dry_run", False), out=sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: the work is done
        files.reader_gone(sys.stdout)
    except OSError as error:
        print(f"hfpatch: error: cannot write the output: {error.strerror or error}.", file=sys.stderr)
        return int(ExitCode.ERROR)
    code = exit_code(results)
    if args.command == "list":
        code = ExitCode.ERROR if any(result.python is None for result in results) else ExitCode.OK
    return int(code)
