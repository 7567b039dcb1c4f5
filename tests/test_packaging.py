"""What a real build of the checkout ships, and that hfpatch runs installed, editable, and from the checkout itself."""

from __future__ import annotations

import email.parser
import fcntl
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import PATCH_ID
from packaging.requirements import Requirement
from support import REPOSITORY, Venv, clean_env, dependencies_view, make_venv

FIXED_TEXT = "_compute_local_source_files_hash.py"


def _run(command: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=clean_env(), timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel a real build makes of the checkout: uv where it is on PATH, else pip; both run the build backend in
    an isolated build environment, as a user's install does. Built once per run: xdist workers share the parent
    of their base temporary directories, which without xdist is shared by every run."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "hfpatch-wheel"
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = sorted(shared.glob("hfpatch-*.whl"))
        if not built:
            _build_wheel(shared)
            built = sorted(shared.glob("hfpatch-*.whl"))
    (only,) = built
    return only


def _build_wheel(out: Path) -> None:
    uv = shutil.which("uv")
    if uv is not None:
        _run([uv, "build", "--wheel", "--out-dir", str(out), str(REPOSITORY)], cwd=out)
    else:
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPOSITORY)], cwd=out)


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_ships_the_catalog_inside_hfpatch(wheel: Path) -> None:
    shipped = {name.removeprefix("hfpatch/patches/") for name in _names(wheel) if name.startswith("hfpatch/patches/")}
    catalog = REPOSITORY / "patches"
    in_checkout = {
        path.relative_to(catalog).as_posix()
        for path in catalog.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert shipped == in_checkout
    assert {f"{PATCH_ID}/patch.json", f"{PATCH_ID}/probe.py", f"{PATCH_ID}/fixed/{FIXED_TEXT}"} <= shipped


def test_nothing_named_patches_lands_at_the_top_of_site_packages(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in _names(wheel)}
    assert tops == {"hfpatch", f"{wheel.name.split('-py')[0]}.dist-info"}


def test_the_runtime_dependencies_are_libcst_and_packaging_and_tomli_on_python_3_10_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        metadata = email.parser.BytesParser().parsebytes(archive.read(metadata_name))
    requirements = {Requirement(line).name: Requirement(line) for line in metadata.get_all("Requires-Dist") or []}
    assert sorted(requirements) == ["libcst", "packaging", "tomli"]
    assert requirements["libcst"].marker is None and requirements["packaging"].marker is None
    tomli = requirements["tomli"].marker  # [tool.hfpatch] is TOML: 3.11 has tomllib
    assert tomli is not None and tomli.evaluate({"python_version": "3.10"})
    assert not tomli.evaluate({"python_version": "3.11"})


def _venv(path: Path) -> Venv:
    """A venv whose dependencies come from the test environment (never its hfpatch or transformers)."""
    return make_venv(path, view=dependencies_view(path.parent, {"transformers"}))


def test_the_installed_wheel_finds_its_own_catalog(wheel: Path, tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    venv.pip("install", "--no-deps", "-q", str(wheel))
    listed = _run([str(venv.path / "bin" / "hfpatch"), "list"], cwd=tmp_path).stdout
    assert f"\ncatalogs: {venv.site_packages / 'hfpatch' / 'patches'} (built-in)\n" in listed


def test_an_editable_install_reads_the_catalog_of_the_checkout(tmp_path: Path) -> None:
    """The editable install the build backend makes (PEP 660): uv where it is on PATH, as the wheel is built (it
    keeps the backend's build environment between runs; pip makes it anew, most of this test's time), else pip."""
    venv = _venv(tmp_path / "venv")
    uv = shutil.which("uv")
    if uv is not None:
        _run([uv, "pip", "install", "-q", "--python", venv.python, "--no-deps", "-e", str(REPOSITORY)], cwd=tmp_path)
    else:
        venv.pip("install", "--no-deps", "-q", "-e", str(REPOSITORY))
    listed = _run([str(venv.path / "bin" / "hfpatch"), "list"], cwd=tmp_path).stdout
    assert f"\n{PATCH_ID} " in listed
    assert f"\ncatalogs: {REPOSITORY / 'patches'} (built-in)\n" in listed


def test_python_m_hfpatch_list_runs_from_the_repository_root(tmp_path: Path) -> None:
    """No install at all: an interpreter with only the dependencies, in the checkout."""
    venv = _venv(tmp_path / "venv")
    missing = subprocess.run([venv.python, "-c", "import hfpatch"], capture_output=True, cwd=tmp_path)
    assert missing.returncode != 0, "the venv must not have hfpatch installed"
    listed = _run([venv.python, "-m", "hfpatch", "list"], cwd=REPOSITORY).stdout
    assert f"\ncatalogs: {REPOSITORY / 'patches'} (built-in)\n" in listed
