"""Where the fixed text comes from: a release's wheel (--fixed-in), a wheel or a source tree of a build that is on no
index (--fixed-from), or the edits made to the distribution an interpreter has installed (--from-edits)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from hfpatch import statements, wheelrecord
from hfpatch.environment import Python, run_in
from hfpatch.errors import AuthoringError, UnexpectedCode, UsageError
from hfpatch.new import wheels


class FixSource:
    """The fixed texts: each file by its path inside the distribution."""

    label: str  # what the table and the messages call it: "transformers 5.13.0", "the build ...", "your edit"
    version: Version | None  # what the fixed text is a version of, where that is known

    def locate(self, module: str) -> str | None:
        """The path of a module's file, or None where there is none."""
        raise NotImplementedError

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        raise NotImplementedError


class WheelSource(FixSource):
    """A wheel: a release's from the index or --find-links, or a build's (`pip wheel --no-deps git+...@SHA`)."""

    def __init__(self, path: Path, distribution: str, label: str | None = None) -> None:
        with wheels.Wheel(path) as wheel:
            if wheel.name != canonicalize_name(distribution):
                raise UsageError(f"{path.name} is a wheel of {wheel.name}, not of {distribution}.")
            self.version = wheel.version
        self.path = path
        self.label = label or f"the build {path.name}"

    def locate(self, module: str) -> str | None:
        with wheels.Wheel(self.path) as wheel:
            return next((candidate for candidate in wheels.module_paths(module) if wheel.has(candidate)), None)

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        with wheels.Wheel(self.path) as wheel:
            return {path: wheel.read(path) for path in paths}


class TreeSource(FixSource):
    """A source tree (a checkout of a commit): the package at its top or under src/. Its version is the package's
    `__version__` where it says one (what it was made on), else unknown."""

    def __init__(self, directory: Path, package: str) -> None:
        self.directory = directory
        self.label = f"the tree {directory}"
        self.version = self._version(package)

    def _version(self, package: str) -> Version | None:
        init = self._place(f"{package}/__init__.py")
        if init is None:
            return None
        try:
            text = init.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        found = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, flags=re.MULTILINE)
        try:
            return None if found is None else Version(found[1])
        except InvalidVersion:
            return None

    def _place(self, path: str) -> Path | None:
        for base in (self.directory, self.directory / "src"):
            if (base / path).is_file():
                return base / path
        return None

    def locate(self, module: str) -> str | None:
        return next((path for path in wheels.module_paths(module) if self._place(path) is not None), None)

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = {}
        for path in paths:
            place = self._place(path)
            try:
                found[path] = None if place is None else place.read_bytes()
            except OSError as error:
                raise AuthoringError(f"cannot read {place}: {error.strerror or error}.") from None
        return found


def fixed_from(path: Path, distribution: str, package: str) -> FixSource:
    """--fixed-from PATH: a wheel, or a source tree."""
    if path.is_file() and path.name.endswith(".whl"):
        return WheelSource(path, distribution)
    if path.is_dir():
        return TreeSource(path, package)
    raise UsageError(f"--fixed-from {path} is neither a wheel (.whl) nor a directory of source.")


class EditsSource(FixSource):
    """The distribution an interpreter has installed, as the user edited it: each file whose bytes are not those its
    RECORD lists."""

    def __init__(self, python: Python, distribution: str) -> None:
        answer = run_in(python, {"action": "distribution", "name": distribution})
        found = json.loads((answer.strip().splitlines() or ["{}"])[-1])
        if not found.get("found"):
            raise UsageError(f"{python.executable} has no {distribution} installed: nothing edited to read.")
        if not found.get("dist_info"):
            raise UsageError(f"{distribution} in {python.executable} has no dist-info to tell its edits by.")
        self.python = python
        self.distribution = distribution
        self.root = Path(found["root"])
        self.dist_info = Path(found["dist_info"])
        try:
            self.version = Version(found["version"])
        except InvalidVersion:
            raise UsageError(f"{distribution} {found['version']} is not a version (PEP 440).") from None
        self.label = "the edit"

    def edited(self) -> list[str]:
        """The .py files of the distribution whose bytes differ from its RECORD, in RECORD's order."""
        try:
            record = (self.dist_info / "RECORD").read_text(encoding="utf-8")
        except OSError as error:
            raise AuthoringError(f"cannot read {self.dist_info / 'RECORD'}: {error.strerror or error}.") from None
        changed = []
        for row in wheelrecord.rows(record):
            if not row.path.endswith(".py") or not row.digest or row.path.startswith(("..", "/")):
                continue
            try:
                data = (self.root / row.path).read_bytes()
            except FileNotFoundError:
                continue
            except OSError as error:
                raise AuthoringError(f"cannot read {self.root / row.path}: {error.strerror or error}.") from None
            if not row.matches(data):
                changed.append(row.path)
        return changed

    def module_of(self, path: str) -> str:
        parts = path[: -len(".py")].split("/")
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def locate(self, module: str) -> str | None:
        return next((path for path in wheels.module_paths(module) if (self.root / path).is_file()), None)

    def read(self, paths: Iterable[str]) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = {}
        for path in paths:
            try:
                found[path] = (self.root / path).read_bytes()
            except FileNotFoundError:
                found[path] = None
            except OSError as error:
                raise AuthoringError(f"cannot read {self.root / path}: {error.strerror or error}.") from None
        return found

    def check_python(self, path: str, data: bytes) -> None:
        """An edit that is not valid Python is refused, naming the file and the line."""
        try:
            statements.parse(data, str(self.root / path))
        except UnexpectedCode as error:
            raise AuthoringError(f"{error}: the edit cannot be carried.") from None
