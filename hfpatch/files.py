"""The disk edge: atomic replacement, the environment lock, bytecode, and RECORD lines."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hfpatch.errors import HfpatchError, LockTimeout, ReadOnlyTarget

_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def describe_os_error(error: OSError, path: Path, doing: str) -> HfpatchError:
    if error.errno == errno.EROFS:
        return ReadOnlyTarget(
            f"cannot {doing} {path}: the filesystem is read-only. Patch (or revert) where the environment is "
            "built, in the image build, not in the running container."
        )
    if error.errno in _READ_ONLY:
        return ReadOnlyTarget(f"cannot {doing} {path}: permission denied. Run hfpatch as the environment's owner.")
    return HfpatchError(f"cannot {doing} {path}: {error.strerror or error}.")


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` so that readers see the old bytes or the new, never a mix.

    The new file is a new inode: other hard links to the old file (a uv or conda cache) keep their bytes.
    """
    import tempfile

    try:
        old = path.stat() if path.exists() else None
        # A unique name: a temporary file left by a killed run (whose PID may come again) never blocks this one.
        descriptor, temporary_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.hfpatch-", suffix=".tmp")
        temporary = Path(temporary_name)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), mode if mode is not None else (old.st_mode & 0o7777 if old else 0o644))
                if old is not None and os.geteuid() == 0:
                    os.fchown(handle.fileno(), old.st_uid, old.st_gid)
                os.fsync(handle.fileno())
            temporary.replace(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
    except OSError as error:
        raise describe_os_error(error, path, "write") from None
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename durable. Some filesystems (FUSE, network mounts) cannot fsync a directory: the rename has
    happened all the same, so that is no failure of the write."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise describe_os_error(error, path, "read") from None


@contextlib.contextmanager
def locked(lock_file: Path, timeout: float) -> Iterator[None]:
    """Hold the environment's lock, exclusively. The kernel drops it when a holder dies: a killed run never blocks.

    Only writers take it: check and verify read files that are only ever replaced atomically.
    """
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise describe_os_error(error, lock_file, "lock") from None
    try:
        flags = fcntl.LOCK_EX | fcntl.LOCK_NB
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, flags)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"another hfpatch run holds {lock_file} for more than {timeout:.0f} s; try again later."
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(descriptor)


def record_hash(data: bytes) -> str:
    import base64

    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def record_line_for(relative_file: str, data: bytes) -> str:
    return f"{relative_file},{record_hash(data)},{len(data)}"


def replace_record_line(record: bytes, relative_file: str, new_line: str) -> bytes | None:
    """RECORD with the line of `relative_file` replaced, every other byte kept; None if it has no such line."""
    prefix = f"{relative_file},".encode()
    lines = record.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(prefix):
            ending = line[len(line.rstrip(b"\r\n")) :]
            lines[index] = new_line.encode("utf-8") + ending
            return b"".join(lines)
    return None


@dataclass(frozen=True)
class CachedBytecode:
    path: Path
    cache_tag: str
    optimize: int


def bytecode_files(source: Path) -> list[CachedBytecode]:
    """Every cached .pyc of `source` (module.cache_tag[.opt-N].pyc): all interpreters, all optimisation levels."""
    import re

    pattern = re.compile(rf"{re.escape(source.stem)}\.([^.]+)(?:\.opt-([0-9]+))?\.pyc")
    found = []
    try:
        for path in sorted((source.parent / "__pycache__").iterdir()):
            match = pattern.fullmatch(path.name)
            if match:
                found.append(CachedBytecode(path, match[1], int(match[2] or 0)))
    except OSError:
        return []
    return found


def bytecode_mode(pyc: Path) -> str | None:
    """TIMESTAMP, CHECKED_HASH or UNCHECKED_HASH, read from the .pyc header (PEP 552); None if unreadable."""
    try:
        with pyc.open("rb") as handle:
            header = handle.read(8)
    except OSError:
        return None
    if len(header) < 8:
        return None
    flags = int.from_bytes(header[4:8], "little")
    if flags == 0:
        return "TIMESTAMP"
    return "CHECKED_HASH" if flags & 0b10 else "UNCHECKED_HASH"
