"""hfpatch under attack, on the toy distribution: killed at every step, run many at once, on a read-only mount,
through links, shadowed on the path, and failing half-way through a write.

Every run is a real process acting on a real site. After anything at all the target holds exactly the original
bytes or exactly the patched ones, a patched file has its backup, RECORD is one of its two known forms, and the
next plain `hfpatch apply` (or `hfpatch revert`) finishes the job without anyone cleaning up by hand.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import importlib.util
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import (
    APPLY_FAULTS,
    KILLED,
    REVERT_FAULTS,
    Completed,
    Site,
    record_hash,
    run_read_only,
    succeeded,
    tree,
    unchecked_bytecode,
)
from toy import BUGGY_MODULE, FIXED_MODULE, MODULE, PATCH_ID, make_site

WAITING = "hfpatch: waiting for another hfpatch run to release"
# Long enough for any run on a loaded machine; only a broken lock ever makes a test wait this long.
LOCK_WAIT_BOUND = 60.0


# ------------------------------------------------------------------------------------------------------ helpers


def label(done: Completed) -> str:
    """What hfpatch printed for the patch: `  toypkg-1: <label>: <sentence>` -> <label>."""
    lines = [line for line in done.lines if line.startswith(f"  {PATCH_ID}: ")]
    assert len(lines) == 1, done.out + done.err
    return lines[0].split(": ")[1]


def sentence(done: Completed) -> str:
    lines = [line for line in done.lines if line.startswith(f"  {PATCH_ID}: ")]
    assert len(lines) == 1, done.out + done.err
    return lines[0].split(": ", 2)[2]


@dataclass(frozen=True)
class Known:
    """Everything the site may hold at any instant: the original or the patched file, and their two RECORDs."""

    site: Site
    original: bytes
    patched: bytes
    record_before: bytes
    record_after: bytes

    @property
    def pyc(self) -> Path:
        return Path(importlib.util.cache_from_source(str(self.site.file)))


def with_record_line(record: bytes, data: bytes) -> bytes:
    """RECORD as it must read once the target holds `data`: only the target's row differs."""
    rows = record.decode("utf-8").splitlines(keepends=True)
    row = f"{MODULE},{record_hash(data)},{len(data)}"
    return "".join(row + "\n" if line.startswith(f"{MODULE},") else line for line in rows).encode("utf-8")


def known_site(where: Path) -> Known:
    site = make_site(where)
    unchecked_bytecode(site.file)
    original, record = BUGGY_MODULE.encode(), site.record.read_bytes()
    assert site.file.read_bytes() == original
    patched = FIXED_MODULE.encode()
    return Known(site, original, patched, record, with_record_line(record, patched))


@pytest.fixture
def known(tmp_path: Path) -> Known:
    return known_site(tmp_path)


def bytecode_of(known: Known) -> str | None:
    """Whose source the cached bytecode was built from: "original", "patched", or None (no .pyc)."""
    if not known.pyc.exists():
        return None
    source_hash = known.pyc.read_bytes()[8:16]
    for name, data in (("original", known.original), ("patched", known.patched)):
        if source_hash == importlib.util.source_hash(data):
            return name
    raise AssertionError(f"{known.pyc} was built from neither the original nor the patched source")


def whole(known: Known) -> str:
    """The site is in a state a crash may leave, never a mix; returns which file is in place."""
    site = known.site
    data = site.file.read_bytes()
    assert data in (known.original, known.patched), "the target holds neither the original nor the patched bytes"
    assert site.record.read_bytes() in (known.record_before, known.record_after), "RECORD is neither known form"
    leftovers = [path for path in site.root.rglob("*") if ".hfpatch-" in path.name]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    if site.state.exists():
        assert json.loads(site.state.read_text())["phase"] in {"applying", "applied", "reverting"}
    if data == known.patched:
        assert site.backup.exists(), "a patched file without its backup"
        assert site.backup.read_bytes() == known.original, "the backup is not the original"
        return "patched"
    return "original"


