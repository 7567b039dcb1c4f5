"""`hfpatch new --remove DIST:PATTERN`: an entry of the files upstream stopped shipping (a file's shape "remove"),
such as transformers' conversion scripts, gone from 4.48.0. Each file of the releases read whose path matches is
known by each release's digest; apply empties it, keeping its original, and revert puts it back.

The steps are `new`'s: what was asked -> which releases -> their files -> the release table -> the entry -> written.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable, Mapping, Sequence

from packaging.version import Version

from hfpatch import entry
from hfpatch.entry import FileShape, KnownFile, Patch, PatchFile, Verdict, release_span
from hfpatch.errors import AuthoringError
from hfpatch.new import wheels
from hfpatch.new.request import Asked
from hfpatch.new.selection import Selection

# A release's files the pattern matches: path -> sha256 of its bytes.
Shipped = dict[str, str]


def shipped(releases: wheels.Releases, versions: Iterable[Version], pattern: str) -> dict[str, Shipped | str]:
    """Each release's files that match `pattern` (a path inside the wheel, * and ? as fnmatch has them), each by
    digest and checked against the wheel's RECORD; or, for a release whose wheel cannot be had, why not."""
    found: dict[str, Shipped | str] = {}
    for version, fetched in releases.fetch(list(versions)).items():
        if fetched.path is None:
            found[str(version)] = fetched.why_not
            continue
        with wheels.Wheel(fetched.path) as wheel:
            files: Shipped = {}
            for member in sorted(wheel.members()):
                if member.endswith(".py") and fnmatch.fnmatchcase(member, pattern):
                    data = wheel.read(member)
                    assert data is not None
                    files[member] = hashlib.sha256(data).hexdigest()
            found[str(version)] = files
    return found


def read_back(releases: wheels.Releases, selection: Selection, asked: Asked, pattern: str) -> dict[str, Shipped | str]:
    """The fixed release and those after it (which must ship none of the files), then the releases before it, from
    the newest down to --since, or to the first that ships none of them."""
    assert asked.fixed_in is not None
    found = shipped(releases, [asked.fixed_in, *selection.newer[-1:]], pattern)
    older = [version for version in selection.older if asked.since is None or version >= asked.since][::-1]
    for start in range(0, len(older), wheels.PARALLEL_DOWNLOADS):
        batch = shipped(releases, older[start : start + wheels.PARALLEL_DOWNLOADS], pattern)
        found.update(batch)
        if asked.since is None and any(files == {} for files in batch.values()):
            break
    return found


def still_shipped(found: Mapping[str, Shipped | str], fixed_in: str) -> frozenset[str]:
    """The files the pattern matches that a release at or after the fix still ships: not removed upstream."""
    return frozenset(
        path
        for release, files in found.items()
        if Version(release) >= Version(fixed_in) and isinstance(files, dict)
        for path in files
    )


def removed_files(found: Mapping[str, Shipped | str], fixed_in: str) -> tuple[PatchFile, ...]:
    """Each file a release before the fix ships and none at or after it does, with each of its forms (by digest)
    and the releases that ship it."""
    kept = still_shipped(found, fixed_in)
    forms: dict[str, dict[str, list[str]]] = {}
    for release in sorted(found, key=Version):
        files = found[release]
        if isinstance(files, dict) and Version(release) < Version(fixed_in):
            for path, digest in files.items():
                if path not in kept:
                    forms.setdefault(path, {}).setdefault(digest, []).append(release)
    if not forms:
        raise AuthoringError(
            f"no file the pattern matches is gone from {fixed_in}: each release read before it ships none, or "
            f"{fixed_in} ships it still; nothing written."
        )
    return tuple(
        PatchFile(
            _module(path),
            path,
            (),
            tuple(
                KnownFile(digest, tuple(releases), Verdict.NEEDS_PATCH, entry.EMPTY_SHA256)
                for digest, releases in digests.items()
            ),
            FileShape.REMOVE,
        )
        for path, digests in sorted(forms.items())
    )


def _module(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def table(found: Mapping[str, Shipped | str], fixed_in: str, removed: Sequence[PatchFile]) -> str:
    """One line a release: how many of the files it ships that the entry removes, and what the patch makes of it."""
    paths = {file.file for file in removed}
    lines = [("release", "files", "verdict")]
    for release in sorted(found, key=Version):
        files = found[release]
        if isinstance(files, str):
            lines.append((release, "-", f"skipped: {files}"))
            continue
        count = sum(1 for path in files if path in paths)
        if Version(release) >= Version(fixed_in):
            lines.append((release, str(count), "fixed"))
        else:
            lines.append((release, str(count), "needs-patch" if count else "absent"))
    width = [max(len(line[column]) for line in lines) for column in range(2)]
    return "\n".join(f"{line[0].ljust(width[0])}  {line[1].ljust(width[1])}  {line[2]}" for line in lines)


def patch_of(header: Patch, files: Sequence[PatchFile], found: Mapping[str, Shipped | str], pattern: str) -> Patch:
    read = sorted((release for release, files in found.items() if isinstance(files, dict)), key=Version)
    title = header.title if header.title else pattern
    return header._replace(
        title=title,
        files=tuple(files),
        releases_read=(read[0], read[-1]) if read else None,
        about=(
            f"{title}: {header.upstream}, as data.",
            f"Written by `hfpatch new --remove {pattern}` from the wheels of {header.distribution} "
            f"{release_span(read)}: every file the pattern matches, in each form a release shipped; apply empties it.",
        ),
    )
