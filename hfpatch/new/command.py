"""`hfpatch new`: pick the releases, read their wheels, print the table, and write the entry.

The decisions are those of hfpatch.new.judge and hfpatch.new.assemble (pure); this is the shell around them. The
entry's directory is written by `hfpatch.entry.write`, which puts it in place only once it reads back unchanged.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from packaging.utils import canonicalize_name
from packaging.version import Version

from hfpatch import catalog, entry, statements
from hfpatch.entry import Patch, release_span
from hfpatch.environment import resolve_python
from hfpatch.errors import AuthoringError, HfpatchError, UnexpectedCode, UsageError
from hfpatch.new import skeleton, sources, wheels
from hfpatch.new.assemble import Authoring, Fixed, Missing, Wanted, author, dependencies, understand
from hfpatch.new.judge import Judged
from hfpatch.new.progress import Progress
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
    progress: Progress = field(default_factory=lambda: Progress(None, terminal=False))

    def done(self) -> None:
        self.progress.done()

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
                self.progress.one_more(str(version))
                continue
            with wheels.Wheel(fetched.path) as wheel:
                if wheel.version != version:
                    raise AuthoringError(f"{fetched.path} holds {wheel.version}, not {version}.")
                known = self.texts.setdefault(str(version), {})
                for path in sorted(self.paths - set(known)):
                    known[path] = wheel.read(path)
            self.progress.one_more(str(version))

    def more(self, paths: Iterable[str]) -> None:
        """Read these files too, in every release read so far."""
        self.paths |= set(paths)
        self.read(Version(release) for release in list(self.texts))

    def forget_before(self, version: Version) -> None:
        self.texts = {release: text for release, text in self.texts.items() if Version(release) >= version}
        self.unavailable = {release: why for release, why in self.unavailable.items() if Version(release) >= version}


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


@dataclass(frozen=True)
class _Plan:
    """What the command line asks for, checked: the distribution, the fix's source, which releases are which."""

    distribution: str
    targets: Targets | None
    fixed_in: Version | None
    since: Version | None
    until: Version | None
    named: tuple[Version, ...]


def _plan(args: Request) -> _Plan:
    given = [
        option for option, value in (("--fixed-from", args.fixed_from), ("--from-edits", args.from_edits)) if value
    ]
    if len(given) > 1:
        raise UsageError("give one of --fixed-from PATH and --from-edits DIST: the fixed text comes from one place.")
    if args.from_edits and args.fixed_in is not None:
        raise UsageError(
            "--fixed-in and --from-edits: the fixed text is your edit, made on the release installed; give one."
        )
    if not given and args.fixed_in is None:
        raise UsageError(
            "say where the fixed text is: --fixed-in VERSION (a release), --fixed-from PATH (a wheel or a source tree "
            "of a build) or --from-edits DIST (what you edited in the installed distribution)."
        )
    if args.python is not None and args.from_edits is None:
        raise UsageError("--python says whose edits --from-edits reads; give it with --from-edits DIST.")
    targets = parse_targets(args.targets) if args.targets else None
    if targets is None and args.from_edits is None:
        raise UsageError("give --target DIST:MODULE[:NAME]: what the fix changes (the edits say it for --from-edits).")
    distribution = targets.distribution if targets is not None else str(args.from_edits)
    if args.from_edits and canonicalize_name(args.from_edits) != canonicalize_name(distribution):
        raise UsageError(f"--from-edits {args.from_edits} and --target {distribution}: one distribution, please.")
    fixed_in = None if args.fixed_in is None else version_option(args.fixed_in, "--fixed-in")
    since = None if args.since is None else version_option(args.since, "--since")
    until = None if args.until is None else version_option(args.until, "--until")
    named = tuple(version_option(release, "--release") for release in args.releases)
    if since is not None and fixed_in is not None and since > fixed_in:
        raise UsageError(f"--since {since} is after --fixed-in {fixed_in}.")
    return _Plan(distribution, targets, fixed_in, since, until, named)


