"""A catalog's index: `index.json`, what an entry is for (its distribution, each file's module and path, the
advisories it names) and the sha256 and size of its patch.json, so that an entry of a distribution the environment
does not have is never opened; beside it `headers.jsonl`, each entry's header and the statements it changes, a line
an entry, parsed only for the entries the environment has; and `known.jsonl` (below).

    python -m hfpatch.index DIR [DIR ...]            write each catalog's index from its entries
    python -m hfpatch.index --check DIR [DIR ...]    exit 1 where an index is missing or does not match its entries

The index is written with the entries (`hfpatch new` and this command) and is only ever a shortcut: the directory
listing says which entries exist, and an entry is taken from the index only while its patch.json has the size the
index gives and was not modified after the index was written (2 seconds' grace: a checkout or an installer writes
the catalog's files one after the other), and a line of headers.jsonl or known.jsonl only where it was written from
the very patch.json the index's record was (its sha256). Any other entry, and every entry of a catalog whose index
is missing, unreadable, malformed or of another schema, is read from its patch.json: slower, never wrong. Schema 1
(hfpatch 0.3 before headers.jsonl: each header in index.json) is read as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch import entry
from hfpatch.entry import ENTRY, FileShape, KnownFile, Patch

INDEX = "index.json"
# Beside it: each entry's header and the statements it changes (what check needs of an entry the environment has).
HEADERS = "headers.jsonl"
# And each entry's known files, by digest (what `check` needs of an entry whose files it knows).
KNOWN = "known.jsonl"
SCHEMA = 2
_READS = (1, 2)
# What index.json holds of each entry's header (headers.jsonl the rest of it).
_HEAD = ("distribution", "files", "advisories")
_GRACE_NS = 2_000_000_000

# The statements a patch changes, by file.
Changes = Mapping[str, tuple[str, ...]]


class Indexed(NamedTuple):
    """One entry as the index holds it."""

    sha256: str
    size: int
    # What it is for, as patch.json of schema 3 spells it: "distribution", "files" (each file's module and path)
    # and "advisories" (read as they are, unvalidated: catalog.select_awake's to take or leave).
    head: Mapping[str, Any]


class Index(NamedTuple):
    catalog: Path
    written_ns: int
    entries: Mapping[str, Indexed]
    # Schema 1: each entry's header and changes, held in index.json itself (None: in headers.jsonl).
    headers: Mapping[str, tuple[Mapping[str, Any], Changes]] | None = None

    def trusted(self, name: str, entry_file: str, found: os.stat_result | None = None) -> Indexed | None:
        """The record of the entry `name`, where its patch.json (`entry_file`, a path) is still what the index was
        written from (`found`: its stat, where the catalog's listing took it a moment ago)."""
        record = self.entries.get(name)
        if record is None:
            return None
        if found is None:
            try:
                found = os.stat(entry_file)  # noqa: PTH116 - a string: one per entry
            except OSError:
                return None
        if found.st_size != record.size or found.st_mtime_ns > self.written_ns + _GRACE_NS:
            return None
        return record

    def header(self, name: str, record: Indexed) -> tuple[Mapping[str, Any], Changes] | None:
        """The header of a trusted entry (as patch.json of schema 3 spells it: headers.jsonl's line with what the
        record holds of it) and the statements it changes, by file (a file that has none is not named); None where
        headers.jsonl has no line of that very patch.json (or a malformed one)."""
        if self.headers is not None:
            return self.headers.get(name)
        line = _lines(self.catalog / HEADERS, _HEADERS_HEAD).get(name)
        try:
            if line is None:
                return None
            sha256, rest, changes = json.loads(line)
            if sha256 != record.sha256 or not isinstance(rest, dict):
                return None
            head = record.head
            return {**rest, **{key: head[key] for key in _HEAD if key in head}}, _changes(changes)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def read(catalog: Path) -> Index | None:
    """The catalog's index, or None where it has none that this hfpatch can use."""
    path = catalog / INDEX
    try:
        written_ns = path.stat().st_mtime_ns
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("schema") not in _READS:
            return None
        items = data["entries"].items()
        if data["schema"] == 1:
            headers = {name: (_header(item), _changes(item["changes"])) for name, item in items}
            entries = {name: Indexed(str(item["sha256"]), int(item["size"]), headers[name][0]) for name, item in items}
            return Index(catalog, written_ns, entries, headers)
        return Index(catalog, written_ns, {name: _record(item) for name, item in items})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _record(item: Mapping[str, Any]) -> Indexed:
    if not isinstance(item, dict):
        raise TypeError("a record is an object")
    return Indexed(str(item["sha256"]), int(item["size"]), item)


def _header(item: Mapping[str, Any]) -> Mapping[str, Any]:
    header = item["header"]
    if not isinstance(header, dict):
        raise TypeError("a header is an object")
    return header


def _changes(changes: Mapping[str, Any]) -> Changes:
    return {str(file): tuple(map(str, names)) for file, names in changes.items()}


# Each catalog's headers.jsonl and known.jsonl, their lines by entry, read once a process and only where check asks
# for an entry's line (a catalog whose distributions are not installed reads neither); a line is parsed only when
# asked for.
_LINES: dict[Path, dict[str, str]] = {}
_HEADERS_HEAD = '{"schema": 2}'


def _lines(path: Path, head: str) -> dict[str, str]:
    if path not in _LINES:
        _LINES[path] = _read_lines(path, head)
    return _LINES[path]


_KNOWN_HEAD = '{"schema": 1}'


def known_files(
    catalog: Path, name: str, record: Indexed, digests: Mapping[str, str]
) -> dict[str, tuple[KnownFile, ...]] | None:
    """The known files of each file of an entry (its record in the index, current) that have the installed digest
    (`digests`, by file; a file not installed has none), from the catalog's known.jsonl: what `check` needs of an
    entry whose installed files are all known by digest, without reading patch.json (the other releases' rows are
    never made). The rows are those of the entry read whole and validated when the index was written, and are taken
    only where known.jsonl was written from the very patch.json the record was (its sha256). None: not there, or
    not that."""
    line = _lines(catalog / KNOWN, _KNOWN_HEAD).get(name)
    try:
        if line is None:
            return None
        sha256, known = json.loads(line)
        if sha256 != record.sha256:
            return None
        return {
            str(file): tuple(_known_file(*row) for row in rows if row[0] == digests.get(file))
            for file, rows in known.items()
        }
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _read_lines(path: Path, head: str) -> dict[str, str]:
    """Each entry's line of a file of lines (after its name and a tab), by name; none where the file is missing or
    not of this schema (its first line, `head`)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return {}
    if not lines or lines[0] != head:
        return {}
    found = {}
    for line in lines[1:]:
        name, tab, rest = line.partition("\t")
        if tab:
            found[name] = rest
    return found


def _known_file(
    sha256: object, label: object, patched: object, releases: Sequence[object], reason: object = ""
) -> KnownFile:
    verdict, unknown = entry.known_verdict(str(label))
    patched_sha256 = None if patched is None else str(patched)
    return KnownFile(str(sha256), tuple(map(str, releases)), verdict, patched_sha256, unknown, str(reason))


def _known_rows(patch: Patch) -> dict[str, list[list[Any]]] | None:
    if any(file.shape is FileShape.ADD for file in patch.files):
        return None
    return {
        file.file: [
            [
                known.sha256,
                known.label,
                known.patched_sha256,
                list(known.releases),
                *([known.reason] if known.reason else []),
            ]
            for known in file.known_files
        ]
        for file in patch.files
    }


def header(patch: Patch) -> dict[str, Any]:
    """The header of a patch as schema 3 writes it: what entry.from_data reads back as the patch's header."""
    data: dict[str, Any] = {"schema": 3, "id": patch.id, "title": patch.title, "upstream": patch.upstream}
    data |= {"url": patch.url, "distribution": patch.distribution}
    if patch.fixed_in is not None:
        data["fixed_in"] = patch.fixed_in
    if patch.first_defined_in is not None:
        data["first_defined_in"] = patch.first_defined_in
    if patch.advisories:
        data["advisories"] = list(patch.advisories)
    if patch.releases_read is not None:
        data["releases_read"] = list(patch.releases_read)
    data["files"] = [{"module": file.module, "file": file.file} for file in patch.files]
    return data


def build(catalog: Path) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, list[Any]]]:
    """The index of a catalog, its headers and its known files, from each of its entries read whole (a fault in one
    is its CatalogError)."""
    entries: dict[str, Any] = {}
    headers: dict[str, list[Any]] = {}
    known: dict[str, list[Any]] = {}
    for directory in sorted(path for path in catalog.iterdir() if (path / ENTRY).is_file()):
        data = (directory / ENTRY).read_bytes()
        patch = entry.load(directory)
        sha256 = hashlib.sha256(data).hexdigest()
        entries[directory.name] = {
            "sha256": sha256,
            "size": len(data),
            "distribution": patch.distribution,
            "files": [{"module": file.module, "file": file.file} for file in patch.files],
            "advisories": list(patch.advisories),
        }
        # The files whose statements it changes (a file it removes or adds has none: not named).
        changes = {file.file: [target.name for target in file.targets] for file in patch.files if file.targets}
        rest = {key: value for key, value in header(patch).items() if key not in _HEAD}
        headers[directory.name] = [sha256, rest, changes]
        rows = _known_rows(patch)
        if rows is not None:
            known[directory.name] = [sha256, rows]
    return {"schema": SCHEMA, "entries": entries}, headers, known


