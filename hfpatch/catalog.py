"""Where the catalogs are, and which entries they hold: the built-in one, HFPATCH_CATALOG's, and --catalog's.

A catalog is a directory of entries (hfpatch.entry). The built-in catalog is `hfpatch/patches` in an installed
wheel and `patches/` beside `hfpatch/` in a checkout; teams add their own with `--catalog DIR` or HFPATCH_CATALOG.
Only the entries asked for are read.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from hfpatch import entry
from hfpatch.entry import ENTRY, OLD_ENTRY, Patch
from hfpatch.errors import CatalogError, UnknownPatch

CATALOG_VARIABLE = "HFPATCH_CATALOG"


def builtin_catalog() -> Path:
    """hfpatch/patches in an installed wheel; patches/ beside the hfpatch package in a checkout."""
    package = Path(__file__).resolve().parent
    shipped = package / "patches"
    if os.path.isdir(shipped):  # noqa: PTH112 - Path.is_dir raises where it may not look; isdir says False
        return shipped
    return package.parent / "patches"


def catalog_dirs(extra: Sequence[str] = ()) -> list[Path]:
    """The built-in catalog, then those named by HFPATCH_CATALOG, then those given with --catalog."""
    from_environment = [part for part in os.environ.get(CATALOG_VARIABLE, "").split(os.pathsep) if part]
    named = [builtin_catalog(), *(Path(part) for part in (*from_environment, *extra))]
    # A directory named twice (the variable in the Dockerfile, and --catalog on the command line) is one catalog.
    seen: set[str] = set()
    unique = []
    for directory in named:
        if os.path.realpath(directory) not in seen:
            seen.add(os.path.realpath(directory))
            unique.append(directory)
    return unique


def entry_dirs(catalogs: Iterable[Path]) -> dict[str, Path]:
    """Every entry's directory by id. A team's entry may not take an id the built-in catalog or another uses."""
    found: dict[str, Path] = {}
    for index, catalog in enumerate(catalogs):
        try:
            what = None if stat.S_ISDIR(catalog.stat().st_mode) else "is not a directory"
        except PermissionError:
            raise CatalogError(f"cannot read the catalog {catalog}: permission denied.") from None
        except OSError:
            what = "does not exist"
        if what is not None:
            raise CatalogError(
                f"the catalog {catalog} {what}; give --catalog (or {CATALOG_VARIABLE}) a directory of patch entries."
            )
        if index > 0 and ((catalog / ENTRY).is_file() or (catalog / OLD_ENTRY).is_file()):
            raise CatalogError(
                f"{catalog} is a patch entry, not a catalog; give --catalog (or {CATALOG_VARIABLE}) the directory "
                f"that holds it, {catalog.parent}."
            )
        try:
            entries = sorted(catalog.iterdir())
        except OSError as error:
            raise CatalogError(f"cannot list the catalog {catalog}: {error.strerror}.") from None
        old = unconverted(entries)
        if old:
            raise CatalogError(
                f"{old[0] / OLD_ENTRY} is an entry in the format of hfpatch 0.1 (TOML); this hfpatch reads {ENTRY}: "
                f"`python -m hfpatch.migrate {catalog}` converts the catalog in place (keeping fixed/ and probe.py)."
            )
        listed = [each for each in entries if (each / ENTRY).is_file()]
        if index > 0 and not listed:
            raise CatalogError(f"the catalog {catalog} holds no patch (no */{ENTRY}); is it the right directory?")
        for each in listed:
            if each.name in found:
                raise CatalogError(
                    f"two patches are named {each.name}: {found[each.name]} and {each}; rename one of them."
                )
            found[each.name] = each
    return found


def unconverted(entries: Iterable[Path]) -> list[Path]:
    """The entries hfpatch 0.1 wrote (patch.toml) that have no patch.json yet."""
    return [entry for entry in entries if (entry / OLD_ENTRY).is_file() and not (entry / ENTRY).is_file()]


def select(patch_ids: Sequence[str], catalogs: Sequence[str], *, whole: bool = True) -> list[Patch]:
    """Load the patches asked for (all by default): an entry nobody asked for is never parsed. Not `whole`: each
    as its header (what an environment without its distribution needs), but whole where it shares a file with
    another, so that two patches of one statement are refused here all the same; `whole()` reads the rest."""
    entries = entry_dirs(catalog_dirs(catalogs))
    unknown = [patch_id for patch_id in patch_ids if patch_id not in entries]
    if unknown:
        known = ", ".join(entries) or "none"
        raise UnknownPatch(unknown[0], f"no patch named {unknown[0]!r} in the catalog (it has: {known}).")
    patches = [entry.load(entries[patch_id], whole=whole) for patch_id in (patch_ids or list(entries))]
    if not whole:
        sharing = _sharing_a_file(patches)
        patches = [whole_entry(patch) if patch.id in sharing else patch for patch in patches]
    _refuse_overlaps(patches)
    return patches


@functools.cache
def _whole(directory: Path) -> Patch:
    return entry.load(directory)


def whole_entry(patch: Patch) -> Patch:
    """The whole entry of a patch read as its header (each entry is read once a process)."""
    return patch if patch.whole else _whole(patch.directory)


def _sharing_a_file(patches: Sequence[Patch]) -> set[str]:
    """The patches that change a file another one changes too."""
    by_file: dict[tuple[str, str], set[str]] = {}
    for patch in patches:
        for file in patch.files:
            by_file.setdefault((_canonical(patch.distribution), file.file), set()).add(patch.id)
    return {patch_id for ids in by_file.values() if len(ids) > 1 for patch_id in ids}


def _canonical(distribution: str) -> str:
    return distribution.lower().replace("_", "-").replace(".", "-")


def finder(catalogs: Sequence[str]) -> Callable[[str], Patch | None]:
    """Any entry of the catalogs by id, whether selected or not, read only when asked for: revert rebuilds a file
    with the other patches that stay on it, and `check` never pays for it."""
    found: dict[str, Patch | None] = {}

    def find(patch_id: str) -> Patch | None:
        if patch_id not in found:
            directory = entry_dirs(catalog_dirs(catalogs)).get(patch_id)
            found[patch_id] = None if directory is None else entry.load(directory)
        return found[patch_id]

    return find


def _refuse_overlaps(patches: Sequence[Patch]) -> None:
    """Two patches may change one file, each its own statements; two that change one statement (or a class and a
    statement in it) cannot both be applied (the second would find the first's text), so they are refused
    together, naming both."""
    seen: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (distribution, file) -> [(target, patch id)]
    for patch in patches:
        distribution = _canonical(patch.distribution)
        for file in patch.files:
            changed = seen.setdefault((distribution, file.file), [])
            for target in file.targets:
                for name, other in changed:
                    if other == patch.id or not _overlap(name, target.name):
                        continue
                    outer, inner = sorted((name, target.name), key=len)
                    within = "" if outer == inner else f" ({inner} is in it)"
                    raise CatalogError(
                        f"{other} and {patch.id} both change {outer} in {file.file}{within}: of two patches of one "
                        "statement only one can be applied; leave one out with --patch, or remove one entry."
                    )
            changed += [(target.name, patch.id) for target in file.targets]


def _overlap(one: str, other: str) -> bool:
    """The same statement, or a class and a statement of its body (a key inside it: `Class.name`)."""
    return one == other or _inside(one, other) or _inside(other, one)


def _inside(inner: str, outer: str) -> bool:
    return entry.DOTTED.fullmatch(outer) is not None and inner.startswith(f"{outer}.")
