"""Real wheels of a made-up distribution, `madeup`, whose releases have every case `hfpatch new` must tell apart.

    madeup/core.py     total(items) fails on None until 2.0, whose fix calls a new helper, _clean:
                         0.7, 0.8  no total (0.8 is where the walk back stops; 0.7 is never read by default)
                         0.9       total(items, start, strict=False): another signature
                         1.0, 1.1  form A (1.1's file differs elsewhere: its docstring)
                         1.2       form B; patched with _clean inserted, it is the 2.0 file byte for byte
                         2.0       the fix (and 2.0.1, the same file); 2.1 the fix in a file that differs elsewhere
                         2.2rc1    a pre-release that rewrote total again
    madeup/basket.py   Basket.add ignores the limit until 2.0, whose fix reads self.limit:
                         0.9       a Basket that has no limit; 1.0 to 1.2 the buggy add; 2.0 on the fix
                         0.7, 0.8  no basket.py

Each wheel is a zip with madeup-<v>.dist-info/{METADATA,WHEEL,RECORD} and RECORD digests, as pip builds them.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path

from support import record_line

NAME = "madeup"
CORE = "madeup/core.py"
BASKET = "madeup/basket.py"

_HEAD = '"""madeup.core: sums of things."""\n\nDEFAULT = 0\n\n\n'
_HEAD_11 = '"""madeup.core: sums of things, and counts."""\n\nDEFAULT = 0\n\n\n'
_HEAD_21 = '"""madeup.core: sums of things (2.1)."""\n\nDEFAULT = 0\n\n\n'

COUNT = "def count(items):\n    return len(items)\n"
TOTAL_OTHER_SIGNATURE = (
    "def total(items, start, strict=False):\n"
    "    result = start\n"
    "    for item in items:\n"
    "        result += item\n"
    "    return result\n"
)
TOTAL_A = "def total(items):\n    result = DEFAULT\n    for item in items:\n        result += item\n    return result\n"
TOTAL_B = 'def total(items):\n    """Add the items up."""\n    return sum(items, DEFAULT)\n'
CLEAN = "def _clean(items):\n    return [item for item in items if item is not None]\n"
TOTAL_FIX = (
    'def total(items):\n    """Add the items up; None counts as nothing."""\n    return sum(_clean(items), DEFAULT)\n'
)
TOTAL_RC = 'def total(items):\n    """Add the items up, skipping None."""\n    return sum(_clean(items), DEFAULT) + 0\n'
MEAN = "def mean(items):\n    return total(items) / max(1, count(items))\n"


def _join(*parts: str) -> str:
    return "\n\n".join(parts)


CORE_TEXTS = {
    "0.7": _HEAD + "VERSION = (0, 7)\n",
    "0.8": _HEAD + COUNT,
    "0.9": _HEAD + _join(TOTAL_OTHER_SIGNATURE, COUNT),
    "1.0": _HEAD + _join(TOTAL_A, COUNT),
    "1.1": _HEAD_11 + _join(TOTAL_A, COUNT),
    "1.2": _HEAD + _join(TOTAL_B, COUNT),
    "2.0": _HEAD + _join(CLEAN, TOTAL_FIX, COUNT),
    "2.0.1": _HEAD + _join(CLEAN, TOTAL_FIX, COUNT),
    "2.1": _HEAD_21 + _join(CLEAN, TOTAL_FIX, COUNT, MEAN),
    "2.2rc1": _HEAD + _join(CLEAN, TOTAL_RC, COUNT),
}

_BASKET_HEAD = '"""madeup.basket: a basket that holds a few things."""\n\n\n'
ADD_NO_LIMIT = "    def add(self, item):\n        self.items = [*self.items, item]\n"
ADD_BUGGY = "    def add(self, item):\n        self.items.append(item)\n"
ADD_FIX = (
    "    def add(self, item):\n"
    "        if len(self.items) >= self.limit:\n"
    '            raise OverflowError("the basket is full")\n'
    "        self.items.append(item)\n"
)
_BASKET_NO_LIMIT = "class Basket:\n    def __init__(self):\n        self.items = []\n\n"
_BASKET_LIMIT = (
    "class Basket:\n    def __init__(self, limit=3):\n        self.items = []\n        self.limit = limit\n\n"
)

BASKET_TEXTS = {
    "0.9": _BASKET_HEAD + _BASKET_NO_LIMIT + ADD_NO_LIMIT,
    **{release: _BASKET_HEAD + _BASKET_LIMIT + ADD_BUGGY for release in ("1.0", "1.1", "1.2")},
    **{release: _BASKET_HEAD + _BASKET_LIMIT + ADD_FIX for release in ("2.0", "2.0.1", "2.1", "2.2rc1")},
}

RELEASES = tuple(CORE_TEXTS)


def release_files(version: str) -> dict[str, bytes]:
    files = {"madeup/__init__.py": f'"""madeup."""\n\n__version__ = "{version}"\n'.encode()}
    files[CORE] = CORE_TEXTS[version].encode("utf-8")
    if version in BASKET_TEXTS:
        files[BASKET] = BASKET_TEXTS[version].encode("utf-8")
    return files


def write_wheel(
    directory: Path,
    version: str,
    files: Mapping[str, bytes],
    *,
    name: str = NAME,
    record: Mapping[str, bytes] | None = None,
    metadata_name: str | None = None,
    tag: str = "py3-none-any",
    compression: int = zipfile.ZIP_STORED,
) -> Path:
    """A wheel holding `files`, named as the wheel spec says: `name` is the distribution's name as the file name and
    the .dist-info spell it, `metadata_name` (default: `name`) as METADATA does; `record` (default: `files`) is what
    its RECORD lists digests of; `compression` is every member's (zipfile.ZIP_DEFLATED is how most wheels are built)."""
    dist_info = f"{name}-{version}.dist-info"
    metadata_text = f"Metadata-Version: 2.1\nName: {metadata_name or name}\nVersion: {version}\n\n"
    wheel_text = f"Wheel-Version: 1.0\nGenerator: wheelfactory\nRoot-Is-Purelib: true\nTag: {tag}\n"
    metadata = {f"{dist_info}/METADATA": metadata_text.encode(), f"{dist_info}/WHEEL": wheel_text.encode()}
    listed = {**(files if record is None else record), **metadata}
    rows = [record_line(path, data) for path, data in listed.items()]
    rows.append(f"{dist_info}/RECORD,,")
    path = directory / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for member, data in {**files, **metadata}.items():
            archive.writestr(member, data)
        archive.writestr(f"{dist_info}/RECORD", "\n".join(rows) + "\n")
    return path


