"""Where the catalogs are, and which entries they hold: the built-in one, HFPATCH_CATALOG's, and --catalog's.

A catalog is a directory of entries (hfpatch.entry). The built-in catalog is `hfpatch/patches` in an installed
wheel and `patches/` beside `hfpatch/` in a checkout; teams add their own with `--catalog DIR` or HFPATCH_CATALOG.
Only the entries asked for are read.
"""

from __future__ import annotations

import functools
import os
import stat
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from hfpatch import entry, index, versions
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


def is_builtin(where: Patch | Path) -> bool:
    """Whether an entry (or a catalog directory) is the built-in catalog's: the one place that says so."""
    directory = where.directory.parent if isinstance(where, Patch) else where
    return directory == builtin_catalog()


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


class Entries(Mapping[str, Path]):
    """Every entry's directory by id, in the catalogs' order, each Path made only when asked for: what a listing
    holds is each name and its catalog (a catalog may hold hundreds of entries that check only counts)."""

    def __init__(self) -> None:
        self._catalogs: dict[str, Path] = {}

    def __getitem__(self, name: str) -> Path:
        return self._catalogs[name] / name

    def __iter__(self) -> Iterator[str]:
        return iter(self._catalogs)

    def __len__(self) -> int:
        return len(self._catalogs)

    def __contains__(self, name: object) -> bool:
        return name in self._catalogs

    def places(self, names: Iterable[str] | None = None) -> Iterable[tuple[str, Path]]:
        """Each entry's id and its catalog (of `names`, or of every entry), without a Path made of it."""
        if names is None:
            return self._catalogs.items()
        return [(name, self._catalogs[name]) for name in names]


def entry_dirs(catalogs: Iterable[Path]) -> Entries:
    """Every entry's directory by id. A team's entry may not take an id the built-in catalog or another uses."""
    found = Entries()
    _ENTRY_STATS.clear()  # this listing's, never an earlier one's
    for number, catalog in enumerate(catalogs):
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
        if number > 0 and ((catalog / ENTRY).is_file() or (catalog / OLD_ENTRY).is_file()):
            raise CatalogError(
                f"{catalog} is a patch entry, not a catalog; give --catalog (or {CATALOG_VARIABLE}) the directory "
                f"that holds it, {catalog.parent}."
            )
        try:
            names = sorted(os.listdir(catalog))  # noqa: PTH208 - names, not Paths: a catalog may hold hundreds
        except OSError as error:
            raise CatalogError(f"cannot list the catalog {catalog}: {error.strerror}.") from None
        base = _base(catalog)
        held = [_entry_file(f"{base}{name}{os.sep}{ENTRY}") for name in names]
        old = unconverted(catalog / name for name, has in zip(names, held, strict=True) if not has)
        if old:
            raise CatalogError(
                f"{old[0] / OLD_ENTRY} is an entry in the format of hfpatch 0.1 (TOML); this hfpatch reads {ENTRY}: "
                f"`python -m hfpatch.migrate {catalog}` converts the catalog in place (keeping fixed/ and probe.py)."
            )
        listed = [name for name, has in zip(names, held, strict=True) if has]
        if number > 0 and not listed:
            raise CatalogError(f"the catalog {catalog} holds no patch (no */{ENTRY}); is it the right directory?")
        for name in listed:
            if name in found:
                raise CatalogError(
                    f"two patches are named {name}: {found[name]} and {catalog / name}; rename one of them."
                )
            found._catalogs[name] = catalog
    return found


def _base(catalog: Path) -> str:
    """The catalog's path as a string that an entry's name follows (os.path.join's, once a catalog: joined for
    each of hundreds of entries, the Path's conversion costs more than the stat)."""
    return os.path.join(catalog, "")  # noqa: PTH118


# The stat of each patch.json entry_dirs found, by its path: what the index's trust in an entry asks again.
_ENTRY_STATS: dict[str, os.stat_result] = {}


def _entry_file(path: str) -> bool:
    """os.path.isfile, the stat kept for index.Index.trusted (one stat an entry, not two)."""
    try:
        found = os.stat(path)  # noqa: PTH116 - a string: one per entry of the catalog
    except (OSError, ValueError):
        return False
    _ENTRY_STATS[path] = found
    return stat.S_ISREG(found.st_mode)


def unconverted(entries: Iterable[Path]) -> list[Path]:
    """The entries hfpatch 0.1 wrote (patch.toml) that have no patch.json yet."""
    return [entry for entry in entries if (entry / OLD_ENTRY).is_file() and not (entry / ENTRY).is_file()]


