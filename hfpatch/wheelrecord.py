"""The distribution's RECORD file (the wheel's list of installed files and their hashes): its line for one file."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path


def digest(data: bytes, algorithm: str = "sha256") -> str:
    """`data`'s digest as RECORD writes it (`sha256=<urlsafe base64, no padding>`); "" for an algorithm this Python
    lacks, which leaves nothing to compare with."""
    try:
        raw = hashlib.new(algorithm, data).digest()
    except ValueError:
        return ""
    return f"{algorithm}={base64.urlsafe_b64encode(raw).rstrip(b'=').decode('ascii')}"


def line_for(relative_file: str, data: bytes) -> str:
    """The RECORD line that describes `data` installed at `relative_file` (no line ending)."""
    return f"{relative_file},{digest(data)},{len(data)}"


def find_line(record: bytes, relative_file: str) -> str | None:
    """The line for `relative_file` (without its line ending), or None where RECORD does not list it."""
    try:
        text = record.decode("utf-8")
    except UnicodeDecodeError:
        return None
    prefix = f"{relative_file},"
    return next((line for line in text.splitlines() if line.startswith(prefix)), None)


def read_line(record: Path, relative_file: str) -> str | None:
    try:
        return find_line(record.read_bytes(), relative_file)
    except OSError:
        return None


def with_line(record: bytes, relative_file: str, new_line: str) -> bytes | None:
    """RECORD with the line of `relative_file` replaced, every other byte kept (CRLF stays CRLF); None if absent."""
    prefix = f"{relative_file},".encode()
    lines = record.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(prefix):
            ending = line[len(line.rstrip(b"\r\n")) :]
            lines[index] = new_line.encode("utf-8") + ending
            return b"".join(lines)
    return None
