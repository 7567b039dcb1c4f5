"""apply, check and revert for one patch in one environment: read, decide, then write in a convergent order.

Every write step is ordered so that a run killed at any point leaves the target either original or patched, the
backup in place whenever the file is patched, and a record whose phase tells the next run what to finish.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import hfpatch
from hfpatch import files, state
from hfpatch.analysis import Identification, at_least, identify, patched, sha256, unified_diff
from hfpatch.catalog import Patch, Verdict
from hfpatch.environment import Installation, Interpreter, record_line, run_in
from hfpatch.errors import EditedTarget, ExitCode, HfpatchError, StateError, TargetError, UnexpectedCode

LOCK_TIMEOUT = 120.0


class Condition(enum.Enum):
    NOT_INSTALLED = "not-installed"
    NOT_APPLICABLE = "not-applicable"
    NEEDS_PATCH = "needs-patch"
    DROPPED = "dropped"
    INCOMPLETE = "incomplete"
    APPLIED = "applied"
    FIXED_UPSTREAM = "fixed-upstream"
    FIXED_OTHERWISE = "fixed-otherwise"
    EDITED = "edited"
    UNRECOGNISED = "unrecognised"
    ERROR = "error"


CHECK_EXIT = {
    Condition.NOT_INSTALLED: ExitCode.OK,
    Condition.NOT_APPLICABLE: ExitCode.OK,
    Condition.APPLIED: ExitCode.OK,
    Condition.FIXED_UPSTREAM: ExitCode.OK,
    Condition.FIXED_OTHERWISE: ExitCode.OK,
    Condition.NEEDS_PATCH: ExitCode.ACTION_NEEDED,
    Condition.DROPPED: ExitCode.ACTION_NEEDED,
    Condition.INCOMPLETE: ExitCode.ACTION_NEEDED,
    Condition.EDITED: ExitCode.ERROR,
    Condition.UNRECOGNISED: ExitCode.ERROR,
    Condition.ERROR: ExitCode.ERROR,
}


@dataclass(frozen=True)
class Assessment:
    patch: Patch
    interpreter: Interpreter
    installation: Installation | None
    condition: Condition
    summary: str
    identification: Identification | None = None
    record: state.Record | None = None
    stale_record: bool = False
    file_sha256: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def target(self) -> Path | None:
        return None if self.installation is None else self.installation.path_of(self.patch.target)


@dataclass(frozen=True)
class Outcome:
    """What a command found and did for one patch in one environment."""

    assessment: Assessment
    action: str
    message: str
    exit_code: ExitCode
    diff: str | None = None
    notes: tuple[str, ...] = field(default=())


def fault_point(step: str) -> None:
    """Test-only: HFPATCH_FAULT=<step> kills this process with SIGKILL when it reaches <step>."""
    if os.environ.get("HFPATCH_FAULT") == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------------------------------------------- assess


def assess(patch: Patch, interpreter: Interpreter, installation: Installation | None) -> Assessment:
    """Read everything that decides the patch's condition in this environment; write nothing."""
    base = Assessment(patch, interpreter, installation, Condition.NOT_INSTALLED, "")
    if installation is None:
        summary = f"{patch.distribution} is not installed for {interpreter.executable}"
        return replace(base, summary=summary, notes=_orphan_notes(patch, interpreter))
    target = installation.path_of(patch.target)
    try:
        record = state.load(installation.root, patch.id)
    except StateError as error:
        return replace(base, condition=Condition.ERROR, summary=str(error))
    if record is not None and record.target != patch.target:
        path = state.record_path(installation.root, patch.id)
        summary = f"hfpatch's record {path} names {record.target}, not {patch.target}; nothing was changed"
        return replace(base, condition=Condition.ERROR, summary=summary)
    stale = record is not None and (
        record.version != installation.version or record.dist_info != _dist_info_name(installation)
    )
    base = replace(base, record=record, stale_record=stale, notes=_stale_notes(record, installation, stale))
    if not target.exists():
        return _missing_file(base, patch, installation)
    try:
        source = files.read_bytes(target)
    except HfpatchError as error:
        return replace(base, condition=Condition.ERROR, summary=str(error))
    digest = sha256(source)
    base = replace(base, file_sha256=digest)
    if record is not None and not stale:
        return _with_record(base, record, installation, source)
    try:
        identification = identify(source, patch, installation.version)
    except UnexpectedCode as error:
        return replace(base, condition=Condition.UNRECOGNISED, summary=str(error))
    base = replace(base, identification=identification)
    verdict = identification.verdict
    if verdict is Verdict.NEEDS_PATCH:
        return replace(
            base,
            condition=Condition.NEEDS_PATCH,
            summary=(
                f"needs the patch: {identification.detail}, which has the bug that {patch.upstream} fixed in "
                f"{patch.fixed_in}; run `hfpatch apply`"
            ),
        )
    if verdict is Verdict.NOT_APPLICABLE:
        return replace(base, condition=Condition.NOT_APPLICABLE, summary=f"not applicable: {identification.detail}")
    if verdict is Verdict.UNRECOGNISED:
        return replace(
            base,
            condition=Condition.UNRECOGNISED,
            summary=f"unexpected code in {target}: {identification.detail}; hfpatch will not touch it",
        )
    stale_bytecode = _stale_bytecode(interpreter, target, source)
    if stale_bytecode:
        return replace(
            base,
            condition=Condition.INCOMPLETE,
            summary=f"the source has the fix, but cached bytecode still runs other code: {stale_bytecode[0]}",
        )
    if at_least(installation.version, patch.fixed_in):
        return replace(
            base,
            condition=Condition.FIXED_UPSTREAM,
            summary=(
                f"obsolete: {patch.distribution} {installation.version} has the upstream fix "
                f"({patch.upstream}, in {patch.fixed_in}); remove `hfpatch apply` from your build"
            ),
        )
    return replace(
        base,
        condition=Condition.FIXED_OTHERWISE,
        summary=f"already fixed ({identification.detail}), but not by hfpatch: it holds no record of it",
    )


