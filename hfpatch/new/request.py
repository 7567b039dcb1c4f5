"""What `hfpatch new` is asked to do: the options as the parser gives them, checked, each fault a UsageError."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from hfpatch import entry
from hfpatch.errors import UsageError

_DISTRIBUTION = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Request:
    """What `hfpatch new` is asked to do, as given on its command line (see `hfpatch new --help`)."""

    patch_id: str
    targets: tuple[str, ...]
    fixed_in: str
    catalog: str
    find_links: str | None = None
    cache: str | None = None
    upstream: str | None = None
    title: str | None = None
    since: str | None = None
    until: str | None = None
    all_releases: bool = False
    releases: tuple[str, ...] = ()
    pre: bool = False
    force: bool = False


def version_option(text: str, option: str) -> Version:
    """The version an option names; a UsageError where it is none."""
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{option} {text!r} is not a version (PEP 440), such as 5.13.0.") from None


def check_id(patch_id: str) -> str:
    if not entry.ID.fullmatch(patch_id):
        raise UsageError(f"{patch_id!r} cannot be an id: lowercase letters, digits, '.', '_' and '-' only.")
    return patch_id


def parse_targets(values: Sequence[str]) -> tuple[str, str, list[str]]:
    """(distribution, module, qualnames) of the --target options: one module of one distribution."""
    parsed = []
    for value in values:
        parts = value.split(":")
        if len(parts) != 3 or not all(parts):
            raise UsageError(f"--target {value!r} is not DIST:MODULE:QUALNAME (e.g. transformers:transformers.x:f).")
        distribution, module, name = parts
        if not _DISTRIBUTION.fullmatch(distribution):
            raise UsageError(f"--target {value!r}: {distribution!r} is not a distribution name.")
        if not _MODULE.fullmatch(module):
            raise UsageError(f"--target {value!r}: {module!r} is not a module name (dotted, like a.b.c).")
        if not entry.QUALNAME.fullmatch(name):
            raise UsageError(f"--target {value!r}: {name!r} is not a function name or Class.method.")
        parsed.append((distribution, module, name))
    # One distribution however it is spelt (the packaging spec's normalised name: Made_Up.Hub is made-up-hub).
    if len({(canonicalize_name(distribution), module) for distribution, module, _ in parsed}) != 1:
        raise UsageError("every --target must name the same distribution and module: one patch edits one file.")
    names = [name for _, _, name in parsed]
    if len(set(names)) != len(names):
        raise UsageError("a --target is given twice.")
    return parsed[0][0], parsed[0][1], names
