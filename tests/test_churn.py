"""pip changes transformers under hfpatch's feet: upgrade, downgrade, reinstall, uninstall, a second copy on the path.

Real venvs, real pip (which writes RECORD with CRLF line endings: every expectation here is taken from the bytes pip
wrote). After each change `check` tells the truth, `apply` heals, and `revert` never writes the old release's bytes
or RECORD over what pip installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PATCH_ID, TARGET, Release, copy_of_release, transformers_venv
from releases import UPSTREAM_FIXED_FILE_SHA256
from support import Completed, Venv, hfpatch, line_in_record, record_line, record_with_line, sha256_of

pytestmark = pytest.mark.transformers

UPGRADE, DOWNGRADE = "5.13.0", "5.9.0"


@dataclass(frozen=True)
class Installed:
    """What pip left on disk for transformers: the target, and the whole dist-info (RECORD and METADATA)."""

    target: bytes | None
    dist_info: dict[str, bytes]

    @classmethod
    def read(cls, venv: Venv) -> Installed:
        dist_info = {
            f"{path.parent.name}/{path.name}": path.read_bytes()
            for path in venv.site_packages.glob("transformers-*.dist-info/*")
            if path.is_file()
        }
        return cls(_target(venv).read_bytes() if _target(venv).exists() else None, dist_info)


@dataclass(frozen=True)
class Churn:
    pip: tuple[str, ...]
    # check's exit code and label, right after pip, with hfpatch's state from before pip still there
    check: tuple[int, str]
    # the label of apply once the state is gone: what healing the environment takes
    apply: str


CHURN = {
    "force-reinstall": Churn(("install", "--force-reinstall", "transformers=={release}"), (1, "dropped"), "patched"),
    "upgrade": Churn(("install", f"transformers=={UPGRADE}"), (0, "fixed-upstream"), "fixed-upstream"),
    "downgrade": Churn(("install", f"transformers=={DOWNGRADE}"), (0, "not-applicable"), "not-applicable"),
    # With transformers gone the environment has nothing hfpatch acts on: an error (2), whatever the command.
    "uninstall": Churn(("uninstall", "-y", "transformers"), (2, "not-installed"), "not-installed"),
}


def _pip(venv: Venv, operation: str, release: Release) -> None:
    args = [arg.format(release=release.version) for arg in CHURN[operation].pip]
    if args[0] == "install":
        args[1:1] = ["--no-deps", "--no-compile"]
    venv.pip(*args)


def _hfpatch(command: str, venv: Venv) -> tuple[int, str, str]:
    done = hfpatch(command, python=venv.python, patch=PATCH_ID)
    assert "Traceback" not in done.err, done.err
    return done.code, done.label(PATCH_ID), done.text + done.err


def _holds_state(venv: Venv) -> bool:
    state_dir = venv.site_packages / ".hfpatch"
    return state_dir.is_dir() and any(path.name != "lock" for path in state_dir.iterdir())


def _target(venv: Venv) -> Path:
    return venv.site_packages / TARGET


def _dist_info(venv: Venv) -> Path:
    (found,) = venv.site_packages.glob("transformers-*.dist-info")
    return found


def _record(venv: Venv) -> bytes:
    return (_dist_info(venv) / "RECORD").read_bytes()


@pytest.fixture
def venv(buggy_release: Release, tmp_path: Path) -> Venv:
    """A venv whose transformers, the release under test, pip installed (RECORD with CRLF)."""
    return transformers_venv(tmp_path / "venv", buggy_release.version)


def test_hfpatch_keeps_the_crlf_line_endings_of_a_record_pip_wrote(venv: Venv) -> None:
    record = _record(venv)
    assert record.endswith(b"\r\n") and record.count(b"\n") == record.count(b"\r\n"), "pip wrote LF: no test"
    before_line = line_in_record(record, TARGET)

    assert _hfpatch("apply", venv)[:2] == (0, "patched")
    assert _record(venv) == record_with_line(record, before_line, record_line(TARGET, _target(venv).read_bytes()))
    assert _hfpatch("check", venv)[:2] == (0, "applied"), "the RECORD line was not found again"

    assert _hfpatch("revert", venv)[:2] == (0, "reverted")
    assert _record(venv) == record


@pytest.mark.parametrize("operation", list(CHURN))
def test_pip_changes_transformers_after_apply(buggy_release: Release, venv: Venv, operation: str) -> None:
    assert _hfpatch("apply", venv)[0] == 0
    _pip(venv, operation, buggy_release)
    installed = Installed.read(venv)

    code, condition, said = _hfpatch("check", venv)

    assert (code, condition) == CHURN[operation].check, said
    if operation in ("upgrade", "downgrade"):
        assert f"stale state: hfpatch patched transformers {buggy_release.version}" in said
    if operation == "uninstall":
        assert f"{venv.site_packages}/.hfpatch/{PATCH_ID} still holds the state and backup" in said
    code, _, said = _hfpatch("revert", venv)
    assert code == 0, said
    assert Installed.read(venv) == installed, "revert wrote over what pip installed"
    _heal(venv, operation, installed)
    if operation == "uninstall":
        # revert cleared the state the uninstall left behind; the same release installed again starts afresh
        assert not _holds_state(venv)
        venv.pip("install", "--no-deps", "--no-compile", f"transformers=={buggy_release.version}")
        assert _hfpatch("check", venv)[:2] == (1, "needs-patch")
        assert _hfpatch("apply", venv)[:2] == (0, "patched")
        assert _hfpatch("check", venv)[:2] == (0, "applied")


def test_pip_changes_transformers_after_apply_and_revert(buggy_release: Release, venv: Venv) -> None:
    """A reverted environment leaves nothing that confuses hfpatch later: every pip change in turn, one venv."""
    assert _hfpatch("apply", venv)[0] == 0
    assert _hfpatch("revert", venv)[0] == 0
    for operation in CHURN:
        _pip(venv, operation, buggy_release)
        installed = Installed.read(venv)
        code, condition, said = _hfpatch("check", venv)
        expected = CHURN[operation].check
        assert (code, condition) == ((1, "needs-patch") if expected[1] == "dropped" else expected), said
        assert "stale" not in said and "still holds" not in said, said
        _heal(venv, operation, installed)


def _heal(venv: Venv, operation: str, installed: Installed) -> None:
    """apply brings every outcome of the churn to where it must be, and revert takes it back to pip's files."""
    code, label, said = _hfpatch("apply", venv)
    assert label == CHURN[operation].apply, said
    if operation == "uninstall":
        assert code == 2, said
        assert "none of the distributions" in said
    elif operation == "force-reinstall":
        assert code == 0, said
        assert sha256_of(_target(venv)) == UPSTREAM_FIXED_FILE_SHA256
        record = installed.dist_info[f"{_dist_info(venv).name}/RECORD"]
        patched_line = record_line(TARGET, _target(venv).read_bytes())
        assert _record(venv) == record_with_line(record, line_in_record(record, TARGET), patched_line)
        assert _hfpatch("check", venv)[:2] == (0, "applied")
        assert _hfpatch("revert", venv)[:2] == (0, "reverted")
    else:
        assert code == 0, said
        check = _hfpatch("check", venv)
        assert check[0] == 0 and "stale" not in check[2], check[2]
    assert Installed.read(venv) == installed
    assert not _holds_state(venv)