def texts(catalog: Path) -> tuple[str, str, str]:
    """index.json's text, headers.jsonl's and known.jsonl's: after its schema, each of the two has an entry a line
    (its name, a tab, and the JSON of the sha256 of its patch.json and its header and changes, or its known files),
    so that a reader parses only the lines of the entries it needs."""
    found, headers, known = build(catalog)
    return (
        json.dumps(found, indent=1, sort_keys=True) + "\n",
        _text(_HEADERS_HEAD, headers),
        _text(_KNOWN_HEAD, known),
    )


def _text(head: str, rows: Mapping[str, list[Any]]) -> str:
    lines = [head, *(f"{name}\t{json.dumps(row, sort_keys=True)}" for name, row in sorted(rows.items()))]
    return "\n".join(lines) + "\n"


def write(catalog: Path) -> Path:
    """Write the catalog's index from its entries (atomically: a reader sees the old index or the new). headers.jsonl
    and known.jsonl first: a reader takes their lines only for the patch.json the index's record names."""
    from hfpatch import files

    index_text, headers_text, known_text = texts(catalog)
    files.write_atomically(catalog / HEADERS, headers_text.encode("utf-8"))
    files.write_atomically(catalog / KNOWN, known_text.encode("utf-8"))
    path = catalog / INDEX
    files.write_atomically(path, index_text.encode("utf-8"))
    _LINES.pop(catalog / HEADERS, None)
    _LINES.pop(catalog / KNOWN, None)
    return path