def run(args: Request, out: TextIO) -> int:
    """`hfpatch new`; raises HfpatchError (exit 2, nothing written) where it cannot write the entry."""
    patch_id = check_id(args.patch_id)
    asked = _plan(args)
    distribution = asked.distribution
    catalog_dir = Path(args.catalog)
    destination = catalog_dir / patch_id
    if catalog_dir.exists() and not catalog_dir.is_dir():
        raise UsageError(f"the catalog {catalog_dir} is not a directory; give --catalog a directory.")
    if (destination.exists() or destination.is_symlink()) and not args.force:
        raise UsageError(f"{destination} exists; give --force to replace it, or choose another PATCH_ID.")
    builtin = catalog.builtin_catalog() / patch_id
    if (builtin / entry.ENTRY).is_file() and builtin.resolve() != destination.resolve():
        raise UsageError(
            f"{patch_id} is the id of a built-in entry, and hfpatch refuses two entries with one id: choose "
            "another PATCH_ID."
        )

    fixed = asked.fixed_in
    edits: sources.EditsSource | None = None
    fix_source: sources.FixSource | None = None
    if args.from_edits:
        edits = sources.EditsSource(resolve_python(args.python), args.from_edits)
        fix_source = edits
    elif args.fixed_from:
        assert asked.targets is not None
        package = next(iter(asked.targets.modules)).split(".")[0]
        fix_source = sources.fixed_from(Path(args.fixed_from), distribution, package)
    pre = args.pre or (fixed is not None and fixed.is_prerelease)
    source: wheels.Releases
    if args.find_links:
        source = wheels.FindLinks(Path(args.find_links), distribution)
    else:
        source = wheels.PackageIndex(distribution, Path(args.cache) if args.cache else wheels.default_cache(), pre=pre)
    # Listing the releases through pip takes seconds: say what is under way before it starts.
    print(f"listing the releases of {distribution} in {source.where}", file=out, flush=True)
    listed = source.versions()
    if not listed:
        raise AuthoringError(f"no wheel of {distribution} in {source.where}; is the name right?")
    versions = sorted(
        {version for version in listed if pre or not version.is_prerelease or version == fixed} | set(asked.named)
    )
    # What the fix is read against, and which releases come after it.
    if edits is not None:
        before_the_fix = edits.version
        if before_the_fix not in versions:
            raise AuthoringError(
                f"{distribution} {before_the_fix}, the release your edit was made on, has no wheel in {source.where}: "
                "hfpatch reads the edit against that release's files."
            )
        pivot: Version | None = before_the_fix
    elif fix_source is not None:
        pivot = fix_source.version
    else:
        assert fixed is not None
        if fixed not in versions:
            raise UsageError(
                f"--fixed-in {fixed} is not a release of {distribution} in {source.where} (the nearest: "
                f"{', '.join(str(version) for version in _nearest(versions, fixed))})."
            )
        pivot = fixed
    after = fixed if fixed is not None else pivot
    newer = [version for version in versions if after is not None and version > after]
    # The release a build or an edit says it is (4.57.6, 4.57.6+local) is what it was made on: the fix is read
    # against it (a build that is that release, file for file, is read against the release before it; below).
    # A release's fix is read against the release before it.
    made_on = fix_source is not None
    older = [version for version in versions if pivot is None or version < pivot or (made_on and version == pivot)]

    candidates = _candidates(versions, newer, older, fixed, asked, args.all_releases)
    at_hand = source.at_hand(candidates)
    print(
        f"reading up to {len(candidates)} releases of {distribution} from {source.where}"
        f"{'' if isinstance(source, wheels.FindLinks) else f' ({at_hand} in the cache)'}",
        file=out,
        flush=True,
    )
    reading = _Reading(source, progress=Progress(sys.stderr, terminal=sys.stderr.isatty()))
    if fix_source is None:
        assert fixed is not None
        fetched = source.fetch([fixed, *newer[-1:], *older[-1:]])[fixed]
        if fetched.path is None:
            raise AuthoringError(f"cannot read {distribution} {fixed} (the --fixed-in release): {fetched.why_not}.")
        fix_source = sources.WheelSource(fetched.path, distribution, label=f"{distribution} {fixed}")
    wanted = _wanted(fix_source, asked.targets, edits, distribution)
    reading.paths = {want.file for want in wanted}
    baseline = older[-1:] if older else []
    reading.read([*baseline, *([fixed] if fixed in versions else [])])
    if edits is None and baseline and baseline[0] == fix_source.version:
        older, baseline = _made_on(reading, fix_source, older)
    header = _header(args, patch_id, distribution, wanted, fixed, fix_source)
    before = str(baseline[0]) if baseline and str(baseline[0]) in reading.texts else None
    fix_texts = fix_source.read(reading.paths)
    _readable(fix_texts, fix_source, edits)
    made = None if fixed is not None or fix_source.version is None else str(fix_source.version)
    fix = Fixed({path: text for path, text in fix_texts.items() if text is not None}, fix_source.label, before, made)
    if edits is not None:
        _edits_carried(fix, reading.texts[str(edits.version)])
    fixes = understand(header, wanted, fix, reading.texts)  # before reading everything else
    modules = {}
    for module, _ in dependencies(fixes, fix, header.package).items():
        path = fix_source.locate(module)
        if path is not None:
            modules[module] = path
    reading.more(modules.values())
    more = fix_source.read(modules.values())
    fix = Fixed(
        {**fix.texts, **{path: text for path, text in more.items() if text is not None}}, fix.label, before, made
    )

    if args.all_releases:
        reading.read(newer)
    elif asked.until is not None:
        reading.read([version for version in newer if version <= asked.until])
    elif newer:
        reading.read([newer[-1]])
    if asked.since is not None:
        reading.read([version for version in older if version >= asked.since])
    else:
        keys = {fix_file.file: [change.key for change in fix_file.changes] for fix_file in fixes}
        _walk_back(reading, older[::-1], keys)
    reading.read([version for version in asked.named if str(version) not in reading.texts])

    reading.done()
    authoring = author(header, fixes, fix, reading.texts, reading.unavailable, modules)
    where = ", ".join(f"{want.module} ({want.file})" for want in wanted)
    print(f"{distribution} {where}, {len(authoring.rows)} releases from {source.where}:", file=out)
    print(render_table(authoring), file=out)
    for note in _shown_notes(authoring, versions):
        print(f"note: {note}", file=out)
    if authoring.missing or authoring.unsafe:
        for line in _not_safe(header, authoring, fix.label):
            print(line, file=out)
        raise AuthoringError("not safe to backport as it stands (see above); nothing written.")
    if authoring.refusal:
        raise AuthoringError(authoring.refusal)
    if authoring.patch is None:
        raise AuthoringError(
            "no release read needs the patch: each has the fix, lacks the targets, or cannot take the fix (see the "
            "table); nothing written."
        )
    if edits is not None:
        _carries_the_edit(authoring.patch, fix, reading.texts[str(edits.version)])
    previous = _previous(destination) if args.force else None
    about = _about(header, authoring, source.where, fix_source)
    placed = authoring.patch._replace(about=about, directory=destination)
    patch = entry.with_fixed_files(_kept(placed, previous, args))
    patch, probe_text = _probe(patch, destination)
    written = entry.write(catalog_dir, patch, force=args.force, previous=previous, probe=probe_text)
    forms = sum(len(target.forms) for file in patch.files for target in file.targets)
    target_count = sum(len(file.targets) for file in patch.files)
    on_disk = sum(1 for path in written.rglob("*") if path.is_file())
    print(
        f"wrote {written} ({_count(target_count, 'target')}, {_count(forms, 'form')}, "
        f"{_count(on_disk, 'file')} on disk)",
        file=out,
    )
    _overlaps(catalog_dir, out)
    if edits is not None:
        _adopt(entry.load(written), edits, reading.texts[str(edits.version)], out)
    if probe_text is not None:
        print(
            f"wrote {written / skeleton.PROBE}, a skeleton: `hfpatch verify` reports a broken probe for {patch_id} "
            "until its reproduce() runs the code the fix is for (the README's Probes).",
            file=out,
        )
    return 0


