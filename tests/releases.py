"""What each release carries, read off the real wheels (`hfpatch new` wrote the entries from them); the release
matrix (`nox -t matrix`) installs each one and checks its row."""

from __future__ import annotations

import json
from pathlib import Path

FOUR_ARGUMENT = "four-argument"
BUGGY = "two-argument-resolving"
FIXED = "fixed"
# Every release before the function existed (5.7.0 and older): not in the table, nothing to patch.
ABSENT = "absent"
FIRST_DEFINED_IN = "5.8.0"

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

# transformers-40669 (list_repo_templates in transformers/utils/hub.py), read off the wheels by `hfpatch new`: one
# file each for 4.52.x, 4.53.x, 4.54.x, 4.55.x and 4.56.0 (all need the patch; 4.52.0 is yanked), fixed in 4.56.1.
PATCH_40669 = "transformers-40669"
HUB_FILE_FIRSTS = ["4.52.1", "4.53.0", "4.54.0", "4.55.0", "4.56.0"]
HUB_FIXED_IN = "4.56.1"

# ------------------------------------------------------------------------------------------- the release matrix
# The matrix grows by pins, not by entries: `nox -t matrix` (CI) installs each release of PROOF once, in a session
# of its own, and proves there every patch whose PROOF names it (tests/test_every_patch.py: the probe shows the bug,
# apply gives the files the entry records, the probe passes, revert gives the bytes and the bug back; on a release
# the patch leaves alone, the probe passes untouched). The boundaries of an entry's range are proven by `hfpatch
# new`'s reading of every release's wheel (the entry's known files), not by installing each;
# `nox -s every_release` installs every release an entry names (the whole proof, hours).
#
# PROOF is computed: every patch is proven on each of PINS its entry names (read off its patch.json: nothing to
# write for that), and on the releases of its row below, if it has one.
# - PINS: the releases teams hold (issue 22's eight pins);
# - PROOF_BY_LINE: the entries written before the pins, each on the newest release of each minor line that needs
#   it, the first release with the fix, and the newest release before it whose code the patch must leave alone
#   (tests/test_matrix.py checks that rule);
# - PROOF_BEYOND_PINS: an entry that names no pin (its range holds none): the one release to prove it on, the newest
#   that needs the patch, and, where a form with a fixed text of its own is one a team holds today (its newest
#   release imports with what its requirements resolve to now), the newest release of that form, so that the fitted
#   text is seen to close the hole too. An entry that names a pin needs no row. Each release named here and nowhere
#   else is one more session of CI (about a minute): name no other.
# A patch whose probe needs more than its distribution names it in PROBE_NEEDS (TORCH first); those patches are
# proven in one session that installs it once (release_torch: torch by pip, from this machine's disk) and then
# each of their releases over the one before, proving there every patch of that release.
PINS = ["4.57.6", "4.57.1", "4.51.3", "4.46.3", "4.44.2", "4.38.2", "4.36.2", "4.35.2"]
PINNED_DISTRIBUTION = "transformers"
PATCH_ID = "transformers-46618"
PROOF_BY_LINE: dict[str, tuple[str, list[str]]] = {
    PATCH_ID: ("transformers", ["5.9.0", "5.10.4", "5.11.0", "5.12.1", "5.13.0"]),
    PATCH_40669: ("transformers", ["4.51.3", "4.52.4", "4.53.3", "4.54.1", "4.55.4", "4.56.0", HUB_FIXED_IN]),
    "transformers-41322": ("transformers", ["4.57.4", "4.57.5"]),
    "transformers-41758": ("transformers", ["4.56.2", "4.57.5", "4.57.6"]),
    "transformers-44395": ("transformers", ["5.0.0", "5.1.0", "5.2.0", "5.3.0"]),
    "transformers-gas-5.5.4": ("transformers", ["5.2.0", "5.3.0", "5.4.0", "5.5.3", "5.5.4"]),
    "huggingface_hub-3579": ("huggingface_hub", ["1.0.1", "1.1.5", "1.1.6"]),
    "huggingface_hub-3610": (
        "huggingface_hub",
        ["0.32.6", "0.33.5", "0.34.6", "0.35.3", "0.36.2", "1.0.1", "1.1.7", "1.2.1", "1.2.2"],
    ),
    "huggingface_hub-3778": ("huggingface_hub", ["1.1.7", "1.2.4", "1.3.7", "1.4.0", "1.4.1"]),
}
PROOF_BEYOND_PINS: dict[str, tuple[str, list[str]]] = {
    "datasets-cve-2026-65010": ("datasets", ["2.21.0", "5.0.0"]),  # 1.10.0-5.0.0; 2.8.0-2.21.0's own fixed text
    "datasets-cve-2026-66007": ("datasets", ["5.0.0"]),  # 3.4.0-5.0.0: not transformers
    "diffusers-cve-2026-44513": ("diffusers", ["0.37.1"]),  # 0.37.0-0.37.1: not transformers
    "diffusers-cve-2026-65920": ("diffusers", ["0.39.0"]),  # 0.29.0-0.39.0: not transformers
    "transformers-cve-2023-2800": ("transformers", ["4.29.2"]),  # 4.22.0-4.29.2: no pin
    "transformers-cve-2025-3262": ("transformers", ["4.50.3"]),  # 4.49.0-4.50.3: no pin
    "transformers-cve-2026-4372-4.52": ("transformers", ["4.53.3"]),  # 4.52.1-4.53.3: no pin
    "transformers-cve-2026-5241-5.4": ("transformers", ["5.4.0"]),  # 5.4.0 only: no pin
    "transformers-cve-2026-4372-4.54": ("transformers", ["4.55.4"]),  # 4.54.0-4.55.4: no pin
}
TORCH = "torch==2.13.0"
ACCELERATE = "accelerate==1.15.0"
PROBE_NEEDS: dict[str, list[str]] = {
    "transformers-cve-2023-7018": [TORCH, "sacremoses==0.2.0"],  # the tokenizer needs sacremoses; torch is not used
    "transformers-43140": [TORCH, ACCELERATE],
    "transformers-44395": [TORCH],
    "transformers-cve-2025-3262": [TORCH, "rich==15.0.0"],  # the chat module: 4.57 imports it beside torch, 4.49 both
    "transformers-cve-2026-4372-4.52": [TORCH],
    "transformers-cve-2026-4372-4.54": [TORCH],
    "transformers-cve-2026-4372-4.57": [TORCH],
    "transformers-cve-2026-80047": [TORCH],
    "diffusers-cve-2026-44513": [TORCH],  # DiffusionPipeline; no transformers, no accelerate
    "transformers-gas-5.5.4": [TORCH, ACCELERATE],
    "transformers-convert-scripts": [TORCH],
}

