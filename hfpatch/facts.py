"""Reading an environment for one patch: every fact the diagnosis needs, read off disk, nothing written."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from hfpatch import bytecode, files, reasons, state, wheelrecord
from hfpatch.entry import EMPTY_SHA256, FileShape, Patch, PatchFile
from hfpatch.environment import Installation, Python, run_in
from hfpatch.errors import HfpatchError, StateError
from hfpatch.reasons import Reason


class Interrupted(NamedTuple):
    """Another patch's apply or revert of the file, killed before it finished: until it is finished the file holds
    what that run's journal says, which hfpatch's state of the file does not say yet."""

    patch: str
    phase: state.Phase
    change: state.FileChange

    @property
    def verb(self) -> str:
        return "apply" if self.phase is state.Phase.APPLYING else "revert"


class FileFacts(NamedTuple):
    """One file of the patch, as the environment holds it."""

    patch_file: PatchFile
    path: Path
    # hfpatch's state of the file: which patches it holds, the original's digest; None where it holds none.
    state: state.FileState | None = None
    state_error: str | None = None
    # .hfpatch/files/<file>/ holds an original but no state (an apply killed before it wrote the file's state).
    leftover: bool = False
    original: bytes | None = None
    original_error: Reason | None = None
    source: bytes | None = None
    source_sha256: str | None = None
    source_error: str | None = None
    missing: bool = False
    # A file the patch adds (FileShape.ADD) that is not there: read as no bytes (`source` b""), not as missing.
    absent: bool = False
    # RECORD was read and does not list the file: the release never installed it (not a file lost since).
    unlisted: bool = False
    # Why hfpatch will not write the file: it, or a directory between it and site-packages, is a link.
    link: reasons.Link | None = None
    record_line: str | None = None
    # The application interpreter's unchecked-hash .pyc files whose source hash is not the file's: they run other code.
    stale_bytecode: tuple[str, ...] = ()
    # Other patches' interrupted runs that name the file.
    interrupted: tuple[Interrupted, ...] = ()

    @property
    def file(self) -> str:
        return self.patch_file.file

    def holds(self, patch_id: str) -> bool:
        """hfpatch's state of the file says the patch is applied to it."""
        return self.state is not None and patch_id in self.state.patches


class Facts(NamedTuple):
    patch: Patch
    python: Python
    installation: Installation | None
    # Not installed: the directories on the path that still hold hfpatch's state for this patch.
    orphans: tuple[Path, ...] = ()
    state: state.PatchState | None = None
    state_error: str | None = None
    # .hfpatch/<id>/ exists without a state.
    leftover: bool = False
    files: tuple[FileFacts, ...] = ()

    @property
    def dist_info_name(self) -> str | None:
        if self.installation is None or self.installation.dist_info is None:
            return None
        return self.installation.dist_info.name

    @property
    def file_paths(self) -> tuple[Path, ...]:
        """The patch's files where they are installed."""
        return tuple(file.path for file in self.files)

    @property
    def added_paths(self) -> tuple[Path, ...]:
        """Those of them the patch creates (FileShape.ADD): apply writes them, revert removes them."""
        return tuple(file.path for file in self.files if file.patch_file.shape is FileShape.ADD)

    # A patch of one file: that file's facts, as most messages speak of one.
    @property
    def first(self) -> FileFacts:
        return self.files[0]


def gather(patch: Patch, python: Python, installation: Installation | None) -> Facts:
    if installation is None:
        return Facts(patch, python, None, orphans=_orphans(patch, python))
    if _nothing_here(patch, installation):
        # As _file finds each of them, without asking again for what never_installed asked: none is there, and
        # hfpatch keeps no state here (a removed file's entry names hundreds of files a later release never had).
        files = tuple(
            FileFacts(file, installation.path_of(file.file), missing=True, unlisted=True) for file in patch.files
        )
        return Facts(patch, python, installation, files=_without_removed_files_absent(files))
    root = installation.root
    found = Facts(patch, python, installation, leftover=state.patch_dir(root, patch.id).exists())
    try:
        saved, implied = state.load(root, patch.id)
    except StateError as error:
        return found._replace(state_error=str(error))
    record = installation.record
    record_bytes = _record(record)
    interrupted, implied_by_others = _others(root, patch)
    gathered = tuple(
        _file(file, python, installation, implied.get(file.file) or implied_by_others.get(file.file), record_bytes)
        for file in patch.files
    )
    gathered = tuple(file._replace(interrupted=interrupted.get(file.file, ())) for file in gathered)
    return found._replace(state=saved, files=_without_removed_files_absent(gathered))


