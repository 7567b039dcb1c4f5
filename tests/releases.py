"""What each release carries, read off the real wheels (scripts/fingerprint.py); the matrix checks every row."""

from __future__ import annotations

FOUR_ARGUMENT = "four-argument"
BUGGY = "two-argument-resolving"
FIXED = "fixed"

# release -> form of _compute_local_source_files_hash in its transformers/dynamic_module_utils.py
FORM_BY_RELEASE = {
    "5.8.1": FOUR_ARGUMENT,
    "5.9.0": FOUR_ARGUMENT,
    "5.10.1": BUGGY,
    "5.10.2": BUGGY,
    "5.10.4": BUGGY,
    "5.11.0": BUGGY,
    "5.12.0": BUGGY,
    "5.12.1": BUGGY,
    **{
        release: FIXED
        for release in (
            "5.13.0", "5.13.1", "5.14.0", "5.14.1", "5.15.0", "5.15.1", "5.16.0", "5.16.1", "5.17.0", "5.18.0",
            "5.19.0", "5.20.0", "5.20.1", "5.20.2", "5.21.0", "5.21.1", "5.22.0", "5.22.1", "5.22.2", "5.23.0",
            "5.24.0",
        )
    },
}  # fmt: skip

# Releases whose transformers/dynamic_module_utils.py is byte-identical, in order (sha256 of the file in the comment).
SAME_FILE = [
    ["5.8.1", "5.9.0"],  # cbcf6a3a... (5.8.0 too)
    ["5.10.1", "5.10.2", "5.10.4", "5.11.0", "5.12.0", "5.12.1"],  # 298bce2e...
    ["5.13.0", "5.13.1", "5.14.0", "5.14.1", "5.15.0", "5.15.1", "5.16.0", "5.16.1", "5.17.0"],  # 861b10ce...
    ["5.18.0", "5.19.0", "5.20.0", "5.20.1", "5.20.2"],  # befd9149...
    ["5.21.0", "5.21.1", "5.22.0", "5.22.1", "5.22.2", "5.23.0", "5.24.0"],  # 71f7ed72...
]

UPSTREAM_FIXED_FILE_SHA256 = "861b10ced72eb97233fbf7c4f343bb0a5204e8d70e577e3c34932bc975426e0c"  # 5.13.0
