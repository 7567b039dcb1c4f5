"""Why a command came to what it did, as values with their fields (patch ids, installed paths, releases): the
diagnosis, the plan, the executor and verify return these (an error they raise carries one: hfpatch.errors.refusal),
and hfpatch.render alone turns them into words, each path relative to its environment, and a long list of files cut
to its first one and a count (all of them with -v and in --json).

The one reason still a sentence (a str) is an error's: an HfpatchError raised below the engine, by the layers that
read and write files, the state and the interpreter, whose str() is its sentence (hfpatch.errors). `Reason` is the
union of both. Advice names the commands to run by what they do (`Next`); render spells them with the options the
user gave.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        return lambda kind: kind


# A command to run next (`apply`), spelt with the options the user gave (--python, --patch, --catalog).
Suggest = Callable[[str], str]


def plain(command: str) -> str:
    return f"hfpatch {command}"


_V = TypeVar("_V", bound="Value")


@dataclass_transform(frozen_default=True)
class Value(tuple):  # type: ignore[type-arg]
    """A reason: a tuple of its fields, declared as a class's annotations (with defaults), equal only to a reason of
    its own kind, read-only. What typing.NamedTuple gives, at a fraction of the cost of making each class: check
    imports seventy of them, and NamedTuple's are made by compiling code for each (about 0.1 ms a class here)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls) -> None:
        names = tuple(cls.__annotations__)  # a class's own (3.10 on): a reason is never a subclass of another
        cls._defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
        cls._fields = names
        cls.__match_args__ = names  # type: ignore[attr-defined,misc]
        for index, name in enumerate(names):
            setattr(cls, name, property(itemgetter(index), doc=f"field {index}"))

    def __new__(cls: type[_V], *args: Any, **given: Any) -> _V:
        fields = cls._fields
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__} takes {len(fields)} fields, not {len(args)}")
        twice = next((name for name in fields[: len(args)] if name in given), None)
        if twice is not None:
            raise TypeError(f"{cls.__name__} got its field {twice!r} twice")
        values = list(args)
        for name in fields[len(args) :]:
            if name in given:
                values.append(given.pop(name))
            elif name in cls._defaults:
                values.append(cls._defaults[name])
            else:
                raise TypeError(f"{cls.__name__} needs its field {name!r}")
        if given:
            raise TypeError(f"{cls.__name__} has no field {next(iter(given))!r}")
        return tuple.__new__(cls, values)

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle make it again from its fields
        return tuple(self)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a reason is read-only: {type(self).__name__}.{name}")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self), tuple(self)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({fields})"

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))


class Patched(Value):
    """apply wrote the fix into the files."""

    paths: tuple[Path, ...]
    upstream: str
    fixed_in: str | None
    added: tuple[Path, ...] = ()  # those of `paths` that apply created (a module the fix adds)


class FinishedApply(Value):
    """apply finished an apply that was interrupted."""

    paths: tuple[Path, ...]


class RebuiltBytecode(Value):
    """apply rebuilt the stale bytecode of source that had the fix already."""

    paths: tuple[Path, ...]


class Restored(Value):
    """revert put the original bytes back (`already`: they were the original, only hfpatch's state went)."""

    paths: tuple[Path, ...]
    already: bool = False
    removed: tuple[Path, ...] = ()  # those of `paths` that the patch had added, which revert removed


class TookOut(Value):
    """revert took one patch out of files that other patches stay on."""

    patch: str
    paths: tuple[Path, ...]
    staying: tuple[str, ...]


class WouldDo(Value):
    """A dry run: what the plan's `action` (an Action's value) would do to the files, or to the patch's state."""

    action: str
    paths: tuple[Path, ...]
    patch: str


class KnownForms(Value):
    """The released forms the files are known as, each in words (hfpatch.classify), one a file."""

    details: tuple[str, ...]


class NeedsPatch(Value):
    """The code has the bug the patch fixes."""

    found: KnownForms
    upstream: str
    fixed_upstream: str


class NeverShipped(Value):
    """The release has none of `files` (its RECORD does not list them); `others`: the patch's files it has."""

    distribution: str
    version: str | None
    files: tuple[str, ...]
    patch: str
    others: tuple[str, ...] = ()


class NotInstalled(Value):
    """The interpreter imports no such distribution (`executable`: as the interpreter names itself)."""

    executable: str
    distribution: str


class Missing(Value):
    """A file the release installed (RECORD lists it) is not there: reinstall the distribution."""

    path: Path
    distribution: str


class Unreadable(Value):
    """A file is there and cannot be read (and the error said no more)."""

    path: Path


class EmptyInTheWay(Value):
    """An empty file where the patch adds a module: a user's, never overwritten."""

    path: Path
    patch: str


