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
from support import Site, in_process, line_in_record, record_line, sha256, write_files

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


def test_a_removed_file_of_schema_4_reads_back_the_same_from_schema_5(tmp_path: Path) -> None:
    directory = write_entry(tmp_path, entry_data())
    patch = entry.load(directory)
    assert [(file.shape, file.targets) for file in patch.files] == [(FileShape.REMOVE, ())] * 2
    assert {known.patched_sha256 for file in patch.files for known in file.known_files} == {EMPTY_SHA256}
    rendered = json.loads(entry.render(patch))
    assert rendered["schema"] == 5
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
            "the shape of toypkg/convert_a.py must be 'edit', 'remove' or 'add', not 'gone'",
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


# ------------------------------------------------------------------------------- hfpatch new --remove


def _script_wheels(directory: Path, *, fixed_ships: bool = False) -> Path:
    import wheelfactory as factory

    directory.mkdir()
    init = {"toypkg/__init__.py": b'"""toypkg."""\n'}
    a_11 = SCRIPTS["toypkg/convert_a.py"] + b"# 1.1\n"
    factory.write_wheel(directory, "0.9", init, name="toypkg")
    factory.write_wheel(directory, "1.0", {**init, **SCRIPTS}, name="toypkg")
    factory.write_wheel(directory, "1.1", {**init, "toypkg/convert_a.py": a_11}, name="toypkg")
    later = {"toypkg/convert_b.py": SCRIPTS["toypkg/convert_b.py"]} if fixed_ships else {}
    factory.write_wheel(directory, "2.0", {**init, **later}, name="toypkg")
    return directory


def test_new_writes_an_entry_of_every_form_of_the_files_the_fixed_release_no_longer_ships(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    links = _script_wheels(tmp_path / "wheels")
    argv = ["new", PATCH_ID, "--remove", "toypkg:toypkg/convert_*.py", "--fixed-in", "2.0"]
    done = in_process([*argv, "--find-links", str(links), "--catalog", str(tmp_path / "catalog")], capsys)
    assert done.code == 0, done.out + done.err
    assert "\n".join(done.out.splitlines()[3:8]) == (
        "release  files  verdict\n0.9      0      absent\n1.0      2      needs-patch\n1.1      1      needs-patch\n"
        "2.0      0      fixed"
    ), done.out
    patch = entry.load(tmp_path / "catalog" / PATCH_ID)
    a, b = patch.files
    assert (a.file, a.shape, b.file, b.shape) == (
        "toypkg/convert_a.py",
        FileShape.REMOVE,
        "toypkg/convert_b.py",
        FileShape.REMOVE,
    )
    assert [(known.sha256, known.releases) for known in a.known_files] == [
        (sha256(SCRIPTS["toypkg/convert_a.py"]), ("1.0",)),
        (sha256(SCRIPTS["toypkg/convert_a.py"] + b"# 1.1\n"), ("1.1",)),
    ]
    assert [(known.sha256, known.releases) for known in b.known_files] == [
        (sha256(SCRIPTS["toypkg/convert_b.py"]), ("1.0",))
    ]
    assert json.loads((tmp_path / "catalog" / PATCH_ID / "patch.json").read_text())["schema"] == 5
    assert patch.releases_read == ("0.9", "2.0")
    from hfpatch import classify
    from hfpatch.entry import Verdict

    for release, text in (
        ("1.0", SCRIPTS["toypkg/convert_a.py"]),
        ("1.1", SCRIPTS["toypkg/convert_a.py"] + b"# 1.1\n"),
    ):
        assert classify.identify(text, patch, a, release).verdict is Verdict.NEEDS_PATCH
    assert classify.identify(b"", patch, a, "1.0").verdict is Verdict.FIXED


def test_new_leaves_out_a_file_the_fixed_release_still_ships(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    links = _script_wheels(tmp_path / "wheels", fixed_ships=True)
    argv = ["new", PATCH_ID, "--remove", "toypkg:toypkg/convert_*.py", "--fixed-in", "2.0"]
    done = in_process([*argv, "--find-links", str(links), "--catalog", str(tmp_path / "catalog")], capsys)
    assert done.code == 0, done.out + done.err
    assert (
        "note: 2.0 still ships 1 file the pattern matches (toypkg/convert_b.py, ...): not removed upstream" in done.out
    )
    assert [file.file for file in entry.load(tmp_path / "catalog" / PATCH_ID).files] == ["toypkg/convert_a.py"]
    only = ["new", "other", "--remove", "toypkg:toypkg/convert_b.py", "--fixed-in", "2.0"]
    refused = in_process([*only, "--find-links", str(links), "--catalog", str(tmp_path / "catalog")], capsys)
    assert refused.code == 2
    assert refused.err == (
        "hfpatch: error: no file the pattern matches is gone from 2.0: each release read before it ships none, or 2.0 "
        "ships it still; nothing written.\n"
    )
    assert not (tmp_path / "catalog" / "other").exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        pytest.param(["--remove", "toypkg"], "--remove 'toypkg' is not DIST:PATTERN", id="no-pattern"),
        pytest.param(["--remove", "toypkg:x/*.py"], "--remove needs --fixed-in VERSION", id="no-fixed-in"),
        pytest.param(
            ["--remove", "toypkg:x/*.py", "--fixed-in", "2.0", "--target", "toypkg:toypkg.core"],
            "--remove and --target: an entry that removes files has no other fix.",
            id="and-a-target",
        ),
    ],
)
def test_new_remove_s_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], says: str
) -> None:
    done = in_process(["new", PATCH_ID, *argv, "--catalog", str(tmp_path / "catalog")], capsys)
    assert done.code == 2 and says in done.err, done.err


