"""`hfpatch new`: pick the releases, read their wheels, print the table, and write the entry.

The decisions are hfpatch.authoring's (pure); this is the shell around them. The entry is written into a scratch
directory that is renamed into place only once `hfpatch.entry.load` reads it back unchanged and `hfpatch.classify`
gives every release read the verdict of the table.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from packaging.version import Version

from hfpatch import catalog, entry, files, wheels
from hfpatch.authoring import (
    SKIPPED,
    Authoring,
    AuthoringError,
    Meta,
    Missing,
    author,
    defines_any,
    fixed_definitions,
    lack_phrase,
    parse_version,
    render_table,
)
from hfpatch.entry import Patch, release_span
from hfpatch.errors import UsageError

_DISTRIBUTION = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_PULL = re.compile(r"https?://github\.com/([^/]+/[^/]+)/(?:pull|issues)/(\d+)/?")


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
    if len({(distribution.lower(), module) for distribution, module, _ in parsed}) != 1:
        raise UsageError("every --target must name the same distribution and module: one patch edits one file.")
    names = [name for _, _, name in parsed]
    if len(set(names)) != len(names):
        raise UsageError("a --target is given twice.")
    return parsed[0][0], parsed[0][1], names


@dataclass
class _Reading:
    """The releases read so far: each one's file, or why it could not be read."""

    source: wheels.Releases
    texts: dict[str, bytes | None] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    file: str = ""

    def read(self, versions: Sequence[Version]) -> None:
        todo = [
            version for version in versions if str(version) not in self.texts and str(version) not in self.unavailable
        ]
        for version, fetched in self.source.fetch(todo).items():
            if fetched.path is None:
                self.unavailable[str(version)] = fetched.why_not
                continue
            with wheels.Wheel(fetched.path) as wheel:
                if wheel.version != version:
                    raise AuthoringError(f"{fetched.path} holds {wheel.version}, not {version}.")
                self.texts[str(version)] = wheel.read(self.file) if self.file else None


def _locate_file(path: Path, module: str) -> str:
    with wheels.Wheel(path) as wheel:
        for candidate in wheels.module_paths(module):
            if wheel.has(candidate):
                return candidate
    paths = " or ".join(wheels.module_paths(module))
    raise AuthoringError(f"{path.name} has no {paths}: is {module} a module of that distribution?")


def _walk_back(reading: _Reading, older: Sequence[Version], targets: Sequence[str]) -> None:
    """Read releases from the newest of `older` down, until one defines none of the targets."""
    batch_size = wheels.PARALLEL_DOWNLOADS
    for start in range(0, len(older), batch_size):
        batch = older[start : start + batch_size]
        reading.read(batch)
        for version in batch:
            key = str(version)
            if key in reading.texts and not defines_any(reading.texts[key], targets, key):
                reading.texts = {
                    release: text for release, text in reading.texts.items() if Version(release) >= version
                }
                reading.unavailable = {
                    release: why for release, why in reading.unavailable.items() if Version(release) >= version
                }
                return


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


