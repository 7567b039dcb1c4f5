"""Where each advisory the catalog knows stands in the environments `check` ran in: the facts read off the
environment (which distributions are installed, what each entry a record names found there, which of a record's
files are installed), then the register's pure judging (hfpatch.advisory) over them. Nothing is written.

An entry a record names that the command did not select is checked all the same, read-only: an advisory's status
needs every entry that may speak for the release.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from hfpatch import advisory, engine
from hfpatch.advisory import AdvisoryStatus, Finding, Record, Register, Status
from hfpatch.diagnosis import Condition
from hfpatch.entry import Patch, Shape
from hfpatch.environment import Environment, Installation
from hfpatch.errors import CatalogError, HfpatchError
from hfpatch.facts import Facts, FileFacts
from hfpatch.plan import Command, Options

if TYPE_CHECKING:
    from hfpatch.commands import EnvironmentResult

# The command that applies the given entries in an environment (none given: the patches the user selected), spelt
# with the options the user gave (--python, --catalog, --config).
ApplyCommand = Callable[[Sequence[str]], str]


class Audit(NamedTuple):
    """The advisories of one environment, each with its status, and how to spell what a user should run there."""

    statuses: tuple[AdvisoryStatus, ...]
    apply: ApplyCommand
    # The entries among the patches the command acted on: `hfpatch apply` as given applies those.
    selected: frozenset[str] = frozenset()

    def command_for(self, entries: Iterable[str]) -> str:
        wanted = list(dict.fromkeys(entries))
        return self.apply(() if set(wanted) <= self.selected else wanted)

    def of_patch(self, patch_id: str) -> Status | None:
        """The status of the advisories an entry names (the first one that is not fixed, where they differ)."""
        named = [
            status for status in self.statuses if patch_id in (*status.record.entries, *status.record.partial_entries)
        ]
        order = (Status.OPEN, Status.UNKNOWN, Status.FIXED, Status.NOT_AFFECTED)
        return next((state for state in order if any(status.status is state for status in named)), None)

    def open_by(self) -> frozenset[str]:
        """The entries by which an advisory is open here: each names it and is part of why, since it decided the
        status or no entry did (the release is one none of them covers). An entry beside the one that decided
        (another line of the code: transformers-cve-2026-4372-4.54 on 4.52.4) says nothing of it."""
        found: set[str] = set()
        for status in self.statuses:
            if status.status is not Status.OPEN:
                continue
            deciding = {finding.entry for finding in (*status.entries, *status.partial)}
            named = (*status.record.entries, *status.record.partial_entries)
            found.update(patch_id for patch_id in named if not deciding or patch_id in deciding)
        return frozenset(found)


def fill(
    results: Sequence[EnvironmentResult],
    register: Register,
    patches: Sequence[Patch],
    lookup: Callable[[str], Patch | None],
    spell: Callable[[str | None, Sequence[str]], str],
    *,
    explicit: bool,
) -> None:
    """Each usable environment's audit, on its result. `explicit`: the user named the patches (--patch), and only the
    advisories that name one of them are audited; otherwise every advisory of an installed distribution is."""
    selected = frozenset(patch.id for patch in patches)
    records = _records(register, patches, selected if explicit else None)
    for result in results:
        environment = result.environment
        if environment is None:
            continue
        outcomes = {outcome.patch.id: outcome for outcome in result.outcomes}
        given = result.requested

        def apply(entries: Sequence[str], given: str | None = given) -> str:
            return spell(given, entries)

        statuses = _judged(records, environment, outcomes, lookup)
        result.advisories = Audit(tuple(_ordered(statuses)), apply, selected)


def _records(register: Register, patches: Sequence[Patch], only: frozenset[str] | None) -> list[Record]:
    """The register's records and those the patches' own advisories make where it has none; `only`: those that name
    one of these entries."""
    records = list(register.records)
    for patch in patches:
        for advisory_id in patch.advisories:
            record = register.naming(advisory_id)
            if record is not None and patch.id not in (*record.entries, *record.partial_entries):
                raise CatalogError(
                    f"{patch.id} names {advisory_id}, whose record {record.path} lists it in neither entries nor "
                    "partial_entries; add it to one of them, or take the id out of the entry."
                )
        own = [advisory_id for advisory_id in patch.advisories if register.naming(advisory_id) is None]
        if own:
            records.append(advisory.of_entry(patch.id, patch.distribution, patch.title, patch.fixed_in, own))
    if only is None:
        return records
    return [record for record in records if only & {*record.entries, *record.partial_entries}]


def _judged(
    records: Sequence[Record],
    environment: Environment,
    outcomes: dict[str, engine.Outcome],
    lookup: Callable[[str], Patch | None],
) -> list[AdvisoryStatus]:
    statuses = []
    for record in records:
        named = [
            _outcome(name, record, environment, outcomes, lookup) for name in (*record.entries, *record.partial_entries)
        ]
        installation = next((found for found in map(_installation_of, named) if found is not None), None)
        if installation is None and not named:
            installation = _installation(environment, record)
        if installation is None:
            continue  # the distribution is not installed here: nothing of it to say
        findings = {outcome.patch.id: finding(outcome) for outcome in named}
        installed = [file for file in record.files if installation.path_of(file).is_file()]
        status = advisory.judge(record, findings, installation.version, installed)
        if status is not None:
            statuses.append(status)
    return statuses


def _outcome(
    name: str,
    record: Record,
    environment: Environment,
    outcomes: dict[str, engine.Outcome],
    lookup: Callable[[str], Patch | None],
) -> engine.Outcome:
    """What the entry found here: the command's own outcome, or else a read-only check of it (kept for the others)."""
    if name in outcomes:
        return outcomes[name]
    patch = lookup(name)
    if patch is None:
        raise CatalogError(f"{record.path} names the entry {name}, which no catalog given has.")
    if advisory.canonical(patch.distribution) != advisory.canonical(record.distribution):
        raise CatalogError(
            f"{record.path} is an advisory of {record.distribution}, but names {name}, an entry for "
            f"{patch.distribution}."
        )
    outcomes[name] = engine.run(Command.CHECK, patch, environment, Options(lookup=lookup))
    return outcomes[name]


