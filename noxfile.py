"""Test sessions.

`nox` (the README's test command) runs the default sessions: lint, types, the fast suite (no transformers), the
transformers tests on the newest affected release of the first two patches and on the newest release (installed by
uv, and once by pip), and hfpatch as a pipx/uvx tool. `nox -t matrix` runs the fast suite on the other Pythons, the
README's snippets, and the proof of every patch on the releases tests/releases.py's PROOF names (one session a
release; the patches whose probes need torch in one session). `.ci/run` runs both. `nox -s every_release` proves
every patch on every release its entry names; `nox -s mutants` measures the fast suite against hand-written defects;
`nox -s bench` prints what check and apply cost;
`nox -s coverage` measures how much of real upstream fixes (patch releases) `hfpatch new` carries.
"""

from __future__ import annotations

import os
import runpy
import shutil
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
PROOF: dict[str, tuple[str, list[str]]] = _RELEASES["PROOF"]
PROBE_NEEDS: dict[str, list[str]] = _RELEASES["PROBE_NEEDS"]
REPRESENTATIVES: list[str] = _RELEASES["REPRESENTATIVES"]
NEWEST_AFFECTED: dict[str, str] = _RELEASES["NEWEST_AFFECTED"]
INSTALLED_BY_PIP: list[str] = _RELEASES["INSTALLED_BY_PIP"]


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def _requirements(patch_ids: list[str]) -> list[str]:
    """DIST==VERSION for every release the patches are proven on, by distribution and version."""
    found = {(PROOF[patch_id][0], release) for patch_id in patch_ids for release in PROOF[patch_id][1]}
    return [f"{dist}=={release}" for dist, release in sorted(found, key=lambda each: (each[0], _version(each[1])))]


NEEDING = sorted(PROBE_NEEDS)
# The releases of the patches whose probes need torch: release_torch proves those patches there, and only those
# (torch makes every import of transformers cost seconds more). Every other patch is proven without torch, each
# release in a session of its own: a pinned release is in both.
WITH_TORCH = _requirements(NEEDING)
PLAIN = _requirements(sorted(set(PROOF) - set(NEEDING)))
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


_BUILT: list[str] = []  # the wheel of this checkout, built once per nox run


def _hfpatch_wheel(session: nox.Session) -> str:
    """A real wheel build (tests run against what users install, catalog included), once for every session of the
    run: each session installs the same file instead of building its own."""
    from nox.virtualenv import HAS_UV, UV

    if not HAS_UV:  # nox without uv: each session builds and installs the checkout itself
        return "."
    if not _BUILT:
        # One directory a nox process: .ci/run runs two side by side, and neither may remove the other's wheel.
        out = Path(".nox", f"_hfpatch-wheel-{os.getpid()}")
        shutil.rmtree(out, ignore_errors=True)
        session.run_install(UV, "build", "-q", "--wheel", "--out-dir", str(out), ".", external=True)
        built = list(out.glob("hfpatch-*.whl"))
        if not built:  # --no-install (nox -R) builds nothing, and installs nothing either
            return "."
        (wheel,) = built
        _BUILT.append(str(wheel))
    return _BUILT[0]


def _install_hfpatch(session: nox.Session) -> None:
    # Compiled at install (uv leaves bytecode out by default): where PYTHONDONTWRITEBYTECODE is set, every hfpatch a
    # test starts would otherwise compile hfpatch and libcst from source again (0.4 s of CPU for each apply). A
    # release under test is installed as its session says, never through here.
    env = {"UV_COMPILE_BYTECODE": "1"}
    session.install(_hfpatch_wheel(session), *nox.project.dependency_groups(PYPROJECT, "test"), env=env)


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


def _expect(requirement: str, **more: str) -> dict[str, str]:
    """What the tests are told the session installed: they fail, never skip, where it is not there."""
    distribution, _, version = requirement.partition("==")
    transformers = version if distribution == "transformers" else "none"
    return {"HFPATCH_EXPECT_TRANSFORMERS": transformers, "HFPATCH_EXPECT_RELEASE": requirement, **more}


def _transformers_session(session: nox.Session, release: str, installer: str, tests: list[str]) -> None:
    _install_hfpatch(session)
    if installer == "pip":  # pip writes RECORD with CRLF line endings and timestamp bytecode, as users' images do
        session.install("pip")
        session.run("python", "-m", "pip", "install", "-q", "--disable-pip-version-check", f"transformers=={release}")
    else:
        session.install(f"transformers=={release}")
    # A representative is not a release of the proof (the newest release is fixed): only what it is is expected.
    env = {"HFPATCH_EXPECT_TRANSFORMERS": release}
    session.run("pytest", *WORKERS, "-m", "transformers", *tests, *session.posargs, env=env)


@nox.session(python=MAIN_PYTHON)
@nox.parametrize("release", REPRESENTATIVES)
def transformers(session: nox.Session, release: str) -> None:
    """Every transformers test on the newest affected release of the first two patches and on the newest (uv)."""
    _transformers_session(session, release, "uv", [])


@nox.session(python=MAIN_PYTHON)
@nox.parametrize("release", INSTALLED_BY_PIP)
def transformers_pip(session: nox.Session, release: str) -> None:
    """Every transformers test on the newest affected release installed by pip (CRLF RECORD)."""
    _transformers_session(session, release, "pip", [])


@nox.session(python=MAIN_PYTHON, tags=["matrix"], default=False)
@nox.parametrize("requirement", PLAIN)
def release(session: nox.Session, requirement: str) -> None:
    """The proof of every patch on one release of its distribution (tests/releases.py's PROOF), installed by uv."""
    _prove_on(session, requirement)


