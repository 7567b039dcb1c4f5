"""Reading an environment for one patch: every fact the diagnosis needs, read off disk, nothing written."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import NamedTuple

from hfpatch import bytecode, files, state, wheelrecord
from hfpatch.entry import Patch
from hfpatch.environment import Installation, Python, run_in
from hfpatch.errors import HfpatchError, StateError


class Facts(NamedTuple):
    patch: Patch
    python: Python
    installation: Installation | None
    # Not installed: the directories on the path that still hold hfpatch's state for this patch.
    orphans: tuple[Path, ...] = ()
    state: state.State | None = None
    state_error: str | None = None
    # .hfpatch/<id>/ exists (with or without a state: an apply killed before writing it leaves a backup alone).
    leftover: bool = False
    source: bytes | None = None
    source_sha256: str | None = None
    source_error: str | None = None
    missing: bool = False
    # Why hfpatch will not write the file: it, or a directory between it and site-packages, is a link.
    link: str | None = None
    record_line: str | None = None
    backup: bytes | None = None
    backup_error: str | None = None
    # The application interpreter's unchecked-hash .pyc files whose source hash is not the file's: they run other code.
    stale_bytecode: tuple[str, ...] = ()

    @property
    def file(self) -> Path | None:
        return None if self.installation is None else self.installation.path_of(self.patch.file)

    @property
    def dist_info_name(self) -> str | None:
        if self.installation is None or self.installation.dist_info is None:
            return None
        return self.installation.dist_info.name


def gather(patch: Patch, python: Python, installation: Installation | None) -> Facts:
    if installation is None:
        orphans = tuple(Path(entry) for entry in python.search_path if state.patch_dir(Path(entry), patch.id).is_dir())
        return Facts(patch, python, None, orphans=orphans)
    root, file = installation.root, installation.path_of(patch.file)
    found = Facts(
        patch, python, installation, leftover=state.patch_dir(root, patch.id).exists(), link=_link(root, file)
    )
    try:
        saved = state.load(root, patch.id)
    except StateError as error:
        return found._replace(state_error=str(error))
    backup, backup_error = _backup(root, saved)
    record = installation.record
    record_line = None if record is None else wheelrecord.read_line(record, patch.file)
    found = found._replace(state=saved, backup=backup, backup_error=backup_error, record_line=record_line)
    if not file.exists():
        return found._replace(missing=True)
    try:
        source = files.read_bytes(file)
    except HfpatchError as error:
        return found._replace(source_error=str(error))
    digest = hashlib.sha256(source).hexdigest()
    return found._replace(source=source, source_sha256=digest, stale_bytecode=_stale_bytecode(python, file, source))


def _link(root: Path, file: Path) -> str | None:
    path = file
    while path != root and path != path.parent:
        if path.is_symlink():
            return f"{path} is a symbolic link (to {path.readlink()})"
        path = path.parent
    return None


def _backup(root: Path, saved: state.State | None) -> tuple[bytes | None, str | None]:
    if saved is None:
        return None, None
    path = state.backup_path(root, saved.patch)
    try:
        backup = state.load_backup(root, saved.patch)
    except HfpatchError as error:
        return None, str(error)
    if backup is None:
        return None, f"hfpatch's backup {path} is missing"
    if hashlib.sha256(backup).hexdigest() != saved.before_sha256:
        return None, f"hfpatch's backup {path} is not the original any more (its sha256 differs from the state)"
    return backup, None


def _stale_bytecode(python: Python, file: Path, source: bytes) -> tuple[str, ...]:
    """Only the application interpreter's own cache tag matters (no other interpreter loads that file), and the source
    hash is the application interpreter's: computed here when it is this interpreter, else asked of it."""
    candidates = bytecode.unchecked(bytecode.cached_files(file), python.cache_tag)
    if not candidates:
        return ()
    if python.magic == importlib.util.MAGIC_NUMBER.hex():
        expected = importlib.util.source_hash(source)
    else:
        output = run_in(python, {"action": "source_hash", "path": str(file)})
        expected = bytes.fromhex((output.strip().splitlines() or [""])[-1])
    return tuple(str(item.path) for item in candidates if item.source_hash != expected)
