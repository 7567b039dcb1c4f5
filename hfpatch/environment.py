"""Finding what to act on: the Python (the interpreter hfpatch acts on), the copy of a package it imports, and that
copy's metadata. Nothing of the package is imported: the import system's view and the files say it all."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from hfpatch import introspect, wheelrecord
from hfpatch.errors import HfpatchError, InterpreterError

if TYPE_CHECKING:
    import subprocess

    from hfpatch.entry import Patch

ANSWER_TIMEOUT = 120
OLDEST_PYTHON = (3, 10)


class Python(NamedTuple):
    """The interpreter hfpatch acts on: its own (in process), or one given with --python (run as a subprocess)."""

    executable: str
    version: str
    cache_tag: str
    magic: str
    in_process: bool
    search_path: tuple[str, ...] = ()
    prefix: str = ""
    base_prefix: str = ""


class Installation(NamedTuple):
    """The copy of a distribution that a Python imports."""

    python: Python
    distribution: str
    package_dir: Path
    # The directory that holds the top-level package (site-packages, or a PYTHONPATH entry).
    root: Path
    version: str | None
    dist_info: Path | None
    # Whether a venv made with --system-site-packages imports this copy from the base interpreter's tree, where
    # found when the copy was (three paths resolved once an installation, not once a patch); None: not yet told.
    shared: bool | None = None

    @property
    def record(self) -> Path | None:
        """The distribution's RECORD file."""
        return None if self.dist_info is None else self.dist_info / "RECORD"

    def path_of(self, relative: str) -> Path:
        return self.root / relative  # a path inside site-packages, always with "/"

    @property
    def shared_with_base(self) -> bool:
        """A venv made with --system-site-packages imports this copy from the base interpreter's tree."""
        return _shared_with_base(self.python, self.root) if self.shared is None else self.shared


class Environment:
    """One interpreter, and the copy of each package it imports, each looked up once (a failed look-up too)."""

    def __init__(self, python: Python, found: Mapping[str, Installation | None] | None = None) -> None:
        """`found`: installations already located, by package (what a test built by hand)."""
        self.python = python
        self._found: dict[str, Installation | HfpatchError | None] = dict(found or {})

    def installation_of(self, patch: Patch) -> Installation | None:
        """The installation the patch is for, or None where the interpreter imports no such package."""
        return self.installation(patch.package, patch.distribution, patch.files[0].file)

    def locate_all(self, patches: Sequence[Patch]) -> None:
        """Look up the package of every patch at once (one question to a --python interpreter, not one each)."""
        wanted = {patch.package: patch for patch in patches if patch.package not in self._found}
        if len(wanted) < 2:
            return
        try:
            output = run_in(self.python, {"action": "locate", "packages": list(wanted)})
            described = json.loads(output.strip().splitlines()[-1])["packages"]
        except (HfpatchError, ValueError, KeyError, IndexError):
            return  # each is looked up on its own, and a failure said there
        for package, patch in wanted.items():
            try:
                self._found[package] = _installation(
                    self.python, package, patch.distribution, patch.files[0].file, described[package]
                )
            except HfpatchError as error:
                self._found[package] = error

    def installation(self, package: str, distribution: str, relative_file: str) -> Installation | None:
        """The copy of `package` the interpreter imports (`relative_file`: a file its RECORD lists), or None."""
        if package not in self._found:
            try:
                self._found[package] = locate(self.python, package, distribution, relative_file)
            except HfpatchError as error:
                self._found[package] = error
        found = self._found[package]
        if isinstance(found, HfpatchError):
            raise found
        return found

    def unimported(self, packages: Collection[str]) -> set[str]:
        """Those of `packages` the interpreter imports from nowhere, asked at once; each is kept as not installed (a
        later look-up is None without asking). None of them where that cannot be told."""
        wanted = [package for package in dict.fromkeys(packages) if package not in self._found]
        if wanted:
            request = {"action": "locate", "packages": wanted}
            try:
                if self.python.in_process:
                    absent = introspect.absent(wanted)
                else:
                    described = json.loads(run_in(self.python, request).strip().splitlines()[-1])["packages"]
                    absent = [package for package in wanted if not described[package]["found"]]
            except (HfpatchError, ValueError, KeyError, IndexError, TypeError):
                return set()
            self._found |= dict.fromkeys(absent)
        return {package for package in packages if package in self._found and self._found[package] is None}

    @property
    def installations(self) -> list[Installation]:
        """What was found so far, in the order it was looked up."""
        return [found for found in self._found.values() if isinstance(found, Installation)]

    @property
    def found_nothing(self) -> bool:
        """Every look-up so far found no package (or failed): the patches' distributions are not here."""
        return not self.installations


