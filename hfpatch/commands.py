"""A command over every environment it is given: each patch through the engine, the results gathered per
environment and never raised, so that one unusable --python does not stop the others."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from hfpatch import catalog, engine, state
from hfpatch.diagnosis import Condition, Suggest, plain
from hfpatch.entry import Patch
from hfpatch.environment import Environment, resolve_python
from hfpatch.errors import ExitCode, HfpatchError
from hfpatch.plan import Action, Command, Options


class EnvironmentResult:
    """What every patch came to in one environment (filled in as the run goes)."""

    def __init__(self, requested: str | None) -> None:
        self.requested = requested  # the --python given, None for hfpatch's own interpreter
        self.environment: Environment | None = None  # None where the interpreter is not usable
        self.outcomes: list[engine.Outcome] = []
        self.error: str | None = None
        self.obsolete: str | None = None  # check --fail-on-obsolete: why the environment needs hfpatch no more

    @property
    def exit_code(self) -> ExitCode:
        codes = [outcome.exit_code for outcome in self.outcomes]
        obsolete = ExitCode.ACTION_NEEDED if self.obsolete else ExitCode.OK
        return max([ExitCode.ERROR if self.error else ExitCode.OK, obsolete, *codes])


def run(
    command: Command,
    pythons: Sequence[str],
    patches: Sequence[Patch],
    options: Options,
    advice_for: Callable[[str | None], Suggest] = lambda given: plain,
    *,
    require_installed: bool = True,
) -> list[EnvironmentResult]:
    """Run `command` for every patch in every environment. `advice_for` spells the commands suggested in each
    environment (with its own --python: another one given may need nothing). With `require_installed`, an
    environment that has none of the patches' distributions is an error: the wrong interpreter, most likely."""
    results = []
    requested: list[str | None] = [*pythons] if pythons else [None]
    for given in requested:
        result = EnvironmentResult(requested=given)
        results.append(result)
        try:
            result.environment = Environment(resolve_python(given))
        except HfpatchError as error:
            result.error = str(error)
    # A patch read as its header is read whole where its distribution is installed, in every environment before
    # any acts: a fault in an entry stops the run before anything is written.
    usable = [result.environment for result in results if result.environment is not None]
    wanted = {patch.id: catalog.whole_entry(patch) for patch in patches if any(_has(each, patch) for each in usable)}
    for result in results:
        environment = result.environment
        if environment is None:
            continue
        here = options._replace(suggest=advice_for(result.requested))
        chosen = [wanted[patch.id] if _has(environment, patch) else patch for patch in patches]
        done = {
            patch.id: engine.run(command, patch, environment, here)
            for patch in _interrupted_first(command, chosen, environment)
        }
        result.outcomes = [done[patch.id] for patch in chosen]
        if require_installed and _found_nothing(result, environment):
            result.error = _nothing_installed(command.value, environment, patches, given is not None)
    return results


def _has(environment: Environment, patch: Patch) -> bool:
    """The environment imports the patch's package (or cannot tell: the engine reports that, with the whole entry)."""
    try:
        return environment.installation_of(patch) is not None
    except HfpatchError:
        return True


def _interrupted_first(command: Command, patches: Sequence[Patch], environment: Environment) -> list[Patch]:
    """apply and revert finish a patch's interrupted run before they act on the others: until then the files it
    names hold what its journal says, and another patch of those files is refused (hfpatch.plan)."""
    if command not in (Command.APPLY, Command.REVERT):
        return list(patches)

    def interrupted(patch: Patch) -> bool:
        try:
            installation = environment.installation_of(patch)
            saved = None if installation is None else state.load(installation.root, patch.id)[0]
        except HfpatchError:
            return False  # the patch's own run reports it
        return saved is not None and saved.phase is not state.Phase.APPLIED

    return sorted(patches, key=lambda patch: not interrupted(patch))


def _found_nothing(result: EnvironmentResult, environment: Environment) -> bool:
    """None of the patches' distributions is installed, and nothing else was done: the wrong interpreter."""
    cleared = any(outcome.action is Action.CLEARED for outcome in result.outcomes)
    return bool(result.outcomes) and environment.found_nothing and not cleared


def _nothing_installed(command: str, environment: Environment, patches: Sequence[Patch], given: bool) -> str:
    names = ", ".join(sorted({patch.distribution for patch in patches}))
    executable = environment.python.executable
    what = f"{executable} has none of the distributions the patches are for ({names}), so there is nothing to"
    if given:
        return f"{what} {command}; is it the application's interpreter (the one that imports {names})?"
    return (
        f"{what} {command}; point --python at the application's interpreter: "
        f"`hfpatch {command} --python /path/to/app/bin/python`"
    )


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


# Where an advisory stands in an environment, by the condition of the patch that fixes it: fixed where the patch is
# applied and in effect, open where the code with the hole is what runs and hfpatch knows it; anything else (a
# release fixed upstream, one the patch leaves alone) is not hfpatch's to say.
_ADVISORY = {
    Condition.APPLIED: "fixed",
    Condition.NEEDS_PATCH: "open",
    Condition.DROPPED: "open",
    Condition.INCOMPLETE: "open",
}


def advisory_status(outcome: engine.Outcome) -> str | None:
    """ "fixed" or "open" for a patch that closes advisories, as its condition here says; None otherwise."""
    return _ADVISORY.get(outcome.condition) if outcome.patch.advisories else None


def advisories(result: EnvironmentResult, status: str) -> list[str]:
    """The advisories that are `status` ("fixed", "open") in the environment, each once, in the patches' order."""
    found = [
        advisory
        for outcome in result.outcomes
        if advisory_status(outcome) == status
        for advisory in outcome.patch.advisories
    ]
    return list(dict.fromkeys(found))


def suggestion(pythons: Sequence[str], patch_ids: Sequence[str], catalogs: Sequence[str]) -> Suggest:
    """The command to suggest, with the options the user gave, so that following it acts on the same thing."""

    def suggest(command: str) -> str:
        words = ["hfpatch", command]
        for option, values in (("--python", pythons), ("--patch", patch_ids), ("--catalog", catalogs)):
            for value in values:
                words += [option, value]
        return shlex.join(words)

    return suggest


def exit_code(results: Sequence[EnvironmentResult]) -> ExitCode:
    return max((result.exit_code for result in results), default=ExitCode.OK)
