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
from hfpatch.reasons import Reason, Suggest, plain

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
        said = words(outcome.message, roots, view.every_file, result.suggest)
        _print(f"  {outcome.patch.id}: {label(outcome)}: {said}", out)
        for note in outcome.notes:
            _print(f"    note: {words(note, roots, view.every_file, result.suggest)}", out)
        if view.show_diff and outcome.diff:
            out.write(outcome.diff)
    dormant = 0 if view.quiet else len(result.dormant)  # not installed: nothing for --quiet to say
    if folded or dormant:
        _print(f"  {folded_line(folded, dormant)}", out)
    for line in advisory_render.text_lines(result.advisories, verbose=view.verbose, quiet=view.quiet):
        _print(line, out)
    if result.obsolete:
        _print(f"  obsolete: {result.obsolete}", out)


def folded_line(folded: Sequence[Outcome], dormant: int = 0) -> str:
    """The patches that do not concern the environment, counted by condition (`dormant`: the entries of packages
    no environment imports, counted without a patch made of them: not installed)."""
    counts = {condition: sum(outcome.condition is condition for outcome in folded) for condition in _NOT_CONCERNED}
    counts[Condition.NOT_INSTALLED] += dormant
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
    indent = " " * (len(line) - len(line.lstrip(" ")))
    parts = line.split("`")
    kept = "`".join(part.replace(" ", "\0") if index % 2 else part for index, part in enumerate(parts))
    return "\n".join(wrap(kept, width, indent + "    ")).replace("\0", " ")


# What textwrap reads as whitespace (ASCII only), each made a space; a run of spaces parts two words.
_WHITESPACE = str.maketrans(dict.fromkeys("\t\n\x0b\x0c\r ", " "))
_SPACES = re.compile("( +)")


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """The lines textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False,
    break_on_hyphens=False) gives: a word longer than the width on a line of its own, whitespace at either end of a
    line dropped but for the text's own lead; without textwrap, whose import and patterns cost check a millisecond."""
    chunks = [chunk for chunk in _SPACES.split(text.expandtabs().translate(_WHITESPACE)) if chunk]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        lead = indent if lines else ""
        room = width - len(lead)
        if lines and not chunks[-1].strip():
            del chunks[-1]
        line: list[str] = []
        length = 0
        while chunks and length + len(chunks[-1]) <= room:
            length += len(chunks[-1])
            line.append(chunks.pop())
        if chunks and not line and len(chunks[-1]) > room:
            line.append(chunks.pop())
        if line and not line[-1].strip():
            del line[-1]
        if line:
            lines.append(lead + "".join(line))
    return lines


def _within(text: str, roots: Sequence[Path]) -> str:
    """Text from outside hfpatch's values (an error's sentence, the one reason still text: hfpatch.reasons; an OS
    error's or a child process's words in a reason's field) with each path inside one of the environment's
    directories relative to it, outside backticks."""
    if not roots or os.sep not in text:
        return text
    inside = re.compile("(?<![^\\s(\"'=,])(?:" + "|".join(re.escape(f"{root}{os.sep}") for root in roots) + ")")
    parts = text.split("`")
    return "`".join(part if index % 2 else inside.sub("", part) for index, part in enumerate(parts))


# ------------------------------------------------------------------------------------------------- reasons

# A list of files in a sentence is given whole up to this many; beyond, its first and how many more (-v: whole).
_LISTED = 3


class _Say(NamedTuple):
    """How a reason is worded: each installed path relative to the environment's directory that holds it (`roots`,
    longest first; none: whole), every file of a long list or its first and a count, the commands to suggest."""

    roots: Sequence[Path]
    verbose: bool
    suggest: Suggest


def words(reason: Reason, roots: Sequence[Path] = (), verbose: bool = True, suggest: Suggest = plain) -> str:
    """A reason in words: each installed path relative to the environment's directory that holds it (`roots`,
    longest first; none: paths whole, as --json has them), a long list of files cut short unless `verbose`, each
    command it advises spelt by `suggest` (with the options the user gave)."""
    return _said(reason, _Say(roots, verbose, suggest))


