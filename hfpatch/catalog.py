"""Where the catalogs are, and which entries they hold: the built-in one, HFPATCH_CATALOG's, and --catalog's.

A catalog is a directory of entries (hfpatch.entry). The built-in catalog is `hfpatch/patches` in an installed
wheel and `patches/` beside `hfpatch/` in a checkout; teams add their own with `--catalog DIR` or HFPATCH_CATALOG.
Only the entries asked for are read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
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


def select(patch_ids: Sequence[str], catalogs: Sequence[str]) -> list[Patch]:
    """Load the patches asked for (all by default): an entry nobody asked for is never parsed."""
    entries = entry_dirs(catalog_dirs(catalogs))
    unknown = [patch_id for patch_id in patch_ids if patch_id not in entries]
    if unknown:
        known = ", ".join(entries) or "none"
        raise UnknownPatch(unknown[0], f"no patch named {unknown[0]!r} in the catalog (it has: {known}).")
    patches = [entry.load(entries[patch_id]) for patch_id in (patch_ids or list(entries))]
    _refuse_overlaps(patches)
    return patches


def _refuse_overlaps(patches: Sequence[Patch]) -> None:
    """Two patches may change one file, each its own statements; two that change one statement cannot both be
    applied (the second would find the first's text), so they are refused together, naming both."""
    seen: dict[tuple[str, str, str], str] = {}
    for patch in patches:
        distribution = patch.distribution.lower().replace("_", "-").replace(".", "-")
        for file in patch.files:
            for target in file.targets:
                key = (distribution, file.file, target.name)
                other = seen.setdefault(key, patch.id)
                if other != patch.id:
                    raise CatalogError(
                        f"{other} and {patch.id} both change {target.name} in {file.file}: of two patches of one "
                        "statement only one can be applied; leave one out with --patch, or remove one entry."
                    )
