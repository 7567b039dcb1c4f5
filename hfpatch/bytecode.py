"""Cached bytecode of a patched file: find every .pyc, tell its invalidation mode, remove and rebuild them.

pip writes timestamp .pyc files; an unchecked-hash .pyc is never compared with its source, so one left from the
old code would run it. After apply or revert every cached .pyc of the file goes, and those of the target
interpreter are rebuilt in the mode they had.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from hfpatch import files


class CachedBytecode(NamedTuple):
    path: Path
    cache_tag: str
    optimize: int
    mode: str | None  # TIMESTAMP, CHECKED_HASH, UNCHECKED_HASH; None where the header cannot be read
    source_hash: bytes  # bytes 8-16 of the header: the source's hash in hash-based modes


# A cached file's name after `<module>.`: its cache tag, an optimisation level, .pyc.
_TAIL = re.compile(r"([^.]+)(?:\.opt-([0-9]+))?\.pyc")


def cached_files(
    source: Path, cache_tag: str | None = None, listed: Callable[[Path], list[str]] | None = None
) -> list[CachedBytecode]:
    """Every cached .pyc of `source` (module.cache_tag[.opt-N].pyc): all interpreters, all optimisation levels, or
    (`cache_tag`) one interpreter's only; `listed` gives the names in a __pycache__ directory (os.listdir by
    default; a run lists each once)."""
    found: list[CachedBytecode] = []
    cache = source.parent / "__pycache__"
    try:
        # A package's cache holds every module's: names first, Paths only for the few that match.
        names = listed(cache) if listed is not None else os.listdir(cache)  # noqa: PTH208
    except OSError:
        return []
    prefix = f"{source.stem}." if cache_tag is None else f"{source.stem}.{cache_tag}."
    candidates = sorted(name for name in names if name.startswith(prefix))
    if not candidates:
        return found
    for name in candidates:
        # What follows `<module>.`: one pattern for every module (an entry of hundreds of files compiled one each).
        match = _TAIL.fullmatch(name, len(f"{source.stem}."))
        if match:
            path = cache / name
            mode, source_hash = _header(path)
            found.append(CachedBytecode(path, match[1], int(match[2] or 0), mode, source_hash))
    return found


def _header(pyc: Path) -> tuple[str | None, bytes]:
    """The invalidation mode (PEP 552) and the source hash field, read from the .pyc header."""
    try:
        with pyc.open("rb") as handle:
            header = handle.read(16)
    except OSError:
        return None, b""
    if len(header) < 16:
        return None, b""
    flags = int.from_bytes(header[4:8], "little")
    if flags == 0:
        return "TIMESTAMP", b""
    return ("CHECKED_HASH" if flags & 0b10 else "UNCHECKED_HASH"), header[8:16]


def unchecked(cached: list[CachedBytecode], cache_tag: str) -> list[CachedBytecode]:
    """The application interpreter's unchecked-hash files: the only ones that can run code other than the source's."""
    return [item for item in cached if item.cache_tag == cache_tag and item.mode == "UNCHECKED_HASH"]


def rebuild_requests(cached: list[CachedBytecode], cache_tag: str) -> list[dict[str, object]]:
    return [
        {"cfile": str(item.path), "optimize": item.optimize, "mode": item.mode}
        for item in cached
        if item.cache_tag == cache_tag and item.mode is not None
    ]


def remove_all(cached: list[CachedBytecode]) -> None:
    for item in cached:
        files.remove(item.path)


def own_rebuilt(requests: list[dict[str, object]]) -> None:
    """The interpreter that rebuilt them runs as hfpatch's user; give them the owner of their directory."""
    for request in requests:
        path = Path(str(request["cfile"]))
        if path.exists():
            files.take_owner_of_directory(path)
