"""`hfpatch new`: what was asked -> which releases -> their texts -> the fix understood -> the release table -> the
entry -> written (or adopted). `run` strings the steps together; each is a function of what the ones before it gave.

The decisions are those of hfpatch.new.judge and hfpatch.new.assemble (pure); this is the shell around them. The
entry's directory is written by `hfpatch.entry.write`, which puts it in place only once it reads back unchanged.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from packaging.version import Version

from hfpatch import catalog, entry, shapes
from hfpatch.entry import Patch, release_span
from hfpatch.environment import resolve_python
from hfpatch.errors import AuthoringError, HfpatchError, UsageError
from hfpatch.new import adoption, draft, removal, skeleton, sources, wheels
from hfpatch.new.assemble import Authoring, Fixed, Missing, Wanted, author, dependencies, understand
from hfpatch.new.judge import FileFix, TableVerdict
from hfpatch.new.progress import Progress
from hfpatch.new.reading import Reading, made_on, read_the_rest
from hfpatch.new.request import Asked, Request, ask
from hfpatch.new.selection import Selection, select
from hfpatch.new.table import render_table


@dataclass(frozen=True)
class Origin:
    """Where the fixed text comes from: a release's or a build's wheel, a tree, or the user's edit (`edits`)."""

    fix: sources.FixSource | None  # None for --fixed-in until its wheel is fetched (fix_of_release)
    edits: sources.EditsSource | None


def run(request: Request, out: TextIO) -> int:
    """`hfpatch new`; raises HfpatchError (exit 2, nothing written) where it cannot write the entry."""
    asked = ask(request)
    if asked.remove is not None:
        return run_removal(asked, out)
    origin = origin_of(asked)
    releases = releases_of(asked)
    # Listing the releases through pip takes seconds: say what is under way before it starts.
    print(f"listing the releases of {asked.distribution} in {releases.where}", file=out, flush=True)
    selection = select(
        asked,
        releases.versions(),
        releases.where,
        build=None if origin.edits is not None or origin.fix is None else origin.fix.version,
        edit=None if origin.edits is None else origin.edits.version,
    )
    print(_reading_line(asked, selection, releases), file=out, flush=True)
    reading = Reading(releases, progress=Progress(sys.stderr, terminal=sys.stderr.isatty()))
    fix_source = origin.fix or fix_of_release(asked, selection, releases)
    wanted = wanted_files(asked, fix_source, origin.edits)
    selection, fix = read_the_fix(asked, selection, reading, fix_source, wanted, origin.edits)
    header = draft.header(asked, wanted, fix_source.label)
    fixes, fix, modules = understand_the_fix(header, wanted, fix, reading, fix_source)
    read_the_rest(reading, selection, asked, fixes)
    authoring = author(header, fixes, fix, reading.texts, reading.unavailable, modules)
    show_table(out, asked, wanted, authoring, selection, releases.where, fix.label)
    if origin.edits is not None:
        assert authoring.patch is not None
        adoption.carries_the_edit(authoring.patch, fix, reading.texts[str(origin.edits.version)])
    previous = draft.previous_of(asked.destination) if asked.force else None
    patch, probe = draft.draft(asked, authoring, releases.where, fix_source, previous)
    written = entry.write(asked.catalog, patch, force=asked.force, previous=previous, probe=probe)
    say_written(out, asked, patch, written, probe is not None)
    if origin.edits is not None:
        adoption.adopt(entry.load(written), origin.edits, reading.texts[str(origin.edits.version)], out)
    return 0


def run_removal(asked: Asked, out: TextIO) -> int:
    """`hfpatch new --remove`: which releases -> the files each ships -> the table -> the entry -> written."""
    assert asked.remove is not None and asked.fixed_in is not None
    releases = releases_of(asked)
    print(f"listing the releases of {asked.distribution} in {releases.where}", file=out, flush=True)
    selection = select(asked, releases.versions(), releases.where)
    print(_reading_line(asked, selection, releases), file=out, flush=True)
    found = removal.read_back(releases, selection, asked, asked.remove)
    files = removal.removed_files(found, str(asked.fixed_in))
    print(f"{asked.distribution} {asked.remove}, {len(found)} releases from {releases.where}:", file=out)
    print(removal.table(found, str(asked.fixed_in), files), file=out)
    kept = sorted(removal.still_shipped(found, str(asked.fixed_in)))
    if kept:
        print(
            f"note: {asked.fixed_in} still ships {_count(len(kept), 'file')} the pattern matches ({kept[0]}, ...): "
            "not removed upstream, left out",
            file=out,
        )
    title = asked.title or f"the files {asked.remove}, which {asked.distribution} {asked.fixed_in} no longer ships"
    header = draft.header(dataclasses.replace(asked, title=title), [Wanted(files[0].module, files[0].file, None)], "")
    patch = removal.patch_of(header, files, found, asked.remove)._replace(directory=asked.destination)
    previous = draft.previous_of(asked.destination) if asked.force else None
    if previous is not None:
        patch = patch._replace(probe=previous.probe, advisories=previous.advisories)
    written = entry.write(asked.catalog, patch, force=asked.force, previous=previous)
    print(f"wrote {written} ({_count(len(files), 'file')} removed, schema {entry.SCHEMA})", file=out)
    _overlaps(asked.catalog, out)
    return 0


