"""hfpatch's state (what it did to an environment) and the byte-exact backup, kept beside the package.

Layout, in the directory that holds the patched package (site-packages):

    .hfpatch/lock                      the environment's lock
    .hfpatch/<patch id>/state.json     the state (versioned)
    .hfpatch/<patch id>/original       the file's bytes before apply

"RECORD" always means the distribution's own RECORD file; hfpatch's file is "the state".
"""

from __future__ import annotations

import contextlib
import enum
import json
import re
import shutil
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch.errors import StateError
from hfpatch.files import describe_os_error, make_directory, write_atomically

SCHEMA = 1
STATE_DIR = ".hfpatch"


class Phase(enum.Enum):
    """Where apply or revert got to: written to the state before the file, so a killed run can be finished."""

    APPLYING = "applying"
    APPLIED = "applied"
    REVERTING = "reverting"


class State(NamedTuple):
    schema: int
    patch: str
    hfpatch_version: str
    applied_at: str
    distribution: str
    version: str | None
    dist_info: str | None
    target: str
    before_sha256: str
    after_sha256: str
    # The distribution's RECORD line of the file before apply, restored by revert; None when RECORD does not list it.
    record_line_before: str | None
    # APPLYING until every step of apply is done, REVERTING once revert has begun, else APPLIED.
    phase: Phase


def state_root(root: Path) -> Path:
    return root / STATE_DIR


def lock_file(root: Path) -> Path:
    return state_root(root) / "lock"


def patch_dir(root: Path, patch_id: str) -> Path:
    return state_root(root) / patch_id


def backup_path(root: Path, patch_id: str) -> Path:
    return patch_dir(root, patch_id) / "original"


def state_path(root: Path, patch_id: str) -> Path:
    return patch_dir(root, patch_id) / "state.json"


def load(root: Path, patch_id: str) -> State | None:
    path = state_path(root, patch_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise StateError(f"cannot read hfpatch's state {path}: {error}.") from None
    return parse(text, path, patch_id)


def parse(text: str, path: Path, patch_id: str) -> State:
    corrupt = StateError(
        f"hfpatch's state {path} is corrupt; nothing was changed. Check the file against its backup, "
        f"then remove {path.parent} by hand."
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise corrupt from None
    if not isinstance(data, dict) or not isinstance(data.get("schema"), int):
        raise corrupt
    if data["schema"] > SCHEMA:
        raise StateError(
            f"hfpatch's state {path} was written by a newer hfpatch ({data.get('hfpatch_version', 'unknown')}, "
            f"state schema {data['schema']}); upgrade hfpatch to act on this environment."
        )
    names = set(State._fields)
    if set(data) != names or not _well_typed(data) or not _consistent(data, patch_id):
        raise corrupt
    return State(**{**data, "phase": Phase(data["phase"])})


def _consistent(data: dict[str, Any], patch_id: str) -> bool:
    """Values a tampered or mixed-up record could turn against the user: its paths and the RECORD line it restores."""
    digest = re.compile(r"[0-9a-f]{64}")
    line = data["record_line_before"]
    target = data["target"]
    return (
        data["patch"] == patch_id
        and bool(digest.fullmatch(data["before_sha256"]))
        and bool(digest.fullmatch(data["after_sha256"]))
        and ".." not in target.split("/")
        and not target.startswith("/")
        and (line is None or (line.startswith(f"{target},") and not any(c in line for c in "\r\n")))
    )


def _well_typed(data: dict[str, Any]) -> bool:
    strings = (
        "patch",
        "hfpatch_version",
        "applied_at",
        "distribution",
        "target",
        "before_sha256",
        "after_sha256",
    )
    optional = ("version", "dist_info", "record_line_before")
    return (
        all(isinstance(data[key], str) for key in strings)
        and all(data[key] is None or isinstance(data[key], str) for key in optional)
        and data["phase"] in {phase.value for phase in Phase}
    )


def as_json(saved: State) -> dict[str, Any]:
    """The state as state.json holds it (and `--json` prints it)."""
    return {**saved._asdict(), "phase": saved.phase.value}


def save(root: Path, saved: State) -> None:
    make_directory(patch_dir(root, saved.patch))

    text = json.dumps(as_json(saved), indent=2, sort_keys=True) + "\n"
    parse(text, state_path(root, saved.patch), saved.patch)  # never persist what could not be read back
    write_atomically(state_path(root, saved.patch), text.encode("utf-8"), mode=0o644)


def save_backup(root: Path, patch_id: str, data: bytes) -> None:
    make_directory(patch_dir(root, patch_id))
    write_atomically(backup_path(root, patch_id), data, mode=0o644)


def load_backup(root: Path, patch_id: str) -> bytes | None:
    try:
        return backup_path(root, patch_id).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise describe_os_error(error, backup_path(root, patch_id), "read") from None


def discard(root: Path, patch_id: str) -> None:
    """Drop the state first, then the backup: a crash in between leaves a backup without a state, never the
    reverse."""
    directory = patch_dir(root, patch_id)
    try:
        with contextlib.suppress(FileNotFoundError):
            state_path(root, patch_id).unlink()
        if directory.exists():
            shutil.rmtree(directory)
    except OSError as error:
        raise describe_os_error(error, directory, "remove") from None