def assert_applied(known: Known) -> None:
    site = known.site
    assert site.file.read_bytes() == known.patched
    assert site.record.read_bytes() == known.record_after
    assert site.backup.read_bytes() == known.original
    assert json.loads(site.state.read_text())["phase"] == "applied"
    assert bytecode_of(known) in (None, "patched"), "stale bytecode of the original would run"


def assert_reverted(known: Known) -> None:
    site = known.site
    assert site.file.read_bytes() == known.original
    assert site.record.read_bytes() == known.record_before
    assert not site.holds_state, "hfpatch's state or backup is left behind"
    assert not site.state_dir.exists(), "the last revert left hfpatch's lock behind"
    assert bytecode_of(known) in (None, "original"), "stale bytecode of the patched file would run"


def assert_checks(known: Known, code: int, condition: str) -> None:
    check = known.site.run("check")
    assert (check.code, label(check)) == (code, condition), check.out + check.err


# ------------------------------------------------------------------------------------------------------ crashes


@dataclass(frozen=True)
class Fault:
    """A fault point and exactly what a run killed there leaves: file, RECORD, state, bytecode and check's word."""

    point: str
    file: str
    record: str
    phase: str | None
    bytecode: str
    condition: str

    @property
    def command(self) -> str:
        return self.point.split(":")[0]


FAULT_TABLE = [
    Fault("apply:after-backup", "original", "before", None, "original", "needs-patch"),
    Fault("apply:after-state-applying", "original", "before", "applying", "original", "incomplete"),
    Fault("apply:after-write", "patched", "before", "applying", "original", "incomplete"),
    Fault("apply:after-RECORD", "patched", "after", "applying", "original", "incomplete"),
    Fault("apply:after-bytecode", "patched", "after", "applying", "patched", "incomplete"),
    Fault("revert:after-state-reverting", "patched", "after", "reverting", "patched", "incomplete"),
    Fault("revert:after-write", "original", "after", "reverting", "patched", "incomplete"),
    Fault("revert:after-RECORD", "original", "before", "reverting", "patched", "incomplete"),
    Fault("revert:after-bytecode", "original", "before", "reverting", "original", "incomplete"),
]


def test_the_fault_table_names_every_fault_point() -> None:
    assert [fault.point for fault in FAULT_TABLE] == APPLY_FAULTS + REVERT_FAULTS


def twin(known: Known, root: Path) -> Known:
    """A byte-for-byte copy of the site as a killed run left it, so that apply and revert each converge from it."""
    shutil.copytree(known.site.root, root, symlinks=True)
    site = dataclasses.replace(known.site, root=root)
    return Known(site, known.original, known.patched, known.record_before, known.record_after)


@pytest.mark.parametrize("fault", [pytest.param(fault, id=fault.point) for fault in FAULT_TABLE])
def test_a_run_killed_at_a_step_leaves_a_whole_file_and_plain_apply_or_revert_converges(
    known: Known, fault: Fault, tmp_path: Path
) -> None:
    site = known.site
    if fault.command == "revert":
        succeeded(site.run("apply"))
    killed = site.run(fault.command, HFPATCH_FAULT=fault.point)
    assert killed.code == KILLED, f"never reached {fault.point}: {killed.out}{killed.err}"

    assert whole(known) == fault.file
    record = {"before": known.record_before, "after": known.record_after}[fault.record]
    assert site.record.read_bytes() == record
    phase = json.loads(site.state.read_text())["phase"] if site.state.exists() else None
    assert phase == fault.phase
    assert site.backup.read_bytes() == known.original  # every fault point comes after the backup
    assert bytecode_of(known) == fault.bytecode
    assert_checks(known, 1, fault.condition)

    other = twin(known, tmp_path / "twin")
    succeeded(site.run("apply"))
    assert_applied(known)
    succeeded(other.site.run("revert"))
    assert_reverted(other)