def orphaned_roots(patch: Patch, interpreter: Interpreter) -> list[Path]:
    """Directories on the interpreter's path that still hold hfpatch's state for a package no longer installed."""
    return [Path(entry) for entry in interpreter.search_path if state.patch_dir(Path(entry), patch.id).is_dir()]


def _orphan_notes(patch: Patch, interpreter: Interpreter) -> tuple[str, ...]:
    return tuple(
        f"{state.patch_dir(root, patch.id)} still holds the record and backup of an uninstalled "
        f"{patch.distribution}; `hfpatch revert` clears them"
        for root in orphaned_roots(patch, interpreter)
    )


def _with_record(base: Assessment, record: state.Record, installation: Installation, source: bytes) -> Assessment:
    patch, digest = base.patch, sha256(source)
    target = installation.path_of(patch.target)
    if digest != record.before_sha256:
        _, problem = _backup(installation, record)
        if problem is not None:
            note = f"{problem}: `hfpatch revert` cannot restore the original; reinstall {patch.distribution} for it"
            base = replace(base, notes=(*base.notes, note))
    if digest == record.after_sha256:
        lagging = _record_lags(installation, patch, source) or _first(_stale_bytecode(base.interpreter, target, source))
        if record.phase == "applied" and not lagging:
            return replace(
                base,
                condition=Condition.APPLIED,
                summary=f"applied by hfpatch {record.hfpatch_version} on {record.applied_at}",
            )
        return replace(base, condition=Condition.INCOMPLETE, summary=_interrupted(record, lagging))
    if digest == record.before_sha256:
        if record.phase != "applied":
            return replace(base, condition=Condition.INCOMPLETE, summary=_interrupted(record, None))
        return replace(
            base,
            condition=Condition.DROPPED,
            summary=(
                f"the patch is gone: {patch.target} holds the original code again (was {patch.distribution} "
                "reinstalled?); run `hfpatch apply`"
            ),
        )
    return replace(
        base,
        condition=Condition.EDITED,
        summary=(
            f"{target} was changed since hfpatch applied {patch.id}; hfpatch will not overwrite it "
            "(`hfpatch revert --force` puts the original back)"
        ),
    )


def _interrupted(record: state.Record, lagging: str | None) -> str:
    if record.phase == "reverting":
        return "a revert was interrupted; run `hfpatch revert` to finish it, or `hfpatch apply`"
    if record.phase == "applying":
        return "an apply was interrupted; run `hfpatch apply` to finish it, or `hfpatch revert`"
    return f"the patched file is in place, but {lagging}; run `hfpatch apply` to finish"