def run_in(
    python: Python, request: dict[str, Any], *, env: dict[str, str] | None = None, cwd: str | None = None
) -> str:
    """Run introspect.py's entry point in `python` and return what it printed (`env`: variables to add)."""
    if python.in_process and request["action"] == "describe":
        return json.dumps(introspect.describe(request["package"]))
    if python.in_process and request["action"] == "locate":
        return json.dumps(introspect.locate(request["packages"]))
    if python.in_process and request["action"] == "compile":
        introspect.compile_bytecode(request["source"], request["requests"])
        return ""
    code = Path(introspect.__file__).read_text(encoding="utf-8")
    completed = _run([python.executable, "-c", code, json.dumps(request)], python.executable, env=env, cwd=cwd)
    if completed.returncode != 0:
        raise InterpreterError(f"{python.executable} failed to inspect its environment: {_last_line(completed.stderr)}")
    return completed.stdout


def _run(
    command: list[str], executable: str, *, env: dict[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    import subprocess  # only to ask another interpreter: `hfpatch check` on its own never pays for it

    environ = None if env is None else {**os.environ, **env}
    try:
        return subprocess.run(
            command, capture_output=True, text=True, timeout=ANSWER_TIMEOUT, check=False, env=environ, cwd=cwd
        )
    except OSError as error:
        raise InterpreterError(f"cannot run {executable}: {error.strerror or error}.") from None
    except subprocess.TimeoutExpired:
        raise InterpreterError(f"{executable} did not answer within {ANSWER_TIMEOUT} seconds.") from None


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no error output"])[-1][:200]


def resolve_python(given: str | None) -> Python:
    """hfpatch's own interpreter for None; otherwise the one at the path given (or found on $PATH by name)."""
    if given is None:
        described = introspect.describe("_")
        return _python(described, str(described["executable"]), in_process=True)
    executable = _executable(given)
    try:
        described = json.loads(run_in(Python(executable, "", "", "", False), {"action": "describe", "package": "_"}))
        return _python(described, executable, in_process=False)
    except (InterpreterError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise InterpreterError(_why_not_python(executable)) from None


def _executable(given: str) -> str:
    import shutil

    executable = given if os.sep in given else shutil.which(given)
    if executable is None:
        raise InterpreterError(f"no Python interpreter at {given!r}; give --python the path of one.")
    path = Path(executable)
    try:
        is_directory = stat.S_ISDIR(path.stat().st_mode)
    except PermissionError:
        raise InterpreterError(_unreachable(path)) from None
    except OSError:
        raise InterpreterError(f"no Python interpreter at {given!r}; give --python the path of one.") from None
    if is_directory:
        found = [path / "bin" / name for name in ("python", "python3")]
        inside = next((each for each in found if os.path.exists(each)), None)  # noqa: PTH110 - False where it may not look
        hint = f"; did you mean --python {inside}?" if inside else "; give --python the interpreter's path."
        raise InterpreterError(f"{executable} is a directory, not a Python interpreter{hint}")
    if not os.access(executable, os.X_OK):
        raise InterpreterError(f"{executable} is not executable; give --python the path of a Python interpreter.")
    # Everything later runs the path the user gave, not the sys.executable it reports: a wrapper script that sets
    # up the environment (PYTHONPATH, a venv activation) must stay in the loop.
    return str(path.absolute())


def _unreachable(path: Path) -> str:
    """The directory on the way to the interpreter (through its links) that this user may not enter."""
    from hfpatch.files import _user_name  # the one spelling of a user: a name, or "uid N" where none

    user = _user_name(os.geteuid())
    target = Path(os.path.realpath(path))  # as far as it can be resolved; links below a closed directory stay
    led = f" (it leads to {target})" if target != path.absolute() else ""
    closed = next((parent for parent in reversed(target.parents) if not os.access(parent, os.X_OK)), None)
    if closed is None:
        return f"cannot read {path}{led}: permission denied for {user}; give --python an interpreter {user} may run."
    return (
        f"cannot read {path}{led}: {user} may not enter {closed}; run hfpatch as a user who may, or give --python "
        f"an interpreter {user} can run."
    )


def _why_not_python(executable: str) -> str:
    """Ask in a way any Python answers (2.7 included), to say why the real question failed."""
    code = "import sys; sys.stdout.write('hfpatch-python %d.%d' % sys.version_info[:2])"
    try:
        answer = _run([executable, "-c", code], executable)
    except InterpreterError as error:
        return str(error)
    match = re.fullmatch(r"hfpatch-python (\d+)\.(\d+)", answer.stdout.strip())
    if match is None:
        return f"{executable} does not answer as a Python interpreter does; give --python the path of one."
    version = (int(match[1]), int(match[2]))
    if version < OLDEST_PYTHON:
        oldest = ".".join(map(str, OLDEST_PYTHON))
        return f"{executable} is Python {version[0]}.{version[1]}; hfpatch acts on Python {oldest} or newer."
    return f"{executable} (Python {version[0]}.{version[1]}) could not describe its environment."


def _python(described: dict[str, Any], executable: str, in_process: bool) -> Python:
    return Python(
        executable=executable,
        version=str(described["version"]),
        cache_tag=str(described["cache_tag"]),
        magic=str(described["magic"]),
        search_path=tuple(str(entry) for entry in described.get("search_path", ())),
        in_process=in_process,
        prefix=str(described.get("prefix", "")),
        base_prefix=str(described.get("base_prefix", "")),
    )


def locate(python: Python, package: str, distribution: str, relative_file: str) -> Installation | None:
    """The copy of `package` that `python` imports, or None when it imports none. Never imports the package."""
    described = json.loads((run_in(python, {"action": "describe", "package": package}).strip().splitlines())[-1])
    return _installation(python, package, distribution, relative_file, described)


def _installation(
    python: Python, package: str, distribution: str, relative_file: str, described: Mapping[str, Any]
) -> Installation | None:
    if not described["found"]:
        return None
    if described["package_dir"] is None:
        raise InterpreterError(f"{package} in {python.executable} is not a regular package; hfpatch cannot patch it.")
    package_dir = Path(described["package_dir"])
    root = package_dir.parent
    dist_info = _find_dist_info(root, distribution, relative_file)
    version = None if dist_info is None else _read_version(dist_info)
    return Installation(python, distribution, package_dir, root, version, dist_info, _shared_with_base(python, root))


def _shared_with_base(python: Python, root: Path) -> bool:
    if not python.prefix or python.prefix == python.base_prefix:
        return False
    # Only the base's own tree: a PYTHONPATH entry or a .pth directory outside the venv is no base's.
    resolved = root.resolve()
    return resolved.is_relative_to(Path(python.base_prefix).resolve()) and not resolved.is_relative_to(
        Path(python.prefix).resolve()
    )


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
        raise InterpreterError(f"cannot list {root}: {error.strerror}.") from None
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    # Leftovers of an interrupted install: the one whose RECORD lists the file is the one that owns it.
    owners = [entry for entry in candidates if wheelrecord.read_line(entry / "RECORD", relative_file) is not None]
    if len(owners) == 1:
        return owners[0]
    names = ", ".join(sorted(entry.name for entry in candidates))
    raise InterpreterError(f"{root} holds several {distribution} installations ({names}); reinstall {distribution}.")


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