def test_crash_after_crash_at_random_steps_never_leaves_a_mix_and_apply_converges(known: Known) -> None:
    """Runs killed one after another at random steps, nobody finishing in between: still whole, still healable."""
    rng = random.Random(46618)
    site = known.site
    killed = set()
    for _ in range(16):
        command = rng.choice(["apply", "revert"])
        fault = rng.choice(APPLY_FAULTS if command == "apply" else REVERT_FAULTS)
        done = site.run(command, HFPATCH_FAULT=fault)
        # A run aimed at a fault point may find nothing to do before it gets there (revert of an unpatched site).
        assert done.code in (KILLED, 0), f"{command} {fault}: {done.out}{done.err}"
        if done.code == KILLED:
            killed.add(command)
        whole(known)
    assert killed == {"apply", "revert"}, "the sequence must kill applies and reverts both"
    succeeded(site.run("apply"))
    assert_applied(known)
    assert_checks(known, 0, "applied")


# ------------------------------------------------------------------------------------------------- rolling back


def test_an_apply_that_fails_after_writing_the_file_puts_the_original_back(known: Known) -> None:
    """RECORD is a directory: the file is already written when updating RECORD fails."""
    site = known.site
    site.record.unlink()
    site.record.mkdir()
    done = site.run("apply")
    assert done.code == 2, done.out + done.err
    assert str(site.record.relative_to(site.root)) in sentence(done)
    assert "Traceback" not in done.err
    assert site.file.read_bytes() == known.original
    assert bytecode_of(known) in (None, "original")
    assert not site.holds_state, "a failed first apply left its state behind"

    site.record.rmdir()
    site.record.write_bytes(known.record_before)
    succeeded(site.run("apply"))
    assert_applied(known)


def test_an_apply_that_fails_after_writing_file_and_record_puts_both_back_and_the_next_run_converges(
    known: Known,
) -> None:
    """The cached .pyc is a directory: refreshing bytecode, after the file and RECORD are written, cannot remove it.

    The rollback's own bytecode refresh fails the same way, so it keeps the state (phase "applying") for the next
    run to converge from; file and RECORD are the originals all the same.
    """
    site = known.site
    known.pyc.unlink()
    known.pyc.mkdir()
    done = site.run("apply")
    assert done.code == 2, done.out + done.err
    assert str(known.pyc.relative_to(site.root)) in sentence(done)
    assert "Traceback" not in done.err
    assert site.file.read_bytes() == known.original
    assert site.record.read_bytes() == known.record_before
    assert json.loads(site.state.read_text())["phase"] == "applying"
    assert site.backup.read_bytes() == known.original
    assert_checks(known, 1, "incomplete")

    known.pyc.rmdir()
    succeeded(site.run("apply"))
    assert_applied(known)


# -------------------------------------------------------------------------------------------------- concurrency


