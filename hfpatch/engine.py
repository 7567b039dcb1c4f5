"""One patch, one environment, one command: read, decide, and only then take the lock, read again and write.

The decision is the same pure code each time (diagnosis, then plan); reading again under the lock makes it hold
against a concurrent run. This is also the one boundary where every HfpatchError of a patch becomes its result (finding
the installation included), so a refusal looks the same from every command, in text and in JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from hfpatch import files, state
from hfpatch.diagnosis import Condition, Diagnosis, diagnose
from hfpatch.entry import Patch
from hfpatch.environment import Environment, Installation, Python
from hfpatch.errors import ExitCode, HfpatchError
from hfpatch.facts import Facts, forget, gather
from hfpatch.plan import Action, Command, Options, Plan, Step, plan
from hfpatch.reasons import Reason, WouldDo

if TYPE_CHECKING:
    from hfpatch import executor


class Outcome(NamedTuple):
    """What a command found and did for one patch in one environment."""

    patch: Patch
    facts: Facts | None
    condition: Condition
    action: Action
    exit_code: ExitCode
    message: Reason
    notes: tuple[Reason, ...] = ()
    diff: str | None = None
    # What the user should do about the condition, where anything (the diagnosis's advice).
    advice: Reason | None = None


def run(command: Command, patch: Patch, environment: Environment, options: Options) -> Outcome:
    """What the command comes to for one patch in one environment; never raises HfpatchError."""
    facts: Facts | None = None
    diagnosis: Diagnosis | None = None
    try:
        installation = environment.installation_of(patch)
        facts, diagnosis, decided = decide(command, patch, environment.python, installation, options)
        if command is Command.VERIFY:
            from hfpatch.verification import verify  # a probe runs in a subprocess: only verify pays for it

            return verify(outcome(facts, diagnosis, decided))
        if not decided.steps:
            return outcome(facts, diagnosis, decided)
        if options.dry_run:
            return _preview(facts, diagnosis, decided, options)
        return _perform(command, facts, decided, options)
    except HfpatchError as error:
        condition = Condition.ERROR if diagnosis is None else diagnosis.condition
        notes = () if diagnosis is None else diagnosis.notes
        said: Reason = str(error).rstrip(".") if error.reason is None else error.reason
        return Outcome(patch, facts, condition, Action.REFUSED, ExitCode.ERROR, said, notes)


def decide(
    command: Command, patch: Patch, python: Python, installation: Installation | None, options: Options
) -> tuple[Facts, Diagnosis, Plan]:
    facts = gather(patch, python, installation)
    diagnosis = diagnose(facts)
    return facts, diagnosis, plan(command, diagnosis, facts, options)


def outcome(facts: Facts, diagnosis: Diagnosis, decided: Plan, notes: tuple[Reason, ...] = ()) -> Outcome:
    return Outcome(
        facts.patch,
        facts,
        diagnosis.condition,
        decided.action,
        decided.exit_code,
        decided.message,
        (*diagnosis.notes, *notes),
        advice=diagnosis.advice,
    )


def _perform(command: Command, facts: Facts, decided: Plan, options: Options) -> Outcome:
    """Take the environment's lock, read and decide again under it, and carry out what that decision says."""
    from hfpatch import executor  # only a command that writes pays for the writing side (and what it imports)

    installation = facts.installation
    try:
        if installation is None:  # only hfpatch's state of an uninstalled package: each root has its own lock
            notes = executor.execute(decided, facts, options.lookup)
        else:
            with files.locked(state.lock_file(installation.root), executor.LOCK_TIMEOUT):
                forget()  # what is decided under the lock is read under it
                facts, _, decided = decide(command, facts.patch, facts.python, installation, options)
                notes = executor.execute(decided, facts, options.lookup)
    finally:
        forget()  # what it wrote is read afresh
    # What the environment holds now (the file's digest, the state, the condition), as `check` would say it.
    after = gather(facts.patch, facts.python, installation)
    return outcome(after, diagnose(after), decided, notes)


# A dry run's action, by what the plan would do (hfpatch.render says it: reasons.WouldDo).
_PREVIEW = {
    Action.PATCHED: Action.WOULD_APPLY,
    Action.COMPLETED: Action.WOULD_APPLY,
    Action.REFRESHED: Action.WOULD_REFRESH,
    Action.REVERTED: Action.WOULD_REVERT,
    Action.CLEARED: Action.WOULD_CLEAR,
    Action.NOTHING: Action.WOULD_CLEAR,
}


def _preview(facts: Facts, diagnosis: Diagnosis, decided: Plan, options: Options) -> Outcome:
    """A dry run: what the plan would write, as a unified diff of each file it changes; nothing is written."""
    from hfpatch import executor

    plans: list[executor.FilePlan] = []
    if Step.PATCH in decided.steps:
        plans = [executor.applying(facts, file) for file in facts.files]
    elif Step.RESTORE in decided.steps:
        plans = [executor.reverting(facts, file, options.lookup) for file in facts.files]
    diff = "".join(
        unified_diff(plan.before, plan.after, plan.facts.file) for plan in plans if plan.after != plan.before
    )
    action = _PREVIEW.get(decided.action, decided.action)
    message: Reason = decided.message
    if decided.action in _PREVIEW:
        message = WouldDo(decided.action.value, facts.file_paths, facts.patch.id)
    return Outcome(facts.patch, facts, diagnosis.condition, action, decided.exit_code, message, diagnosis.notes, diff)


def unified_diff(before: bytes, after: bytes, path: str) -> str:
    import difflib  # dry runs only

    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))
