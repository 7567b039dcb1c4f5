"""Fixtures shared by the suite: the release under test, private copies of it, and running hfpatch for real."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hfpatch.catalog import Patch, load_catalog

TARGET = "transformers/dynamic_module_utils.py"


@pytest.fixture(scope="session")
def patch() -> Patch:
    (only,) = [candidate for candidate in load_catalog() if candidate.id == "transformers-46618"]
    return only


@dataclass(frozen=True)
class Release:
    """The transformers release installed in this test environment (the nox matrix picks it)."""

    version: str
    root: Path
    dist_info: Path

    @property
    def file(self) -> Path:
        return self.root / TARGET

    @property
    def source(self) -> bytes:
        return self.file.read_bytes()


def _installed_release() -> Release | None:
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))).parent
    distribution = importlib.metadata.distribution("transformers")
    dist_info = Path(str(distribution._path))  # type: ignore[attr-defined]
    return Release(distribution.version, root, dist_info)


@pytest.fixture(scope="session")
def release() -> Release:
    found = _installed_release()
    if found is None:
        pytest.skip("transformers is not installed in this environment (the nox matrix installs it)")
    return found


@dataclass(frozen=True)
class Site:
    """A private copy of the installed release, imported first through PYTHONPATH.

    Files are hard links to the test environment's copy, except the ones hfpatch may write, which are real copies:
    hfpatch replaces files with new inodes, and a test would catch it writing through a link.
    """

    root: Path
    version: str

    @property
    def file(self) -> Path:
        return self.root / TARGET

    @property
    def dist_info(self) -> Path:
        (found,) = self.root.glob("transformers-*.dist-info")
        return found

    @property
    def record(self) -> Path:
        return self.dist_info / "RECORD"

    @property
    def state_dir(self) -> Path:
        return self.root / ".hfpatch"

    def env(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key != "HFPATCH_FAULT"}
        env["PYTHONPATH"] = str(self.root)
        env.update(extra)
        return env


def make_site(release: Release, root: Path) -> Site:
    root.mkdir(parents=True)
    shutil.copytree(release.root / "transformers", root / "transformers", copy_function=os.link)
    shutil.copytree(release.dist_info, root / release.dist_info.name)
    for private in (root / TARGET, root / release.dist_info.name / "RECORD"):
        data = private.read_bytes()
        private.unlink()
        private.write_bytes(data)
    shutil.rmtree(root / "transformers" / "__pycache__", ignore_errors=True)
    return Site(root, release.version)


@pytest.fixture
def site(release: Release, tmp_path: Path) -> Site:
    return make_site(release, tmp_path / "site")


@dataclass(frozen=True)
class Completed:
    code: int
    out: str
    err: str


def run_hfpatch(*args: str, env: dict[str, str] | None = None, python: str | None = sys.executable) -> Completed:
    """hfpatch as a user runs it: a real process. By default aimed at this interpreter through --python."""
    command = hfpatch_command(*args, python=python)
    # Not from the repository: `-m` would put the source tree, rather than the installed wheel, first on sys.path.
    cwd = tempfile.gettempdir()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False)
    return Completed(done.returncode, done.stdout, done.stderr)


def hfpatch_command(*args: str, python: str | None = sys.executable) -> list[str]:
    command = [sys.executable, "-m", "hfpatch", *args]
    if python is not None and args and not args[0].startswith("-"):
        command += ["--python", python]
    return command


def start_hfpatch(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """hfpatch started in the background (aimed at this interpreter), for runs that must overlap."""
    return subprocess.Popen(
        hfpatch_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )


@pytest.fixture(scope="session", autouse=True)
def _leave_the_test_environment_unpatched() -> Iterator[None]:
    """Tests act on private copies and venvs; the test environment's own transformers must never change."""
    found = _installed_release()
    before = None if found is None else found.source
    yield
    if found is not None:
        assert found.source == before, f"a test changed {found.file}"
        assert not (found.root / ".hfpatch").exists(), f"a test left hfpatch state in {found.root}"


@pytest.fixture(autouse=True)
def _leave_the_process_as_found() -> Iterator[None]:
    path, modules, environ = list(sys.path), set(sys.modules), _environ()
    yield
    assert sys.path == path, "a test changed sys.path"
    assert _environ() == environ, "a test changed the environment"
    leaked = {name for name in set(sys.modules) - modules if name.split(".")[0] == "transformers"}
    assert not leaked, f"a test imported {sorted(leaked)[:3]} into the test process"


def _environ() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}


@dataclass(frozen=True)
class Venv:
    """A real virtual environment with its own pip-installed transformers; the rest comes from the test env."""

    path: Path

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    @property
    def site_packages(self) -> Path:
        (found,) = self.path.glob("lib/python*/site-packages")
        return found

    def pip(self, *args: str) -> None:
        command = [sys.executable, "-m", "pip", "--python", self.python, "--disable-pip-version-check", *args]
        subprocess.run(command, check=True, capture_output=True, timeout=600)


def make_venv(path: Path, transformers: str) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    venv = Venv(path)
    (venv.site_packages / "_test_dependencies.pth").write_text(f"{_dependencies_view(path.parent)}\n")
    venv.pip("install", "--no-deps", "--no-compile", f"transformers=={transformers}")
    return venv


def _dependencies_view(where: Path) -> Path:
    """The test environment's packages but transformers and hfpatch: what transformers needs to import.

    The venv must not see the test environment's own transformers, or pip would find it "already installed" and
    hfpatch would act on it.
    """
    import sysconfig

    purelib = Path(sysconfig.get_paths()["purelib"])
    view = where / "dependencies"
    if view.exists():
        return view
    view.mkdir()
    for entry in purelib.iterdir():
        if entry.name.split("-")[0].split(".")[0].lower() in {"transformers", "hfpatch"}:
            continue
        if entry.name.endswith(".pth") or entry.name.startswith("."):
            continue
        (view / entry.name).symlink_to(entry)
    return view


# ------------------------------------------------------------------------------- shared by the attacking suites

PATCH_ID = "transformers-46618"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """Every entry below root, links not followed: what 'nothing changed' means.

    An entry is known by its inode, mode, size and mtime (links by their text): every way of writing a file changes
    one of them, and it is quick enough to take before and after every run.
    """
    found = {}
    for path in root.rglob("*"):
        info = path.lstat()
        link = str(path.readlink()) if path.is_symlink() else ""
        found[str(path.relative_to(root))] = f"{info.st_ino} {info.st_mode:o} {info.st_size} {info.st_mtime_ns} {link}"
    return found


@pytest.fixture
def buggy_site(site: Site) -> Site:
    """A private copy of a release that needs the patch; the test skips on every other release."""
    from releases import BUGGY, FORM_BY_RELEASE

    if FORM_BY_RELEASE.get(site.version) != BUGGY:
        pytest.skip(f"transformers {site.version} does not carry the code the patch is for")
    return site


def condition_of(done: Completed, patch_id: str = PATCH_ID) -> str:
    """The condition (or action) hfpatch printed for one patch: `  <id>: <label>: <message>`."""
    (line,) = [line for line in (done.out + done.err).splitlines() if line.strip().startswith(f"{patch_id}:")]
    return line.split(":")[1].strip()
