"""`hfpatch verify` runs the real loader in the target interpreter, and leaves nothing behind."""

from __future__ import annotations

import json
import py_compile
from pathlib import Path

import pytest
from conftest import Site, run_hfpatch
from conftest import tree as _tree
from releases import BUGGY, FIXED, FORM_BY_RELEASE


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """TMPDIR for the probe: whatever it leaves there is visible."""
    path = tmp_path / "tmp"
    path.mkdir()
    return path


def test_verify_tells_whether_the_loader_works_and_leaves_nothing_behind(site: Site, scratch: Path) -> None:
    before = _tree(site.root)
    done = run_hfpatch("verify", "--json", env=site.env(TMPDIR=str(scratch)))
    entry = json.loads(done.out)["environments"][0]["patches"][0]
    form = FORM_BY_RELEASE[site.version]
    if form == BUGGY:
        assert done.code == 1
        assert "FileNotFoundError" in entry["message"]
        assert "/blobs/" in entry["message"]
    else:
        assert done.code == 0, entry["message"]
        assert "works" in entry["message"]
    if form == FIXED:
        assert "no patch needed" in entry["message"]
    assert _tree(site.root) == before
    assert list(scratch.iterdir()) == []


def test_verify_passes_after_apply_and_fails_again_after_revert(site: Site, scratch: Path) -> None:
    if FORM_BY_RELEASE[site.version] != BUGGY:
        pytest.skip(f"{site.version} does not carry the buggy form")
    env = site.env(TMPDIR=str(scratch))
    assert run_hfpatch("apply", env=env).code == 0
    done = run_hfpatch("verify", env=env)
    assert done.code == 0, done.out + done.err
    assert "the patch is applied and in effect" in done.out
    assert run_hfpatch("revert", env=env).code == 0
    assert run_hfpatch("verify", env=env).code == 1
    assert list(scratch.iterdir()) == []


def test_verify_catches_stale_bytecode_that_reading_the_file_cannot_see(site: Site, scratch: Path) -> None:
    if FORM_BY_RELEASE[site.version] != BUGGY:
        pytest.skip(f"{site.version} does not carry the buggy form")
    env = site.env(TMPDIR=str(scratch))
    original = site.file.read_bytes()
    assert run_hfpatch("apply", env=env).code == 0
    # what a Dockerfile `sed` over a pre-compiled image leaves: the old code in an unchecked-hash .pyc
    stale_source = scratch / "dynamic_module_utils.py"
    stale_source.write_bytes(original)
    pyc = site.file.parent / "__pycache__" / f"dynamic_module_utils.{__import__('sys').implementation.cache_tag}.pyc"
    py_compile.compile(
        str(stale_source), cfile=str(pyc), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    stale_source.unlink()
    assert run_hfpatch("verify", env=env).code == 1
    check = run_hfpatch("check", env=env)
    assert check.code == 1
    assert "bytecode" in check.out
    assert run_hfpatch("apply", env=env).code == 0
    assert run_hfpatch("verify", env=env).code == 0


def test_verify_without_transformers_has_nothing_to_verify(tmp_path: Path) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    done = run_hfpatch("verify", python=str(tmp_path / "bare" / "bin" / "python"))
    assert done.code == 0
    assert "nothing to verify" in done.out