def test_a_fix_of_many_files_is_said_by_its_first_and_a_count(tmp_path: Path) -> None:
    """One short line per fact: check's and apply's lines name the first file and how many more (the conversion
    scripts are 252); -v and --json name every one."""
    many = {f"toypkg/convert_{letter}.py": f"import pickle\nNAME = {letter!r}\n".encode() for letter in "cdefg"}
    root, catalog = tmp_path / "site", tmp_path / "catalog"
    dist_info = "toypkg-1.0.dist-info"
    metadata = b"Metadata-Version: 2.1\nName: toypkg\nVersion: 1.0\n\n"
    write_files(root, {"toypkg/__init__.py": b'"""toypkg."""\n', **many, f"{dist_info}/METADATA": metadata}, dist_info)
    files = [
        {
            "module": relative[: -len(".py")].replace("/", "."),
            "file": relative,
            "shape": "remove",
            "known_files": [{"sha256": sha256(text), "verdict": "needs-patch", "releases": ["1.0"]}],
        }
        for relative, text in many.items()
    ]
    write_entry(catalog, entry_data(files=files))
    toy = Site(root, "toypkg", "1.0", "toypkg/convert_c.py", PATCH_ID, catalog=catalog)
    first, *rest = many
    checked = toy.run("check")
    assert checked.code == 1, checked.out + checked.err
    (line,) = [line for line in checked.lines if line.startswith(f"  {PATCH_ID}: needs-patch:")]
    assert f"the released 1.0 {first}; and 4 more files, which has the bug" in line, line
    assert not any(name in checked.out for name in rest)
    verbose = toy.run("check", "-v")
    assert all(f"the released 1.0 {name}" in verbose.flat for name in many), verbose.out
    document = json.loads(toy.run("check", "--json").out)
    (said,) = [item["message"] for item in document["environments"][0]["patches"] if item["id"] == PATCH_ID]
    assert all(f"the released 1.0 {name}" in said for name in many), said
    applied = toy.run("apply")
    assert applied.code == 0, applied.out + applied.err
    assert f"{first} and 4 more now have the fix (huggingface/transformers#35281, upstream in 2.0)" in applied.flat
    reverted = toy.run("revert", "-v")
    assert "restored the original " + ", ".join(many) in reverted.flat, reverted.out
