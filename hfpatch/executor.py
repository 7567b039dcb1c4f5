"""Carrying out a plan: the only code that writes, in an order that converges after a crash at any point.

A run killed anywhere leaves each file either as it found it or as it meant to leave it, the original of every
patched file saved, and a patch state whose phase and journal (each file's digest before and after) tell the next
run what to finish. A failure (not a crash) after a file was written puts back what the run found, decided by what
is on disk, not by how far the run believes it got.

Each file's content is a function of its original and the patches applied to it: apply patches the file as it is;
revert rebuilds it from the original with the patches that stay, so that of two patches of one file either can go
first.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import NamedTuple

import hfpatch
from hfpatch import bytecode, files, importcheck, reasons, state, wheelrecord
from hfpatch.entry import FileShape, Patch
from hfpatch.environment import Installation, Python, run_in
from hfpatch.errors import HfpatchError, InterpreterError, StateError, UnexpectedCode, refusal
from hfpatch.facts import Facts, FileFacts
from hfpatch.plan import Lookup, Plan, Step, no_lookup
from hfpatch.reasons import Reason
from hfpatch.state import FileChange, FileState, PatchState, Phase

LOCK_TIMEOUT = 120.0
_reached: dict[str, int] = {}


def fault_point(step: str) -> None:
    """For the fault tests: HFPATCH_FAULT=<step> kills this process with SIGKILL when it first reaches <step>, and
    HFPATCH_FAULT=<step>#<n> the n-th time (a patch of several files passes each step once a file);
    HFPATCH_FAULT=<step>@SIGINT sends SIGINT instead, as Ctrl-C does."""
    wanted, _, signal_name = os.environ.get("HFPATCH_FAULT", "").partition("@")
    if not wanted or not wanted.startswith(step):
        return
    _reached[step] = _reached.get(step, 0) + 1
    if wanted == step or wanted == f"{step}#{_reached[step]}":
        import signal

        os.kill(os.getpid(), signal.Signals[signal_name or "SIGKILL"])


class FilePlan(NamedTuple):
    """What one file of the patch becomes, and what hfpatch's state of it says then."""

    facts: FileFacts
    original: bytes
    before: bytes
    after: bytes
    # hfpatch's state of the file once done; None where no patch is left on it.
    state: FileState | None
    record_line: str | None  # the RECORD line to write; None where RECORD does not list the file


def patches_in(facts: Facts, file: FileFacts) -> tuple[str, ...]:
    """The patches the file holds now, by hfpatch's account (its state, and the journal of an interrupted run)."""
    held, saved, digest, patch_id = file.state, facts.state, file.source_sha256, facts.patch.id
    change = None if saved is None else saved.change_of(file.file)
    recorded = () if held is None else held.patches
    if held is not None and digest == held.sha256:
        within = recorded
    elif (held is not None and digest == held.original_sha256) or (held is None and change is None):
        within = ()
    else:
        within = recorded
    if saved is not None and change is not None and saved.phase is not Phase.APPLIED:
        # The file as the interrupted run left it: an apply meant to leave the patch in it, a revert to take it out
        # (what either found is the other way round).
        applying = saved.phase is Phase.APPLYING
        if digest == change.after_sha256:
            within = _with(within, patch_id) if applying else _without(within, patch_id)
        elif digest == change.before_sha256:
            within = _without(within, patch_id) if applying else _with(within, patch_id)
    return within


def _with(patches: tuple[str, ...], patch_id: str) -> tuple[str, ...]:
    return patches if patch_id in patches else (*patches, patch_id)


def _without(patches: tuple[str, ...], patch_id: str) -> tuple[str, ...]:
    return tuple(patch for patch in patches if patch != patch_id)


