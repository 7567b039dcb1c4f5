"""Print the digests the catalog records for a released file: `python scripts/fingerprint.py FILE FUNCTION`.

Run it on the file of a real release (from its wheel) when adding a form to a patch; the nox matrix checks the
recorded digests against every installed release, so a wrong entry cannot go unnoticed.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from hfpatch.analysis import function_fingerprint, locate_function, sha256
from hfpatch.catalog import load_catalog


def main(argv: list[str]) -> int:
    path, function = Path(argv[0]), argv[1]
    source = path.read_bytes()
    patch = replace(load_catalog()[0], function=function, target=str(path))
    located = locate_function(source, patch)
    print(f"file_sha256 = {sha256(source)!r}")
    if located is None:
        print("function: absent")
        return 0
    digest, lines = function_fingerprint(located.function_source)
    print(f"function_sha256 = {digest!r}")
    print(f"line_digests = {lines!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