def origin_of(asked: Asked) -> Origin:
    """The fix's source where it is no release: the build (--fixed-from) or the edit (--from-edits)."""
    if asked.from_edits:
        edits = sources.EditsSource(resolve_python(asked.python), asked.from_edits)
        return Origin(edits, edits)
    if asked.fixed_from is not None:
        return Origin(sources.fixed_from(asked.fixed_from, asked.distribution, asked.package), None)
    return Origin(None, None)


def releases_of(asked: Asked) -> wheels.Releases:
    """Where the releases' wheels come from: --find-links, or the package index through the cache."""
    if asked.find_links is not None:
        return wheels.FindLinks(asked.find_links, asked.distribution)
    pre = asked.pre or (asked.fixed_in is not None and asked.fixed_in.is_prerelease)
    return wheels.PackageIndex(asked.distribution, asked.cache or wheels.default_cache(), pre=pre)


def _reading_line(asked: Asked, selection: Selection, releases: wheels.Releases) -> str:
    line = f"reading up to {len(selection.candidates)} releases of {asked.distribution} from {releases.where}"
    if isinstance(releases, wheels.FindLinks):
        return line
    return f"{line} ({releases.at_hand(selection.candidates)} in the cache)"


def fix_of_release(asked: Asked, selection: Selection, releases: wheels.Releases) -> sources.FixSource:
    """--fixed-in V: V's wheel (fetched with the newest release and the one before V, which are read anyway)."""
    fixed = asked.fixed_in
    assert fixed is not None
    fetched = releases.fetch([fixed, *selection.newer[-1:], *selection.older[-1:]])[fixed]
    if fetched.path is None:
        raise AuthoringError(f"cannot read {asked.distribution} {fixed} (the --fixed-in release): {fetched.why_not}.")
    return sources.WheelSource(fetched.path, asked.distribution, label=f"{asked.distribution} {fixed}")


def read_the_fix(
    asked: Asked,
    selection: Selection,
    reading: Reading,
    fix_source: sources.FixSource,
    wanted: Sequence[Wanted],
    edits: sources.EditsSource | None,
) -> tuple[Selection, Fixed]:
    """The fixed texts, and the release they are read against (the newest of `older`), read first."""
    fixed = asked.fixed_in
    reading.paths = {want.file for want in wanted}
    reading.read([*selection.older[-1:], *([fixed] if fixed in selection.versions else [])])
    if edits is None:
        selection = made_on(reading, fix_source, selection)
    baseline = selection.older[-1:]
    before = str(baseline[0]) if baseline and str(baseline[0]) in reading.texts else None
    texts = fix_source.read(reading.paths)
    _readable(texts, fix_source, edits)
    made = None if fixed is not None or fix_source.version is None else str(fix_source.version)
    fix = Fixed({path: text for path, text in texts.items() if text is not None}, fix_source.label, before, made)
    if edits is not None:
        adoption.edits_carried(fix, reading.texts[str(edits.version)])
    return selection, fix


def understand_the_fix(
    header: Patch, wanted: Sequence[Wanted], fix: Fixed, reading: Reading, fix_source: sources.FixSource
) -> tuple[tuple[FileFix, ...], Fixed, dict[str, str]]:
    """What the fix changes, file by file, and the modules its statements call into (module -> path), whose texts
    are read too: in the fix, and in every release read so far."""
    fixes = understand(header, wanted, fix, reading.texts)  # before reading everything else
    modules = {}
    for module in dependencies(fixes, fix, header.package):
        path = fix_source.locate(module)
        if path is not None:
            modules[module] = path
    reading.more(modules.values())
    more = {path: text for path, text in fix_source.read(modules.values()).items() if text is not None}
    return fixes, Fixed({**fix.texts, **more}, fix.label, fix.before, fix.version), modules


