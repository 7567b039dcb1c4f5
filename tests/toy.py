"""A made-up distribution, `toypkg`, and a catalog entry that fixes it: the engine's whole behaviour, fast.

    <site>/toypkg/__init__.py
    <site>/toypkg/core.py                 greet() has the bug in 1.0 (None is not greeted), not in 2.0
    <site>/toypkg-<version>.dist-info/    METADATA and a RECORD with every file's hash (LF or CRLF line endings)
    <catalog>/toypkg-1/patch.json         the entry, its digests taken here with hashlib of the texts below
    <catalog>/toypkg-1/fixed/greet.py     the fixed text
    <catalog>/toypkg-1/probe.py           calls greet(None) in the application's interpreter

A site is imported first through PYTHONPATH; hfpatch finds it as it finds a real install. The entry is found
through HFPATCH_CATALOG, and every run names `--patch toypkg-1`, so the built-in catalog never acts on the test
environment's own packages.

Patches of the new model (entry schema 3) on the same distribution, with a second module:

    <site>/toypkg/text/words.py           title() has a bug of its own in 1.0 (None has no title)
    <catalog>/toypkg-pair/                one patch of two files: greet in core.py and title in words.py
    <catalog>/toypkg-a/, toypkg-b/        two patches of one file: greet, and Greeter.shout, both in core.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

from support import Site, write_files

PATCH_ID = "toypkg-1"
MODULE = "toypkg/core.py"

_HEAD = '"""A made-up module with a bug that release 2.0 fixed."""\n\nimport os\n\nGREETING = "Hello"\n\n\n'
BUGGY_GREET = 'def greet(name):\n    return GREETING + ", " + name + "!"\n'
FIXED_GREET = (
    "def greet(name):\n"
    "    # None greets the world, as 2.0 does.\n"
    "    if name is None:\n"
    '        name = "world"\n'
    '    return GREETING + ", " + name + "!"\n'
)
_TAIL = "\n\nclass Greeter:\n    def shout(self, name):\n        return greet(name).upper()\n\n\nPID = os.getpid()\n"

BUGGY_MODULE = _HEAD + BUGGY_GREET + _TAIL
FIXED_MODULE = _HEAD + FIXED_GREET + _TAIL

_PROBE = '''"""Probe for toypkg-1: greet(None) must greet the world."""
import json
import sys

if sys.path and sys.path[0] == "":
    del sys.path[0]
result = {"ok": False}
try:
    import toypkg.core as core

    result["loader_file"] = core.__file__
    result["ok"] = core.greet(None) == "Hello, world!"
except TypeError as error:
    result.update(bug=True, error_type="TypeError", error=str(error))
except Exception as error:
    result.update(bug=False, error_type=type(error).__name__, error=str(error))
print(json.dumps(result))
'''


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical(definition: str) -> str:
    return definition.rstrip("\n")


def entry_data(*, with_probe: bool = True) -> dict[str, Any]:
    """The toy entry as patch.json holds it."""
    return {
        "schema": 2,
        "id": PATCH_ID,
        "title": "greet(None) fails",
        "upstream": "example/toypkg#1",
        "url": "https://example.invalid/toypkg/pull/1",
        "distribution": "toypkg",
        "module": "toypkg.core",
        "file": MODULE,
        "fixed_in": "2.0",
        "first_defined_in": "0.5",
        **({"probe": "probe.py"} if with_probe else {}),
        "targets": [
            {
                "name": "greet",
                "fixed": "fixed/greet.py",
                "forms": [
                    {"sha256": _sha256(canonical(BUGGY_GREET)), "verdict": "needs-patch", "releases": ["1.0"]},
                    {"sha256": _sha256(canonical(FIXED_GREET)), "verdict": "fixed", "releases": ["2.0"]},
                ],
            }
        ],
        "known_files": [
            {
                "sha256": _sha256(BUGGY_MODULE),
                "verdict": "needs-patch",
                "releases": ["1.0"],
                "patched_sha256": _sha256(FIXED_MODULE),
            }
        ],
    }


def write_catalog(directory: Path, *, with_probe: bool = True) -> Path:
    directory_of_entry = directory / PATCH_ID
    (directory_of_entry / "fixed").mkdir(parents=True)
    text = json.dumps(entry_data(with_probe=with_probe), indent=2) + "\n"
    (directory_of_entry / "patch.json").write_text(text, encoding="utf-8")
    (directory_of_entry / "fixed" / "greet.py").write_text(FIXED_GREET, encoding="utf-8")
    if with_probe:
        (directory_of_entry / "probe.py").write_text(_PROBE, encoding="utf-8")
    return directory


def make_site(
    where: Path,
    *,
    version: str = "1.0",
    module: str | None = None,
    record_newline: str = "\n",
    words: str | None = None,
) -> Site:
    """A site holding toypkg `version` (1.0: the bug; 2.0: fixed) and a catalog that knows it; `words`: the text
    of the second module, toypkg/text/words.py (None: the release has none)."""
    root, catalog = where / "site", where / "catalog"
    text = module if module is not None else (BUGGY_MODULE if version == "1.0" else FIXED_MODULE)
    files = {"toypkg/__init__.py": b'"""toypkg."""\n', MODULE: text.encode("utf-8")}
    if words is not None:
        files |= {"toypkg/text/__init__.py": b"", WORDS: words.encode("utf-8")}
    dist_info = f"toypkg-{version}.dist-info"
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: toypkg\nVersion: {version}\n\n".encode()
    write_files(root, files, dist_info, record_newline)
    write_catalog(catalog)
    return site_at(root, catalog, version)


def site_at(root: Path, catalog: Path, version: str = "1.0") -> Site:
    """The toy distribution where it lies (a site, or an interpreter's own site-packages) and its catalog."""
    return Site(root, "toypkg", version, MODULE, PATCH_ID, catalog=catalog)


# ------------------------------------------------------------------------------ patches of schema 3

WORDS = "toypkg/text/words.py"
_WORDS_HEAD = '"""Words toypkg greets with."""\n\n\n'
BUGGY_TITLE = "def title(text):\n    return text.title()\n"
FIXED_TITLE = 'def title(text):\n    # None is the world, as 2.0 has it.\n    return (text or "world").title()\n'
BUGGY_WORDS = _WORDS_HEAD + BUGGY_TITLE + '\n\nSEPARATOR = ", "\n'

BUGGY_SHOUT = "    def shout(self, name):\n        return greet(name).upper()\n"
FIXED_SHOUT = '    def shout(self, name):\n        # 2.0 shouts louder.\n        return greet(name).upper() + "!"\n'
assert BUGGY_SHOUT in BUGGY_MODULE

PAIR_ID = "toypkg-pair"
A_ID, B_ID = "toypkg-a", "toypkg-b"


class Change(NamedTuple):
    """One statement a schema-3 entry changes: in which file, from which text to which."""

    module: str
    file: str
    name: str
    buggy: str
    fixed: str


GREET = Change("toypkg.core", MODULE, "greet", BUGGY_GREET, FIXED_GREET)
SHOUT = Change("toypkg.core", MODULE, "Greeter.shout", BUGGY_SHOUT, FIXED_SHOUT)
TITLE = Change("toypkg.text.words", WORDS, "title", BUGGY_TITLE, FIXED_TITLE)
RELEASED = {MODULE: BUGGY_MODULE, WORDS: BUGGY_WORDS}
# What each patch is made of.
CHANGES = {PAIR_ID: (GREET, TITLE), A_ID: (GREET,), B_ID: (SHOUT,)}


def with_changes(text: str, *changes: Change) -> str:
    """A released text with the given fixes in it: what hfpatch must make of it, computed here from the texts."""
    for change in changes:
        assert text.count(change.buggy) == 1, change.name
        text = text.replace(change.buggy, change.fixed)
    return text


def entry_v3(patch_id: str) -> dict[str, Any]:
    """The schema-3 entry of one of the patches above, each digest taken of its text here."""
    changes = CHANGES[patch_id]
    files = []
    for file in dict.fromkeys(change.file for change in changes):
        mine = [change for change in changes if change.file == file]
        released = RELEASED[file]
        targets = [
            {
                "name": change.name,
                "fixed": f"fixed/{change.module}/{change.name}.py",
                "forms": [
                    {"sha256": _sha256(canonical(change.buggy)), "verdict": "needs-patch", "releases": ["1.0"]},
                    {"sha256": _sha256(canonical(change.fixed)), "verdict": "fixed", "releases": ["2.0"]},
                ],
            }
            for change in mine
        ]
        known = {
            "sha256": _sha256(released),
            "verdict": "needs-patch",
            "releases": ["1.0"],
            "patched_sha256": _sha256(with_changes(released, *mine)),
        }
        files.append({"module": mine[0].module, "file": file, "targets": targets, "known_files": [known]})
    return {
        "schema": 3,
        "id": patch_id,
        "title": f"{patch_id}: toypkg 1.0's bugs",
        "upstream": f"example/toypkg#{patch_id}",
        "url": "https://example.invalid/toypkg/pull/2",
        "distribution": "toypkg",
        "fixed_in": "2.0",
        "first_defined_in": "0.5",
        "files": files,
    }


def write_entry(catalog: Path, patch_id: str) -> Path:
    """One of the schema-3 patches as a directory of the catalog (its fixed texts in fixed/); returns the catalog."""
    directory = catalog / patch_id
    for change in CHANGES[patch_id]:
        fixed = directory / "fixed" / change.module / f"{change.name}.py"
        fixed.parent.mkdir(parents=True, exist_ok=True)
        fixed.write_text(change.fixed, encoding="utf-8")
    (directory / "patch.json").write_text(json.dumps(entry_v3(patch_id), indent=2) + "\n", encoding="utf-8")
    return catalog


def make_pair_site(where: Path) -> Site:
    """toypkg 1.0 with both modules, and a catalog of toypkg-pair (a patch of core.py and words.py); the site's file
    is core.py, the first of the patch's files."""
    site = make_site(where, words=BUGGY_WORDS)
    catalog = write_entry(where / "pair-catalog", PAIR_ID)
    return Site(site.root, "toypkg", "1.0", MODULE, PAIR_ID, catalog=catalog)


def make_composed_site(where: Path) -> Site:
    """toypkg 1.0 and a catalog of toypkg-a (greet) and toypkg-b (Greeter.shout), two patches of core.py; the
    site's patch is toypkg-a (runs that act on both name both)."""
    site = make_site(where)
    catalog = write_entry(write_entry(where / "composed-catalog", A_ID), B_ID)
    return Site(site.root, "toypkg", "1.0", MODULE, A_ID, catalog=catalog)
