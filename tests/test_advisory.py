"""The advisory register, in process: where an advisory stands (advisory.judge, a pure function) for every status and
reason, over the golden records in tests/golden/advisories/; the records' validation (one line naming the file and
the key); and the built-in register itself.

The code decides: a status follows an entry's condition, never a version alone; the range the advisories list
(`listed`, or `affected` where the wheels show the code elsewhere) decides only whether an advisory that no entry
speaks for is named at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hfpatch import advisory, catalog, entry
from hfpatch.advisory import Finding, Reason, Status
from hfpatch.diagnosis import Condition
from hfpatch.errors import CatalogError

GOLDEN = Path(__file__).parent / "golden" / "advisories"

TWO = "CVE-2099-0001"  # source fix; entries fix-a, fix-b; listed <2.0; fixed in 2.0
HALF = "CVE-2099-0002"  # source fix; partial entry half; listed <2.0
NONE = "CVE-2099-0003"  # no fix; listed every release, affected >=1.0, a mitigation
MOVER = "CVE-2099-0004"  # packaging; entry mover; files convert_old.py, convert_older.py
SCRIPT = "PYSEC-2099-5"  # no fix; files scripts/convert.py
OLD, SCRIPTS = "toypkg/convert_old.py", "toypkg/scripts/convert.py"

C = Condition


def record(name: str) -> advisory.Record:
    return advisory.read(GOLDEN / f"{name}.json")


def found(*findings: tuple[str, Condition] | tuple[str, Condition, bool]) -> dict[str, Finding]:
    return {each[0]: Finding(*each) for each in findings}


# (record, what its entries found, the release's version, its installed files) -> (status, reason), or None: not named
CASES = [
    # An entry that carries the whole fix decides by its condition, whatever the range says.
    pytest.param(TWO, found(("fix-a", C.APPLIED)), "1.0", (), (Status.FIXED, Reason.PATCH_APPLIED), id="applied"),
    pytest.param(
        TWO, found(("fix-a", C.FIXED_UPSTREAM)), "2.1", (), (Status.FIXED, Reason.RELEASE_HAS_FIX), id="fixed-upstream"
    ),
    pytest.param(
        TWO, found(("fix-a", C.FIXED_OTHERWISE)), "1.0", (), (Status.FIXED, Reason.CODE_HAS_FIX), id="fixed-otherwise"
    ),
    pytest.param(TWO, found(("fix-a", C.NEEDS_PATCH)), "1.0", (), (Status.OPEN, Reason.NOT_APPLIED), id="needs-patch"),
    pytest.param(TWO, found(("fix-a", C.DROPPED)), "1.0", (), (Status.OPEN, Reason.NOT_APPLIED), id="dropped"),
    pytest.param(TWO, found(("fix-a", C.INCOMPLETE)), "1.0", (), (Status.OPEN, Reason.NOT_APPLIED), id="incomplete"),
    pytest.param(
        TWO,
        found(("fix-a", C.NEEDS_PATCH)),
        "2.5",
        (),
        (Status.OPEN, Reason.NOT_APPLIED),
        id="the-code-has-the-hole-in-a-release-the-advisories-do-not-list",
    ),
    pytest.param(
        TWO,
        found(("fix-a", C.NEEDS_PATCH), ("fix-b", C.APPLIED)),
        "1.0",
        (),
        (Status.OPEN, Reason.NOT_APPLIED),
        id="one-entry-applied-another-needed",
    ),
    pytest.param(
        TWO, found(("fix-a", C.UNRECOGNISED)), "1.0", (), (Status.UNKNOWN, Reason.CODE_NOT_KNOWN), id="unrecognised"
    ),
    pytest.param(TWO, found(("fix-a", C.EDITED)), "1.0", (), (Status.UNKNOWN, Reason.CODE_NOT_KNOWN), id="edited"),
    pytest.param(TWO, found(("fix-a", C.ERROR)), "1.0", (), (Status.UNKNOWN, Reason.CODE_NOT_KNOWN), id="error"),
    pytest.param(
        TWO,
        found(("fix-a", C.APPLIED), ("fix-b", C.UNRECOGNISED)),
        "1.0",
        (),
        (Status.UNKNOWN, Reason.CODE_NOT_KNOWN),
        id="applied-beside-unknown-code-is-unknown",
    ),
    pytest.param(
        TWO,
        found(("fix-a", C.NOT_APPLICABLE, True)),
        "1.0",
        (),
        (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT),
        id="targets-absent-in-a-listed-release",
    ),
    pytest.param(
        TWO,
        found(("fix-a", C.NOT_COVERED), ("fix-b", C.NOT_APPLICABLE, True)),
        "1.0",
        (),
        (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT),
        id="one-entry-silent-the-other-finds-no-code",
    ),
    # No entry speaks for the release: the range decides whether it is named.
    pytest.param(
        TWO,
        found(("fix-a", C.NOT_APPLICABLE)),
        "1.0",
        (),
        (Status.OPEN, Reason.NOT_COVERED),
        id="another-form-in-a-listed-release",
    ),
    pytest.param(TWO, found(("fix-a", C.NOT_APPLICABLE)), "2.5", (), None, id="another-form-unlisted"),
    pytest.param(TWO, found(("fix-a", C.NOT_COVERED)), "1.0", (), (Status.OPEN, Reason.NOT_COVERED), id="not-covered"),
    pytest.param(TWO, found(("fix-a", C.NOT_COVERED)), "3.0", (), None, id="not-covered-unlisted"),
    pytest.param(TWO, {}, "1.5rc1", (), (Status.OPEN, Reason.NOT_COVERED), id="a-listed-pre-release"),
    pytest.param(TWO, {}, None, (), (Status.UNKNOWN, Reason.VERSION_NOT_KNOWN), id="no-version-metadata"),
    pytest.param(TWO, {}, "not a version", (), (Status.UNKNOWN, Reason.VERSION_NOT_KNOWN), id="version-not-pep440"),
    # An entry that carries part of the fix never makes it fixed.
    pytest.param(HALF, found(("half", C.APPLIED)), "1.0", (), (Status.OPEN, Reason.PARTLY_MITIGATED), id="partial"),
    pytest.param(
        HALF,
        found(("half", C.APPLIED)),
        "2.5",
        (),
        (Status.OPEN, Reason.PARTLY_MITIGATED),
        id="partial-applied-in-an-unlisted-release",
    ),
    pytest.param(
        HALF, found(("half", C.NEEDS_PATCH)), "1.0", (), (Status.OPEN, Reason.NOT_COVERED), id="partial-not-applied"
    ),
    pytest.param(
        HALF, found(("half", C.UNRECOGNISED)), "1.0", (), (Status.UNKNOWN, Reason.CODE_NOT_KNOWN), id="partial-unknown"
    ),
    pytest.param(HALF, found(("half", C.FIXED_UPSTREAM)), "2.1", (), None, id="partial-fixed-upstream-unlisted"),
    pytest.param(
        HALF,
        found(("half", C.FIXED_OTHERWISE)),
        "1.0",
        (),
        (Status.OPEN, Reason.NOT_COVERED),
        id="partial-fixed-by-hand-is-not-the-whole-fix",
    ),
    # No fix upstream: `affected` (the wheels) names it where `listed` is wider.
    pytest.param(NONE, {}, "1.5", (), (Status.OPEN, Reason.NO_UPSTREAM_FIX), id="no-upstream-fix"),
    pytest.param(
        NONE,
        {},
        "0.9",
        (),
        (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT),
        id="listed-but-the-wheels-have-no-code-is-not-affected",
    ),
    pytest.param(NONE, {}, None, (), (Status.UNKNOWN, Reason.VERSION_NOT_KNOWN), id="no-upstream-fix-no-version"),
    # Files: none installed is not affected, an entry that moved them aside applied is fixed.
    pytest.param(MOVER, found(("mover", C.APPLIED)), "1.0", (), (Status.FIXED, Reason.PATCH_APPLIED), id="moved-aside"),
    pytest.param(
        MOVER,
        found(("mover", C.NEEDS_PATCH)),
        "1.0",
        (OLD,),
        (Status.OPEN, Reason.NOT_APPLIED),
        id="scripts-installed-not-moved",
    ),
    pytest.param(
        MOVER,
        found(("mover", C.NOT_APPLICABLE, True)),
        "2.0",
        (),
        (Status.NOT_AFFECTED, Reason.COMPONENT_NOT_PRESENT),
        id="scripts-not-shipped",
    ),
    pytest.param(MOVER, {}, "1.0", (OLD,), (Status.OPEN, Reason.NOT_COVERED), id="scripts-no-entry-speaks"),
    pytest.param(SCRIPT, {}, "1.0", (), (Status.NOT_AFFECTED, Reason.COMPONENT_NOT_PRESENT), id="script-never-shipped"),
    pytest.param(SCRIPT, {}, "1.0", (SCRIPTS,), (Status.OPEN, Reason.NO_UPSTREAM_FIX), id="script-shipped-no-fix"),
]


@pytest.mark.parametrize(("name", "findings", "version", "installed", "expected"), CASES)
def test_where_an_advisory_stands(
    name: str,
    findings: dict[str, Finding],
    version: str | None,
    installed: tuple[str, ...],
    expected: tuple[Status, Reason] | None,
) -> None:
    judged = advisory.judge(record(name), findings, version, installed)
    assert (None if judged is None else (judged.status, judged.reason)) == expected
    if judged is not None:
        assert judged.files == installed
        assert {finding.entry for finding in (*judged.entries, *judged.partial)} <= set(findings)


def test_every_status_and_reason_has_a_case() -> None:
    covered: set[tuple[Status, Reason]] = {case.values[4] for case in CASES if case.values[4] is not None}  # type: ignore[misc]
    assert {status for status, _ in covered} == set(Status)
    assert {reason for _, reason in covered} == set(Reason)


def test_the_findings_that_decide_are_named() -> None:
    judged = advisory.judge(record(TWO), found(("fix-a", C.NEEDS_PATCH), ("fix-b", C.APPLIED)), "1.0")
    assert judged is not None and [finding.entry for finding in judged.entries] == ["fix-a"]
    mitigating = advisory.judge(record(HALF), found(("half", C.NEEDS_PATCH)), "1.0")
    assert mitigating is not None and [finding.entry for finding in mitigating.partial] == ["half"]


# TWO as the wheels might read: the code only from 1.0, though the advisories list every release before 2.0.
FROM_1 = [
    pytest.param({}, "0.5", (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT), id="listed-before-the-code"),
    pytest.param(found(("fix-a", C.NOT_APPLICABLE)), "0.5", (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT), id="form"),
    pytest.param(found(("fix-a", C.NOT_COVERED)), "0.5", (Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT), id="older"),
    pytest.param(found(("fix-a", C.NEEDS_PATCH)), "0.5", (Status.OPEN, Reason.NOT_APPLIED), id="the-code-decides"),
    pytest.param(found(("fix-a", C.APPLIED)), "0.5", (Status.FIXED, Reason.PATCH_APPLIED), id="applied-decides"),
    pytest.param(found(("fix-a", C.NOT_COVERED)), "1.5", (Status.OPEN, Reason.NOT_COVERED), id="with-the-code"),
    pytest.param({}, "2.5", None, id="neither-listed-nor-affected"),
    pytest.param({}, None, (Status.UNKNOWN, Reason.VERSION_NOT_KNOWN), id="no-version"),
]


@pytest.mark.parametrize(("findings", "version", "expected"), FROM_1)
def test_a_listed_release_without_the_code_is_not_affected(
    findings: dict[str, Finding], version: str | None, expected: tuple[Status, Reason] | None
) -> None:
    """Where no entry speaks for a release the advisories list, `affected` (read off the wheels) decides: outside
    it the vulnerable code is not in the release, which is what OpenVEX's vulnerable_code_not_present says."""
    judged = advisory.judge(record(TWO)._replace(affected=">=1.0,<2.0"), findings, version)
    assert (None if judged is None else (judged.status, judged.reason)) == expected
    if judged is not None and judged.status is Status.NOT_AFFECTED:
        assert judged.listed is True and judged.entries == ()


