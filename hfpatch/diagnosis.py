"""What condition a patch is in, in one environment. Pure: the facts read off disk in, a condition out."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import NamedTuple

from hfpatch import classify, versions, wheelrecord
from hfpatch.entry import Verdict
from hfpatch.errors import ExitCode, UnexpectedCode
from hfpatch.facts import Facts
from hfpatch.state import Phase

# The command a user should run next, spelt with the options they gave (--python, --patch, --catalog).
Suggest = Callable[[str], str]


def plain(command: str) -> str:
    return f"hfpatch {command}"


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

# Conditions that apply would write to resolve.
NEEDS_WRITING = frozenset({Condition.NEEDS_PATCH, Condition.DROPPED, Condition.INCOMPLETE})


class Diagnosis(NamedTuple):
    condition: Condition
    # What is, in one sentence that does not repeat the condition's name.
    finding: str
    notes: tuple[str, ...] = ()
    # hfpatch's state belongs to another install of the distribution (upgraded or reinstalled since apply).
    stale_state: bool = False
    # What still lags behind a patched file: its RECORD line or its bytecode; None when nothing does.
    lagging: str | None = None
    # What to do about it, where the user must act.
    advice: str | None = None

    @property
    def summary(self) -> str:
        return self.finding if self.advice is None else f"{self.finding}; {self.advice}"


def diagnose(facts: Facts, suggest: Suggest = plain) -> Diagnosis:
    diagnosis = _diagnose(facts, suggest)
    installation = facts.installation
    if installation is not None and installation.shared_with_base:
        python = installation.python
        shared = (
            f"{facts.file} belongs to the base interpreter ({python.base_prefix}), not to this environment "
            f"({python.prefix}): patching it patches the base interpreter and every venv made from it with "
            "--system-site-packages"
        )
        diagnosis = diagnosis._replace(notes=(*diagnosis.notes, shared))
    if facts.link and diagnosis.condition in NEEDS_WRITING:
        advice = (
            f"but {facts.link}, and hfpatch does not write through links: patch the tree the link points to "
            "(for an editable install, the source checkout), or install the package without links"
        )
        return diagnosis._replace(advice=advice)
    return diagnosis


def _diagnose(facts: Facts, suggest: Suggest) -> Diagnosis:
    patch, installation, saved = facts.patch, facts.installation, facts.state
    if installation is None:
        orphans = tuple(
            f"{root}/.hfpatch/{patch.id} still holds the state and backup of an uninstalled {patch.distribution}; "
            f"`{suggest('revert')}` clears them"
            for root in facts.orphans
        )
        summary = f"{facts.python.executable} imports no {patch.distribution}"
        return Diagnosis(Condition.NOT_INSTALLED, summary, orphans)
    if facts.state_error is not None:
        return Diagnosis(Condition.ERROR, facts.state_error)
    if saved is not None and saved.target != patch.file:
        summary = f"hfpatch's state for {patch.id} names {saved.target}, not {patch.file}; nothing was changed"
        return Diagnosis(Condition.ERROR, summary)
    # Stale: the installer replaced the package since apply (another release or another install). Where either side
    # has no metadata to compare, that cannot be told, and the state is judged by the file's bytes as it is.
    stale = saved is not None and (
        _differ(saved.version, installation.version) or _differ(saved.dist_info, facts.dist_info_name)
    )
    notes: tuple[str, ...] = ()
    if installation.dist_info is None:
        notes = (
            f"{installation.root} has no {patch.distribution}-*.dist-info: the release is unknown and RECORD is not "
            f"kept (is the entry's distribution, {patch.distribution!r}, the one that installs {patch.package}?)",
        )
    if saved is not None and stale:
        now = installation.version or "an unknown version"
        notes += (
            f"stale state: hfpatch patched {saved.distribution} {saved.version}, and {now} is installed now; "
            f"the next `{suggest('apply')}` or `{suggest('revert')}` clears it",
        )
    if facts.missing:
        if patch.first_defined_in and versions.is_older(installation.version, patch.first_defined_in):
            summary = f"{patch.distribution} {installation.version} predates {patch.target_names}"
            return Diagnosis(Condition.NOT_APPLICABLE, summary, notes, stale)
        summary = f"{facts.file} is missing; reinstall {patch.distribution}"
        return Diagnosis(Condition.ERROR, summary, notes, stale)
    if facts.source is None:
        return Diagnosis(Condition.ERROR, facts.source_error or f"cannot read {facts.file}", notes, stale)
    if saved is not None and not stale:
        with_state = _with_state(facts, suggest)
        return with_state._replace(notes=notes + with_state.notes)
    return _by_code(facts, notes, stale, suggest)


def _differ(then: str | None, now: str | None) -> bool:
    return then is not None and now is not None and then != now


def _by_code(facts: Facts, notes: tuple[str, ...], stale: bool, suggest: Suggest) -> Diagnosis:
    patch, installation = facts.patch, facts.installation
    assert installation is not None and facts.source is not None
    try:
        found = classify.identify(facts.source, patch, installation.version)
    except UnexpectedCode as error:
        return Diagnosis(Condition.UNRECOGNISED, f"{error}; reinstall {patch.distribution}", notes, stale)
    if found.verdict is Verdict.NEEDS_PATCH:
        summary = f"{found.detail}, which has the bug {patch.upstream} fixed in {patch.fixed_in}"
        return Diagnosis(Condition.NEEDS_PATCH, summary, notes, stale, advice=f"run `{suggest('apply')}`")
    if found.verdict is Verdict.NOT_APPLICABLE:
        return Diagnosis(Condition.NOT_APPLICABLE, found.detail, notes, stale)
    if found.verdict is None:
        summary = f"{found.detail} (in {facts.file}); hfpatch will not touch code it does not know"
        return Diagnosis(Condition.UNRECOGNISED, summary, notes, stale)
    if facts.stale_bytecode:
        summary = f"the source has the fix, but cached bytecode still runs other code: {facts.stale_bytecode[0]}"
        advice = f"run `{suggest('apply')}` to rebuild it"
        return Diagnosis(Condition.INCOMPLETE, summary, notes, stale, lagging="stale bytecode", advice=advice)
    # A file the catalog lists as fixed in this very release needs no version arithmetic (nor packaging's import).
    if installation.version in found.released_in or versions.is_at_least(installation.version, patch.fixed_in):
        summary = (
            f"{patch.distribution} {installation.version} has the upstream fix ({patch.upstream}, in {patch.fixed_in})"
        )
        # Obsolete for this patch only: whether the apply step is dead is the environment's question (check
        # --fail-on-obsolete), since another patch of the catalog may still need it.
        return Diagnosis(Condition.FIXED_UPSTREAM, f"{summary}: this patch is obsolete here", notes, stale)
    summary = f"the code is already fixed ({found.detail}), but not by hfpatch: it holds no state of it"
    return Diagnosis(Condition.FIXED_OTHERWISE, summary, notes, stale)


def _with_state(facts: Facts, suggest: Suggest) -> Diagnosis:
    patch, saved, source, digest = facts.patch, facts.state, facts.source, facts.source_sha256
    assert saved is not None and source is not None
    notes: tuple[str, ...] = ()
    if digest != saved.before_sha256 and facts.backup_error is not None:
        notes = (f"{facts.backup_error}: `hfpatch revert` cannot restore the original; reinstall {patch.distribution}",)
    if digest == saved.after_sha256:
        lagging = _record_lags(facts, source)
        if lagging is None and facts.stale_bytecode:
            lagging = f"stale bytecode {facts.stale_bytecode[0]} would run"
        if saved.phase is Phase.APPLIED and lagging is None:
            summary = f"hfpatch {saved.hfpatch_version} patched {facts.file} on {saved.applied_at}"
            return Diagnosis(Condition.APPLIED, summary, notes)
        finding, advice = _interrupted(saved.phase, lagging, suggest)
        return Diagnosis(Condition.INCOMPLETE, finding, notes, lagging=lagging, advice=advice)
    if digest == saved.before_sha256:
        if saved.phase is not Phase.APPLIED:
            finding, advice = _interrupted(saved.phase, None, suggest)
            return Diagnosis(Condition.INCOMPLETE, finding, notes, advice=advice)
        summary = f"{facts.file} holds the original code again (was {patch.distribution} reinstalled?)"
        return Diagnosis(Condition.DROPPED, summary, notes, advice=f"run `{suggest('apply')}`")
    summary = f"{facts.file} was changed since hfpatch applied {patch.id}; hfpatch will not overwrite it"
    advice = f"`{suggest('revert')} --force` puts the original back"
    return Diagnosis(Condition.EDITED, summary, notes, advice=advice)


def _interrupted(phase: Phase, lagging: str | None, suggest: Suggest) -> tuple[str, str]:
    if phase is Phase.REVERTING:
        return "a revert was interrupted", f"run `{suggest('revert')}` to finish it, or `{suggest('apply')}`"
    if phase is Phase.APPLYING:
        return "an apply was interrupted", f"run `{suggest('apply')}` to finish it, or `{suggest('revert')}`"
    return f"the patched file is in place, but {lagging}", f"run `{suggest('apply')}` to finish"


def _record_lags(facts: Facts, source: bytes) -> str | None:
    installation = facts.installation
    if installation is None or installation.record is None or facts.record_line is None:
        return None
    if facts.record_line == wheelrecord.line_for(facts.patch.file, source):
        return None
    return f"{installation.record} does not match the file"
