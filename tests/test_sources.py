"""A fix from anywhere: a build that is on no index (--fixed-from a wheel or a source tree) and the user's own edit of
the installed distribution (--from-edits), each written into an entry, applied to every release that needs it,
checked and reverted, on a made-up distribution `tiny` whose releases come from a --find-links directory.

    tiny/core.py   scale(x) forgets a negative x:   1.0, 1.1 (1.1's file differs elsewhere: its docstring)
                   1.2 (released after the entry was written) has the fix as the build has it
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import wheelfactory as factory
from support import Completed, Venv, hfpatch, in_process, make_venv

from hfpatch import entry

CORE = "tiny/core.py"
HEAD = '"""tiny."""\n\nFACTOR = 2\n\n\n'
BUGGY = "def scale(x):\n    return x * FACTOR\n"
FIXED = "def scale(x):\n    return abs(x) * FACTOR\n"
TEXTS = {
    "1.0": HEAD + BUGGY,
    "1.1": HEAD.replace('"""tiny."""', '"""tiny, 1.1."""') + BUGGY,
    "1.2": HEAD.replace('"""tiny."""', '"""tiny, 1.2."""') + FIXED,
}
USE = "from tiny.core import scale; print(scale(-3))"


def _files(version: str, core: str) -> dict[str, bytes]:
    return {"tiny/__init__.py": f'__version__ = "{version}"\n'.encode(), CORE: core.encode()}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The releases on the 'index' when the entry is written: 1.0 and 1.1 (1.2 comes later)."""
    directory = tmp_path_factory.mktemp("tiny-wheels")
    for version in ("1.0", "1.1"):
        factory.write_wheel(directory, version, _files(version, TEXTS[version]), name="tiny")
    return directory


