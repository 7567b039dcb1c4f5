"""`hfpatch verify` runs the real loader in the application's interpreter, tells the bug apart, leaves nothing."""

from __future__ import annotations

import json
import py_compile
import sys
from pathlib import Path

import pytest
from conftest import PATCH_ID, Release
from releases import BUGGY, FIXED
from support import Site, hfpatch, tree

pytestmark = pytest.mark.transformers


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """TMPDIR for the probe: whatever it leaves there is visible."""
    path = tmp_path / "tmp"
    path.mkdir()
    return path


def test_verify_tells_whether_the_loader_works_and_leaves_nothing_behind(
    release: Release, site: Site, scratch: Path
) -> None:
    before = tree(site.root)
    done = hfpatch("verify", "--json", env=site.env(TMPDIR=str(scratch)), patch=PATCH_ID, python=sys.executable)
    (environment,) = json.loads(done.out)["environments"]
    (entry,) = environment["patches"]
    if release.form == BUGGY:
        assert (done.code, entry["action"]) == (1, "verify-failed"), entry["message"]
        assert "FileNotFoundError" in entry["message"]
        assert "/blobs/" in entry["message"]
        # the probe imported the private copy, so its verdict is about the code hfpatch looked at
        assert "the interpreter imports" not in entry["message"]
    else:
        # A release without the code the patch is for has nothing of hfpatch's to prove: no probe runs.
        expected = "fixed-upstream" if release.form == FIXED else "not-applicable"
        assert (done.code, entry["action"], entry["condition"]) == (0, "not-needed", expected), entry["message"]
    assert tree(site.root) == before
    assert list(scratch.iterdir()) == []


def test_verify_passes_after_apply_and_fails_again_after_revert(buggy_site: Site, scratch: Path) -> None:
    env = buggy_site.env(TMPDIR=str(scratch))
    assert hfpatch("apply", env=env, patch=PATCH_ID, python=sys.executable).code == 0
    done = hfpatch("verify", env=env, patch=PATCH_ID, python=sys.executable)
    assert (done.code, done.label(PATCH_ID)) == (0, "verified"), done.out + done.err
    assert "the patch is applied and in effect" in done.text
    assert hfpatch("revert", env=env, patch=PATCH_ID, python=sys.executable).code == 0
    again = hfpatch("verify", env=env, patch=PATCH_ID, python=sys.executable)
    assert (again.code, again.label(PATCH_ID)) == (1, "verify-failed"), again.out + again.err
    assert list(scratch.iterdir()) == []


def test_verify_catches_stale_bytecode_that_reading_the_file_cannot_see(buggy_site: Site, scratch: Path) -> None:
    env = buggy_site.env(TMPDIR=str(scratch))
    original = buggy_site.file.read_bytes()
    assert hfpatch("apply", env=env, patch=PATCH_ID, python=sys.executable).code == 0
    # What a Dockerfile `sed` over a pre-compiled image leaves: the old code in an unchecked-hash .pyc.
    stale_source = scratch / "dynamic_module_utils.py"
    stale_source.write_bytes(original)
    pyc = buggy_site.file.parent / "__pycache__" / f"dynamic_module_utils.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(
        str(stale_source), cfile=str(pyc), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    stale_source.unlink()

    assert hfpatch("verify", env=env, patch=PATCH_ID, python=sys.executable).code == 1
    check = hfpatch("check", env=env, patch=PATCH_ID, python=sys.executable)
    assert (check.code, check.label(PATCH_ID)) == (1, "incomplete"), check.out
    assert "bytecode" in check.text
    assert hfpatch("apply", env=env, patch=PATCH_ID, python=sys.executable).code == 0
    assert hfpatch("verify", env=env, patch=PATCH_ID, python=sys.executable).code == 0
    assert hfpatch("check", env=env, patch=PATCH_ID, python=sys.executable).code == 0
