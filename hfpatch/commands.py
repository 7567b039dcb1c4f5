"""A command over every environment it is given: each patch through the engine, the results gathered per
environment and never raised, so that one unusable --python does not stop the others."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hfpatch import catalog, engine, facts, reasons, state, stranded
from hfpatch.diagnosis import NEEDS_WRITING, Condition, diagnose
from hfpatch.entry import Patch
from hfpatch.environment import Environment, resolve_python
from hfpatch.errors import ExitCode, HfpatchError
from hfpatch.plan import Action, Command, Options
from hfpatch.reasons import Suggest, plain

if TYPE_CHECKING:
    from hfpatch.audit import Audit


class EnvironmentResult:
    """What every patch came to in one environment (filled in as the run goes)."""

    def __init__(self, requested: str | None) -> None:
        self.requested = requested  # the --python given, None for hfpatch's own interpreter
        self.environment: Environment | None = None  # None where the interpreter is not usable
        self.outcomes: list[engine.Outcome] = []
        self.error: str | None = None
        self.obsolete: str | None = None  # check --fail-on-obsolete: why the environment needs hfpatch no more
        # Ctrl-C: what the environment holds now and what to run, in a sentence.
        self.interrupted: str | None = None
        # An interrupt stopped the run before it came to this environment.
        self.not_reached = False
        self.running: Patch | None = None  # the patch the command is at
        self.advisories: Audit | None = None  # check: where each advisory the catalog knows stands (hfpatch.audit)
        # The commands its advice names, spelt with the options given (its own --python among them).
        self.suggest: Suggest = plain
        # check: the entries of packages no environment of the run imports, counted as not installed (select_awake).
        self.dormant: tuple[catalog.Dormant, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        if self.interrupted or self.not_reached:
            return ExitCode.INTERRUPTED
        codes = [outcome.exit_code for outcome in self.outcomes]
        obsolete = ExitCode.ACTION_NEEDED if self.obsolete else ExitCode.OK
        return max([ExitCode.ERROR if self.error else ExitCode.OK, obsolete, *codes])


def resolve(pythons: Sequence[str]) -> list[EnvironmentResult]:
    """The environment of each --python given (hfpatch's own interpreter where none is), an interpreter that cannot
    be used with its error. Ctrl-C here, before any environment is acted on: the one being looked at says so, the
    others are not reached, and nothing was changed anywhere."""
    results = [EnvironmentResult(requested=given) for given in ([*pythons] if pythons else [None])]
    try:
        for result in results:
            _resolve(result)
    except KeyboardInterrupt:
        stopped = next((each for each in results if each.environment is None and each.error is None), results[0])
        stopped.environment = None
        stopped.interrupted = _not_looked_at(stopped)
        for other in results:
            other.not_reached = other is not stopped
    return results


def unconcerned(results: Sequence[EnvironmentResult]) -> catalog.Asleep:
    """The dormant candidates (catalog.select_awake) that concern no environment of the run: none imports the
    package, and none holds hfpatch's state of the entry or of its files. Where no environment is usable, none."""

    def asleep(candidates: Sequence[catalog.Dormant]) -> set[str]:
        usable = [result.environment for result in results if result.environment is not None]
        ids = {candidate.id for candidate in candidates} if usable else set()
        for environment in usable:
            absent = environment.unimported({candidate.package for candidate in candidates})
            roots = facts.roots_holding_state(environment.python)
            ids &= {
                candidate.id
                for candidate in candidates
                if candidate.package in absent
                and not any(facts.holds_state(root, candidate.id, candidate.files) for root in roots)
            }
        return ids

    return asleep


def run(
    command: Command,
    results: list[EnvironmentResult],
    patches: Sequence[Patch],
    options: Options,
    advice_for: Callable[[str | None], Suggest] = lambda given: plain,
    *,
    require_installed: bool = True,
    known: Collection[str] | None = None,
    dormant: Sequence[catalog.Dormant] = (),
) -> list[EnvironmentResult]:
    """Run `command` for every patch in every environment `resolve` gave (`results`, filled in and returned).
    `advice_for` spells the commands suggested in each environment (with its own --python: another one given may
    need nothing). With `require_installed`, an environment that has none of the patches' distributions is an
    error: the wrong interpreter, most likely. `dormant`: check's entries that concern no environment
    (select_awake), counted in each as not installed.

    Ctrl-C stops the run where it is: that environment says what it holds now (read as `check` reads it), and the
    environments after it are not reached.

    `known`: the id of every entry of the catalogs given; hfpatch's state of any other patch in an environment is
    reported, and reverted by revert, from that state alone (hfpatch.stranded). None: not looked for."""
    if any(result.interrupted or result.not_reached for result in results):
        return results  # stopped while the environments were looked at: nothing to run
    with facts.one_read_each():
        return _run(command, results, patches, options, advice_for, require_installed, known, tuple(dormant))


def _run(
    command: Command,
    results: list[EnvironmentResult],
    patches: Sequence[Patch],
    options: Options,
    advice_for: Callable[[str | None], Suggest],
    require_installed: bool,
    known: Collection[str] | None,
    dormant: tuple[catalog.Dormant, ...],
) -> list[EnvironmentResult]:
    for result in results:
        if result.environment is not None:
            result.dormant = dormant
    # A patch read as its header is read whole where its distribution is installed and the release has one of its
    # files, in every environment before any acts: a fault in an entry stops the run before anything is written.
    usable = [result.environment for result in results if result.environment is not None]
    for each in usable:
        each.locate_all(patches)
    concerned = {patch.id: [each for each in usable if _concerns(each, patch)] for patch in patches}
    by_digest = {
        (id(each), patch.id): _by_digest(each, patch) if command is Command.CHECK else None
        for patch in patches
        for each in concerned[patch.id]
    }
    wanted = {
        patch.id: catalog.whole_entry(patch)
        for patch in patches
        if any(by_digest[(id(each), patch.id)] is None for each in concerned[patch.id])
    }
    for index, result in enumerate(results):
        environment = result.environment
        if environment is None:
            continue
        result.suggest = advice_for(result.requested)
        chosen = [
            by_digest.get((id(environment), patch.id)) or wanted.get(patch.id, patch)
            if _has(environment, patch)
            else patch
            for patch in patches
        ]
        if known is not None:
            chosen += stranded.find(environment.python, known)
        try:
            _run_in(command, result, environment, chosen, options, require_installed)
        except KeyboardInterrupt:
            result.interrupted = _after_interrupt(command, result, options)
            for later in results[index + 1 :]:
                later.not_reached = True
            break
    return results


def _resolve(result: EnvironmentResult) -> None:
    try:
        result.environment = Environment(resolve_python(result.requested))
    except HfpatchError as error:
        result.error = str(error)


def _has(environment: Environment, patch: Patch) -> bool:
    """The environment imports the patch's package (or cannot tell: the engine reports that, with the whole entry)."""
    try:
        return environment.installation_of(patch) is not None
    except HfpatchError:
        return True


def _by_digest(environment: Environment, patch: Patch) -> Patch | None:
    """For `check`: the patch as its header and the index's known files, where those know every installed file of
    it by digest (catalog.by_digest); None: its whole entry is read."""
    try:
        installation = environment.installation_of(patch)
    except HfpatchError:
        return None
    digests = None if installation is None else facts.installed_digests(patch, installation)
    return None if digests is None else catalog.by_digest(patch, digests)


def _concerns(environment: Environment, patch: Patch) -> bool:
    """The patch's entry must be read whole there: its distribution is installed, and the release has one of its
    files or hfpatch keeps state there (or that cannot be told)."""
    try:
        installation = environment.installation_of(patch)
    except HfpatchError:
        return True
    return installation is not None and not facts.never_installed(patch, installation)


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


def _run_in(
    command: Command,
    result: EnvironmentResult,
    environment: Environment,
    patches: Sequence[Patch],
    options: Options,
    require_installed: bool,
) -> None:
    done: dict[str, engine.Outcome] = {}
    try:
        for patch in _interrupted_first(command, patches, environment):
            result.running = patch
            if stranded.is_stranded(patch):
                done[patch.id] = _stranded(command, patch, environment, options)
            else:
                done[patch.id] = engine.run(command, patch, environment, options)
            result.running = None
    finally:
        # In the patches' order, as far as the run came (all of them unless Ctrl-C stopped it): once, not once a
        # patch (a catalog of 500 entries made that a quarter of a million look-ups).
        result.outcomes = [done[each.id] for each in patches if each.id in done]
    if command in (Command.APPLY, Command.REVERT) and not options.dry_run:
        _tidy(environment)
    if require_installed and _found_nothing(result, environment):
        result.error = _nothing_installed(command.value, result, environment, patches, result.requested is not None)


def _stranded(command: Command, patch: Patch, environment: Environment, options: Options) -> engine.Outcome:
    """A patch known from its state alone: revert puts the originals back from that state and the backups (or says
    why not); every other command says what it holds and what to give, and never exits 0 for it."""
    files = tuple(file.file for file in patch.files)
    if command is Command.REVERT:
        done = engine.run(command, patch, environment, options)
        return done._replace(notes=(*done.notes, reasons.Unlisted(patch.id, files, command.value)))
    done = engine.run(Command.CHECK, patch, environment, options)
    # A state another install left: the reinstall put the original back (the patch is dropped).
    stale = done.facts is not None and diagnose(done.facts).stale_state
    condition = Condition.DROPPED if stale else done.condition
    give = reasons.Unlisted(patch.id, files, command.value)
    if command is Command.APPLY and condition in NEEDS_WRITING:
        return done._replace(condition=condition, action=Action.REFUSED, exit_code=ExitCode.ERROR, message=give)
    code = max(done.exit_code, ExitCode.OK if command is Command.APPLY else ExitCode.ACTION_NEEDED)
    return done._replace(condition=condition, exit_code=code, message=give, advice=None)


def _tidy(environment: Environment) -> None:
    """Where the run left hfpatch nothing to keep (the last patch reverted, a stale state cleared), its lock and
    .hfpatch directory go as well: nothing of hfpatch stays behind `hfpatch revert`."""
    roots = {found.root for found in environment.installations}
    on_path = [Path(entry) for entry in environment.python.search_path if Path(entry).is_absolute()]
    roots |= {root for root in on_path if (root / state.STATE_DIR).is_dir()}  # an uninstalled package's cleared state
    for root in sorted(roots):
        state.tidy(root)


def _after_interrupt(command: Command, result: EnvironmentResult, options: Options) -> str:
    """Where an interrupted run stopped, and what the environment holds there now, as `check` says it: the crash
    guarantees hold, so the next plain apply or revert finishes or undoes whatever was half done."""
    environment = result.environment
    if environment is None:
        return _not_looked_at(result)
    where = f"in {environment.python.executable}"
    patch = result.running
    if patch is None:
        return f"{where} between two patches, none half done: `{result.suggest('check')}` says where each stands"
    if command in (Command.CHECK, Command.VERIFY):
        return f"{where} at {patch.id}; {command.value} changes nothing"
    try:
        now = engine.run(Command.CHECK, patch, environment, options)
    except KeyboardInterrupt:
        return f"{where} at {patch.id}, which may be half done: `{result.suggest('check')}` says where it stands"
    from hfpatch.render import words  # the words of what check says there

    return f"{where} at {patch.id}, now {now.condition.value}: {words(now.message, suggest=result.suggest)}"


def _not_looked_at(result: EnvironmentResult) -> str:
    return f"before {result.requested or 'its interpreter'} was looked at; nothing was changed there"


def _found_nothing(result: EnvironmentResult, environment: Environment) -> bool:
    """None of the patches' distributions is installed, and nothing else was done: the wrong interpreter."""
    cleared = any(outcome.action is Action.CLEARED for outcome in result.outcomes)
    return bool(result.outcomes or result.dormant) and environment.found_nothing and not cleared


def _nothing_installed(
    command: str, result: EnvironmentResult, environment: Environment, patches: Sequence[Patch], given: bool
) -> str:
    distributions = [*(patch.distribution for patch in patches), *(each.distribution for each in result.dormant)]
    names = ", ".join(sorted(set(distributions)))
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


def suggestion(
    pythons: Sequence[str], patch_ids: Sequence[str], catalogs: Sequence[str], chosen: Sequence[str] = ()
) -> Suggest:
    """The command to suggest, with the options the user gave (`chosen`: --config FILE or --no-config), so that
    following it acts on the same thing."""

    def suggest(command: str) -> str:
        words = ["hfpatch", command]
        for option, values in (("--python", pythons), ("--patch", patch_ids), ("--catalog", catalogs)):
            for value in values:
                words += [option, value]
        return shlex.join([*words, *chosen])

    return suggest


def exit_code(results: Sequence[EnvironmentResult]) -> ExitCode:
    return max((result.exit_code for result in results), default=ExitCode.OK)