class Watched:
    """hfpatch in the background, its stderr read line by line as it comes."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, text: str) -> bool:
        """True once stderr has a line with `text`; False when the run ends, or the bound passes, without one."""
        deadline = time.monotonic() + LOCK_WAIT_BOUND
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False
            if line is None:
                self._lines.put(None)
                return False
            self.seen.append(line)
            if text in line:
                return True

    def finish(self) -> Completed:
        assert self.process.stdout is not None
        out = self.process.stdout.read()
        code = self.process.wait(timeout=240)
        self._reader.join(timeout=30)
        while not self._lines.empty():
            line = self._lines.get_nowait()
            if line is not None:
                self.seen.append(line)
        return Completed(code, out, "".join(self.seen))


@contextlib.contextmanager
def watched(process: subprocess.Popen[str]) -> Iterator[Watched]:
    """A background run that never outlives the test, whatever the test asserts."""
    try:
        yield Watched(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def test_a_writer_waits_while_another_holds_the_lock_and_finishes_once_it_is_released(known: Known) -> None:
    """The test itself holds the lock, so the interleaving is forced: hfpatch must find it held and wait."""
    site = known.site
    lock_file = site.state_dir / "lock"
    site.state_dir.mkdir()
    lock = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    before = tree(site.root)
    with watched(site.start("apply")) as apply:
        try:
            waited = apply.wait_for(f"{WAITING} {lock_file}")
            assert waited, (
                f"hfpatch apply never said it waited for {lock_file}, which the test holds (it ended, or "
                f"{LOCK_WAIT_BOUND:.0f} s passed); its stderr: {''.join(apply.seen)!r}"
            )
            assert tree(site.root) == before, "apply wrote while another run held the lock"
        finally:
            os.close(lock)
        done = apply.finish()
    succeeded(done)
    assert label(done) == "patched"
    assert_applied(known)


def run_together(site: Site, runs: list[tuple[str, str | None]]) -> list[tuple[str, str | None, Completed]]:
    started = [
        (command, fault, site.start(command, **({"HFPATCH_FAULT": fault} if fault else {}))) for command, fault in runs
    ]
    finished = []
    for command, fault, process in started:
        out, err = process.communicate(timeout=240)
        finished.append((command, fault, Completed(process.returncode, out, err)))
    return finished


@pytest.mark.parametrize("start", ["original", "patched"])
def test_eight_applies_and_reverts_at_once_all_succeed_and_end_fully_in_one_state(known: Known, start: str) -> None:
    site = known.site
    if start == "patched":
        succeeded(site.run("apply"))
    for command, _, done in run_together(site, [("apply", None), ("revert", None)] * 4):
        assert done.code == 0, f"{command}: {done.out}{done.err}"
        assert "Traceback" not in done.err
    if whole(known) == "patched":
        assert_applied(known)
        assert_checks(known, 0, "applied")
    else:
        assert_reverted(known)
        assert_checks(known, 1, "needs-patch")


def test_runs_killed_among_concurrent_runs_block_nobody_and_apply_converges(known: Known) -> None:
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
    for command, fault, done in run_together(known.site, mix):
        # A run aimed at a fault point may find nothing to do before it gets there; then it exits 0.
        assert done.code in ((KILLED, 0) if fault else (0,)), f"{command} {fault}: {done.out}{done.err}"
        assert "Traceback" not in done.err
    whole(known)
    succeeded(known.site.run("apply"))
    assert_applied(known)
    assert_checks(known, 0, "applied")


_HOLD_THE_LOCK = """
import fcntl, os, sys, time
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(descriptor, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


def test_a_run_waiting_for_a_lock_whose_holder_is_killed_proceeds(known: Known) -> None:
    site = known.site
    lock_file = site.state_dir / "lock"
    site.state_dir.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THE_LOCK, str(lock_file)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with watched(site.start("apply")) as apply:
            assert apply.wait_for(WAITING), f"apply did not wait for the holder: {''.join(apply.seen)!r}"
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            done = apply.finish()
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)
    succeeded(done)
    assert_applied(known)


# ----------------------------------------------------------------------------------------------------- read-only


def assert_says_read_only(done: Completed) -> None:
    assert done.code == 2, done.out + done.err
    said = sentence(done)
    assert "the filesystem is read-only" in said and "image build" in said, said
    assert "Traceback" not in done.err


@pytest.mark.usefixtures("read_only_mounts")
def test_on_a_read_only_filesystem_apply_refuses_and_check_and_verify_still_report(known: Known) -> None:
    site = known.site
    before = tree(site.root)
    check = run_read_only(site, "check")
    assert (check.code, label(check)) == (1, "needs-patch")
    assert run_read_only(site, "verify").code == 1
    assert_says_read_only(run_read_only(site, "apply"))
    revert = run_read_only(site, "revert")  # hfpatch holds no state here: nothing to write, nothing refused
    assert (revert.code, label(revert)) == (0, "needs-patch"), revert.out + revert.err
    assert tree(site.root) == before
    assert not site.state_dir.exists()


@pytest.mark.usefixtures("read_only_mounts")
def test_a_patched_site_made_read_only_checks_green_and_refuses_revert(known: Known) -> None:
    site = known.site
    succeeded(site.run("apply"))
    before = tree(site.root)
    assert run_read_only(site, "check").code == 0
    assert run_read_only(site, "verify").code == 0
    assert run_read_only(site, "apply").code == 0
    assert_says_read_only(run_read_only(site, "revert"))
    assert tree(site.root) == before


