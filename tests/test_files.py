"""The disk edge in process: the atomic write, what an OS error means to the user, and the RECORD line edit."""

from __future__ import annotations

import errno
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hfpatch import files, wheelrecord
from hfpatch.errors import HfpatchError, NotWritable

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root: to own files as another user, and to become one")


# ------------------------------------------------------------------------------------------- write_atomically


def test_write_atomically_fsyncs_the_new_file_before_the_rename_and_the_directory_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "core.py"
    path.write_bytes(b"old\n")
    calls: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        info = os.fstat(descriptor)
        calls.append(("fsync directory" if stat.S_ISDIR(info.st_mode) else "fsync file", info.st_ino))
        real_fsync(descriptor)

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        calls.append(("rename onto " + os.fspath(target), Path(source).stat().st_ino))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    files.write_atomically(path, b"new\n")
    monkeypatch.undo()

    new = path.stat().st_ino
    assert calls == [("fsync file", new), (f"rename onto {path}", new), ("fsync directory", tmp_path.stat().st_ino)]
    assert path.read_bytes() == b"new\n"


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o644], ids=["0755", "0600", "0644"])
def test_write_atomically_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "core.py"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    files.write_atomically(path, b"new\n", mode=0o640)  # `mode` is for new files only
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == b"new\n"


@pytest.mark.parametrize(("given", "expected"), [(None, 0o644), (0o600, 0o600)], ids=["default", "given"])
def test_write_atomically_gives_a_new_file_the_mode_asked_for_whatever_the_umask(
    tmp_path: Path, given: int | None, expected: int
) -> None:
    previous = os.umask(0o077)
    try:
        files.write_atomically(tmp_path / "state.json", b"{}\n", mode=given)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == expected


def test_write_atomically_makes_a_new_inode_and_other_hard_links_keep_the_old_bytes(tmp_path: Path) -> None:
    path, cache = tmp_path / "core.py", tmp_path / "cache-entry"
    path.write_bytes(b"old\n")
    os.link(path, cache)  # what a uv or conda cache shares with the environment
    inode = path.stat().st_ino
    files.write_atomically(path, b"new\n")
    assert path.stat().st_ino != inode
    assert path.read_bytes() == b"new\n"
    assert cache.read_bytes() == b"old\n"
    assert cache.stat().st_nlink == 1


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_write_that_fails_midway_leaves_the_old_bytes_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "core.py"
    path.write_bytes(b"old\n")

    def fail(*args: object) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(HfpatchError, match=f"cannot write {path}: Input/output error"):
        files.write_atomically(path, b"new\n")
    monkeypatch.undo()
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["core.py"]
    assert path.read_bytes() == b"old\n"


# --------------------------------------------------------------------------------------------- describe_os_error


def test_a_read_only_filesystem_is_told_apart(tmp_path: Path) -> None:
    error = files.describe_os_error(OSError(errno.EROFS, "Read-only file system"), tmp_path / "core.py", "write")
    assert isinstance(error, NotWritable)
    assert str(error).startswith(f"cannot write {tmp_path / 'core.py'}: the filesystem is read-only. ")


@needs_root
@pytest.mark.parametrize("owner", [65534, 54321], ids=["a-user", "a-uid-without-a-name"])
def test_permission_denied_in_another_users_directory_names_the_owner(tmp_path: Path, owner: int) -> None:
    directory = tmp_path / "site-packages"
    directory.mkdir()
    os.chown(directory, owner, owner)
    error = files.describe_os_error(OSError(errno.EACCES, "Permission denied"), directory / "core.py", "write")
    try:
        name = pwd.getpwuid(owner).pw_name
    except KeyError:
        name = f"uid {owner}"
    assert isinstance(error, NotWritable)
    assert f"{directory} belongs to {name}, not root. Run hfpatch as {name}" in str(error)


# Run as an unprivileged user. The child drops to that user itself, after importing hfpatch: the interpreter may live
# where only root can read it (a pyenv under /root), so subprocess's user= could not even start it.
_WRITE_AS = """
import os, sys
from pathlib import Path
from hfpatch import files
from hfpatch.errors import HfpatchError

uid, gid = int(sys.argv[1]), int(sys.argv[2])
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
try:
    files.write_atomically(Path(sys.argv[3]), b"new")
except HfpatchError as error:
    print(error)
else:
    print("written")
"""


