"""Carrying out a plan: the only code that writes, in an order that converges after a crash at any point.

A run killed anywhere leaves the file either original or patched, the backup in place whenever the file is
patched, and a state whose phase tells the next run what to finish. A failure after the file was written puts
the original back, decided by what is on disk, not by how far the run believes it got.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import hfpatch
from hfpatch import bytecode, files, state, wheelrecord
from hfpatch.environment import Installation, Python, run_in
from hfpatch.errors import HfpatchError, InterpreterError, StateError
from hfpatch.facts import Facts
from hfpatch.plan import Plan, Step
from hfpatch.state import Phase

LOCK_TIMEOUT = 120.0


def fault_point(step: str) -> None:
    """For the fault tests: HFPATCH_FAULT=<step> kills this process with SIGKILL when it reaches <step>."""
    if os.environ.get("HFPATCH_FAULT") == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def original_of(facts: Facts) -> bytes:
    """The original bytes: the file itself where it holds them (or hfpatch holds no state), else the verified backup."""
    source, saved = facts.source, facts.state
    assert source is not None
    if saved is None or facts.source_sha256 == saved.before_sha256 or facts.installation is None:
        return source
    if facts.backup is None:
        raise StateError(f"{facts.backup_error}; nothing was changed. Reinstall {facts.patch.distribution}.")
    return facts.backup


def original_and_patched(facts: Facts) -> tuple[bytes, bytes]:
    """The original bytes (the file itself, or hfpatch's backup of it) and what the patch makes of them."""
    # The rewrite needs libcst (0.2 s to import): only apply and dry runs load it, revert never does.
    from hfpatch.rewrite import patched

    original, saved, source = original_of(facts), facts.state, facts.source
    assert source is not None
    if saved is not None and facts.source_sha256 == saved.after_sha256:
        return original, source  # an apply got as far as the file: it holds the patched bytes already
    return original, patched(original, facts.patch)


def execute(plan: Plan, facts: Facts) -> tuple[str, ...]:
    """Perform the plan's steps in order; returns notes on what could not be done and did not need to be."""
    notes: list[str] = []
    for step in plan.steps:
        if step is Step.CLEAR_ORPHANS:
            for root in facts.orphans:
                with files.locked(state.lock_file(root), LOCK_TIMEOUT):
                    state.discard(root, facts.patch.id)
            continue
        installation = facts.installation
        assert installation is not None
        if step is Step.CLEAR_STATE:
            if facts.state is not None and facts.state.version != installation.version:
                notes.append(f"cleared hfpatch's stale state of {facts.state.distribution} {facts.state.version}")
            state.discard(installation.root, facts.patch.id)
            facts = facts._replace(state=None, backup=None)
        elif step is Step.PATCH:
            notes += _drive_to_patched(facts, installation)
        elif step is Step.RESTORE:
            notes += _drive_to_original(facts, installation)
        elif step is Step.REFRESH_BYTECODE:
            assert facts.file is not None
            notes += refresh_bytecode(installation.python, facts.file)
    return tuple(notes)


def _drive_to_patched(facts: Facts, installation: Installation) -> list[str]:
    patch, file = facts.patch, installation.path_of(facts.patch.file)
    original, new = original_and_patched(facts)
    saved = facts.state
    fresh = saved is None
    if saved is None:
        saved = _new_state(facts, installation, original, new)
        state.save_backup(installation.root, patch.id, original)
        fault_point("apply:after-backup")
    elif facts.backup is None:
        state.save_backup(installation.root, patch.id, original)  # the file was the original: keep it again
    if saved.dist_info is None and facts.dist_info_name is not None:
        # Applied where the distribution's metadata was not found (an entry that misspelt it): record it now.
        saved = saved._replace(
            version=installation.version,
            dist_info=facts.dist_info_name,
            record_line_before=_record_line_before(facts, original, new),
        )
    try:
        state.save(installation.root, saved._replace(phase=Phase.APPLYING))
        fault_point("apply:after-state-applying")
        if files.read_bytes(file) != new:
            files.write_atomically(file, new)
        fault_point("apply:after-write")
        _set_record_line(installation, patch.file, wheelrecord.line_for(patch.file, new))
        fault_point("apply:after-RECORD")
        notes = refresh_bytecode(installation.python, file)
        fault_point("apply:after-bytecode")
        state.save(installation.root, saved._replace(phase=Phase.APPLIED))
    except HfpatchError:
        _roll_back(installation, facts, saved, original, fresh)
        raise
    return notes


def _roll_back(installation: Installation, facts: Facts, saved: state.State, original: bytes, fresh: bool) -> None:
    """Best effort after a failed apply: put the original back and drop what this run created."""
    file = installation.path_of(facts.patch.file)
    try:
        if files.read_bytes(file) != original:
            files.write_atomically(file, original)
            if saved.record_line_before is not None:
                _set_record_line(installation, facts.patch.file, saved.record_line_before)
            refresh_bytecode(installation.python, file)
        if fresh:
            state.discard(installation.root, facts.patch.id)
    except HfpatchError:
        pass  # the state (phase "applying") stays, and the next apply or revert converges from it


def _drive_to_original(facts: Facts, installation: Installation) -> list[str]:
    saved, file = facts.state, installation.path_of(facts.patch.file)
    assert saved is not None
    original = original_of(facts)
    state.save(installation.root, saved._replace(phase=Phase.REVERTING))
    fault_point("revert:after-state-reverting")
    if files.read_bytes(file) != original:
        files.write_atomically(file, original)
    fault_point("revert:after-write")
    if saved.record_line_before is not None:
        _set_record_line(installation, facts.patch.file, saved.record_line_before)
    fault_point("revert:after-RECORD")
    notes = refresh_bytecode(installation.python, file)
    fault_point("revert:after-bytecode")
    state.discard(installation.root, facts.patch.id)
    return notes


def _new_state(facts: Facts, installation: Installation, original: bytes, new: bytes) -> state.State:
    return state.State(
        schema=state.SCHEMA,
        patch=facts.patch.id,
        hfpatch_version=hfpatch.__version__,
        applied_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),  # as datetime.isoformat writes UTC
        distribution=facts.patch.distribution,
        version=installation.version,
        dist_info=facts.dist_info_name,
        target=facts.patch.file,
        before_sha256=hashlib.sha256(original).hexdigest(),
        after_sha256=hashlib.sha256(new).hexdigest(),
        record_line_before=_record_line_before(facts, original, new),
        phase=Phase.APPLYING,
    )