def select(
    patch_ids: Sequence[str], catalogs: Sequence[str], *, whole: bool = True, entries: Mapping[str, Path] | None = None
) -> list[Patch]:
    """Load the patches asked for (all by default): an entry nobody asked for is never parsed. Not `whole`: each
    as its header (what an environment without its distribution needs), from the catalog's index where it is
    current (hfpatch.index), else from patch.json; two patches of one statement are refused here all the same;
    `whole_entry()` reads the rest. `entries`: entry_dirs() of the catalogs, where the caller has it already."""
    entries = entry_dirs(catalog_dirs(catalogs)) if entries is None else entries
    unknown = [patch_id for patch_id in patch_ids if patch_id not in entries]
    if unknown:
        raise UnknownPatch(
            unknown[0], f"no patch named {unknown[0]!r} in the catalog ({_nearest(unknown[0], entries)})."
        )
    names = patch_ids or list(entries)
    if whole:
        patches = [entry.load(entries[name]) for name in names]
        _refuse_overlaps([(patch, _changes(patch)) for patch in patches])
        return patches
    loaded = [
        _header(catalog / name, held, record) for name, catalog, held, record in _indexed(_places(entries, names))
    ]
    _refuse_overlaps(loaded)
    return [patch for patch, _ in loaded]


class Dormant(NamedTuple):
    """An entry as its catalog's index holds it (current), of a package that no environment of the run may import:
    `check` counts it as not installed there without making a patch of it (select_awake)."""

    id: str
    distribution: str
    package: str
    files: tuple[str, ...]


# Which of the dormant candidates concern no environment of the run (hfpatch.commands.unconcerned asks them).
Asleep = Callable[[Sequence[Dormant]], Collection[str]]


def select_awake(
    entries: Mapping[str, Path], asleep: Asleep, awake: Collection[str] = ()
) -> tuple[list[Patch], list[Dormant]]:
    """check's selection of every entry of the catalogs (`entries`, none asked for by id), each as its header, but
    for the entries `asleep` finds concern no environment of the run: those are only counted. A candidate is an
    entry its catalog's index holds current, that names no advisory, that no advisory record names (`awake`: those
    that are) and that shares no file with another entry: two patches of one statement are refused as select
    refuses them, since a dormant entry has none to overlap with."""
    found = list(_indexed(_places(entries, list(entries))))
    candidates = [_candidate(name, record, awake) for name, _, _, record in found]
    headers = {
        position: _header(catalog / name, held, record)
        for position, ((name, catalog, held, record), candidate) in enumerate(zip(found, candidates, strict=True))
        if candidate is None
    }
    named: Counter[tuple[str, str]] = Counter()
    for patch, _ in headers.values():
        named.update((_canonical(patch.distribution), file.file) for file in patch.files)
    for candidate in candidates:
        if candidate is not None:
            named.update((_canonical(candidate.distribution), file) for file in candidate.files)
    alone = [
        candidate
        for candidate in candidates
        if candidate is not None
        and all(named[(_canonical(candidate.distribution), file)] == 1 for file in candidate.files)
    ]
    sleeping = set(asleep(alone)) if alone else set()
    loaded, dormant = [], []
    for position, ((name, catalog, held, record), candidate) in enumerate(zip(found, candidates, strict=True)):
        if candidate is not None and candidate.id in sleeping:
            dormant.append(candidate)
        else:
            loaded.append(headers.get(position) or _header(catalog / name, held, record))
    _refuse_overlaps(loaded)
    return [patch for patch, _ in loaded], dormant


def _places(entries: Mapping[str, Path], names: Sequence[str]) -> Iterable[tuple[str, Path]]:
    """The id and catalog of each entry named (a mapping made elsewhere than entry_dirs has Paths only)."""
    if isinstance(entries, Entries):
        return entries.places(names)
    return [(name, entries[name].parent) for name in names]


def _indexed(
    places: Iterable[tuple[str, Path]],
) -> Iterator[tuple[str, Path, index.Index | None, index.Indexed | None]]:
    """Each entry (its id and catalog) with its catalog's index and its record there, where the index is current for
    it (None: patch.json says). Each catalog's index is read once."""
    indexes: dict[Path, tuple[index.Index | None, str]] = {}
    for name, catalog in places:
        if catalog not in indexes:
            indexes[catalog] = (index.read(catalog), _base(catalog))
        found, base = indexes[catalog]
        entry_file = f"{base}{name}{os.sep}{ENTRY}"
        listed = _ENTRY_STATS.pop(entry_file, None)
        yield name, catalog, found, None if found is None else found.trusted(name, entry_file, listed)


def _candidate(name: str, record: index.Indexed | None, awake: Collection[str]) -> Dormant | None:
    """The entry as a dormant candidate (select_awake), or None where it is none."""
    if record is None or name in awake:
        return None
    head = record.head
    try:
        if head.get("advisories"):
            return None
        files = head["files"]
        package = str(files[0]["module"]).partition(".")[0]
        return Dormant(name, str(head["distribution"]), package, tuple(str(file["file"]) for file in files))
    except (KeyError, TypeError, IndexError, AttributeError):
        return None  # not what index.header writes: read as select reads it


def _nearest(patch_id: str, entries: Mapping[str, Path]) -> str:
    """What the catalog has, in a few words however many entries it holds: all of them where they are few, else
    the id nearest the one given and how to list them."""
    if len(entries) <= _LISTED:
        return f"it has: {', '.join(entries) or 'none'}"
    import difflib

    near = difflib.get_close_matches(patch_id, list(entries), n=1, cutoff=0.6)
    meant = f"did you mean {near[0]}? " if near else ""
    return f"{meant}`hfpatch list` lists its {len(entries)} entries"