def _installation_of(outcome: engine.Outcome) -> Installation | None:
    return None if outcome.facts is None else outcome.facts.installation


def _installation(environment: Environment, record: Record) -> Installation | None:
    """The distribution a record of no entry concerns, where the interpreter imports its top-level package."""
    try:
        return environment.installation(record.package, record.distribution, f"{record.package}/__init__.py")
    except HfpatchError:
        return None  # not a regular package of that name: not the distribution


def finding(outcome: engine.Outcome) -> Finding:
    condition = outcome.condition
    absent = condition is Condition.NOT_APPLICABLE and outcome.facts is not None and targets_absent(outcome.facts)
    return Finding(outcome.patch.id, condition, absent)


def targets_absent(facts: Facts) -> bool:
    """Every file of the entry lacks every statement its fix changes (the helpers a fix adds aside): the file is not
    installed, is a released file known to lack them, or has none of them. The code it fixes is not there."""
    return bool(facts.files) and all(_file_lacks_targets(file) for file in facts.files)


def _file_lacks_targets(file: FileFacts) -> bool:
    if file.missing:
        return True
    if file.source is None or file.source_sha256 is None:
        return False
    known = file.patch_file.known_file(file.source_sha256)
    if known is not None:
        return known.verdict is None and not known.code_unknown
    from hfpatch import classify, statements  # a file no digest knows: parsed, as the diagnosis parsed it

    targets = [target for target in file.patch_file.targets if target.shape is not Shape.INSERT]
    try:
        parsed = statements.parse(file.source, file.file)
    except HfpatchError:
        return False
    return bool(targets) and all(classify.unit_of(parsed, target) is None for target in targets)


_ORDER = {Status.OPEN: 0, Status.UNKNOWN: 1, Status.FIXED: 2, Status.NOT_AFFECTED: 3}


def _ordered(statuses: Iterable[AdvisoryStatus]) -> list[AdvisoryStatus]:
    """Open first, then unknown, fixed and not affected; each by distribution and id."""
    return sorted(
        statuses, key=lambda status: (_ORDER[status.status], status.record.distribution, status.record.primary)
    )
