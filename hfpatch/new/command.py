"""`hfpatch new`: pick the releases, read their wheels, print the table, and write the entry.

The decisions are those of hfpatch.new.judge and hfpatch.new.assemble (pure); this is the shell around them. The
entry is written into a scratch directory that is renamed into place only once `hfpatch.entry.load` reads it back
unchanged and `hfpatch.classify` gives every release read the verdict of the table.
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

from hfpatch import catalog, entry, files
from hfpatch.entry import Patch, release_span
from hfpatch.errors import AuthoringError, UsageError
from hfpatch.new import wheels
from hfpatch.new.assemble import Authoring, Missing, author, lack_phrase
from hfpatch.new.judge import Judged, defines_any, fixed_definitions
from hfpatch.new.request import Request, check_id, parse_targets, version_option
from hfpatch.new.table import render_table

_PULL = re.compile(r"https?://github\.com/([^/]+/[^/]+)/(?:pull|issues)/(\d+)/?")


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


def run(args: Request, out: TextIO) -> int:
    """`hfpatch new`; raises HfpatchError (exit 2, nothing written) where it cannot write the entry."""
    patch_id = check_id(args.patch_id)
    distribution, module, targets = parse_targets(args.targets)
    fixed = version_option(args.fixed_in, "--fixed-in")
    since = None if args.since is None else version_option(args.since, "--since")
    until = None if args.until is None else version_option(args.until, "--until")
    named = [version_option(release, "--release") for release in args.releases]
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
    header = _header(args, patch_id, distribution, module, reading.file, str(fixed), targets)
    fixed_definitions(reading.texts[str(fixed)] or b"", header, targets)  # before reading everything else

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

    authoring = author(reading.texts, header, targets, reading.unavailable)
    print(f"{distribution} {module} ({reading.file}), {len(authoring.rows)} releases from {source.where}:", file=out)
    print(render_table(authoring), file=out)
    for note in authoring.notes:
        print(f"note: {note}", file=out)
    if authoring.missing:
        raise AuthoringError(_not_safe(header, authoring.missing))
    if authoring.refusal:
        raise AuthoringError(authoring.refusal)
    if authoring.patch is None:
        raise AuthoringError(
            "no release read needs the patch: each has the fix, lacks the targets, or cannot take the fix (see the "
            "table); nothing written."
        )
    about = _about(header, authoring, source.where)
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
        "script run in the application's interpreter whose last stdout line is JSON with ok, bug, error_type, "
        "error and loader_file (see the built-in transformers-46618/probe.py), and add "
        f'"probe": "probe.py" to {entry.ENTRY}.',
        file=out,
    )
    return 0


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _header(
    args: Request, patch_id: str, distribution: str, module: str, file: str, fixed: str, targets: list[str]
) -> Patch:
    """The entry without targets or known files, for the core to fill in."""
    url = args.upstream or f"https://pypi.org/project/{distribution}/{fixed}/"
    pull = _PULL.fullmatch(url)
    # What messages call the fix ("the bug <upstream> fixed in <fixed_in>"): owner/repo#N, the URL, or the id.
    upstream = f"{pull[1]}#{pull[2]}" if pull else url if args.upstream else patch_id
    title = args.title or f"{', '.join(targets)} in {module}, as fixed in {distribution} {fixed}"
    return Patch(
        id=patch_id,
        title=title,
        upstream=upstream,
        url=url,
        distribution=distribution,
        module=module,
        file=file,
        fixed_in=fixed,
        first_defined_in=None,
        targets=(),
        known_files=(),
        directory=Path(patch_id),
    )


def _not_safe(header: Patch, missing: Sequence[Missing]) -> str:
    sentences = []
    for item in missing:
        users, span = ", ".join(item.users), release_span(item.releases)
        lacking = f"the fix of {users} uses {item.name}, which {span} {lack_phrase(item.releases)}"
        if item.kind_in_fix == "function":
            advice = f"add --target {header.distribution}:{header.module}:{item.name} to insert it with the patch"
        elif item.kind_in_fix is None:
            advice = f"the {header.fixed_in} module does not bind it either (a builtin of a newer Python?)"
        else:
            article = "an" if item.kind_in_fix[0] in "aeiou" else "a"
            advice = f"it is {article} {item.kind_in_fix} in {header.fixed_in}, which hfpatch new cannot insert"
        sentences.append(f"{lacking}; {advice}")
    return (
        f"not safe to backport as it stands: {'; '.join(sentences)} (or leave those releases out with --since); "
        "nothing written."
    )


def _about(header: Patch, authoring: Authoring, where: str) -> tuple[str, ...]:
    releases = [row.release for row in authoring.rows if row.verdict is not Judged.SKIPPED]
    return (
        f"{header.title}: {header.upstream}, as data.",
        f"Written by `hfpatch new` from the wheels of {header.distribution} {release_span(releases)} ({where}).",
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