def show_table(
    out: TextIO,
    asked: Asked,
    wanted: Sequence[Wanted],
    authoring: Authoring,
    selection: Selection,
    where: str,
    fix_label: str,
) -> None:
    """The release table and its notes; where no entry can be written, why (an AuthoringError, exit 2)."""
    files = ", ".join(f"{want.module} ({want.file})" for want in wanted)
    print(f"{asked.distribution} {files}, {len(authoring.rows)} releases from {where}:", file=out)
    print(render_table(authoring), file=out)
    for note in _shown_notes(authoring, selection.versions):
        print(f"note: {note}", file=out)
    if authoring.missing or authoring.unsafe:
        for line in _not_safe(asked.distribution, authoring, fix_label):
            print(line, file=out)
        raise AuthoringError("not safe to backport as it stands (see above); nothing written.")
    if authoring.refusal:
        raise AuthoringError(authoring.refusal)
    if authoring.patch is None:
        raise AuthoringError(
            "no release read needs the patch: each has the fix, lacks the targets, or cannot take the fix (see the "
            "table); nothing written."
        )


def say_written(out: TextIO, asked: Asked, patch: Patch, written: Path, skeleton_written: bool) -> None:
    forms = sum(len(target.forms) for file in patch.files for target in file.targets)
    targets = sum(len(file.targets) for file in patch.files)
    on_disk = sum(1 for path in written.rglob("*") if path.is_file())
    counts = f"{_count(targets, 'target')}, {_count(forms, 'form')}, {_count(on_disk, 'file')} on disk"
    print(f"wrote {written} ({counts})", file=out)
    for file in patch.files:
        print(f"  {file.file}: {shapes.describe(file)}", file=out)
    _overlaps(asked.catalog, out)
    if skeleton_written:
        print(
            f"wrote {written / skeleton.PROBE}, a skeleton: `hfpatch verify` reports a broken probe for "
            f"{asked.patch_id} until its reproduce() runs the code the fix is for (the README's Probes).",
            file=out,
        )


def _readable(texts: dict[str, bytes | None], fix_source: sources.FixSource, edits: sources.EditsSource | None) -> None:
    for path, text in texts.items():
        if text is None:
            raise AuthoringError(f"{fix_source.label} has no {path}.")
        if edits is not None:
            edits.check_python(path, text)


def wanted_files(asked: Asked, fix_source: sources.FixSource, edits: sources.EditsSource | None) -> list[Wanted]:
    """The files the fix changes: those the targets name, or every file the user edited."""
    targets, distribution = asked.targets, asked.distribution
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


def _not_safe(distribution: str, authoring: Authoring, fix_label: str) -> list[str]:
    """Why no entry is written, a line a cause, and what to do about each."""
    lines = ["not safe to backport as it stands:"]
    for item in authoring.missing:
        lines.append(f"  - {_missing(distribution, item, fix_label)}")
    for reason in authoring.unsafe:
        lines.append(f"  - {reason}")
    if authoring.safe_since is not None:
        lines.append(
            f"  or leave the releases it is not safe for out: --since {authoring.safe_since} reads from the first "
            "release after them."
        )
    return lines


def _missing(distribution: str, item: Missing, fix_label: str) -> str:
    """One name the fix uses that a release lacks; `fix_label` names the fixed text (a release, a build, an edit)."""
    users, span = ", ".join(item.users), release_span(item.releases)
    lacking = f"the fix of {users} uses {item.name}, which {span} {'lacks' if len(item.releases) == 1 else 'lack'}"
    if item.kind_in_fix is None:
        return f"{lacking}; {item.module} in {fix_label} does not bind it either (a builtin of a newer Python?)"
    article = "an" if item.kind_in_fix[0] in "aeiou" else "a"
    return (
        f"{lacking}; it is {article} {item.kind_in_fix} in {fix_label}: add --target "
        f"{distribution}:{item.module}:{item.name} to carry it, or --target {distribution}:{item.module} "
        "for the whole module's fix"
    )


def _shown_notes(authoring: Authoring, versions: Sequence[Version]) -> list[str]:
    """The core's notes, less the one about releases older than those read where there is none."""
    read = [row.release for row in authoring.rows if row.verdict is not TableVerdict.SKIPPED]
    first = str(versions[0]) if versions else None
    return [
        note
        for note in authoring.notes
        if not (note.startswith("no release read lacks the targets") and read and read[0] == first)
    ]


def _overlaps(catalog_dir: Path, out: TextIO) -> None:
    """Say so where the entry changes a statement that another entry of the catalogs hfpatch reads changes too
    (the built-in one among them): every command then refuses the two together until one is left out."""
    try:
        catalog.select([], [str(catalog_dir)])
    except HfpatchError as error:  # another fault of the catalogs is for the commands that read them to say
        if " both change " in str(error):
            print(f"note: {error}", file=out)
