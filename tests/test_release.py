"""The installed release against the catalog, in the pure core: CI runs this file on every release, 5.8.1 to 5.24.0.

It is the drift check: the digests and texts the catalog and tests/golden hold must be those of the real wheel.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os

import pytest
from conftest import EXPECT_VARIABLE, Release
from releases import ABSENT, BUGGY, FIXED, FOUR_ARGUMENT, SAME_FILE, UPSTREAM_FIXED_FILE_SHA256
from support import REPOSITORY

from hfpatch import classify, rewrite, statements
from hfpatch.entry import Patch, Verdict
from hfpatch.errors import UnexpectedCode

pytestmark = pytest.mark.transformers

FUNCTION = "_compute_local_source_files_hash"
GOLDEN = REPOSITORY / "tests" / "golden" / "transformers-46618"
VERDICT_OF_FORM = {
    ABSENT: Verdict.NOT_APPLICABLE,
    FOUR_ARGUMENT: Verdict.NOT_APPLICABLE,
    BUGGY: Verdict.NEEDS_PATCH,
    FIXED: Verdict.FIXED,
}


def golden(form: str) -> str:
    """The canonical text of a form, as tests/golden holds it (one final newline)."""
    return (GOLDEN / f"{form}.py").read_bytes().decode("utf-8").removesuffix("\n")


def function_of(source: bytes) -> statements.Unit:
    found = statements.find(statements.parse(source, "dynamic_module_utils.py"), FUNCTION)
    assert found is not None, f"{FUNCTION} is not in the file"
    return found


def test_the_session_installed_the_release_it_names() -> None:
    """A matrix session whose install went wrong must fail here, not skip its way to green."""
    expected = os.environ.get(EXPECT_VARIABLE)
    if expected is None:
        pytest.skip(f"{EXPECT_VARIABLE} is not set (nox sets it)")
    try:
        installed = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        installed = "none"
    assert installed == expected


def test_the_installed_file_is_a_file_form_the_catalog_lists_for_this_release(release: Release, patch: Patch) -> None:
    digest = hashlib.sha256(release.source).hexdigest()
    known = patch.files[0].known_file(digest)
    if release.form == ABSENT and (known is None or release.version not in known.releases):
        # 5.3.0's file may be byte for byte the 5.7.0 file the entry read: the same file, named for 5.7.0 only.
        pytest.skip(f"the catalog lists one file of the releases before the function, not {release.version}'s")
    assert known is not None, f"the catalog has no file_form {digest} (transformers {release.version})"
    assert release.version in known.releases
    assert known.verdict is (None if release.form == ABSENT else VERDICT_OF_FORM[release.form])
    if release.form == ABSENT:
        return
    (same_file,) = [group for group in SAME_FILE if release.version in group]
    assert set(same_file) <= set(known.releases), "releases.SAME_FILE and the catalog disagree on who shares it"


def test_the_installed_function_is_the_golden_text_of_its_form_byte_for_byte(release: Release, patch: Patch) -> None:
    if release.form == ABSENT:
        parsed = statements.parse(release.source, "dynamic_module_utils.py")
        assert statements.find(parsed, FUNCTION) is None, f"{release.version} defines {FUNCTION} after all"
        return
    found = function_of(release.source)
    assert (found.text + "\n").encode("utf-8") == (GOLDEN / f"{release.form}.py").read_bytes()
    (target,) = patch.files[0].targets
    (form,) = [form for form in target.forms if release.version in form.releases]
    assert form.sha256 == found.sha256
    assert form.verdict is VERDICT_OF_FORM[release.form]
    # The line digests are what names the line that differs in code hfpatch refuses (see the last test).
    assert form.lines == statements.line_digests(found.text)


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("file-digest", id="by-the-file-digest"),
        pytest.param("function-code", id="by-the-function-when-the-file-is-unknown"),
        pytest.param("code-alone", id="by-the-function-with-no-version"),
    ],
)
def test_classify_agrees_with_releases_py(release: Release, patch: Patch, how: str) -> None:
    source = release.source
    if how != "file-digest":
        source += b"\n# a line outside the function makes the file one the catalog does not list\n"
        assert patch.files[0].known_file(hashlib.sha256(source).hexdigest()) is None
    version = None if how == "code-alone" else release.version
    if version is None and release.form == ABSENT:
        pytest.skip("an absent function is not applicable by the version alone")
    found = classify.identify(source, patch, patch.files[0], version)
    assert found.verdict is VERDICT_OF_FORM[release.form], found.detail


def test_a_buggy_release_becomes_upstream_5_13_0s_file(release: Release, patch: Patch) -> None:
    if release.form != BUGGY:
        pytest.skip(f"transformers {release.version} does not carry the buggy form")
    result = rewrite.patched(release.source, patch, patch.files[0])
    assert hashlib.sha256(result).hexdigest() == UPSTREAM_FIXED_FILE_SHA256
    assert classify.identify(result, patch, patch.files[0], release.version).verdict is Verdict.FIXED


@pytest.mark.parametrize(
    ("newline", "bom"),
    [
        pytest.param("\n", "", id="lf"),
        pytest.param("\r\n", "", id="crlf"),
        pytest.param("\n", "\ufeff", id="utf8-bom"),
        pytest.param("\r\n", "\ufeff", id="crlf-and-bom"),
    ],
)
def test_patching_keeps_every_byte_outside_the_function(release: Release, patch: Patch, newline: str, bom: str) -> None:
    if release.form != BUGGY:
        pytest.skip(f"transformers {release.version} does not carry the buggy form")
    text = bom + release.source.decode("utf-8").replace("\n", newline)
    buggy, fixed = golden(BUGGY).replace("\n", newline), golden(FIXED).replace("\n", newline)
    assert text.count(buggy) == 1
    expected = text.replace(buggy, fixed).encode("utf-8")

    assert rewrite.patched(text.encode("utf-8"), patch, patch.files[0]) == expected


def test_the_four_argument_form_is_not_applicable(release: Release, patch: Patch) -> None:
    if release.form != FOUR_ARGUMENT:
        pytest.skip(f"transformers {release.version} does not carry the four-argument form")
    found = classify.identify(release.source + b"\n", patch, patch.files[0], release.version)
    assert found.verdict is Verdict.NOT_APPLICABLE
    assert "would break its callers" in found.detail
    # The two-argument fix would break its callers: the rewrite itself refuses, whatever a caller decided.
    with pytest.raises(UnexpectedCode, match="is not a form the patch is written for"):
        rewrite.patched(release.source, patch, patch.files[0])


def test_an_edited_function_is_refused_naming_the_line_that_differs(release: Release, patch: Patch) -> None:
    """With no version to trust, any edit of any form is unknown code; the catalog's line digests say where."""
    if release.form == ABSENT:
        pytest.skip(f"transformers {release.version} has no {FUNCTION} to edit")
    canonical = function_of(release.source).text
    last = canonical.split("\n")[-1]
    assert last.strip() == "return source_files_hash.hexdigest()[:16]"
    edited_source = release.source.replace(canonical.encode(), canonical.replace("[:16]", "[:32]").encode())
    (target,) = patch.files[0].targets
    (form,) = [form for form in target.forms if release.version in form.releases]

    found = classify.identify(edited_source, patch, patch.files[0], None)

    assert found.verdict is None
    line = len(canonical.split("\n"))
    edited_line = "'return source_files_hash.hexdigest()[:32]'"
    assert found.detail == f"{FUNCTION} line {line} differs from the {form.release_range} code: {edited_line}"
