"""The catalog as data: the built-in entry agrees with the golden texts, a faulty entry is refused naming its file,
and discovery reads the built-in catalog first and refuses ambiguity."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from hfpatch import catalog
from hfpatch.catalog import CATALOG_VARIABLE, Patch, Verdict
from hfpatch.errors import CatalogError

BUILTIN_ID = "transformers-46618"
GOLDEN = Path(__file__).parent / "golden" / BUILTIN_ID
# The golden file that holds each form's text.
GOLDEN_BY_VERDICT = {
    Verdict.NEEDS_PATCH: "two-argument-resolving.py",
    Verdict.NOT_APPLICABLE: "four-argument.py",
    Verdict.FIXED: "fixed.py",
}


def golden_text(name: str) -> str:
    """A golden file's text as the catalog digests it: without its final newline."""
    text = (GOLDEN / name).read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    return text[:-1]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def line_digests(text: str) -> tuple[str, ...]:
    return tuple(hashlib.sha256(line.encode("utf-8")).hexdigest()[:12] for line in text.split("\n"))


@pytest.fixture(scope="module")
def builtin() -> Patch:
    return catalog.load(catalog.builtin_catalog() / BUILTIN_ID)


# ------------------------------------------------------------------------------------------- the built-in entry


def test_the_builtin_catalog_is_patches_beside_a_checkout_and_inside_a_wheel() -> None:
    repository = Path(__file__).resolve().parent.parent
    package = Path(catalog.__file__).resolve().parent
    if package == repository / "hfpatch":  # run from the checkout
        assert catalog.builtin_catalog() == repository / "patches"
    else:  # an installed wheel: the checkout's patches/ ships as hfpatch/patches
        assert catalog.builtin_catalog() == package / "patches"
        shipped = sorted(path.relative_to(package / "patches") for path in (package / "patches").rglob("*.*"))
        assert shipped == sorted(
            path.relative_to(repository / "patches") for path in (repository / "patches").rglob("*.*")
        )
    assert BUILTIN_ID in catalog.entry_dirs([catalog.builtin_catalog()])


def test_the_builtin_entry_describes_transformers_46618(builtin: Patch) -> None:
    assert builtin.id == BUILTIN_ID
    assert builtin.distribution == "transformers"
    assert builtin.file == "transformers/dynamic_module_utils.py"
    assert builtin.package == "transformers"
    assert (builtin.fixed_in, builtin.first_defined_in) == ("5.13.0", "5.8.0")
    assert [target.name for target in builtin.targets] == ["_compute_local_source_files_hash"]
    assert builtin.probe is not None and builtin.probe.is_file()


@pytest.mark.parametrize(
    ("verdict", "golden"), [pytest.param(verdict, name, id=name) for verdict, name in GOLDEN_BY_VERDICT.items()]
)
def test_each_form_digest_is_that_of_its_golden_text(builtin: Patch, verdict: Verdict, golden: str) -> None:
    (target,) = builtin.targets
    (form,) = [form for form in target.forms if form.verdict is verdict]
    text = golden_text(golden)
    assert form.sha256 == sha256(text)
    assert form.lines == line_digests(text)
    assert target.form_of(sha256(text)) == form


def test_the_fixed_text_is_the_golden_fixed_text(builtin: Patch) -> None:
    (target,) = builtin.targets
    assert target.fixed_text == golden_text("fixed.py")
    assert target.fixed_sha256 == sha256(golden_text("fixed.py"))


def test_every_form_names_its_releases_and_the_not_applicable_one_says_why(builtin: Patch) -> None:
    (target,) = builtin.targets
    assert all(form.releases for form in target.forms)
    (not_applicable,) = [form for form in target.forms if form.verdict is Verdict.NOT_APPLICABLE]
    assert "modules_needed) where the fix has" in not_applicable.reason
    assert "would break its callers" in not_applicable.reason


def test_the_needs_patch_file_form_knows_the_file_it_becomes(builtin: Patch) -> None:
    (needing,) = [known for known in builtin.known_files if known.verdict is Verdict.NEEDS_PATCH]
    assert needing.patched_sha256 is not None
    fixed_files = {known.sha256 for known in builtin.known_files if known.verdict is Verdict.FIXED}
    assert needing.patched_sha256 in fixed_files
    assert any(known.verdict is None for known in builtin.known_files)  # a release from before the targets


