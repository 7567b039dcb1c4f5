"""The release matrix (tests/releases.py's PROOF) against the entries it proves: every built-in patch is proven on
each pin its entry names and on the releases the rule of its row names, each a release its entry was read from.
Fast: it reads the entries, installs nothing."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from packaging.version import Version
from releases import PINNED_DISTRIBUTION, PINS, PROBE_NEEDS, PROOF, PROOF_BEYOND_PINS, PROOF_BY_LINE, TORCH

from hfpatch import advisory, catalog, entry
from hfpatch.entry import Patch, Verdict

PATCHES = [entry.load(directory) for directory in catalog.entry_dirs([catalog.builtin_catalog()]).values()]


def _named(patch: Patch) -> dict[str, Verdict | None]:
    """Every release the entry names, with its verdict: needs-patch where any of its files needs the patch."""
    verdicts: dict[str, Verdict | None] = {}
    for file in patch.files:
        for known in file.known_files:
            for release in filter(lambda release: _read_from(patch, release), known.releases):
                if verdicts.get(release) is not Verdict.NEEDS_PATCH:
                    verdicts[release] = known.verdict
    return verdicts


def _read_from(patch: Patch, release: str) -> bool:
    """A release the entry was written from (the others' files are known only so that check need not parse them)."""
    if patch.releases_read is None:
        return True
    oldest, newest = (Version(each) for each in patch.releases_read)
    return oldest <= Version(release) <= newest


def test_every_built_in_patch_is_proven_and_only_those() -> None:
    assert sorted(PROOF) == sorted(patch.id for patch in PATCHES)
    assert not set(PROOF_BY_LINE) & set(PROOF_BEYOND_PINS)
    assert set(PROOF_BY_LINE) | set(PROOF_BEYOND_PINS) | set(PROBE_NEEDS) <= set(PROOF)


@pytest.mark.parametrize("patch", PATCHES, ids=lambda patch: patch.id)
def test_a_patch_is_proven_where_the_rule_says(patch: Patch) -> None:
    distribution, proven = PROOF[patch.id]
    assert distribution == patch.distribution
    assert patch.probe is not None, f"{patch.id} has no probe: the matrix could prove nothing"
    named = _named(patch)
    assert set(proven) <= set(named), f"{patch.id} is proven on releases its entry does not name"
    pins = {pin for pin in PINS if pin in named} if distribution == PINNED_DISTRIBUTION else set()
    assert pins <= set(proven), f"{patch.id} is not proven on every pin its entry names"
    needing = sorted((Version(release) for release, verdict in named.items() if verdict is Verdict.NEEDS_PATCH))
    if patch.id in PROOF_BY_LINE:
        assert set(PROOF_BY_LINE[patch.id][1]) == _by_line(patch, named, needing)
    elif any(named[pin] is Verdict.NEEDS_PATCH for pin in pins):
        assert patch.id not in PROOF_BEYOND_PINS, f"{patch.id} needs the patch on a pin: it is proven there alone"
    else:  # no pin needs it: the newest release that does, so that the probe is seen to find the hole
        rows = PROOF_BEYOND_PINS.get(patch.id, ("", []))[1]
        assert rows[-1:] == [str(needing[-1])], (
            f"{patch.id} needs the patch on no pin: PROOF_BEYOND_PINS names the newest release it needs it on"
        )
        fitted = {
            form.releases[-1]
            for file in patch.files
            for target in file.targets
            for form in target.forms
            if form.fixed_text is not None and form.releases
        }
        assert set(rows[:-1]) <= fitted, (
            f"{patch.id}: PROOF_BEYOND_PINS names, beside the newest release that needs it, only the newest release "
            "of a form with a fixed text of its own"
        )


def _by_line(patch: Patch, named: dict[str, Verdict | None], needing: list[Version]) -> set[str]:
    """The rule of the entries before the pins: the newest release of each minor line that needs the patch, the
    first with the fix, the newest release before the first that needs it."""
    newest_of_line: dict[tuple[int, int], Version] = defaultdict(lambda: Version("0"))
    for version in needing:
        line = (version.major, version.minor)
        newest_of_line[line] = max(newest_of_line[line], version)
    expected = {str(version) for version in newest_of_line.values()}
    if patch.fixed_in is not None and patch.fixed_in in named:
        expected.add(patch.fixed_in)
    before = [Version(release) for release, verdict in named.items() if verdict is not Verdict.NEEDS_PATCH]
    left_alone = [version for version in before if needing and version < needing[0]]
    if left_alone:
        expected.add(str(max(left_alone)))
    return expected


def test_what_probes_need_installs_in_one_session() -> None:
    """release_torch installs every patch's needs at once: torch is the build this machine holds."""
    for needs in PROBE_NEEDS.values():
        assert TORCH in needs


def _table_rows(heading: str, first_cell: str) -> dict[str, list[str]]:
    """A table of the README's section under `heading`, by its first cell (matched by `first_cell`): the cells after."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        found = re.fullmatch(rf"\| {first_cell} \|(.*)\|", line)
        if found:
            rows[found.group(1)] = [cell.strip() for cell in found.group(2).split(" | ")]
    return rows


def _readme_rows() -> dict[str, list[str]]:
    """The README's "Do I need it" table, by patch id."""
    return _table_rows("## Do I need it", r"`([a-z0-9_.-]+)`")


def test_the_readme_says_of_every_built_in_patch_what_its_entry_says() -> None:
    """Who needs each patch, where upstream fixed it and which advisories it closes, as the entry (read off the
    wheels) has it: the table is the first thing a user reads, so it cannot drift from the catalog."""
    rows = _readme_rows()
    assert sorted(rows) == sorted(patch.id for patch in PATCHES)
    for patch in PATCHES:
        _upstream, releases, fixed_in, _what, advisories = rows[patch.id]
        needing = sorted(
            (Version(release) for release, verdict in _named(patch).items() if verdict is Verdict.NEEDS_PATCH)
        )
        assert releases == f"{patch.distribution} {needing[0]} to {needing[-1]}", patch.id
        assert fixed_in == (patch.fixed_in or "none yet"), patch.id
        assert advisories == ", ".join(patch.advisories), patch.id


def _advisory_rows() -> dict[str, list[str]]:
    """The README's table of advisories, by primary id."""
    return _table_rows("### Security advisories, one row each", r"((?:CVE|GHSA|PYSEC)-[A-Za-z0-9-]+)")


def test_the_readme_names_every_advisory_of_the_register_as_its_record_says() -> None:
    """A scanner's user looks an id up in this table: every record is in it, with its ids, the range the advisories
    list, where upstream fixed it and the entries that carry the fix, as the record has them."""
    register = advisory.load([catalog.builtin_catalog()])
    rows = _advisory_rows()
    assert sorted(rows) == sorted(record.primary for record in register.records)
    for record in register.records:
        also, distribution, listed, fixed_in, carried, partly = rows[record.primary]
        assert also == (", ".join(record.aliases) or "-"), record.primary
        assert distribution == record.distribution, record.primary
        assert listed == ("every release" if record.listed == "" else (record.listed or "").replace(",", ", "))
        packaging = " (files no longer shipped)" if record.fix is advisory.Fix.PACKAGING else ""
        assert fixed_in == (record.fixed_in or "none yet") + packaging, record.primary
        assert carried == (", ".join(f"`{name}`" for name in record.entries) or "none"), record.primary
        assert partly == (", ".join(f"`{name}`" for name in record.partial_entries) or "none"), record.primary


def test_every_advisory_a_built_in_entry_names_has_a_record() -> None:
    """So that the table above is whole: no entry closes an advisory the register does not know."""
    register = advisory.load([catalog.builtin_catalog()])
    for patch in PATCHES:
        for name in patch.advisories:
            record = register.naming(name)
            assert record is not None, f"{patch.id} names {name}, which no record of the register has"
            assert patch.id in record.entries + record.partial_entries, (patch.id, name)