def _record_lags(installation: Installation, patch: Patch, source: bytes) -> str | None:
    if installation.record is None:
        return None
    line = record_line(installation.record, patch.target)
    if line is None or line == files.record_line_for(patch.target, source):
        return None
    return f"{installation.record} does not match the file"


def _stale_bytecode(interpreter: Interpreter, target: Path, source: bytes) -> list[str]:
    """Unchecked-hash .pyc files are never compared with their source: one that holds other code would run.

    Only the target interpreter's own cache tag matters (no other interpreter loads that file), and the source hash
    is the target interpreter's: computed here when it is this interpreter, else asked of it.
    """
    stale = []
    for cached in files.bytecode_files(target):
        pyc = cached.path
        if cached.cache_tag != interpreter.cache_tag or files.bytecode_mode(pyc) != "UNCHECKED_HASH":
            continue
        try:
            with pyc.open("rb") as handle:
                header = handle.read(16)
        except OSError:
            continue
        if header[8:16] != _source_hash(interpreter, target, source):
            stale.append(str(pyc))
    return stale


def _source_hash(interpreter: Interpreter, target: Path, source: bytes) -> bytes:
    import importlib.util

    if interpreter.magic == importlib.util.MAGIC_NUMBER.hex():
        return importlib.util.source_hash(source)
    output = run_in(interpreter, {"action": "source_hash", "path": str(target)})
    return bytes.fromhex((output.strip().splitlines() or [""])[-1])


def _first(items: list[str]) -> str | None:
    return f"stale bytecode {items[0]} would run" if items else None


def _missing_file(base: Assessment, patch: Patch, installation: Installation) -> Assessment:
    if installation.version is not None and not at_least(installation.version, patch.introduced_in):
        return replace(
            base,
            condition=Condition.NOT_APPLICABLE,
            summary=f"not applicable: {patch.distribution} {installation.version} predates {patch.function}",
        )
    return replace(
        base,
        condition=Condition.ERROR,
        summary=f"{installation.path_of(patch.target)} is missing; reinstall {patch.distribution}",
    )


def _stale_notes(record: state.Record | None, installation: Installation, stale: bool) -> tuple[str, ...]:
    if record is None or not stale:
        return ()
    now = installation.version or "an unknown version"
    return (
        f"stale record: hfpatch patched {record.distribution} {record.version}, and {now} is installed now; "
        "the next `hfpatch apply` or `hfpatch revert` clears it",
    )


def _dist_info_name(installation: Installation) -> str | None:
    return None if installation.dist_info is None else installation.dist_info.name


# ----------------------------------------------------------------------------------------------------------- apply

_NEEDS_WORK_FOR_APPLY = {Condition.NEEDS_PATCH, Condition.DROPPED, Condition.INCOMPLETE}


def apply(patch: Patch, interpreter: Interpreter, installation: Installation | None, dry_run: bool) -> Outcome:
    first = assess(patch, interpreter, installation)
    if first.condition not in _NEEDS_WORK_FOR_APPLY and not (first.stale_record and not dry_run):
        return _apply_without_writing(first)
    assert installation is not None
    if dry_run and first.record is None and first.condition is Condition.INCOMPLETE:
        message = f"would rebuild the stale bytecode of {first.target}: {first.summary}"
        return Outcome(first, "would-refresh-bytecode", message, ExitCode.OK, diff="", notes=first.notes)
    if dry_run:
        return _apply_dry_run(first)
    _refuse_links(installation, patch)  # before the lock, whose file would be a change
    with _environment_lock(installation):
        current = assess(patch, interpreter, installation)
        if current.stale_record:
            state.discard(installation.root, patch.id)
            notes = (*current.notes, "cleared the stale record")
            current = replace(assess(patch, interpreter, installation), notes=notes)
        if current.condition not in _NEEDS_WORK_FOR_APPLY:
            return _apply_without_writing(current)
        if current.record is None and current.condition is Condition.INCOMPLETE:
            return _refresh_only(current)
        return _drive_to_patched(current)


def _refresh_only(assessment: Assessment) -> Outcome:
    """The source already has the fix (not by hfpatch); only stale bytecode stood between it and the interpreter."""
    assert assessment.installation is not None and assessment.target is not None
    notes = _refresh_bytecode(assessment.installation.interpreter, assessment.target)
    message = f"rebuilt the stale bytecode of {assessment.target}; its source already had the fix"
    return Outcome(assessment, "refreshed-bytecode", message, ExitCode.OK, notes=(*assessment.notes, *notes))


