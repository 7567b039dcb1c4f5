"""What condition a patch is in, in one environment. Pure: the facts read off disk in, a condition out.

Each of the patch's files is judged on its own (by hfpatch's state where it holds the patch, else by its code),
and the patch's condition is the one that needs the most attention.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import NamedTuple

from hfpatch import classify, reasons, versions, wheelrecord
from hfpatch.catalog import is_builtin
from hfpatch.entry import FileShape, Verdict
from hfpatch.errors import ExitCode, UnexpectedCode
from hfpatch.facts import Facts, FileFacts
from hfpatch.reasons import Advice, KnownForms, NeedsPatch, NeverShipped, Next, Reason, WithAdvice
from hfpatch.state import Phase


class Condition(enum.Enum):
    NOT_INSTALLED = "not-installed"
    NOT_APPLICABLE = "not-applicable"
    NEEDS_PATCH = "needs-patch"
    DROPPED = "dropped"
    INCOMPLETE = "incomplete"
    APPLIED = "applied"
    FIXED_UPSTREAM = "fixed-upstream"
    FIXED_OTHERWISE = "fixed-otherwise"
    # A release the entry was not written from (outside the releases `hfpatch new` read), its file as released.
    NOT_COVERED = "not-covered"
    EDITED = "edited"
    UNRECOGNISED = "unrecognised"
    ERROR = "error"


CHECK_EXIT = {
    Condition.NOT_INSTALLED: ExitCode.OK,
    Condition.NOT_APPLICABLE: ExitCode.OK,
    Condition.APPLIED: ExitCode.OK,
    Condition.FIXED_UPSTREAM: ExitCode.OK,
    Condition.FIXED_OTHERWISE: ExitCode.OK,
    Condition.NOT_COVERED: ExitCode.OK,
    Condition.NEEDS_PATCH: ExitCode.ACTION_NEEDED,
    Condition.DROPPED: ExitCode.ACTION_NEEDED,
    Condition.INCOMPLETE: ExitCode.ACTION_NEEDED,
    Condition.EDITED: ExitCode.ERROR,
    Condition.UNRECOGNISED: ExitCode.ERROR,
    Condition.ERROR: ExitCode.ERROR,
}

# Conditions that apply would write to resolve.
NEEDS_WRITING = frozenset({Condition.NEEDS_PATCH, Condition.DROPPED, Condition.INCOMPLETE})

# Which file's condition speaks for a patch of several: the one that needs the most attention first.
_PRECEDENCE = (
    Condition.ERROR,
    Condition.EDITED,
    Condition.UNRECOGNISED,
    Condition.INCOMPLETE,
    Condition.DROPPED,
    Condition.NEEDS_PATCH,
    Condition.APPLIED,
    Condition.FIXED_OTHERWISE,
    Condition.FIXED_UPSTREAM,
    Condition.NOT_COVERED,
    Condition.NOT_APPLICABLE,
)


class Diagnosis(NamedTuple):
    condition: Condition
    # What is, without repeating the condition's name (hfpatch.render words it).
    reason: Reason
    notes: tuple[Reason, ...] = ()
    # hfpatch's state belongs to another install of the distribution (upgraded or reinstalled since apply).
    stale_state: bool = False
    # What to do about it, where the user must act.
    advice: Reason | None = None

    @property
    def summary(self) -> Reason:
        return self.reason if self.advice is None else WithAdvice(self.reason, self.advice)


def diagnose(facts: Facts) -> Diagnosis:
    diagnosis = _diagnose(facts)
    installation = facts.installation
    if installation is not None and installation.shared_with_base:
        python = installation.python
        shared = reasons.SharedWithBase(facts.file_paths, python.base_prefix, python.prefix)
        diagnosis = diagnosis._replace(notes=(*diagnosis.notes, shared))
    link = next((file.link for file in facts.files if file.link), None)
    if link and diagnosis.condition in NEEDS_WRITING:
        return diagnosis._replace(advice=reasons.ThroughLink(link))
    return diagnosis


def _diagnose(facts: Facts) -> Diagnosis:
    patch, installation, saved = facts.patch, facts.installation, facts.state
    if installation is None:
        orphans = tuple(reasons.Orphaned(root / ".hfpatch" / patch.id, patch.distribution) for root in facts.orphans)
        absent = reasons.NotInstalled(facts.python.executable, patch.distribution)
        return Diagnosis(Condition.NOT_INSTALLED, absent, orphans)
    if facts.state_error is not None:
        return Diagnosis(Condition.ERROR, facts.state_error)
    broken = next((file.state_error for file in facts.files if file.state_error), None)
    if broken is not None:
        return Diagnosis(Condition.ERROR, broken)
    known = {file.file for file in patch.files}
    strange = [] if saved is None else [change.file for change in saved.files if change.file not in known]
    if strange:
        return Diagnosis(Condition.ERROR, reasons.StrangeState(patch.id, strange[0], patch.file_names))
    # Stale: the installer replaced the package since apply (another release or another install). Where either side
    # has no metadata to compare, that cannot be told, and the state is judged by the file's bytes as it is.
    stale = saved is not None and (
        _differ(saved.version, installation.version) or _differ(saved.dist_info, facts.dist_info_name)
    )
    notes: tuple[Reason, ...] = ()
    if installation.dist_info is None:
        notes = (reasons.NoDistInfo(installation.root, patch.distribution, patch.package),)
    if saved is not None and stale:
        notes += (reasons.StaleState(saved.distribution, saved.version, installation.version),)
    trouble = _missing_or_unreadable(facts, stale)
    if trouble is not None:
        return trouble._replace(notes=notes + trouble.notes, stale_state=stale)
    if saved is not None and not stale:
        judged = [_with_state(facts, file) for file in facts.files]
        chosen = _worst(judged)
        return chosen._replace(notes=notes + tuple(note for each in judged for note in each.notes))
    return _by_code(facts, notes, stale)


def _differ(then: str | None, now: str | None) -> bool:
    return then is not None and now is not None and then != now


def _missing_or_unreadable(facts: Facts, stale: bool) -> Diagnosis | None:
    patch, installation = facts.patch, facts.installation
    assert installation is not None
    never = [file.file for file in facts.files if _never_installed(file, stale)]
    never_had = set(never)  # looked up once a file: a removed file's entry names hundreds
    for file in facts.files:
        if file.file in never_had:
            continue
        if file.missing:
            if patch.first_defined_in and versions.is_older(installation.version, patch.first_defined_in):
                predates = reasons.Predates(patch.distribution, installation.version, file.patch_file.target_names)
                return Diagnosis(Condition.NOT_APPLICABLE, predates)
            return Diagnosis(Condition.ERROR, reasons.Missing(file.path, patch.distribution))
        if file.source is None:
            return Diagnosis(Condition.ERROR, file.source_error or reasons.Unreadable(file.path))
        added = _added_in_the_way(facts, file, stale)
        if added is not None:
            return added
    return None if not never else _release_without(facts, never)


def _added_in_the_way(facts: Facts, file: FileFacts, stale: bool) -> Diagnosis | None:
    """A file the patch adds: an empty file in its place is a user's, never overwritten; one absent that RECORD
    lists (and hfpatch holds no state of) was lost since the release installed it."""
    if file.patch_file.shape is not FileShape.ADD or (file.state is not None and not stale):
        return None
    if not file.absent and not file.source:
        return Diagnosis(Condition.UNRECOGNISED, reasons.EmptyInTheWay(file.path, facts.patch.id))
    if file.absent and file.record_line is not None:
        return Diagnosis(Condition.ERROR, reasons.Missing(file.path, facts.patch.distribution))
    return None


def _never_installed(file: FileFacts, stale: bool) -> bool:
    """The release never had the file: it is missing and RECORD, read, does not list it (a file lost since is
    listed). A file hfpatch's state of this install holds is hfpatch's to explain, not the release's."""
    return file.missing and file.unlisted and (file.state is None or stale)


