"""Every built-in patch on the installed release, proven with the real code.

On a release that needs the patch: the probe shows the bug, `apply` turns the file into the one the catalog
records, the probe then works, and `revert` brings back the original bytes and the bug. On any other release of the
patch's matrix, the probe works without hfpatch touching anything. Each runs on a private copy of the release.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import Release
from releases import MATRIX
from support import clean_env

from hfpatch import catalog, classify, entry
from hfpatch.entry import Patch, Verdict

pytestmark = pytest.mark.transformers

PATCHES = [entry.load(directory) for directory in catalog.entry_dirs([catalog.builtin_catalog()]).values()]


def _in_matrix(release: Release, patch: Patch) -> None:
    if release.version not in MATRIX.get(patch.id, []):
        pytest.skip(f"transformers {release.version} is not in the release matrix of {patch.id}")


def _private_copy(release: Release, root: Path) -> Path:
    """The release's package and dist-info, hard-linked, except the files hfpatch writes: those are copies."""
    shutil.copytree(release.root / "transformers", root / "transformers", copy_function=os.link)
    shutil.copytree(release.dist_info, root / release.dist_info.name)
    for private in [root / file.file for patch in PATCHES for file in patch.files] + [
        root / release.dist_info.name / "RECORD"
    ]:
        if private.exists():
            data = private.read_bytes()
            private.unlink()
            private.write_bytes(data)
    return root


def _hfpatch(site: Path, patch: Patch, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hfpatch", *args, "--patch", patch.id]
    return subprocess.run(
        command,
        env=clean_env(PYTHONPATH=str(site)),
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _probe(site: Path, patch: Patch) -> dict[str, object]:
    """The probe as `verify` runs it, straight: `verify` does not run it where the patch is not needed."""
    assert patch.probe is not None
    env = clean_env(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", patch.probe.read_text(encoding="utf-8")],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict), done.stdout + done.stderr
    assert Path(str(result.get("loader_file"))).is_relative_to(site), result
    return result


@pytest.mark.parametrize("patch", PATCHES, ids=lambda patch: patch.id)
def test_the_installed_file_is_the_one_the_catalog_lists_for_this_release(release: Release, patch: Patch) -> None:
    _in_matrix(release, patch)
    for file in patch.files:
        source = (release.root / file.file).read_bytes()
        listed = [known for known in file.known_files if release.version in known.releases]
        assert listed, f"{patch.id} lists no {file.file} for transformers {release.version}; run `hfpatch new` again"
        (known,) = listed
        assert hashlib.sha256(source).hexdigest() == known.sha256, f"the release's {file.file} drifted from the catalog"
        found = classify.identify(source, patch, file, release.version)
        assert found.verdict is (known.verdict or Verdict.NOT_APPLICABLE)


@pytest.mark.parametrize("patch", PATCHES, ids=lambda patch: patch.id)
def test_the_probe_shows_the_bug_until_apply_and_again_after_revert(
    release: Release, patch: Patch, tmp_path: Path
) -> None:
    _in_matrix(release, patch)
    site = _private_copy(release, tmp_path / "site")
    paths = [site / file.file for file in patch.files]
    originals = [path.read_bytes() for path in paths]
    known = [
        file.known_file(hashlib.sha256(original).hexdigest())
        for file, original in zip(patch.files, originals, strict=True)
    ]
    if not any(each is not None and each.verdict is Verdict.NEEDS_PATCH for each in known):
        assert _probe(site, patch)["ok"] is True
        apply = _hfpatch(site, patch, "apply")
        assert apply.returncode == 0, apply.stdout + apply.stderr
        assert [path.read_bytes() for path in paths] == originals, apply.stdout
        assert not (site / ".hfpatch" / patch.id).exists() and not (site / ".hfpatch" / "files").exists()
        return
    before = _hfpatch(site, patch, "verify")
    assert before.returncode == 1 and "is live here" in before.stdout, before.stdout + before.stderr
    applied = _hfpatch(site, patch, "apply")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for path, each in zip(paths, known, strict=True):
        assert each is not None and hashlib.sha256(path.read_bytes()).hexdigest() == each.patched_sha256
    after = _hfpatch(site, patch, "verify")
    assert after.returncode == 0 and f"{patch.id}: verified:" in after.stdout, after.stdout + after.stderr
    reverted = _hfpatch(site, patch, "revert")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert [path.read_bytes() for path in paths] == originals
    again = _hfpatch(site, patch, "verify")
    assert again.returncode == 1 and "is live here" in again.stdout, again.stdout + again.stderr
