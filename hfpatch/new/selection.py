"""Which releases `hfpatch new` reads: from the versions listed and what was asked, before any wheel is read. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import Version

from hfpatch.errors import AuthoringError, UsageError
from hfpatch.new.request import Asked


@dataclass(frozen=True)
class Selection:
    """The releases by their place around the fix. `older` ends with the release the fix is read against (the
    walk back goes from there); `candidates` is every release the run may read, said up front."""

    versions: tuple[Version, ...]
    newer: tuple[Version, ...]
    older: tuple[Version, ...]
    candidates: tuple[Version, ...]


def select(
    asked: Asked, listed: Sequence[Version], where: str, *, build: Version | None = None, edit: Version | None = None
) -> Selection:
    """`build`: the version a build says it is (--fixed-from); `edit`: the release an edit was made on."""
    if not listed:
        raise AuthoringError(f"no wheel of {asked.distribution} in {where}; is the name right?")
    fixed, pre = asked.fixed_in, asked.pre or (asked.fixed_in is not None and asked.fixed_in.is_prerelease)
    versions = sorted(
        {version for version in listed if pre or not version.is_prerelease or version == fixed} | set(asked.named)
    )
    pivot = _pivot(asked, versions, where, build, edit)
    after = fixed if fixed is not None else pivot
    newer = [version for version in versions if after is not None and version > after]
    # The release a build or an edit says it is (4.57.6, 4.57.6+local) is what it was made on: the fix is read
    # against it (a build that is that release, file for file, is read against the release before it: see
    # reading.made_on). A release's fix is read against the release before it.
    made_on = build is not None or edit is not None
    older = [version for version in versions if pivot is None or version < pivot or (made_on and version == pivot)]
    later = list(newer) if asked.all_releases else [v for v in newer if asked.until is not None and v <= asked.until]
    later = later or list(newer[-1:])
    earlier = [version for version in older if asked.since is None or version >= asked.since]
    found = {*later, *earlier, *asked.named, *([fixed] if fixed is not None and fixed in versions else [])}
    return Selection(tuple(versions), tuple(newer), tuple(older), tuple(sorted(found)))


def _pivot(
    asked: Asked, versions: Sequence[Version], where: str, build: Version | None, edit: Version | None
) -> Version | None:
    """What the fix is read against: the release an edit was made on, a build's version, or --fixed-in."""
    if edit is not None:
        if edit not in versions:
            raise AuthoringError(
                f"{asked.distribution} {edit}, the release your edit was made on, has no wheel in {where}: "
                "hfpatch reads the edit against that release's files."
            )
        return edit
    if asked.fixed_from is not None:
        return build
    fixed = asked.fixed_in
    assert fixed is not None
    if fixed not in versions:
        raise UsageError(
            f"--fixed-in {fixed} is not a release of {asked.distribution} in {where} (the nearest: "
            f"{', '.join(str(version) for version in nearest(versions, fixed))})."
        )
    return fixed


def nearest(versions: Sequence[Version], wanted: Version) -> list[Version]:
    """The releases either side of a version that is none: what was meant, most likely."""
    below = [version for version in versions if version < wanted][-3:]
    above = [version for version in versions if version > wanted][:3]
    return [*below, *above] or list(versions[-6:])