_LISTED = 5


# The statements a patch changes, by file (None: not known without reading the entry whole).
Changes = index.Changes


def _header(directory: Path, found: index.Index | None, record: index.Indexed | None) -> tuple[Patch, Changes | None]:
    written = None if found is None or record is None else found.header(directory.name, record)
    if written is None:
        return entry.load(directory, whole=False), None
    header, changes = written
    try:
        patch = entry.from_index(header, directory)
    except (KeyError, TypeError, ValueError, IndexError):  # not what index.header writes: the entry says
        return entry.load(directory, whole=False), None
    if patch.id != directory.name:
        return entry.load(directory, whole=False), None
    assert record is not None
    _INDEXED[os.fspath(directory)] = (record, changes)
    return patch, changes


# The index's record of each entry read as its header from a current index, by its directory's path (a string:
# hashing a Path costs more than the rest of the look-up): what by_digest reads.
_INDEXED: dict[str, tuple[index.Indexed, Changes]] = {}


def by_digest(patch: Patch, digests: Mapping[str, str]) -> Patch | None:
    """The patch as `check` needs it where the index knows every file by the digest installed (`digests`, by
    file) and none as one that is not applicable with no reason recorded (the code gives it then): its header, the
    known file of each installed digest (what check asks of it) and its targets by name, so that patch.json is not
    read. None: the whole entry is needed."""
    indexed = None if patch.whole else _INDEXED.get(os.fspath(patch.directory))
    if indexed is None:
        return None
    record, changes = indexed
    known = index.known_files(patch.directory.parent, patch.id, record, digests)
    if known is None or set(known) != {file.file for file in patch.files}:
        return None
    for file in patch.files:
        if digests.get(file.file) is None:
            continue
        row = next(iter(known[file.file]), None)
        if row is None or (row.verdict is entry.Verdict.NOT_APPLICABLE and not row.reason):
            return None
    files = tuple(
        file._replace(
            known_files=known[file.file],
            targets=tuple(entry.Target(name, None, ()) for name in changes.get(file.file, ())),
        )
        for file in patch.files
    )
    return patch._replace(files=files)


def _changes(patch: Patch) -> Changes:
    return {file.file: tuple(target.name for target in file.targets) for file in patch.files}


@functools.cache
def _whole(directory: Path) -> Patch:
    return entry.load(directory)


def whole_entry(patch: Patch) -> Patch:
    """The whole entry of a patch read as its header (each entry is read once a process)."""
    return patch if patch.whole else _whole(patch.directory)


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


def _refuse_overlaps(patches: Sequence[tuple[Patch, Changes | None]]) -> None:
    """Two patches may change one file, each its own statements; two that change one statement (or a class and a
    statement in it) cannot both be applied (the second would find the first's text), so they are refused
    together, naming both. A patch whose changes are not known is read whole where it shares a file."""
    by_file: dict[tuple[str, str], set[str]] = {}
    for patch, _ in patches:
        for file in patch.files:
            by_file.setdefault((_canonical(patch.distribution), file.file), set()).add(patch.id)
    seen: dict[tuple[str, str], list[tuple[str, Patch]]] = {}  # (distribution, file) -> [(target, patch)]
    for patch, changes in patches:
        distribution = _canonical(patch.distribution)
        if not any(len(by_file[(distribution, file.file)]) > 1 for file in patch.files):
            continue
        for relative, names in (changes if changes is not None else _changes(whole_entry(patch))).items():
            changed = seen.setdefault((distribution, relative), [])
            for name in names:
                _refuse_overlap(changed, name, patch, relative)
            changed += [(name, patch) for name in names]


def _refuse_overlap(changed: list[tuple[str, Patch]], name: str, patch: Patch, file: str) -> None:
    patch_id = patch.id
    for other_name, other_patch in changed:
        other = other_patch.id
        if other == patch_id or not _overlap(other_name, name) or _disjoint(patch, other_patch):
            continue
        outer, inner = sorted((other_name, name), key=len)
        within = "" if outer == inner else f" ({inner} is in it)"
        raise CatalogError(
            f"{other} and {patch_id} both change {outer} in {file}{within}: of two patches of one "
            "statement only one can be applied; leave one out with --patch, or remove one entry."
        )


def _disjoint(one: Patch, other: Patch) -> bool:
    """Two entries written for releases that do not meet (their releases_read spans, one line of a statement's code
    each): no installed release is one both are written for, so each leaves the other's releases alone."""
    if one.releases_read is None or other.releases_read is None:
        return False
    (first, last), (other_first, other_last) = one.releases_read, other.releases_read
    return versions.is_older(last, other_first) or versions.is_older(other_last, first)


def _overlap(one: str, other: str) -> bool:
    """The same statement, or a class and a statement of its body (a key inside it: `Class.name`)."""
    return one == other or _inside(one, other) or _inside(other, one)


def _inside(inner: str, outer: str) -> bool:
    return entry.DOTTED.fullmatch(outer) is not None and inner.startswith(f"{outer}.")
