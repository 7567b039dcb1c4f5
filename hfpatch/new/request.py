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


@dataclass(frozen=True)
class Request:
    """What `hfpatch new` is asked to do, as given on its command line (see `hfpatch new --help`)."""

    patch_id: str
    targets: tuple[str, ...]
    fixed_in: str | None
    catalog: str
    # Where the fixed text comes from besides a release: a wheel or source tree (--fixed-from), or the edits made to
    # the distribution installed in an interpreter (--from-edits DIST, of --python or hfpatch's own).
    fixed_from: str | None = None
    from_edits: str | None = None
    python: str | None = None
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


@dataclass(frozen=True)
class Targets:
    """The --target options: one distribution; per module, the names given (None: the whole module's fix)."""

    distribution: str
    modules: dict[str, tuple[str, ...] | None]


def parse_targets(values: Sequence[str]) -> Targets:
    """DIST:MODULE:NAME (a function, class, method, constant or import a module or class binds) or DIST:MODULE (every
    statement the fix changes in the module); several modules of one distribution make one patch of several files."""
    distributions: dict[str, str] = {}
    modules: dict[str, list[str] | None] = {}
    for value in values:
        parts = value.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise UsageError(
                f"--target {value!r} is not DIST:MODULE:NAME or DIST:MODULE (e.g. transformers:transformers.x:f)."
            )
        distribution, module = parts[0], parts[1]
        if not _DISTRIBUTION.fullmatch(distribution):
            raise UsageError(f"--target {value!r}: {distribution!r} is not a distribution name.")
        if not entry.DOTTED.fullmatch(module):
            raise UsageError(f"--target {value!r}: {module!r} is not a module name (dotted, like a.b.c).")
        distributions.setdefault(_normalised(distribution), distribution)
        if len(parts) == 2:
            if module in modules and modules[module] is not None:
                raise UsageError(
                    f"--target {value!r} carries the whole module, and another --target names one of its statements."
                )
            if module in modules:
                raise UsageError("a --target is given twice.")
            modules[module] = None
            continue
        name = parts[2]
        if not entry.DOTTED.fullmatch(name):
            raise UsageError(
                f"--target {value!r}: {name!r} is not a name (a function, a class, a constant, Class.method)."
            )
        named = modules.setdefault(module, [])
        if named is None:
            raise UsageError(
                f"--target {value!r} names a statement of {module}, whose whole fix another --target carries."
            )
        if name in named:
            raise UsageError("a --target is given twice.")
        named.append(name)
    if len(distributions) != 1:
        raise UsageError("every --target must name the same distribution: a patch changes one distribution.")
    return Targets(
        next(iter(distributions.values())),
        {module: None if names is None else tuple(names) for module, names in modules.items()},
    )


def _normalised(name: str) -> str:
    return canonicalize_name(name)
