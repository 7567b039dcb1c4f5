"""The entry `hfpatch new` writes, from the core's: its header (id, title, upstream), its about lines, what the
author added to an entry being replaced (kept), and its probe."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from hfpatch import entry
from hfpatch.entry import Patch, release_span
from hfpatch.errors import HfpatchError
from hfpatch.new import skeleton, sources
from hfpatch.new.assemble import Authoring, Wanted
from hfpatch.new.judge import TableVerdict
from hfpatch.new.request import Asked

_PULL = re.compile(r"https?://github\.com/([^/]+/[^/]+)/(?:pull|issues)/(\d+)/?")


def header(asked: Asked, wanted: Sequence[Wanted], fix_label: str) -> Patch:
    """The entry without files, for the core to fill in."""
    patch_id, distribution, fixed = asked.patch_id, asked.distribution, asked.fixed_in
    where = f"{distribution}/{fixed}/" if fixed is not None else f"{distribution}/"
    url = asked.upstream or f"https://pypi.org/project/{where}"
    pull = _PULL.fullmatch(url)
    # What messages call the fix ("the bug <upstream> fixed in <fixed_in>"): owner/repo#N, the URL, or the id.
    upstream = f"{pull[1]}#{pull[2]}" if pull else url if asked.upstream else patch_id
    what = "; ".join(
        f"{', '.join(want.names)} in {want.module}" if want.names else f"the fix of {want.module}" for want in wanted
    )
    title = asked.title or (f"{what}, as fixed in {distribution} {fixed}" if fixed else f"{what}, from {fix_label}")
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


def _about(header: Patch, authoring: Authoring, where: str, fix_source: sources.FixSource) -> tuple[str, ...]:
    releases = [row.release for row in authoring.rows if row.verdict is not TableVerdict.SKIPPED]
    lines = [
        f"{header.title}: {header.upstream}, as data.",
        f"Written by `hfpatch new` from the wheels of {header.distribution} {release_span(releases)} ({where}).",
    ]
    if not isinstance(fix_source, sources.WheelSource) or not fix_source.label.startswith(header.distribution):
        lines.append(f"The fixed text is {fix_source.label}'s{'' if header.fixed_in else '; no release has it yet'}.")
    return tuple(lines)


_DERIVED_ABOUT = ("Written by `hfpatch new`", "No probe yet", "The fixed text is ", skeleton.ABOUT)


def previous_of(destination: Path) -> Patch | None:
    """The entry `--force` replaces, where it loads: what its author added is kept."""
    if not (destination / entry.ENTRY).is_file():
        return None
    try:
        return entry.load(destination)
    except HfpatchError:
        return None  # a broken entry: its own files are still kept, its fields cannot be


def _kept(patch: Patch, previous: Patch | None, asked: Asked) -> Patch:
    """What the author added to the entry being replaced, kept: title, upstream, probe, transform, advisories and
    their own about lines. Only what `new` derives is new."""
    if previous is None:
        return patch
    kept = patch._replace(probe=previous.probe, transform=previous.transform, advisories=previous.advisories)
    if asked.title is None:
        kept = kept._replace(title=previous.title)
    if asked.upstream is None:
        kept = kept._replace(upstream=previous.upstream, url=previous.url)
    own = [
        line
        for line in previous.about
        if not line.startswith(_DERIVED_ABOUT) and line != f"{previous.title}: {previous.upstream}, as data."
    ]
    derived = list(patch.about[1:])
    return kept._replace(about=(f"{kept.title}: {kept.upstream}, as data.", *derived, *own))


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


def draft(
    asked: Asked, authoring: Authoring, where: str, fix_source: sources.FixSource, previous: Patch | None
) -> tuple[Patch, str | None]:
    """The entry as it will be written, and the text of the skeleton probe to write beside it (None: the author's
    probe is kept)."""
    assert authoring.patch is not None
    about = _about(authoring.patch, authoring, where, fix_source)
    placed = authoring.patch._replace(about=about, directory=asked.destination)
    patch = entry.with_fixed_files(_kept(placed, previous, asked))
    return _probe(patch, asked.destination)
