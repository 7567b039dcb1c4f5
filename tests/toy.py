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
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

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


def make_site(where: Path, *, version: str = "1.0", module: str | None = None, record_newline: str = "\n") -> Site:
    """A site holding toypkg `version` (1.0: the bug; 2.0: fixed) and a catalog that knows it."""
    root, catalog = where / "site", where / "catalog"
    text = module if module is not None else (BUGGY_MODULE if version == "1.0" else FIXED_MODULE)
    files = {"toypkg/__init__.py": b'"""toypkg."""\n', MODULE: text.encode("utf-8")}
    dist_info = f"toypkg-{version}.dist-info"
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: toypkg\nVersion: {version}\n\n".encode()
    write_files(root, files, dist_info, record_newline)
    write_catalog(catalog)
    return site_at(root, catalog, version)


def site_at(root: Path, catalog: Path, version: str = "1.0") -> Site:
    """The toy distribution where it lies (a site, or an interpreter's own site-packages) and its catalog."""
    return Site(root, "toypkg", version, MODULE, PATCH_ID, catalog=catalog)
