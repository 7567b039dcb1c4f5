"""`python -m hfpatch.migrate`: a team catalog that hfpatch 0.1 wrote (patch.toml) becomes one hfpatch reads now,
in place, as a real process on real files; what cannot be converted is one error line, and the entry is kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import imports_of, tree
from toy import PATCH_ID, entry_data, write_catalog

from hfpatch import catalog, entry
from hfpatch.errors import CatalogError

HEADER = ["greet(None) fails: example/toypkg#1, as data.", "Written by `hfpatch new` from the wheels of toypkg 1.0."]


def old_toml() -> str:
    """The toy entry as hfpatch 0.1 wrote it: TOML, schema 1, header comments, [[target]] and [[file_form]]."""
    data = entry_data()
    (target,) = data["targets"]
    (known,) = data["known_files"]
    scalars = [key for key in data if isinstance(data[key], str)]
    lines = [f"# {line}" for line in HEADER] + ["schema = 1"] + [f'{key} = "{data[key]}"' for key in scalars]
    lines += ["", "[[target]]", f'name = "{target["name"]}"', f'fixed = "{target["fixed"]}"']
    for form in target["forms"]:
        lines += ["", "[[target.form]]", f'sha256 = "{form["sha256"]}"', f'verdict = "{form["verdict"]}"']
        lines.append("releases = [\n    " + " ".join(f'"{release}",' for release in form["releases"]) + "\n]")
    lines += ["", "[[file_form]]", f'sha256 = "{known["sha256"]}"', f'verdict = "{known["verdict"]}"']
    lines += [f"releases = {known['releases']}".replace("'", '"'), "# patched, this is the 2.0 file byte for byte"]
    lines.append(f'patched_sha256 = "{known["patched_sha256"]}"')
    return "\n".join(lines) + "\n"


@pytest.fixture
def catalogs(tmp_path: Path) -> tuple[Path, Path]:
    """The same entry twice: as hfpatch writes it now, and as hfpatch 0.1 wrote it."""
    now = write_catalog(tmp_path / "now")
    old = tmp_path / "old"
    shutil.copytree(now, old)
    (old / PATCH_ID / entry.ENTRY).unlink()
    (old / PATCH_ID / "patch.toml").write_text(old_toml(), encoding="utf-8")
    return now, old


def migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hfpatch.migrate", *args], capture_output=True, text=True, check=False, timeout=120
    )


def test_converting_imports_neither_libcst_nor_the_new_command(catalogs: tuple[Path, Path]) -> None:
    """Converting is reading and writing the entry format: the rewrite (libcst, 0.2 s) and `new` have no part in it."""
    done, imported = imports_of(["hfpatch.migrate", str(catalogs[1])])
    assert done.code == 0, done.err[-2000:]
    assert "hfpatch.entry" in imported, "the measurement saw hfpatch's own imports"
    assert not {name for name in imported if name.split(".")[0] == "libcst" or name.startswith("hfpatch.new")}
    assert not {"hfpatch.authoring", "hfpatch.rewrite"} & imported


def test_an_old_catalog_is_converted_in_place_to_the_entry_hfpatch_writes_now(catalogs: tuple[Path, Path]) -> None:
    now, old = catalogs
    kept = {name: (old / PATCH_ID / name).read_bytes() for name in ("fixed/greet.py", "probe.py")}
    done = migrate(str(old))
    assert (done.returncode, done.stderr) == (0, "")
    directory = old / PATCH_ID
    assert done.stdout == f"converted {directory / 'patch.toml'} to {directory / 'patch.json'} ({PATCH_ID})\n"
    assert sorted(path.name for path in directory.iterdir()) == ["fixed", "patch.json", "probe.py"]
    assert {name: (directory / name).read_bytes() for name in kept} == kept
    converted = entry.load(directory)
    assert converted.about == tuple(HEADER)
    assert converted._replace(directory=now / PATCH_ID, probe=now / PATCH_ID / "probe.py", about=()) == entry.load(
        now / PATCH_ID
    )
    assert PATCH_ID in catalog.entry_dirs([catalog.builtin_catalog(), old])


def test_the_entry_or_its_patch_toml_may_be_named_instead_of_the_catalog(catalogs: tuple[Path, Path]) -> None:
    _, old = catalogs
    done = migrate(str(old / PATCH_ID / "patch.toml"))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert (old / PATCH_ID / "patch.json").is_file() and not (old / PATCH_ID / "patch.toml").exists()


def test_help_into_a_closed_pipe_is_no_traceback() -> None:
    """`--help | head -1`, with the reader gone before the first byte: the write meets a broken pipe every time."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hfpatch.migrate", "--help"], stdout=write, stderr=subprocess.PIPE, check=False
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


def test_the_refusal_of_an_old_catalog_names_the_command_that_converts_it(catalogs: tuple[Path, Path]) -> None:
    _, old = catalogs
    with pytest.raises(CatalogError) as raised:
        catalog.entry_dirs([catalog.builtin_catalog(), old])
    command = f"python -m hfpatch.migrate {old}"
    assert str(raised.value) == (
        f"{old / PATCH_ID / 'patch.toml'} is an entry in the format of hfpatch 0.1 (TOML); this hfpatch reads "
        f"patch.json: `{command}` converts the catalog in place (keeping fixed/ and probe.py)."
    )
    assert migrate(*command.split()[3:]).returncode == 0
    assert PATCH_ID in catalog.entry_dirs([catalog.builtin_catalog(), old])


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        pytest.param(
            lambda toml: toml.replace("schema = 1", "schema = = 1"), "is not an entry hfpatch 0.1 wrote", id="not-toml"
        ),
        pytest.param(
            lambda toml: toml.replace("schema = 1", "schema = 3"), "schema 3, where hfpatch 0.1", id="schema-3"
        ),
        pytest.param(lambda toml: toml.replace('verdict = "fixed"', 'verdict = "maybe"'), "'maybe'", id="bad-verdict"),
    ],
)
def test_an_entry_that_cannot_be_converted_is_one_error_line_and_stays_as_it_was(
    catalogs: tuple[Path, Path], spoil: Callable[[str], str], says: str
) -> None:
    _, old = catalogs
    toml = old / PATCH_ID / "patch.toml"
    toml.write_text(spoil(toml.read_text()), encoding="utf-8")
    before = tree(old)
    done = migrate(str(old))
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith("hfpatch: error: ") and says in line
    assert tree(old) == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(
            ["now"], "is converted already (its entries are patch.json): nothing to do", id="converted-already"
        ),
        pytest.param(["empty"], "holds no entry to convert (no */patch.toml); is it the catalog", id="no-entries"),
        pytest.param(["missing"], "cannot list the catalog", id="missing"),
        pytest.param([], "give the catalog directories to convert", id="nothing-given"),
        pytest.param(["--force", "old"], "give the catalog directories to convert", id="an-option"),
    ],
)
def test_nothing_to_convert_is_an_error_not_a_success(
    catalogs: tuple[Path, Path], tmp_path: Path, args: list[str], says: str
) -> None:
    (tmp_path / "empty").mkdir()
    before = tree(tmp_path)
    done = migrate(*(str(tmp_path / arg) if not arg.startswith("-") else arg for arg in args))
    assert (done.returncode, done.stdout) == (2, "")
    assert "hfpatch: error: " in done.stderr and says in done.stderr
    assert tree(tmp_path) == before
