"""Finding the target: the interpreter, the copy of the package it imports, and that copy's metadata."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hfpatch import interpreter
from hfpatch.errors import TargetError


@dataclass(frozen=True)
class Interpreter:
    executable: str
    version: str
    cache_tag: str
    magic: str
    in_process: bool
    search_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Installation:
    """The copy of a distribution that an interpreter imports."""

    interpreter: Interpreter
    distribution: str
    package_dir: Path
    # The directory that holds the top-level package (site-packages, or a PYTHONPATH entry).
    root: Path
    version: str | None
    dist_info: Path | None

    @property
    def record(self) -> Path | None:
        return None if self.dist_info is None else self.dist_info / "RECORD"

    def path_of(self, relative: str) -> Path:
        return self.root.joinpath(*relative.split("/"))


def run_in(target: Interpreter, request: dict[str, Any]) -> str:
    """Run interpreter.py's entry point in the target interpreter and return what it printed."""
    # json and subprocess are imported here, not at the top: `hfpatch check` on its own interpreter needs neither.
    import json
    import subprocess

    if target.in_process and request["action"] == "describe":
        return json.dumps(interpreter.describe(request["package"]))
    if target.in_process and request["action"] == "compile":
        interpreter.compile_bytecode(request["source"], request["requests"])
        return ""
    code = Path(interpreter.__file__).read_text(encoding="utf-8")
    try:
        completed = subprocess.run(
            [target.executable, "-c", code, json.dumps(request)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except OSError as error:
        raise TargetError(f"cannot run {target.executable}: {error.strerror or error}.") from None
    except subprocess.TimeoutExpired:
        raise TargetError(f"{target.executable} did not answer within 120 seconds.") from None
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no error output"])[-1]
        raise TargetError(f"{target.executable} failed to inspect its environment: {last}")
    return completed.stdout


def resolve_interpreter(python: str | None) -> Interpreter:
    """The current interpreter for None; otherwise the one at PATH (or found on $PATH by name)."""
    if python is None:
        described = interpreter.describe("hfpatch")
        return _interpreter(described, str(described["executable"]), in_process=True)
    import json
    import shutil

    executable = python if os.sep in python else shutil.which(python)
    if executable is None or not Path(executable).exists():
        raise TargetError(f"no Python interpreter at {python!r}; give --python the path of one.")
    if not os.access(executable, os.X_OK) or Path(executable).is_dir():
        raise TargetError(f"{executable} is not an executable Python interpreter.")
    # Everything later runs the path the user gave, not the sys.executable it reports: a wrapper script that sets
    # up the environment (PYTHONPATH, a venv activation) must stay in the loop.
    executable = str(Path(executable).absolute())
    probe = Interpreter(executable, "", "", "", in_process=False)
    output = run_in(probe, {"action": "describe", "package": "hfpatch"})
    try:
        return _interpreter(json.loads((output.strip().splitlines() or [""])[-1]), executable, in_process=False)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise TargetError(f"{executable} does not behave like a Python interpreter.") from None


def _interpreter(described: dict[str, Any], executable: str, in_process: bool) -> Interpreter:
    return Interpreter(
        executable=executable,
        version=str(described["version"]),
        cache_tag=str(described["cache_tag"]),
        magic=str(described["magic"]),
        search_path=tuple(str(entry) for entry in described.get("search_path", ())),
        in_process=in_process,
    )


def locate(target: Interpreter, package: str, distribution: str, relative_file: str) -> Installation | None:
    """The copy of `package` the target imports, or None when it imports none. Never imports the package."""
    if target.in_process:
        described = interpreter.describe(package)
    else:
        import json

        output = run_in(target, {"action": "describe", "package": package})
        described = json.loads((output.strip().splitlines() or ["{}"])[-1])
    if not described["found"]:
        return None
    if described["package_dir"] is None:
        raise TargetError(f"{package} in {target.executable} is not a regular package; hfpatch cannot patch it.")
    package_dir = Path(described["package_dir"])
    root = package_dir.parent
    dist_info = _find_dist_info(root, distribution, relative_file)
    version = None if dist_info is None else _read_version(dist_info)
    return Installation(target, distribution, package_dir, root, version, dist_info)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _find_dist_info(root: Path, distribution: str, relative_file: str) -> Path | None:
    wanted = _normalise(distribution)
    try:
        candidates = [
            entry
            for entry in root.iterdir()
            if entry.name.endswith(".dist-info")
            and _normalise(entry.name[: -len(".dist-info")].split("-")[0]) == wanted
        ]
    except OSError as error:
        raise TargetError(f"cannot list {root}: {error.strerror}.") from None
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    # Leftovers of an interrupted install: the one whose RECORD lists the file is the one that owns it.
    owners = [entry for entry in candidates if record_line(entry / "RECORD", relative_file) is not None]
    if len(owners) == 1:
        return owners[0]
    names = ", ".join(sorted(entry.name for entry in candidates))
    raise TargetError(f"{root} holds several {distribution} installations ({names}); reinstall {distribution}.")


def _read_version(dist_info: Path) -> str | None:
    try:
        with (dist_info / "METADATA").open(encoding="utf-8", errors="replace") as metadata:
            for line in metadata:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                if key.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None


def record_line(record: Path, relative_file: str) -> str | None:
    """The RECORD line for `relative_file` (without its line ending), or None."""
    try:
        data = record.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    prefix = f"{relative_file},"
    for line in data.splitlines():
        if line.startswith(prefix):
            return line
    return None
