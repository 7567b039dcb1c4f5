"""What the application's interpreter would import. Runs inside that interpreter (3.10 or newer), standard library only.

hfpatch calls `describe` directly when the target is its own interpreter; for `--python` it runs this file's
source with `python -c` in the target and reads the JSON it prints. Nothing of the described package is imported.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any


def describe(package: str) -> dict[str, Any]:
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return {
        "executable": sys.executable,
        "version": ".".join(str(part) for part in sys.version_info[:3]),
        "cache_tag": sys.implementation.cache_tag,
        "magic": importlib.util.MAGIC_NUMBER.hex(),
        "package_dir": locations[0] if spec is not None and spec.origin and locations else None,
        "found": spec is not None,
        # Where an uninstalled package's hfpatch state may still lie (site-packages, PYTHONPATH entries).
        # os.path.isdir, not Path.is_dir: an entry this user may not search (EACCES) is no directory to it either.
        "search_path": [entry for entry in sys.path if entry and os.path.isdir(entry)],  # noqa: PTH112
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
    }


def compile_bytecode(source: str, requests: list[dict[str, Any]]) -> None:
    """Write .pyc files for `source`, each at the optimisation level and invalidation mode asked for."""
    import py_compile

    for request in requests:
        py_compile.compile(
            source,
            cfile=request["cfile"],
            doraise=True,
            optimize=request["optimize"],
            invalidation_mode=py_compile.PycInvalidationMode[request["mode"]],
        )


if __name__ == "__main__":
    import json

    # `python -c` puts the working directory first on sys.path; a process of the environment would not see it.
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    request = json.loads(sys.argv[1])
    if request["action"] == "describe":
        print(json.dumps(describe(request["package"])))
    elif request["action"] == "source_hash":
        print(importlib.util.source_hash(Path(request["path"]).read_bytes()).hex())
    else:
        compile_bytecode(request["source"], request["requests"])
