"""The distribution's RECORD file (the wheel's list of installed files and their hashes): the one home of the format.

Two ways in: the line of one file, found by searching (`check` and `apply`, on every start), and every row parsed
(`hfpatch new`, which reads a wheel's or an edited distribution's whole list).
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

_URLSAFE = bytes.maketrans(b"+/", b"-_")


def digest(data: bytes, algorithm: str = "sha256") -> str:
    """`data`'s digest as RECORD writes it (`sha256=<urlsafe base64, no padding>`); "" for an algorithm this Python
    lacks, which leaves nothing to compare with."""
    try:
        raw = hashlib.new(algorithm, data).digest()
    except ValueError:
        return ""
    return _written(algorithm, raw)


def _written(algorithm: str, raw: bytes) -> str:
    # base64.urlsafe_b64encode, without importing base64 (and struct) on check's path
    encoded = binascii.b2a_base64(raw, newline=False).translate(_URLSAFE).rstrip(b"=")
    return f"{algorithm}={encoded.decode('ascii')}"


def describes(line: str, sha256: str) -> bool:
    """Whether a RECORD line's hash is the sha256 given in hex (as hfpatch's state keeps digests)."""
    parts = line.rsplit(",", 2)
    return len(parts) == 3 and parts[1] == _written("sha256", bytes.fromhex(sha256))


def line_for(relative_file: str, data: bytes) -> str:
    """The RECORD line that describes `data` installed at `relative_file` (no line ending)."""
    return f"{relative_file},{digest(data)},{len(data)}"


def find_line(record: bytes, relative_file: str) -> str | None:
    """The line for `relative_file` (without its line ending), or None where RECORD does not list it."""
    span = _line_span(record, relative_file)
    try:
        return None if span is None else record[span[0] : span[1]].decode("utf-8")
    except UnicodeDecodeError:
        return None


def lists(record: bytes, relative_file: str) -> bool:
    """Whether RECORD has a line for `relative_file` (whatever that line holds)."""
    return _line_span(record, relative_file) is not None


def listing(record: bytes) -> dict[str, str | None]:
    """Every line of RECORD by the path it starts with (the text before its first comma), as find_line finds it:
    the first such line, None where it is not UTF-8. One split where many files are looked up (a removed file's
    entry names hundreds); a path that holds a comma is find_line's to find."""
    try:
        text = record.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    # LF alone, or CRLF alone (pip writes RECORD with CRLF), ends every line: one decode, one split.
    crlf = "\r" in text
    split = text.split("\r\n" if crlf else "\n")
    if text and (not crlf or text.count("\r") == len(split) - 1 == text.count("\n")):
        listed: dict[str, str | None] = {}
        for row in split:
            name, separator, _ = row.partition(",")
            if separator and name not in listed:  # the first line of a path wins
                listed[name] = row
        return listed
    found: dict[str, str | None] = {}
    for line in record.splitlines():  # LF, CRLF and CR, as _line_span ends a line
        path, comma, _ = line.partition(b",")
        if not comma:
            continue
        try:
            key = path.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if key not in found:
            try:
                found[key] = line.decode("utf-8")
            except UnicodeDecodeError:
                found[key] = None
    return found


def read_line(record: Path, relative_file: str) -> str | None:
    try:
        return find_line(record.read_bytes(), relative_file)
    except OSError:
        return None


def with_line(record: bytes, relative_file: str, new_line: str) -> bytes | None:
    """RECORD with the line of `relative_file` replaced, every other byte kept (CRLF stays CRLF); None if absent."""
    span = _line_span(record, relative_file)
    return None if span is None else record[: span[0]] + new_line.encode("utf-8") + record[span[1] :]


def with_line_added(record: bytes, new_line: str) -> bytes:
    """RECORD with a line for a file it does not list, where pip puts it (its rows are sorted by path), in RECORD's
    own line ending; every other byte kept, so that without_line gives the same bytes back."""
    newline = b"\r\n" if b"\r\n" in record else b"\n"
    path = new_line.partition(",")[0].encode("utf-8")
    added = new_line.encode("utf-8")
    offset = 0
    for line in record.splitlines(keepends=True):
        if line.partition(b",")[0] > path:
            return record[:offset] + added + newline + record[offset:]
        offset += len(line)
    if record and not record.endswith((b"\n", b"\r")):
        return record + newline + added
    return record + added + newline


def without_line(record: bytes, relative_file: str) -> bytes | None:
    """RECORD without the line of `relative_file` and its line ending (the last line: the one before it), every
    other byte kept; None where RECORD does not list it."""
    span = _line_span(record, relative_file)
    if span is None:
        return None
    start, end = span
    ending = record[end : end + 2] if record[end : end + 2] == b"\r\n" else record[end : end + 1]
    if ending:
        return record[:start] + record[end + len(ending) :]
    before = 2 if record[:start].endswith(b"\r\n") else 1 if start else 0
    return record[: start - before] + record[end:]


def _line_span(record: bytes, relative_file: str) -> tuple[int, int] | None:
    """Where the file's line starts and ends (before its line ending: LF, CRLF or CR). Found by searching, not by
    splitting: a large distribution's RECORD has thousands of lines, and check reads it for every patch."""
    prefix = f"{relative_file},".encode()
    start = record.find(prefix)
    while start > 0 and record[start - 1] not in b"\r\n":  # only where a line starts: not x/<file>, not <file>.orig
        start = record.find(prefix, start + 1)
    if start < 0:
        return None
    end = record.find(b"\n", start)
    end = len(record) if end < 0 else end
    carriage_return = record.find(b"\r", start, end)
    return start, end if carriage_return < 0 else carriage_return


class Row(NamedTuple):  # not a dataclass: dataclasses imports inspect (ast, dis, tokenize), on check's path
    """One row of RECORD: a file's path, its digest as written (`sha256=...`, "" where none is listed) and size."""

    path: str
    digest: str
    size: str

    def matches(self, data: bytes) -> bool:
        """Whether `data` has the digest the row lists; True where it lists none (RECORD's own row, .pyc files)."""
        return not self.digest or digest(data, self.digest.partition("=")[0]) == self.digest


def rows(text: str) -> Iterator[Row]:
    """Every row of RECORD, parsed as the CSV it is (a path with a comma is quoted); short rows are padded, blank
    lines skipped."""
    import csv  # not on check's path, which searches for one line

    for fields in csv.reader(text.splitlines()):
        if fields and fields[0]:
            path, found, size = (*fields, "", "")[:3]
            yield Row(path, found, size)
