"""What the tests share, in one place: hfpatch run as a user runs it, a site that holds an installed distribution,
real venvs, what "nothing changed" means, and the RECORD line a file should have.

The RECORD lines are computed here with base64 and hashlib, independently of hfpatch's own wheelrecord, so that a
test of RECORD is never hfpatch checked against itself.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import warm

REPOSITORY = Path(__file__).resolve().parent.parent
# What steers hfpatch from outside a test (fault injection, a catalog): never inherited from the test's own process.
_STEERING = {"HFPATCH_FAULT", "HFPATCH_CATALOG"}


# ----------------------------------------------------------------------------------------- running hfpatch


@dataclass(frozen=True)
class Completed:
    """A finished hfpatch: exit code and both streams."""

    code: int
    out: str
    err: str

    @property
    def flat(self) -> str:
        """stdout with every run of whitespace one space: a sentence as a test reads it, wherever hfpatch's text
        broke its line (it wraps lines longer than 120 characters between words)."""
        return " ".join(self.out.split())

    @property
    def lines(self) -> list[str]:
        """stdout's lines as hfpatch meant them: a line it broke at 120 characters (the further lines indented four
        more than the first) joined again with one space."""
        joined: list[str] = []
        indent = previous = 0
        for line in self.out.splitlines():
            own = len(line) - len(line.lstrip(" "))
            rest = line.strip()
            # The first word hfpatch would not break: a command in backticks is one.
            close = rest.find("`", 1) if rest.startswith("`") else -1
            first = rest[: close + 1] + rest[close + 1 :].split(" ", 1)[0] if close > 0 else rest.split(" ", 1)[0]
            if joined and own == indent + 4 and previous + 1 + len(first) > 120:  # where hfpatch broke it
                joined[-1] += " " + line.strip()
            else:
                joined.append(line)
                indent = own
            previous = len(line)
        return joined

    @property
    def text(self) -> str:
        """stdout with each line hfpatch broke at 120 characters joined again (`lines`), each ending in a newline."""
        return "".join(f"{line}\n" for line in self.lines)

    def label(self, patch_id: str) -> str:
        """The label hfpatch printed for the patch (`  <id>: <label>: <sentence>`): a condition, or what it did."""
        (line,) = [line for line in self.lines if line.strip().startswith(f"{patch_id}:")]
        return line.split(":")[1].strip()

    def document(self) -> dict[str, Any]:
        """The one JSON document of a --json run."""
        parsed: dict[str, Any] = json.loads(self.out)
        return parsed

    def listing(self) -> dict[str, dict[str, str]]:
        """`hfpatch list`'s table: id -> {column heading: cell}, each cell where its heading starts; the legend
        below it (`catalogs: ...`, `here: ...`) is not the table's. The last column (what it fixes) may go on in the
        lines below a row, indented (list wraps it to the terminal's width), or start there (a narrow terminal)."""
        heading, *lines = self.out.splitlines()
        names = [name.strip() for name in heading.split("  ") if name.strip()]
        starts = [heading.index(name) for name in names]
        if lines and lines[0].startswith(" "):  # the last heading, below the others
            names.append(lines.pop(0).strip())
        rows: dict[str, dict[str, str]] = {}
        last: dict[str, str] | None = None
        for line in lines:
            if line.startswith(" ") and last is not None:
                last[names[-1]] = f"{last.get(names[-1], '')} {line.strip()}".strip()
                continue
            if line.split(" ", 1)[0].endswith(":"):
                break
            cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
            last = dict(zip(names, cells, strict=False))
            rows[cells[0].removesuffix(" *")] = last
        return rows

    def table(self) -> dict[str, tuple[str, str, str]]:
        """`hfpatch new`'s release table: release -> (form, verdict, reason)."""
        lines = self.out.splitlines()
        start = next(index for index, line in enumerate(lines) if line.startswith("release "))
        rows = {}
        for line in lines[start + 1 :]:
            if not line.strip() or line.startswith(("note:", "wrote ", "not safe", " ")):
                break
            release, form, verdict, reason = line.split(None, 3)
            rows[release] = (form, verdict, reason)
        return rows


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would steer hfpatch from outside the test."""
    env = {key: value for key, value in os.environ.items() if key not in _STEERING}
    env.update(extra)
    return env


def python_path(*first: Path) -> str:
    """A PYTHONPATH of `first`, then the one this process was given (scripts/mutants.py puts hfpatch's copy there)."""
    return os.pathsep.join([*(str(path) for path in first), *filter(None, [os.environ.get("PYTHONPATH")])])


def run(
    command: list[str], *, env: dict[str, str] | None = None, cwd: Path | str | None = None, **how: Any
) -> Completed:
    """Any command as a real process (`how`: subprocess.run's other options, such as user= and group=)."""
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=clean_env() if env is None else env,
        cwd=tempfile.gettempdir() if cwd is None else cwd,
        timeout=how.pop("timeout", 300),
        check=False,
        **how,
    )
    return Completed(done.returncode, done.stdout, done.stderr)


def default_sigint() -> None:
    """A preexec_fn: SIGINT as a terminal's Ctrl-C meets a program. A shell starts a background job (`nox &`, some
    CI runners) with SIGINT ignored, every child inherits that, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def hfpatch_command(*args: str, patch: str | None = None, python: str | None = None) -> list[str]:
    """`python -m hfpatch ARGS [--patch ID] [--python PATH]`; the selection only after a command, not after --help."""
    command = [sys.executable, "-m", "hfpatch", *args]
    if args and not args[0].startswith("-"):
        command += ["--patch", patch] if patch is not None else []
        command += ["--python", python] if python is not None else []
    return command


def hfpatch(
    *args: str,
    patch: str | None = None,
    python: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    **how: Any,
) -> Completed:
    """hfpatch as a user runs it: a real process (`patch`, `python`: the --patch and --python it names). Run from the
    temporary directory by default, never from the checkout, where `-m` would put the checkout first on sys.path
    instead of the hfpatch under test. The process starts warm (tests/warm.py: forked from one that has imported
    hfpatch) wherever that is the same as a fresh `python -m hfpatch`; `run(hfpatch_command(...))` always starts one."""
    command = hfpatch_command(*args, patch=patch, python=python)
    environ = clean_env() if env is None else env
    where = tempfile.gettempdir() if cwd is None else str(cwd)
    done = warm.run_hfpatch(command[3:], env=environ, cwd=where, how=how, sigint=default_sigint)
    if done is not None:
        return Completed(*done)
    return run(command, env=environ, cwd=where, **how)


def imports_of(
    module_args: list[str], *, env: dict[str, str] | None = None, cwd: Path | str | None = None
) -> tuple[Completed, set[str]]:
    """`python -X importtime -m MODULE ARGS` as a real process, and every module it imported."""
    done = run([sys.executable, "-X", "importtime", "-m", *module_args], env=env, cwd=cwd)
    imported = {line.split("|")[-1].strip() for line in done.err.splitlines() if line.startswith("import time:")}
    return done, imported


def in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Completed:
    """hfpatch's cli.main in this process, its output captured: for tables of many runs."""
    from hfpatch import cli

    capsys.readouterr()
    code = cli.main(argv)
    captured = capsys.readouterr()
    return Completed(code, captured.out, captured.err)


def succeeded(done: Completed) -> Completed:
    """A run that must have worked: exit 0 and no traceback."""
    assert done.code == 0, done.out + done.err
    assert "Traceback" not in done.err, done.err
    return done


# A run that HFPATCH_FAULT killed where it meant to, and the points it can be killed at, in the order a run meets
# them (hfpatch.executor; the last three once for each file, `<point>#2` the second time).
KILLED = -signal.SIGKILL
APPLY_FAULTS = [
    "apply:after-backup",
    "apply:after-state-applying",
    "apply:after-write",
    "apply:after-RECORD",
    "apply:after-bytecode",
]
REVERT_FAULTS = [
    "revert:after-state-reverting",
    "revert:after-write",
    "revert:after-RECORD",
    "revert:after-bytecode",
]

_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 99; shift; exec "$@"'


def read_only_command(directory: Path, command: list[str]) -> list[str]:
    """`command` in a private mount namespace where `directory` is a read-only bind mount (exit 99: no mount)."""
    return ["unshare", "-m", "sh", "-c", _READ_ONLY, "sh", str(directory), *command]


def run_read_only(site: Site, *args: str, directory: Path | None = None) -> Completed:
    """hfpatch in a private mount namespace where the site (or `directory`, a part of it) is a read-only bind
    mount, as in a running container. Tests that call it use the read_only_mounts fixture (conftest)."""
    done = run(read_only_command(directory or site.root, site.command(*args)), env=site.env())
    assert done.code != 99, f"the read-only bind mount failed: {done.err}"
    return done


def wrapper_python(path: Path, root: Path) -> str:
    """An interpreter as some deployments give it to --python: a script that puts `root` on the path (as a venv or
    an image's PYTHONPATH would) and execs this Python. Several of them are several environments."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nPYTHONPATH={root} exec {sys.executable} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return str(path)


# ------------------------------------------------------------------------------------------------ sites


@dataclass(frozen=True)
class Site:
    """A directory that holds an installed distribution (its package, a dist-info with RECORD), imported first
    through PYTHONPATH, and the one patch a test acts on there. `catalog`: a catalog of the test's own (through
    HFPATCH_CATALOG); `python`: the --python every run names (None: hfpatch acts on its own interpreter)."""

    root: Path
    distribution: str
    version: str
    relative_file: str
    patch_id: str
    catalog: Path | None = None
    python: str | None = None

    @property
    def file(self) -> Path:
        return self.root / self.relative_file

    @property
    def team_catalog(self) -> Path:
        """The site's own catalog, which holds its patch (a site of a built-in patch has none)."""
        assert self.catalog is not None, f"{self.patch_id} is a patch of the built-in catalog"
        return self.catalog

    @property
    def dist_info(self) -> Path:
        (found,) = self.root.glob(f"{self.distribution}-*.dist-info")
        return found

    @property
    def record(self) -> Path:
        return self.dist_info / "RECORD"

    @property
    def state_dir(self) -> Path:
        return self.root / ".hfpatch"

    @property
    def backup(self) -> Path:
        """hfpatch's copy of the file's original bytes."""
        return self.state_dir.joinpath("files", *self.relative_file.split("/"), "original")

    @property
    def state(self) -> Path:
        """hfpatch's state of the site's patch."""
        return self.state_dir / self.patch_id / "state.json"

    @property
    def file_state(self) -> Path:
        """hfpatch's state of the site's file."""
        return self.backup.with_name("state.json")

    @property
    def holds_state(self) -> bool:
        """Whether hfpatch keeps any state or backup here (its lock aside)."""
        return self.state_dir.is_dir() and any(path.name != "lock" for path in self.state_dir.iterdir())

    def env(self, **extra: str) -> dict[str, str]:
        env = clean_env()
        # The site first; an existing PYTHONPATH stays behind it (scripts/mutants.py puts hfpatch's copy there).
        env["PYTHONPATH"] = python_path(self.root)
        if self.catalog is not None:
            env["HFPATCH_CATALOG"] = str(self.catalog)
        env.update(extra)
        return env

    def command(self, *args: str, python: str | None = None) -> list[str]:
        return hfpatch_command(*args, patch=self.patch_id, python=python or self.python)

    def run(self, *args: str, python: str | None = None, **env: str) -> Completed:
        """hfpatch as a user runs it, acting on this site and its patch."""
        return hfpatch(*args, patch=self.patch_id, python=python or self.python, env=self.env(**env))

    def start(self, *args: str, **env: str) -> subprocess.Popen[str]:
        """hfpatch started in the background, for runs that must overlap (and that a test may interrupt)."""
        return subprocess.Popen(
            self.command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(**env),
            cwd=tempfile.gettempdir(),
            preexec_fn=default_sigint,
        )

    def interrupt(self, *args: str, fault: str) -> Completed:
        """hfpatch as `run` starts it, that sends itself SIGINT at a fault point (HFPATCH_FAULT=<step>@SIGINT)."""
        env = self.env(HFPATCH_FAULT=f"{fault}@SIGINT")
        return hfpatch(*args, patch=self.patch_id, python=self.python, env=env, preexec_fn=default_sigint)