class UnknownCode(Value):
    """Code no form of the entry knows (`detail`, classify's words), in the file at `path`."""

    detail: str
    path: Path


class StaleBytecode(Value):
    """The source has the fix, and an unchecked-hash .pyc of other code still runs."""

    path: Path


class NothingToRevert(Value):
    """revert found no state of the patch (`reason`: what the files are); `removed_backup`: an interrupted apply's
    backup it removed."""

    reason: Reason
    removed_backup: bool = False


class Next(enum.Enum):
    """What to run next, where the user must act: render spells each with the options the user gave."""

    APPLY = "apply"
    REBUILD = "rebuild"  # apply, to rebuild the stale bytecode
    FINISH = "finish"  # apply, to finish what an apply left
    FINISH_APPLY = "finish-apply"  # an interrupted apply: apply finishes it, revert undoes it
    FINISH_REVERT = "finish-revert"  # an interrupted revert: revert finishes it, apply undoes it
    FINISH_OTHER = "finish-other"  # another patch's interrupted run: apply or revert with that patch
    FORCE_REVERT = "force-revert"  # revert --force puts the original back over an edit


class Advice(Value):
    """The command to run next; `patch`: the other patch FINISH_OTHER names."""

    next: Next
    patch: str = ""


class WithAdvice(Value):
    """What is, and what the user should do about it."""

    reason: Reason
    advice: Reason


class Together(Value):
    """The reasons of several files in one condition, each said once."""

    reasons: tuple[Reason, ...]


class Link(Value):
    """The file, or a directory between it and site-packages (`path`), is a symbolic link to `target`."""

    path: Path
    target: Path


class ThroughLink(Value):
    """What needs writing lies behind a link, and hfpatch does not write through links (the advice)."""

    link: Link


class NoLinks(Value):
    """revert refused: the link is in the way."""

    link: Link


class SharedWithBase(Value):
    """The files belong to the base interpreter of a venv made with --system-site-packages."""

    paths: tuple[Path, ...]
    base_prefix: str
    prefix: str


class Orphaned(Value):
    """hfpatch's state and backup in `directory` (ROOT/.hfpatch/ID) of a distribution no longer installed."""

    directory: Path
    distribution: str


class StrangeState(Value):
    """hfpatch's state of the patch names a file the entry does not."""

    patch: str
    named: str
    files: str


class NoDistInfo(Value):
    """The package is there without its distribution's metadata."""

    root: Path
    distribution: str
    package: str


class StaleState(Value):
    """hfpatch's state was written for another install of the distribution (`now`: the version installed now)."""

    distribution: str
    version: str | None
    now: str | None


class Predates(Value):
    """The release is older than the first that defines the patch's targets."""

    distribution: str
    version: str | None
    targets: str


class Unexpected(Value):
    """The code is not a form the patch knows (`detail`: the UnexpectedCode's words)."""

    detail: str
    distribution: str


class FormDetail(Value):
    """What classify found the code to be, in its words (no installed path in them): not applicable here."""

    detail: str


class FixedOtherwise(Value):
    """The code has the fix, and hfpatch holds no state of it."""

    detail: str


class FixedUpstream(Value):
    """The release has the upstream fix: the patch is obsolete here."""

    distribution: str
    version: str | None
    upstream: str
    fixed_in: str | None


class NotCovered(Value):
    """A release outside those the entry was written from (`older`: before them), its files as released; `held`:
    other patches hfpatch applied to them."""

    distribution: str
    version: str | None
    older: bool
    releases_read: tuple[str, str]
    patch: str
    files: int
    held: tuple[str, ...] = ()


class BuiltinUncovered(Value):
    """The advice for a built-in entry that does not cover the release."""

    patch: str


class WriteAgain(Value):
    """The advice to write the entry again with `new`, over the release installed (`since`/`until`, where one)."""

    patch: str
    targets: tuple[str, ...]
    fixed_in: str | None
    since: str | None = None
    until: str | None = None


class Dropped(Value):
    """The file holds the original code again, hfpatch's state says patched."""

    path: Path
    distribution: str


class Applied(Value):
    """hfpatch patched the file (its state says when, and which hfpatch)."""

    path: Path
    hfpatch_version: str
    applied_at: str


class Interrupted(Value):
    """An apply (`reverting` False) or a revert of this patch was interrupted."""

    reverting: bool


class InPlaceBut(Value):
    """The patched file is in place, and `lagging` still lags behind it."""

    lagging: Reason


class BytecodeLags(Value):
    """An unchecked-hash .pyc of the code before would run."""

    path: Path


class RecordLags(Value):
    """RECORD's line of the file is not the file's."""

    record: Path


class LeftByOther(Value):
    """The file is as another patch's interrupted run left it."""

    path: Path
    verb: str
    patch: str