def _release_without(facts: Facts, never: list[str]) -> Diagnosis:
    """Whatever releases the entry was written from, one that never had its files is none of its concern; one that
    lacks some of them is a release it does not cover (a fix of several files cannot be carried in part)."""
    patch, installation = facts.patch, facts.installation
    assert installation is not None
    # a file the patch adds, absent, is no file the release has
    never_had = set(never)
    others = tuple(file.file for file in facts.files if file.file not in never_had and not file.absent)
    summary = NeverShipped(patch.distribution, installation.version, tuple(never), patch.id, others)
    return Diagnosis(Condition.NOT_COVERED if others else Condition.NOT_APPLICABLE, summary)


def _worst(judged: list[Diagnosis]) -> Diagnosis:
    """The diagnosis of the file that needs the most attention; several of one condition are said together."""
    for condition in _PRECEDENCE:
        chosen = [each for each in judged if each.condition is condition]
        if chosen:
            if len(chosen) == 1:
                return chosen[0]
            said = tuple(dict.fromkeys(each.reason for each in chosen))
            reason = said[0] if len(said) == 1 else reasons.Together(said)
            return chosen[0]._replace(reason=reason)
    raise AssertionError("a patch has at least one file")


def _by_code(facts: Facts, notes: tuple[Reason, ...], stale: bool) -> Diagnosis:
    patch, installation = facts.patch, facts.installation
    assert installation is not None
    try:
        verdicts = [_identify(facts, file) for file in facts.files]
    except UnexpectedCode as error:
        return Diagnosis(Condition.UNRECOGNISED, reasons.Unexpected(str(error), patch.distribution), notes, stale)
    found = classify.combine_files([verdict for _, verdict in verdicts])
    if found.verdict is Verdict.NEEDS_PATCH:
        # Each file's detail (combine_files joins them): a fix of hundreds of files is worded by its first.
        needing = [verdict.detail for _, verdict in verdicts if verdict.verdict is Verdict.NEEDS_PATCH]
        needs = NeedsPatch(KnownForms(tuple(needing)), patch.upstream, patch.fixed_upstream)
        return Diagnosis(Condition.NEEDS_PATCH, needs, notes, stale, advice=Advice(Next.APPLY))
    if found.verdict is Verdict.NOT_APPLICABLE:
        return Diagnosis(Condition.NOT_APPLICABLE, reasons.FormDetail(found.detail), notes, stale)
    if found.verdict is None:
        uncovered = _not_covered(facts)
        if uncovered is not None:
            return uncovered._replace(notes=notes, stale_state=stale)
        where = next(file.path for file, verdict in verdicts if verdict.verdict is None)
        return Diagnosis(Condition.UNRECOGNISED, reasons.UnknownCode(found.detail, where), notes, stale)
    stale_bytecode = next((file.stale_bytecode[0] for file in facts.files if file.stale_bytecode), None)
    if stale_bytecode is not None:
        lags = reasons.StaleBytecode(Path(stale_bytecode))
        return Diagnosis(Condition.INCOMPLETE, lags, notes, stale, advice=Advice(Next.REBUILD))
    # A file the catalog lists as fixed in this very release needs no version arithmetic (nor packaging's import).
    version = installation.version
    upstream = version in found.released_in or (
        versions.is_at_least(version, patch.fixed_in) if patch.fixed_in is not None else _pristine(facts)
    )
    if upstream:
        return _fixed_upstream(facts, notes, stale)
    return Diagnosis(Condition.FIXED_OTHERWISE, reasons.FixedOtherwise(found.detail), notes, stale)


