"""Every built-in patch on the release of its distribution that the session installed, proven with the real code.

On a release that needs the patch: the probe shows the bug, `apply` turns each file into the one the catalog
records, the probe then works, and `revert` brings back the original bytes and the bug. On any other release of the
patch's proof, the probe works without hfpatch touching anything. Each runs on a private copy of the release.

A session installs one release (`nox -t matrix`: the releases tests/releases.py's PROOF names; `nox -s
every_release`: every release an entry names) and says which in HFPATCH_EXPECT_RELEASE; a patch whose probe needs
what the session did not install (torch) is proven in the session that installs it, and only there: that session
proves no other patch (every import of transformers costs seconds more beside torch).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from releases import PROBE_NEEDS, PROOF
from support import clean_env

from hfpatch import catalog, classify, entry, versions
from hfpatch.entry import Patch, Verdict

pytestmark = pytest.mark.transformers

PATCHES = [entry.load(directory) for directory in catalog.entry_dirs([catalog.builtin_catalog()]).values()]
EXPECT_RELEASE = "HFPATCH_EXPECT_RELEASE"  # DIST==VERSION: what the session installed; "every" for every_release
EXPECT_NEEDS = "HFPATCH_EXPECT_PROBE_NEEDS"  # "1": the session installed what the probes need (release_torch)


@dataclass(frozen=True)
class Installed:
    """A distribution as the test environment has it."""

    version: str
    root: Path  # site-packages
    dist_info: Path


def _installed(distribution: str) -> Installed | None:
    try:
        found = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    root = Path(str(found.locate_file("")))
    # A dist-info directory is named NAME-VERSION, NAME with '-' and '.' as '_' (the wheel spec).
    (dist_info,) = [
        path
        for path in root.glob("*.dist-info")
        if canonicalize_name(path.name.split("-")[0]) == canonicalize_name(distribution)
    ]
    return Installed(found.version, root, dist_info)


def _proven_here(patch: Patch) -> Installed:
    """The installed release, where the session proves the patch on it; otherwise the test skips, saying why."""
    installed = _installed(patch.distribution)
    if installed is None:
        pytest.skip(f"{patch.distribution} is not installed here (the nox matrix installs one release per session)")
    expected = os.environ.get(EXPECT_RELEASE, "")
    session_distribution, separator, _ = expected.partition("==")
    if separator and canonicalize_name(session_distribution) != canonicalize_name(patch.distribution):
        # release_torch installs each release over the one before: diffusers stays beside every transformers after it
        pytest.skip(f"the session installed {expected}: {patch.id} is proven where {patch.distribution} is installed")
    if expected != "every" and installed.version not in PROOF.get(patch.id, ("", []))[1]:
        pytest.skip(f"{patch.distribution} {installed.version} is not among the releases {patch.id} is proven on")
    if expected == "every" and not _written_for(patch, installed.version):
        pytest.skip(f"{patch.distribution} {installed.version} is outside the releases {patch.id} was written from")
    if os.environ.get(EXPECT_NEEDS) == "1" and patch.id not in PROBE_NEEDS:
        pytest.skip(
            f"{patch.id} is proven in the release session of {patch.distribution}=={installed.version}, without torch"
        )
    missing = [need for need in PROBE_NEEDS.get(patch.id, []) if importlib.util.find_spec(_module(need)) is None]
    if missing and os.environ.get(EXPECT_NEEDS) == "1":
        pytest.fail(f"the session should have installed {', '.join(missing)} for the probe of {patch.id}")
    if missing:
        pytest.skip(f"the probe of {patch.id} needs {', '.join(missing)} (the release_torch session installs it)")
    return installed


def _written_for(patch: Patch, version: str) -> bool:
    """The release is within those the entry was written from (its releases_read), where it says."""
    if patch.releases_read is None:
        return True
    oldest, newest = patch.releases_read
    return not versions.is_older(version, oldest) and not versions.is_older(newest, version)


def _module(requirement: str) -> str:
    return requirement.split("==")[0].strip().replace("-", "_")


def _private_copy(installed: Installed, patch: Patch, root: Path) -> Path:
    """The release's package and dist-info, hard-linked, except the files hfpatch writes: those are copies."""
    package = patch.files[0].file.split("/")[0]
    shutil.copytree(installed.root / package, root / package, copy_function=os.link)
    shutil.copytree(installed.dist_info, root / installed.dist_info.name)
    for private in [root / file.file for file in patch.files] + [root / installed.dist_info.name / "RECORD"]:
        if private.exists():
            data = private.read_bytes()
            private.unlink()
            private.write_bytes(data)
    return root


