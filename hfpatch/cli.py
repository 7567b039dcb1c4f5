"""The command line: parse the options into explicit arguments, run the command, render, pick the exit code.

argparse, not click: `hfpatch check` runs on every container start and in CI, and click's import alone costs it
about 30 ms of a 70 ms run (python -X importtime), where argparse costs 6 ms.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hfpatch
from hfpatch import advisory, advisory_render, audit, catalog, commands, config, files, render
from hfpatch.entry import Patch
from hfpatch.errors import ExitCode, HfpatchError, UnknownPatch, UsageError
from hfpatch.plan import Command, Options
from hfpatch.reasons import Suggest

if TYPE_CHECKING:
    from hfpatch.new.request import Request

# What hfpatch imports beyond the standard library; a checkout run without them gets a sentence, not a traceback.
_DEPENDENCIES = {"libcst", "packaging", "tomli"}

EXIT_CODES = """\
exit codes:
  0    everything is as it must be (patched where needed, not needed elsewhere)
  1    action needed: check or verify found the bug live or unpatched, an
       interrupted run, or stale bytecode; check --fail-on-obsolete found every
       patch fixed upstream or not applicable (the apply step is dead)
  2    error or refusal, nothing touched: unexpected or edited code, a linked or
       read-only target, a bad --python, no catalog distribution installed, bad
       input (a [tool.hfpatch] table or an advisory record included)
  130  interrupted (Ctrl-C): the message says what the environment holds now
       and what to run (`hfpatch apply` finishes a half-done patch, `hfpatch
       revert` undoes it)"""


# A command's help names its exit codes in one line; the main help says what each means.
_COMMAND_EXIT_CODES = {
    "list": "exit codes: 0 the catalog is shown (whatever its patches' conditions), 2 bad input",
}
_EXIT_CODES_IN_SHORT = "exit codes: 0, 1, 2 or 130, as `hfpatch --help` says"


class _RawFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, its width found without shutil (argparse imports it for that, on every command's path)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        width = render.terminal_columns(fallback=80) - 2 if width is None else width  # as shutil falls back
        super().__init__(prog, indent_increment, max_help_position, width)


class _Formatter(_RawFormatter):
    """Options' help wrapped at spaces only: a module name (transformers.dynamic_module_utils) stays whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


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
    "verify": "run each patch's probe with the real code in the application's interpreter",
    "list": "show the catalog and each patch's condition; exit 0 unless the input is bad",
}
COMMANDS = (*_SUMMARIES, "new")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or, given the command the arguments name, one that has that command alone: argparse spends
    about 0.3 ms on each parser it makes (gettext looks its words up for each) and 0.1 ms on each option it adds,
    and a command line that starts with its command parses only that command's options."""
    parser = _Parser(
        prog="hfpatch",
        description="Backport upstream fixes into an installed package (transformers and others), on disk,\n"
        "with a byte-exact backup and a state to revert from.",
        epilog=EXIT_CODES,
        formatter_class=_RawFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hfpatch {hfpatch.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for name, summary in _SUMMARIES.items():
        if command not in (None, name):
            continue
        described = summary[0].upper() + summary[1:] + "."
        sub = commands.add_parser(name, help=summary, description=described, formatter_class=_Formatter)
        sub.epilog = _COMMAND_EXIT_CODES.get(name, _EXIT_CODES_IN_SHORT)
        _common_options(sub)
        if name != "list":
            sub.add_argument(
                "-q",
                "--quiet",
                action="store_true",
                help="print only what needs action or is an error: nothing at all when every patch is as it must be",
            )
        if name in ("apply", "revert", "verify"):
            _verbose_option(sub)
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
            _advisory_options(sub)
    if command in (None, "new"):
        _add_new_parser(commands)
    return parser


NEW_EPILOG = """\
where the fixed text comes from: one of
  --fixed-in V     release V's wheel (from the index, or --find-links)
  --fixed-from P   a wheel or a source tree P (an unreleased build); with
                   --fixed-in V too, V is the release with the fix upstream
  --from-edits D   the files you edited in the installed distribution D
  --remove D:P     no fix but removal: the files P (a path pattern) of D that
                   --fixed-in no longer ships; apply empties each (schema 4)

which releases are read:
  by default, --fixed-in, the newest release, and every release before
  --fixed-in back to the first that defines a target (with the one before it,
  which shows the targets absent). Pre-releases are left out, and pip never
  lists a yanked release.
  --since V       start at release V instead of walking back (narrow the range,
                  or read past a release that lacks the targets)
  --until V       also read every release after --fixed-in up to V (instead of
                  only the newest)
  --all-releases  also read every release after --fixed-in
  --release V     also read release V (repeatable): a yanked release or a
                  pre-release is read when named
  --pre           count pre-releases as releases

the entry's probe.py is a skeleton (an existing entry's probe is kept with
--force): `hfpatch verify` reports it as a broken probe (exit 2) until you
write it.

exit codes:
  0  the entry is written
  2  nothing written: bad input, a release that cannot be read, no release that
     needs the patch, or a release where the fix would use a name it lacks"""


def _add_new_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    summary = "write a catalog entry for an upstream fix, from the wheels of the distribution's releases"
    description = "Write a catalog entry for an upstream fix, from the wheels of the distribution's\nreleases."
    parser = commands.add_parser("new", help=summary, description=description, formatter_class=_Formatter)
    parser.epilog = NEW_EPILOG
    parser.add_argument(
        "patch_id", metavar="PATCH_ID", help="the entry's id and directory name, e.g. transformers-46618"
    )
    parser.add_argument(
        "--target",
        dest="targets",
        action="append",
        default=[],
        metavar="DIST:MODULE[:NAME]",
        help="what the fix changes: a name the module or a class binds (a function, a method Class.method, a class, "
        "a constant, an import), e.g. transformers:transformers.utils.hub:cached_file, "
        "or DIST:MODULE for every statement the fix changes in the module (repeatable; several modules of one "
        "distribution make one patch of several files; with --from-edits, every edited file by default)",
    )
    parser.add_argument("--fixed-in", metavar="VERSION", help="the first release with the fix (its wheel is the fix)")
    parser.add_argument(
        "--fixed-from",
        metavar="PATH",
        help="the fix from a wheel (pip wheel --no-deps git+URL@SHA) or a source tree whose version need not be on "
        "the index; --fixed-in then names the release that has the fix upstream, if any",
    )
    parser.add_argument(
        "--from-edits",
        metavar="DIST",
        help="the fix is what you edited in the installed DIST (of --python, or hfpatch's own interpreter): the "
        "edited environment ends with the entry applied",
    )
    parser.add_argument("--python", metavar="PATH", help="the interpreter whose edits --from-edits reads")
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
    _new_release_options(parser)
    parser.add_argument("--force", action="store_true", help="replace an existing DIR/PATCH_ID")
    _removal_option(parser)


def _removal_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--remove",
        metavar="DIST:PATTERN",
        help="instead of --target: the files (a path pattern inside the wheel, e.g. "
        "transformers:transformers/models/*/convert_*.py) that --fixed-in no longer ships; apply empties each, "
        "keeping its original",
    )


def _verbose_option(parser: argparse.ArgumentParser, also: str = "") -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print each patch in its own line, those that do not concern the environment (not installed, not "
        f"applicable, not covered, fixed upstream) too{also}",
    )


def _new_release_options(parser: argparse.ArgumentParser) -> None:
    """new's options that choose the releases it reads (its epilog says how they combine)."""
    parser.add_argument("--since", metavar="VERSION", help="read releases from VERSION on (see below)")
    parser.add_argument("--until", metavar="VERSION", help="read releases after --fixed-in up to VERSION")
    parser.add_argument("--all-releases", action="store_true", help="read every release after --fixed-in")
    parser.add_argument(
        "--release", dest="releases", action="append", default=[], metavar="VERSION", help="also read this release"
    )
    parser.add_argument("--pre", action="store_true", help="count pre-releases")


def _advisory_options(parser: argparse.ArgumentParser) -> None:
    """check's options for the advisories: in full, for pip-audit, as OpenVEX."""
    _verbose_option(parser, "; and every advisory, the fixed and not-affected ones too")
    scanners = parser.add_mutually_exclusive_group()
    scanners.add_argument(
        "--pip-audit",
        action="store_true",
        help="print only pip-audit's options for this one environment: --ignore-vuln ID for each advisory a patch "
        "applied here fixes, and each pip-audit lists for this release whose fix, or lack of the code, check finds "
        "here (never one that is open, partly mitigated or unknown here); the exit code is check's",
    )
    scanners.add_argument(
        "--vex",
        action="store_true",
        help="print only an OpenVEX document of this one environment: a statement for each advisory the catalog "
        "knows on each installed distribution; the exit code is check's",
    )
    parser.add_argument(
        "--vex-product",
        dest="vex_products",
        action="append",
        default=[],
        metavar="IRI",
        help="with --vex: the product its statements are about, as the scanner names the environment (an image: "
        "pkg:oci/NAME@sha256%%3ADIGEST; repeatable; default: the interpreter, as a file IRI)",
    )
    parser.add_argument("--vex-author", metavar="NAME", help="with --vex: who issues the document (default: unknown)")


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
        "--patch",
        dest="patch_ids",
        action="append",
        default=[],
        metavar="ID",
        help="only this patch (repeatable; instead of the patches [tool.hfpatch] requires)",
    )
    parser.add_argument(
        "--catalog",
        dest="catalogs",
        action="append",
        default=[],
        metavar="DIR",
        help=f"a catalog of your own beside the built-in one (repeatable; also ${catalog.CATALOG_VARIABLE}, "
        "separated by ':', and [tool.hfpatch]'s catalog)",
    )
    parser.add_argument("--json", dest="as_json", action="store_true", help="print one JSON document on stdout")
    project = parser.add_mutually_exclusive_group()
    project.add_argument(
        "--config",
        metavar="FILE",
        help=f"read [tool.hfpatch] from FILE (default: the nearest {config.FILE} from the current directory up)",
    )
    project.add_argument("--no-config", action="store_true", help="ignore any [tool.hfpatch] table")


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
            import gc

            gc.enable()  # the console script leaves it off for the short commands (hfpatch.__main__)
            from hfpatch.new import command

            try:
                return command.run(new_request(args), sys.stdout)
            except BrokenPipeError:  # `hfpatch new ... | head`: the reader went away, the work is done
                files.reader_gone(sys.stdout)
                return int(ExitCode.OK)
        return _run(args)
    except HfpatchError as error:
        print(f"hfpatch: error: {error}", file=sys.stderr)
        if args is not None and getattr(args, "as_json", False):  # a --json caller reads stdout: one document
            render.json_error(args.command, str(error), sys.stdout)
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
        # Before any environment was written (a run that had begun says where it stopped, in _run).
        known = args is None or args.command != "new"
        print(f"hfpatch: interrupted{', before anything was changed' if known else ''}.", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception:
        # A bug in hfpatch: keep its traceback, and never let it pass for exit 1 ("action needed").
        import traceback

        traceback.print_exc()
        print("hfpatch: internal error (a bug in hfpatch; the traceback is above)", file=sys.stderr)
        return int(ExitCode.ERROR)


def _run(args: argparse.Namespace) -> int:
    """apply, check, revert, verify and list: every selected patch in every environment, rendered."""
    project = config.load(args.config, ignore=args.no_config)
    catalogs = [*(str(path) for path in project.catalogs), *args.catalogs] if project else list(args.catalogs)
    entries = catalog.entry_dirs(catalog.catalog_dirs(catalogs))
    resolved = commands.resolve(args.pythons)
    register, patches, asked, dormant = _chosen(args, project, catalogs, entries, resolved)
    scanner, vex = _scanner_output(args)
    listing = args.command == "list"
    options = Options(
        dry_run=getattr(args, "dry_run", False),
        force=getattr(args, "force", False),
        lookup=catalog.finder(catalogs),
    )
    # A suggestion repeats what the command line chose; a file found again from the same directory needs no word.
    chosen = ["--config", args.config] if args.config else ["--no-config"] if args.no_config else []

    def advice_for(given: str | None) -> Suggest:
        return commands.suggestion([given] if given else [], args.patch_ids, args.catalogs, chosen)

    command = Command.CHECK if listing else Command(args.command)
    # The patches hfpatch's state holds that no catalog given has: looked for unless --patch narrows the run.
    known = None if args.patch_ids else set(entries)
    results = commands.run(
        command, resolved, patches, options, advice_for, require_installed=not listing, known=known, dormant=dormant
    )
    if register is not None:

        def spell(given: str | None, entries: Sequence[str]) -> str:
            named = entries or args.patch_ids
            return commands.suggestion([given] if given else [], named, args.catalogs, chosen)("apply")

        audit.fill(results, register, patches, options.lookup, spell, explicit=bool(args.patch_ids))
    if getattr(args, "fail_on_obsolete", False):
        commands.flag_obsolete(results)
    view = _view(args, project, patches, asked)
    try:
        return _report(args.command, args.as_json, results, patches, view, scanner=scanner, vex=vex)
    except KeyboardInterrupt:
        check = commands.suggestion(args.pythons, args.patch_ids, args.catalogs, chosen)("check")
        print(
            f"hfpatch: interrupted while printing; {args.command} had finished: `{check}` says where each stands.",
            file=sys.stderr,
        )
        return int(ExitCode.INTERRUPTED)


def _view(
    args: argparse.Namespace, project: config.Config | None, patches: Sequence[Patch], asked: Collection[str]
) -> render.View:
    verbose, fail_on_obsolete = getattr(args, "verbose", False), getattr(args, "fail_on_obsolete", False)
    return render.View(
        show_diff=getattr(args, "dry_run", False),
        quiet=getattr(args, "quiet", False),
        # A patch nobody asked for that does not concern the environment is counted in a line (--fail-on-obsolete:
        # each in its own).
        foldable=frozenset(() if fail_on_obsolete else (patch.id for patch in patches if patch.id not in asked)),
        config=None if project is None else project.path,
        required=frozenset(() if project is None else project.patches),
        verbose=verbose or bool(args.patch_ids),
        every_file=verbose,
    )


def _scanner_output(args: argparse.Namespace) -> tuple[str | None, advisory_render.VexRequest | None]:
    """check --pip-audit or --vex: what to print for scanners instead of check's report, for one environment;
    refused before anything runs where the options do not fit together."""
    products, author = getattr(args, "vex_products", []), getattr(args, "vex_author", None)
    if (products or author is not None) and not getattr(args, "vex", False):
        raise UsageError("--vex-product and --vex-author go with --vex")
    scanner = "pip-audit" if getattr(args, "pip_audit", False) else "vex" if getattr(args, "vex", False) else None
    if scanner is not None and args.as_json:
        raise UsageError(f"check --{scanner} prints its own document; leave out --json")
    if scanner is not None and len(args.pythons) > 1:
        what = "pip-audit's options" if scanner == "pip-audit" else "an OpenVEX document"
        raise UsageError(f"check --{scanner} prints {what} for one environment: give one --python at most")
    vex = (
        advisory_render.check_request(advisory_render.VexRequest(tuple(products), author)) if scanner == "vex" else None
    )
    return scanner, vex


def _chosen(
    args: argparse.Namespace,
    project: config.Config | None,
    catalogs: list[str],
    entries: Mapping[str, Path],
    resolved: Sequence[commands.EnvironmentResult],
) -> tuple[advisory.Register | None, list[Patch], set[str], list[catalog.Dormant]]:
    """check's advisory register (None for the other commands), and what _select chooses. Plain check folds the
    entries that concern no environment into a count: it counts those of packages no environment imports without
    making patches of them (catalog.select_awake); every other view lists each entry, and reads it."""
    scanner = getattr(args, "pip_audit", False) or getattr(args, "vex", False)
    verbose, fail_on_obsolete = getattr(args, "verbose", False), getattr(args, "fail_on_obsolete", False)
    folding = args.command == "check" and not (args.as_json or scanner or verbose or fail_on_obsolete)
    if not folding:
        chosen = _select(args, project, catalogs, entries)
        register = advisory.load(catalog.catalog_dirs(catalogs)) if args.command == "check" else None
        return register, *chosen
    register = advisory.load(catalog.catalog_dirs(catalogs))
    awake = {name for record in register.records for name in (*record.entries, *record.partial_entries)}
    return register, *_select(args, project, catalogs, entries, commands.unconcerned(resolved), awake)


def _select(
    args: argparse.Namespace,
    project: config.Config | None,
    catalogs: list[str],
    entries: Mapping[str, Path],
    asleep: catalog.Asleep | None = None,
    awake: Collection[str] = (),
) -> tuple[list[Patch], set[str], list[catalog.Dormant]]:
    """The patches the command acts on, those asked for by id, and (`asleep`: plain check) the entries nobody asked
    for that concern no environment, only counted. `--patch` replaces the file's patches and `--catalog` adds to
    its catalogs; `list` shows every patch of the catalogs (a required id must exist all the same)."""
    named = list(dict.fromkeys(args.patch_ids))
    required = () if project is None or named else project.patches
    if asleep is not None and not named and not required:
        return _awake(entries, asleep, awake)
    try:
        # list shows every entry, so it reads each whole; the others read an entry whole only where it is needed.
        patches = catalog.select(named or list(required), catalogs, whole=args.command == "list", entries=entries)
    except UnknownPatch as error:
        if project is None or not required:
            raise
        raise project.unknown_patch(error.patch_id, str(error)) from None
    if args.command == "list" and not named:
        patches = catalog.select([], catalogs, whole=True, entries=entries)
    return patches, {*named, *required}, []


def _awake(
    entries: Mapping[str, Path], asleep: catalog.Asleep, awake: Collection[str]
) -> tuple[list[Patch], set[str], list[catalog.Dormant]]:
    patches, dormant = catalog.select_awake(entries, asleep, awake)
    return patches, set(), dormant


def _report(
    command: str,
    as_json: bool,
    results: list[commands.EnvironmentResult],
    patches: list[Patch],
    view: render.View,
    *,
    scanner: str | None = None,
    vex: advisory_render.VexRequest | None = None,
) -> int:
    listing = command == "list"
    try:
        if scanner == "pip-audit":
            render.pip_audit_options(results[0], sys.stdout)
        elif scanner == "vex":
            render.vex_document(results[0], vex or advisory_render.VexRequest(), sys.stdout)
        elif as_json:
            render.json_document(command, results, sys.stdout, config=view.config)
        elif listing:
            render.catalog_table(patches, results, view, sys.stdout)
        else:
            render.text(results, view, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: the work is done
        files.reader_gone(sys.stdout)
    except OSError as error:
        print(f"hfpatch: error: cannot write the output: {error.strerror or error}.", file=sys.stderr)
        return int(ExitCode.ERROR)
    render.interruption(command, results, sys.stderr)
    code = commands.exit_code(results)
    if listing and code is not ExitCode.INTERRUPTED:  # list reports; only an interpreter it could not use is an error
        return int(ExitCode.ERROR if any(result.environment is None for result in results) else ExitCode.OK)
    return int(code)


def new_request(args: argparse.Namespace) -> Request:
    """`new`'s options as the command takes them: explicit arguments, no Namespace below the parser."""
    from hfpatch.new.request import Request

    return Request(
        patch_id=args.patch_id,
        targets=tuple(args.targets),
        fixed_in=args.fixed_in,
        catalog=args.catalog,
        fixed_from=args.fixed_from,
        from_edits=args.from_edits,
        python=args.python,
        find_links=args.find_links,
        cache=args.cache,
        upstream=args.upstream,
        title=args.title,
        since=args.since,
        until=args.until,
        all_releases=args.all_releases,
        releases=tuple(args.releases),
        pre=args.pre,
        force=args.force,
        remove=args.remove,
    )