@pytest.mark.parametrize(
    ("condition", "version", "expected"),
    [
        pytest.param(C.APPLIED, "1.0", (Status.FIXED, Reason.PATCH_APPLIED), id="applied"),
        pytest.param(C.NEEDS_PATCH, "1.0", (Status.OPEN, Reason.NOT_APPLIED), id="needs-patch"),
        pytest.param(C.FIXED_UPSTREAM, "2.0", (Status.FIXED, Reason.RELEASE_HAS_FIX), id="fixed-upstream"),
        pytest.param(C.NOT_COVERED, "0.1", None, id="not-covered: no range, nothing to say"),
        pytest.param(C.NOT_APPLICABLE, "0.1", None, id="another form: nothing to say"),
    ],
)
def test_an_entry_s_own_advisories_without_a_record(
    condition: Condition, version: str, expected: tuple[Status, Reason] | None
) -> None:
    own = advisory.of_entry("toypkg-1", "toypkg", "greet(None) fails", "2.0", ["CVE-2026-0001"])
    judged = advisory.judge(own, found(("toypkg-1", condition)), version)
    assert (None if judged is None else (judged.status, judged.reason)) == expected
    if judged is not None:
        assert judged.listed is None  # pip-audit's view of the release is not known


@pytest.mark.parametrize(
    ("specifiers", "version", "expected"),
    [
        ("", "0.0.1", True),
        ("<4.51.0", "4.50.3", True),
        ("<4.51.0", "4.51.0", False),
        ("<4.51.0", "4.51.0rc1", True),
        (">=4.49.0,<4.51.0", "4.48.2", False),
        ("==4.57.*", "4.57.6", True),
        ("<=1.14.0", "1.15.0", False),
        ("<=1.14", "1.14.0", True),  # plain releases: trailing zeros do not count
        ("<1.14.0", "1.14", False),
        (">=4.49.0,!=4.50", "4.50.0", False),
        ("==4.50.0", "4.50", True),
        (">4.9.0", "4.10.0", True),  # number by number, not text
        (">=4.49.0", "4.49.0.post1", True),  # packaging's order, past plain numbers
        (">=4.49.0", "4.49.0.dev1", False),
        ("~=4.49.0", "4.49.7", True),
        ("<5.0.0rc3", "4.57.6", True),  # a pre-release bound
        ("<5.0.0rc3", "5.0.0", False),
        ("<5.0.0rc3", "5.0.0rc2", True),
        ("<5.0.0rc3", "5.0.0b9", True),
        ("<5.0.0rc3", "5.0.0rc3", False),
        (">=5.0.0a1", "5.0.0-alpha.1", True),  # another spelling of it: packaging's
        ("<4.51.0", "not-a-version", None),
        ("<4.51.0", None, None),
        (None, "1.0", None),
    ],
)
def test_a_range_holds_a_release(specifiers: str | None, version: str | None, expected: bool | None) -> None:
    assert advisory.within(specifiers, version) is expected


