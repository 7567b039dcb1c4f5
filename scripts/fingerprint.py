"""Print the digests the catalog records for a released file: `python scripts/fingerprint.py FILE FUNCTION`.

Run it on the file of a real release (from its wheel) when adding a form to a patch; the nox matrix checks the
recorded digests against every installed release, so a wrong entry cannot go unnoticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import libcst

from hfpatch.analysis import find_function, function_fingerprint, function_source, sha256


def main(argv: list[str]) -> int:
    path, name = Path(argv[0]), argv[1]
    source = path.read_bytes()
    module = libcst.parse_module(source)
    function = find_function(module, name)
    print(f"file_sha256 = {sha256(source)!r}")
    if function is None:
        print("function: absent")
        return 0
    digest, lines = function_fingerprint(function_source(module, function))
    print(f"function_sha256 = {digest!r}")
    print(f"line_digests = {lines!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