def _hfpatch(site: Path, patch_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`hfpatch ARGS --patch ID` on the site (its package first on the path), from a directory that is not it."""
    command = [sys.executable, "-m", "hfpatch", *args, "--patch", patch_id]
    return subprocess.run(
        command,
        env=clean_env(PYTHONPATH=str(site)),
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """What hfpatch said, its lines joined: it wraps a sentence over 120 characters between words, so a phrase can
    straddle a line break where the paths are long (a CI machine's temporary directory)."""
    return " ".join(done.stdout.split())


def _probe(site: Path, patch: Patch) -> dict[str, object]:
    """The probe, run straight as `verify` runs it: `verify` does not run it where the patch is not needed."""
    assert patch.probe is not None
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, "-c", patch.probe.read_text(encoding="utf-8")],
            env=clean_env(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", HF_HUB_OFFLINE="1", HF_HOME=scratch),
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict), done.stdout + done.stderr
    assert Path(str(result.get("loader_file"))).is_relative_to(site), result
    return result


def test_the_session_installed_the_release_it_names() -> None:
    expected = os.environ.get(EXPECT_RELEASE)
    if expected in (None, "every"):
        pytest.skip(f"{EXPECT_RELEASE} names no one release (nox sets it)")
    distribution, _, version = expected.partition("==")
    installed = _installed(distribution)
    assert installed is not None and installed.version == version, f"the session should have installed {expected}"
    proven = [patch_id for patch_id, (dist, releases) in PROOF.items() if dist == distribution and version in releases]
    assert proven, f"no patch is proven on {expected}: the session has nothing to do"


@pytest.mark.parametrize("patch", PATCHES, ids=lambda patch: patch.id)
def test_the_installed_files_are_those_the_catalog_lists_for_this_release(patch: Patch) -> None:
    installed = _proven_here(patch)
    for file in patch.files:
        listed = [known for known in file.known_files if installed.version in known.releases]
        if not listed and not (installed.root / file.file).exists():
            continue  # a file the release never shipped (a script of another line): the entry leaves it alone
        source = (installed.root / file.file).read_bytes()
        assert listed, f"{patch.id} lists no {file.file} for {patch.distribution} {installed.version}; run new again"
        (known,) = listed
        assert hashlib.sha256(source).hexdigest() == known.sha256, f"the release's {file.file} drifted from the catalog"
        found = classify.identify(source, patch, file, installed.version)
        assert found.verdict is (None if known.code_unknown else known.verdict or Verdict.NOT_APPLICABLE)


@pytest.mark.parametrize("patch", PATCHES, ids=lambda patch: patch.id)
def test_the_probe_shows_the_bug_until_apply_and_again_after_revert(patch: Patch, tmp_path: Path) -> None:
    installed = _proven_here(patch)
    site = _private_copy(installed, patch, tmp_path / "site")
    paths = [site / file.file for file in patch.files]
    originals = [path.read_bytes() if path.exists() else None for path in paths]
    known = [
        None if original is None else file.known_file(hashlib.sha256(original).hexdigest())
        for file, original in zip(patch.files, originals, strict=True)
    ]
    if not any(each is not None and each.verdict is Verdict.NEEDS_PATCH for each in known):
        result = _probe(site, patch)
        if result["ok"] is not True:
            # A release the patch leaves alone may have the bug in a form the entry does not carry (huggingface_hub
            # 1.0.1 for -3579): never one fixed upstream, and the entry's about says so, naming the release.
            assert not all(each is not None and each.verdict is Verdict.FIXED for each in known), result
            about = " ".join(patch.about)
            assert installed.version in about, f"{patch.id} leaves {installed.version} alone unsaid: {result}"
        apply = _hfpatch(site, patch.id, "apply")
        assert apply.returncode == 0, apply.stdout + apply.stderr
        assert [path.read_bytes() if path.exists() else None for path in paths] == originals, apply.stdout
        assert not (site / ".hfpatch" / patch.id).exists() and not (site / ".hfpatch" / "files").exists()
        return
    before = _hfpatch(site, patch.id, "verify")
    assert before.returncode == 1 and "is live here" in _said(before), before.stdout + before.stderr
    applied = _hfpatch(site, patch.id, "apply")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for path, each in zip(paths, known, strict=True):
        if each is not None and each.patched_sha256 is not None:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == each.patched_sha256, path
    after = _hfpatch(site, patch.id, "verify")
    assert after.returncode == 0 and f"{patch.id}: verified:" in _said(after), after.stdout + after.stderr
    reverted = _hfpatch(site, patch.id, "revert")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert [path.read_bytes() if path.exists() else None for path in paths] == originals
    again = _hfpatch(site, patch.id, "verify")
    assert again.returncode == 1 and "is live here" in _said(again), again.stdout + again.stderr


README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
FROM_A_BUILD = "transformers==4.57.6"  # the release the README's --fixed-from example backports the fix to


def test_the_readme_fix_from_a_pre_release_wheel_is_carried_to_the_release_it_names(tmp_path: Path) -> None:
    """The README's --fixed-from lines, as written: the fix of CVE-2026-1839 from the 5.0.0rc3 wheel (a build that no
    release of 4.x has) becomes an entry that, with the built-in entry's probe, shows the hole on 4.57.6, closes it
    on apply and opens it again on revert. The wheels come from the package index."""
    import re

    (patch,) = [each for each in PATCHES if each.id == "transformers-43140"]
    installed = _installed("transformers")
    if installed is None or f"transformers=={installed.version}" != FROM_A_BUILD:
        pytest.skip(f"the README's example backports to {FROM_A_BUILD}; the release_torch session installs it")
    installed = _proven_here(patch)  # torch and accelerate, which the probe needs
    (block,) = [text for text in re.findall(r"^```sh\n(.*?)^```$", README, re.M | re.S) if "--fixed-from" in text]
    block = block.replace("/tmp/try", str(tmp_path / "try"))  # the README's scratch catalog, here the test's
    env = clean_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    written = subprocess.run(
        ["bash", "-c", f"set -e\n{block}"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert written.returncode == 0, written.stdout + written.stderr
    table = {line.split()[0]: line.split()[2] for line in written.stdout.splitlines() if re.match(r"\d+\.\d+", line)}
    assert table.get(installed.version) == "needs-patch", written.stdout
    (catalog_dir,) = {Path(part) for part in re.findall(r"--catalog (\S+)", block)}
    (patch_id,) = re.findall(r"hfpatch new (\S+)", block)
    own = tmp_path / catalog_dir / patch_id
    assert patch.probe is not None
    shutil.copy2(patch.probe, own / "probe.py")  # new wrote a skeleton; the built-in entry's probe runs the hole
    site = _private_copy(installed, patch, tmp_path / "site")
    original = (site / patch.files[0].file).read_bytes()

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return _hfpatch(site, patch_id, command, "--catalog", str(tmp_path / catalog_dir))

    before = run("verify")
    assert before.returncode == 1 and "is live here" in _said(before), before.stdout + before.stderr
    applied = run("apply")
    assert applied.returncode == 0 and f"{patch_id}: patched:" in _said(applied), applied.stdout + applied.stderr
    after = run("verify")
    assert after.returncode == 0 and f"{patch_id}: verified:" in _said(after), after.stdout + after.stderr
    reverted = run("revert")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert (site / patch.files[0].file).read_bytes() == original
    again = run("verify")
    assert again.returncode == 1 and "is live here" in _said(again), again.stdout + again.stderr
