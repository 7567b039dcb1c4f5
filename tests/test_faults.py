"""hfpatch under attack: killed at every step, run many times at once, on read-only mounts, links and hard links.

Every run is a real process on a private copy of the installed release. After anything at all, the target holds
exactly the original bytes or exactly the patched ones, a patched file has its backup, and the next plain
`hfpatch apply` or `hfpatch revert` finishes the job without anyone cleaning up by hand.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import importlib.util
import json
import os
import py_compile
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    PATCH_ID,
    TARGET,
    Completed,
    Site,
    condition_of,
    hfpatch_command,
    run_hfpatch,
    start_hfpatch,
    tree,
)
from releases import BUGGY, FORM_BY_RELEASE, UPSTREAM_FIXED_FILE_SHA256

from hfpatch.analysis import patched
from hfpatch.catalog import Patch

APPLY_FAULTS = [
    "apply:after-backup",
    "apply:after-record-applying",
    "apply:after-write",
    "apply:after-RECORD",
    "apply:after-bytecode",
]
REVERT_FAULTS = [
    "revert:after-record-reverting",
    "revert:after-write",
    "revert:after-RECORD",
    "revert:after-bytecode",
]
KILLED = -signal.SIGKILL


@dataclass(frozen=True)
class Known:
    """Everything an environment may hold at any instant: the original or the patched file, and their RECORDs."""

    site: Site
    original: bytes
    patched: bytes
    record_before: bytes
    record_after: bytes

    @property
    def backup(self) -> Path:
        return self.site.state_dir / PATCH_ID / "original"

    @property
    def state(self) -> Path:
        return self.site.state_dir / PATCH_ID / "state.json"

    @property
    def pyc(self) -> Path:
        return Path(importlib.util.cache_from_source(str(self.site.file)))


@pytest.fixture
def known(buggy_site: Site, patch: Patch) -> Known:
    """The buggy site, with unchecked-hash bytecode of the original: the kind Python runs without a look."""
    site = buggy_site
    original, record_before = site.file.read_bytes(), site.record.read_bytes()
    new = patched(original, patch)
    assert hashlib.sha256(new).hexdigest() == UPSTREAM_FIXED_FILE_SHA256
    digest = base64.urlsafe_b64encode(hashlib.sha256(new).digest()).rstrip(b"=").decode()
    lines = record_before.decode().splitlines(keepends=True)
    after = [f"{TARGET},sha256={digest},{len(new)}\n" if line.startswith(f"{TARGET},") else line for line in lines]
    py_compile.compile(str(site.file), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return Known(site, original, new, record_before, "".join(after).encode())


def assert_whole(known: Known) -> str:
    """The environment is in a state a crash may leave: never a mix. Returns which file is in place."""
    site = known.site
    data = site.file.read_bytes()
    assert data in (known.original, known.patched), "the target holds neither the original nor the patched bytes"
    assert site.record.read_bytes() in (known.record_before, known.record_after), "RECORD is half-written"
    assert not [path for path in site.root.rglob("*.tmp") if ".hfpatch-" in path.name], "temporary files left"
    if known.state.exists():
        assert json.loads(known.state.read_text())["phase"] in {"applying", "applied", "reverting"}
    if data == known.patched:
        assert known.backup.read_bytes() == known.original, "a patched file without its backup"
        return "patched"
    return "original"


def assert_applied(known: Known) -> None:
    site = known.site
    assert site.file.read_bytes() == known.patched
    assert site.record.read_bytes() == known.record_after
    assert known.backup.read_bytes() == known.original
    assert json.loads(known.state.read_text())["phase"] == "applied"
    _assert_bytecode_runs(known, known.patched)
    check = run_hfpatch("check", env=site.env())
    assert (check.code, "applied") == (0, condition_of(check)), check.out + check.err


def assert_reverted(known: Known) -> None:
    site = known.site
    assert site.file.read_bytes() == known.original
    assert site.record.read_bytes() == known.record_before
    assert not (site.state_dir / PATCH_ID).exists(), "revert left hfpatch state behind"
    _assert_bytecode_runs(known, known.original)
    check = run_hfpatch("check", env=site.env())
    assert (check.code, "needs-patch") == (1, condition_of(check)), check.out + check.err


def _assert_bytecode_runs(known: Known, source: bytes) -> None:
    if known.pyc.exists():
        assert known.pyc.read_bytes()[8:16] == importlib.util.source_hash(source), "stale bytecode would run"


def _no_traceback(*runs: Completed) -> None:
    for done in runs:
        assert "Traceback" not in done.err, done.err


# ------------------------------------------------------------------------------------------------------ crashes


@pytest.mark.parametrize("then", ["apply", "revert"])
@pytest.mark.parametrize("fault", APPLY_FAULTS)
def test_an_apply_killed_at_any_step_leaves_a_whole_file_and_converges(known: Known, fault: str, then: str) -> None:
    env = known.site.env()
    killed = run_hfpatch("apply", env=known.site.env(HFPATCH_FAULT=fault))
    assert killed.code == KILLED, f"never reached {fault}: {killed.out}{killed.err}"
    assert_whole(known)
    check = run_hfpatch("check", env=env)
    assert check.code == 1
    assert condition_of(check) == ("needs-patch" if fault == "apply:after-backup" else "incomplete")
    done = run_hfpatch(then, env=env)
    _no_traceback(killed, check, done)
    assert done.code == 0, done.err
    if then == "apply":
        assert_applied(known)
        assert run_hfpatch("revert", env=env).code == 0
    assert_reverted(known)


@pytest.mark.parametrize("then", ["revert", "apply"])
@pytest.mark.parametrize("fault", REVERT_FAULTS)
def test_a_revert_killed_at_any_step_leaves_a_whole_file_and_converges(known: Known, fault: str, then: str) -> None:
    env = known.site.env()
    assert run_hfpatch("apply", env=env).code == 0
    killed = run_hfpatch("revert", env=known.site.env(HFPATCH_FAULT=fault))
    assert killed.code == KILLED, f"never reached {fault}: {killed.out}{killed.err}"
    assert_whole(known)
    check = run_hfpatch("check", env=env)
    assert (check.code, condition_of(check)) == (1, "incomplete")
    done = run_hfpatch(then, env=env)
    _no_traceback(killed, check, done)
    assert done.code == 0, done.err
    if then == "revert":
        assert_reverted(known)
        assert run_hfpatch("apply", env=env).code == 0
    assert_applied(known)


def test_crash_after_crash_in_any_order_never_leaves_a_mix(known: Known) -> None:
    """Runs killed one after the other at random steps, nobody finishing in between: still whole, still healable."""
    rng = random.Random(46618)
    env = known.site.env()
    for _ in range(16):
        command = rng.choice(["apply", "revert"])
        fault = rng.choice(APPLY_FAULTS if command == "apply" else REVERT_FAULTS)
        done = run_hfpatch(command, env=known.site.env(HFPATCH_FAULT=fault))
        assert done.code in (KILLED, 0), done.err
        assert_whole(known)
    assert run_hfpatch("apply", env=env).code == 0
    assert_applied(known)
    assert run_hfpatch("revert", env=env).code == 0
    assert_reverted(known)


# -------------------------------------------------------------------------------------------------- concurrency


def _run_together(known: Known, commands: list[tuple[str, str | None]]) -> list[tuple[str, str | None, Completed]]:
    processes = [
        (command, fault, start_hfpatch(command, env=known.site.env(**({"HFPATCH_FAULT": fault} if fault else {}))))
        for command, fault in commands
    ]
    finished = []
    for command, fault, process in processes:
        out, err = process.communicate(timeout=240)
        finished.append((command, fault, Completed(process.returncode, out, err)))
    return finished


@pytest.mark.parametrize("start", ["original", "patched"])
def test_many_applies_and_reverts_at_once_serialise_on_the_lock(known: Known, start: str) -> None:
    env = known.site.env()
    if start == "patched":
        assert run_hfpatch("apply", env=env).code == 0
    for command, _, done in _run_together(known, [("apply", None), ("revert", None)] * 4):
        assert done.code == 0, f"{command}: {done.err}"
        _no_traceback(done)
    if assert_whole(known) == "patched":
        assert_applied(known)
    else:
        assert_reverted(known)


def test_runs_killed_among_concurrent_runs_block_nobody(known: Known) -> None:
    mix: list[tuple[str, str | None]] = [
        ("apply", "apply:after-write"),
        ("revert", None),
        ("apply", None),
        ("revert", "revert:after-write"),
        ("apply", None),
        ("revert", None),
        ("apply", "apply:after-RECORD"),
        ("apply", None),
    ]
    for command, fault, done in _run_together(known, mix):
        # A run aimed at a fault may find nothing to do before it reaches it; then it exits 0.
        assert done.code in ((KILLED, 0) if fault else (0,)), f"{command} {fault}: {done.err}"
        _no_traceback(done)
    assert_whole(known)
    env = known.site.env()
    assert run_hfpatch("apply", env=env).code == 0
    assert_applied(known)
    assert run_hfpatch("revert", env=env).code == 0
    assert_reverted(known)


def test_runs_at_once_where_the_patch_is_not_needed_change_nothing(site: Site) -> None:
    if FORM_BY_RELEASE[site.version] == BUGGY:
        pytest.skip(f"transformers {site.version} needs the patch")
    before = tree(site.root)
    processes = [start_hfpatch(command, env=site.env()) for command in ["apply", "revert", "check", "apply"] * 2]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert "Traceback" not in err
    assert tree(site.root) == before
    assert not site.state_dir.exists()


_HOLD_THE_LOCK = """
import fcntl, os, sys, time
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(descriptor, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("command", ["apply", "revert"])
def test_a_lock_whose_holder_was_killed_never_blocks_the_next_run(known: Known, command: str) -> None:
    env = known.site.env()
    if command == "revert":
        assert run_hfpatch("apply", env=env).code == 0
    lock = known.site.state_dir / "lock"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THE_LOCK, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        waiting = start_hfpatch(command, env=env)
        time.sleep(1.5)
        assert waiting.poll() is None, "hfpatch did not wait for the lock"
        assert_whole(known)
    finally:
        holder.kill()
        holder.wait()
    _, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, err
    (assert_applied if command == "apply" else assert_reverted)(known)


# ----------------------------------------------------------------------------------------------------- read-only


_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 99; shift; exec "$@"'


def _run_read_only(site: Site, *args: str) -> Completed:
    """hfpatch in a private mount namespace where the site copy is a read-only bind mount, as in a container."""
    command = ["unshare", "-m", "sh", "-c", _READ_ONLY, "sh", str(site.root), *hfpatch_command(*args)]
    done = subprocess.run(
        command, capture_output=True, text=True, env=site.env(), cwd=tempfile.gettempdir(), timeout=120, check=False
    )
    if done.returncode == 99:
        pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()}")
    return Completed(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def read_only_mounts(tmp_path_factory: pytest.TempPathFactory) -> None:
    probe = tmp_path_factory.mktemp("read-only-probe")
    command = ["unshare", "-m", "sh", "-c", _READ_ONLY, "sh", str(probe), "touch", str(probe / "x")]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except OSError as error:
        pytest.skip(f"cannot run unshare: {error}")
    if done.returncode == 0 or "Read-only file system" not in done.stderr:
        pytest.skip(
            f"read-only bind mounts are not permitted here: {done.stderr.strip() or 'the mount stays writable'}"
        )


def _says_read_only(done: Completed) -> None:
    assert done.code == 2
    assert "read-only" in done.err and "image build" in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1, done.err
    _no_traceback(done)


@pytest.mark.usefixtures("read_only_mounts")
def test_apply_on_a_read_only_environment_says_so_and_changes_nothing(known: Known) -> None:
    site = known.site
    before = tree(site.root)
    check = _run_read_only(site, "check")
    assert (check.code, condition_of(check)) == (1, "needs-patch")
    _says_read_only(_run_read_only(site, "apply"))
    assert _run_read_only(site, "revert").code == 0
    assert tree(site.root) == before
    assert not site.state_dir.exists()


@pytest.mark.usefixtures("read_only_mounts")
def test_a_patched_environment_made_read_only_checks_green_and_refuses_revert(known: Known) -> None:
    site = known.site
    assert run_hfpatch("apply", env=site.env()).code == 0
    before = tree(site.root)
    assert _run_read_only(site, "check").code == 0
    assert _run_read_only(site, "apply").code == 0
    _says_read_only(_run_read_only(site, "revert"))
    assert tree(site.root) == before


@pytest.mark.usefixtures("read_only_mounts")
@pytest.mark.parametrize("fault", ["apply:after-write", "revert:after-write"])
def test_an_interrupted_run_on_a_read_only_environment_is_left_for_the_image_build(known: Known, fault: str) -> None:
    site = known.site
    if fault.startswith("revert"):
        assert run_hfpatch("apply", env=site.env()).code == 0
    assert run_hfpatch(fault.split(":")[0], env=site.env(HFPATCH_FAULT=fault)).code == KILLED
    before = tree(site.root)
    assert _run_read_only(site, "check").code == 1
    _says_read_only(_run_read_only(site, "apply"))
    _says_read_only(_run_read_only(site, "revert"))
    assert tree(site.root) == before
    assert run_hfpatch("apply", env=site.env()).code == 0
    assert_applied(known)


@pytest.mark.usefixtures("read_only_mounts")
def test_a_read_only_environment_that_needs_no_patch_passes(site: Site) -> None:
    if FORM_BY_RELEASE[site.version] == BUGGY:
        pytest.skip(f"transformers {site.version} needs the patch")
    before = tree(site.root)
    for command in ("check", "apply", "revert"):
        done = _run_read_only(site, command)
        assert done.code == 0, done.err
    assert tree(site.root) == before


def test_a_read_only_filesystem_is_reported_as_one(site: Site) -> None:
    """The error path every read-only write takes, for hosts where the mount above is not permitted."""
    from hfpatch.errors import ExitCode, ReadOnlyTarget
    from hfpatch.files import describe_os_error

    error = describe_os_error(OSError(errno.EROFS, os.strerror(errno.EROFS)), site.file, "write")
    assert isinstance(error, ReadOnlyTarget)
    assert error.exit_code is ExitCode.ERROR
    assert "read-only" in str(error) and "image build" in str(error)


# --------------------------------------------------------------------------------------------------------- links


def test_other_hard_links_to_the_target_keep_their_bytes(known: Known, tmp_path: Path) -> None:
    """uv and conda install by hard-linking from a shared cache: patching one environment must not patch them all."""
    site = known.site
    cache = tmp_path / "cache"
    cache.mkdir()
    for name, path in (("module.py", site.file), ("RECORD", site.record)):
        os.link(path, cache / name)
    assert run_hfpatch("apply", env=site.env()).code == 0
    assert_applied(known)
    assert (cache / "module.py").read_bytes() == known.original
    assert (cache / "RECORD").read_bytes() == known.record_before
    assert not site.file.samefile(cache / "module.py")
    assert run_hfpatch("revert", env=site.env()).code == 0
    assert_reverted(known)
    assert (cache / "module.py").read_bytes() == known.original


def test_a_target_that_is_a_symbolic_link_is_refused(known: Known, tmp_path: Path) -> None:
    site = known.site
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_bytes(known.original)
    site.file.unlink()
    site.file.symlink_to(elsewhere)
    before = tree(site.root)
    done = run_hfpatch("apply", env=site.env())
    assert done.code == 2
    assert "symbolic link" in done.err and str(elsewhere) in done.err
    assert len(done.err.strip().splitlines()) == 1, done.err
    _no_traceback(done)
    assert tree(site.root) == before
    assert elsewhere.read_bytes() == known.original
    assert not site.state_dir.exists()


def test_a_package_directory_that_is_a_symbolic_link_is_refused(known: Known, tmp_path: Path) -> None:
    """A linked install (site-packages/transformers -> a shared tree): writing would change the shared tree."""
    import shutil

    site = known.site
    shared = tmp_path / "shared"
    shutil.move(str(site.root / "transformers"), str(shared))
    (site.root / "transformers").symlink_to(shared)
    before, shared_before = tree(site.root), tree(shared)
    done = run_hfpatch("apply", env=site.env())
    assert done.code == 2
    assert "symbolic link" in done.err and str(shared) in done.err
    _no_traceback(done)
    assert tree(site.root) == before
    assert tree(shared) == shared_before
    assert not site.state_dir.exists()


def test_a_patched_target_replaced_by_a_symbolic_link_is_not_reverted_through_it(known: Known, tmp_path: Path) -> None:
    site = known.site
    assert run_hfpatch("apply", env=site.env()).code == 0
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_bytes(known.patched)
    site.file.unlink()
    site.file.symlink_to(elsewhere)
    before = tree(site.root)
    done = run_hfpatch("revert", env=site.env())
    assert done.code == 2
    assert "symbolic link" in done.err
    _no_traceback(done)
    assert tree(site.root) == before
    assert elsewhere.read_bytes() == known.patched