def _apply_without_writing(assessment: Assessment) -> Outcome:
    condition = assessment.condition
    if condition in (Condition.EDITED, Condition.UNRECOGNISED, Condition.ERROR):
        return Outcome(assessment, "refused", assessment.summary, ExitCode.ERROR, notes=assessment.notes)
    action = "already-applied" if condition is Condition.APPLIED else "nothing-to-do"
    return Outcome(assessment, action, assessment.summary, ExitCode.OK, notes=assessment.notes)


def _apply_dry_run(assessment: Assessment) -> Outcome:
    _, new = _original_and_patched(assessment)
    target = assessment.target
    assert target is not None and assessment.installation is not None
    current = files.read_bytes(target)
    diff = unified_diff(current, new, assessment.patch.target) if current != new else ""
    message = f"would patch {target}" if current != new else f"would finish the interrupted apply on {target}"
    return Outcome(assessment, "would-apply", message, ExitCode.OK, diff=diff, notes=assessment.notes)


def _original_and_patched(assessment: Assessment) -> tuple[bytes, bytes]:
    """The original bytes (the file itself, or hfpatch's backup of it) and what the patch makes of them."""
    patch, record, installation = assessment.patch, assessment.record, assessment.installation
    assert installation is not None and assessment.target is not None
    if record is None or assessment.stale_record:
        original = files.read_bytes(assessment.target)
        return original, patched(original, patch)
    current = files.read_bytes(assessment.target)
    original = _original(installation, record, current)
    if sha256(current) == record.after_sha256:
        return original, current
    new = patched(original, patch)
    if sha256(new) != record.after_sha256:
        raise StateError(
            f"the patched file would differ from the one recorded in {state.record_path(installation.root, patch.id)}"
            "; run `hfpatch revert`, then `hfpatch apply`."
        )
    return original, new


def _original(installation: Installation, record: state.Record, current: bytes) -> bytes:
    """The original bytes: the file itself where a reinstall put them back, else hfpatch's verified backup."""
    if sha256(current) == record.before_sha256:
        return current
    backup, problem = _backup(installation, record)
    if backup is None:
        raise StateError(f"{problem}; nothing was changed. Reinstall {record.distribution}.")
    return backup


def _backup(installation: Installation, record: state.Record) -> tuple[bytes | None, str | None]:
    """hfpatch's backup of the original, or what is wrong with it."""
    path = state.backup_path(installation.root, record.patch)
    backup = state.load_backup(installation.root, record.patch)
    if backup is None:
        return None, f"hfpatch's backup {path} is missing"
    if sha256(backup) != record.before_sha256:
        return None, f"hfpatch's backup {path} is not the original any more (its sha256 differs from the record)"
    return backup, None


def _drive_to_patched(assessment: Assessment) -> Outcome:
    patch, installation = assessment.patch, assessment.installation
    assert installation is not None and assessment.target is not None
    target = assessment.target
    _refuse_links(installation, patch)
    original, new = _original_and_patched(assessment)
    record = assessment.record
    if record is None:
        record = _new_record(patch, installation, original, new)
        state.save_backup(installation.root, patch.id, original)
        fault_point("apply:after-backup")
    elif _backup(installation, record)[0] is None:
        state.save_backup(installation.root, patch.id, original)  # the file was the original: keep it again
    wrote_target = False
    try:
        state.save(installation.root, replace(record, phase="applying"))
        fault_point("apply:after-record-applying")
        if files.read_bytes(target) != new:
            files.write_atomically(target, new)
            wrote_target = True
        fault_point("apply:after-write")
        _set_record_line(installation, patch, files.record_line_for(patch.target, new))
        fault_point("apply:after-RECORD")
        notes = _refresh_bytecode(installation.interpreter, target)
        fault_point("apply:after-bytecode")
        state.save(installation.root, replace(record, phase="applied"))
    except HfpatchError:
        _roll_back(installation, patch, record, target, original, wrote_target, assessment.record is None)
        raise
    action = "patched" if wrote_target else "completed"
    message = (
        f"patched {target} ({patch.upstream}, fixed upstream in {patch.fixed_in})"
        if wrote_target
        else f"finished the interrupted apply on {target}"
    )
    return Outcome(assessment, action, message, ExitCode.OK, notes=(*assessment.notes, *notes))