def _said(reason: Reason, say: _Say) -> str:
    if isinstance(reason, str):  # an error's own sentence (hfpatch.reasons)
        return _within(reason, say.roots)
    kind = type(reason)
    if kind in _WORDS:
        return _WORDS[kind](reason, say)
    return _TEMPLATES[kind].format(**_fields(reason, say))


def _fields(reason: Any, say: _Say) -> dict[str, str]:
    """A reason's fields as its template names them: a path within its environment, a reason in words, a list
    cut short; and the commands to suggest (`apply`, `revert`)."""
    fields = {"apply": say.suggest("apply"), "revert": say.suggest("revert")}
    for name, value in reason._asdict().items():
        if isinstance(value, Path):
            fields[name] = _where(value, say.roots)
        elif type(value) in _WORDS or type(value) in _TEMPLATES:
            fields[name] = _said(value, say)
        elif isinstance(value, tuple):
            fields[name] = _listed([_where(item, say.roots) for item in value], say.verbose)
        else:  # text from outside (an OS error's, a child process's) may name an installed path
            fields[name] = _within(str(value), say.roots)
    return fields


def _listed(items: Sequence[str], verbose: bool) -> str:
    if verbose or len(items) <= _LISTED:
        return ", ".join(items)
    return f"{items[0]} and {len(items) - 1} more"


def _where(path: Path | str, roots: Sequence[Path]) -> str:
    text = str(path)
    for root in roots:
        if text.startswith(f"{root}{os.sep}"):
            return text[len(str(root)) + 1 :]
    return text


def _paths(paths: Sequence[Path], say: _Say) -> str:
    return _listed([_where(path, say.roots) for path in paths], say.verbose)


def _patched(reason: reasons.Patched, say: _Say) -> str:
    where = "upstream in no release yet" if reason.fixed_in is None else f"upstream in {reason.fixed_in}"
    edited = [path for path in reason.paths if path not in reason.added]
    has = "has" if len(edited) == 1 else "have"
    said = f"{_paths(edited, say)} now {has} the fix ({reason.upstream}, {where})"
    if not reason.added:
        return said
    module = "the module" if len(reason.added) == 1 else "the modules"
    return f"{said}; created {_paths(reason.added, say)}, {module} the fix adds"


def _restored(reason: reasons.Restored, say: _Say) -> str:
    if not reason.already:
        edited = [path for path in reason.paths if path not in reason.removed]
        said = f"restored the original {_paths(edited, say)}"
        if not reason.removed:
            return said
        return f"{said}; removed {_paths(reason.removed, say)}, which the patch had added"
    paths = _paths(reason.paths, say)
    return f"{paths} {'was' if len(reason.paths) == 1 else 'were'} already the original; cleared hfpatch's state"


def _took_out(reason: reasons.TookOut, say: _Say) -> str:
    stay = "stays" if len(reason.staying) == 1 else "stay"
    return f"took {reason.patch} out of {_paths(reason.paths, say)}; {', '.join(reason.staying)} {stay} applied"


# What a dry run would do, by the action the plan would take (reasons.WouldDo).
_WOULD = {
    "patched": "would patch {paths}",
    "completed": "would finish the interrupted apply on {paths}",
    "refreshed-bytecode": "would rebuild the stale bytecode of {paths}",
    "reverted": "would restore the original {paths}",
    "cleared-stale": "would clear hfpatch's stale state of {patch}",
    "nothing-to-do": "would remove the backup an interrupted apply left behind for {patch}",
}

# The command to run next (reasons.Advice), by what it does.
_NEXT = {
    reasons.Next.APPLY: "run `{apply}`",
    reasons.Next.REBUILD: "run `{apply}` to rebuild it",
    reasons.Next.FINISH: "run `{apply}` to finish",
    reasons.Next.FINISH_APPLY: "run `{apply}` to finish it, or `{revert}`",
    reasons.Next.FINISH_REVERT: "run `{revert}` to finish it, or `{apply}`",
    reasons.Next.FINISH_OTHER: "run `{apply}` or `{revert}` with {patch} among the patches to finish it",
    reasons.Next.FORCE_REVERT: "`{revert} --force` puts the original back",
}


