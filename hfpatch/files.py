"""The disk edge: atomic replacement, the environment lock, ownership, and what an OS error means to the user.

Everything hfpatch creates belongs to the owner and group of the directory it is created in, whoever runs it: root
in a Dockerfile patching its own tree keeps root's files, sudo on a user's venv leaves files that user can remove.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from hfpatch.errors import HfpatchError, LockTimeout, NotWritable


def describe_os_error(error: OSError, path: Path, doing: str) -> HfpatchError:
    """A sentence that tells a read-only filesystem, a directory owned by someone else, and other denials apart."""
    if error.errno == errno.EROFS:
        return NotWritable(
            f"cannot {doing} {path}: the filesystem is read-only. Patch (or revert) where the environment is "
            "built, in the image build, not in the running container."
        )
    if error.errno not in (errno.EACCES, errno.EPERM):
        return HfpatchError(f"cannot {doing} {path}: {error.strerror or error}.")
    directory = path if path.is_dir() else path.parent
    user = _user_name(os.geteuid())
    try:
        owner_id = directory.stat().st_uid
    except OSError:
        return NotWritable(f"cannot {doing} {path}: permission denied for {user}.")
    if owner_id != os.geteuid():
        owner = _user_name(owner_id)
        return NotWritable(
            f"cannot {doing} {path}: {directory} belongs to {owner}, not {user}. Run hfpatch as {owner} (or with sudo)."
        )
    if not os.access(directory, os.W_OK):
        return NotWritable(
            f"cannot {doing} {path}: {directory} is read-only for its owner ({user}). Make it writable "
            f"(`chmod u+w {directory}`) or patch where the environment is built."
        )
    return NotWritable(
        f"cannot {doing} {path}: permission denied although {user} owns {directory} and may write it "
        "(a file attribute, an ACL or a security policy forbids it)."
    )


def _user_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def take_owner_of_directory(path: Path) -> None:
    """Give a file or directory hfpatch just created the owner and group of the directory that holds it."""
    if os.geteuid() != 0:
        return  # only root creates files for others; anyone else's files are already the caller's own
    try:
        parent = path.parent.stat()
        if path.lstat().st_uid != parent.st_uid or path.lstat().st_gid != parent.st_gid:
            os.chown(path, parent.st_uid, parent.st_gid, follow_symlinks=False)
    except OSError as error:
        raise describe_os_error(error, path, "set the owner of") from None


def make_directory(directory: Path) -> None:
    """mkdir -p, each new directory owned like its parent."""
    missing = []
    probe = directory
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=0o755, exist_ok=True)
        except OSError as error:
            raise describe_os_error(error, new, "create") from None
        take_owner_of_directory(new)


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` so that readers see the old bytes or the new, never a mix.

    The new file is a new inode: other hard links to the old file (a uv or conda cache) keep their bytes. It keeps
    the old file's mode and owner; a new file takes `mode` (default 0644) and the directory's owner.
    """
    try:
        old = path.stat() if path.exists() else None
        # A unique name: a temporary file left by a killed run never blocks this one.
        temporary = path.with_name(f".{path.name}.hfpatch-{os.urandom(6).hex()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), old.st_mode & 0o7777 if old else (0o644 if mode is None else mode))
                owner = old if old is not None else path.parent.stat()
                if os.geteuid() == 0:
                    os.fchown(handle.fileno(), owner.st_uid, owner.st_gid)
                os.fsync(handle.fileno())
            os.replace(temporary, path)  # noqa: PTH105 - the rename itself, spelt as the atomic write's steps are
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


def reader_gone(stream: TextIO) -> None:
    """After a BrokenPipeError (`hfpatch list | head`): what is still buffered goes to /dev/null, so the interpreter's
    last flush raises nothing and the exit code of the work done still holds."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise describe_os_error(error, path, "read") from None


def remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        raise describe_os_error(error, path, "remove") from None


def _say_waiting(lock_file: Path) -> None:
    print(f"hfpatch: waiting for another hfpatch run to release {lock_file}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def locked(lock_file: Path, timeout: float, waiting: Callable[[Path], None] = _say_waiting) -> Iterator[None]:
    """Hold the environment's lock, exclusively. The kernel drops it when a holder dies: a killed run never blocks.

    Only writers take it: check and verify read files that are only ever replaced atomically. The lock file may be
    removed (remove_lock, by its holder): a run that then gets the lock of a file no longer at the path opens the
    path again, so that two runs never hold two files of one path.
    """
    deadline = time.monotonic() + timeout
    said = False
    while True:
        descriptor = _open_lock(lock_file)
        try:
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not said:
                        waiting(lock_file)
                        said = True
                    if time.monotonic() >= deadline:
                        raise LockTimeout(
                            f"another hfpatch run holds {lock_file} for more than {timeout:.0f} s; try again later."
                        ) from None
                    time.sleep(0.05)
            if _still_at(descriptor, lock_file):
                take_owner_of_directory(lock_file)
                yield
                return
        finally:
            os.close(descriptor)


def _open_lock(lock_file: Path) -> int:
    for _ in range(100):  # its directory may be removed in between by a holder that removes the lock
        make_directory(lock_file.parent)
        try:
            return os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise describe_os_error(error, lock_file, "lock") from None
    raise describe_os_error(FileNotFoundError(errno.ENOENT, "its directory keeps being removed"), lock_file, "lock")


def _still_at(descriptor: int, lock_file: Path) -> bool:
    """The file locked is still the one at the path (not removed, nor replaced, while this run waited)."""
    held = os.fstat(descriptor)
    try:
        now = lock_file.stat()
    except FileNotFoundError:
        return False
    except OSError as error:
        raise describe_os_error(error, lock_file, "lock") from None
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def remove_lock(lock_file: Path) -> None:
    """Remove the lock file, and its directory where that is empty; only while holding the lock (see locked)."""
    remove(lock_file)
    with contextlib.suppress(OSError):  # another run may have opened the path anew in it already
        lock_file.parent.rmdir()