def write_files(root: Path, files: dict[str, bytes], dist_info: str, record_newline: str = "\n") -> None:
    """Files as an installer leaves them: each at its path below root, and a RECORD that lists each by hash."""
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    rows = [record_line(relative, data) for relative, data in files.items()] + [f"{dist_info}/RECORD,,"]
    (root / dist_info / "RECORD").write_bytes("".join(row + record_newline for row in rows).encode("utf-8"))


# ---------------------------------------------------------------------------------- what the disk holds


def tree(root: Path) -> dict[str, tuple[int, int, int, int, str]]:
    """Every entry below root, links not followed, by inode, mode, size, mtime and link text: what "nothing
    changed" means, since every way of writing a file changes one of them."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        link = str(path.readlink()) if path.is_symlink() else ""
        found[str(path.relative_to(root))] = (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, link)
    return found


def unchecked_bytecode(file: Path) -> None:
    """An unchecked-hash .pyc: Python runs it without looking at the source, so hfpatch must rebuild it."""
    py_compile.compile(str(file), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_of(path: Path) -> str:
    return sha256(path.read_bytes())


def record_hash(data: bytes) -> str:
    """A file's hash as RECORD writes it (PEP 376/627): sha256, urlsafe base64 without padding."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def record_line(relative_file: str, data: bytes) -> str:
    """The RECORD line (without its ending) that describes `data` installed at `relative_file`."""
    return f"{relative_file},{record_hash(data)},{len(data)}"


