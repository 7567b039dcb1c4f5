"""The fixtures of the transformers tests (the release under test, private copies of it, venvs), and two guards every
test runs under: the test environment is never patched, and the test process is left as found. The helpers every
test shares are in tests/support.py.

The release is whatever the session installed (the nox matrix installs one per session). Without transformers, every
test that needs it skips at its first fixture; the toy tests (tests/toy.py) need nothing from here but the guards.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.version import Version
from releases import ABSENT, BUGGY, FIRST_DEFINED_IN, FORM_BY_RELEASE
from support import Site, Venv, dependencies_view, make_venv, read_only_command

from hfpatch import catalog, entry
from hfpatch.entry import Patch

PATCH_ID = "transformers-46618"
TARGET = "transformers/dynamic_module_utils.py"
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


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another filesystem (a nox session's venv beside the checkout, say): copy instead
        shutil.copy2(source, destination)


def copy_of_release(release: Release, root: Path) -> Site:
    """A private copy of the release, imported first through PYTHONPATH; every run names --python, this interpreter.

    Files are hard links to the test environment's copy, except those hfpatch writes, which are real copies: a
    test would catch hfpatch writing through a link, since the guard below compares the environment's own file.
    """
    root.mkdir(parents=True)
    shutil.copytree(release.root / "transformers", root / "transformers", copy_function=_link_or_copy)
    shutil.copytree(release.dist_info, root / release.dist_info.name)
    for private in (root / TARGET, root / release.dist_info.name / "RECORD"):
        data = private.read_bytes()
        private.unlink()
        private.write_bytes(data)
    shutil.rmtree(root / "transformers" / "__pycache__", ignore_errors=True)
    return Site(root, "transformers", release.version, TARGET, PATCH_ID, python=sys.executable)


@pytest.fixture
def site(release: Release, tmp_path: Path) -> Site:
    return copy_of_release(release, tmp_path / "site")


@pytest.fixture
def buggy_site(buggy_release: Release, tmp_path: Path) -> Site:
    return copy_of_release(buggy_release, tmp_path / "site")


def transformers_venv(path: Path, transformers: str) -> Venv:
    """A real venv whose transformers pip installed; its other packages come from the test environment."""
    return make_venv(path, f"transformers=={transformers}", view=dependencies_view(path.parent, {"transformers"}))


@pytest.fixture(scope="session")
def read_only_mounts(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip unless this host lets us make a private read-only bind mount (root in a mount namespace)."""
    probe = tmp_path_factory.mktemp("read-only-probe")
    command = read_only_command(probe, ["touch", str(probe / "x")])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except OSError as error:
        pytest.skip(f"cannot run unshare to make a read-only bind mount: {error}")
    if done.returncode == 0 or "Read-only file system" not in done.stderr:
        pytest.skip(
            f"read-only bind mounts are not permitted here: {done.stderr.strip() or 'the mount stays writable'}"
        )


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
    before = {path: path.read_bytes() if path.exists() else None for path in files}  # 4.16.x: no dynamic_module_utils
    present_before = {path for path in _state_dirs() if path.exists()}
    yield
    changed = [str(path) for path in files if (path.read_bytes() if path.exists() else None) != before[path]]
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