def original_of(facts: Facts, file: FileFacts) -> bytes:
    """The file's original bytes: its verified backup where hfpatch holds a state of the file (or the file itself,
    where a reinstall put the original back: its digest is the state's), the original a run saved first where it
    was killed before that state was written, else the file itself (then the original: hfpatch holds no patch in
    it)."""
    assert file.source is not None
    if file.state is not None:
        if file.original is not None:
            return file.original
        if file.source_sha256 == file.state.original_sha256:  # a lost backup matters only where the file is not it
            return file.source
        assert file.original_error is not None
        raise refusal(StateError, reasons.NoOriginal(file.original_error, facts.patch.distribution))
    saved = facts.state
    change = None if saved is None else saved.change_of(file.file)
    if saved is None or change is None or saved.phase is Phase.APPLIED:
        return file.source
    # Without a state of the file no other patch is in it: the original is what an apply found, what a revert leaves.
    original_sha256 = change.before_sha256 if saved.phase is Phase.APPLYING else change.after_sha256
    if file.source_sha256 == original_sha256:
        return file.source
    assert facts.installation is not None
    left = state.original_path(facts.installation.root, file.file)
    kept = files.read_bytes(left) if left.exists() else None
    if kept is None or hashlib.sha256(kept).hexdigest() != original_sha256:
        raise refusal(StateError, reasons.BackupNotOriginal(left))
    return kept


def rebuilt(original: bytes, patch_ids: tuple[str, ...], facts: Facts, file: FileFacts, lookup: Lookup) -> bytes:
    """The original with the given patches applied to it, in order (what the file holds with those patches)."""
    if not patch_ids:
        return original
    from hfpatch.rewrite import patched  # libcst: only where a file is patched

    content = original
    for patch_id in patch_ids:
        other = facts.patch if patch_id == facts.patch.id else lookup(patch_id)
        if other is None:
            raise refusal(StateError, reasons.HeldByUnknown(file.path, patch_id, facts.patch.id))
        part = next((item for item in other.files if item.file == file.file), None)
        if part is None:
            raise refusal(StateError, reasons.NoLongerChanges(patch_id, file.file))
        content = patched(content, other, part)
    return content


def applying(facts: Facts, file: FileFacts) -> FilePlan:
    """The file once the patch is applied to it: patched as it is, or left as it is where it holds the patch."""
    assert file.source is not None
    within = patches_in(facts, file)
    original = original_of(facts, file)
    if facts.patch.id in within:
        after = file.source
        patches = within
    else:
        from hfpatch.rewrite import patched  # libcst: only where a file is patched

        after = patched(file.source, facts.patch, file.patch_file)
        patches = (*within, facts.patch.id)
    return _plan(facts, file, original, after, patches)


def reverting(facts: Facts, file: FileFacts, lookup: Lookup) -> FilePlan:
    """The file once the patch is taken out: rebuilt from the original with the patches that stay on it."""
    assert file.source is not None
    within = patches_in(facts, file)
    original = original_of(facts, file)
    staying = _without(within, facts.patch.id)
    after = file.source if facts.patch.id not in within else rebuilt(original, staying, facts, file, lookup)
    return _plan(facts, file, original, after, staying)


def _plan(facts: Facts, file: FileFacts, original: bytes, after: bytes, patches: tuple[str, ...]) -> FilePlan:
    assert file.source is not None and facts.installation is not None
    installation = facts.installation
    line_before = (
        file.state.record_line_before if file.state is not None else _record_line_before(facts, file, original)
    )
    if not patches:
        record_line = line_before
        kept = None
    else:
        record_line = None if line_before is None else wheelrecord.line_for(file.file, after)
        kept = FileState(
            schema=state.SCHEMA,
            file=file.file,
            distribution=facts.patch.distribution,
            version=installation.version,
            dist_info=facts.dist_info_name,
            original_sha256=hashlib.sha256(original).hexdigest(),
            record_line_before=line_before,
            patches=patches,
            sha256=hashlib.sha256(after).hexdigest(),
        )
    return FilePlan(file, original, file.source, after, kept, record_line)


def _record_line_before(facts: Facts, file: FileFacts, original: bytes) -> str | None:
    """RECORD's line for the original file, for revert: as RECORD has it, unless it describes other bytes already (a
    state completed later than the file was written, or bytes an interrupted run wrote, by its journal); None where
    RECORD does not list the file."""
    if file.record_line is None:
        return None
    if (
        file.source is not None
        and file.source != original
        and file.record_line == wheelrecord.line_for(file.file, file.source)
    ):
        return wheelrecord.line_for(file.file, original)
    change = None if facts.state is None else facts.state.change_of(file.file)
    written = () if change is None else {change.before_sha256, change.after_sha256} - {_sha256(original)}
    if any(wheelrecord.describes(file.record_line, digest) for digest in written):
        return wheelrecord.line_for(file.file, original)
    return file.record_line