def never_installed(patch: Patch, installation: Installation) -> bool:
    """The release never had any of the patch's files (RECORD, read, lists none, and none is on disk), and hfpatch
    keeps no state where it is installed: the patch's header is all its diagnosis needs (not-applicable), so its
    entry is never read whole there (catalog.whole_entry). Any state of hfpatch there, or no RECORD: False."""
    key = (patch.id, installation.root)
    if _READ is not None and key in _NEVER_INSTALLED:  # asked by check's selection, then by gather
        return _NEVER_INSTALLED[key]
    record = _record(installation.record)
    if record is None or _keeps_state(installation.root):
        return False
    root = str(installation.root)
    never = all(
        _record_facts(record, file.file)[1] and not os.path.exists(f"{root}/{file.file}")  # noqa: PTH110
        for file in patch.files
    )
    if _READ is not None:
        _NEVER_INSTALLED[key] = never
    return never


def _nothing_here(patch: Patch, installation: Installation) -> bool:
    """never_installed, for a patch that adds no file (absent, such a file is read as no bytes, not as missing)."""
    return all(file.shape is not FileShape.ADD for file in patch.files) and never_installed(patch, installation)


def installed_digests(patch: Patch, installation: Installation) -> dict[str, str] | None:
    """The digest of each of the patch's files that is installed, read once a run as gather reads them; None where
    hfpatch keeps state in the installation (what a state says is the whole entry's to judge)."""
    if _keeps_state(installation.root):
        return None
    found: dict[str, str] = {}
    for file in patch.files:
        path = installation.path_of(file.file)
        if os.path.exists(path):  # noqa: PTH110
            try:
                found[file.file] = _read_once(path).sha256
            except HfpatchError:
                return None
    return found


def _without_removed_files_absent(gathered: tuple[FileFacts, ...]) -> tuple[FileFacts, ...]:
    """A file the patch removes that this release never had (RECORD does not list it, hfpatch holds no state of it)
    is as the fix wants it: only the others are acted on. Where the release has none of them, all stay, and the
    release is one the patch is not for."""
    present = tuple(
        file
        for file in gathered
        if not (file.patch_file.shape is FileShape.REMOVE and file.missing and file.unlisted and file.state is None)
    )
    return present or gathered


def _others(root: Path, patch: Patch) -> tuple[dict[str, tuple[Interrupted, ...]], dict[str, state.FileState]]:
    """What other patches' states say of this patch's files: their interrupted runs, and the states of the files
    that hfpatch 0.2's layout implies (it kept none of its own: a file it patched holds that patch already)."""
    mine = {file.file for file in patch.files}
    try:
        directories = sorted(state.state_root(root).iterdir())
    except OSError:
        return {}, {}
    found: dict[str, list[Interrupted]] = {}
    implied: dict[str, state.FileState] = {}
    for directory in directories:
        if directory.name in (patch.id, "files") or not (directory / "state.json").is_file():
            continue
        try:
            saved, theirs = state.load(root, directory.name)
        except StateError:
            continue  # that patch's own check says so
        implied |= {file: held for file, held in theirs.items() if file in mine}
        if saved is None or saved.phase is state.Phase.APPLIED:
            continue
        for change in saved.files:
            if change.file in mine:
                found.setdefault(change.file, []).append(Interrupted(saved.patch, saved.phase, change))
    return {file: tuple(runs) for file, runs in found.items()}, implied


def _orphans(patch: Patch, python: Python) -> tuple[Path, ...]:
    """The entries of the path that still hold hfpatch's state of the patch (its distribution was uninstalled)."""
    files = [file.file for file in patch.files]
    return tuple(root for root in roots_holding_state(python) if holds_state(root, patch.id, files))


def holds_state(root: Path, patch_id: str, files: Iterable[str]) -> bool:
    """Whether hfpatch keeps state of the patch, or of any of its files, in an entry of the path."""
    return state.patch_dir(root, patch_id).is_dir() or any(state.file_dir(root, file).is_dir() for file in files)


def roots_holding_state(python: Python) -> tuple[Path, ...]:
    """The entries of the path that hold a .hfpatch directory at all: looked for once a run, since a patch whose
    distribution is not installed gains no state during the run (most environments have none anywhere)."""
    if _READ is not None and python.search_path in _STATE_ROOTS:
        return _STATE_ROOTS[python.search_path]
    roots = tuple(Path(entry) for entry in python.search_path if state.state_root(Path(entry)).is_dir())
    if _READ is not None:
        _STATE_ROOTS[python.search_path] = roots
    return roots


