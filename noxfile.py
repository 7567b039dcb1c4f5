"""Test sessions.

`nox` (the README's test command) runs the default sessions: lint, types, the fast suite (no transformers), the
transformers tests on the newest affected release of each patch and on the newest release (installed by uv, and once
by pip), and hfpatch as a pipx/uvx tool. `nox -t matrix` runs the fast suite on the other Pythons, the README's
snippets, and the per-release proof on every release the catalog lists. `.ci/run` runs both. `nox -s mutants`
measures the fast suite against hand-written defects; `nox -s bench` prints what check and apply cost; `nox -s coverage`
measures how much of real upstream fixes (patch releases) `hfpatch new` carries.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")
MAIN_PYTHON = "3.11"
OTHER_PYTHONS = ["3.10", "3.12", "3.13"]
WORKERS = ["-n", "2"]  # the machine has 2 cores; most tests wait on subprocesses

# What the sessions install, by patch (tests/releases.py, read off the wheels).
_RELEASES = runpy.run_path("tests/releases.py")
MATRIX: dict[str, list[str]] = _RELEASES["MATRIX"]
REPRESENTATIVES: dict[str, list[str]] = _RELEASES["REPRESENTATIVES"]
NEWEST_AFFECTED: dict[str, str] = _RELEASES["NEWEST_AFFECTED"]
INSTALLED_BY_PIP: list[str] = _RELEASES["INSTALLED_BY_PIP"]


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


EVERY_RELEASE: list[str] = sorted({release for releases in MATRIX.values() for release in releases}, key=_version)
PER_RELEASE_TESTS = [
    "tests/test_every_patch.py",
    "tests/test_release.py",
    "tests/test_regression.py",
    "tests/test_verify.py",
]


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


@nox.session(python=MAIN_PYTHON)
def fast(session: nox.Session) -> None:
    """The whole suite where transformers is absent: the pure core, the engine on made-up distributions."""
    _install_hfpatch(session)
    session.run("pytest", *WORKERS, *session.posargs, env={"HFPATCH_EXPECT_TRANSFORMERS": "none"})


@nox.session(python=OTHER_PYTHONS, tags=["matrix"], default=False)
def other_pythons(session: nox.Session) -> None:
    """The same suite on every other supported Python."""
    _install_hfpatch(session)
    session.run("pytest", *WORKERS, *session.posargs, env={"HFPATCH_EXPECT_TRANSFORMERS": "none"})


def _transformers_session(session: nox.Session, release: str, installer: str, tests: list[str]) -> None:
    _install_hfpatch(session)
    if installer == "pip":  # pip writes RECORD with CRLF line endings and timestamp bytecode, as users' images do
        session.install("pip")
        session.run("python", "-m", "pip", "install", "-q", "--disable-pip-version-check", f"transformers=={release}")
    else:
        session.install(f"transformers=={release}")
    env = {"HFPATCH_EXPECT_TRANSFORMERS": release}
    session.run("pytest", *WORKERS, "-m", "transformers", *tests, *session.posargs, env=env)


@nox.session(python=MAIN_PYTHON)
@nox.parametrize("release", [release for releases in REPRESENTATIVES.values() for release in releases])
def transformers(session: nox.Session, release: str) -> None:
    """Every transformers test on the newest affected release of each patch and on the newest, installed by uv."""
    _transformers_session(session, release, "uv", [])


@nox.session(python=MAIN_PYTHON)
@nox.parametrize("release", INSTALLED_BY_PIP)
def transformers_pip(session: nox.Session, release: str) -> None:
    """Every transformers test on the newest affected release installed by pip (CRLF RECORD)."""
    _transformers_session(session, release, "pip", [])


@nox.session(python=MAIN_PYTHON, tags=["matrix"], default=False)
@nox.parametrize("release", EVERY_RELEASE)
def release(session: nox.Session, release: str) -> None:
    """The per-release proof: the file is the known form, the real code fails, works after apply, fails after revert."""
    _transformers_session(session, release, "uv", PER_RELEASE_TESTS)


@nox.session(python=MAIN_PYTHON, tags=["matrix"], default=False)
def readme(session: nox.Session) -> None:
    """The README's first command, its Dockerfile and its CI lines, run as written in fresh venvs."""
    _install_hfpatch(session)
    session.run("pytest", *WORKERS, "-m", "readme", "tests/test_readme.py", *session.posargs)


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
    session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "typecheck"), "nox")
    session.run("mypy")
    for script in sorted(Path("patches").glob("*/*.py")):
        session.run("mypy", str(script))


@nox.session(python=MAIN_PYTHON, default=False)
def mutants(session: nox.Session) -> None:
    """Apply each hand-written defect to a copy of hfpatch and run the fast suite against it: every one must fail."""
    _install_hfpatch(session)
    session.run("python", "scripts/mutants.py", *session.posargs)


@nox.session(python=MAIN_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """What check and apply cost next to importing transformers (not a test: it prints figures)."""
    session.install("pip")
    session.run("python", "-m", "pip", "install", "-q", ".", f"transformers=={NEWEST_AFFECTED['transformers-46618']}")
    session.run("python", "benchmarks/bench.py", *session.posargs)


@nox.session(python=MAIN_PYTHON, default=False)
def coverage(session: nox.Session) -> None:
    """How much of real upstream fixes `hfpatch new` carries, file by file over patch releases (prints a table).

    Wheels, venvs and torch are kept in the user's cache directory (~/.cache/hfpatch-coverage) for the next run;
    arguments after `--` go to benchmarks/coverage.py (`-- --set tuning`, `-- --pair transformers==4.53.1`).
    """
    session.install(".", "pip>=25.1", "uv")  # the script downloads wheels with pip and builds venvs with uv
    session.run("python", "benchmarks/coverage.py", *session.posargs)
