"""One patch, one environment, one command: read, decide, and only then take the lock, read again and write.

The decision is the same pure code each time (diagnosis, then plan); reading again under the lock makes it hold
against a concurrent run. This is also the one boundary where every HfpatchError becomes a result, so a refusal
looks the same from every command, in text and in JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfpatch.catalog import Patch
from hfpatch.diagnosis import Condition, Diagnosis, diagnose
from hfpatch.environment import Installation, Python
from hfpatch.errors import ExitCode, HfpatchError
from hfpatch.facts import Facts, gather
from hfpatch.plan import Action, Command, Options, Plan, plan


@dataclass(frozen=True)
class Outcome:
    """What a command found and did for one patch in one environment."""

    patch: Patch
    facts: Facts | None
    condition: Condition
    action: str
    exit_code: ExitCode
    message: str
    notes: tuple[str, ...] = ()
    diff: str | None = None


def run(command: Command, patch: Patch, python: Python, installation: Installation | None, options: Options) -> Outcome:
    facts: Facts | None = None
    diagnosis: Diagnosis | None = None
    try:
        facts, diagnosis, decided = decide(command, patch, python, installation, options)
        if not decided.steps:
            return outcome(facts, diagnosis, decided)
        # Only a plan that writes needs the executor, and with it libcst: 150 ms that `check` never pays.
        from hfpatch import executor

        if options.dry_run:
            return executor.preview(facts, diagnosis, decided)
        return executor.perform(command, facts, decided, options)
    except HfpatchError as error:
        condition = Condition.ERROR if diagnosis is None else diagnosis.condition
        notes = () if diagnosis is None else diagnosis.notes
        return Outcome(patch, facts, condition, Action.REFUSED.value, ExitCode.ERROR, str(error).rstrip("."), notes)


def diagnosed(patch: Patch, python: Python, installation: Installation | None, options: Options) -> Outcome:
    """The diagnosis alone, as an outcome (what `check` prints); never raises HfpatchError."""
    return run(Command.CHECK, patch, python, installation, options)


def decide(
    command: Command, patch: Patch, python: Python, installation: Installation | None, options: Options
) -> tuple[Facts, Diagnosis, Plan]:
    facts = gather(patch, python, installation)
    diagnosis = diagnose(facts, options.suggest)
    return facts, diagnosis, plan(command, diagnosis, facts, options)


def outcome(facts: Facts, diagnosis: Diagnosis, decided: Plan, notes: tuple[str, ...] = ()) -> Outcome:
    return Outcome(
        facts.patch,
        facts,
        diagnosis.condition,
        decided.action.value,
        decided.exit_code,
        decided.message,
        (*diagnosis.notes, *notes),
    )