def _fixed_upstream(facts: Facts, notes: tuple[Reason, ...], stale: bool) -> Diagnosis:
    patch, installation = facts.patch, facts.installation
    assert installation is not None
    # Obsolete for this patch only: whether the apply step is dead is the environment's question (check
    # --fail-on-obsolete), since another patch of the catalog may still need it.
    fixed = reasons.FixedUpstream(patch.distribution, installation.version, patch.upstream, patch.fixed_in)
    return Diagnosis(Condition.FIXED_UPSTREAM, fixed, notes, stale)


def _pristine(facts: Facts) -> bool:
    """Every file is as the release installed it (RECORD agrees): a released fix, where no release is named."""
    installation = facts.installation
    if installation is None or installation.record is None:
        return False
    return all(
        file.source is not None and file.record_line == wheelrecord.line_for(file.file, file.source)
        for file in facts.files
    )


def _not_covered(facts: Facts) -> Diagnosis | None:
    """Code the entry does not know in a release outside those it was written from, every file as the release
    installed it (RECORD agrees): not edited, only not read. Nothing to do here; the entry can be extended."""
    patch, installation = facts.patch, facts.installation
    assert installation is not None
    if patch.releases_read is None or installation.version is None or installation.record is None:
        return None
    oldest, newest = patch.releases_read
    older = versions.is_older(installation.version, oldest)
    # Newer than those read, whatever fixed_in says: a release before fixed_in that was not read (another entry of
    # the same advisory covers it, or it came out after the entry) is as unknown to the entry as any other.
    newer = versions.is_older(newest, installation.version)
    if not (older or newer):
        return None
    for file in facts.files:
        if file.source is None or file.record_line != wheelrecord.line_for(file.file, file.source):
            return None
    # Another entry of the catalog (of another line of the same code) may have patched the file: say so.
    held = sorted({other for file in facts.files if file.state for other in file.state.patches} - {patch.id})
    summary = reasons.NotCovered(
        patch.distribution, installation.version, older, (oldest, newest), patch.id, len(facts.files), tuple(held)
    )
    if is_builtin(patch):
        # Not the user's to rewrite (and an entry of their own for the same statements would be refused beside it).
        return Diagnosis(Condition.NOT_COVERED, summary, advice=reasons.BuiltinUncovered(patch.id))
    targets = tuple(
        f"{patch.distribution}:{file.module}:{target.name}" for file in patch.files for target in file.targets
    )
    # Before fixed_in, new's default reading (every release back from --fixed-in) takes the release in.
    since = installation.version if older else None
    until = installation.version if not older and not patch.fixed_in else None
    advice = reasons.WriteAgain(patch.id, targets, patch.fixed_in, since, until)
    return Diagnosis(Condition.NOT_COVERED, summary, advice=advice)