def _candidates(
    versions: Sequence[Version],
    newer: Sequence[Version],
    older: Sequence[Version],
    fixed: Version | None,
    asked: _Plan,
    all_releases: bool,
) -> list[Version]:
    """Every release this run may read: what is said up front, before any download."""
    later = list(newer) if all_releases else [v for v in newer if asked.until is not None and v <= asked.until]
    later = later or list(newer[-1:])
    earlier = [version for version in older if asked.since is None or version >= asked.since]
    found = {*later, *earlier, *asked.named}
    if fixed is not None and fixed in versions:
        found.add(fixed)
    return sorted(found)


def _made_on(
    reading: _Reading, fix_source: sources.FixSource, older: list[Version]
) -> tuple[list[Version], list[Version]]:
    """The releases older than a build that says it is release V: V's own where the build changes V's files (a
    checkout of V with the fix), those before V where the build is V as released (the released wheel, given by
    path), whose fix is then read against the release before it."""
    released = reading.texts.get(str(older[-1]), {})
    if any(released.get(path) != text for path, text in fix_source.read(reading.paths).items()):
        return older, older[-1:]
    older = older[:-1]
    reading.read(older[-1:])
    return older, older[-1:]


def _nearest(versions: Sequence[Version], wanted: Version) -> list[Version]:
    """The releases either side of a version that is none: what was meant, most likely."""
    below = [version for version in versions if version < wanted][-3:]
    above = [version for version in versions if version > wanted][:3]
    return [*below, *above] or list(versions[-6:])


