"""Record in a catalog's entries the digest of the releases they were not written from, so that `check` knows
their files without parsing them.

    python scripts/later_releases.py --wheels DIR CATALOG [PATCH_ID ...]

An entry knows by digest the files of the releases it was written from; any other release's file is parsed by every
`check` (the installed code decides). For each entry (all of the catalog's by default) and each wheel in DIR of its
distribution that no known file lists, at or after its fixed_in or outside its releases_read, this reads the entry's
files from the wheel and classifies each with hfpatch's own classifier, as `check` would on that release. Where each
file is fixed or not applicable (or absent: RECORD then says the release never had it), or, outside releases_read,
code the entry does not know (another line's, which `check` calls not-covered there: verdict "unknown"), each file's
digest is recorded with that verdict: the release is added to the known file of that digest, or a known file of its
own is added; a file not applicable gets the classifier's reason, which `check` then need not parse for (any such
file, where every release of it read gives one reason). Anything else (a release after the fix with the bug again,
say) is printed and not recorded: that is for a person to read. releases_read is left as it is: it names the
releases the entry was written from. The catalog's index is written again at the end.
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
    files = [file for file in patch.files if file.shape is FileShape.EDIT]
    listed = {release for file in files for known in file.known_files for release in known.releases}
    added: dict[str, dict[str, KnownFile]] = {file.file: {} for file in files}  # file -> digest -> its row
    for path in sorted(paths, key=wheels.version_of):
        version = wheels.version_of(path)
        if version.is_prerelease or str(version) in listed:
            continue
        # An entry that does not say which releases it was written from (an older hfpatch's) only gains the later.
        outside = patch.releases_read is not None and not (
            Version(patch.releases_read[0]) <= version <= Version(patch.releases_read[1])
        )
        after = patch.fixed_in is not None and version >= Version(patch.fixed_in)
        if not (after or outside):
            continue  # a release the entry was written from: new read it, or it is for new to read
        found = _read(patch, files, path, str(version), outside=outside)
        for name, row in (found or {}).items():
            kept = added[name].setdefault(row.sha256, row._replace(releases=()))
            reason = kept.reason if kept.reason == row.reason or not kept.releases else ""
            added[name][row.sha256] = kept._replace(releases=(*kept.releases, str(version)), reason=reason)
    extended = patch._replace(files=tuple(_with(file, added.get(file.file, {})) for file in patch.files))
    return _with_reasons(extended, {str(wheels.version_of(path)): path for path in paths})


def _with_reasons(patch: Patch, paths: dict[str, Path]) -> Patch:
    """Each not-applicable known file with the reason the classifier gives for it, where it gives the same one in
    every release of that file read here: `check` then takes the reason from the row instead of parsing the file."""
    files = []
    for file in patch.files:
        rows = []
        for row in file.known_files:
            if row.verdict is Verdict.NOT_APPLICABLE and not row.reason and file.shape is FileShape.EDIT:
                reasons = {
                    _reason(patch, file, paths[release], release) for release in row.releases if release in paths
                }
                if len(reasons) == 1 and "" not in reasons:
                    row = row._replace(reason=reasons.pop())
            rows.append(row)
        files.append(file._replace(known_files=tuple(rows)))
    return patch._replace(files=tuple(files))


def _reason(patch: Patch, file: PatchFile, path: Path, release: str) -> str:
    with wheels.Wheel(path) as wheel:
        text = wheel.read(file.file)
    if text is None:
        return ""
    judged = classify.identify(text, patch, file, release)
    return judged.detail if judged.verdict is Verdict.NOT_APPLICABLE else ""


def _read(
    patch: Patch, files: list[PatchFile], path: Path, release: str, *, outside: bool
) -> dict[str, KnownFile] | None:
    """Each file's known file in the release, where the entry's classifier calls each file fixed or not applicable
    (the fixed release's code, or code the fix has nothing to do with; the targets absent, as a known file says
    it), or, in a release outside those the entry was written from, code it does not know (`check` says
    not-covered there); else None, and why is printed."""
    found: dict[str, KnownFile] = {}
    with wheels.Wheel(path) as wheel:
        texts = {file.file: wheel.read(file.file) for file in files}
    if all(text is None for text in texts.values()):
        return None  # a release without the files: RECORD says so, nothing to parse
    for file in files:
        text = texts[file.file]
        if text is None:
            continue
        digest = hashlib.sha256(text).hexdigest()
        judged = classify.identify(text, patch, file, release)
        targets = judged.targets
        if judged.verdict is None and outside:
            found[file.file] = KnownFile(digest, (), None, code_unknown=True)
        elif judged.verdict in RECORDED:
            absent = judged.verdict is Verdict.NOT_APPLICABLE and bool(targets) and all(each.absent for each in targets)
            reason = judged.detail if judged.verdict is Verdict.NOT_APPLICABLE and not absent else ""
            found[file.file] = KnownFile(digest, (), None if absent else judged.verdict, reason=reason)
        else:
            what = judged.verdict.value if judged.verdict else "unknown code"
            print(f"{patch.id}: {patch.distribution} {release} {file.file} is {what}: not recorded", file=sys.stderr)
            return None
    return found


def _with(file: PatchFile, added: dict[str, KnownFile]) -> PatchFile:
    if not added:
        return file
    known = list(file.known_files)
    for digest, row in added.items():
        place = next((number for number, each in enumerate(known) if each.sha256 == digest), None)
        if place is None:
            known.append(row)
        else:  # the classifier read the release by this row: its verdict stands
            kept = known[place]
            known[place] = kept._replace(releases=tuple(sorted({*kept.releases, *row.releases}, key=Version)))
    return file._replace(known_files=tuple(known))


if __name__ == "__main__":
    sys.exit(main())
