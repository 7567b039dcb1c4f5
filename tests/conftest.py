"""What the transformers tests share: the release under test, private copies of it, venvs, running hfpatch for real;
and two guards every test runs under (the test environment is never patched; the test process is left as found).

The release is whatever the session installed (the nox matrix installs one per session). Without transformers, every
test that needs it skips at its first fixture; the toy tests (tests/toy.py) need nothing from here but the guards.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.version import Version
from releases import ABSENT, BUGGY, FIRST_DEFINED_IN, FORM_BY_RELEASE

from hfpatch import catalog, entry
from hfpatch.entry import Patch

PATCH_ID = "transformers-46618"
TARGET = "transformers/dynamic_module_utils.py"
REPOSITORY = Path(__file__).resolve().parent.parent
EXPECT_VARIABLE = "HFPATCH_EXPECT_TRANSFORMERS"


@pytest.fixture(scope="session")
def patch() -> Patch:
    """The catalog entry as hfpatch itself finds it (the wheel's hfpatch/patches, or patches/ in a checkout)."""
    return entry.load(catalog.builtin_catalog() / PATCH_ID)


# ----------------------------------------------------------------------------------------- the release under test


@dataclass(frozen=True)
class Release:
    """The transformers release installed in the test environment."""

    version: str
    root: Path  # the directory that holds the transformers package (site-packages)
    dist_info: Path

    @property
    def file(self) -> Path:
        return self.root / TARGET

    @property
    def source(self) -> bytes:
        return self.file.read_bytes()

    @property
    def form(self) -> str:
        """The form releases.py says this release carries; a newer release missing there fails, it does not skip."""
        form = FORM_BY_RELEASE.get(self.version)
        if form is None and Version(self.version) < Version(FIRST_DEFINED_IN):
            return ABSENT
        if form is None:
            pytest.fail(f"transformers {self.version} is not in tests/releases.py; fingerprint it and add it")
        return form


def _installed_release() -> Release | None:
    # find_spec of a top-level package reads the path only: the test process never imports transformers.
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(root.glob("transformers-*.dist-info"))
    if len(found) != 1:
        pytest.fail(f"{root} holds {len(found)} transformers dist-info directories; reinstall transformers")
    return Release(importlib.metadata.PathDistribution(found[0]).version, root, found[0])


@pytest.fixture(scope="session")
def release() -> Release:
    found = _installed_release()
    if found is None:
        expected = os.environ.get(EXPECT_VARIABLE)
        if expected not in (None, "none"):
            pytest.fail(f"the session should have installed transformers {expected}, and none is installed")
        pytest.skip("transformers is not installed here (the nox matrix installs one release per session)")
    return found


@pytest.fixture
def buggy_release(release: Release) -> Release:
    """The release, where it carries the code the patch is for; the test skips on every other release."""
    if release.form != BUGGY:
        pytest.skip(f"transformers {release.version} does not carry the code the patch is for")
    return release


# --------------------------------------------------------------------------------- private copies of the release


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would steer hfpatch from outside the test."""
    env = {key: value for key, value in os.environ.items() if key not in {"HFPATCH_FAULT", "HFPATCH_CATALOG"}}
    env.update(extra)
    return env


@dataclass(frozen=True)
class Site:
    """A private copy of the release, imported first through PYTHONPATH.

    Files are hard links to the test environment's copy, except those hfpatch writes, which are real copies: a
    test would catch hfpatch writing through a link, since the guard below compares the environment's own file.
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

    @property
    def backup(self) -> Path:
        return self.state_dir / PATCH_ID / "original"

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(PYTHONPATH=str(self.root), **extra)


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another filesystem (a nox session's venv beside the checkout, say): copy instead
        shutil.copy2(source, destination)


def make_site(release: Release, root: Path) -> Site:
    root.mkdir(parents=True)
    shutil.copytree(release.root / "transformers", root / "transformers", copy_function=_link_or_copy)
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


@pytest.fixture
def buggy_site(buggy_release: Release, tmp_path: Path) -> Site:
    return make_site(buggy_release, tmp_path / "site")


# ------------------------------------------------------------------------------------------- running hfpatch


@dataclass(frozen=True)
class Completed:
    code: int
    out: str
    err: str


def hfpatch_command(*args: str, python: str | None = sys.executable) -> list[str]:
    """`python -m hfpatch <command> --patch transformers-46618 [--python ...]`: the built-in catalog's entry only."""
    command = [sys.executable, "-m", "hfpatch", *args]
    if args and not args[0].startswith("-"):
        command += ["--patch", PATCH_ID]
        if python is not None:
            command += ["--python", python]
    return command


def run_hfpatch(*args: str, env: dict[str, str] | None = None, python: str | None = sys.executable) -> Completed:
    """hfpatch as a user runs it: a real process, by default aimed at this interpreter through --python."""
    # Not from the repository: `-m` would put the checkout first on sys.path instead of the installed hfpatch.
    done = subprocess.run(
        hfpatch_command(*args, python=python),
        capture_output=True,
        text=True,
        env=clean_env() if env is None else env,
        cwd=tempfile.gettempdir(),
        timeout=300,
        check=False,
    )
    return Completed(done.returncode, done.stdout, done.stderr)


def condition_of(done: Completed) -> str:
    """The label hfpatch printed for the patch (`  <id>: <label>: <sentence>`): a condition, or what it did."""
    (line,) = [line for line in done.out.splitlines() if line.strip().startswith(f"{PATCH_ID}:")]
    return line.split(":")[1].strip()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """Every entry below root, links not followed, by inode, mode, size, mtime (links by their text): what
    "nothing changed" means. Every way of writing a file changes one of them."""
    found = {}
    for path in root.rglob("*"):
        info = path.lstat()
        link = str(path.readlink()) if path.is_symlink() else ""
        found[str(path.relative_to(root))] = f"{info.st_ino} {info.st_mode:o} {info.st_size} {info.st_mtime_ns} {link}"
    return found


def record_entry(relative_file: str, data: bytes) -> str:
    """The RECORD line (without its ending) that describes `data` installed at `relative_file` (PEP 376/627)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"{relative_file},sha256={digest},{len(data)}"


def record_with_line(record: bytes, old_line: str, new_line: str) -> bytes:
    """RECORD with one line's text replaced and every other byte, line endings included, as it was."""
    old, new = old_line.encode("utf-8"), new_line.encode("utf-8")
    assert record.count(old) == 1, f"{old_line!r} is not once in RECORD"
    return record.replace(old, new)


def record_line(record: bytes, relative_file: str) -> str:
    """The text of RECORD's line for `relative_file`, without its line ending."""
    (line,) = [line for line in record.decode("utf-8").splitlines() if line.startswith(f"{relative_file},")]
    return line


# ------------------------------------------------------------------------------------------------------- venvs


@dataclass(frozen=True)
class Venv:
    """A real virtual environment whose transformers pip installed; its other packages come from the test env."""

    path: Path

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    @property
    def site_packages(self) -> Path:
        (found,) = self.path.glob("lib/python*/site-packages")
        return found

    @property
    def file(self) -> Path:
        return self.site_packages / TARGET

    def dist_info(self) -> Path:
        (found,) = self.site_packages.glob("transformers-*.dist-info")
        return found

    def pip(self, *args: str) -> None:
        """The test environment's pip acting on the venv (pip --python): the venv needs no pip of its own."""
        command = [sys.executable, "-m", "pip", "--python", self.python, "--disable-pip-version-check", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


def make_venv(path: Path, transformers: str) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    venv = Venv(path)
    (venv.site_packages / "_test_dependencies.pth").write_text(f"{dependencies_view(path.parent)}\n")
    venv.pip("install", "--no-deps", "--no-compile", f"transformers=={transformers}")
    return venv


def dependencies_view(where: Path) -> Path:
    """The test environment's packages without transformers and hfpatch: what transformers needs to import.

    The venv must not see the test environment's own transformers, or pip would call it installed already and
    hfpatch would act on it.
    """
    purelib = Path(sysconfig.get_paths()["purelib"])
    view = where / "dependencies"
    if view.exists():
        return view
    view.mkdir()
    for installed in purelib.iterdir():
        if installed.name.split("-")[0].split(".")[0].lower() in {"transformers", "hfpatch", "_editable_impl_hfpatch"}:
            continue
        if installed.name.endswith(".pth") or installed.name.startswith("."):
            continue
        (view / installed.name).symlink_to(installed)
    return view


# ---------------------------------------------------------------------------------------------------- the guards


def _state_dirs() -> list[Path]:
    roots = {Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"])}
    found = _installed_release()
    if found is not None:
        roots.add(found.root)
    return [root / ".hfpatch" for root in sorted(roots)]


@pytest.fixture(scope="session", autouse=True)
def _leave_the_test_environment_unpatched() -> Iterator[None]:
    """Tests act on private copies and venvs: the test environment's own transformers never changes, and no
    hfpatch state is ever left in its site-packages."""
    found = _installed_release()
    files = [] if found is None else [found.file, found.dist_info / "RECORD"]
    before = {path: path.read_bytes() for path in files}
    present_before = {path for path in _state_dirs() if path.exists()}
    yield
    changed = [str(path) for path in files if path.read_bytes() != before[path]]
    assert not changed, f"a test changed the test environment's own {changed}"
    left = [str(path) for path in _state_dirs() if path.exists() and path not in present_before]
    assert not left, f"a test left hfpatch state in the test environment: {left}"


# Packages a test must never import into the test process: the code under patch runs in subprocesses only.
_NEVER_IMPORTED = {"transformers", "transformers_modules", "toypkg"}


@pytest.fixture(autouse=True)
def _leave_the_process_as_found() -> Iterator[None]:
    path, modules, environ = list(sys.path), dict(sys.modules), _environ()
    yield
    assert sys.path == path, "a test changed sys.path"
    assert _environ() == environ, "a test changed os.environ"
    replaced = [name for name, module in modules.items() if sys.modules.get(name) is not module]
    assert not replaced, f"a test removed or replaced {sorted(replaced)[:3]} in sys.modules"
    leaked = sorted(name for name in set(sys.modules) - set(modules) if name.split(".")[0] in _NEVER_IMPORTED)
    assert not leaked, f"a test imported {leaked[:3]} into the test process"


def _environ() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}