def _never_shipped(reason: reasons.NeverShipped, say: _Say) -> str:
    files = _listed(reason.files, say.verbose)
    said = f"{reason.distribution} {reason.version} has no {files} (its RECORD does not list it)"
    if not reason.others:
        return said
    others = _listed(reason.others, say.verbose)
    return f"{said}, which {reason.patch} changes with {others}: hfpatch leaves this release"


def _known_forms(reason: reasons.KnownForms, say: _Say) -> str:
    details = reason.details  # classify's words, which name each file by its path in the package
    if say.verbose or len(details) <= _LISTED:
        return "; ".join(details)
    return f"{details[0]}; and {len(details) - 1} more files"


def _needs_patch(reason: reasons.NeedsPatch, say: _Say) -> str:
    return f"{_known_forms(reason.found, say)}, which has the bug {reason.upstream} fixed {reason.fixed_upstream}"


def _nothing_to_revert(reason: reasons.NothingToRevert, say: _Say) -> str:
    said = f"nothing to revert: hfpatch holds no state here ({_said(reason.reason, say)})"
    return f"{said}; removed the backup an interrupted apply left behind" if reason.removed_backup else said


def _not_covered(reason: reasons.NotCovered, say: _Say) -> str:
    oldest, newest = reason.releases_read
    side = f"older than {oldest}" if reason.older else f"newer than {newest}"
    but = f" but for {', '.join(reason.held)}, which hfpatch applied" if reason.held else ""
    return (
        f"{reason.distribution} {reason.version} is {side}, the releases {reason.patch} was written from "
        f"({oldest} to {newest}); its {'file is' if reason.files == 1 else 'files are'} as released{but} "
        "(RECORD agrees), so hfpatch leaves it"
    )


def _write_again(reason: reasons.WriteAgain, say: _Say) -> str:
    targets = " ".join(f"--target {target}" for target in reason.targets)
    source = f"--fixed-in {reason.fixed_in}" if reason.fixed_in is not None else "--fixed-from PATH"
    since = f" --since {reason.since}" if reason.since else f" --until {reason.until}" if reason.until else ""
    return f"to cover it, write the entry again with `hfpatch new {reason.patch} {targets} {source}{since} --force`"


def _unlisted(reason: reasons.Unlisted, say: _Say) -> str:
    unknown = (
        f"no catalog given has {reason.patch}, which hfpatch's state holds in {_listed(reason.files, say.verbose)}"
    )
    if reason.command == "revert":
        return f"{unknown}: reverted from that state and its backup alone"
    return f"{unknown}; give --catalog DIR, the catalog it was applied from, to {reason.command} it"


def _shadow(imported: Path | None, expected: Path | None, say: _Say) -> str:
    """verify: the file the interpreter imports, where it is not the patch's."""
    if imported is None or expected is None:
        return ""
    return f" (the interpreter imports {_where(imported, say.roots)}, not {_where(expected, say.roots)})"


def _works(reason: reasons.Works, say: _Say) -> str:
    context = "the patch is applied and in effect" if reason.checked is None else _said(reason.checked, say)
    return f"the real code works here{_shadow(reason.imported, reason.expected, say)}: {context}"


def _bug_live(reason: reasons.BugLive, say: _Say) -> str:
    advice = "" if reason.advice is None else f"; {_said(reason.advice, say)}"
    shadow = _shadow(reason.imported, reason.expected, say)
    return f"the bug of {reason.upstream} is live here{shadow}: {_within(reason.failure, say.roots)}{advice}"


