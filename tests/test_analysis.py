"""The pure core, on the real file of the installed release: fixes, no-ops, not-applicable and refusals."""

from __future__ import annotations

import pytest
from conftest import Release
from releases import BUGGY, FIXED, FORM_BY_RELEASE, FOUR_ARGUMENT, UPSTREAM_FIXED_FILE_SHA256

from hfpatch.analysis import identify, locate_function, patched, sha256
from hfpatch.catalog import Patch, Verdict
from hfpatch.errors import UnexpectedCode


def test_the_session_installed_the_release_it_names(patch: Patch) -> None:
    """A matrix session whose install went wrong must fail here, not skip its way to green."""
    import importlib.metadata
    import os

    expected = os.environ.get("HFPATCH_EXPECT_TRANSFORMERS")
    if expected is None:
        pytest.skip("not run by nox")
    try:
        installed = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        installed = "none"
    assert installed == expected


def _form(release: Release) -> str:
    return FORM_BY_RELEASE[release.version]


def test_the_catalog_knows_the_installed_file(release: Release, patch: Patch) -> None:
    """Drift check: the digests in the catalog are those of the real release."""
    identification = identify(release.source, patch, release.version)
    assert identification.form is not None
    assert identification.form.name == _form(release)
    assert sha256(release.source) in patch.known_files


def test_identification_by_code_agrees_with_the_file_digest(release: Release, patch: Patch) -> None:
    """The slow path (parse, digest the function) reaches the same form as the known-file fast path."""
    with_extra_line = release.source + b"\n# a line outside the function\n"
    identification = identify(with_extra_line, patch, release.version)
    assert identification.form is not None
    assert identification.form.name == _form(release)


def test_the_buggy_form_becomes_upstream_5_13_0_byte_for_byte(release: Release, patch: Patch) -> None:
    if _form(release) != BUGGY:
        pytest.skip(f"{release.version} does not carry the buggy form")
    assert sha256(patched(release.source, patch)) == UPSTREAM_FIXED_FILE_SHA256


@pytest.mark.parametrize(
    ("newline", "bom"),
    [pytest.param(b"\r\n", b"", id="crlf"), pytest.param(b"\n", b"\xef\xbb\xbf", id="utf8-bom")],
)
def test_the_rest_of_the_file_keeps_every_byte(release: Release, patch: Patch, newline: bytes, bom: bytes) -> None:
    if _form(release) != BUGGY:
        pytest.skip(f"{release.version} does not carry the buggy form")
    source = bom + release.source.replace(b"\n", newline)
    result = patched(source, patch)
    before, after = locate_function(source, patch), locate_function(result, patch)
    assert before is not None and after is not None
    assert result.startswith(bom)
    assert after.lines[: after.start] == before.lines[: before.start]
    assert after.lines[after.end :] == before.lines[before.end :]
    assert all(line.endswith("\r\n") for line in after.lines[after.start : after.end]) == (newline == b"\r\n")
    upstream_function = identify(result.replace(b"\r\n", b"\n").removeprefix(bom), patch, None)
    assert upstream_function.verdict is Verdict.FIXED


def test_the_fixed_form_is_left_alone(release: Release, patch: Patch) -> None:
    if _form(release) != FIXED:
        pytest.skip(f"{release.version} does not carry the fixed form")
    assert identify(release.source, patch, release.version).verdict is Verdict.FIXED


def test_the_four_argument_form_is_not_applicable(release: Release, patch: Patch) -> None:
    if _form(release) != FOUR_ARGUMENT:
        pytest.skip(f"{release.version} does not carry the four-argument form")
    assert identify(release.source, patch, release.version).verdict is Verdict.NOT_APPLICABLE
    with pytest.raises(UnexpectedCode):
        patched(release.source, patch)


def _edit_function(source: bytes, patch: Patch, old: bytes, new: bytes) -> bytes:
    located = locate_function(source, patch)
    assert located is not None
    function = located.function_text.encode()
    assert old in function, "the edit must hit the function under test"
    return source.replace(function, function.replace(old, new, 1))


EDITS = [
    pytest.param(b".resolve()", b".absolute()", id="changed-call"),
    pytest.param(b"    model_path = ", b"    # vendor tweak\n    model_path = ", id="added-comment"),
    pytest.param(b"hexdigest()[:16]", b"hexdigest()[:32]", id="changed-constant"),
    pytest.param(b"    ", b"\t", id="tab-indented"),
]


@pytest.mark.parametrize(("old", "new"), EDITS)
def test_edited_functions_are_refused_with_what_differs(release: Release, patch: Patch, old: bytes, new: bytes) -> None:
    if _form(release) == FIXED:
        pytest.skip("edits of the fixed form in a fixed release are trusted by version (see the next test)")
    edited = _edit_function(release.source, patch, old, new)
    identification = identify(edited, patch, release.version)
    assert identification.verdict is Verdict.UNRECOGNISED
    assert "line" in identification.detail
    assert patch.function in identification.detail


def test_unknown_code_in_a_release_that_has_the_fix_is_trusted_by_version(release: Release, patch: Patch) -> None:
    edited = _edit_function(release.source, patch, b"hexdigest()[:16]", b"hexdigest()[:32]")
    assert identify(edited, patch, "5.30.0").verdict is Verdict.FIXED
    assert identify(edited, patch, "5.30.0rc1").verdict is Verdict.UNRECOGNISED
    assert identify(edited, patch, "5.12.1+vendor.1").verdict is Verdict.UNRECOGNISED


def test_a_missing_function_depends_on_the_release(release: Release, patch: Patch) -> None:
    located = locate_function(release.source, patch)
    assert located is not None
    without = located.with_function("")
    assert identify(without, patch, "5.7.0").verdict is Verdict.NOT_APPLICABLE
    assert identify(without, patch, "5.12.1").verdict is Verdict.UNRECOGNISED
    assert identify(without, patch, "6.0.0").verdict is Verdict.FIXED


@pytest.mark.parametrize(
    ("source", "says"),
    [
        pytest.param(b"", "is empty", id="empty"),
        pytest.param(b"   \n\n", "is empty", id="blank"),
        pytest.param(b"def broken(:\n", "not valid Python", id="syntax-error"),
        pytest.param(b"x = '\xff\xfe'\n", "not valid UTF-8", id="not-utf8"),
    ],
)
def test_files_that_are_not_python_are_refused(patch: Patch, source: bytes, says: str) -> None:
    with pytest.raises(UnexpectedCode, match=says):
        identify(source, patch, "5.12.1")


def test_a_truncated_file_is_refused(release: Release, patch: Patch) -> None:
    located = locate_function(release.source, patch)
    assert located is not None
    truncated = "".join(located.lines[: located.start + 5]).encode()
    with pytest.raises(UnexpectedCode, match="not valid Python"):
        identify(truncated, patch, release.version)
