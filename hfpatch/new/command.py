"""`hfpatch new`: pick the releases, read their wheels, print the table, and write the entry.

The decisions are those of hfpatch.new.judge and hfpatch.new.assemble (pure); this is the shell around them. The
entry is written into a scratch directory that is renamed into place only once `hfpatch.entry.load` reads it back
unchanged and `hfpatch.classify` gives every release read the verdict of the table.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from packaging.version import Version

from hfpatch import catalog, entry, files, statements
from hfpatch.entry import Patch, release_span
from hfpatch.errors import AuthoringError, UnexpectedCode, UsageError
from hfpatch.new import wheels
from hfpatch.new.assemble import Authoring, Fixed, Missing, Wanted, author, dependencies, understand
from hfpatch.new.judge import Judged
from hfpatch.new.request import Request, Targets, check_id, parse_targets, version_option
from hfpatch.new.table import render_table

_PULL = re.compile(r"https?://github\.com/([^/]+/[^/]+)/(?:pull|issues)/(\d+)/?")


@dataclass
class _Reading:
    """The releases read so far: each one's files (path -> bytes, None where absent), or why it could not be read."""

    source: wheels.Releases
    paths: set[str] = field(default_factory=set)
    texts: dict[str, dict[str, bytes | None]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)

    def read(self, versions: Iterable[Version]) -> None:
        todo = [
            version
            for version in dict.fromkeys(versions)
            if str(version) not in self.unavailable
            and (str(version) not in self.texts or not self.paths <= set(self.texts[str(version)]))
        ]
        for version, fetched in self.source.fetch(todo).items():
            if fetched.path is None:
                self.unavailable[str(version)] = fetched.why_not
                continue
            with wheels.Wheel(fetched.path) as wheel:
                if wheel.version != version:
                    raise AuthoringError(f"{fetched.path} holds {wheel.version}, not {version}.")
                known = self.texts.setdefault(str(version), {})
                for path in sorted(self.paths - set(known)):
                    known[path] = wheel.read(path)

    def more(self, paths: Iterable[str]) -> None:
        """Read these files too, in every release read so far."""
        self.paths |= set(paths)
        self.read(Version(release) for release in list(self.texts))

    def forget_before(self, version: Version) -> None:
        self.texts = {release: text for release, text in self.texts.items() if Version(release) >= version}
        self.unavailable = {release: why for release, why in self.unavailable.items() if Version(release) >= version}


def _locate_file(path: Path, module: str) -> str | None:
    with wheels.Wheel(path) as wheel:
        return next((candidate for candidate in wheels.module_paths(module) if wheel.has(candidate)), None)


def _defines_any(texts: dict[str, bytes | None], keys: dict[str, list[str]], release: str) -> bool:
    """Whether a release has any statement the fix changes: the walk back to the first release stops where none is."""
    for path, wanted in keys.items():
        text = texts.get(path)
        if text is None:
            continue
        try:
            parsed = statements.parse(text, f"{path} of {release}")
        except UnexpectedCode:
            continue
        if any(statements.find(parsed, key) is not None for key in wanted):
            return True
    return False


def _walk_back(reading: _Reading, older: Sequence[Version], keys: dict[str, list[str]]) -> None:
    """Read releases from the newest of `older` down, until one has none of the statements the fix changes."""
    batch_size = wheels.PARALLEL_DOWNLOADS
    for start in range(0, len(older), batch_size):
        batch = older[start : start + batch_size]
        reading.read(batch)
        for version in batch:
            key = str(version)
            if key in reading.texts and not _defines_any(reading.texts[key], keys, key):
                reading.forget_before(version)
                return


def run(args: Request, out: TextIO) -> int:
    """`hfpatch new`; raises HfpatchError (exit 2, nothing written) where it cannot write the entry."""
    patch_id = check_id(args.patch_id)
    targets = parse_targets(args.targets)
    distribution = targets.distribution
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
    older = [version for version in versions if version < fixed]
    # The newest release is read in every default run: fetched beside the fixed one, pip's waits overlap.
    fetched = source.fetch([fixed, *newer[-1:], *older[-1:]])[fixed]
    if fetched.path is None:
        raise AuthoringError(f"cannot read {distribution} {fixed} (the --fixed-in release): {fetched.why_not}.")
    wanted = _wanted(fetched.path, targets, distribution, fixed)
    reading.paths = {want.file for want in wanted}
    reading.read([fixed, *older[-1:]])
    header = _header(args, patch_id, distribution, wanted, str(fixed))
    fix = Fixed(
        {path: text for path, text in reading.texts[str(fixed)].items() if text is not None},
        f"{distribution} {fixed}",
        _newest_with(reading, older, wanted),
    )
    fixes = understand(header, wanted, fix, reading.texts)  # before reading everything else
    modules = _modules(fetched.path, dependencies(fixes, fix, header.package))
    reading.more(modules.values())
    fix = Fixed(
        {path: text for path, text in reading.texts[str(fixed)].items() if text is not None}, fix.label, fix.before
    )

    if args.all_releases:
        reading.read(newer)
    elif until is not None:
        reading.read([version for version in newer if version <= until])
    elif newer:
        reading.read([newer[-1]])
    if since is not None:
        reading.read([version for version in older if version >= since])
    else:
        keys = {fix_file.file: [change.key for change in fix_file.changes] for fix_file in fixes}
        _walk_back(reading, older[::-1], keys)
    reading.read([version for version in named if str(version) not in reading.texts])

    authoring = author(header, fixes, fix, reading.texts, reading.unavailable, modules)
    where = ", ".join(f"{want.module} ({want.file})" for want in wanted)
    print(f"{distribution} {where}, {len(authoring.rows)} releases from {source.where}:", file=out)
    print(render_table(authoring), file=out)
    for note in authoring.notes:
        print(f"note: {note}", file=out)
    if authoring.missing or authoring.unsafe:
        for line in _not_safe(header, authoring):
            print(line, file=out)
        raise AuthoringError("not safe to backport as it stands (see above); nothing written.")
    if authoring.refusal:
        raise AuthoringError(authoring.refusal)
    if authoring.patch is None:
        raise AuthoringError(
            "no release read needs the patch: each has the fix, lacks the targets, or cannot take the fix (see the "
            "table); nothing written."
        )
    about = _about(header, authoring, source.where)
    patch = entry.with_fixed_files(authoring.patch._replace(about=about))
    written = write_entry(catalog_dir, patch, force=args.force)
    forms = sum(len(target.forms) for file in patch.files for target in file.targets)
    target_count = sum(len(file.targets) for file in patch.files)
    on_disk = sum(1 for path in written.rglob("*") if path.is_file())
    print(
        f"wrote {written} ({_count(target_count, 'target')}, {_count(forms, 'form')}, "
        f"{_count(on_disk, 'file')} on disk)",
        file=out,
    )
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