# Reasons whose words need more than their fields in a template.
_WORDS: dict[type, Callable[[Any, _Say], str]] = {
    reasons.Patched: _patched,
    reasons.Restored: _restored,
    reasons.TookOut: _took_out,
    reasons.WouldDo: lambda reason, say: _WOULD[reason.action].format(
        paths=_paths(reason.paths, say), patch=reason.patch
    ),
    reasons.KnownForms: _known_forms,
    reasons.NeedsPatch: _needs_patch,
    reasons.NeverShipped: _never_shipped,
    reasons.NothingToRevert: _nothing_to_revert,
    reasons.Advice: lambda reason, say: _NEXT[reason.next].format(**_fields(reason, say)),
    reasons.Together: lambda reason, say: "; ".join(dict.fromkeys(_said(each, say) for each in reason.reasons)),
    reasons.StaleState: lambda reason, say: (
        f"stale state: hfpatch patched {reason.distribution} {reason.version}, and "
        f"{reason.now or 'an unknown version'} is installed now; the next `{say.suggest('apply')}` or "
        f"`{say.suggest('revert')}` clears it"
    ),
    reasons.FixedUpstream: lambda reason, say: (
        f"{reason.distribution} {reason.version} has the upstream fix ({reason.upstream}"
        f"{'' if reason.fixed_in is None else f', in {reason.fixed_in}'}): this patch is obsolete here"
    ),
    reasons.NotCovered: _not_covered,
    reasons.WriteAgain: _write_again,
    reasons.Interrupted: lambda reason, say: f"{'a revert' if reason.reverting else 'an apply'} was interrupted",
    reasons.ClearedReinstalled: lambda reason, say: (
        f"{reason.distribution} was reinstalled or upgraded since apply ({reason.then} -> {reason.now or 'unknown'}): "
        "its files were left as they are, the old backup was not restored over them, and the stale state was cleared"
    ),
    reasons.Unlisted: _unlisted,
    reasons.Works: _works,
    reasons.BugLive: _bug_live,
    reasons.ProbeFailed: lambda reason, say: (
        f"the real code failed{_shadow(reason.imported, reason.expected, say)}: {_within(reason.failure, say.roots)}"
    ),
}

