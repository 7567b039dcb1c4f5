"""hfpatch's state (what it did to an environment) and the byte-exact backups, kept beside the package.

Layout, in the directory that holds the patched package (site-packages):

    .hfpatch/lock                             the environment's lock
    .hfpatch/<patch id>/state.json            a patch's state: its phase, and what its last apply or revert did to
                                              each of its files (the digest before and after: the journal)
    .hfpatch/files/<file>/state.json          a file's state: its original digest and RECORD line, which patches
                                              are applied to it, in order, and the digest hfpatch left it at
    .hfpatch/files/<file>/original            the file's bytes as the release installed them

A file's state is shared by every patch that changes the file, so that two patches of one file each apply and
revert on their own. "RECORD" always means the distribution's own RECORD file; hfpatch's files are "the state".

hfpatch 0.2 kept one state per patch (schema 1) with the backup beside it (`.hfpatch/<id>/original`); it is read as
both states, and the next apply or revert writes it in this layout.
"""

from __future__ import annotations

import contextlib
import enum
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch import files
from hfpatch.errors import HfpatchError, StateError
from hfpatch.files import describe_os_error, make_directory, write_atomically

SCHEMA = 2
STATE_DIR = ".hfpatch"
_DIGEST = re.compile(r"[0-9a-f]{64}")


class Phase(enum.Enum):
    """Where apply or revert got to: written to the state before the files, so a killed run can be finished."""

    APPLYING = "applying"
    APPLIED = "applied"
    REVERTING = "reverting"


class FileChange(NamedTuple):
    """One file's part of a patch's last apply or revert: the file as it found it, and as it leaves it."""

    file: str
    before_sha256: str
    after_sha256: str


class PatchState(NamedTuple):
    schema: int
    patch: str
    hfpatch_version: str
    applied_at: str
    distribution: str
    version: str | None
    dist_info: str | None
    # APPLYING until every step of apply is done, REVERTING once revert has begun, else APPLIED.
    phase: Phase
    files: tuple[FileChange, ...]
    # Read from hfpatch 0.2's layout (schema 1): the next write puts it in this one.
    legacy: bool = False

    def change_of(self, file: str) -> FileChange | None:
        return next((change for change in self.files if change.file == file), None)


class FileState(NamedTuple):
    schema: int
    file: str
    distribution: str
    version: str | None
    dist_info: str | None
    original_sha256: str
    # The distribution's RECORD line of the file before any patch, restored once none is left; None where RECORD
    # does not list it.
    record_line_before: str | None
    # The patches applied to the file, in the order they were applied.
    patches: tuple[str, ...]
    # The file as hfpatch left it.
    sha256: str
    # Where the original bytes lie (hfpatch 0.2 kept them beside the patch's state).
    original_path: str | None = None


def state_root(root: Path) -> Path:
    return root / STATE_DIR


def lock_file(root: Path) -> Path:
    return state_root(root) / "lock"


def patch_dir(root: Path, patch_id: str) -> Path:
    return state_root(root) / patch_id


def state_path(root: Path, patch_id: str) -> Path:
    return patch_dir(root, patch_id) / "state.json"


def file_dir(root: Path, file: str) -> Path:
    return state_root(root).joinpath("files", *file.split("/"))


def file_state_path(root: Path, file: str) -> Path:
    return file_dir(root, file) / "state.json"


def original_path(root: Path, file: str) -> Path:
    return file_dir(root, file) / "original"


def legacy_backup_path(root: Path, patch_id: str) -> Path:
    return patch_dir(root, patch_id) / "original"


# ------------------------------------------------------------------------------------------------- reading


