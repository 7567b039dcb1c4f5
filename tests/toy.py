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

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def tree(root: Path) -> dict[str, tuple[int, int, int, int, str]]:
    """Every entry below root, links not followed, by inode, mode, size, mtime and link text: what "nothing
    changed" means, since every way of writing a file changes one of them."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        link = str(path.readlink()) if path.is_symlink() else ""
        found[str(path.relative_to(root))] = (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, link)
    return found


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Completed:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class ToySite:
    root: Path
    catalog: Path
    version: str

    @property
    def file(self) -> Path:
        return self.root / MODULE

    @property
    def dist_info(self) -> Path:
        return self.root / f"toypkg-{self.version}.dist-info"

    @property
    def record(self) -> Path:
        return self.dist_info / "RECORD"

    @property
    def state_dir(self) -> Path:
        return self.root / ".hfpatch"

    @property
    def backup(self) -> Path:
        return self.state_dir / PATCH_ID / "original"

    @property
    def state(self) -> Path:
        return self.state_dir / PATCH_ID / "state.json"

    def env(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key != "HFPATCH_FAULT"}
        # The site first; an existing PYTHONPATH stays behind it (scripts/mutants.py puts hfpatch's copy there).
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), *filter(None, [os.environ.get("PYTHONPATH")])])
        env["HFPATCH_CATALOG"] = str(self.catalog)
        env.update(extra)
        return env

    def command(self, *args: str, python: str | None = None) -> list[str]:
        command = [sys.executable, "-m", "hfpatch", *args]
        if args and not args[0].startswith("-"):
            command += ["--patch", PATCH_ID]
            if python is not None:
                command += ["--python", python]
        return command

    def run(self, *args: str, python: str | None = None, **env: str) -> Completed:
        """hfpatch as a user runs it: a real process, acting on this site (through PYTHONPATH)."""
        done = subprocess.run(
            self.command(*args, python=python),
            capture_output=True,
            text=True,
            env=self.env(**env),
            cwd=tempfile.gettempdir(),
            timeout=300,
            check=False,
        )
        return Completed(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, **env: str) -> subprocess.Popen[str]:
        """hfpatch started in the background, for runs that must overlap."""
        return subprocess.Popen(
            self.command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(**env),
            cwd=tempfile.gettempdir(),
        )


def make_site(where: Path, *, version: str = "1.0", module: str | None = None, record_newline: str = "\n") -> ToySite:
    """A site holding toypkg `version` (1.0: the bug; 2.0: fixed) and a catalog that knows it."""
    root, catalog = where / "site", where / "catalog"
    text = module if module is not None else (BUGGY_MODULE if version == "1.0" else FIXED_MODULE)
    files = {"toypkg/__init__.py": b'"""toypkg."""\n', MODULE: text.encode("utf-8")}
    dist_info = f"toypkg-{version}.dist-info"
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: toypkg\nVersion: {version}\n\n".encode()
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    rows = [f"{relative},{record_hash(data)},{len(data)}" for relative, data in files.items()]
    rows.append(f"{dist_info}/RECORD,,")
    (root / dist_info / "RECORD").write_bytes("".join(row + record_newline for row in rows).encode("utf-8"))
    write_catalog(catalog)
    return ToySite(root, catalog, version)