class _Read:
    """A file as one run read it: its bytes, and their digest once asked for (RECORD's is never needed)."""

    __slots__ = ("_sha256", "data", "identity")

    def __init__(self, identity: tuple[int, int, int, int], data: bytes) -> None:
        self.identity = identity
        self.data = data
        self._sha256: str | None = None

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.data).hexdigest()
        return self._sha256


# Within a run (commands.run), each installed file is read and hashed once, whichever entries name it (several
# security fixes name modeling_utils.py): kept while its inode, size and modification time stay. The engine forgets
# them before it decides again under the lock, and after it writes, so that a decision that writes never rests on an
# earlier read. Outside a run (None), every gather reads afresh.
_READ: dict[Path, _Read] | None = None
_STATE_ROOTS: dict[tuple[str, ...], tuple[Path, ...]] = {}
_STATE_KEPT: dict[Path, bool] = {}
_LINKS: dict[str, bool] = {}
# Each RECORD read in the run: its lines by path once split (None: not yet), and how many files it was searched for.
_RECORD_LINES: dict[int, tuple[bytes, dict[str, str | None] | None, int]] = {}
_NEVER_INSTALLED: dict[tuple[str, Path], bool] = {}


def _listed(directory: Path) -> list[str]:
    """A __pycache__ directory's names, listed once a run (a package's holds every module's: transformers/ has
    hundreds, and an entry names dozens of its files); OSError where it cannot be listed."""
    if _READ is None:
        return os.listdir(directory)  # noqa: PTH208
    key = str(directory)
    if key not in _PYCACHE_NAMES:
        try:
            _PYCACHE_NAMES[key] = os.listdir(key)  # noqa: PTH208
        except OSError as error:
            _PYCACHE_NAMES[key] = error
    names = _PYCACHE_NAMES[key]
    if isinstance(names, OSError):
        raise names
    return names


_PYCACHE_NAMES: dict[str, list[str] | OSError] = {}


def _forget_paths() -> None:
    _PYCACHE_NAMES.clear()
    _NEVER_INSTALLED.clear()
    _STATE_ROOTS.clear()
    _STATE_KEPT.clear()
    _LINKS.clear()
    _RECORD_LINES.clear()


@contextlib.contextmanager
def one_read_each() -> Iterator[None]:
    """A run: each file read once while it lasts."""
    global _READ
    _READ = {}
    _forget_paths()
    try:
        yield
    finally:
        _READ = None
        _forget_paths()


def forget() -> None:
    """Read every file afresh from now on (the engine, before it decides under the lock and after it writes)."""
    if _READ is not None:
        _READ.clear()
    _forget_paths()


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def _read_once(path: Path) -> _Read:
    """The file's bytes and digest, read once a run; HfpatchError where it cannot be read."""
    identity = _identity(path) if _READ is not None else None
    kept = None if _READ is None else _READ.get(path)
    if kept is not None and kept.identity == identity:
        return kept
    data = files.read_bytes(path)
    read = _Read(identity or (0, 0, -1, 0), data)
    if _READ is not None and identity is not None:
        _READ[path] = read
    return read


def _record(record: Path | None) -> bytes | None:
    if record is None:
        return None
    try:
        return _read_once(record).data
    except HfpatchError:
        return None


def _file(
    patch_file: PatchFile,
    python: Python,
    installation: Installation,
    implied: state.FileState | None,
    record: bytes | None,
) -> FileFacts:
    root, path = installation.root, installation.path_of(patch_file.file)
    found = FileFacts(patch_file, path)
    saved: state.FileState | None = implied
    leftover = False
    if _keeps_state(root):  # most environments have no .hfpatch anywhere: nothing of it to look up per file
        try:
            saved = state.load_file(root, patch_file.file) or implied
        except StateError as error:
            return found._replace(state_error=str(error))
        leftover = saved is None and state.file_dir(root, patch_file.file).exists()
    original, original_error = _original(root, saved)
    record_line, unlisted = (None, False) if record is None else _record_facts(record, patch_file.file)
    found = found._replace(
        state=saved,
        leftover=leftover,
        original=original,
        original_error=original_error,
        record_line=record_line,
        unlisted=unlisted,
    )
    exists = os.path.exists(path)  # noqa: PTH110 - the plain call: a removed file's entry names hundreds
    # Whether a link is in the way matters where hfpatch may write: a file that is there, one the patch adds, one
    # hfpatch's state holds. A file missing besides (a release without it) is never written: no links looked for.
    if exists or patch_file.shape is FileShape.ADD or saved is not None or leftover:
        found = found._replace(link=_link(root, path))
    if not exists:
        if patch_file.shape is FileShape.ADD:  # what the patch adds is not there yet (or no longer)
            return found._replace(source=b"", source_sha256=EMPTY_SHA256, absent=True)
        return found._replace(missing=True)
    try:
        read = _read_once(path)
    except HfpatchError as error:
        return found._replace(source_error=str(error))
    stale_bytecode = _stale_bytecode(python, path, read.data)  # never kept: the interpreter may compile any time
    return found._replace(source=read.data, source_sha256=read.sha256, stale_bytecode=stale_bytecode)


