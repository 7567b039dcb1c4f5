"""Why a command came to what it did, as values with their fields (patch ids, installed paths, releases): the
diagnosis, the plan and the engine return these, and hfpatch.render alone turns them into words, each path relative
to its environment, and a long list of files cut to its first one and a count (all of them with -v and in --json).

A reason not yet written as a value here is still its sentence (a str); `Reason` is the union of both.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Patched(NamedTuple):
    """apply wrote the fix into the files."""

    paths: tuple[Path, ...]
    upstream: str
    fixed_in: str | None
    added: tuple[Path, ...] = ()  # those of `paths` that apply created (a module the fix adds)


class FinishedApply(NamedTuple):
    """apply finished an apply that was interrupted."""

    paths: tuple[Path, ...]


class RebuiltBytecode(NamedTuple):
    """apply rebuilt the stale bytecode of source that had the fix already."""

    paths: tuple[Path, ...]


class Restored(NamedTuple):
    """revert put the original bytes back (`already`: they were the original, only hfpatch's state went)."""

    paths: tuple[Path, ...]
    already: bool = False
    removed: tuple[Path, ...] = ()  # those of `paths` that the patch had added, which revert removed


class TookOut(NamedTuple):
    """revert took one patch out of files that other patches stay on."""

    patch: str
    paths: tuple[Path, ...]
    staying: tuple[str, ...]


class WouldDo(NamedTuple):
    """A dry run: what the plan's `action` (an Action's value) would do to the files, or to the patch's state."""

    action: str
    paths: tuple[Path, ...]
    patch: str


class KnownForms(NamedTuple):
    """The released forms the files are known as, each in words (hfpatch.classify), one a file."""

    details: tuple[str, ...]


class NeedsPatch(NamedTuple):
    """The code has the bug the patch fixes."""

    found: KnownForms
    upstream: str
    fixed_upstream: str


class NeverShipped(NamedTuple):
    """The release has none of `files` (its RECORD does not list them); `others`: the patch's files it has."""

    distribution: str
    version: str | None
    files: tuple[str, ...]
    patch: str
    others: tuple[str, ...] = ()


class NotInstalled(NamedTuple):
    """The interpreter imports no such distribution (`executable`: as the interpreter names itself)."""

    executable: str
    distribution: str


class Missing(NamedTuple):
    """A file the release installed (RECORD lists it) is not there: reinstall the distribution."""

    path: Path
    distribution: str


class Unreadable(NamedTuple):
    """A file is there and cannot be read (and the error said no more)."""

    path: Path


class EmptyInTheWay(NamedTuple):
    """An empty file where the patch adds a module: a user's, never overwritten."""

    path: Path
    patch: str


class UnknownCode(NamedTuple):
    """Code no form of the entry knows (`detail`, classify's words), in the file at `path`."""

    detail: str
    path: Path


class StaleBytecode(NamedTuple):
    """The source has the fix, and an unchecked-hash .pyc of other code still runs."""

    path: Path


class NothingToRevert(NamedTuple):
    """revert found no state of the patch (`finding`: what the files are); `removed_backup`: an interrupted apply's
    backup it removed."""

    finding: Reason
    removed_backup: bool = False


class WithAdvice(NamedTuple):
    """A finding, and what the user should do about it."""

    finding: Reason
    advice: str


Reason = (
    str
    | Patched
    | FinishedApply
    | RebuiltBytecode
    | Restored
    | TookOut
    | WouldDo
    | NeedsPatch
    | KnownForms
    | NeverShipped
    | NothingToRevert
    | WithAdvice
    | NotInstalled
    | Missing
    | Unreadable
    | EmptyInTheWay
    | UnknownCode
    | StaleBytecode
)