def _set_record_line(installation: Installation, relative_file: str, line: str) -> None:
    record = installation.record
    if record is None or not record.exists():
        return
    current = files.read_bytes(record)
    updated = wheelrecord.with_line(current, relative_file, line)
    if updated is not None and updated != current:
        files.write_atomically(record, updated)


def _record_line_before(facts: Facts, original: bytes, new: bytes) -> str | None:
    """RECORD's line for the original file, for revert: as RECORD has it, unless it describes the patched bytes
    already (a state completed later than the file was written); None where RECORD does not list the file."""
    if facts.record_line == wheelrecord.line_for(facts.patch.file, new):
        return wheelrecord.line_for(facts.patch.file, original)
    return facts.record_line


def refresh_bytecode(python: Python, file: Path) -> list[str]:
    """Remove every cached .pyc of the file, then rebuild those of the application's interpreter in their own mode."""
    cached = bytecode.cached_files(file)
    requests = bytecode.rebuild_requests(cached, python.cache_tag)
    bytecode.remove_all(cached)
    if not requests:
        return []
    try:
        run_in(python, {"action": "compile", "source": str(file), "requests": requests})
    except (InterpreterError, OSError) as error:
        return [f"removed the old bytecode but could not rebuild it ({error}); Python rebuilds it on import"]
    bytecode.own_rebuilt(requests)
    return []