def stale(catalog: Path) -> str | None:
    """Why the catalog's index is not its entries' (missing, or another text), or None where it is."""
    written = (catalog / INDEX, catalog / HEADERS, catalog / KNOWN)
    for path, wanted in zip(written, texts(catalog), strict=True):
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            return f"{path} is missing"
        if current != wanted:
            return f"{path} does not match the entries beside it"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from hfpatch.errors import HfpatchError

    arguments = list(sys.argv[1:] if argv is None else argv)
    checking = "--check" in arguments
    catalogs = [Path(argument) for argument in arguments if argument != "--check"]
    if not catalogs or any(argument.startswith("-") for argument in map(str, catalogs)):
        print("usage: python -m hfpatch.index [--check] DIR [DIR ...]", file=sys.stderr)
        return 2
    problems = []
    try:
        for catalog in catalogs:
            if not os.path.isdir(catalog):  # noqa: PTH112 - False where it may not look
                print(f"hfpatch.index: error: {catalog} is not a directory of patch entries.", file=sys.stderr)
                return 2
            if checking:
                problems += [why for why in [stale(catalog)] if why]
            else:
                print(f"wrote {write(catalog)}")
    except HfpatchError as error:
        print(f"hfpatch.index: error: {error}", file=sys.stderr)
        return int(error.exit_code)
    for problem in problems:
        print(f"{problem}: `python -m hfpatch.index {' '.join(map(str, catalogs))}` writes it", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