def _identify(facts: Facts, file: FileFacts) -> tuple[FileFacts, classify.Classification]:
    assert file.source is not None and facts.installation is not None
    version = facts.installation.version
    return file, classify.identify(file.source, facts.patch, file.patch_file, version, file.source_sha256)


def _with_state(facts: Facts, file: FileFacts) -> Diagnosis:
    """One file, judged by hfpatch's state of the patch and of the file."""
    patch, saved, digest = facts.patch, facts.state, file.source_sha256
    assert saved is not None and file.source is not None
    held = file.state
    change = saved.change_of(file.file)
    notes: tuple[Reason, ...] = ()
    if held is not None and digest != held.original_sha256 and file.original_error is not None:
        notes = (reasons.OriginalLost(file.original_error, patch.distribution),)
    if saved.phase is not Phase.APPLIED:
        if change is not None and digest not in (change.before_sha256, change.after_sha256):
            return _edited(facts, file, notes)
        reason, advice = _interrupted(saved.phase, None)
        return Diagnosis(Condition.INCOMPLETE, reason, notes, advice=advice)
    dropped = reasons.Dropped(file.path, patch.distribution)
    if held is None or patch.id not in held.patches:
        if held is None and change is not None and digest == change.after_sha256:
            # the file holds the patch, and only hfpatch's state of the file is gone
            reason, advice = _interrupted(Phase.APPLYING, None)
            return Diagnosis(Condition.INCOMPLETE, reason, notes, advice=advice)
        return Diagnosis(Condition.DROPPED, dropped, notes, advice=Advice(Next.APPLY))
    if digest == held.sha256:
        lagging = _record_lags(facts, file)
        if lagging is None and file.stale_bytecode:
            lagging = reasons.BytecodeLags(Path(file.stale_bytecode[0]))
        if lagging is None:
            applied = reasons.Applied(file.path, saved.hfpatch_version, saved.applied_at)
            return Diagnosis(Condition.APPLIED, applied, notes)
        reason, advice = _interrupted(Phase.APPLIED, lagging)
        return Diagnosis(Condition.INCOMPLETE, reason, notes, advice=advice)
    if digest == held.original_sha256:
        return Diagnosis(Condition.DROPPED, dropped, notes, advice=Advice(Next.APPLY))
    other = next(
        (run for run in file.interrupted if digest in (run.change.before_sha256, run.change.after_sha256)), None
    )
    if other is not None:  # not edited: another patch's run was writing it
        left = reasons.LeftByOther(file.path, other.verb, other.patch)
        return Diagnosis(Condition.INCOMPLETE, left, notes, advice=Advice(Next.FINISH_OTHER, other.patch))
    return _edited(facts, file, notes)


def _edited(facts: Facts, file: FileFacts, notes: tuple[Reason, ...]) -> Diagnosis:
    edited = reasons.Edited(file.path, facts.patch.id)
    return Diagnosis(Condition.EDITED, edited, notes, advice=Advice(Next.FORCE_REVERT))


def _interrupted(phase: Phase, lagging: Reason | None) -> tuple[Reason, Reason]:
    if phase is Phase.REVERTING:
        return reasons.Interrupted(reverting=True), Advice(Next.FINISH_REVERT)
    if phase is Phase.APPLYING:
        return reasons.Interrupted(reverting=False), Advice(Next.FINISH_APPLY)
    assert lagging is not None
    return reasons.InPlaceBut(lagging), Advice(Next.FINISH)


def _record_lags(facts: Facts, file: FileFacts) -> Reason | None:
    installation = facts.installation
    if installation is None or installation.record is None or file.record_line is None:
        return None
    assert file.source is not None
    if file.record_line == wheelrecord.line_for(file.file, file.source):
        return None
    return reasons.RecordLags(installation.record)