def _wanted(wheel: Path, targets: Targets, distribution: str, fixed: Version) -> list[Wanted]:
    wanted = []
    for module, names in targets.modules.items():
        path = _locate_file(wheel, module)
        if path is None:
            paths = " or ".join(wheels.module_paths(module))
            raise AuthoringError(f"{wheel.name} has no {paths}: is {module} a module of {distribution} {fixed}?")
        wanted.append(Wanted(module, path, names))
    return wanted


def _newest_with(reading: _Reading, older: Sequence[Version], wanted: Sequence[Wanted]) -> str | None:
    """The release before the fix that the fix is read against: the newest one read (None: there is none)."""
    if not older:
        return None
    newest = str(older[-1])
    return newest if newest in reading.texts else None


def _modules(wheel: Path, imported: dict[str, str]) -> dict[str, str]:
    """Where each module the fix calls into lies in the fixed wheel (module -> path)."""
    found = {}
    for module in imported:
        path = _locate_file(wheel, module)
        if path is not None:
            found[module] = path
    return found


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _header(args: Request, patch_id: str, distribution: str, wanted: Sequence[Wanted], fixed: str) -> Patch:
    """The entry without files, for the core to fill in."""
    url = args.upstream or f"https://pypi.org/project/{distribution}/{fixed}/"
    pull = _PULL.fullmatch(url)
    # What messages call the fix ("the bug <upstream> fixed in <fixed_in>"): owner/repo#N, the URL, or the id.
    upstream = f"{pull[1]}#{pull[2]}" if pull else url if args.upstream else patch_id
    what = "; ".join(
        f"{', '.join(want.names)} in {want.module}" if want.names else f"the fix of {want.module}" for want in wanted
    )
    title = args.title or f"{what}, as fixed in {distribution} {fixed}"
    placeholder = entry.PatchFile(wanted[0].module, wanted[0].file, ())
    return Patch(
        id=patch_id,
        title=title,
        upstream=upstream,
        url=url,
        distribution=distribution,
        fixed_in=fixed,
        first_defined_in=None,
        files=(placeholder,),
        directory=Path(patch_id),
    )


def _not_safe(header: Patch, authoring: Authoring) -> list[str]:
    """Why no entry is written, a line a cause, and what to do about each."""
    lines = ["not safe to backport as it stands:"]
    for item in authoring.missing:
        lines.append(f"  - {_missing(header, item)}")
    for reason in authoring.unsafe:
        lines.append(f"  - {reason}")
    if authoring.safe_since is not None:
        lines.append(
            f"  or leave the releases it is not safe for out: --since {authoring.safe_since} reads from the first "
            "release after them."
        )
    return lines


def _missing(header: Patch, item: Missing) -> str:
    users, span = ", ".join(item.users), release_span(item.releases)
    lacking = f"the fix of {users} uses {item.name}, which {span} {'lacks' if len(item.releases) == 1 else 'lack'}"
    fixed = f"{header.distribution} {header.fixed_in}"
    if item.kind_in_fix is None:
        return f"{lacking}; the {fixed} module does not bind it either (a builtin of a newer Python?)"
    article = "an" if item.kind_in_fix[0] in "aeiou" else "a"
    return (
        f"{lacking}; it is {article} {item.kind_in_fix} in {fixed}: add --target "
        f"{header.distribution}:{item.module}:{item.name} to carry it, or --target {header.distribution}:{item.module} "
        "for the whole module's fix"
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
        staged.mkdir()
        for file in patch.files:
            for target in file.targets:
                if target.fixed_text is None:
                    continue
                assert target.fixed_file is not None
                path = staged / target.fixed_file
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(target.fixed_text + "\n", encoding="utf-8")
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