@pytest.mark.usefixtures("read_only_mounts")
def test_an_interrupted_apply_on_a_read_only_filesystem_is_left_for_the_image_build(known: Known) -> None:
    site = known.site
    assert site.run("apply", HFPATCH_FAULT="apply:after-write").code == KILLED
    before = tree(site.root)
    assert run_read_only(site, "check").code == 1
    assert_says_read_only(run_read_only(site, "apply"))
    assert_says_read_only(run_read_only(site, "revert"))
    assert tree(site.root) == before
    succeeded(site.run("apply"))
    assert_applied(known)


# --------------------------------------------------------------------------------------------------------- links


Linker = Callable[[Site, Path], Path]


def link_the_file(site: Site, elsewhere: Path) -> Path:
    """site/toypkg/core.py -> elsewhere/core.py; returns where the link points."""
    elsewhere.mkdir()
    shutil.move(site.file, elsewhere / "core.py")
    site.file.symlink_to(elsewhere / "core.py")
    return elsewhere / "core.py"


def link_the_package(site: Site, elsewhere: Path) -> Path:
    """site/toypkg -> elsewhere/toypkg, as a linked (editable-style) install; returns where the link points."""
    elsewhere.mkdir()
    shutil.move(site.root / "toypkg", elsewhere / "toypkg")
    (site.root / "toypkg").symlink_to(elsewhere / "toypkg")
    return elsewhere / "toypkg"


@pytest.mark.parametrize("link", [link_the_file, link_the_package], ids=["target-file", "package-directory"])
def test_a_linked_target_is_refused_untouched_and_check_and_verify_say_why(
    known: Known, tmp_path: Path, link: Linker
) -> None:
    site = known.site
    target = link(site, tmp_path / "elsewhere")
    before, elsewhere_before = tree(site.root), tree(tmp_path / "elsewhere")

    apply = site.run("apply")
    assert apply.code == 2, apply.out + apply.err
    assert "symbolic link" in sentence(apply) and str(target) in sentence(apply), apply.out
    assert not site.state_dir.exists(), "a refused apply created hfpatch's directory or lock"
    assert tree(site.root) == before
    assert tree(tmp_path / "elsewhere") == elsewhere_before

    for command in ("check", "verify"):
        done = site.run(command)
        assert done.code == 1, done.out + done.err
        assert "symbolic link" in sentence(done) and str(target) in sentence(done), done.out
        assert "hfpatch apply" not in done.text, f"{command} suggests an apply that would refuse: {done.out}"
    assert tree(site.root) == before


def test_a_patched_target_replaced_by_a_link_is_not_reverted_through_it(known: Known, tmp_path: Path) -> None:
    site = known.site
    succeeded(site.run("apply"))
    target = link_the_file(site, tmp_path / "elsewhere")
    before = tree(site.root)
    done = site.run("revert")
    assert done.code == 2, done.out + done.err
    assert "symbolic link" in sentence(done)
    assert tree(site.root) == before
    assert target.read_bytes() == known.patched


def test_other_hard_links_to_the_target_and_record_keep_the_old_bytes(known: Known, tmp_path: Path) -> None:
    """uv and conda install by hard-linking from a shared cache: patching one environment must not patch them all."""
    site = known.site
    cache = tmp_path / "cache"
    cache.mkdir()
    os.link(site.file, cache / "core.py")
    os.link(site.record, cache / "RECORD")
    succeeded(site.run("apply"))
    assert_applied(known)
    assert (cache / "core.py").read_bytes() == known.original
    assert (cache / "RECORD").read_bytes() == known.record_before
    assert not site.file.samefile(cache / "core.py")
    assert not site.record.samefile(cache / "RECORD")


# ------------------------------------------------------------------------------------------ what Python imports