# The default run (`nox`) runs every transformers test on the newest affected release of each of the first two
# patches and on the newest release; the newest affected release of transformers-46618 once more with transformers
# installed by pip (CRLF in RECORD, timestamp bytecode).
NEWEST_AFFECTED: dict[str, str] = {
    PATCH_ID: [release for release, form in FORM_BY_RELEASE.items() if form == BUGGY][-1],
    PATCH_40669: HUB_FILE_FIRSTS[-1],
}
REPRESENTATIVES: list[str] = [NEWEST_AFFECTED[PATCH_ID], list(FORM_BY_RELEASE)[-1], NEWEST_AFFECTED[PATCH_40669]]
INSTALLED_BY_PIP = [NEWEST_AFFECTED[PATCH_ID]]


def _named_releases(entry_dir: Path) -> tuple[str, set[str]]:
    """An entry's distribution and every release its known files name among those it was written from
    (releases_read): the others are recorded only so that `check` need not parse them (scripts/later_releases.py)."""
    data = json.loads((entry_dir / "patch.json").read_text(encoding="utf-8"))
    named = {release for file in data["files"] for known in file["known_files"] for release in known["releases"]}
    if "releases_read" in data:
        oldest, newest = (_version(release) for release in data["releases_read"])
        named = {release for release in named if oldest <= _version(release) <= newest}
    return data["distribution"], named


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def _proof() -> dict[str, tuple[str, list[str]]]:
    proof = {}
    for entry_dir in sorted(path.parent for path in CATALOG.glob("*/patch.json")):
        distribution, named = _named_releases(entry_dir)
        _, rows = PROOF_BY_LINE.get(entry_dir.name) or PROOF_BEYOND_PINS.get(entry_dir.name) or (distribution, [])
        pins = [pin for pin in PINS if pin in named] if distribution == PINNED_DISTRIBUTION else []
        proof[entry_dir.name] = (distribution, sorted({*rows, *pins}, key=_version))
    return proof


CATALOG = Path(__file__).resolve().parent.parent / "patches"
# patch id -> (distribution, the releases it is proven on): what the matrix installs and proves.
PROOF: dict[str, tuple[str, list[str]]] = _proof()