class Edited(Value):
    """The file was changed since hfpatch applied the patch."""

    path: Path
    patch: str


class BackupMissing(Value):
    """hfpatch's backup of the original is not there."""

    path: Path


class BackupChanged(Value):
    """hfpatch's backup is not the original any more (its digest is not the state's)."""

    path: Path


class OriginalLost(Value):
    """A note: the original cannot be restored (`error`: why), so only a reinstall brings it back."""

    error: Reason
    distribution: str


class NoOriginal(Value):
    """revert refused: the original cannot be restored (`error`: why)."""

    error: Reason
    distribution: str


class OtherInterrupted(Value):
    """Another patch's run was interrupted in the files: it is finished first, and nothing is written."""

    verb: str
    patch: str
    paths: tuple[Path, ...]


class ClearedOrphans(Value):
    """revert cleared the state and backup of an uninstalled distribution."""

    distribution: str
    roots: tuple[Path, ...]


class ClearedReinstalled(Value):
    """revert cleared a stale state and left the files as the reinstall made them."""

    distribution: str
    then: str | None
    now: str | None


class ClearedStale(Value):
    """A note: apply cleared hfpatch's stale state of another install."""

    distribution: str
    version: str | None


class NotCompiled(Value):
    """A note: the patched file's bytecode could not be written (Python compiles it on import)."""

    path: Path
    failure: str


class NotRebuilt(Value):
    """A note: the old bytecode is gone and the new could not be written (Python rebuilds it on import)."""

    failure: str


class HeldByUnknown(Value):
    """revert refused: the file also holds another patch that no catalog given has."""

    path: Path
    other: str
    patch: str


class NoLongerChanges(Value):
    """revert refused: the catalog's entry of a patch the file holds no longer changes that file."""

    patch: str
    file: str


class BackupNotOriginal(Value):
    """apply or revert refused: the original an interrupted run saved is missing or not the original."""

    path: Path


class AlreadyHeld(Value):
    """apply refused: hfpatch already holds a state of the patch or its files in the directory."""

    patch: str
    root: Path


class Unlisted(Value):
    """The patch is known from hfpatch's state alone (no catalog given has it), in `files`; `command` needs its
    catalog (REVERT: it was reverted from that state and its backup alone)."""

    patch: str
    files: tuple[str, ...]
    command: str


class ImportUntold(Value):
    """A note: the module does not import here, patched or not, so the import check tells nothing of the patch."""

    module: str
    error: str


class ImportBreaks(Value):
    """apply refused: the patched module fails to import where the original imports."""

    module: str
    error: str


class DigestsOnly(Value):
    """verify: the entry has no probe; `checked`: what check said."""

    patch: str
    checked: Reason


class BrokenProbe(Value):
    """verify: the probe printed no verdict, or could not run (`broken`: how)."""

    probe: Path
    broken: str


class ProbeNeeds(Value):
    """verify: the probe needs what the interpreter lacks; `checked`: what check said."""

    needs: str
    executable: str
    patch: str
    checked: Reason


class Works(Value):
    """verify: the real code works here (`checked`: what check said, or None where the patch is applied)."""

    checked: Reason | None
    imported: Path | None = None  # the file the interpreter imports, where not the patch's
    expected: Path | None = None


class BugLive(Value):
    """verify: the probe reached the bug in the real code."""

    upstream: str
    failure: str
    advice: Reason | None = None
    imported: Path | None = None
    expected: Path | None = None


class ProbeFailed(Value):
    """verify: the real code failed otherwise than by the bug."""

    failure: str
    imported: Path | None = None
    expected: Path | None = None


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
    | Advice
    | Together
    | Link
    | ThroughLink
    | NoLinks
    | SharedWithBase
    | Orphaned
    | StrangeState
    | NoDistInfo
    | StaleState
    | Predates
    | Unexpected
    | FormDetail
    | FixedOtherwise
    | FixedUpstream
    | NotCovered
    | BuiltinUncovered
    | WriteAgain
    | Dropped
    | Applied
    | Interrupted
    | InPlaceBut
    | BytecodeLags
    | RecordLags
    | LeftByOther
    | Edited
    | BackupMissing
    | BackupChanged
    | OriginalLost
    | NoOriginal
    | OtherInterrupted
    | ClearedOrphans
    | ClearedReinstalled
    | ClearedStale
    | NotCompiled
    | NotRebuilt
    | HeldByUnknown
    | NoLongerChanges
    | BackupNotOriginal
    | AlreadyHeld
    | Unlisted
    | ImportUntold
    | ImportBreaks
    | DigestsOnly
    | BrokenProbe
    | ProbeNeeds
    | Works
    | BugLive
    | ProbeFailed
)
