"""Release versions: whether a text is one (PEP 440), and how two compare.

Telling a version from a typo needs only a regular expression, so an entry's versions are checked when it is loaded
without importing `packaging` on `check`'s path; comparing them needs `packaging`, imported only where a comparison
is made between versions that are not both simply spelt (`5.12.1`, `5.0.0rc3`: numbers and dots, perhaps a, b or rc
and a number, which compare as PEP 440 compares them, number by number with trailing zeros dropped, a pre-release
before its release: simple_key; a release known by digest never needs one).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.version import Version


@functools.cache
def _pep440() -> re.Pattern[str]:
    """PEP 440's public and local versions, in every spelling the specification accepts (case, separators, a
    leading v): compiled where a version is not simply spelt (a millisecond of every command's start, before)."""
    return re.compile(
        r"v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*"
        r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?"
        r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?"
        r"(?:[-_.]?dev[-_.]?[0-9]*)?"
        r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?",
        re.IGNORECASE,
    )


@functools.cache
def is_version(text: str) -> bool:
    # Cached: the releases an entry lists repeat across its forms and known files, and check loads every entry.
    # A simply spelt one (`4.57.6`, `5.0.0rc3`) needs no look at the whole grammar, compiled only for another.
    return simple_key(text) is not None or _pep440().fullmatch(text) is not None


_SIMPLE = re.compile(r"([0-9]+(?:\.[0-9]+)*)(?:(a|b|rc)([0-9]+))?")
_PRE = {"a": 0, "b": 1, "rc": 2}
_FINAL = (3, 0)


@functools.cache
def simple_key(text: str | None) -> tuple[tuple[int, ...], tuple[int, int]] | None:
    """How PEP 440 orders a release or pre-release spelt canonically (`4.57.6`, `5.0.0rc3`: no epoch, post, dev or
    local part), as a tuple: its numbers, trailing zeros dropped (1.0 == 1.0.0 == 1), then a < b < rc < the final
    release. None for any other text (packaging's to order)."""
    match = None if text is None else _SIMPLE.fullmatch(text)
    if match is None:
        return None
    numbers = [int(part) for part in match[1].split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers), _FINAL if match[2] is None else (_PRE[match[2]], int(match[3]))


def parse(text: str | None) -> Version | None:
    """The parsed version, or None where it is unknown or not PEP 440 (the code alone decides then)."""
    from packaging.version import InvalidVersion, Version

    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _known(text: str) -> Version:
    parsed = parse(text)
    # An entry's versions are checked when it is loaded; an unparsable one here is a bug, not the user's input.
    assert parsed is not None, f"{text!r} is not a version"
    return parsed


def is_final_at_least(version: str | None, floor: str) -> bool:
    """`version` is a final release (no pre- or dev release) at or after `floor`."""
    key, floor_key = simple_key(version), simple_key(floor)
    if key is not None and floor_key is not None:
        return key[1] == _FINAL and key >= floor_key
    parsed = parse(version)
    return parsed is not None and not parsed.is_prerelease and parsed >= _known(floor)


def is_at_least(version: str | None, floor: str) -> bool:
    key, floor_key = simple_key(version), simple_key(floor)
    if key is not None and floor_key is not None:
        return key >= floor_key
    parsed = parse(version)
    return parsed is not None and parsed >= _known(floor)


def is_older(version: str | None, floor: str) -> bool:
    key, floor_key = simple_key(version), simple_key(floor)
    if key is not None and floor_key is not None:
        return key < floor_key
    parsed = parse(version)
    return parsed is not None and parsed < _known(floor)
