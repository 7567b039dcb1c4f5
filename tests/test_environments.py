"""Other environments: --python on another minor version, several at once, and what check costs to import."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Site, Venv, make_venv, run_hfpatch
from releases import BUGGY, FIXED, FORM_BY_RELEASE

NEWEST_BUGGY = [release for release, form in FORM_BY_RELEASE.items() if form == BUGGY][-1]
FIRST_FIXED = next(release for release, form in FORM_BY_RELEASE.items() if form == FIXED)


def _other_minor_python() -> str | None:
    for minor in (13, 12, 10, 11):
        if minor == sys.version_info.minor:
            continue
        found = shutil.which(f"python3.{minor}")
        if found and subprocess.run([found, "-c", "pass"], capture_output=True, check=False).returncode == 0:
            return found
    return None


@pytest.fixture
def foreign_venv(tmp_path: Path) -> Venv:
    """A venv on another Python minor version than hfpatch's own, with an affected transformers (files only)."""
    python = _other_minor_python()
    if python is None:
        pytest.skip("no Python of another minor version on PATH")
    path = tmp_path / "foreign"
    subprocess.run([python, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    venv = Venv(path)
    venv.pip("install", "--no-deps", "--no-compile", f"transformers=={NEWEST_BUGGY}")
    return venv


def _in(venv: Venv, script: str, *args: str) -> str:
    done = subprocess.run([venv.python, "-c", script, *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_another_python_minor_version_is_patched_from_outside(foreign_venv: Venv) -> None:
    target = foreign_venv.site_packages / "transformers" / "dynamic_module_utils.py"
    # bytecode as the target interpreter wrote it, in a mode that is never checked against the source
    compile_unchecked = (
        "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True, "
        "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
    )
    _in(foreign_venv, compile_unchecked, str(target))
    original = target.read_bytes()
    assert run_hfpatch("check", python=foreign_venv.python).code == 1
    applied = run_hfpatch("apply", python=foreign_venv.python)
    assert applied.code == 0, applied.err
    assert f"Python {_in(foreign_venv, 'import platform; print(platform.python_version())')}" in applied.out
    assert run_hfpatch("check", python=foreign_venv.python).code == 0
    # the target interpreter's own bytecode was rebuilt for the new source, in the same mode
    matches = (
        "import importlib.util, sys, pathlib; src = pathlib.Path(sys.argv[1]); "
        "pyc = pathlib.Path(importlib.util.cache_from_source(str(src))); data = pyc.read_bytes(); "
        "print(data[:4] == importlib.util.MAGIC_NUMBER, int.from_bytes(data[4:8], 'little'), "
        "data[8:16] == importlib.util.source_hash(src.read_bytes()))"
    )
    assert _in(foreign_venv, matches, str(target)) == "True 1 True"
    assert run_hfpatch("revert", python=foreign_venv.python).code == 0
    assert target.read_bytes() == original
    assert _in(foreign_venv, matches, str(target)) == "True 1 True"


def test_several_environments_in_one_run_get_a_result_each_and_the_worst_exit_code(tmp_path: Path) -> None:
    if os.environ.get("HFPATCH_EXPECT_TRANSFORMERS") not in {NEWEST_BUGGY, None}:
        pytest.skip(f"runs in the {NEWEST_BUGGY} sessions only: it installs its own releases")
    affected = make_venv(tmp_path / "affected", NEWEST_BUGGY)
    fixed = make_venv(tmp_path / "fixed", FIRST_FIXED)
    pythons = ["--python", affected.python, "--python", fixed.python]
    done = run_hfpatch("check", "--json", *pythons, python=None)
    assert done.code == 1
    document = json.loads(done.out)
    conditions = [environment["patches"][0]["condition"] for environment in document["environments"]]
    assert conditions == ["needs-patch", "fixed-upstream"]
    assert [environment["python"] for environment in document["environments"]] == [affected.python, fixed.python]
    assert run_hfpatch("apply", *pythons, python=None).code == 0
    assert run_hfpatch("check", *pythons, python=None).code == 0
    broken = run_hfpatch("check", *pythons, "--python", "/nonexistent/python", python=None)
    assert broken.code == 2
    assert "no Python interpreter" in broken.err
    assert broken.out.count("transformers-46618") == 2, "the other environments are still reported"


def _imported_modules(args: list[str], env: dict[str, str]) -> set[str]:
    command = [sys.executable, "-X", "importtime", "-m", "hfpatch", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(Path(env["PYTHONPATH"])))
    assert done.returncode in {0, 1}, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def test_check_imports_neither_libcst_nor_transformers(site: Site) -> None:
    modules = _imported_modules(["check"], site.env())
    assert "hfpatch.engine" in modules, "the measurement saw hfpatch's own imports"
    assert not {name for name in modules if name.split(".")[0] in {"libcst", "transformers", "difflib"}}


def test_apply_loads_libcst_only_when_it_patches(site: Site) -> None:
    modules = _imported_modules(["apply"], site.env())
    loaded = any(name.split(".")[0] == "libcst" for name in modules)
    assert loaded == (FORM_BY_RELEASE[site.version] == BUGGY)
    assert not {name for name in modules if name.split(".")[0] == "transformers"}
    again = _imported_modules(["apply"], site.env())
    assert not {name for name in again if name.split(".")[0] == "libcst"}, "a no-op apply needs no parser"