def _prove_on(session: nox.Session, requirement: str) -> None:
    _install_hfpatch(session)
    session.install(requirement)
    session.run(
        "pytest", *WORKERS, "-m", "transformers", *PER_RELEASE_TESTS, *session.posargs, env=_expect(requirement)
    )


# A fixed text can depend on the Python it runs on (transformers-cve-2025-6051's patterns need the regex package
# before 3.11): one pin, whose release the most entries concern, proven on the oldest supported Python too.
OLDEST_PYTHON = OTHER_PYTHONS[0]
ON_THE_OLDEST_PYTHON = ["transformers==4.46.3"]


@nox.session(python=OLDEST_PYTHON, tags=["matrix"], default=False)
@nox.parametrize("requirement", ON_THE_OLDEST_PYTHON)
def release_oldest_python(session: nox.Session, requirement: str) -> None:
    """The proof of every patch on a pinned release, on the oldest supported Python."""
    _prove_on(session, requirement)


def _with_what_probes_need(session: nox.Session) -> None:
    """torch by pip (on Python 3.11 a CPU build from this machine's disk; uv would download a CUDA build), with
    whatever else the probes need, once."""
    needs = sorted({need for patch_id in NEEDING for need in PROBE_NEEDS[patch_id]})
    session.install("pip")
    session.run("python", "-m", "pip", "install", "-q", "--disable-pip-version-check", *needs)


@nox.session(python=MAIN_PYTHON, tags=["matrix"], default=False)
def release_torch(session: nox.Session) -> None:
    """The proof of the patches whose probes need torch, on each of their releases in turn: torch is installed
    once, then each release over the one before it (uv keeps torch). The release's other patches and tests are the
    `release` session's."""
    if not WITH_TORCH:
        session.skip("no patch's probe needs torch")
    _install_hfpatch(session)
    _with_what_probes_need(session)
    for requirement in WITH_TORCH:
        session.install(requirement)
        env = _expect(requirement, HFPATCH_EXPECT_PROBE_NEEDS="1")
        session.run("pytest", *WORKERS, "-m", "transformers", "tests/test_every_patch.py", *session.posargs, env=env)


@nox.session(python=MAIN_PYTHON, default=False)
def every_release(session: nox.Session) -> None:
    """The whole proof: every patch on every release its entry names, one release after another in one venv
    (not in CI: about an hour). `nox -s every_release -- PATCH_ID ...` proves only those patches."""
    import json

    _install_hfpatch(session)
    chosen = session.posargs or sorted(PROOF)
    if any(patch_id in PROBE_NEEDS for patch_id in chosen):
        _with_what_probes_need(session)
    named: set[tuple[str, str]] = set()
    for patch_id in chosen:
        data = json.loads(Path("patches", patch_id, "patch.json").read_text(encoding="utf-8"))
        releases = {release for file in data["files"] for known in file["known_files"] for release in known["releases"]}
        if "releases_read" in data:  # the others are known only so that check need not parse them
            oldest, newest = (_version(release) for release in data["releases_read"])
            releases = {release for release in releases if oldest <= _version(release) <= newest}
        named.update((data["distribution"], release) for release in releases)
    for distribution, release in sorted(named, key=lambda each: (each[0], _version(each[1]))):
        requirement = f"{distribution}=={release}"
        session.install(requirement)
        env = _expect(requirement, HFPATCH_EXPECT_RELEASE="every")
        session.run("pytest", *WORKERS, "-m", "transformers", "tests/test_every_patch.py", env=env)


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
    session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "typecheck"), "nox", "coverage>=7.10")
    session.run("mypy")
    for script in sorted(Path("patches").glob("*/*.py")):
        session.run("mypy", str(script))


@nox.session(python=MAIN_PYTHON, default=False)
def mutants(session: nox.Session) -> None:
    """Apply each hand-written defect to a copy of hfpatch and run the fast suite against it: every one must fail.
    What each test reaches is recorded once under coverage (following every process it starts), then each mutant
    runs first the tests that reach the lines it changes, and the whole suite only if those pass."""
    _install_hfpatch(session)
    session.install("coverage>=7.10")
    session.run("python", "scripts/mutants.py", *session.posargs)


@nox.session(python=MAIN_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """What check and apply cost next to importing transformers (not a test: it prints figures)."""
    session.install("pip")
    session.run("python", "-m", "pip", "install", "-q", ".", f"transformers=={NEWEST_AFFECTED['transformers-46618']}")
    session.run("python", "benchmarks/bench.py", *session.posargs)


@nox.session(python=MAIN_PYTHON, default=False)
def bench_three_files(session: nox.Session) -> None:
    """What check and apply cost for a patch of three files, written by `hfpatch new` from the package index."""
    session.install("pip")
    session.run("python", "-m", "pip", "install", "-q", ".", "transformers==5.5.0")
    session.run("python", "benchmarks/bench.py", "--three-files", *session.posargs)


@nox.session(python=MAIN_PYTHON, default=False)
def coverage(session: nox.Session) -> None:
    """How much of real upstream fixes `hfpatch new` carries, file by file over patch releases (prints a table).

    Wheels, venvs and torch are kept in the user's cache directory (~/.cache/hfpatch-coverage) for the next run;
    arguments after `--` go to benchmarks/coverage.py (`-- --set tuning`, `-- --pair transformers==4.53.1`).
    """
    session.install(".", "pip>=25.1", "uv")  # the script downloads wheels with pip and builds venvs with uv
    session.run("python", "benchmarks/coverage.py", *session.posargs)