@pytest.fixture
def unprivileged() -> pwd.struct_passwd:
    if not ROOT:
        pytest.skip("needs root to become an unprivileged user")
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user named nobody")


@pytest.fixture
def shared_directory(unprivileged: pwd.struct_passwd) -> Iterator[Path]:
    """A directory that user may enter: pytest's tmp_path lies below one only root may."""
    base = Path(tempfile.mkdtemp(prefix="hfpatch-test-"))
    os.chown(base, unprivileged.pw_uid, unprivileged.pw_gid)
    try:
        yield base
    finally:
        shutil.rmtree(base)


def _write_as(user: pwd.struct_passwd, path: Path) -> str:
    command = [sys.executable, "-c", _WRITE_AS, str(user.pw_uid), str(user.pw_gid), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd="/", timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.strip()


def test_a_directory_read_only_for_its_own_owner_is_told_apart(
    unprivileged: pwd.struct_passwd, shared_directory: Path
) -> None:
    directory = shared_directory / "site-packages"
    directory.mkdir()
    os.chown(directory, unprivileged.pw_uid, unprivileged.pw_gid)
    directory.chmod(0o555)
    said = _write_as(unprivileged, directory / "core.py")
    name = unprivileged.pw_name
    assert said.startswith(f"cannot write {directory / 'core.py'}: {directory} is read-only for its owner ({name}). ")
    assert f"`chmod u+w {directory}`" in said
    assert list(directory.iterdir()) == []


def test_a_directory_of_another_user_is_told_apart_from_a_read_only_one(
    unprivileged: pwd.struct_passwd, shared_directory: Path
) -> None:
    directory = shared_directory / "site-packages"
    directory.mkdir(mode=0o755)  # root's, as the test runs as root
    said = _write_as(unprivileged, directory / "core.py")
    assert said.startswith(f"cannot write {directory / 'core.py'}: {directory} belongs to root, not ")
    assert list(directory.iterdir()) == []


def test_the_unprivileged_user_may_write_where_it_may(unprivileged: pwd.struct_passwd, shared_directory: Path) -> None:
    """The refusals above come from permissions, not from the way the child runs."""
    directory = shared_directory / "site-packages"
    directory.mkdir()
    os.chown(directory, unprivileged.pw_uid, unprivileged.pw_gid)
    assert _write_as(unprivileged, directory / "core.py") == "written"
    assert (directory / "core.py").read_bytes() == b"new"


# ---------------------------------------------------------------------------------------------- the RECORD line


NEW = "toypkg/core.py,sha256=NEW,9"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            b"toypkg/__init__.py,sha256=A,1\ntoypkg/core.py,sha256=OLD,3\nRECORD,,\n",
            b"toypkg/__init__.py,sha256=A,1\ntoypkg/core.py,sha256=NEW,9\nRECORD,,\n",
            id="LF",
        ),
        pytest.param(
            b"toypkg/__init__.py,sha256=A,1\r\ntoypkg/core.py,sha256=OLD,3\r\nRECORD,,\r\n",
            b"toypkg/__init__.py,sha256=A,1\r\ntoypkg/core.py,sha256=NEW,9\r\nRECORD,,\r\n",
            id="CRLF",
        ),
        pytest.param(
            b"a.py,sha256=A,1\r\ntoypkg/core.py,sha256=OLD,3\nRECORD,,\r\n",
            b"a.py,sha256=A,1\r\ntoypkg/core.py,sha256=NEW,9\nRECORD,,\r\n",
            id="mixed-endings-each-kept",
        ),
        pytest.param(
            b"a.py,sha256=A,1\ntoypkg/core.py,sha256=OLD,3",
            b"a.py,sha256=A,1\ntoypkg/core.py,sha256=NEW,9",
            id="last-line-without-an-ending",
        ),
        pytest.param(
            b"caf\xe9.py,sha256=A,1\ntoypkg/core.py,sha256=OLD,3\n\n",
            b"caf\xe9.py,sha256=A,1\ntoypkg/core.py,sha256=NEW,9\n\n",
            id="other-lines-byte-for-byte-even-not-utf-8",
        ),
        pytest.param(
            b"toypkg/core.py.orig,sha256=A,1\nx/toypkg/core.py,sha256=B,2\ntoypkg/core.py,sha256=OLD,3\n",
            b"toypkg/core.py.orig,sha256=A,1\nx/toypkg/core.py,sha256=B,2\ntoypkg/core.py,sha256=NEW,9\n",
            id="only-the-files-own-line",
        ),
        pytest.param(
            b"toypkg/core.py,sha256=OLD,3\r\nRECORD,,\r\n",
            b"toypkg/core.py,sha256=NEW,9\r\nRECORD,,\r\n",
            id="first-line",
        ),
        pytest.param(b"toypkg/core.py,sha256=OLD,3", b"toypkg/core.py,sha256=NEW,9", id="the-only-line"),
        pytest.param(
            b"a.py,sha256=A,1\rtoypkg/core.py,sha256=OLD,3\rRECORD,,\r",
            b"a.py,sha256=A,1\rtoypkg/core.py,sha256=NEW,9\rRECORD,,\r",
            id="CR",
        ),
        pytest.param(b"a.py,sha256=A,1\nRECORD,,\n", None, id="absent"),
        pytest.param(b"a.py,sha256=A,1\nxtoypkg/core.py,sha256=B,2\n", None, id="absent-but-a-suffix"),
    ],
)
def test_with_line_replaces_the_files_line_and_keeps_every_other_byte(record: bytes, expected: bytes | None) -> None:
    assert wheelrecord.with_line(record, "toypkg/core.py", NEW) == expected
    line = None if expected is None else "toypkg/core.py,sha256=OLD,3"
    assert wheelrecord.find_line(record, "toypkg/core.py") == line
    # The split check makes for an entry of many files finds what the search finds, and lists what it lists.
    listed = wheelrecord.listing(record)
    assert listed.get("toypkg/core.py") == line
    assert ("toypkg/core.py" in listed) is wheelrecord.lists(record, "toypkg/core.py")


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(b"a.py,sha256=A,1\na.py,sha256=B,2\n", id="the-first-of-two"),
        pytest.param(b"x/a.py,sha256=X,1\na.py.orig,sha256=O,1\na.py,,\n", id="not-a-prefix-nor-a-suffix"),
        pytest.param(b"a.py,sha256=\xff,1\n", id="not-utf-8"),
        pytest.param(b"a.py\n", id="no-comma"),
        pytest.param(b"x/a.py,,\r\na.py,sha256=A,1\r\na.py,sha256=B,2\r\n", id="CRLF-the-first-of-two"),
        pytest.param(b"a.py,sha256=A,1\r\nx/a.py,sha256=X,1\ra.py.orig,,\r\n", id="CRLF-and-a-CR"),
        pytest.param(b"a.py,sha256=A,1\r\nx/a.py,,\na.py.orig,,\r\n", id="CRLF-and-an-LF"),
        pytest.param(b"a.py,sha256=A,1\rx/a.py,,\r", id="CR"),
        pytest.param(b"", id="empty"),
    ],
)
def test_the_split_record_agrees_with_the_search_for_every_file(record: bytes) -> None:
    listed = wheelrecord.listing(record)
    for path in ("a.py", "x/a.py", "a.py.orig"):
        assert listed.get(path) == wheelrecord.find_line(record, path)
        assert (path in listed) is wheelrecord.lists(record, path)


def test_every_row_of_record_is_parsed_as_csv_and_checks_a_file_s_digest() -> None:
    data = b"x = 1\n"
    listed = wheelrecord.digest(data)
    text = f'a.py,{listed},6\r\n"b,c.py",sha256=X,1\n\nRECORD,,\nshort.py\n'
    assert list(wheelrecord.rows(text)) == [
        wheelrecord.Row("a.py", listed, "6"),
        wheelrecord.Row("b,c.py", "sha256=X", "1"),
        wheelrecord.Row("RECORD", "", ""),
        wheelrecord.Row("short.py", "", ""),
    ]
    assert wheelrecord.Row("a.py", listed, "6").matches(data)
    assert not wheelrecord.Row("a.py", listed, "6").matches(data + b"\n")
    assert wheelrecord.Row("RECORD", "", "").matches(b"anything")
    assert not wheelrecord.Row("a.py", "md5nope=AAAA", "6").matches(data), "an algorithm this Python lacks"