def build(directory: Path, releases: tuple[str, ...] = RELEASES) -> dict[str, Path]:
    """Every release's wheel in `directory` (a --find-links directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    return {version: write_wheel(directory, version, release_files(version)) for version in releases}


def damage(path: Path, member: str) -> None:
    """Damage a member's data in place, as a bad download does, so that reading it fails however it is compressed:
    stored, its CRC no longer matches; deflated, its first block has an invalid type (zlib.error); bzip2, its stream
    header is gone; lzma, its properties are invalid."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    # The local header is 30 bytes plus the name and the extra field; the data follows.
    name_length = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    if info.compress_type == zipfile.ZIP_STORED:
        data[start] ^= 0x01
    else:  # zip's lzma data starts with its version and the size of its properties (4 bytes), which it ignores
        data[start + (4 if info.compress_type == zipfile.ZIP_LZMA else 0)] = 0xFF
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------- a distribution whose name needs normalising

# `Made_Up.Hub`, as huggingface_hub is: its wheels and .dist-info spell it made_up_hub, its METADATA Made-Up.Hub, and
# a user may type any of the three (or another spelling the packaging spec calls the same name) in --target.
HUB = "Made_Up.Hub"
HUB_WHEEL_NAME = "made_up_hub"
HUB_METADATA_NAME = "Made-Up.Hub"
HUB_CORE = "made_up_hub/core.py"
HUB_EXTRA = "made_up_hub/extra.py"

# first() fails on an empty list until 2.0 (1.0.1 has the fix backported); strip() fails on None until 3.0, and 2.0
# gave it another signature (not applicable to 3.0's fix).
FIRST_BUG = "def first(items):\n    return items[0]\n"
FIRST_FIX = "def first(items):\n    return items[0] if items else None\n"
STRIP_BUG = "def strip(text):\n    return text.strip()\n"
STRIP_WIDE = "def strip(text, chars=None):\n    return text.strip(chars)\n"
STRIP_FIX = 'def strip(text):\n    return (text or "").strip()\n'

_HUB_HEAD = '"""made_up_hub.{}: helpers."""\n\n\n'
HUB_TEXTS = {
    # release: (core.py, extra.py)
    "0.9": (_HUB_HEAD.format("core") + "LIMIT = 3\n", _HUB_HEAD.format("extra") + "NAME = 'x'\n"),
    "1.0": (_HUB_HEAD.format("core") + FIRST_BUG, _HUB_HEAD.format("extra") + STRIP_BUG),
    "1.0.1": (_HUB_HEAD.format("core") + FIRST_FIX, _HUB_HEAD.format("extra") + STRIP_BUG),
    "2.0": (_HUB_HEAD.format("core") + FIRST_FIX, _HUB_HEAD.format("extra") + STRIP_WIDE),
    "3.0": (_HUB_HEAD.format("core") + FIRST_FIX, _HUB_HEAD.format("extra") + STRIP_FIX),
}


def hub_files(version: str) -> dict[str, bytes]:
    core, extra = HUB_TEXTS[version]
    return {"made_up_hub/__init__.py": b"", HUB_CORE: core.encode(), HUB_EXTRA: extra.encode()}


def build_hub(directory: Path) -> dict[str, Path]:
    """Every release of Made_Up.Hub, deflated as most wheels are, in `directory` (a --find-links directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    return {
        version: write_wheel(
            directory,
            version,
            hub_files(version),
            name=HUB_WHEEL_NAME,
            metadata_name=HUB_METADATA_NAME,
            compression=zipfile.ZIP_DEFLATED,
        )
        for version in HUB_TEXTS
    }


def version_of(wheel: Path) -> str:
    """The release a wheel of this factory holds, from its file name (name-version-tag.whl)."""
    return wheel.name.split("-")[1]


def install(wheel: Path, root: Path) -> Path:
    """What an installer leaves of a pure-Python wheel in `root` (a site-packages, or a PYTHONPATH entry): every
    member at its path, the .dist-info with its RECORD included."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(root)
    return root
