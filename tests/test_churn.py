"""pip changes transformers under hfpatch's feet: upgrade, downgrade, reinstall, uninstall, a second copy on the path.

Real venvs, real pip. After each change `check` tells the truth, `apply` heals, and `revert` never writes the old
release's bytes or RECORD over what pip installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PATCH_ID, TARGET, Release, Venv, condition_of, make_site, make_venv, run_hfpatch, sha256_of
from releases import BUGGY, FORM_BY_RELEASE, UPSTREAM_FIXED_FILE_SHA256


@pytest.fixture
def buggy_release(release: Release) -> Release:
    if FORM_BY_RELEASE.get(release.version) != BUGGY:
        pytest.skip(f"transformers {release.version} does not carry the code the patch is for")
    return release


@dataclass(frozen=True)
class Installed:
    """What pip left on disk for transformers: the target, and the whole dist-info (RECORD and METADATA)."""

    target: bytes | None
    dist_info: dict[str, bytes]

    @classmethod
    def read(cls, venv: Venv) -> Installed:
        target = venv.site_packages / TARGET
        dist_info = {
            f"{path.parent.name}/{path.name}": path.read_bytes()
            for path in venv.site_packages.glob("transformers-*.dist-info/*")
            if path.is_file()
        }
        return cls(target.read_bytes() if target.exists() else None, dist_info)


# pip operation -> (its arguments, check's exit code and condition after it, with hfpatch's patch still recorded)
CHURN = {
    "force-reinstall": (["install", "--no-deps", "--no-compile", "--force-reinstall", "transformers=={release}"], 1,
                        "dropped"),
    "upgrade": (["install", "--no-deps", "--no-compile", "transformers==5.13.0"], 0, "fixed-upstream"),
    "downgrade": (["install", "--no-deps", "--no-compile", "transformers==5.9.0"], 0, "not-applicable"),
    "uninstall": (["uninstall", "-y", "transformers"], 0, "not-installed"),
}  # fmt: skip


def _pip(venv: Venv, operation: str, release: Release) -> None:
    args, _, _ = CHURN[operation]
    venv.pip(*(arg.format(release=release.version) for arg in args))


def _hfpatch(command: str, venv: Venv) -> tuple[int, str, str]:
    done = run_hfpatch(command, python=venv.python)
    assert "Traceback" not in done.err, done.err
    return done.code, condition_of(done), done.out + done.err


@pytest.mark.parametrize("operation", list(CHURN))
def test_pip_changes_transformers_after_apply(buggy_release: Release, tmp_path: Path, operation: str) -> None:
    venv = make_venv(tmp_path / "venv", buggy_release.version)
    assert _hfpatch("apply", venv)[0] == 0
    _pip(venv, operation, buggy_release)
    installed = Installed.read(venv)
    code, condition, said = _hfpatch("check", venv)
    _, expected_code, expected_condition = CHURN[operation]
    assert (code, condition) == (expected_code, expected_condition), said
    if operation in ("upgrade", "downgrade"):
        assert f"stale record: hfpatch patched transformers {buggy_release.version}" in said
    code, _, said = _hfpatch("revert", venv)
    assert code == 0, said
    assert Installed.read(venv) == installed, "revert wrote over what pip installed"
    _heal(venv, operation, installed)
    if operation == "uninstall":
        # revert cleared the record the uninstall left behind; the same release installed again starts afresh
        assert not (venv.site_packages / ".hfpatch" / PATCH_ID).exists()
        venv.pip("install", "--no-deps", "--no-compile", f"transformers=={buggy_release.version}")
        assert _hfpatch("check", venv)[:2] == (1, "needs-patch")
        assert _hfpatch("apply", venv)[:2] == (0, "patched")
        assert _hfpatch("check", venv)[:2] == (0, "applied")


def test_pip_changes_transformers_after_apply_and_revert(buggy_release: Release, tmp_path: Path) -> None:
    """A reverted environment leaves nothing that confuses hfpatch later: every pip change in turn, one venv."""
    venv = make_venv(tmp_path / "venv", buggy_release.version)
    assert _hfpatch("apply", venv)[0] == 0
    assert _hfpatch("revert", venv)[0] == 0
    for operation in CHURN:
        _pip(venv, operation, buggy_release)
        installed = Installed.read(venv)
        code, condition, said = _hfpatch("check", venv)
        _, expected_code, expected_condition = CHURN[operation]
        expected_condition = "needs-patch" if expected_condition == "dropped" else expected_condition
        assert (code, condition) == (expected_code, expected_condition), f"{operation}: {said}"
        assert "stale" not in said
        _heal(venv, operation, installed)


def _heal(venv: Venv, operation: str, installed: Installed) -> None:
    """apply brings every outcome of the churn to where it must be, and revert takes it back to pip's files."""
    code, action, said = _hfpatch("apply", venv)
    assert code == 0, said
    if operation == "force-reinstall":
        assert action == "patched"
        assert sha256_of(venv.site_packages / TARGET) == UPSTREAM_FIXED_FILE_SHA256
        assert _hfpatch("check", venv)[:2] == (0, "applied")
        assert _hfpatch("revert", venv)[0] == 0
    else:
        assert action == "nothing-to-do", said
        check = _hfpatch("check", venv)
        assert check[0] == 0 and "stale" not in check[2], check[2]
    assert Installed.read(venv) == installed
    assert not (venv.site_packages / ".hfpatch" / PATCH_ID).exists()


def test_revert_clears_the_state_of_an_uninstalled_transformers(buggy_release: Release, tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv", buggy_release.version)
    assert _hfpatch("apply", venv)[0] == 0
    venv.pip("uninstall", "-y", "transformers")
    check = run_hfpatch("check", python=venv.python)
    assert check.code == 0
    assert "uninstalled transformers" in check.out
    assert _hfpatch("revert", venv)[0] == 0
    assert not (venv.site_packages / ".hfpatch" / PATCH_ID).exists()
    assert "uninstalled" not in run_hfpatch("check", python=venv.python).out


def test_a_copy_earlier_on_the_path_is_the_one_patched_and_named(buggy_release: Release, tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv", "5.13.0")
    site = make_site(buggy_release, tmp_path / "site")
    shadowed = Installed.read(venv)
    original = site.file.read_bytes()
    check = run_hfpatch("check", python=venv.python, env=site.env())
    assert (check.code, condition_of(check)) == (1, "needs-patch")
    assert f"transformers {buggy_release.version} at {site.root / 'transformers'}" in check.out
    done = run_hfpatch("apply", python=venv.python, env=site.env())
    assert done.code == 0, done.err
    assert f"patched {site.file}" in done.out
    assert sha256_of(site.file) == UPSTREAM_FIXED_FILE_SHA256
    assert (site.state_dir / PATCH_ID / "original").read_bytes() == original
    assert Installed.read(venv) == shadowed
    assert not (venv.site_packages / ".hfpatch").exists()
    without = run_hfpatch("check", python=venv.python)
    assert (without.code, condition_of(without)) == (0, "fixed-upstream")
    assert f"transformers 5.13.0 at {venv.site_packages / 'transformers'}" in without.out
    assert run_hfpatch("revert", python=venv.python, env=site.env()).code == 0
    assert site.file.read_bytes() == original