def test_with_a_second_copy_on_the_path_only_the_imported_copy_is_patched_and_named(tmp_path: Path) -> None:
    first, second = known_site(tmp_path / "first"), known_site(tmp_path / "second")
    path = f"{first.site.root}{os.pathsep}{second.site.root}"
    shadowed = tree(second.site.root)
    done = succeeded(first.site.run("apply", PYTHONPATH=path))
    assert done.lines[0].endswith(f": toypkg 1.0 in {first.site.root}")
    assert f" {MODULE} now has the fix" in done.text
    assert str(second.site.root) not in done.text
    assert_applied(first)
    assert tree(second.site.root) == shadowed
    check = second.site.run("check")  # on its own, the shadowed copy still needs the patch
    assert (check.code, label(check)) == (1, "needs-patch")


def test_stale_unchecked_bytecode_over_the_fixed_source_is_found_and_rebuilt(tmp_path: Path) -> None:
    """2.0 has the fix in its source, but an unchecked-hash .pyc of the buggy text runs instead of it."""
    site = make_site(tmp_path, version="2.0")
    site.file.write_bytes(BUGGY_MODULE.encode())
    unchecked_bytecode(site.file)
    site.file.write_bytes(FIXED_MODULE.encode())
    pyc = Path(importlib.util.cache_from_source(str(site.file)))

    check = site.run("check")
    assert (check.code, label(check)) == (1, "incomplete"), check.out + check.err
    assert "bytecode" in sentence(check)
    done = succeeded(site.run("apply"))
    assert label(done) == "refreshed-bytecode"
    assert pyc.read_bytes()[8:16] == importlib.util.source_hash(FIXED_MODULE.encode())
    assert site.file.read_bytes() == FIXED_MODULE.encode()
    check = site.run("check")
    assert (check.code, label(check)) == (0, "fixed-upstream"), check.out + check.err


# ---------------------------------------------------------------------------------------------------- interrupts


INTERRUPTED = 130


def interruption(done: Completed) -> str:
    """The one line an interrupted run writes on stderr."""
    assert done.code == INTERRUPTED, done.out + done.err
    assert "Traceback" not in done.err, done.err
    (line,) = done.err.splitlines()
    return line


@pytest.mark.parametrize("fault", [pytest.param(fault, id=fault.point) for fault in FAULT_TABLE])
def test_ctrl_c_at_a_step_exits_130_saying_what_the_site_holds_and_plain_apply_or_revert_converges(
    known: Known, fault: Fault, tmp_path: Path
) -> None:
    """A real SIGINT, which the run sends itself at the step: the site holds what a kill there leaves, and the
    sentence says it, with the commands that finish or undo it."""
    site = known.site
    if fault.command == "revert":
        succeeded(site.run("apply"))
    line = interruption(site.interrupt(fault.command, fault=fault.point))

    assert line.startswith(f"hfpatch: {fault.command} interrupted in {sys.executable} at {PATCH_ID}, now "), line
    assert f", now {fault.condition}: " in line, line
    if fault.condition == "incomplete":
        assert {"apply": "an apply", "revert": "a revert"}[fault.command] + " was interrupted" in line, line
        assert f"`hfpatch apply --patch {PATCH_ID}`" in line and f"`hfpatch revert --patch {PATCH_ID}`" in line, line
    else:
        assert f"`hfpatch apply --patch {PATCH_ID}`" in line, line
    assert whole(known) == fault.file
    assert site.record.read_bytes() == {"before": known.record_before, "after": known.record_after}[fault.record]
    phase = json.loads(site.state.read_text())["phase"] if site.state.exists() else None
    assert phase == fault.phase
    assert bytecode_of(known) == fault.bytecode
    assert_checks(known, 1, fault.condition)

    other = twin(known, tmp_path / "twin")
    succeeded(site.run("apply"))
    assert_applied(known)
    succeeded(other.site.run("revert"))
    assert_reverted(other)