def run(args: Request, out: TextIO) -> int:
    """`hfpatch new`; raises HfpatchError (exit 2, nothing written) where it cannot write the entry."""
    patch_id: str = args.patch_id
    if not entry.ID.fullmatch(patch_id):
        raise UsageError(f"{patch_id!r} cannot be an id: lowercase letters, digits, '.', '_' and '-' only.")
    distribution, module, targets = parse_targets(args.targets)
    fixed = parse_version(args.fixed_in, "--fixed-in")
    since = None if args.since is None else parse_version(args.since, "--since")
    until = None if args.until is None else parse_version(args.until, "--until")
    named = [parse_version(release, "--release") for release in args.releases]
    if since is not None and since > fixed:
        raise UsageError(f"--since {since} is after --fixed-in {fixed}.")
    catalog_dir = Path(args.catalog)
    destination = catalog_dir / patch_id
    if catalog_dir.exists() and not catalog_dir.is_dir():
        raise UsageError(f"the catalog {catalog_dir} is not a directory; give --catalog a directory.")
    if (destination.exists() or destination.is_symlink()) and not args.force:
        raise UsageError(f"{destination} exists; give --force to replace it, or choose another PATCH_ID.")

    pre = args.pre or fixed.is_prerelease
    source: wheels.Releases
    if args.find_links:
        source = wheels.FindLinks(Path(args.find_links), distribution)
    else:
        source = wheels.PackageIndex(distribution, Path(args.cache) if args.cache else wheels.default_cache(), pre=pre)
    listed = source.versions()
    if not listed:
        raise AuthoringError(f"no wheel of {distribution} in {source.where}; is the name right?")
    versions = sorted(
        {version for version in listed if pre or not version.is_prerelease or version == fixed} | set(named)
    )
    if fixed not in versions:
        near = ", ".join(str(version) for version in versions[-8:])
        raise UsageError(f"--fixed-in {fixed} is not a release of {distribution} in {source.where} (newest: {near}).")

    reading = _Reading(source)
    newer = [version for version in versions if version > fixed]
    # The newest release is read in every default run: fetched beside the fixed one, pip's waits overlap.
    fix_fetched = source.fetch([fixed, *newer[-1:]])[fixed]
    if fix_fetched.path is None:
        raise AuthoringError(f"cannot read {distribution} {fixed} (the --fixed-in release): {fix_fetched.why_not}.")
    reading.file = _locate_file(fix_fetched.path, module)
    reading.read([fixed])
    meta = _meta(args, patch_id, distribution, module, reading.file, str(fixed), targets)
    fixed_definitions(reading.texts[str(fixed)] or b"", meta, targets)  # before reading everything else

    if args.all_releases:
        reading.read(newer)
    elif until is not None:
        reading.read([version for version in newer if version <= until])
    elif newer:
        reading.read([newer[-1]])
    older = [version for version in versions if version < fixed]
    if since is not None:
        reading.read([version for version in older if version >= since])
    else:
        _walk_back(reading, older[::-1], targets)
    reading.read([version for version in named if version not in reading.texts])

    authoring = author(reading.texts, meta, targets, reading.unavailable)
    print(f"{distribution} {module} ({reading.file}), {len(authoring.rows)} releases from {source.where}:", file=out)
    print(render_table(authoring), file=out)
    for note in authoring.notes:
        print(f"note: {note}", file=out)
    if authoring.missing:
        raise AuthoringError(_not_safe(meta, authoring.missing))
    if authoring.refusal:
        raise AuthoringError(authoring.refusal)
    if authoring.patch is None:
        raise AuthoringError(
            "no release read needs the patch: each has the fix, lacks the targets, or cannot take the fix (see the "
            "table); nothing written."
        )
    about = _about(meta, authoring, source.where)
    written = write_entry(catalog_dir, authoring.patch._replace(about=about), force=args.force)
    forms = sum(len(target.forms) for target in authoring.patch.targets)
    targets_written = len(authoring.patch.targets)
    files = len(authoring.patch.known_files)
    print(f"wrote {written} ({_count(targets_written, 'target')}, {_count(forms, 'form')}, {files} files)", file=out)
    if (catalog.builtin_catalog() / patch_id / entry.ENTRY).is_file():
        print(
            f"note: the built-in catalog has an entry {patch_id} too; hfpatch refuses two entries with one id, so "
            "rename this one to use it beside the built-in catalog.",
            file=out,
        )
    print(
        f'no probe: `hfpatch verify` reports "no probe" for {patch_id}. To add one, write {written}/probe.py, a '
        "script run in the target interpreter whose last stdout line is JSON with ok, bug, error_type, error and "
        f'loader_file (see the built-in transformers-46618/probe.py), and add "probe": "probe.py" to {entry.ENTRY}.',
        file=out,
    )
    return 0


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _meta(
    args: Request, patch_id: str, distribution: str, module: str, file: str, fixed: str, targets: list[str]
) -> Meta:
    url = args.upstream or f"https://pypi.org/project/{distribution}/{fixed}/"
    pull = _PULL.fullmatch(url)
    # What messages call the fix ("the bug <upstream> fixed in <fixed_in>"): owner/repo#N, the URL, or the id.
    upstream = f"{pull[1]}#{pull[2]}" if pull else url if args.upstream else patch_id
    title = args.title or f"{', '.join(targets)} in {module}, as fixed in {distribution} {fixed}"
    return Meta(patch_id, title, upstream, url, distribution, module, file, fixed)


def _not_safe(meta: Meta, missing: Sequence[Missing]) -> str:
    sentences = []
    for item in missing:
        users, span = ", ".join(item.users), release_span(item.releases)
        lacking = f"the fix of {users} uses {item.name}, which {span} {lack_phrase(item.releases)}"
        if item.kind_in_fix == "function":
            advice = f"add --target {meta.distribution}:{meta.module}:{item.name} to insert it with the patch"
        elif item.kind_in_fix is None:
            advice = f"the {meta.fixed_in} module does not bind it either (a builtin of a newer Python?)"
        else:
            article = "an" if item.kind_in_fix[0] in "aeiou" else "a"
            advice = f"it is {article} {item.kind_in_fix} in {meta.fixed_in}, which hfpatch new cannot insert"
        sentences.append(f"{lacking}; {advice}")
    return (
        f"not safe to backport as it stands: {'; '.join(sentences)} (or leave those releases out with --since); "
        "nothing written."
    )


def _about(meta: Meta, authoring: Authoring, where: str) -> tuple[str, ...]:
    releases = [row.release for row in authoring.rows if row.verdict != SKIPPED]
    return (
        f"{meta.title}: {meta.upstream}, as data.",
        f"Written by `hfpatch new` from the wheels of {meta.distribution} {release_span(releases)} ({where}).",
        'No probe yet: add probe.py and "probe": "probe.py" for `hfpatch verify`.',
    )


def write_entry(catalog_dir: Path, patch: Patch, *, force: bool) -> Path:
    """Write the entry beside its place, read it back, then rename it in: a reader sees no entry or a whole one."""
    final = catalog_dir / patch.id
    files.make_directory(catalog_dir)
    try:
        scratch = Path(tempfile.mkdtemp(prefix=f".{patch.id}.new-", dir=catalog_dir))
    except OSError as error:
        raise AuthoringError(f"cannot write into {catalog_dir}: {error.strerror or error}.") from None
    try:
        staged = scratch / patch.id
        (staged / "fixed").mkdir(parents=True)
        for target in patch.targets:
            (staged / entry.fixed_path(target)).write_text(target.fixed_text + "\n", encoding="utf-8")
        (staged / entry.ENTRY).write_text(entry.render(patch), encoding="utf-8")
        loaded = entry.load(staged)
        if loaded._replace(directory=patch.directory) != patch:
            raise AuthoringError(f"the entry read back from {staged} differs from the one written (a bug).")
        if final.exists() or final.is_symlink():
            if not force:
                raise UsageError(f"{final} exists; give --force to replace it.")
            final.rename(scratch / "replaced")
        staged.rename(final)
        # What root (sudo) writes into a user's repository belongs to that user, as everything hfpatch creates.
        for path in sorted([final, *final.rglob("*")], key=lambda path: len(path.parts)):
            files.take_owner_of_directory(path)
    except OSError as error:
        raise AuthoringError(f"cannot write {final}: {error.strerror or error}.") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final