def _readable(texts: dict[str, bytes | None], fix_source: sources.FixSource, edits: sources.EditsSource | None) -> None:
    for path, text in texts.items():
        if text is None:
            raise AuthoringError(f"{fix_source.label} has no {path}.")
        if edits is not None:
            edits.check_python(path, text)


def _wanted(
    fix_source: sources.FixSource, targets: Targets | None, edits: sources.EditsSource | None, distribution: str
) -> list[Wanted]:
    """The files the fix changes: those the targets name, or every file the user edited."""
    if targets is None:
        assert edits is not None
        edited = edits.edited()
        if not edited:
            raise UsageError(
                f"{distribution} {edits.version} in {edits.python.executable} has no file edited (every .py file is "
                "as its RECORD lists it): nothing to carry."
            )
        return [Wanted(edits.module_of(path), path, None) for path in edited]
    wanted = []
    for module, names in targets.modules.items():
        path = fix_source.locate(module)
        if path is None:
            paths = " or ".join(wheels.module_paths(module))
            raise AuthoringError(f"{fix_source.label} has no {paths}: is {module} a module of {distribution}?")
        wanted.append(Wanted(module, path, names))
    return wanted


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _header(
    args: Request,
    patch_id: str,
    distribution: str,
    wanted: Sequence[Wanted],
    fixed: Version | None,
    fix_source: sources.FixSource,
) -> Patch:
    """The entry without files, for the core to fill in."""
    where = f"{distribution}/{fixed}/" if fixed is not None else f"{distribution}/"
    url = args.upstream or f"https://pypi.org/project/{where}"
    pull = _PULL.fullmatch(url)
    # What messages call the fix ("the bug <upstream> fixed in <fixed_in>"): owner/repo#N, the URL, or the id.
    upstream = f"{pull[1]}#{pull[2]}" if pull else url if args.upstream else patch_id
    what = "; ".join(
        f"{', '.join(want.names)} in {want.module}" if want.names else f"the fix of {want.module}" for want in wanted
    )
    title = args.title or (
        f"{what}, as fixed in {distribution} {fixed}" if fixed else f"{what}, from {fix_source.label}"
    )
    placeholder = entry.PatchFile(wanted[0].module, wanted[0].file, ())
    return Patch(
        id=patch_id,
        title=title,
        upstream=upstream,
        url=url,
        distribution=distribution,
        fixed_in=None if fixed is None else str(fixed),
        first_defined_in=None,
        files=(placeholder,),
        directory=Path(patch_id),
    )