def execute(plan: Plan, facts: Facts, lookup: Lookup = no_lookup) -> tuple[Reason, ...]:
    """Perform the plan's steps in order; returns notes on what could not be done and did not need to be."""
    notes: list[Reason] = []
    for step in plan.steps:
        if step is Step.CLEAR_ORPHANS:
            for root in facts.orphans:
                with files.locked(state.lock_file(root), LOCK_TIMEOUT):
                    _clear_orphan(root, facts)
            continue
        installation = facts.installation
        assert installation is not None
        if step is Step.CLEAR_STATE:
            notes += _clear(facts, installation)
            facts = facts._replace(state=None, files=tuple(_forgotten(file) for file in facts.files))
        elif step is Step.PATCH:
            notes += _drive(facts, installation, [applying(facts, file) for file in facts.files], Phase.APPLYING)
        elif step is Step.RESTORE:
            plans = [reverting(facts, file, lookup) for file in facts.files]
            notes += _drive(facts, installation, plans, Phase.REVERTING)
        elif step is Step.REFRESH_BYTECODE:
            for file in facts.files:
                notes += refresh_bytecode(installation.python, file.path)
    return tuple(notes)


def adopt(patch: Patch, python: Python, installation: Installation, originals: dict[str, bytes]) -> list[Reason]:
    """Make hfpatch's state of files the user edited (what `hfpatch new --from-edits` carried): as if the patch had
    been applied to the release, whose bytes are the originals. The files are not written; their RECORD lines and
    bytecode are brought in line, as apply does."""
    from hfpatch.facts import gather

    with files.locked(state.lock_file(installation.root), LOCK_TIMEOUT):
        facts = gather(patch, python, installation)
        if facts.state is not None or any(file.state is not None for file in facts.files):
            raise refusal(StateError, reasons.AlreadyHeld(patch.id, installation.root))
        plans = []
        for file in facts.files:
            assert file.source is not None
            original = originals[file.file]
            # RECORD lists the released bytes (the edit did not change it): that line is the one to restore.
            before = file.record_line
            plan = FilePlan(file._replace(source=original), original, original, file.source, None, None)
            plans.append(
                plan._replace(
                    state=FileState(
                        schema=state.SCHEMA,
                        file=file.file,
                        distribution=patch.distribution,
                        version=installation.version,
                        dist_info=facts.dist_info_name,
                        original_sha256=_sha256(original),
                        record_line_before=before,
                        patches=(patch.id,),
                        sha256=_sha256(file.source),
                    ),
                    record_line=None if before is None else wheelrecord.line_for(file.file, file.source),
                )
            )
        return _drive(facts, installation, plans, Phase.APPLYING)


def _forgotten(file: FileFacts) -> FileFacts:
    return file._replace(state=None, original=None, original_error=None, leftover=False)


def _clear(facts: Facts, installation: Installation) -> list[Reason]:
    """A stale state (another install of the distribution), or what an apply killed early left behind."""
    notes: list[Reason] = []
    root = installation.root
    if facts.state is not None and facts.state.version != installation.version:
        notes.append(reasons.ClearedStale(facts.state.distribution, facts.state.version))
    state.discard(root, facts.patch.id)
    for file in facts.files:
        held = file.state
        if (
            file.leftover
            or (held is not None and held.version != installation.version)
            or (held is not None and held.original_path)
        ):
            state.discard_file(root, file.file)
    return notes


def _clear_orphan(root: Path, facts: Facts) -> None:
    state.discard(root, facts.patch.id)
    for file in facts.patch.files:
        held = state.load_file(root, file.file)
        staying = () if held is None else _without(held.patches, facts.patch.id)
        if staying and held is not None:
            state.save_file(root, held._replace(patches=staying))
        else:
            state.discard_file(root, file.file)