# --------------------------------------------------------------------------------------------------- validation

ENTRY_ID = "team-1"
FIXED_TEXT = 'def greet(name):\n    return "Hello, " + (name or "world")\n'
HEADER = f"""\
schema = 1
id = "{ENTRY_ID}"
title = "greet(None) fails"
upstream = "example/team#1"
url = "https://example.invalid/team/pull/1"
distribution = "teampkg"
module = "teampkg.core"
file = "teampkg/core.py"
fixed_in = "2.0"
"""
TARGET = f"""
[[target]]
name = "greet"
fixed = "fixed/greet.py"

[[target.form]]
sha256 = "{"a" * 64}"
verdict = "needs-patch"
releases = ["1.0"]
"""
VALID = HEADER + TARGET


def write_entry(catalog_dir: Path, toml: str, entry_id: str = ENTRY_ID) -> Path:
    entry = catalog_dir / entry_id
    (entry / "fixed").mkdir(parents=True)
    (entry / "fixed" / "greet.py").write_text(FIXED_TEXT, encoding="utf-8")
    (entry / "patch.toml").write_text(toml, encoding="utf-8")
    return entry


def test_the_valid_entry_of_the_validation_table_loads(tmp_path: Path) -> None:
    """Each refusal below is then due to its one defect."""
    loaded = catalog.load(write_entry(tmp_path, VALID))
    assert loaded.id == ENTRY_ID
    assert loaded.targets[0].fixed_text == FIXED_TEXT.rstrip("\n")
    assert loaded.targets[0].forms[0].verdict is Verdict.NEEDS_PATCH


@pytest.mark.parametrize(
    ("defect", "old", "new", "says"),
    [
        pytest.param("bad TOML", "schema = 1", "schema = = 1", "not valid TOML", id="bad-toml"),
        pytest.param("schema 2", "schema = 1", "schema = 2", "schema must be 1", id="schema-2"),
        pytest.param("id", f'id = "{ENTRY_ID}"', 'id = "team-2"', "name its directory", id="id-not-its-directory"),
        pytest.param("id", f'id = "{ENTRY_ID}"', 'id = "Team 1"', "lowercase", id="id-not-lowercase"),
        pytest.param("file", 'file = "teampkg/core.py"', 'file = "../teampkg/core.py"', "relative", id="file-dotdot"),
        pytest.param("file", 'file = "teampkg/core.py"', 'file = "/teampkg/core.py"', "relative", id="file-absolute"),
        pytest.param("file", 'file = "teampkg/core.py"', 'file = "teampkg/core.pyc"', ".py", id="file-not-py"),
        pytest.param("fixed", 'fixed = "fixed/greet.py"', 'fixed = "fixed/nope.py"', "not a file", id="fixed-missing"),
        pytest.param(
            "fixed", 'fixed = "fixed/greet.py"', 'fixed = "../outside.py"', "not a file inside", id="fixed-escapes"
        ),
        pytest.param("fixed", 'fixed = "fixed/greet.py"\n', "", "missing 'fixed'", id="fixed-not-given"),
        pytest.param("verdict", 'verdict = "needs-patch"', 'verdict = "maybe"', "'maybe'", id="unknown-verdict"),
        pytest.param("sha256", f'sha256 = "{"a" * 64}"', 'sha256 = "ABC"', "not a sha256", id="bad-sha256"),
        pytest.param("sha256", f'sha256 = "{"a" * 64}"', f'sha256 = "{"A" * 64}"', "lowercase hex", id="upper-sha"),
        pytest.param("target", TARGET, "", "names no [[target]]", id="no-target"),
        pytest.param("target", TARGET, TARGET + TARGET, "named twice", id="duplicate-target"),
        pytest.param("name", 'name = "greet"', 'name = "a.b.c"', "Class.method", id="qualname-three-parts"),
        pytest.param("name", 'name = "greet"', 'name = "1greet"', "Class.method", id="qualname-digit"),
        pytest.param("releases", 'releases = ["1.0"]', 'releases = "1.0"', "releases must be a list", id="releases"),
        pytest.param("title", 'title = "greet(None) fails"', "title = 1", "title must be", id="title-not-string"),
        pytest.param("title", 'title = "greet(None) fails"\n', "", "missing 'title'", id="title-missing"),
        pytest.param("target", "[[target]]", "[target]", "array of tables", id="target-a-table"),
    ],
)
def test_a_faulty_entry_is_refused_naming_its_file(tmp_path: Path, defect: str, old: str, new: str, says: str) -> None:
    assert old in VALID, defect
    entry = write_entry(tmp_path, VALID.replace(old, new))
    (tmp_path / "outside.py").write_text(FIXED_TEXT, encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        catalog.load(entry)
    assert str(entry / "patch.toml") in str(raised.value)
    assert says in str(raised.value)


def test_an_entry_without_patch_toml_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"cannot read .*patch\.toml"):
        catalog.load(tmp_path / "nothing-here")