def _not_safe(header: Patch, authoring: Authoring, fix_label: str) -> list[str]:
    """Why no entry is written, a line a cause, and what to do about each."""
    lines = ["not safe to backport as it stands:"]
    for item in authoring.missing:
        lines.append(f"  - {_missing(header, item, fix_label)}")
    for reason in authoring.unsafe:
        lines.append(f"  - {reason}")
    if authoring.safe_since is not None:
        lines.append(
            f"  or leave the releases it is not safe for out: --since {authoring.safe_since} reads from the first "
            "release after them."
        )
    return lines


def _missing(header: Patch, item: Missing, fix_label: str) -> str:
    """One name the fix uses that a release lacks; `fix_label` names the fixed text (a release, a build, an edit)."""
    users, span = ", ".join(item.users), release_span(item.releases)
    lacking = f"the fix of {users} uses {item.name}, which {span} {'lacks' if len(item.releases) == 1 else 'lack'}"
    if item.kind_in_fix is None:
        return f"{lacking}; {item.module} in {fix_label} does not bind it either (a builtin of a newer Python?)"
    article = "an" if item.kind_in_fix[0] in "aeiou" else "a"
    return (
        f"{lacking}; it is {article} {item.kind_in_fix} in {fix_label}: add --target "
        f"{header.distribution}:{item.module}:{item.name} to carry it, or --target {header.distribution}:{item.module} "
        "for the whole module's fix"
    )


def _about(header: Patch, authoring: Authoring, where: str, fix_source: sources.FixSource) -> tuple[str, ...]:
    releases = [row.release for row in authoring.rows if row.verdict is not Judged.SKIPPED]
    lines = [
        f"{header.title}: {header.upstream}, as data.",
        f"Written by `hfpatch new` from the wheels of {header.distribution} {release_span(releases)} ({where}).",
    ]
    if not isinstance(fix_source, sources.WheelSource) or not fix_source.label.startswith(header.distribution):
        lines.append(f"The fixed text is {fix_source.label}'s{'' if header.fixed_in else '; no release has it yet'}.")
    return tuple(lines)


def _shown_notes(authoring: Authoring, versions: Sequence[Version]) -> list[str]:
    """The core's notes, less the one about releases older than those read where there is none."""
    read = [row.release for row in authoring.rows if row.verdict is not Judged.SKIPPED]
    first = str(versions[0]) if versions else None
    return [
        note
        for note in authoring.notes
        if not (note.startswith("no release read lacks the targets") and read and read[0] == first)
    ]


def _edits_carried(fix: Fixed, released: dict[str, bytes | None]) -> None:
    """An edited file whose statements are all as released (the edit is a comment between them, say) has nothing
    hfpatch can carry: refused, naming the file and the line."""
    for path, edited in fix.texts.items():
        original = released.get(path)
        if original is None:
            raise AuthoringError(f"{path} is not in the release the edit was made on: a new file is not carried.")
        if original == edited:
            raise AuthoringError(
                f"{path} is unedited: it is as the release installed has it, so there is nothing to carry (edit it, "
                "or leave its --target out); nothing written."
            )
        old, new = statements.parse(original, path), statements.parse(edited, path)
        if [unit.text for unit in statements.units(old)] == [unit.text for unit in statements.units(new)]:
            line = _first_difference(original, edited)
            raise AuthoringError(
                f"the edit of {path} at line {line} is outside any statement hfpatch can carry (a comment or a "
                "blank line between statements, say); nothing written."
            )


def _carries_the_edit(patch: Patch, fix: Fixed, released: dict[str, bytes | None]) -> None:
    """The entry applied to the release the edit was made on must give the edited files byte for byte; what it
    cannot carry (a comment between statements, say) is refused, naming the file and the line."""
    from hfpatch import rewrite

    for file in patch.files:
        original = released.get(file.file)
        if original is None:
            raise AuthoringError(f"{file.file} is not in the release the edit was made on: a new file is not carried.")
        result = rewrite.patched(original, patch, file)
        edited = fix.texts[file.file]
        if result != edited:
            line = _first_difference(result, edited)
            raise AuthoringError(
                f"the edit of {file.file} at line {line} is outside any statement hfpatch can carry (a comment or a "
                "blank line between statements, say); nothing written."
            )