def _drive(facts: Facts, installation: Installation, plans: list[FilePlan], phase: Phase) -> list[Reason]:
    """Take every file from what it is to what its plan says, in the crash-safe order:

    apply:  originals saved, state "applying", each file (its RECORD line, its bytecode), files' states, "applied"
    revert: originals saved (where no state of the file in this layout has them), state "reverting", each file (its
            RECORD line, its bytecode), files' states, the state dropped
    """
    root = installation.root
    verb = "apply" if phase is Phase.APPLYING else "revert"
    previous = facts.state
    journal = _journal(facts, installation, plans, phase)
    notes = _imports_after(installation, plans) if phase is Phase.APPLYING else []
    _save_originals(root, plans)
    if phase is Phase.APPLYING:
        fault_point("apply:after-backup")
    written: list[FilePlan] = []
    try:
        state.save(root, journal)
        fault_point(f"{verb}:after-state-{phase.value}")
        for plan in plans:
            if _on_disk(plan.facts) != plan.after:
                written.append(plan)
                _put(plan.facts, plan.after)
            fault_point(f"{verb}:after-write")
            if plan.facts.patch_file.shape is FileShape.ADD:
                notes += _added_record_and_bytecode(installation, plan, verb)
                continue
            # Also where RECORD was not read (it lists no such file, or cannot be read: then this fails, and undoes)
            _set_record_line(
                installation, plan.facts.file, plan.record_line or wheelrecord.line_for(plan.facts.file, plan.after)
            )
            fault_point(f"{verb}:after-RECORD")
            notes += refresh_bytecode(installation.python, plan.facts.path)
            fault_point(f"{verb}:after-bytecode")
        _settle(root, plans, journal)
    except HfpatchError:
        if phase is Phase.APPLYING:
            _roll_back(facts, installation, written, previous)
        raise
    return notes


def _journal(facts: Facts, installation: Installation, plans: list[FilePlan], phase: Phase) -> PatchState:
    """The patch's state as the run writes it first: what it does to each file, and that it has not finished."""
    patch, previous = facts.patch, facts.state
    journal = PatchState(
        schema=state.SCHEMA,
        patch=patch.id,
        hfpatch_version=hfpatch.__version__,
        applied_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),  # as datetime.isoformat writes UTC
        distribution=patch.distribution,
        version=installation.version,
        dist_info=facts.dist_info_name,
        phase=phase,
        files=tuple(_change(previous, plan) for plan in plans),
    )
    if previous is not None and phase is Phase.APPLYING and not previous.legacy:
        journal = journal._replace(applied_at=previous.applied_at)
    return journal


def _imports_after(installation: Installation, plans: list[FilePlan]) -> list[Reason]:
    """Before anything is written: the patched modules still import (else UnexpectedCode), and what to note."""
    changed = [plan for plan in plans if plan.after != plan.before]
    imported = importcheck.check(
        installation.python,
        [
            importcheck.Patched(plan.facts.patch_file.module, plan.facts.path, plan.before, plan.after)
            for plan in changed
        ],
    )
    if imported.refusal is not None:
        raise refusal(UnexpectedCode, imported.refusal)
    return [imported.note] if imported.note else []


def _save_originals(root: Path, plans: list[FilePlan]) -> None:
    for plan in plans:
        if plan.facts.state is None or plan.facts.state.original_path or plan.facts.original is None:
            # The original, saved in this layout before anything else: every later step can be undone from it. A
            # revert too, where the original lies where only the state it overwrites next says (an interrupted
            # apply's, hfpatch 0.2's), and where the backup was lost and the file holds the original again.
            state.save_original(root, plan.facts.file, plan.original)


def _settle(root: Path, plans: list[FilePlan], journal: PatchState) -> None:
    """The files' states, then the patch's: applied, or (a revert) dropped."""
    for plan in plans:
        if plan.state is None:
            state.discard_file(root, plan.facts.file)
        else:
            state.save_file(root, plan.state)
    if journal.phase is Phase.APPLYING:
        state.save(root, journal._replace(phase=Phase.APPLIED))
        # hfpatch 0.2's backup, saved in this layout above (or by a revert that wrote its state over 0.2's)
        files.remove(state.legacy_backup_path(root, journal.patch))
    else:
        state.discard(root, journal.patch)


def _change(previous: PatchState | None, plan: FilePlan) -> FileChange:
    """What this run does to the file. Finishing an interrupted run of the same kind keeps what that run found, so
    that the journal always says what the file was before the operation, however often it was resumed."""
    before, after = _sha256(plan.before), _sha256(plan.after)
    earlier = None if previous is None or previous.phase is Phase.APPLIED else previous.change_of(plan.facts.file)
    if earlier is not None and before == earlier.after_sha256 and after == earlier.after_sha256:
        return earlier
    return FileChange(plan.facts.file, before, after)


