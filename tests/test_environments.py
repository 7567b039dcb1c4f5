"""Other environments: --python on another minor version, a wrapper script, several at once, a venv that shares the
base interpreter's packages, and what check costs to import."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PATCH_ID, Release, copy_of_release
from releases import BUGGY, UPSTREAM_FIXED_FILE_SHA256
from support import Site, clean_env, hfpatch, imports_of, sha256_of, wrapper_python
from toy import PATCH_ID as TOY_PATCH_ID
from toy import make_site as make_toy_site
from toy import site_at as toy_site_at

# ------------------------------------------------------------------------------------ another Python minor version


def _python_of_minor(minor: int) -> str | None:
    """python3.<minor> from PATH, or from pyenv's versions where its shims only resolve the selected version."""
    candidates = [found for found in [shutil.which(f"python3.{minor}")] if found]
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(path) for path in versions.glob(f"3.{minor}.*/bin/python3.{minor}"))
    for candidate in candidates:
        done = subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False)
        if done.returncode == 0:
            return candidate
    return None


def _in(python: str, script: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([python, "-c", script, *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


# The application interpreter's own bytecode of a file: its magic, its flags (1: unchecked hash) and whether its source
# hash is that of the file as it is now.
BYTECODE_OF = (
    "import importlib.util, sys, pathlib; src = pathlib.Path(sys.argv[1]); "
    "data = pathlib.Path(importlib.util.cache_from_source(str(src))).read_bytes(); "
    "print(data[:4] == importlib.util.MAGIC_NUMBER, int.from_bytes(data[4:8], 'little'), "
    "data[8:16] == importlib.util.source_hash(src.read_bytes()))"
)
COMPILE_UNCHECKED = (
    "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True, "
    "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
)


@pytest.mark.transformers
@pytest.mark.parametrize("minor", [10, 12, 13], ids=["python3.10", "python3.12", "python3.13"])
def test_another_python_minor_version_is_patched_from_outside(buggy_site: Site, minor: int) -> None:
    if minor == sys.version_info.minor:
        pytest.skip(f"hfpatch runs on Python 3.{minor} itself here")
    python = _python_of_minor(minor)
    if python is None:
        pytest.skip(f"no Python 3.{minor} here (neither on PATH nor in pyenv's versions)")
    env = buggy_site.env()
    target = str(buggy_site.file)
    # bytecode as the application's interpreter writes it, in a mode that is never checked against the source
    _in(python, COMPILE_UNCHECKED, target, env=env)
    original = buggy_site.file.read_bytes()

    assert hfpatch("check", python=python, env=env, patch=PATCH_ID).code == 1
    applied = hfpatch("apply", python=python, env=env, patch=PATCH_ID)

    assert (applied.code, applied.label(PATCH_ID)) == (0, "patched"), applied.out + applied.err
    assert f"[Python 3.{minor}." in applied.text
    assert sha256_of(buggy_site.file) == UPSTREAM_FIXED_FILE_SHA256
    # the target's own bytecode was rebuilt for the new source, in its mode, with its magic number
    assert _in(python, BYTECODE_OF, target) == "True 1 True"
    assert hfpatch("check", python=python, env=env, patch=PATCH_ID).code == 0
    assert hfpatch("revert", python=python, env=env, patch=PATCH_ID).code == 0
    assert buggy_site.file.read_bytes() == original
    assert _in(python, BYTECODE_OF, target) == "True 1 True"


# ------------------------------------------------------------------------------------ wrappers, several at once


@pytest.mark.transformers
def test_a_wrapper_script_given_to_python_stays_in_the_loop(buggy_site: Site, tmp_path: Path) -> None:
    """Every question hfpatch asks the target, the probe included, goes through the wrapper, never around it to
    the sys.executable it reports: only the wrapper sees the copy it sets up."""
    wrapper = wrapper_python(tmp_path / "bin" / "app-python", buggy_site.root)
    original = buggy_site.file.read_bytes()

    check = hfpatch("check", python=wrapper, patch=PATCH_ID)
    assert (check.code, check.label(PATCH_ID)) == (1, "needs-patch"), check.out + check.err
    assert check.out.startswith(f"{wrapper} [Python ")
    assert f": transformers {buggy_site.version} in {buggy_site.root}\n" in check.text
    assert hfpatch("apply", python=wrapper, patch=PATCH_ID).label(PATCH_ID) == "patched"
    assert sha256_of(buggy_site.file) == UPSTREAM_FIXED_FILE_SHA256
    verify = hfpatch("verify", python=wrapper, patch=PATCH_ID)
    assert (verify.code, verify.label(PATCH_ID)) == (0, "verified"), verify.out + verify.err
    assert "the patch is applied and in effect" in verify.text
    assert hfpatch("revert", python=wrapper, patch=PATCH_ID).label(PATCH_ID) == "reverted"
    assert buggy_site.file.read_bytes() == original


@pytest.mark.transformers
def test_several_environments_in_one_run_get_a_result_each_and_the_worst_exit_code(
    buggy_release: Release, tmp_path: Path
) -> None:
    affected = wrapper_python(tmp_path / "affected" / "python", copy_of_release(buggy_release, tmp_path / "one").root)
    applied_site = copy_of_release(buggy_release, tmp_path / "other")
    applied = wrapper_python(tmp_path / "applied" / "python", applied_site.root)
    assert hfpatch("apply", python=applied, patch=PATCH_ID).code == 0
    pythons = ["--python", affected, "--python", applied]

    done = hfpatch("check", "--json", *pythons, patch=PATCH_ID)

    assert done.code == 1
    environments = json.loads(done.out)["environments"]
    assert [environment["python"] for environment in environments] == [affected, applied]
    assert [environment["patches"][0]["condition"] for environment in environments] == ["needs-patch", "applied"]
    assert [environment["exit_code"] for environment in environments] == [1, 0]
    assert hfpatch("apply", *pythons, patch=PATCH_ID).code == 0
    assert hfpatch("check", *pythons, patch=PATCH_ID).code == 0
    broken = hfpatch("check", *pythons, "--python", "/nonexistent/python", patch=PATCH_ID)
    assert broken.code == 2
    assert "no Python interpreter" in broken.err
    assert broken.out.count(f"{PATCH_ID}: applied:") == 2, "the other environments are still reported"


# ------------------------------------------------------------------------------------ a venv on a base's packages


@dataclass(frozen=True)
class BasePython:
    """A base interpreter (not a venv) whose prefix, and so whose site-packages, belongs to the test."""

    prefix: Path

    @property
    def python(self) -> str:
        return str(self.prefix / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")

    @property
    def site_packages(self) -> Path:
        return self.prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _own_base_python(prefix: Path) -> BasePython:
    """The real base interpreter's executable in a prefix of our own, its standard library linked in entry by
    entry: Python finds its prefix from where its executable lies, and site-packages is then ours to fill."""
    executable = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    base = BasePython(prefix)
    base.site_packages.mkdir(parents=True)
    Path(base.python).parent.mkdir()
    shutil.copy2(executable, base.python)
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (base.site_packages.parent / entry.name).symlink_to(entry)
    for library in stdlib.parent.glob("libpython*"):  # a shared libpython found relative to the executable
        (prefix / "lib" / library.name).symlink_to(library)
    command = [base.python, "-c", "import sys; print(sys.prefix, sys.base_prefix)"]
    answer = subprocess.run(command, capture_output=True, text=True, env=clean_env(), check=False)
    reported = (answer.stdout + answer.stderr).strip()[-300:]
    if reported != f"{prefix} {prefix}":
        pytest.skip(f"cannot make a base interpreter of our own from {executable} here (it reports {reported})")
    return base


@pytest.fixture
def base_python(tmp_path: Path) -> BasePython:
    return _own_base_python(tmp_path / "base")


def _toy_in(site_packages: Path, where: Path) -> Site:
    """The toy distribution installed into `site_packages` (its files moved there), with its catalog in `where`."""
    made = make_toy_site(where)
    for entry in made.root.iterdir():
        entry.rename(site_packages / entry.name)
    return toy_site_at(site_packages, made.team_catalog, made.version)


def _toy_check(toy: Site, python: str, *, pythonpath: Path | None = None) -> tuple[int, list[str]]:
    env = clean_env(HFPATCH_CATALOG=str(toy.team_catalog))
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = hfpatch("check", "--json", patch=TOY_PATCH_ID, python=python, env=env, cwd="/")
    (environment,) = done.document()["environments"]
    (entry,) = environment["patches"]
    assert entry["file"] == str(toy.file), "the test set up the wrong copy"
    return done.code, entry["notes"]


def _venv(python: str, path: Path, *options: str) -> str:
    subprocess.run([python, "-m", "venv", "--without-pip", *options, str(path)], check=True, env=clean_env())
    return str(path / "bin" / "python")


def test_a_venv_with_system_site_packages_is_told_the_file_is_the_base_interpreters(
    base_python: BasePython, tmp_path: Path
) -> None:
    toy = _toy_in(base_python.site_packages, tmp_path / "toy")
    venv = _venv(base_python.python, tmp_path / "venv", "--system-site-packages")

    code, notes = _toy_check(toy, venv)

    assert code == 1
    (note,) = notes
    assert note.startswith(f"{toy.file} belongs to the base interpreter ({base_python.prefix})")
    assert "every venv made from it with --system-site-packages" in note
    # what the note warns of: the venv's apply patched the base interpreter's file
    env = clean_env(HFPATCH_CATALOG=str(toy.team_catalog))
    assert hfpatch("apply", patch=TOY_PATCH_ID, python=venv, env=env, cwd="/").code == 0
    assert _toy_check(toy, base_python.python) == (0, [])


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("base", id="the-base-interpreter-itself"),
        pytest.param("venv", id="a-venvs-own-site-packages"),
        pytest.param("pythonpath", id="a-pythonpath-entry-outside-the-venv"),
    ],
)
def test_no_such_note_where_the_file_is_not_the_base_interpreters(
    base_python: BasePython, tmp_path: Path, where: str
) -> None:
    if where == "base":
        toy, python, pythonpath = _toy_in(base_python.site_packages, tmp_path / "toy"), base_python.python, None
    elif where == "venv":
        python = _venv(base_python.python, tmp_path / "venv", "--system-site-packages")
        own = next((tmp_path / "venv").glob("lib/python*/site-packages"))
        toy, pythonpath = _toy_in(own, tmp_path / "toy"), None
    else:
        python = _venv(base_python.python, tmp_path / "venv")
        toy = make_toy_site(tmp_path / "toy")
        pythonpath = toy.root
    assert _toy_check(toy, python, pythonpath=pythonpath) == (1, [])


# --------------------------------------------------------------------------------------------- what check costs


def _imported_modules(args: list[str], site: Site) -> set[str]:
    done, imported = imports_of(["hfpatch", *args, "--patch", PATCH_ID], env=site.env(), cwd=site.root)
    assert done.code in {0, 1}, done.err[-2000:]
    return imported


@pytest.mark.transformers
def test_check_imports_neither_libcst_nor_transformers(site: Site) -> None:
    modules = _imported_modules(["check"], site)
    assert "hfpatch.engine" in modules, "the measurement saw hfpatch's own imports"
    assert not {name for name in modules if name.split(".")[0] in {"libcst", "transformers", "difflib"}}


@pytest.mark.transformers
def test_apply_loads_libcst_only_when_it_patches(release: Release, site: Site) -> None:
    modules = _imported_modules(["apply"], site)
    loaded = any(name.split(".")[0] == "libcst" for name in modules)
    assert loaded == (release.form == BUGGY)
    assert not {name for name in modules if name.split(".")[0] == "transformers"}
    again = _imported_modules(["apply"], site)
    assert not {name for name in again if name.split(".")[0] == "libcst"}, "a no-op apply needs no parser"