def _corrupt(path: Path) -> StateError:
    return StateError(
        f"hfpatch's state {path} is corrupt; nothing was changed. Check the file against its backup, "
        f"then remove {path.parent} by hand."
    )


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise StateError(f"cannot read hfpatch's state {path}: {error}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise _corrupt(path) from None
    if not isinstance(data, dict) or type(data.get("schema")) is not int:
        raise _corrupt(path)
    if data["schema"] > SCHEMA:
        raise StateError(
            f"hfpatch's state {path} was written by a newer hfpatch ({data.get('hfpatch_version', 'unknown')}, "
            f"state schema {data['schema']}); upgrade hfpatch to act on this environment."
        )
    return data


def load(root: Path, patch_id: str) -> tuple[PatchState | None, dict[str, FileState]]:
    """The patch's state, and the state of each file that hfpatch 0.2's layout implies (read from it); the files'
    states of this layout are load_file's."""
    path = state_path(root, patch_id)
    data = _read(path)
    if data is None:
        return None, {}
    if data["schema"] == 1:
        return _legacy(data, path, root, patch_id)
    return parse(data, path, patch_id), {}


def parse(data: dict[str, Any], path: Path, patch_id: str) -> PatchState:
    fields = set(PatchState._fields) - {"legacy"}
    if set(data) != fields or not _strings(data, "patch", "hfpatch_version", "applied_at", "distribution"):
        raise _corrupt(path)
    if not _optional_strings(data, "version", "dist_info") or data["patch"] != patch_id:
        raise _corrupt(path)
    if data["phase"] not in {phase.value for phase in Phase} or not isinstance(data["files"], list):
        raise _corrupt(path)
    changes = []
    for item in data["files"]:
        if not isinstance(item, dict) or set(item) != set(FileChange._fields):
            raise _corrupt(path)
        if not _relative(item.get("file")) or not _digests(item, "before_sha256", "after_sha256"):
            raise _corrupt(path)
        changes.append(FileChange(**item))
    return PatchState(**{**data, "phase": Phase(data["phase"]), "files": tuple(changes)})


def load_file(root: Path, file: str) -> FileState | None:
    path = file_state_path(root, file)
    data = _read(path)
    return None if data is None else parse_file(data, path, file)


def parse_file(data: dict[str, Any], path: Path, file: str) -> FileState:
    fields = set(FileState._fields) - {"original_path"}
    if set(data) != fields or data["file"] != file or not _strings(data, "distribution"):
        raise _corrupt(path)
    if not _optional_strings(data, "version", "dist_info", "record_line_before"):
        raise _corrupt(path)
    if not _digests(data, "original_sha256", "sha256") or not _record_line(data["record_line_before"], file):
        raise _corrupt(path)
    patches = data["patches"]
    if not isinstance(patches, list) or not all(isinstance(patch, str) and patch for patch in patches):
        raise _corrupt(path)
    return FileState(**{**data, "patches": tuple(patches)})


def _legacy(data: dict[str, Any], path: Path, root: Path, patch_id: str) -> tuple[PatchState, dict[str, FileState]]:
    """hfpatch 0.2's state of one patch and its one file, as this layout's two states."""
    names = {
        "schema", "patch", "hfpatch_version", "applied_at", "distribution", "version", "dist_info", "target",
        "before_sha256", "after_sha256", "record_line_before", "phase",
    }  # fmt: skip
    if set(data) != names or not _strings(data, "patch", "hfpatch_version", "applied_at", "distribution", "target"):
        raise _corrupt(path)
    if not _optional_strings(data, "version", "dist_info", "record_line_before") or data["patch"] != patch_id:
        raise _corrupt(path)
    target = data["target"]
    valid = (
        _relative(target)
        and _digests(data, "before_sha256", "after_sha256")
        and _record_line(data["record_line_before"], target)
        and data["phase"] in {phase.value for phase in Phase}
    )
    if not valid:
        raise _corrupt(path)
    change = FileChange(target, data["before_sha256"], data["after_sha256"])
    saved = PatchState(
        SCHEMA, patch_id, data["hfpatch_version"], data["applied_at"], data["distribution"], data["version"],
        data["dist_info"], Phase(data["phase"]), (change,), legacy=True,
    )  # fmt: skip
    patches = (patch_id,) if saved.phase is Phase.APPLIED else ()
    file_state = FileState(
        SCHEMA, target, data["distribution"], data["version"], data["dist_info"], data["before_sha256"],
        data["record_line_before"], patches, data["after_sha256"] if patches else data["before_sha256"],
        original_path=str(legacy_backup_path(root, patch_id)),
    )  # fmt: skip
    return saved, {target: file_state}


def _strings(data: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(data.get(key), str) for key in keys)


def _optional_strings(data: dict[str, Any], *keys: str) -> bool:
    return all(key in data and (data[key] is None or isinstance(data[key], str)) for key in keys)


def _digests(data: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(data.get(key), str) and _DIGEST.fullmatch(data[key]) for key in keys)


def _relative(file: object) -> bool:
    """Paths a tampered or mixed-up state could turn against the user are refused."""
    return isinstance(file, str) and bool(file) and ".." not in file.split("/") and not file.startswith("/")


def _record_line(line: object, file: str) -> bool:
    return line is None or (
        isinstance(line, str) and line.startswith(f"{file},") and not any(c in line for c in "\r\n")
    )


def load_original(root: Path, saved: FileState) -> bytes | None:
    path = Path(saved.original_path) if saved.original_path else original_path(root, saved.file)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise describe_os_error(error, path, "read") from None


def backup_of(root: Path, saved: FileState) -> Path:
    return Path(saved.original_path) if saved.original_path else original_path(root, saved.file)


# ------------------------------------------------------------------------------------------------- writing


def as_json(saved: PatchState) -> dict[str, Any]:
    """The patch's state as state.json holds it (and `--json` prints it)."""
    data = saved._asdict()
    del data["legacy"]
    return {**data, "phase": saved.phase.value, "files": [change._asdict() for change in saved.files]}


def file_as_json(saved: FileState) -> dict[str, Any]:
    data = saved._asdict()
    del data["original_path"]
    return {**data, "patches": list(saved.patches)}


def save(root: Path, saved: PatchState) -> None:
    make_directory(patch_dir(root, saved.patch))
    data = as_json(saved._replace(schema=SCHEMA))
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    parse(json.loads(text), state_path(root, saved.patch), saved.patch)  # never persist what could not be read back
    write_atomically(state_path(root, saved.patch), text.encode("utf-8"), mode=0o644)


def save_file(root: Path, saved: FileState) -> None:
    make_directory(file_dir(root, saved.file))
    data = file_as_json(saved._replace(schema=SCHEMA, original_path=None))
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    parse_file(json.loads(text), file_state_path(root, saved.file), saved.file)
    write_atomically(file_state_path(root, saved.file), text.encode("utf-8"), mode=0o644)


def save_original(root: Path, file: str, data: bytes) -> None:
    make_directory(file_dir(root, file))
    write_atomically(original_path(root, file), data, mode=0o644)


def discard(root: Path, patch_id: str) -> None:
    """Drop a patch's state first, then its directory (hfpatch 0.2 kept a backup there): a crash in between leaves
    a backup without a state, never the reverse."""
    _remove_state_dir(state_path(root, patch_id), patch_dir(root, patch_id))


def discard_file(root: Path, file: str) -> None:
    """Drop a file's state first, then its original."""
    _remove_state_dir(file_state_path(root, file), file_dir(root, file))
    # the emptied directories of the path, up to .hfpatch/files
    top = state_root(root) / "files"
    directory = file_dir(root, file).parent
    while directory != top and directory.is_relative_to(top):
        try:
            directory.rmdir()
        except OSError:
            break
        directory = directory.parent
    with contextlib.suppress(OSError):
        top.rmdir()


def _remove_state_dir(state_file: Path, directory: Path) -> None:
    try:
        with contextlib.suppress(FileNotFoundError):
            state_file.unlink()
        if directory.exists():
            import shutil  # tidying only: not on check's path

            shutil.rmtree(directory)
    except OSError as error:
        raise describe_os_error(error, directory, "remove") from None


def holds_only_the_lock(root: Path) -> bool:
    try:
        return [entry.name for entry in state_root(root).iterdir()] == ["lock"]
    except OSError:
        return False


def tidy(root: Path) -> None:
    """Once hfpatch keeps nothing in `root` but its lock, the lock goes too, with the .hfpatch directory: removed
    while held, so that a run waiting for it opens the path anew (files.locked). Where another run holds it, or
    it cannot be removed, it stays: that run tidies after itself, and an empty lock file harms nothing."""
    if not holds_only_the_lock(root):
        return
    with contextlib.suppress(HfpatchError), files.locked(lock_file(root), 0, waiting=lambda path: None):
        if holds_only_the_lock(root):
            files.remove_lock(lock_file(root))