def _roll_back(facts: Facts, installation: Installation, written: list[FilePlan], previous: PatchState | None) -> None:
    """Best effort after a failed apply: put back what the run found and drop what it created."""
    root = installation.root
    try:
        for plan in written:
            if _on_disk(plan.facts) != plan.before:
                _put(plan.facts, plan.before)
                if plan.facts.patch_file.shape is FileShape.ADD:
                    _added_record_and_bytecode(installation, plan._replace(after=plan.before), "roll-back")
                elif plan.facts.record_line is not None:
                    _set_record_line(installation, plan.facts.file, plan.facts.record_line)
                refresh_bytecode(installation.python, plan.facts.path)
        if previous is None:
            state.discard(root, facts.patch.id)
            for file in facts.files:
                if file.state is None:
                    state.discard_file(root, file.file)
        else:
            state.save(root, previous)
    except HfpatchError:
        pass  # the state (phase "applying") stays, and the next apply or revert converges from it


def _on_disk(file: FileFacts) -> bytes:
    """The file's bytes now; a file the patch adds that is not there: none."""
    if file.patch_file.shape is FileShape.ADD and not file.path.exists():
        return b""
    return files.read_bytes(file.path)


def _put(file: FileFacts, data: bytes) -> None:
    """Write the file; a file the patch adds goes where it is to hold nothing (its original: it was not there)."""
    if file.patch_file.shape is FileShape.ADD and not data:
        files.remove(file.path)
        files.fsync_directory(file.path.parent)
    else:
        files.write_atomically(file.path, data)  # a new file: 0644, its directory's owner


def _added_record_and_bytecode(installation: Installation, plan: FilePlan, verb: str) -> list[Reason]:
    """A file the patch adds: its RECORD line added as pip writes it, or taken out where the file goes; its bytecode
    compiled where the package's is (pip compiled the others), or removed with it."""
    relative, path, python = plan.facts.file, plan.facts.path, installation.python
    record = installation.record
    if record is not None and record.exists():
        current = files.read_bytes(record)
        if plan.after:
            line = wheelrecord.line_for(relative, plan.after)
            updated = wheelrecord.with_line(current, relative, line) or wheelrecord.with_line_added(current, line)
        else:
            updated = wheelrecord.without_line(current, relative) or current
        if updated != current:
            files.write_atomically(record, updated)
    fault_point(f"{verb}:after-RECORD")
    bytecode.remove_all(bytecode.cached_files(path))
    if not plan.after:
        return []
    if not any(name.endswith(f".{python.cache_tag}.pyc") for name in _names(path.parent / "__pycache__")):
        return []  # the package's modules have no bytecode of this interpreter: none for this one either
    cfile = path.parent / "__pycache__" / f"{path.stem}.{python.cache_tag}.pyc"
    requests: list[dict[str, object]] = [{"cfile": str(cfile), "optimize": 0, "mode": "TIMESTAMP"}]
    failure = _compile(python, path, requests)
    return [] if failure is None else [reasons.NotCompiled(path, failure)]


def _names(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)  # noqa: PTH208
    except OSError:
        return []


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _set_record_line(installation: Installation, relative_file: str, line: str) -> None:
    record = installation.record
    if record is None or not record.exists():
        return
    current = files.read_bytes(record)
    updated = wheelrecord.with_line(current, relative_file, line)
    if updated is not None and updated != current:
        files.write_atomically(record, updated)


def refresh_bytecode(python: Python, file: Path) -> list[Reason]:
    """Remove every cached .pyc of the file, then rebuild those of the application's interpreter in their own mode."""
    cached = bytecode.cached_files(file)
    requests = bytecode.rebuild_requests(cached, python.cache_tag)
    bytecode.remove_all(cached)
    if not requests:
        return []
    failure = _compile(python, file, requests)
    if failure is None:
        return []
    return [reasons.NotRebuilt(failure)]


def _compile(python: Python, source: Path, requests: list[dict[str, object]]) -> str | None:
    """Have the application's interpreter write the requested .pyc files of the source, owned as hfpatch's files
    are; what went wrong, if it could not."""
    try:
        run_in(python, {"action": "compile", "source": str(source), "requests": requests})
    except (InterpreterError, OSError) as error:
        return str(error)
    bytecode.own_rebuilt(requests)
    return None