# ------------------------------------------------------------------------------------------------ the format


def _golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _write(directory: Path, data: object, name: str = TWO) -> Path:
    path = directory / "advisories" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


REFUSALS = [
    pytest.param("schema", 2, "schema must be 1, not 2 (a newer hfpatch wrote it? upgrade hfpatch)", id="newer-schema"),
    pytest.param("schema", "1", "schema must be 1, not '1'", id="schema-a-string"),
    pytest.param("Entries", [], "it has an unknown key 'Entries'", id="unknown-key"),
    pytest.param("about", None, "missing 'about'", id="missing-key"),
    pytest.param("ids", [], "ids names no advisory", id="no-ids"),
    pytest.param("ids", ["CVE-2099-0001", "CVE-26-1"], "ids lists 'CVE-26-1', which is no CVE", id="not-an-id"),
    pytest.param("ids", "CVE-2099-0001", "ids must be a list of strings", id="ids-a-string"),
    pytest.param("ids", ["CVE-2099-0001", "CVE-2099-0001"], "ids names an advisory twice", id="id-twice"),
    pytest.param(
        "ids", ["GHSA-2222-3333-4444", "CVE-2099-0001"], "ids must start with the primary id, CVE-2099-0001", id="order"
    ),
    pytest.param("ids", ["CVE-2099-0009"], "the record of CVE-2099-0009 must be named CVE-2099-0009.json", id="name"),
    pytest.param("fix", "patch", "fix 'patch' is none of 'source', 'packaging', 'none'", id="fix-unknown"),
    pytest.param("fix", "none", "fix is \"none\" but fixed_in is '2.0'", id="no-fix-but-fixed-in"),
    pytest.param("fixed_in", "two", "fixed_in 'two' is not a version (PEP 440) or null", id="fixed-in"),
    pytest.param("listed", "<4.51", None, id="listed-a-version-prefix-is-fine"),
    pytest.param("listed", "before 4.51", "listed 'before 4.51' is not a PEP 440 specifier set", id="listed-words"),
    pytest.param("listed", "<4.51.*", "listed '<4.51.*' is not a PEP 440 specifier set", id="listed-wildcard"),
    pytest.param("listed", None, 'listed must be a PEP 440 specifier set such as "<4.51.0"', id="listed-null"),
    pytest.param("affected", ">=x", "affected '>=x' is not a PEP 440 specifier set", id="affected"),
    pytest.param("entries", ["Fix A"], "entries lists 'Fix A', which is no entry's id", id="entry-id"),
    pytest.param("entries", ["fix-a", "fix-a"], "entries names an entry twice", id="entry-twice"),
    pytest.param("partial_entries", ["fix-a"], "'fix-a' is in both entries and partial_entries", id="both"),
    pytest.param("files", ["/etc/passwd"], "files lists '/etc/passwd', which is not a path relative", id="absolute"),
    pytest.param("files", ["toypkg/../x.py"], "files lists 'toypkg/../x.py', which is not a path", id="dot-dot"),
    pytest.param("upstream", ["github.com/x"], "upstream lists 'github.com/x', which is not a URL", id="url"),
    pytest.param("title", "two\nlines", "title must be a non-empty string of one line", id="title"),
    pytest.param("mitigation", "", "mitigation must be a non-empty string of one line", id="mitigation-empty"),
    pytest.param("distribution", "my dist", "distribution 'my dist' is not a distribution's name", id="distribution"),
    pytest.param("package", "my.pkg", "package 'my.pkg' is not a top-level package's name", id="package"),
]