def test_ctrl_c_while_waiting_for_the_lock_exits_130_and_says_nothing_was_changed(known: Known) -> None:
    """The test holds the lock, and sends SIGINT once hfpatch says it waits: the point is the test's."""
    site = known.site
    lock_file = site.state_dir / "lock"
    site.state_dir.mkdir()
    lock = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    before = tree(site.root)
    try:
        with watched(site.start("apply")) as apply:
            assert apply.wait_for(WAITING), f"apply did not wait for the lock: {''.join(apply.seen)!r}"
            apply.process.send_signal(signal.SIGINT)
            done = apply.finish()
    finally:
        os.close(lock)
    assert done.err.startswith(WAITING), done.err
    line = interruption(Completed(done.code, done.out, done.err.split("\n", 1)[1]))
    assert f"at {PATCH_ID}, now needs-patch: " in line and f"`hfpatch apply --patch {PATCH_ID}`" in line, line
    assert tree(site.root) == before
    succeeded(site.run("apply"))
    assert_applied(known)


def test_ctrl_c_in_one_environment_leaves_the_next_unreached_and_json_says_so(known: Known) -> None:
    site = known.site
    twice = ["--python", sys.executable, "--python", sys.executable]
    line = interruption(site.interrupt("apply", *twice, fault="apply:after-write"))
    assert line.endswith("; 1 more environment was not reached."), line
    assert whole(known) == "patched"

    done = site.interrupt("revert", "--json", *twice, fault="revert:after-write")
    assert done.code == INTERRUPTED, done.out + done.err
    document = done.document()
    assert document["exit_code"] == INTERRUPTED
    first, second = document["environments"]
    assert first["interrupted"].startswith(f"in {sys.executable} at {PATCH_ID}, now incomplete: "), first
    assert (first["exit_code"], second["not_reached"], second["exit_code"], second["patches"]) == (130, True, 130, [])
    succeeded(site.run("revert"))
    assert_reverted(known)


# --------------------------------------------------------------------------------------------------------- lock


def test_the_lock_stays_while_another_run_holds_it_and_goes_with_the_next_revert(known: Known) -> None:
    """Nothing is left but the lock, and the test holds it: removing it then could let two runs each lock a file
    of one path, so it stays, and the next revert that finds it free takes it with the .hfpatch directory."""
    site = known.site
    succeeded(site.run("apply"))
    succeeded(site.run("revert"))
    assert_reverted(known)
    lock_file = site.state_dir / "lock"
    site.state_dir.mkdir()
    lock = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        done = succeeded(site.run("revert"))
        assert WAITING not in done.err, "a run with nothing to write waited for the lock"
        assert sorted(path.name for path in site.state_dir.iterdir()) == ["lock"]
    finally:
        os.close(lock)
    succeeded(site.run("revert"))
    assert not site.state_dir.exists()


def test_a_run_waiting_on_a_lock_file_that_was_removed_locks_the_one_at_the_path(known: Known) -> None:
    """The test plays the run that removes the lock (it holds it, removes it) and then one that locks the new file
    at the path: the apply waiting on the removed file must wait for the new one, never write beside its holder."""
    site = known.site
    lock_file = site.state_dir / "lock"
    site.state_dir.mkdir()
    removed = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(removed, fcntl.LOCK_EX)
    new: int | None = None
    with watched(site.start("apply")) as apply:
        try:
            assert apply.wait_for(WAITING), f"apply did not wait for the lock: {''.join(apply.seen)!r}"
            lock_file.unlink()
            new = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(new, fcntl.LOCK_EX)
            before = tree(site.root)
            os.close(removed)  # the apply now holds the removed file: it must see that and wait for the new one
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and apply.process.poll() is None:
                assert tree(site.root) == before, "apply wrote while another run held the lock file at the path"
                time.sleep(0.1)
            assert apply.process.poll() is None, "apply ended while another run held the lock"
        finally:
            with contextlib.suppress(OSError):
                os.close(removed)
            if new is not None:
                os.close(new)
        done = apply.finish()
    assert label(succeeded(done)) == "patched"
    assert_applied(known)


def test_a_revert_after_the_distribution_was_uninstalled_leaves_nothing_of_hfpatch(known: Known) -> None:
    site = known.site
    succeeded(site.run("apply"))
    shutil.rmtree(site.root / "toypkg")
    shutil.rmtree(site.dist_info)
    done = succeeded(site.run("revert"))
    assert label(done) == "cleared-stale", done.out
    assert not site.state_dir.exists(), sorted(path.name for path in site.state_dir.iterdir())