def _first_difference(one: bytes, other: bytes) -> int:
    for number, (left, right) in enumerate(zip(one.splitlines(), other.splitlines(), strict=False), start=1):
        if left != right:
            return number
    return min(len(one.splitlines()), len(other.splitlines())) + 1


def _adopt(patch: Patch, edits: sources.EditsSource, released: dict[str, bytes | None], out: TextIO) -> None:
    """The edited environment, as if the entry had been applied to the release: the released files become hfpatch's
    originals, so that check reports the patch applied and revert puts the release back."""
    from hfpatch import executor
    from hfpatch.environment import Environment

    environment = Environment(edits.python)
    installation = environment.installation_of(patch)
    if installation is None:
        raise AuthoringError(f"{edits.python.executable} imports no {patch.package}; the edit cannot be adopted.")
    originals = {file.file: released[file.file] or b"" for file in patch.files}
    notes = executor.adopt(patch, edits.python, installation, originals)
    print(
        f"adopted the edit in {installation.root}: `hfpatch check --python {edits.python.executable} --catalog "
        f"{patch.directory.parent}` reports {patch.id} applied, `hfpatch revert` puts {patch.distribution} "
        f"{installation.version}'s files back",
        file=out,
    )
    for note in notes:
        print(f"note: {note}", file=out)


_DERIVED_ABOUT = ("Written by `hfpatch new`", "No probe yet", "The fixed text is ", skeleton.ABOUT)


def _previous(destination: Path) -> Patch | None:
    """The entry `--force` replaces, where it loads: what its author added is kept."""
    if not (destination / entry.ENTRY).is_file():
        return None
    try:
        return entry.load(destination)
    except HfpatchError:
        return None  # a broken entry: its own files are still kept, its fields cannot be


def _kept(patch: Patch, previous: Patch | None, args: Request) -> Patch:
    """What the author added to the entry being replaced, kept: title, upstream, probe, transform, advisories and
    their own about lines. Only what `new` derives is new."""
    if previous is None:
        return patch
    kept = patch._replace(probe=previous.probe, transform=previous.transform, advisories=previous.advisories)
    if args.title is None:
        kept = kept._replace(title=previous.title)
    if args.upstream is None:
        kept = kept._replace(upstream=previous.upstream, url=previous.url)
    own = [
        line
        for line in previous.about
        if not line.startswith(_DERIVED_ABOUT) and line != f"{previous.title}: {previous.upstream}, as data."
    ]
    derived = list(patch.about[1:])
    return kept._replace(about=(f"{kept.title}: {kept.upstream}, as data.", *derived, *own))


def _overlaps(catalog_dir: Path, out: TextIO) -> None:
    """Say so where the entry changes a statement that another entry of the catalogs hfpatch reads changes too
    (the built-in one among them): every command then refuses the two together until one is left out."""
    try:
        catalog.select([], [str(catalog_dir)])
    except HfpatchError as error:  # another fault of the catalogs is for the commands that read them to say
        if " both change " in str(error):
            print(f"note: {error}", file=out)


def _probe(patch: Patch, destination: Path) -> tuple[Patch, str | None]:
    """The entry's probe: the author's, kept; or, where there is none, the skeleton, to be written beside it."""
    if patch.probe is not None:
        if _text(patch.probe) == skeleton.skeleton(patch):  # kept, and still the skeleton
            return patch._replace(about=(*patch.about, skeleton.ABOUT)), None
        return patch, None
    path = destination / skeleton.PROBE
    if path.exists() or path.is_symlink():
        return patch._replace(probe=path), None  # the author's file, in an entry that no longer loads: kept
    with_probe = patch._replace(probe=path, about=(*patch.about, skeleton.ABOUT))
    return with_probe, skeleton.skeleton(with_probe)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