def _roll_back(
    installation: Installation,
    patch: Patch,
    record: state.Record,
    target: Path,
    original: bytes,
    wrote_target: bool,
    fresh: bool,
) -> None:
    """Best effort after a failed apply: put the original back and drop what this run created."""
    try:
        # Decided by what is on disk, not by how far this run believes it got: a failure can follow the rename.
        if wrote_target or files.read_bytes(target) != original:
            files.write_atomically(target, original)
            if record.record_line_before is not None:
                _set_record_line(installation, patch, record.record_line_before)
        if fresh:
            state.discard(installation.root, patch.id)
    except HfpatchError:
        pass  # the record (phase "applying") stays, and the next apply or revert converges from it


def _new_record(patch: Patch, installation: Installation, original: bytes, new: bytes) -> state.Record:
    from datetime import datetime, timezone

    return state.Record(
        schema=state.SCHEMA,
        patch=patch.id,
        hfpatch_version=hfpatch.__version__,
        applied_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        distribution=patch.distribution,
        version=installation.version,
        dist_info=_dist_info_name(installation),
        target=patch.target,
        before_sha256=sha256(original),
        after_sha256=sha256(new),
        record_line_before=None if installation.record is None else record_line(installation.record, patch.target),
        phase="applying",
    )


def _refuse_links(installation: Installation, patch: Patch) -> None:
    """The file and every directory between it and site-packages must be real: writing through a link would change
    a tree hfpatch does not keep the record of (a linked or editable-style install, a shared checkout)."""
    path = installation.path_of(patch.target)
    while path != installation.root and path != path.parent:
        if path.is_symlink():
            raise TargetError(
                f"{path} is a symbolic link (to {path.readlink()}); hfpatch does not write through links. "
                "Patch the file it points to in its own tree, or install the package without links."
            )
        path = path.parent


def _set_record_line(installation: Installation, patch: Patch, line: str) -> None:
    record_file = installation.record
    if record_file is None or not record_file.exists():
        return
    current = files.read_bytes(record_file)
    updated = files.replace_record_line(current, patch.target, line)
    if updated is not None and updated != current:
        files.write_atomically(record_file, updated)


def _refresh_bytecode(interpreter: Interpreter, target: Path) -> tuple[str, ...]:
    """Remove every cached .pyc of the target, then rebuild those of the target interpreter in their own mode."""
    requests = []
    for cached in files.bytecode_files(target):
        mode = files.bytecode_mode(cached.path)
        if cached.cache_tag == interpreter.cache_tag and mode is not None:
            requests.append({"cfile": str(cached.path), "optimize": cached.optimize, "mode": mode})
        try:
            cached.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            raise files.describe_os_error(error, cached.path, "remove") from None
    if not requests:
        return ()
    try:
        run_in(interpreter, {"action": "compile", "source": str(target), "requests": requests})
    except (TargetError, OSError) as error:
        return (f"removed the old bytecode but could not rebuild it ({error}); Python rebuilds it on import",)
    return ()


@contextmanager
def _environment_lock(installation: Installation) -> Iterator[None]:
    with files.locked(state.lock_file(installation.root), timeout=LOCK_TIMEOUT):
        yield


# ---------------------------------------------------------------------------------------------------------- revert


def revert(
    patch: Patch, interpreter: Interpreter, installation: Installation | None, force: bool, dry_run: bool
) -> Outcome:
    first = assess(patch, interpreter, installation)
    if installation is None:
        return _clear_orphans(first, dry_run)
    if first.record is None:
        if first.condition is Condition.ERROR:
            return Outcome(first, "refused", first.summary, ExitCode.ERROR)
        if dry_run or not _left_behind(installation, patch):
            return Outcome(first, "nothing-to-do", f"nothing to revert: {first.summary}", ExitCode.OK)
    elif dry_run:
        return _revert_dry_run(first, force)
    elif not first.stale_record:
        _refuse_links(installation, patch)  # before the lock, whose file would be a change
    with _environment_lock(installation):
        current = assess(patch, interpreter, installation)
        if current.record is None:
            return _clear_left_behind(current)
        if current.stale_record:
            state.discard(installation.root, patch.id)
            return Outcome(current, "cleared-stale", _stale_revert_message(current), ExitCode.OK)
        return _drive_to_original(current, force)


