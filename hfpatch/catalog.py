"""What a patch is (data), and the catalog of them shipped as hfpatch.patches."""

from __future__ import annotations

import enum
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any


class Verdict(enum.Enum):
    NEEDS_PATCH = "needs-patch"
    FIXED = "fixed"
    NOT_APPLICABLE = "not-applicable"
    UNRECOGNISED = "unrecognised"


@dataclass(frozen=True)
class KnownForm:
    """One shape the target function has taken in real releases, recognised by the digest of its exact text."""

    name: str
    verdict: Verdict
    releases: str
    # sha256 of the function's source (decorators and body, leading blank lines dropped, newlines as "\n").
    function_sha256: str
    # Short sha256 prefixes of each line of that source: enough to point at the line that differs.
    line_digests: tuple[str, ...] = ()


@dataclass(frozen=True)
class Patch:
    id: str
    title: str
    distribution: str
    package: str
    # Path of the patched file relative to the directory that holds the top-level package, POSIX style.
    target: str
    function: str
    upstream: str
    upstream_url: str
    fixed_in: str
    # The first release that defines the function at all; older releases predate the bug.
    introduced_in: str
    forms: tuple[KnownForm, ...]
    # sha256 of whole released files -> the name of the form they carry (None: the function is absent).
    known_files: Mapping[str, str | None] = field(default_factory=dict)
    # sha256 of a whole released file that needs the patch -> sha256 of the file the patch must produce.
    expected_results: Mapping[str, str] = field(default_factory=dict)
    # Module (inside the patch's package) with `transform(module: libcst.Module) -> libcst.Module`.
    transform_module: str = "transform"
    # Module (inside the patch's package) run as a script by `hfpatch verify` in the target interpreter.
    probe_module: str = "probe"
    package_name: str = ""

    def form(self, name: str) -> KnownForm:
        for form in self.forms:
            if form.name == name:
                return form
        raise KeyError(name)

    def load(self, which: str) -> ModuleType:
        return importlib.import_module(f"{self.package_name}.{which}")

    def transform(self) -> Any:
        return self.load(self.transform_module).transform


def load_catalog() -> tuple[Patch, ...]:
    """Every patch shipped with this hfpatch, in a stable order (by id)."""
    # In the wheel the repository's patches/ is hfpatch.patches (see pyproject.toml); never a top-level package.
    catalog_package = importlib.import_module("hfpatch.patches")

    found: list[Patch] = []
    # A plain directory listing: pkgutil would cost `hfpatch check` another millisecond of imports.
    for directory in catalog_package.__path__:
        for entry in sorted(Path(directory).iterdir()):
            if entry.name.isidentifier() and (entry / "__init__.py").is_file():
                name = f"{catalog_package.__name__}.{entry.name}"
                found.append(_with_package(importlib.import_module(name).PATCH, name))
    return tuple(sorted(found, key=lambda patch: patch.id))


def _with_package(patch: Patch, package_name: str) -> Patch:
    from dataclasses import replace

    return replace(patch, package_name=package_name)