def line_in_record(record: bytes, relative_file: str) -> str:
    """The text of RECORD's line for `relative_file`, without its line ending."""
    (line,) = [line for line in record.decode("utf-8").splitlines() if line.startswith(f"{relative_file},")]
    return line


def record_with_line(record: bytes, old_line: str, new_line: str) -> bytes:
    """RECORD with one line's text replaced and every other byte, line endings included, as it was."""
    old, new = old_line.encode("utf-8"), new_line.encode("utf-8")
    assert record.count(old) == 1, f"{old_line!r} is not once in RECORD"
    return record.replace(old, new)


# ------------------------------------------------------------------------------------------------ venvs


@dataclass(frozen=True)
class Venv:
    """A real virtual environment (made without pip: the test environment's pip installs into it)."""

    path: Path

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    @property
    def site_packages(self) -> Path:
        (found,) = self.path.glob("lib/python*/site-packages")
        return found

    def pip(self, *args: str) -> None:
        """The test environment's pip acting on the venv (pip --python)."""
        command = [sys.executable, "-m", "pip", "--python", self.python, "--disable-pip-version-check", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"

    def run(self, code: str) -> str:
        """The last line `python -c CODE` printed in the venv, on stdout or stderr."""
        done = run([self.python, "-c", code], timeout=60)
        return (done.out + done.err).strip().splitlines()[-1]


def make_venv(path: Path, *requirements: str, view: Path | None = None) -> Venv:
    """A venv with `requirements` installed by pip (no dependencies, no bytecode); `view`: a directory of other
    packages the venv sees through a .pth file (what those requirements need to import).

    pip installs each set of requirements once per test process, into a venv kept aside; every venv asked for is a
    copy of that one (links kept as links), its own to write to, as pip left it: creating the venv and starting
    pip for each test was most of what these tests cost."""
    template = _venv_template(requirements)
    shutil.copytree(template, path, symlinks=True)
    venv = Venv(path)
    if view is not None:
        (venv.site_packages / "_test_dependencies.pth").write_text(f"{view}\n")
    return venv


_TEMPLATES: dict[tuple[str, ...], Path] = {}


def _venv_template(requirements: tuple[str, ...]) -> Path:
    # A requirement that is a file (a wheel) is known by its bytes too: a test may build another at the same path.
    key = tuple(f"{each}@{sha256_of(Path(each))}" if Path(each).is_file() else each for each in requirements)
    template = _TEMPLATES.get(key)
    if template is None:
        scratch = Path(tempfile.mkdtemp(prefix="hfpatch-test-venv-"))
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        template = scratch / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(template)], check=True, timeout=120)
        if requirements:
            Venv(template).pip("install", "--no-deps", "--no-compile", *requirements)
        _TEMPLATES[key] = template
    return template


def dependencies_view(where: Path, leave_out: set[str]) -> Path:
    """The test environment's packages without those named (and without hfpatch): what a venv's own copy of a
    distribution needs to import, without the test environment's copy, which pip would call installed already."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    skipped = {*leave_out, "hfpatch", "_editable_impl_hfpatch"}
    view = where / (
        "dependencies" if not leave_out - {"transformers"} else "dependencies-" + "-".join(sorted(leave_out))
    )
    if view.exists():
        return view
    view.mkdir()
    for installed in purelib.iterdir():
        if installed.name.split("-")[0].split(".")[0].lower() in skipped:
            continue
        if installed.name.endswith(".pth") or installed.name.startswith("."):
            continue
        (view / installed.name).symlink_to(installed)
    return view
