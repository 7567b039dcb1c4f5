"""What a command does about a diagnosis. Pure: the command, the diagnosis and the facts in, a plan out."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import NamedTuple

from hfpatch import reasons
from hfpatch.diagnosis import CHECK_EXIT, NEEDS_WRITING, Condition, Diagnosis
from hfpatch.entry import Patch
from hfpatch.errors import ExitCode
from hfpatch.facts import Facts, FileFacts
from hfpatch.reasons import FinishedApply, NothingToRevert, Patched, Reason, RebuiltBytecode, Restored, TookOut
from hfpatch.state import PatchState, Phase


class Command(enum.Enum):
    APPLY = "apply"
    REVERT = "revert"
    CHECK = "check"
    VERIFY = "verify"  # plans as check does; the probe runs after (hfpatch.verification)


class Action(enum.Enum):
    """What a command did (or, in a dry run, would do); the `action` of the JSON document."""

    PATCHED = "patched"
    COMPLETED = "completed"
    REFRESHED = "refreshed-bytecode"
    REVERTED = "reverted"
    CLEARED = "cleared-stale"
    ALREADY_APPLIED = "already-applied"
    NOTHING = "nothing-to-do"
    REFUSED = "refused"
    CHECKED = "checked"
    # A dry run: what the plan would do, nothing written.
    WOULD_APPLY = "would-apply"
    WOULD_REFRESH = "would-refresh-bytecode"
    WOULD_REVERT = "would-revert"
    WOULD_CLEAR = "would-clear-stale"
    # verify: what running the probe came to.
    VERIFIED = "verified"
    VERIFY_FAILED = "verify-failed"
    NO_PROBE = "no-probe"
    NOT_VERIFIED = "not-verified"
    PROBE_BROKEN = "broken-probe"
    NOT_NEEDED = "not-needed"
    NOTHING_TO_VERIFY = "nothing-to-verify"

    @property
    def changed_nothing(self) -> bool:
        """Nothing was done, nor is anything to be: the condition says all there is (the label text prints)."""
        return self in _QUIET


_QUIET = frozenset(
    {Action.CHECKED, Action.NOTHING, Action.ALREADY_APPLIED, Action.NOTHING_TO_VERIFY, Action.NOT_NEEDED}
)


class Step(enum.Enum):
    """A write, in the order the executor performs a plan's steps."""

    CLEAR_STATE = "clear-state"
    CLEAR_ORPHANS = "clear-orphans"
    PATCH = "patch"
    RESTORE = "restore"
    REFRESH_BYTECODE = "refresh-bytecode"


# Another entry of the catalogs given, by id: revert rebuilds a file with the patches that stay on it.
Lookup = Callable[[str], Patch | None]


def no_lookup(patch_id: str) -> Patch | None:
    """No other entry is known (a single patch's run)."""
    return None


class Options(NamedTuple):
    dry_run: bool = False
    force: bool = False
    lookup: Lookup = no_lookup


class Plan(NamedTuple):
    action: Action
    exit_code: ExitCode
    message: Reason
    steps: tuple[Step, ...] = ()


def plan(command: Command, diagnosis: Diagnosis, facts: Facts, options: Options) -> Plan:
    if command in (Command.CHECK, Command.VERIFY):
        return Plan(Action.CHECKED, CHECK_EXIT[diagnosis.condition], diagnosis.summary)
    decided = _apply(diagnosis, facts) if command is Command.APPLY else _revert(diagnosis, facts, options)
    other = next((run for file in facts.files for run in file.interrupted), None)
    if other is not None and {Step.PATCH, Step.RESTORE} & set(decided.steps):
        # Writing the file now would make that run's journal of it untrue, so it could never be finished.
        return _refused(reasons.OtherInterrupted(other.verb, other.patch, facts.file_paths))
    return decided


def _refused(message: Reason) -> Plan:
    return Plan(Action.REFUSED, ExitCode.ERROR, message)