# ---------------------------------------------------------------------------------------------------- discovery


def test_without_the_variable_only_the_builtin_catalog_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CATALOG_VARIABLE, raising=False)
    assert catalog.catalog_dirs() == [catalog.builtin_catalog()]


def test_the_variable_and_then_the_given_catalogs_are_read_after_the_builtin_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, given = (tmp_path / name for name in ("first", "second", "given"))
    monkeypatch.setenv(CATALOG_VARIABLE, f"{first}::{second}")  # an empty part is skipped
    assert catalog.catalog_dirs([str(given)]) == [catalog.builtin_catalog(), first, second, given]


def test_team_entries_are_found_beside_the_builtin_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_variable = write_entry(tmp_path / "from-variable", VALID)
    given = write_entry(tmp_path / "given", VALID.replace(ENTRY_ID, "team-2"), "team-2")
    monkeypatch.setenv(CATALOG_VARIABLE, str(tmp_path / "from-variable"))
    found = catalog.entry_dirs(catalog.catalog_dirs([str(tmp_path / "given")]))
    builtin_ids = list(catalog.entry_dirs([catalog.builtin_catalog()]))
    assert BUILTIN_ID in builtin_ids
    assert list(found) == [*builtin_ids, ENTRY_ID, "team-2"]
    assert (found[ENTRY_ID], found["team-2"]) == (from_variable, given)
    assert catalog.load(found["team-2"]).id == "team-2"


@pytest.mark.parametrize(
    "clash", [pytest.param(ENTRY_ID, id="two-team-catalogs"), pytest.param(BUILTIN_ID, id="builtin")]
)
def test_an_id_in_two_catalogs_is_refused_naming_both_directories(tmp_path: Path, clash: str) -> None:
    first = tmp_path / "first"
    first_entry = write_entry(first, VALID)
    second_entry = write_entry(tmp_path / "second", VALID.replace(ENTRY_ID, clash), clash)
    earlier = first_entry if clash == ENTRY_ID else catalog.builtin_catalog() / BUILTIN_ID
    with pytest.raises(CatalogError) as raised:
        catalog.entry_dirs([catalog.builtin_catalog(), first, tmp_path / "second"])
    assert f"{earlier} and {second_entry}" in str(raised.value)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(lambda path: path.write_text("x"), "is not a directory", id="a-file"),
        pytest.param(lambda path: None, "does not exist", id="missing"),
        pytest.param(lambda path: path.mkdir(), "holds no patch", id="empty"),
        pytest.param(lambda path: (path / "entry").mkdir(parents=True), "holds no patch", id="no-patch-toml"),
    ],
)
def test_a_given_catalog_that_is_no_catalog_is_refused_naming_it(
    tmp_path: Path, make: Callable[[Path], object], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CATALOG_VARIABLE, raising=False)
    given = tmp_path / "given"
    make(given)
    with pytest.raises(CatalogError) as raised:
        catalog.entry_dirs(catalog.catalog_dirs([str(given)]))
    assert str(given) in str(raised.value)
    assert says in str(raised.value)
