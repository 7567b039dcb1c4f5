"""A file the fix adds (schema 5's file shape "add"): a module upstream created, which the fixed release's other files
import (huggingface_hub 1.12.2's inference/_providers/deepinfra.py, imported by its fixed `_providers/__init__.py`).
apply creates it with the entry's bytes, its RECORD line as pip writes it and bytecode as the package has; revert
deletes it, its bytecode and its RECORD line (RECORD byte for byte as it was); a file in its place with other bytes
is a user's, never overwritten.

    <site>/toyhub/providers/__init__.py     imports .alpha (1.0); also .deepinfra, listed in PROVIDERS (2.0)
    <site>/toyhub/providers/deepinfra.py    what 2.0 adds
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support import Site, line_in_record, make_venv, record_line, sha256, write_files

from hfpatch import entry, shapes, wheelrecord
from hfpatch.entry import FileShape, Verdict
from hfpatch.errors import CatalogError

PATCH_ID = "toyhub-deepinfra"
INIT = "toyhub/providers/__init__.py"
ADDED = "toyhub/providers/deepinfra.py"
ALPHA = b'"""Alpha."""\n\n\nclass Alpha:\n    name = "alpha"\n'
DEEPINFRA = b'"""DeepInfra, the provider 2.0 adds."""\n\n\nclass DeepInfra:\n    name = "deepinfra"\n'
BUGGY_PROVIDERS = 'PROVIDERS = {"alpha": Alpha}'
FIXED_PROVIDERS = 'PROVIDERS = {"alpha": Alpha, "deepinfra": DeepInfra}'
IMPORT = "from .deepinfra import DeepInfra"
BUGGY_INIT = f'"""Providers."""\n\nfrom .alpha import Alpha\n\n{BUGGY_PROVIDERS}\n'.encode()
FIXED_INIT = f'"""Providers."""\n\nfrom .alpha import Alpha\n{IMPORT}\n\n{FIXED_PROVIDERS}\n'.encode()


def entry_data(**changed: object) -> dict[str, object]:
    edited = {
        "module": "toyhub.providers",
        "file": INIT,
        "targets": [
            {
                "name": "from .deepinfra import",
                "shape": "insert",
                "fixed": "fixed/import.py",
                "after": "from .alpha import",
                "forms": [{"sha256": sha256(IMPORT), "verdict": "fixed", "releases": ["2.0"]}],
            },
            {
                "name": "PROVIDERS",
                "shape": "replace",
                "fixed": "fixed/PROVIDERS.py",
                "forms": [
                    {"sha256": sha256(BUGGY_PROVIDERS), "verdict": "needs-patch", "releases": ["1.0"]},
                    {"sha256": sha256(FIXED_PROVIDERS), "verdict": "fixed", "releases": ["2.0"]},
                ],
            },
        ],
    }
    added = {"module": "toyhub.providers.deepinfra", "file": ADDED, "shape": "add", "fixed": f"fixed/{ADDED}"}
    return {
        "schema": 5,
        "id": PATCH_ID,
        "title": "the deepinfra provider is missing",
        "upstream": "example/toyhub#12",
        "url": "https://example.invalid/toyhub/pull/12",
        "distribution": "toyhub",
        "fixed_in": "2.0",
        "files": [edited, added],
        **changed,
    }


def write_entry(catalog: Path, data: dict[str, object], added: bytes = DEEPINFRA) -> Path:
    directory = catalog / PATCH_ID
    (directory / "fixed" / ADDED).parent.mkdir(parents=True)
    (directory / "fixed" / "import.py").write_text(IMPORT + "\n", encoding="utf-8")
    (directory / "fixed" / "PROVIDERS.py").write_text(FIXED_PROVIDERS + "\n", encoding="utf-8")
    (directory / "fixed" / ADDED).write_bytes(added)
    (directory / "patch.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return directory


def release(version: str) -> dict[str, bytes]:
    shipped = {"toyhub/__init__.py": b'"""toyhub."""\n', "toyhub/providers/alpha.py": ALPHA}
    if version == "2.0":
        return {**shipped, INIT: FIXED_INIT, ADDED: DEEPINFRA}
    return {**shipped, INIT: BUGGY_INIT}


def site(where: Path, version: str = "1.0", extra: dict[str, bytes] | None = None) -> Site:
    root, catalog = where / "site", where / "catalog"
    dist_info = f"toyhub-{version}.dist-info"
    files = {**release(version), f"{dist_info}/METADATA": f"Name: toyhub\nVersion: {version}\n\n".encode()}
    write_files(root, files, dist_info)
    for relative, data in (extra or {}).items():  # not listed in RECORD: a file of the user's
        (root / relative).write_bytes(data)
    write_entry(catalog, entry_data())
    return Site(root, "toyhub", version, INIT, PATCH_ID, catalog=catalog)


# ------------------------------------------------------------------------------------------------- the entry


def test_an_added_file_reads_back_the_same_as_it_renders(tmp_path: Path) -> None:
    directory = write_entry(tmp_path, entry_data())
    patch = entry.load(directory)
    added = patch.files[1]
    assert (added.shape, added.targets, added.known_files, added.added) == (FileShape.ADD, (), (), DEEPINFRA)
    rendered = json.loads(entry.render(patch))["files"][1]
    assert rendered == {
        "module": "toyhub.providers.deepinfra",
        "file": ADDED,
        "shape": "add",
        "fixed": f"fixed/{ADDED}",
    }
    written = entry.write(tmp_path / "again", entry.with_fixed_files(patch), force=False)
    assert (written / "fixed" / ADDED).read_bytes() == DEEPINFRA
    again = entry.load(written)
    assert again.files[1] == patch.files[1]
    assert [target.fixed_text for target in again.files[0].targets] == [IMPORT, FIXED_PROVIDERS]


def test_an_added_file_keeps_its_bytes_crlf_and_no_final_newline_included(tmp_path: Path) -> None:
    text = b'"""DeepInfra."""\r\nNAME = "deepinfra"'
    patch = entry.load(write_entry(tmp_path, entry_data(), added=text))
    assert patch.files[1].added == text


ADD: dict[str, object] = entry_data()["files"][1]  # type: ignore[index]
EDIT: dict[str, object] = entry_data()["files"][0]  # type: ignore[index]
SCHEMA_4_TARGET = {"name": "PROVIDERS", "fixed": "fixed/PROVIDERS.py", "forms": EDIT["targets"][1]["forms"]}  # type: ignore[index]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        pytest.param(
            entry_data(schema=4, files=[{**EDIT, "targets": [SCHEMA_4_TARGET]}, ADD]),
            "a file the patch adds needs schema 5, and the entry is schema 4",
            id="schema-4",
        ),
        pytest.param(
            entry_data(files=[EDIT, {**ADD, "targets": []}]), f"{ADDED} is added: it has no targets", id="targets"
        ),
        pytest.param(
            entry_data(files=[EDIT, {**ADD, "known_files": []}]),
            f"{ADDED} is added: it has no known_files",
            id="known-files",
        ),
        pytest.param(
            entry_data(files=[EDIT, {key: value for key, value in ADD.items() if key != "fixed"}]),
            f"{ADDED} is added: 'fixed' names the file's whole text in the entry",
            id="no-text",
        ),
        pytest.param(
            entry_data(files=[EDIT, {**ADD, "fixed": "fixed/none.py"}]),
            "fixed 'fixed/none.py' is not a file",
            id="no-file",
        ),
        pytest.param(
            entry_data(files=[ADD]),
            "every file of it is one the patch adds: one it edits or removes says",
            id="only-added",
        ),
        pytest.param(
            entry_data(files=[{**EDIT, "fixed": "fixed/import.py"}, ADD]),
            f"{INIT} is not added: only a file the patch adds has a 'fixed' text of its own",
            id="fixed-on-an-edited-file",
        ),
    ],
)
def test_an_added_file_the_entry_cannot_hold_is_refused_in_one_line(
    tmp_path: Path, data: dict[str, object], says: str
) -> None:
    with pytest.raises(CatalogError) as raised:
        entry.load(write_entry(tmp_path, data))
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_empty_added_text_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=re.escape(f"is added: its text 'fixed/{ADDED}' is empty")):
        entry.load(write_entry(tmp_path, entry_data(), added=b""))


# ------------------------------------------------------------------------------------------- the pure parts


@pytest.mark.parametrize(
    ("source", "verdict", "says"),
    [
        pytest.param(b"", Verdict.NEEDS_PATCH, "is absent; the patch adds it", id="absent"),
        pytest.param(DEEPINFRA, Verdict.FIXED, "is the module the fix adds", id="the-fix"),
        pytest.param(
            DEEPINFRA + b"# mine\n", None, "is there with other bytes than the module the fix adds", id="another-file"
        ),
    ],
)
def test_an_added_file_is_judged_by_its_bytes(
    tmp_path: Path, source: bytes, verdict: Verdict | None, says: str
) -> None:
    added = entry.load(write_entry(tmp_path, entry_data())).files[1]
    assert shapes.added(source, added) == (
        verdict,
        f"{ADDED} {says}" + ("" if verdict else ": hfpatch will not overwrite it"),
    )


LINE = "pkg/b.py,sha256=x,1"


@pytest.mark.parametrize(
    ("record", "with_it"),
    [
        pytest.param(
            b"pkg/a.py,,\npkg/c.py,,\n", b"pkg/a.py,,\npkg/b.py,sha256=x,1\npkg/c.py,,\n", id="sorted-between"
        ),
        pytest.param(
            b"pkg/a.py,,\r\npkg/c.py,,\r\n", b"pkg/a.py,,\r\npkg/b.py,sha256=x,1\r\npkg/c.py,,\r\n", id="crlf"
        ),
        pytest.param(b"pkg/a.py,,\n", b"pkg/a.py,,\npkg/b.py,sha256=x,1\n", id="last"),
        pytest.param(b"pkg/a.py,,", b"pkg/a.py,,\npkg/b.py,sha256=x,1", id="last-no-final-newline"),
        pytest.param(b"pkg/c.py,,", b"pkg/b.py,sha256=x,1\npkg/c.py,,", id="first"),
        pytest.param(b"", b"pkg/b.py,sha256=x,1\n", id="empty"),
    ],
)
def test_a_record_line_added_is_where_pip_sorts_it_and_taking_it_out_gives_the_bytes_back(
    record: bytes, with_it: bytes
) -> None:
    assert wheelrecord.with_line_added(record, LINE) == with_it
    assert wheelrecord.without_line(with_it, "pkg/b.py") == record
    assert wheelrecord.without_line(record, "pkg/b.py") is None


# ----------------------------------------------------------------------------------- apply, check, revert


def test_apply_creates_the_module_and_revert_takes_it_and_its_record_line_out(tmp_path: Path) -> None:
    toy = site(tmp_path)
    record = toy.record.read_bytes()
    checked = toy.run("check")
    assert (checked.code, checked.label(PATCH_ID)) == (1, "needs-patch"), checked.out + checked.err
    applied = toy.run("apply")
    assert (applied.code, applied.label(PATCH_ID)) == (0, "patched"), applied.out + applied.err
    assert f"{INIT} now has the fix" in applied.text and f"created {ADDED}, the module the fix adds" in applied.text
    assert (toy.root / ADDED).read_bytes() == DEEPINFRA
    assert toy.file.read_bytes() == FIXED_INIT
    assert line_in_record(toy.record.read_bytes(), ADDED) == record_line(ADDED, DEEPINFRA)
    assert line_in_record(toy.record.read_bytes(), INIT) == record_line(INIT, FIXED_INIT)
    again = toy.run("check")
    assert (again.code, again.label(PATCH_ID)) == (0, "applied"), again.out + again.err
    reverted = toy.run("revert")
    assert reverted.code == 0, reverted.out + reverted.err
    said = f"restored the original {INIT}; removed {ADDED}, which the patch had added"
    assert said in reverted.text, reverted.out
    assert not (toy.root / ADDED).exists()
    assert toy.file.read_bytes() == BUGGY_INIT
    assert toy.record.read_bytes() == record
    assert not toy.holds_state
    after = toy.run("check")
    assert (after.code, after.label(PATCH_ID)) == (1, "needs-patch"), after.out + after.err


@pytest.mark.parametrize(
    ("there", "says"),
    [
        pytest.param(DEEPINFRA + b"# the user's\n", "other bytes than the module the fix adds", id="other-bytes"),
        pytest.param(b"", "is there, empty, where toyhub-deepinfra adds a module", id="empty"),
    ],
)
def test_a_file_where_the_module_goes_is_never_overwritten(tmp_path: Path, there: bytes, says: str) -> None:
    toy = site(tmp_path, extra={ADDED: there})
    record = toy.record.read_bytes()
    for command in ("check", "apply"):
        done = toy.run(command)
        assert done.code == 2, done.out + done.err
        assert says in done.out + done.err
    assert (toy.root / ADDED).read_bytes() == there
    assert toy.file.read_bytes() == BUGGY_INIT
    assert toy.record.read_bytes() == record
    assert not toy.holds_state


def test_the_release_that_ships_the_module_has_the_fix(tmp_path: Path) -> None:
    toy = site(tmp_path, version="2.0")
    checked = toy.run("check")
    assert (checked.code, checked.label(PATCH_ID)) == (0, "fixed-upstream"), checked.out + checked.err


def test_a_real_venv_gets_the_module_with_its_bytecode_and_loses_both_on_revert(tmp_path: Path) -> None:
    import wheelfactory as factory

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = factory.write_wheel(wheels, "1.0", release("1.0"), name="toyhub")
    venv = make_venv(tmp_path / "venv", "--no-index", str(wheel))
    root = venv.site_packages
    compiled = subprocess.run([venv.python, "-m", "compileall", "-q", str(root / "toyhub")], check=False)
    assert compiled.returncode == 0
    catalog = tmp_path / "catalog"
    write_entry(catalog, entry_data())
    toy = Site(root, "toyhub", "1.0", INIT, PATCH_ID, catalog=catalog, python=venv.python)
    record = toy.record.read_bytes()
    applied = toy.run("apply")
    assert (applied.code, applied.label(PATCH_ID)) == (0, "patched"), applied.out + applied.err
    assert line_in_record(toy.record.read_bytes(), ADDED) == record_line(ADDED, DEEPINFRA)
    assert list((root / "toyhub" / "providers" / "__pycache__").glob("deepinfra.*.pyc"))
    assert venv.run("import toyhub.providers as p; print(sorted(p.PROVIDERS))") == "['alpha', 'deepinfra']"
    assert toy.run("check").label(PATCH_ID) == "applied"
    reverted = toy.run("revert")
    assert reverted.code == 0, reverted.out + reverted.err
    assert not (root / ADDED).exists()
    assert not list((root / "toyhub" / "providers" / "__pycache__").glob("deepinfra.*.pyc"))
    assert toy.record.read_bytes() == record
    assert venv.run("import toyhub.providers as p; print(sorted(p.PROVIDERS))") == "['alpha']"
    assert toy.run("check").label(PATCH_ID) == "needs-patch"


def test_a_release_that_has_the_fix_keeps_its_own_text_of_the_module(tmp_path: Path) -> None:
    """huggingface_hub 2.4.0 ships deepinfra.py changed since 1.12.2: its own file, not a user's, and fixed."""
    added = entry.load(write_entry(tmp_path, entry_data())).files[1]
    assert shapes.added(DEEPINFRA + b"# 3.0\n", added, "2.0") == (
        Verdict.FIXED,
        f"{ADDED} is another text of it, in a release that has the fix (2.0+)",
    )