@pytest.mark.parametrize(("key", "value", "message"), REFUSALS)
def test_a_bad_record_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, key: str, value: object, message: str | None
) -> None:
    data = _golden(TWO)
    if value is None and key == "about":
        del data[key]
    else:
        data[key] = value
    path = _write(tmp_path, data)
    if message is None:
        assert advisory.load([tmp_path]).records[0].listed == value
        return
    with pytest.raises(CatalogError) as refused:
        advisory.load([tmp_path])
    text = str(refused.value)
    assert text.startswith(f"{path} is not a valid advisory record: ") and message in text, text
    assert "\n" not in text


def test_packaging_names_its_files(tmp_path: Path) -> None:
    data = _golden(MOVER) | {"files": []}
    path = _write(tmp_path, data, MOVER)
    with pytest.raises(CatalogError, match='fix is "packaging" but files names none') as refused:
        advisory.load([tmp_path])
    assert str(refused.value).startswith(str(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{", "is not valid JSON", id="not-json"),
        pytest.param("[1]", "is not a valid advisory record: it holds a JSON list, not an object", id="a-list"),
        pytest.param("\udcff", "is not valid JSON", id="not-utf8"),
    ],
)
def test_a_file_that_is_no_record_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "advisories" / f"{TWO}.json"
    path.parent.mkdir()
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(CatalogError, match=message):
        advisory.load([tmp_path])


def test_one_advisory_in_two_records_is_refused_naming_both(tmp_path: Path) -> None:
    first = _write(tmp_path / "one", _golden(TWO))
    second = _write(tmp_path / "two", _golden(TWO) | {"ids": [TWO]})
    with pytest.raises(CatalogError) as refused:
        advisory.load([tmp_path / "one", tmp_path / "two"])
    assert str(refused.value) == f"{TWO} has two advisory records, {first} and {second}; keep one of them."


def test_a_catalog_without_a_register_has_none(tmp_path: Path) -> None:
    assert advisory.load([tmp_path]).records == ()
    (tmp_path / "advisories").mkdir()
    (tmp_path / "advisories" / "README.md").write_text("notes are not records\n")
    assert advisory.load([tmp_path]).records == ()


def test_the_golden_records_are_what_the_table_reads() -> None:
    names = sorted(path.stem for path in GOLDEN.glob("*.json"))
    assert names == sorted([TWO, HALF, NONE, MOVER, SCRIPT])
    loaded = advisory.load([GOLDEN.parent])
    assert [each.primary for each in loaded.records] == names


# ------------------------------------------------------------------------------------------- the built-in register


def test_the_built_in_register_reads_and_names_only_entries_that_exist() -> None:
    """Every record is valid; every entry it names is in the built-in catalog, of the record's distribution; every
    entry that names an advisory with a record is listed by that record (the rest make records of their own)."""
    register = advisory.load([catalog.builtin_catalog()])
    assert register.records, "the built-in register is empty"
    entries = {
        name: entry.load(path, whole=False) for name, path in catalog.entry_dirs([catalog.builtin_catalog()]).items()
    }
    for each in register.records:
        for name in (*each.entries, *each.partial_entries):
            assert name in entries, f"{each.path} names {name}, which the built-in catalog lacks"
            assert advisory.canonical(entries[name].distribution) == advisory.canonical(each.distribution)
    for name, patch in entries.items():
        for advisory_id in patch.advisories:
            named = register.naming(advisory_id)
            assert named is None or name in (*named.entries, *named.partial_entries), (name, advisory_id)


def test_a_record_says_why_no_fix_is_carried() -> None:
    """A record with no entry says where its ids and facts come from, and what a user can do where no fix exists."""
    for each in advisory.load([catalog.builtin_catalog()]).records:
        assert each.about, each.path
        if each.fix is advisory.Fix.NONE and not each.files:
            assert each.mitigation, f"{each.path}: no fix upstream and no mitigation"