def test_a_copy_earlier_on_the_path_is_the_one_patched_and_named(buggy_release: Release, tmp_path: Path) -> None:
    venv = transformers_venv(tmp_path / "venv", UPGRADE)
    site = copy_of_release(buggy_release, tmp_path / "site")
    shadowed = Installed.read(venv)
    original = site.file.read_bytes()

    check = hfpatch("check", python=venv.python, env=site.env(), patch=PATCH_ID)
    assert (check.code, check.label(PATCH_ID)) == (1, "needs-patch")
    assert f": transformers {buggy_release.version} in {site.root}\n" in check.text
    done = hfpatch("apply", python=venv.python, env=site.env(), patch=PATCH_ID)
    assert (done.code, done.label(PATCH_ID)) == (0, "patched"), done.out + done.err
    assert f": transformers {buggy_release.version} in {site.root}\n" in done.text
    assert f" {site.relative_file} now has the fix" in done.text
    assert sha256_of(site.file) == UPSTREAM_FIXED_FILE_SHA256
    assert site.backup.read_bytes() == original
    assert Installed.read(venv) == shadowed
    assert not (venv.site_packages / ".hfpatch").exists()

    without: Completed = hfpatch("check", python=venv.python, patch=PATCH_ID)
    assert (without.code, without.label(PATCH_ID)) == (0, "fixed-upstream")
    assert f": transformers {UPGRADE} in {venv.site_packages}\n" in without.text
    assert hfpatch("revert", python=venv.python, env=site.env(), patch=PATCH_ID).code == 0
    assert site.file.read_bytes() == original