def _clear_orphans(assessment: Assessment, dry_run: bool) -> Outcome:
    """The package was uninstalled after apply: its record and backup describe nothing; drop them."""
    patch, interpreter = assessment.patch, assessment.interpreter
    roots = orphaned_roots(patch, interpreter)
    if not roots:
        return Outcome(assessment, "nothing-to-do", f"nothing to revert: {assessment.summary}", ExitCode.OK)
    if dry_run:
        message = f"would clear hfpatch's state of an uninstalled {patch.distribution} in {', '.join(map(str, roots))}"
        return Outcome(assessment, "would-clear-stale", message, ExitCode.OK)
    for root in roots:
        with files.locked(state.lock_file(root), timeout=LOCK_TIMEOUT):
            state.discard(root, patch.id)
    message = (
        f"{patch.distribution} is not installed any more; cleared hfpatch's record and backup in "
        f"{', '.join(map(str, roots))}"
    )
    return Outcome(assessment, "cleared-stale", message, ExitCode.OK)


def _left_behind(installation: Installation, patch: Patch) -> bool:
    """An apply killed between writing the backup and the record leaves the backup alone."""
    return state.patch_dir(installation.root, patch.id).exists()


def _clear_left_behind(assessment: Assessment) -> Outcome:
    installation = assessment.installation
    assert installation is not None
    message = f"nothing to revert: {assessment.summary}"
    if not _left_behind(installation, assessment.patch):
        return Outcome(assessment, "nothing-to-do", message, ExitCode.OK)
    state.discard(installation.root, assessment.patch.id)
    notes = (*assessment.notes, "removed the backup an interrupted apply left behind")
    return Outcome(assessment, "nothing-to-do", message, ExitCode.OK, notes=notes)


def _stale_revert_message(assessment: Assessment) -> str:
    record, installation = assessment.record, assessment.installation
    assert record is not None and installation is not None
    return (
        f"{record.distribution} was reinstalled or upgraded since apply ({record.version} -> "
        f"{installation.version or 'unknown'}): its files were left as they are, the old backup was not "
        "restored over them, and the stale record was cleared"
    )


def _revert_dry_run(assessment: Assessment, force: bool) -> Outcome:
    if assessment.stale_record:
        return Outcome(assessment, "would-clear-stale", _stale_revert_message(assessment), ExitCode.OK)
    _check_revertible(assessment, force)
    assert assessment.installation is not None and assessment.record is not None and assessment.target
    current = files.read_bytes(assessment.target)
    backup = _original(assessment.installation, assessment.record, current)
    diff = unified_diff(current, backup, assessment.patch.target) if current != backup else ""
    return Outcome(assessment, "would-revert", f"would restore {assessment.target}", ExitCode.OK, diff=diff)


def _check_revertible(assessment: Assessment, force: bool) -> None:
    if assessment.condition is Condition.EDITED and not force:
        raise EditedTarget(assessment.summary + ".")


def _drive_to_original(assessment: Assessment, force: bool) -> Outcome:
    patch, installation, record = assessment.patch, assessment.installation, assessment.record
    assert installation is not None and record is not None and assessment.target is not None
    target = assessment.target
    _check_revertible(assessment, force)
    _refuse_links(installation, patch)
    original = _original(installation, record, files.read_bytes(target))
    state.save(installation.root, replace(record, phase="reverting"))
    fault_point("revert:after-record-reverting")
    wrote = files.read_bytes(target) != original
    if wrote:
        files.write_atomically(target, original)
    fault_point("revert:after-write")
    if record.record_line_before is not None:
        _set_record_line(installation, patch, record.record_line_before)
    fault_point("revert:after-RECORD")
    notes = _refresh_bytecode(installation.interpreter, target)
    fault_point("revert:after-bytecode")
    state.discard(installation.root, patch.id)
    message = f"restored the original {target}" if wrote else f"{target} was already the original; record cleared"
    return Outcome(assessment, "reverted", message, ExitCode.OK, notes=notes)


# ----------------------------------------------------------------------------------------------------------- check


def check(patch: Patch, interpreter: Interpreter, installation: Installation | None, fail_obsolete: bool) -> Outcome:
    assessment = assess(patch, interpreter, installation)
    code = CHECK_EXIT[assessment.condition]
    if fail_obsolete and assessment.condition is Condition.FIXED_UPSTREAM:
        code = ExitCode.ACTION_NEEDED
    return Outcome(assessment, "checked", assessment.summary, code, notes=assessment.notes)