def _keeps_state(root: Path) -> bool:
    """Whether `root` holds a .hfpatch directory: looked at once a run (the engine forgets it before it decides
    under the lock and after it writes, as it forgets what it read)."""
    if _READ is None:
        return state.state_root(root).is_dir()
    if root not in _STATE_KEPT:
        _STATE_KEPT[root] = state.state_root(root).is_dir()
    return _STATE_KEPT[root]


def _record_facts(record: bytes, file: str) -> tuple[str | None, bool]:
    """The file's RECORD line, and whether RECORD does not list it. Within a run, RECORD is searched for the first
    few files it lists (apply's one file, read again under the lock and after writing: a search finds it in
    microseconds), and split once into its lines by path at the first file it does not list or past a few: a
    removed file's entry names hundreds of files, and searching the whole RECORD for each was most of what `check`
    spent on such an entry (splitting transformers' costs a millisecond). A path with a comma in it is searched for
    (wheelrecord.listing)."""
    if _READ is None or "," in file:
        line = wheelrecord.find_line(record, file)
        return line, line is None and not wheelrecord.lists(record, file)
    kept = _RECORD_LINES.get(id(record))
    if kept is None or kept[0] is not record:
        kept = (record, None, 0)
    if kept[1] is None and kept[2] < _SEARCHED:
        line = wheelrecord.find_line(record, file)
        if line is not None:
            _RECORD_LINES[id(record)] = (record, None, kept[2] + 1)
            return line, False
    if kept[1] is None:
        kept = (record, wheelrecord.listing(record), kept[2])
        _RECORD_LINES[id(record)] = kept
    lines = kept[1]
    assert lines is not None
    return lines.get(file), file not in lines


# The files of one RECORD that a run finds by searching it before it splits it into lines.
_SEARCHED = 8


def _link(root: Path, file: Path) -> reasons.Link | None:
    # In strings, not Paths: an entry of a removed file's shape names hundreds of files, and pathlib's parents and
    # comparisons were most of what reading them cost.
    top = str(root)
    first = path = str(file)
    while path != top and path != os.path.dirname(path):  # noqa: PTH120
        if os.path.islink(path) if path == first else _is_link(path):  # noqa: PTH114
            return reasons.Link(Path(path), Path(path).readlink())
        path = os.path.dirname(path)  # noqa: PTH120
    return None


def _is_link(directory: str) -> bool:
    """os.path.islink of a directory, asked once a run: the files of an entry share their directories."""
    if _READ is None:
        return os.path.islink(directory)  # noqa: PTH114
    if directory not in _LINKS:
        _LINKS[directory] = os.path.islink(directory)  # noqa: PTH114
    return _LINKS[directory]


def _original(root: Path, saved: state.FileState | None) -> tuple[bytes | None, Reason | None]:
    if saved is None:
        return None, None
    path = state.backup_of(root, saved)
    try:
        original = state.load_original(root, saved)
    except HfpatchError as error:
        return None, str(error)
    if original is None:
        return None, reasons.BackupMissing(path)
    if hashlib.sha256(original).hexdigest() != saved.original_sha256:
        return None, reasons.BackupChanged(path)
    return original, None


def _stale_bytecode(python: Python, file: Path, source: bytes) -> tuple[str, ...]:
    """Only the application interpreter's own cache tag matters (no other interpreter loads that file), and the
    source hash is the application interpreter's: computed here when it is this interpreter, else asked of it."""
    candidates = bytecode.unchecked(bytecode.cached_files(file, python.cache_tag, _listed), python.cache_tag)
    if not candidates:
        return ()
    if python.magic == importlib.util.MAGIC_NUMBER.hex():
        expected = importlib.util.source_hash(source)
    else:
        output = run_in(python, {"action": "source_hash", "path": str(file)})
        expected = bytes.fromhex((output.strip().splitlines() or [""])[-1])
    return tuple(str(item.path) for item in candidates if item.source_hash != expected)
