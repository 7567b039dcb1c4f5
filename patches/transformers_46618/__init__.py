"""transformers PR #46618: local hub-cache snapshots with relative imports under trust_remote_code.

The digests below are facts read off the released wheels with scripts/fingerprint.py; the nox matrix checks each
one against the installed release, so drift cannot pass silently.
"""

from hfpatch.catalog import KnownForm, Patch, Verdict

_BUGGY = KnownForm(
    name="two-argument-resolving",
    verdict=Verdict.NEEDS_PATCH,
    releases="5.10.1 to 5.12.1",
    function_sha256="7bb60640ec40c1b65d6633a7cec9b3a0c52c723a569cc6679b3214b4a4787c38",
    line_digests=(
        "e4b5a81c69d4", "47a8a176c753", "4caf1e68095b", "e21b9fa3d53a", "c7fecba7421a", "2fb21757da74",
        "c7fecba7421a", "756d4eb0e7d6", "aba4741af753", "e3b0c44298fc", "b5684f76a247", "da488a04cf2e",
        "37e43b827d97", "026c63369e3b", "6dc0f8d3ec9e", "c7fc9f928f24", "e3b0c44298fc", "84aba839b377",
        "7653930fdba5", "9556700e74a6", "b4796a6b4e61", "d2ec8614e529", "e7fd869e487e", "e3b0c44298fc",
        "8f32b434da6b", "a7b516e1060c", "c5aef0896b52", "2c110c6d46d0", "e3b0c44298fc", "03657e03db88",
    ),
)  # fmt: skip

_FIXED = KnownForm(
    name="fixed",
    verdict=Verdict.FIXED,
    releases="5.13.0 and later",
    function_sha256="254f9a673dbf33360f3b4bafed18acc96ea526c9a8d857e1f08f3896645ffdf1",
    line_digests=(
        "e4b5a81c69d4", "47a8a176c753", "4caf1e68095b", "e21b9fa3d53a", "c7fecba7421a", "2fb21757da74",
        "c7fecba7421a", "756d4eb0e7d6", "1864b897c1c3", "e3b0c44298fc", "b5684f76a247", "0a30a97ac025",
        "da488a04cf2e", "e2a1120ec390", "026c63369e3b", "79662aec6faf", "e3b0c44298fc", "84aba839b377",
        "7653930fdba5", "9556700e74a6", "b4796a6b4e61", "b28e66071c64", "e7fd869e487e", "e3b0c44298fc",
        "8f32b434da6b", "a7b516e1060c", "c5aef0896b52", "2c110c6d46d0", "e3b0c44298fc", "03657e03db88",
    ),
)  # fmt: skip

# 5.8.x and 5.9.0 take (path, module_file, resolved_module_file, modules_needed): the two-argument
# replacement would break every caller with a TypeError, so the patch never touches it.
_FOUR_ARGUMENT = KnownForm(
    name="four-argument",
    verdict=Verdict.NOT_APPLICABLE,
    releases="5.8.0 to 5.9.0",
    function_sha256="fcb75a0f7976ea709fab00c3be619e3df457bd7c38a2a1021fe25c16d6d5af4f",
    line_digests=(
        "e4b5a81c69d4", "47a8a176c753", "abe98923f1f5", "4caf1e68095b", "ab9f1bc47709", "e21b9fa3d53a",
        "c7fecba7421a", "6b4cdb292c2f", "c7fecba7421a", "756d4eb0e7d6", "96c5551040e5", "e3b0c44298fc",
        "aba4741af753", "e3b0c44298fc", "b5684f76a247", "da488a04cf2e", "37e43b827d97", "026c63369e3b",
        "6dc0f8d3ec9e", "c7fc9f928f24", "e3b0c44298fc", "84aba839b377", "7653930fdba5", "9556700e74a6",
        "89cd56262585", "cc0230eae117", "618a61a0a6d5", "e3b0c44298fc", "8f32b434da6b", "a7b516e1060c",
        "c5aef0896b52", "2c110c6d46d0", "e3b0c44298fc", "03657e03db88",
    ),
)  # fmt: skip

_RELEASE_5_12_1 = "298bce2e0c3f5abb9897d3cd2781cd5771410bad53342da4281928c437eb1f81"  # also 5.10.1 to 5.12.0
_RELEASE_5_13_0 = "861b10ced72eb97233fbf7c4f343bb0a5204e8d70e577e3c34932bc975426e0c"  # also 5.13.1 to 5.17.0

PATCH = Patch(
    id="transformers-46618",
    title="trust_remote_code from a local hub-cache snapshot looks for relative imports in blobs/",
    distribution="transformers",
    package="transformers",
    target="transformers/dynamic_module_utils.py",
    function="_compute_local_source_files_hash",
    upstream="huggingface/transformers#46618",
    upstream_url="https://github.com/huggingface/transformers/pull/46618",
    fixed_in="5.13.0",
    introduced_in="5.8.0",
    forms=(_BUGGY, _FIXED, _FOUR_ARGUMENT),
    known_files={
        "bf7df9726c658edfdae520844488037b714bcdf6ae19e61961c4d84654efdeb8": None,  # 5.7.0
        "cbcf6a3a763877ca5c98bb354a7dbde2d3ebb6e69844556082419eba0e94767a": _FOUR_ARGUMENT.name,  # 5.8.0 to 5.9.0
        _RELEASE_5_12_1: _BUGGY.name,
        _RELEASE_5_13_0: _FIXED.name,
        "befd9149d1ead0801b4ea1152280b0c60ab3fd52cf222b15b37dac84e61d67af": _FIXED.name,  # 5.18.0 to 5.20.2
        "71f7ed72966363ed147d27211743f853a3c11df16da8e6039bba68ee2eb3e4a8": _FIXED.name,  # 5.21.0 to 5.24.0
    },
    expected_results={_RELEASE_5_12_1: _RELEASE_5_13_0},
)
