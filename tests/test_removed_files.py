"""A file the fix removes (schema 4's shape "remove"): a release that still ships a script upstream stopped shipping
(transformers' convert_*.py, gone from 4.48.0) has each one's code taken out by apply, its original kept byte for
byte and RECORD describing what is on disk; check calls it applied; revert puts every byte back. A release that never
had one of the files is left alone for it; one that has none of them is not one the patch is for.

    <site>/toypkg/convert_a.py, convert_b.py    the scripts, as release 1.0 ships them (1.1 ships only convert_a)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import Site, line_in_record, record_line, sha256, write_files

from hfpatch import entry
from hfpatch.entry import EMPTY_SHA256, FileShape
from hfpatch.errors import CatalogError

PATCH_ID = "toypkg-scripts"
SCRIPTS = {
    "toypkg/convert_a.py": b'"""Convert a checkpoint."""\nimport pickle\n\n\ndef main(path):\n'
    b'    return pickle.load(open(path, "rb"))\n',
    "toypkg/convert_b.py": b'"""Convert another."""\r\nimport pickle\r\n\r\nMARK = open("/dev/null").close()\r\n',
}


def entry_data(**changed: object) -> dict[str, object]:
    files = [
        {
            "module": relative[: -len(".py")].replace("/", "."),
            "file": relative,
            "shape": "remove",
            "known_files": [{"sha256": sha256(text), "verdict": "needs-patch", "releases": ["1.0", "1.1"]}],
        }
        for relative, text in SCRIPTS.items()
    ]
    return {
        "schema": 4,
        "id": PATCH_ID,
        "title": "the conversion scripts unpickle what they are given",
        "upstream": "huggingface/transformers#35281",
        "url": "https://github.com/huggingface/transformers/pull/35281",
        "distribution": "toypkg",
        "fixed_in": "2.0",
        "files": files,
        **changed,
    }


def write_entry(catalog: Path, data: dict[str, object]) -> Path:
    directory = catalog / PATCH_ID
    directory.mkdir(parents=True)
    (directory / "patch.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return directory


def site(where: Path, scripts: tuple[str, ...], version: str = "1.0") -> Site:
    root, catalog = where / "site", where / "catalog"
    dist_info = f"toypkg-{version}.dist-info"
    files = {"toypkg/__init__.py": b'"""toypkg."""\n', **{name: SCRIPTS[name] for name in scripts}}
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: toypkg\nVersion: {version}\n\n".encode()
    write_files(root, files, dist_info)
    write_entry(catalog, entry_data())
    return Site(root, "toypkg", version, scripts[0] if scripts else "toypkg/convert_a.py", PATCH_ID, catalog=catalog)


# ------------------------------------------------------------------------------------------------- the entry

FIRST: dict[str, object] = entry_data()["files"][0]  # type: ignore[index]


def test_a_removed_file_reads_back_as_written_in_schema_4(tmp_path: Path) -> None:
    directory = write_entry(tmp_path, entry_data())
    patch = entry.load(directory)
    assert [(file.shape, file.targets) for file in patch.files] == [(FileShape.REMOVE, ())] * 2
    assert {known.patched_sha256 for file in patch.files for known in file.known_files} == {EMPTY_SHA256}
    rendered = json.loads(entry.render(patch))
    assert rendered["schema"] == 4
    assert [file["shape"] for file in rendered["files"]] == ["remove", "remove"]
    assert "targets" not in rendered["files"][0]
    (directory / "patch.json").write_text(entry.render(patch), encoding="utf-8")
    assert entry.load(directory) == patch


@pytest.mark.parametrize(
    ("data", "says"),
    [
        pytest.param(entry_data(schema=3), "a file's shape needs schema 4, and the entry is schema 3", id="schema-3"),
        pytest.param(
            entry_data(files=[{**FIRST, "shape": "gone"}]),
            "the shape of toypkg/convert_a.py must be 'edit' or 'remove', not 'gone'",
            id="unknown-shape",
        ),
        pytest.param(
            entry_data(files=[{**FIRST, "targets": []}]),
            "toypkg/convert_a.py is removed: it has no targets",
            id="targets",
        ),
        pytest.param(
            entry_data(files=[{**FIRST, "known_files": []}]),
            "its known_files name each released form of it",
            id="no-known-file",
        ),
        pytest.param(
            entry_data(files=[{**FIRST, "known_files": [{"sha256": "0" * 64, "verdict": "fixed", "releases": []}]}]),
            "each known file needs the patch, which empties it",
            id="a-known-file-that-is-fixed",
        ),
    ],
)  # fmt: skip
def test_a_removed_file_that_is_not_as_schema_4_writes_it_is_refused(
    tmp_path: Path, data: dict[str, object], says: str
) -> None:
    with pytest.raises(CatalogError, match=says.replace("(", r"\(").replace(")", r"\)")):
        entry.load(write_entry(tmp_path, data))


# ----------------------------------------------------------------------------------- apply, check, revert


def test_apply_takes_each_script_s_code_out_and_revert_puts_every_byte_back(tmp_path: Path) -> None:
    toy = site(tmp_path, tuple(SCRIPTS))
    record = toy.record.read_bytes()
    checked = toy.run("check")
    assert (checked.code, checked.label(PATCH_ID)) == (1, "needs-patch"), checked.out + checked.err
    applied = toy.run("apply")
    assert (applied.code, applied.label(PATCH_ID)) == (0, "patched"), applied.out + applied.err
    for relative, text in SCRIPTS.items():
        assert (toy.root / relative).read_bytes() == b""
        assert line_in_record(toy.record.read_bytes(), relative) == record_line(relative, b"")
        backup = toy.state_dir.joinpath("files", *relative.split("/"), "original")
        assert backup.read_bytes() == text
    again = toy.run("check")
    assert (again.code, again.label(PATCH_ID)) == (0, "applied"), again.out + again.err
    reverted = toy.run("revert")
    assert reverted.code == 0, reverted.out + reverted.err
    for relative, text in SCRIPTS.items():
        assert (toy.root / relative).read_bytes() == text
    assert toy.record.read_bytes() == record
    assert not toy.holds_state


def test_a_release_without_one_of_the_scripts_has_the_others_removed(tmp_path: Path) -> None:
    toy = site(tmp_path, ("toypkg/convert_a.py",), version="1.1")
    applied = toy.run("apply")
    assert (applied.code, applied.label(PATCH_ID)) == (0, "patched"), applied.out + applied.err
    assert toy.file.read_bytes() == b""
    assert not (toy.root / "toypkg" / "convert_b.py").exists()
    assert toy.run("check").label(PATCH_ID) == "applied"
    assert toy.run("revert").code == 0
    assert toy.file.read_bytes() == SCRIPTS["toypkg/convert_a.py"]


def test_a_release_without_any_of_the_scripts_is_not_one_the_patch_is_for(tmp_path: Path) -> None:
    toy = site(tmp_path, (), version="2.0")
    checked = toy.run("check")
    assert (checked.code, checked.label(PATCH_ID)) == (0, "not-applicable"), checked.out + checked.err


def test_a_script_edited_since_its_release_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    toy = site(tmp_path, tuple(SCRIPTS))
    toy.file.write_bytes(SCRIPTS["toypkg/convert_a.py"] + b"# edited\n")
    applied = toy.run("apply")
    assert applied.code == 2, applied.out + applied.err
    assert "toypkg/convert_a.py is none of the files the releases 1.0 to 1.1 shipped" in applied.out + applied.err
    assert toy.file.read_bytes().endswith(b"# edited\n")
    assert (toy.root / "toypkg" / "convert_b.py").read_bytes() == SCRIPTS["toypkg/convert_b.py"]