def _apply(diagnosis: Diagnosis, facts: Facts) -> Plan:
    condition = diagnosis.condition
    clear = (Step.CLEAR_STATE,) if diagnosis.stale_state else ()
    if condition in (Condition.EDITED, Condition.UNRECOGNISED, Condition.ERROR):
        return _refused(diagnosis.summary)
    if condition not in NEEDS_WRITING:
        action = Action.ALREADY_APPLIED if condition is Condition.APPLIED else Action.NOTHING
        return Plan(action, ExitCode.OK, diagnosis.summary, clear)
    if any(file.link for file in facts.files):
        return _refused(diagnosis.summary)  # the diagnosis names the link and what to do instead
    saved = facts.state
    if saved is None or diagnosis.stale_state:
        if condition is Condition.INCOMPLETE:  # fixed source, stale bytecode: nothing of hfpatch's to finish
            rebuilt = RebuiltBytecode(facts.file_paths)
            return Plan(Action.REFRESHED, ExitCode.OK, rebuilt, (*clear, Step.REFRESH_BYTECODE))
        return Plan(Action.PATCHED, ExitCode.OK, _patched(facts), (*clear, Step.PATCH))
    # With a state, what needs writing holds the original (dropped, or a run killed early) or the patched bytes:
    # where an interrupted apply leaves the file, or where an interrupted revert found it.
    reverting = saved.phase is Phase.REVERTING
    written = [saved.change_of(file.file) for file in facts.files]
    if all(
        change is not None and file.source_sha256 == (change.before_sha256 if reverting else change.after_sha256)
        for change, file in zip(written, facts.files, strict=True)
    ):
        return Plan(Action.COMPLETED, ExitCode.OK, FinishedApply(facts.file_paths), (Step.PATCH,))
    return Plan(Action.PATCHED, ExitCode.OK, _patched(facts), (Step.PATCH,))


def _patched(facts: Facts) -> Patched:
    return Patched(facts.file_paths, facts.patch.upstream, facts.patch.fixed_in, facts.added_paths)


def _revert(diagnosis: Diagnosis, facts: Facts, options: Options) -> Plan:
    condition, patch = diagnosis.condition, facts.patch
    if facts.installation is None:
        if facts.orphans:
            cleared = reasons.ClearedOrphans(patch.distribution, facts.orphans)
            return Plan(Action.CLEARED, ExitCode.OK, cleared, (Step.CLEAR_ORPHANS,))
        return Plan(Action.NOTHING, ExitCode.OK, diagnosis.summary)
    saved = facts.state
    if saved is None:
        if condition is Condition.ERROR:
            return _refused(diagnosis.summary)
        if facts.leftover or any(file.leftover for file in facts.files):
            removed = NothingToRevert(diagnosis.reason, removed_backup=True)
            return Plan(Action.NOTHING, ExitCode.OK, removed, (Step.CLEAR_STATE,))
        return Plan(Action.NOTHING, ExitCode.OK, NothingToRevert(diagnosis.reason))
    if diagnosis.stale_state:
        stale = reasons.ClearedReinstalled(saved.distribution, saved.version, facts.installation.version)
        return Plan(Action.CLEARED, ExitCode.OK, stale, (Step.CLEAR_STATE,))
    if condition is Condition.EDITED and not options.force:
        return _refused(diagnosis.summary)
    if condition is Condition.ERROR:
        return _refused(diagnosis.summary)
    link = next((file.link for file in facts.files if file.link), None)
    if link:
        return _refused(reasons.NoLinks(link))
    for file in facts.files:
        held = file.state
        if held is not None and file.source_sha256 != held.original_sha256 and file.original is None:
            assert file.original_error is not None
            return _refused(reasons.NoOriginal(file.original_error, patch.distribution))
    already = all(_holds_the_original(file, saved) for file in facts.files)
    message: Reason = Restored(facts.file_paths, already=already, removed=() if already else facts.added_paths)
    staying = sorted({other for file in facts.files if file.state for other in file.state.patches} - {patch.id})
    if staying and not already:
        # the file is rebuilt from its original with the others' fixes: it is not the original
        message = TookOut(patch.id, facts.file_paths, tuple(staying))
    return Plan(Action.REVERTED, ExitCode.OK, message, (Step.RESTORE,))


def _holds_the_original(file: FileFacts, saved: PatchState) -> bool:
    """By hfpatch's state of the file, or, where an interrupted run left none, by that run's journal."""
    if file.state is not None:
        return file.source_sha256 == file.state.original_sha256
    change = saved.change_of(file.file)
    if change is None or saved.phase is Phase.APPLIED:
        return True
    return file.source_sha256 == (change.before_sha256 if saved.phase is Phase.APPLYING else change.after_sha256)