@pytest.fixture(scope="module")
def later(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tiny-later")
    return factory.write_wheel(directory, "1.2", _files("1.2", TEXTS["1.2"]), name="tiny")


def _new(capsys: pytest.CaptureFixture[str], wheels: Path, catalog: Path, *args: str) -> Completed:
    argv = ["new", "tiny-1", "--catalog", str(catalog), "--find-links", str(wheels), *args]
    return in_process(argv, capsys)


def _venv(path: Path, wheel: Path) -> Venv:
    return make_venv(path, "--no-index", str(wheel))


def _run(venv: Venv, command: str, catalog: Path) -> Completed:
    return hfpatch(command, "--catalog", str(catalog), patch="tiny-1", python=venv.python)


def test_a_fix_from_a_build_on_no_index_is_written_and_applied_to_every_release_that_needs_it(
    capsys: pytest.CaptureFixture[str], wheels: Path, later: Path, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    build = factory.write_wheel(tmp_path / "build", "1.2.dev0", _files("1.2.dev0", HEAD + FIXED), name="tiny")
    catalog = tmp_path / "catalog"
    done = _new(capsys, wheels, catalog, "--target", "tiny:tiny.core:scale", "--fixed-from", str(build))
    assert done.code == 0, done.out + done.err
    assert {release: row[1] for release, row in done.table().items()} == {"1.0": "needs-patch", "1.1": "needs-patch"}
    written = entry.load(catalog / "tiny-1")
    assert written.fixed_in is None  # no release has the fix yet
    assert "The fixed text is the build tiny-1.2.dev0-py3-none-any.whl's; no release has it yet." in written.about
    for version in ("1.0", "1.1"):
        venv = _venv(tmp_path / f"venv-{version}", wheels / f"tiny-{version}-py3-none-any.whl")
        assert venv.run(USE) == "-6"
        applied = _run(venv, "apply", catalog)
        assert (applied.code, applied.label("tiny-1")) == (0, "patched"), applied.out + applied.err
        assert applied.out.count("upstream in no release yet") == 1
        assert venv.run(USE) == "6"
        assert _run(venv, "revert", catalog).code == 0
    # The release that ships the fix later: a file the entry never read, as released, with the fixed text.
    released = _venv(tmp_path / "venv-1.2", later)
    checked = _run(released, "check", catalog)
    assert (checked.code, checked.label("tiny-1")) == (0, "fixed-upstream"), checked.out
    obsolete = hfpatch("check", "--catalog", str(catalog), "--fail-on-obsolete", patch="tiny-1", python=released.python)
    assert obsolete.code == 1, "a release with the fix makes the apply step dead, named fix or not"


def test_releases_later_than_a_build_need_the_fix_only_where_they_hold_the_code_it_was_read_against(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    """No release is said to have the fix: a later release with the old code needs it; one whose code is neither
    the old code nor the fix may hold the fix in another form, and is never patched back to the build's text."""
    index = tmp_path / "index"
    shutil.copytree(wheels, index)
    still_buggy = HEAD.replace('"""tiny."""', '"""tiny, 1.3."""') + BUGGY
    other_form = HEAD + "def scale(x):\n    return (x if x >= 0 else -x) * FACTOR\n"
    factory.write_wheel(index, "1.3", _files("1.3", still_buggy), name="tiny")
    factory.write_wheel(index, "1.4", _files("1.4", other_form), name="tiny")
    (tmp_path / "build").mkdir()
    build = factory.write_wheel(tmp_path / "build", "1.2.dev0", _files("1.2.dev0", HEAD + FIXED), name="tiny")
    catalog = tmp_path / "catalog"
    args = ["--target", "tiny:tiny.core:scale", "--fixed-from", str(build), "--all-releases"]
    done = _new(capsys, index, catalog, *args)
    assert done.code == 0, done.out + done.err
    table = done.table()
    assert {release: row[1] for release, row in table.items()} == {
        "1.0": "needs-patch",
        "1.1": "needs-patch",
        "1.3": "needs-patch",
        "1.4": "not-applicable",
    }
    assert table["1.4"][2] == (
        "scale here is neither the fix nor 1.1's code, in a release later than the fix's 1.2.dev0: it may have the "
        "fix in another form (--fixed-in names the release that has it)"
    )
    venv = _venv(tmp_path / "venv", index / "tiny-1.4-py3-none-any.whl")
    before = (venv.site_packages / CORE).read_bytes()
    applied = _run(venv, "apply", catalog)
    assert (applied.code, applied.label("tiny-1")) == (0, "not-applicable"), applied.out
    assert (venv.site_packages / CORE).read_bytes() == before


def test_a_fix_from_a_source_tree_is_read_against_the_release_it_says_it_is(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "checkout"
    for path, data in _files("1.1", TEXTS["1.1"].replace(BUGGY, FIXED)).items():
        (tree / "src" / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / "src" / path).write_bytes(data)
    catalog = tmp_path / "catalog"
    done = _new(capsys, wheels, catalog, "--target", "tiny:tiny.core:scale", "--fixed-from", str(tree))
    assert done.code == 0, done.out + done.err
    assert "note: patched, the 1.1 file is the tree" in done.out
    venv = _venv(tmp_path / "venv", wheels / "tiny-1.1-py3-none-any.whl")
    assert _run(venv, "apply", catalog).code == 0
    assert (venv.site_packages / CORE).read_bytes() == (tree / "src" / CORE).read_bytes()


def test_a_released_wheel_given_as_the_build_is_read_against_the_release_before_it(
    capsys: pytest.CaptureFixture[str], wheels: Path, later: Path, tmp_path: Path
) -> None:
    """--fixed-from the released 1.2 wheel: the fix is what 1.2 changed since 1.1, not 1.2 against itself."""
    index = tmp_path / "index"
    shutil.copytree(wheels, index)
    shutil.copy(later, index)
    catalog = tmp_path / "catalog"
    done = _new(capsys, index, catalog, "--target", "tiny:tiny.core:scale", "--fixed-from", str(later))
    assert done.code == 0, done.out + done.err
    table = {release: row[1] for release, row in done.table().items()}
    assert table == {"1.0": "needs-patch", "1.1": "needs-patch", "1.2": "fixed"}
    (file,) = entry.load(catalog / "tiny-1").files
    assert file.targets[0].fixed_text == FIXED.rstrip("\n")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(
            ["--fixed-in", "1.1"],
            "--fixed-in and --from-edits: the fixed text is your edit, made on the release installed; give one.",
            id="fixed-in",
        ),
        pytest.param(
            ["--fixed-from", "x.whl"],
            "give one of --fixed-from PATH and --from-edits DIST: the fixed text comes from one place.",
            id="fixed-from",
        ),
    ],
)
def test_a_release_or_a_build_beside_from_edits_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path, args: list[str], says: str
) -> None:
    done = _new(capsys, wheels, tmp_path / "catalog", "--from-edits", "tiny", *args)
    assert (done.code, done.err) == (2, f"hfpatch: error: {says}\n")
    assert not (tmp_path / "catalog").exists()


def test_an_unedited_file_named_under_from_edits_is_said_to_be_unedited(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    venv = _edited(tmp_path, wheels, TEXTS["1.1"])
    args = ["--from-edits", "tiny", "--python", venv.python, "--target", "tiny:tiny.core:scale"]
    done = _new(capsys, wheels, tmp_path / "catalog", *args)
    assert done.code == 2
    assert done.err == (
        "hfpatch: error: tiny/core.py is unedited: it is as the release installed has it, so there is nothing to "
        "carry (edit it, or leave its --target out); nothing written.\n"
    )
    assert not (tmp_path / "catalog").exists()


def test_a_name_a_build_s_fix_uses_that_old_releases_lack_is_named_with_the_build(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    helper = "def _sign(x):\n    return -1 if x < 0 else 1\n\n\n"
    uses = "def scale(x):\n    return _sign(x) * x * FACTOR\n"
    build = factory.write_wheel(tmp_path / "build", "1.2.dev0", _files("1.2.dev0", HEAD + helper + uses), name="tiny")
    done = _new(capsys, wheels, tmp_path / "catalog", "--target", "tiny:tiny.core:scale", "--fixed-from", str(build))
    assert done.code == 2
    assert (
        "  - the fix of scale uses _sign, which 1.0 to 1.1 lack; it is a function in the build "
        "tiny-1.2.dev0-py3-none-any.whl: add --target tiny:tiny.core:_sign to carry it" in done.out
    ), done.out
    assert " None" not in done.out


def _edited(tmp_path: Path, wheels: Path, text: str) -> Venv:
    venv = _venv(tmp_path / "venv", wheels / "tiny-1.1-py3-none-any.whl")
    (venv.site_packages / CORE).write_text(text)
    return venv


def test_an_edit_of_the_installed_distribution_becomes_an_entry_and_the_environment_holds_it_applied(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    venv = _edited(tmp_path, wheels, TEXTS["1.1"].replace(BUGGY, FIXED))
    edited = (venv.site_packages / CORE).read_bytes()
    catalog = tmp_path / "catalog"
    done = _new(capsys, wheels, catalog, "--from-edits", "tiny", "--python", venv.python)
    assert done.code == 0, done.out + done.err
    assert set(done.table()) == {"1.0", "1.1"}
    assert f"adopted the edit in {venv.site_packages}" in done.out
    (file,) = entry.load(catalog / "tiny-1").files
    assert [target.name for target in file.targets] == ["scale"]
    checked = _run(venv, "check", catalog)
    assert (checked.code, checked.label("tiny-1")) == (0, "applied"), checked.out + checked.err
    reverted = _run(venv, "revert", catalog)
    assert reverted.code == 0, reverted.out + reverted.err
    assert (venv.site_packages / CORE).read_text() == TEXTS["1.1"]
    assert venv.run(USE) == "-6"
    assert _run(venv, "apply", catalog).code == 0
    assert (venv.site_packages / CORE).read_bytes() == edited
    assert venv.run(USE) == "6"
    # and the entry carries the edit to the other release, as any entry
    other = _venv(tmp_path / "other", wheels / "tiny-1.0-py3-none-any.whl")
    assert _run(other, "apply", catalog).code == 0
    assert other.run(USE) == "6"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param(TEXTS["1.1"], "has no file edited", id="nothing-edited"),
        pytest.param(
            TEXTS["1.1"].replace("return x", "return (x"),
            "core.py is not valid Python (line 7): the edit cannot be carried",
            id="not-python",
        ),
        pytest.param(
            TEXTS["1.1"].replace("\n\ndef scale", "\n# a note\ndef scale"),
            "the edit of tiny/core.py at line 5 is outside any statement hfpatch can carry",
            id="a-comment-between-statements",
        ),
    ],
)
def test_an_edit_that_cannot_be_carried_is_one_error_line_naming_the_file_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path, text: str, says: str
) -> None:
    venv = _edited(tmp_path, wheels, text)
    before = (venv.site_packages / CORE).read_bytes()
    done = _new(capsys, wheels, tmp_path / "catalog", "--from-edits", "tiny", "--python", venv.python)
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: ") and says in line, line
    assert not (tmp_path / "catalog" / "tiny-1").exists()
    assert (venv.site_packages / CORE).read_bytes() == before
    assert not (venv.site_packages / ".hfpatch").exists()


def test_regenerating_an_entry_keeps_what_its_author_added(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    (tmp_path / "build").mkdir()
    build = factory.write_wheel(tmp_path / "build", "1.2.dev0", _files("1.2.dev0", HEAD + FIXED), name="tiny")
    catalog = tmp_path / "catalog"
    args = ["--target", "tiny:tiny.core:scale", "--fixed-from", str(build)]
    assert _new(capsys, wheels, catalog, *args, "--title", "scale forgets a negative x").code == 0
    directory = catalog / "tiny-1"
    (directory / "probe.py").write_text("print('{\"ok\": true}')\n")
    (directory / "NOTES.md").write_text("why we carry it\n")
    data = json.loads((directory / "patch.json").read_text())
    data["probe"] = "probe.py"
    data["advisories"] = ["CVE-2026-1839"]
    data["about"].append("Reviewed by the platform team.")
    (directory / "patch.json").write_text(json.dumps(data))
    again = _new(capsys, wheels, catalog, *args, "--force")
    assert again.code == 0, again.out + again.err
    kept = entry.load(directory)
    assert kept.title == "scale forgets a negative x"
    assert kept.probe == (directory / "probe.py").resolve()
    assert kept.advisories == ("CVE-2026-1839",)
    assert "Reviewed by the platform team." in kept.about
    assert (directory / "NOTES.md").read_text() == "why we carry it\n"
    assert (directory / "probe.py").exists()
    shutil.rmtree(directory)
