"""Test sessions. `nox` runs them all: lint, types, and the test suite against real transformers releases."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")

# Every release from 5.8.1 to the newest, with the form each one carries (tests/releases.py, from the wheels).
FORM_BY_RELEASE: dict[str, str] = runpy.run_path("tests/releases.py")["FORM_BY_RELEASE"]
FILE_GROUPS: list[list[str]] = runpy.run_path("tests/releases.py")["SAME_FILE"]
NEWEST_BUGGY = [release for release, form in FORM_BY_RELEASE.items() if form == "two-argument-resolving"][-1]
# The whole suite runs on the first release of every distinct dynamic_module_utils.py, on the newest buggy release
# and on the newest release. Every other release carries a file byte-identical to one of those; it gets the tests
# that prove its form and the real loader's behaviour (the drift check, the regression test, verify).
FULL = sorted(
    {group[0] for group in FILE_GROUPS} | {NEWEST_BUGGY, list(FORM_BY_RELEASE)[-1]}, key=list(FORM_BY_RELEASE).index
)
SAME_FILE_AS_A_FULL_RELEASE = [release for release in FORM_BY_RELEASE if release not in FULL]
# Most tests wait on subprocesses (interpreters importing transformers): one worker per core.
PYTEST = ["-n", "auto"]
PER_RELEASE_TESTS = ["tests/test_analysis.py", "tests/test_regression.py", "tests/test_verify.py"]

MAIN_PYTHON = "3.11"
OTHER_PYTHONS = ["3.10", "3.12", "3.13"]


def _let_pyenv_shims_find_every_python() -> None:
    """On machines whose Pythons come from pyenv, `python3.X` only resolves for the versions PYENV_VERSION names."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if "PYENV_VERSION" in os.environ or not versions.is_dir():
        return
    names = sorted((entry.name for entry in versions.iterdir() if entry.name.startswith("3.")), reverse=True)
    main = [name for name in names if name.startswith(MAIN_PYTHON + ".")]
    os.environ["PYENV_VERSION"] = ":".join(main + [name for name in names if name not in main])


_let_pyenv_shims_find_every_python()


def _install_hfpatch(session: nox.Session) -> None:
    # A real wheel build: tests run against what users install, catalog included.
    session.install(".", *nox.project.dependency_groups(PYPROJECT, "test"))


@nox.session(python=MAIN_PYTHON, tags=["matrix"])
@nox.parametrize("transformers", FULL)
def tests(session: nox.Session, transformers: str) -> None:
    """The whole suite against one real transformers release from the package index."""
    _install_hfpatch(session)
    session.install(f"transformers=={transformers}")
    session.run("pytest", *PYTEST, *session.posargs, env={"HFPATCH_EXPECT_TRANSFORMERS": transformers})


@nox.session(python=MAIN_PYTHON, tags=["matrix"])
@nox.parametrize("transformers", SAME_FILE_AS_A_FULL_RELEASE)
def release(session: nox.Session, transformers: str) -> None:
    """The form, the regression test and verify against a release whose file another session tests in full."""
    _install_hfpatch(session)
    session.install(f"transformers=={transformers}")
    expect = {"HFPATCH_EXPECT_TRANSFORMERS": transformers}
    session.run("pytest", *PYTEST, *PER_RELEASE_TESTS, *session.posargs, env=expect)


@nox.session(python=OTHER_PYTHONS, tags=["pythons"])
def other_pythons(session: nox.Session) -> None:
    """The suite on the other supported Pythons, with the newest buggy release."""
    _install_hfpatch(session)
    session.install(f"transformers=={NEWEST_BUGGY}")
    session.run("pytest", *PYTEST, *session.posargs, env={"HFPATCH_EXPECT_TRANSFORMERS": NEWEST_BUGGY})


@nox.session(python=MAIN_PYTHON)
def without_transformers(session: nox.Session) -> None:
    """The suite where transformers is not installed at all."""
    _install_hfpatch(session)
    session.run("pytest", *PYTEST, *session.posargs, env={"HFPATCH_EXPECT_TRANSFORMERS": "none"})


@nox.session(python=MAIN_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """What check and apply cost next to importing transformers (not a test: it prints figures)."""
    session.install(".", f"transformers=={NEWEST_BUGGY}", env={"UV_COMPILE_BYTECODE": "1"})
    session.run("python", "benchmarks/bench.py", *session.posargs)


@nox.session(python=MAIN_PYTHON)
def install_tools(session: nox.Session) -> None:
    """hfpatch installs and runs as a tool: with pipx and with uvx, each in its own environment."""
    session.install("pipx", "uv")
    home = session.create_tmp()
    env = {"PIPX_HOME": f"{home}/pipx", "PIPX_BIN_DIR": f"{home}/bin", "UV_TOOL_DIR": f"{home}/uv-tools"}
    session.run("pipx", "run", "--spec", ".", "hfpatch", "--version", env=env)
    session.run("uvx", "--from", ".", "hfpatch", "list", "--json", env=env)


@nox.session(python=MAIN_PYTHON)
def lint(session: nox.Session) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=MAIN_PYTHON)
def typecheck(session: nox.Session) -> None:
    session.install(".", *nox.project.dependency_groups(PYPROJECT, "typecheck"), "nox")
    session.run("mypy")