# Every other reason: its template, filled with its fields (`_fields`).
_TEMPLATES: dict[type, str] = {
    reasons.FinishedApply: "finished the interrupted apply on {paths}",
    reasons.RebuiltBytecode: "rebuilt the stale bytecode of {paths}; its source already had the fix",
    reasons.WithAdvice: "{reason}; {advice}",
    reasons.NotInstalled: "{executable} imports no {distribution}",
    reasons.Missing: "{path} is missing; reinstall {distribution}",
    reasons.Unreadable: "cannot read {path}",
    reasons.EmptyInTheWay: "{path} is there, empty, where {patch} adds a module; hfpatch will not overwrite it",
    reasons.UnknownCode: "{detail} (in {path}); hfpatch will not touch code it does not know",
    reasons.StaleBytecode: "the source has the fix, but cached bytecode still runs other code: {path}",
    reasons.Link: "{path} is a symbolic link (to {target})",
    reasons.ThroughLink: (
        "but {link}, and hfpatch does not write through links: patch the tree the link points to (for an editable "
        "install, the source checkout), or install the package without links"
    ),
    reasons.NoLinks: "{link}; hfpatch does not write through links",
    reasons.SharedWithBase: (
        "{paths} belongs to the base interpreter ({base_prefix}), not to this environment ({prefix}): patching it "
        "patches the base interpreter and every venv made from it with --system-site-packages"
    ),
    reasons.Orphaned: (
        "{directory} still holds the state and backup of an uninstalled {distribution}; `{revert}` clears them"
    ),
    reasons.StrangeState: "hfpatch's state for {patch} names {named}, not {files}; nothing was changed",
    reasons.NoDistInfo: (
        "{root} has no {distribution}-*.dist-info: the release is unknown and RECORD is not kept (is the entry's "
        "distribution, {distribution!r}, the one that installs {package}?)"
    ),
    reasons.Predates: "{distribution} {version} predates {targets}",
    reasons.Unexpected: "{detail}; reinstall {distribution}",
    reasons.FormDetail: "{detail}",
    reasons.FixedOtherwise: "the code is already fixed ({detail}), but not by hfpatch: it holds no state of it",
    reasons.BuiltinUncovered: "the built-in {patch} does not cover this release",
    reasons.Dropped: "{path} holds the original code again (was {distribution} reinstalled?)",
    reasons.Applied: "hfpatch {hfpatch_version} patched {path} on {applied_at}",
    reasons.InPlaceBut: "the patched file is in place, but {lagging}",
    reasons.BytecodeLags: "stale bytecode {path} would run",
    reasons.RecordLags: "{record} does not match the file",
    reasons.LeftByOther: "{path} is as the interrupted {verb} of {patch} left it",
    reasons.Edited: "{path} was changed since hfpatch applied {patch}; hfpatch will not overwrite it",
    reasons.BackupMissing: "hfpatch's backup {path} is missing",
    reasons.BackupChanged: "hfpatch's backup {path} is not the original any more (its sha256 differs from the state)",
    reasons.OriginalLost: "{error}: `{revert}` cannot restore the original; reinstall {distribution}",
    reasons.NoOriginal: "{error}; nothing was changed. Reinstall {distribution}",
    reasons.OtherInterrupted: (
        "the {verb} of {patch} was interrupted in {paths}: finish it first, with {patch} among the patches "
        "(`{apply}` or `{revert}`); nothing was changed"
    ),
    reasons.ClearedOrphans: "{distribution} is not installed any more; cleared hfpatch's state and backup in {roots}",
    reasons.ClearedStale: "cleared hfpatch's stale state of {distribution} {version}",
    reasons.NotCompiled: "could not compile {path} ({failure}); Python compiles it on import",
    reasons.NotRebuilt: "removed the old bytecode but could not rebuild it ({failure}); Python rebuilds it on import",
    reasons.HeldByUnknown: (
        "{path} also holds the patch {other}, which no catalog given has; give its --catalog (or revert {other} "
        "first), so that hfpatch can rebuild the file without {patch}"
    ),
    reasons.NoLongerChanges: "{patch} in the catalog no longer changes {file}; reinstall the package",
    reasons.BackupNotOriginal: "hfpatch's backup {path} is missing or not the original; reinstall the package",
    reasons.AlreadyHeld: "hfpatch already holds a state of {patch} or its files in {root}",
    reasons.ImportUntold: (
        "{module} does not import here, patched or not ({error}), so the import check could not tell anything of "
        "the patch"
    ),
    reasons.ImportBreaks: (
        "the patched {module} fails to import here ({error}) where the original imports; nothing was changed"
    ),
    reasons.DigestsOnly: "{patch} is checked by its digests only ({checked})",
    reasons.BrokenProbe: "the probe {probe} is broken: {broken}; see the README's Probes for what a probe prints",
    reasons.ProbeNeeds: (
        "the probe needs {needs}, which {executable} lacks: {patch} is checked by its digests only ({checked})"
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
            said = words(outcome.message, suggest=result.suggest)
            print(f"{column}: {outcome.patch.id}: {label(outcome)}: {said}", file=out)
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
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    columns = terminal_columns()
    start = sum(widths) + 2 * len(widths)
    # Too narrow for the title beside the rest: it goes below its row, indented.
    start, below = (start, False) if columns - start >= 30 else (4, True)
    lines = []
    for row in rows:
        head = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        title = wrap(row[-1], max(columns - start, 20))
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
        "message": words(outcome.message, suggest=result.suggest),
        "notes": [words(note, suggest=result.suggest) for note in outcome.notes],
        "version": None if installation is None else installation.version,
        # The patch's first file (all a patch of schema 2 had), then every file.
        "file": None if facts is None or not facts.files else str(facts.first.path),
        "file_sha256": None if facts is None or not facts.files else facts.first.source_sha256,
        "files": [] if facts is None else [_file(file) for file in facts.files],
        "state": None if facts is None or facts.state is None else state.as_json(facts.state),
        "diff": outcome.diff,
    }
