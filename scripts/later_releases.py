"""Record in a catalog's entries the digest of every release after the fix, so that `check` knows them unparsed.

    python scripts/later_releases.py --wheels DIR CATALOG [PATCH_ID ...]

An entry knows by digest the files of the releases it was written from; a later release whose file it does not know
is parsed by every `check` (the installed code decides). For each entry (all of the catalog's by default) and each
wheel in DIR of its distribution at or after its fixed_in that no known file lists, this reads the entry's files from
the wheel and classifies each with hfpatch's own classifier, as `check` would on that release. Where every file is
fixed or not applicable (or the release lacks a file, which RECORD then says it never had), each file's digest is
recorded with that verdict: the
release is added to the known file of that digest, or a known file of its own is added. Anything else (a release
after the fix with the bug, or code the entry does not know) is printed and not recorded: that is for a person to
read. releases_read is left as it is: it names the releases the entry was written from. The catalog's index is
written again at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from hfpatch import catalog, classify, entry, index
from hfpatch.entry import FileShape, KnownFile, Patch, PatchFile, Verdict
from hfpatch.new import wheels

RECORDED = (Verdict.FIXED, Verdict.NOT_APPLICABLE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="a directory of the distributions' wheels")
    parser.add_argument("catalog", type=Path)
    parser.add_argument("patch_ids", nargs="*")
    options = parser.parse_args()
    directories = catalog.entry_dirs([options.catalog])
    chosen = options.patch_ids or sorted(directories)
    unknown = [patch_id for patch_id in chosen if patch_id not in directories]
    if unknown:
        parser.error(f"no entry {unknown[0]!r} in {options.catalog}")
    by_distribution: dict[str, list[Path]] = {}
    for path in sorted(options.wheels.glob("*.whl")):
        name = canonicalize_name(path.name.split("-", 1)[0])
        by_distribution.setdefault(name, []).append(path)
    changed = 0
    for patch_id in chosen:
        patch = entry.load(directories[patch_id])
        extended = _extended(patch, by_distribution.get(canonicalize_name(patch.distribution), []))
        if extended != patch:
            entry.write(options.catalog, extended, force=True, previous=patch)
            changed += 1
    index.write(options.catalog)
    print(f"{changed} of {len(chosen)} entries changed; index written")
    return 0


def _extended(patch: Patch, paths: list[Path]) -> Patch:
    if patch.fixed_in is None:
        return patch
    floor = Version(patch.fixed_in)
    files = [file for file in patch.files if file.shape is FileShape.EDIT]
    listed = {release for file in files for known in file.known_files for release in known.releases}
    added: dict[str, dict[str, tuple[Verdict | None, list[str]]]] = {file.file: {} for file in files}
    for path in sorted(paths, key=wheels.version_of):
        version = wheels.version_of(path)
        if version < floor or version.is_prerelease or str(version) in listed:
            continue
        found = _read(patch, files, path, str(version))
        if found is None:
            continue
        for name, (digest, verdict) in found.items():
            added[name].setdefault(digest, (verdict, []))[1].append(str(version))
    new_files = [_with(file, added.get(file.file, {})) for file in patch.files]
    return patch._replace(files=tuple(new_files))


def _read(
    patch: Patch, files: list[PatchFile], path: Path, release: str
) -> dict[str, tuple[str, Verdict | None]] | None:
    """Each file's digest and verdict in the release, where the entry's classifier calls each file fixed or not
    applicable (the fixed release's code, or code the fix has nothing to do with; None: the targets are absent, as
    a known file says it); else None."""
    digests: dict[str, tuple[str, Verdict | None]] = {}
    with wheels.Wheel(path) as wheel:
        texts = {file.file: wheel.read(file.file) for file in files}
    if all(text is None for text in texts.values()):
        return None  # a release without the files: RECORD says so, nothing to parse
    for file in files:
        text = texts[file.file]
        if text is None:
            continue
        digest = hashlib.sha256(text).hexdigest()
        found = classify.identify(text, patch, file, release)
        if found.verdict not in RECORDED:
            what = found.verdict.value if found.verdict else "unknown code"
            print(f"{patch.id}: {patch.distribution} {release} {file.file} is {what}: not recorded", file=sys.stderr)
            return None
        targets = found.targets
        absent = found.verdict is Verdict.NOT_APPLICABLE and bool(targets) and all(each.absent for each in targets)
        digests[file.file] = (digest, None if absent else found.verdict)
    return digests


def _with(file: PatchFile, added: dict[str, tuple[Verdict | None, list[str]]]) -> PatchFile:
    if not added:
        return file
    known = list(file.known_files)
    for digest, (verdict, releases) in added.items():
        place = next((number for number, row in enumerate(known) if row.sha256 == digest), None)
        if place is None:
            known.append(KnownFile(digest, tuple(releases), verdict))
        else:  # the classifier read the release by this row: its verdict stands
            row = known[place]
            known[place] = row._replace(releases=tuple(sorted({*row.releases, *releases}, key=Version)))
    return file._replace(known_files=tuple(known))


if __name__ == "__main__":
    sys.exit(main())
