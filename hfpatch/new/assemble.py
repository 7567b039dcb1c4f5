"""The entry from every release's judgement: the table's rows, each target's forms with their verdicts, the whole
files known by digest, and a check that hfpatch reads every release as the table says. Pure: texts in, an entry
(or why there can be none) out.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hfpatch import classify, statements, versions
from hfpatch.entry import FileShape, Form, KnownFile, Patch, PatchFile, Shape, Target, Verdict, release_span
from hfpatch.errors import AuthoringError, UnexpectedCode
from hfpatch.new import judge
from hfpatch.new.judge import Change, FileFix, FileJudgement, Judgement, Standing, TableVerdict, sorted_releases

FIX_LABEL = "fix"  # the fixed text's label in the table's form column
# A release's files: path -> bytes, None where the release has no such file.
Texts = Mapping[str, Mapping[str, "bytes | None"]]


@dataclass(frozen=True)
class Wanted:
    """A file the fix changes: the statements bound to `names`, or (names None) every statement the fix changes."""

    module: str
    file: str
    names: tuple[str, ...] | None


@dataclass(frozen=True)
class Row:
    """One release in the table: the form of each file (a letter, `fix`, `-` where absent), verdict and why."""

    release: str
    forms: tuple[str, ...]
    verdict: TableVerdict
    reason: str


@dataclass(frozen=True)
class Missing:
    """A name the fix uses that some releases' module does not bind."""

    name: str
    users: tuple[str, ...]
    releases: tuple[str, ...]
    module: str
    # What the name is in the fixed module: a unit kind (it can be carried with --target), or None where the fixed
    # module does not bind it either.
    kind_in_fix: str | None


@dataclass(frozen=True)
class Authoring:
    fixes: tuple[FileFix, ...]
    rows: tuple[Row, ...]
    patch: Patch | None  # None where no entry can be written
    missing: tuple[Missing, ...] = ()
    # Other reasons a release is not safe, each naming the release.
    unsafe: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    refusal: str = ""  # why no entry can be written, where it is none of the above
    # The first release read where the fix is safe, for a --since that leaves the unsafe ones out.
    safe_since: str | None = None

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(change.key for fix in self.fixes for change in fix.changes)


@dataclass(frozen=True)
class Fixed:
    """The fixed texts: each file of the fix, with what the table calls them (a release, a build, an edit)."""

    texts: Mapping[str, bytes]
    label: str
    # The release before the fix: what the fix is read against (None: no release before it has the file).
    before: str | None
    # What the fixed text is a version of where no release is said to have the fix: a build's version, or the
    # release an edit was made on. A later release is known to need the fix only where its code is the code the
    # fix was read against; its own code could be the fix in another form.
    version: str | None = None


@dataclass
class _Release:
    release: str
    verdict: TableVerdict
    reason: str
    files: dict[str, FileJudgement] = field(default_factory=dict)


def understand(header: Patch, wanted: Sequence[Wanted], fixed: Fixed, releases: Texts) -> tuple[FileFix, ...]:
    """What the fix changes, file by file."""
    fixes = []
    for want in wanted:
        text = fixed.texts.get(want.file)
        if text is None:
            raise AuthoringError(f"{fixed.label} has no {want.file}.")
        before = None if fixed.before is None else releases[fixed.before].get(want.file)
        fixes.append(judge.fix_of(want.module, want.file, text, before, want.names, fixed.label))
    del header
    return tuple(fixes)


def dependencies(fixes: Sequence[FileFix], fixed: Fixed, package: str) -> dict[str, str]:
    """The modules of the distribution the fix's statements call into, outside the fix's own files: module -> the
    name the fix imports from it (what judging a release compares there)."""
    own = {fix.module for fix in fixes}
    found: dict[str, str] = {}
    for fix in fixes:
        source = judge.parse(fixed.texts[fix.file], fix.file)
        for change in fix.changes:
            if change.shape is Shape.DELETE:
                continue
            for name in sorted(judge.free_names(change.text)):
                module = judge.imported_from(source, name, package, fix.module, fix.file.endswith("__init__.py"))
                if module is not None and module not in own:
                    found.setdefault(module, name)
    return found


def author(
    header: Patch,
    fixes: Sequence[FileFix],
    fixed: Fixed,
    releases: Texts,
    unavailable: Mapping[str, str] | None = None,
    modules: Mapping[str, str] | None = None,
) -> Authoring:
    """The table and the entry. `releases`: each release's files (the fix's and those of the modules it calls);
    `modules`: the path of each module the fix calls into; `unavailable`: releases that could not be read, and why."""
    skipped = dict(unavailable or {})
    fix_sources = {fix.file: judge.parse(fixed.texts[fix.file], fix.file) for fix in fixes}
    judged: dict[str, _Release] = {}
    for release in sorted_releases(releases):
        try:
            judged[release] = _judge_release(header, fixes, fix_sources, fixed, releases, release, modules or {})
        except UnexpectedCode as error:
            skipped[release] = f"{error} for this Python; no form recorded"
    rows = _rows(fixes, judged, skipped)
    hints = _class_hints(header, fixes, judged, fix_sources)
    missing, unsafe = _unsafe(fixes, judged, fix_sources, fixed)
    if missing or unsafe:
        return Authoring(tuple(fixes), rows, None, missing, unsafe, tuple(hints), safe_since=_safe_since(judged))
    needing = [release for release, found in judged.items() if found.verdict is TableVerdict.NEEDS_PATCH]
    if not needing:
        return Authoring(tuple(fixes), rows, None, notes=tuple(_notes(fixes, judged, header, fixed) + hints))
    targets, split = _targets(fixes, judged)
    if split:
        return Authoring(tuple(fixes), rows, None, notes=tuple(hints), refusal=split)
    read = [release for release in sorted_releases(judged)]
    draft = header._replace(
        first_defined_in=_first_defined_in(judged),
        files=tuple(PatchFile(fix.module, fix.file, targets[fix.file]) for fix in fixes)
        + _added(modules or {}, fixed, {release: releases[release] for release in needing}),
        releases_read=(read[0], read[-1]) if read else None,
    )
    known, known_notes, refusal = _known_files(draft, fixes, judged, releases, fixed)
    if refusal:
        return Authoring(tuple(fixes), rows, None, refusal=refusal)
    patch = draft._replace(files=tuple(file._replace(known_files=known[file.file]) for file in draft.files))
    _check_entry(patch, judged, releases)
    notes = known_notes + _notes(fixes, judged, patch, fixed) + hints
    return Authoring(tuple(fixes), rows, patch, notes=tuple(notes))


def _added(modules: Mapping[str, str], fixed: Fixed, releases: Texts) -> tuple[PatchFile, ...]:
    """The modules the fix calls into that the fixed release adds (a release that needs the patch, of `releases`,
    lacks them): files the entry adds, each the fixed release's whole file (huggingface_hub 1.12.2's
    inference/_providers/deepinfra.py)."""
    found = []
    for module, path in sorted(modules.items()):
        text = fixed.texts.get(path)
        if text is not None and any(files.get(path) is None for files in releases.values()):
            found.append(PatchFile(module, path, (), shape=FileShape.ADD, added=text))
    return tuple(found)


def _class_hints(
    header: Patch,
    fixes: Sequence[FileFix],
    judged: Mapping[str, _Release],
    fix_sources: Mapping[str, statements.SourceFile],
) -> list[str]:
    """Where a method's fix calls a method its class lacks in some releases, say how to bring it along."""
    hints = []
    for fix in fixes:
        lacking: dict[str, list[str]] = {}
        for release in sorted_releases(judged):
            for attribute in judged[release].files[fix.file].lacking:
                lacking.setdefault(attribute, []).append(release)
        for attribute, releases in lacking.items():
            unit = statements.find(fix_sources[fix.file], attribute)
            if unit is None or unit.kind != statements.FUNCTION:
                continue
            verb = "lacks" if len(releases) == 1 else "lack"
            hints.append(
                f"{release_span(releases)} {verb} {attribute}, which the fix calls; add --target "
                f"{header.distribution}:{fix.module}:{attribute} to insert it and patch them too"
            )
    return hints


# ------------------------------------------------------------------------------------------ judging a release


def _judge_release(
    header: Patch,
    fixes: Sequence[FileFix],
    fix_sources: Mapping[str, statements.SourceFile],
    fixed: Fixed,
    releases: Texts,
    release: str,
    modules: Mapping[str, str],
) -> _Release:
    files = {
        fix.file: _judge_file(header, fix, fix_sources[fix.file], fixed, releases, release, modules) for fix in fixes
    }
    verdict, reason = _combine(files, fixes)
    return _Release(release, verdict, reason, files)


def _later_than_the_fix(
    judged: dict[str, Judgement], fix: FileFix, fixed: Fixed, releases: Texts, release: str
) -> dict[str, Judgement]:
    """A release later than the fixed text's version, where no release is said to have the fix: a target whose code
    is neither the fix nor the code it was read against may hold the fix in another form; it is left alone."""
    before = None if fixed.before is None else releases.get(fixed.before, {}).get(fix.file)
    old = None if before is None else statements.parse(before, f"{fix.file} of {fixed.before}")
    kept = judged
    for key, judgement in judged.items():
        if judgement.status is not Standing.NEEDS or judgement.unit is None:
            continue
        was = None if old is None else statements.find(old, key)
        if was is not None and was.text == judgement.unit.text:
            continue
        code = f"{fixed.before}'s code" if fixed.before is not None else "any older release's code"
        reason = (
            f"{key} here is neither the fix nor {code}, in a release later than the fix's {fixed.version}: it may "
            "have the fix in another form (--fixed-in names the release that has it)"
        )
        kept[key] = dataclasses.replace(judgement, status=Standing.NOT_APPLICABLE, reason=reason)
    return kept


def _judge_file(
    header: Patch,
    fix: FileFix,
    fix_source: statements.SourceFile,
    fixed: Fixed,
    releases: Texts,
    release: str,
    modules: Mapping[str, str],
) -> FileJudgement:
    text = releases[release].get(fix.file)
    if text is None:
        return FileJudgement(TableVerdict.ABSENT, f"no {fix.file} in this release")
    source = statements.parse(text, f"{fix.file} of {release}")
    judged = {change.key: judge.judge(change, source, release, header.fixed_in) for change in fix.changes}
    if header.fixed_in is None and fixed.version is not None and not versions.is_at_least(fixed.version, release):
        judged = _later_than_the_fix(judged, fix, fixed, releases, release)
    unpatched = _as_it_is(fix, judged)
    if unpatched is not None:
        return unpatched
    draft = judge.draft_file(fix, judged)
    try:
        patched = _patched(text, header, draft)
    except UnexpectedCode as error:
        return FileJudgement(TableVerdict.NOT_APPLICABLE, str(error), judged)
    result = statements.parse(patched, f"{fix.file} of {release}, patched")
    refused = _as_patched(fix, fix_source, source, result, judged, patched) or _calling(
        fix, fix_source, result, fixed, releases, release, modules, judged, patched
    )
    if refused is not None:
        return refused
    reasons = []
    for change in fix.changes:
        status = judged[change.key].status
        if status is Standing.NEEDS:
            reasons.append(_named(fix, change.key, judged[change.key].reason))
        elif status is Standing.ABSENT and change.shape is not Shape.DELETE:
            reasons.append(f"{change.key} absent: the patch adds it")
    return FileJudgement(TableVerdict.NEEDS_PATCH, "; ".join(reasons), judged, patched)


def _named(fix: FileFix, key: str, reason: str) -> str:
    """A reason, named by its statement where the file has several."""
    return f"{key}: {reason}" if len(fix.changes) > 1 else reason


def _as_it_is(fix: FileFix, judged: Mapping[str, Judgement]) -> FileJudgement | None:
    """The verdict of a release that needs no patching to judge: none of the targets, one the fix cannot take, or
    the fix already there. None: it is to be patched and judged as patched."""
    present = [change for change in fix.changes if judged[change.key].status is not Standing.ABSENT]
    if not present and any(change.shape is not Shape.INSERT for change in fix.changes):
        what = ", ".join(change.key for change in fix.changes)
        return FileJudgement(
            TableVerdict.ABSENT, f"{what} not defined" if len(what) < 80 else "none of the targets", judged
        )
    for change in present:
        if judged[change.key].status is Standing.NOT_APPLICABLE:
            return FileJudgement(
                TableVerdict.NOT_APPLICABLE, _named(fix, change.key, judged[change.key].reason), judged
            )
    if present and not any(judged[change.key].status is Standing.NEEDS for change in present):
        later = [judged[change.key].reason for change in present if judged[change.key].reason]
        absent = [change.key for change in fix.changes if judged[change.key].status is Standing.ABSENT]
        if absent and not later:
            return FileJudgement(
                TableVerdict.FIXED, f"the targets it has are identical to the fix ({', '.join(absent)} absent)", judged
            )
        return FileJudgement(TableVerdict.FIXED, later[0] if later else "identical to the fix", judged)
    return None


def _as_patched(
    fix: FileFix,
    fix_source: statements.SourceFile,
    source: statements.SourceFile,
    result: statements.SourceFile,
    judged: Mapping[str, Judgement],
    patched: bytes,
) -> FileJudgement | None:
    """What the patched file lacks or loses: a name the fix uses, an attribute of its class, a name the rest of
    the file still uses. None: nothing."""
    missing = tuple(judge.missing_names(result, fix.changes, fix_source))
    if missing:
        names = sorted({name for name, _ in missing})
        users = sorted({user for _, user in missing})
        reason = f"{', '.join(names)} missing (the fix of {', '.join(users)} uses it)"
        return FileJudgement(TableVerdict.NOT_SAFE, reason, judged, patched, missing)
    for change in fix.changes:
        lacking = judge.attributes_lacking(change, result, fix_source)
        if lacking:
            owner = change.key.rpartition(".")[0]
            uses = ", ".join(f"self.{attribute}" for attribute in lacking)
            return FileJudgement(
                TableVerdict.NOT_APPLICABLE,
                _named(fix, change.key, f"the fix uses {uses}, which {owner} here never defines"),
                judged,
                lacking=tuple(f"{owner}.{attribute}" for attribute in lacking),
            )
    taken = judge.names_taken_away(source, result, fix.changes)
    if taken:
        reason = f"the fix takes away {', '.join(taken)}, which the rest of this release's {fix.file} still uses"
        return FileJudgement(TableVerdict.NOT_SAFE, reason, judged, patched)
    return None


def _calling(
    fix: FileFix,
    fix_source: statements.SourceFile,
    result: statements.SourceFile,
    fixed: Fixed,
    releases: Texts,
    release: str,
    modules: Mapping[str, str],
    judged: Mapping[str, Judgement],
    patched: bytes,
) -> FileJudgement | None:
    """A call of the fix this release cannot answer, in the file or in another module. None: none."""
    calls = _calls_here(fix, fix_source, result, fixed.label) or _calls_elsewhere(
        fix, fix_source, fixed, releases, release, modules, fix.module.split(".")[0]
    )
    return None if not calls else FileJudgement(TableVerdict.NOT_SAFE, calls, judged, patched)


def _patched(text: bytes, header: Patch, draft: PatchFile) -> bytes:
    from hfpatch import rewrite  # libcst: what `apply` uses, so that the table says what apply would write

    return rewrite.patched(text, header._replace(files=(draft,), transform=None), draft)


def _calls_here(fix: FileFix, fix_source: statements.SourceFile, patched: statements.SourceFile, label: str) -> str:
    """Why the fix's calls of a function or class of its own module that it does not carry would fail in the
    patched release (the callee here takes other arguments than the fix's module's), or ""."""
    carried = {change.key for change in fix.changes}
    for change in fix.changes:
        if change.shape is Shape.DELETE:
            continue
        for name in sorted(judge.free_names(change.text) - carried):
            ours, theirs = judge.callee_signature(patched, name), judge.callee_signature(fix_source, name)
            if ours is None or theirs is None or judge.callee_accepts(patched, fix_source, name):
                continue
            return (
                f"the fix of {change.key} calls {name}, which here is {ours} where {label} has {theirs}; add "
                f"--target DIST:{fix.module}:{name} to carry it"
            )
    return ""


def _calls_elsewhere(
    fix: FileFix,
    fix_source: statements.SourceFile,
    fixed: Fixed,
    releases: Texts,
    release: str,
    modules: Mapping[str, str],
    package: str,
) -> str:
    """Why the fix's calls into other modules of the distribution would fail in this release, or ""."""
    for change in fix.changes:
        if change.shape is Shape.DELETE:
            continue
        for name in sorted(judge.free_names(change.text)):
            module = judge.imported_from(fix_source, name, package, fix.module, fix.file.endswith("__init__.py"))
            if module is None or module not in modules:
                continue
            path = modules[module]
            here_text = releases[release].get(path)
            there_text = fixed.texts.get(path)
            here = None if here_text is None else statements.parse(here_text, path)
            there = None if there_text is None else statements.parse(there_text, path)
            if here_text is None and there_text is not None:
                continue  # a module the fixed release adds: the entry adds it too (_added)
            ours, theirs = judge.callee_signature(here, name), judge.callee_signature(there, name)
            if ours != theirs:
                what = f"is {ours}" if ours else "does not exist"
                return (
                    f"the fix of {change.key} calls {name} from {path}, which here {what} where {fixed.label} has "
                    f"{theirs}; carry that module too (--target DIST:{module})"
                )
    return ""


def _combine(files: Mapping[str, FileJudgement], fixes: Sequence[FileFix]) -> tuple[TableVerdict, str]:
    """A release's verdict from each file's: the patch needs every file it changes."""
    verdicts = [files[fix.file] for fix in fixes]
    many = len(fixes) > 1

    def said(index: int) -> str:
        return f"{fixes[index].file}: {verdicts[index].reason}" if many else verdicts[index].reason

    for kind in (TableVerdict.SKIPPED, TableVerdict.NOT_SAFE, TableVerdict.NOT_APPLICABLE):
        for index, found in enumerate(verdicts):
            if found.kind is kind:
                return kind, said(index)
    kinds = {found.kind for found in verdicts}
    if kinds == {TableVerdict.ABSENT}:
        return TableVerdict.ABSENT, said(0)
    if TableVerdict.NEEDS_PATCH in kinds:
        if TableVerdict.ABSENT in kinds:
            index = next(index for index, found in enumerate(verdicts) if found.kind is TableVerdict.ABSENT)
            return TableVerdict.NOT_APPLICABLE, f"{fixes[index].file} has none of what the fix changes there"
        reasons = [said(index) for index, found in enumerate(verdicts) if found.kind is TableVerdict.NEEDS_PATCH]
        return TableVerdict.NEEDS_PATCH, "; ".join(reasons)
    return TableVerdict.FIXED, "; ".join(
        said(index) for index, found in enumerate(verdicts) if found.kind is TableVerdict.FIXED
    )


def _unsafe(
    fixes: Sequence[FileFix],
    judged: Mapping[str, _Release],
    fix_sources: Mapping[str, statements.SourceFile],
    fixed: Fixed,
) -> tuple[tuple[Missing, ...], tuple[str, ...]]:
    users: dict[tuple[str, str], set[str]] = {}
    releases: dict[tuple[str, str], list[str]] = {}
    unsafe: list[str] = []
    for release in sorted_releases(judged):
        for fix in fixes:
            found = judged[release].files[fix.file]
            if found.kind is not TableVerdict.NOT_SAFE:
                continue
            if not found.missing:
                unsafe.append(f"{release}: {found.reason}")
            for name, user in found.missing:
                users.setdefault((fix.file, name), set()).add(user)
                if release not in releases.setdefault((fix.file, name), []):
                    releases[(fix.file, name)].append(release)
    missing = []
    for (file, name), used_by in sorted(users.items()):
        fix = next(each for each in fixes if each.file == file)
        missing.append(
            Missing(
                name,
                tuple(sorted(used_by)),
                tuple(releases[(file, name)]),
                fix.module,
                _kind_in_fix(fix_sources[file], name),
            )
        )
    del fixed
    return tuple(missing), tuple(unsafe)


def _kind_in_fix(fix: statements.SourceFile, name: str) -> str | None:
    bound = statements.bound_to(fix, name)
    return bound[0].kind if bound else None


def _safe_since(judged: Mapping[str, _Release]) -> str | None:
    """The release from which every release read is safe: what --since leaves the others out with."""
    ordered = sorted_releases(judged)
    unsafe = [index for index, release in enumerate(ordered) if judged[release].verdict is TableVerdict.NOT_SAFE]
    if not unsafe or unsafe[-1] + 1 >= len(ordered):
        return None
    later = ordered[unsafe[-1] + 1 :]
    return later[0] if any(judged[release].verdict is TableVerdict.NEEDS_PATCH for release in later) else None


# ------------------------------------------------------------------------------------------------ the table


def _rows(fixes: Sequence[FileFix], judged: Mapping[str, _Release], skipped: Mapping[str, str]) -> tuple[Row, ...]:
    labels = {fix.file: _labels(fix, judged) for fix in fixes}
    by_release: dict[str, Row] = {
        release: Row(release, tuple("?" for _ in fixes), TableVerdict.SKIPPED, why) for release, why in skipped.items()
    }
    for release, found in judged.items():
        forms = tuple(labels[fix.file].get(release, "-") for fix in fixes)
        by_release[release] = Row(release, forms, found.verdict, found.reason)
    return tuple(by_release[release] for release in sorted_releases(by_release))


def _labels(fix: FileFix, judged: Mapping[str, _Release]) -> dict[str, str]:
    """Per release: `fix` where every target has the fixed text, `-` where none is there, else a letter for the
    combination of its targets' texts (in order of first release)."""
    letters: dict[tuple[str, ...], str] = {}
    labels: dict[str, str] = {}
    for release in sorted_releases(judged):
        found = judged[release].files[fix.file]
        if not found.judged:
            labels[release] = "-"
            continue
        statuses = [found.judged[change.key] for change in fix.changes]
        if all(each.status is Standing.ABSENT for each in statuses):
            labels[release] = "-"
        elif all(each.status in (Standing.FIXED, Standing.ABSENT) and not each.reason for each in statuses):
            labels[release] = FIX_LABEL
        else:
            combination = tuple(each.unit.sha256 if each.unit is not None else "-" for each in statuses)
            letters.setdefault(combination, _letter(len(letters)))
            labels[release] = letters[combination]
    return labels


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"F{index + 1}"


# ------------------------------------------------------------------------------------------------- the entry


def _targets(fixes: Sequence[FileFix], judged: Mapping[str, _Release]) -> tuple[dict[str, tuple[Target, ...]], str]:
    """Each file's targets with their forms: every text each target has had, with what the patch does to it."""
    found: dict[str, tuple[Target, ...]] = {}
    for fix in fixes:
        targets = []
        for change in fix.changes:
            seen: dict[str, list[tuple[str, Verdict, str, str]]] = {}
            inserted = change.shape is Shape.INSERT
            for release in sorted_releases(judged):
                outcome = judged[release]
                judgement = outcome.files[fix.file].judged.get(change.key)
                if judgement is None:
                    continue
                if judgement.status is Standing.ABSENT:
                    inserted |= outcome.verdict is TableVerdict.NEEDS_PATCH and change.shape is not Shape.DELETE
                    continue
                assert judgement.unit is not None
                verdict, reason = _form_verdict(judgement, outcome)
                seen.setdefault(judgement.unit.sha256, []).append((release, verdict, reason, judgement.unit.text))
            forms = []
            for digest, releases in seen.items():
                verdicts = {verdict for _, verdict, _, _ in releases}
                if len(verdicts) > 1:
                    return {}, _split(change, releases)
                _, verdict, reason, text = releases[0]
                listed = tuple(release for release, _, _, _ in releases)
                kept = "" if verdict is Verdict.FIXED else reason
                forms.append(Form(digest, verdict, listed, kept, statements.line_digests(text)))
            targets.append(judge.target_of(change, tuple(forms), insert=inserted))
        found[fix.file] = tuple(targets)
    return found, ""


def _split(change: Change, releases: Sequence[tuple[str, Verdict, str, str]]) -> str:
    """Why no entry can be written where one text of a target takes the fix in one release and not in another (its
    class differs): a form has one verdict, and hfpatch never rewrites a form that is not needs-patch."""
    taking = [release for release, verdict, _, _ in releases if verdict is Verdict.NEEDS_PATCH]
    refusing = [(release, reason) for release, verdict, reason, _ in releases if verdict is not Verdict.NEEDS_PATCH]
    why = refusing[0][1]
    return (
        f"{change.key} has the same text in {release_span(taking)}, which can take the fix, and in "
        f"{release_span([release for release, _ in refusing])}, where {why}; one form cannot have both verdicts, so "
        "leave one side out with --since or --until; nothing written."
    )


def _form_verdict(judgement: Judgement, outcome: _Release) -> tuple[Verdict, str]:
    if judgement.status is Standing.FIXED:
        return Verdict.FIXED, ""
    if judgement.status is Standing.NOT_APPLICABLE:
        return Verdict.NOT_APPLICABLE, judgement.reason
    if outcome.verdict is TableVerdict.NEEDS_PATCH:
        return Verdict.NEEDS_PATCH, ""
    return Verdict.NOT_APPLICABLE, outcome.reason


def _first_defined_in(judged: Mapping[str, _Release]) -> str | None:
    """The first release read that has a target, where an older release read has none (the bug's start)."""
    seen_absent = False
    for release in sorted_releases(judged):
        if judged[release].verdict is TableVerdict.ABSENT:
            seen_absent = True
        elif judged[release].verdict is not TableVerdict.SKIPPED:
            return release if seen_absent else None
    return None


def _known_files(
    draft: Patch, fixes: Sequence[FileFix], judged: Mapping[str, _Release], releases: Texts, fixed: Fixed
) -> tuple[dict[str, tuple[KnownFile, ...]], list[str], str]:
    known: dict[str, tuple[KnownFile, ...]] = {}
    notes: list[str] = []
    for file in draft.files:
        if file.shape is FileShape.ADD:  # known by its one text: the fixed release's
            known[file.file] = ()
            continue
        by_digest: dict[str, tuple[Verdict | None, list[str]]] = {}
        for release in sorted_releases(judged):
            text = releases[release].get(file.file)
            if text is None:
                continue
            verdict = _file_verdict(judged[release], file.file)
            digest = hashlib.sha256(text).hexdigest()
            if digest in by_digest and by_digest[digest][0] is not verdict:
                first = by_digest[digest][1][0]
                return (
                    {},
                    [],
                    (
                        f"{file.file} is the same file in {first} and {release}, which the fix's other files judge "
                        "otherwise; leave one side out with --since or --until; nothing written."
                    ),
                )
            by_digest.setdefault(digest, (verdict, []))[1].append(release)
        files: list[KnownFile] = []
        for digest, (verdict, listed) in by_digest.items():
            patched = None
            if verdict is Verdict.NEEDS_PATCH:
                text = releases[listed[0]][file.file]
                assert text is not None
                try:
                    patched_bytes = _patched_with(text, draft, file)
                except UnexpectedCode as error:
                    raise AuthoringError(f"cannot patch the {release_span(listed)} {file.file}: {error}.") from None
                drafted = judged[listed[0]].files[file.file].patched
                if drafted is not None and drafted != patched_bytes:
                    raise AuthoringError(f"the entry patches {listed[0]} otherwise than judged (a bug in hfpatch new).")
                patched = hashlib.sha256(patched_bytes).hexdigest()
                fix_text = fixed.texts.get(file.file)
                fix_digest = None if fix_text is None else hashlib.sha256(fix_text).hexdigest()
                if patched == fix_digest:
                    what = "file" if len(draft.files) == 1 else file.file
                    notes.append(
                        f"patched, the {release_span(listed)} {what} is {_the(fixed.label)} file byte for byte"
                    )
            files.append(KnownFile(digest, tuple(listed), verdict, patched))
        known[file.file] = tuple(files)
    return known, notes, ""


def _file_verdict(outcome: _Release, file: str) -> Verdict | None:
    found = outcome.files[file].kind
    if found is TableVerdict.NEEDS_PATCH and outcome.verdict is not TableVerdict.NEEDS_PATCH:
        return Verdict.NOT_APPLICABLE
    return found.verdict if found is not TableVerdict.ABSENT else None


def _the(label: str) -> str:
    """'the 2.0' for a release's label ("madeup 2.0"), the label itself for a build or an edit."""
    return label if label.startswith("the ") else f"the {label.rpartition(' ')[2]}"


def _patched_with(text: bytes, patch: Patch, file: PatchFile) -> bytes:
    from hfpatch import rewrite

    return rewrite.patched(text, patch, file)


def _check_entry(patch: Patch, judged: Mapping[str, _Release], releases: Texts) -> None:
    """hfpatch must read every release as the table says."""
    for release, outcome in judged.items():
        verdicts = []
        for file in patch.files:
            text = releases[release].get(file.file)
            if file.shape is FileShape.ADD:
                verdicts.append(_added_in(release, text, patch, file))
                continue
            if text is None:
                verdicts.append(classify.Classification(Verdict.NOT_APPLICABLE, "absent"))
                continue
            found = classify.identify(text, patch, file, release)
            expected = _file_verdict(outcome, file.file) or Verdict.NOT_APPLICABLE
            if found.verdict is not expected:
                raise AuthoringError(
                    f"the entry would read {file.file} of {release} as "
                    f"{found.verdict.value if found.verdict else 'unknown'}, not {expected.value} "
                    "(a bug in hfpatch new)."
                )
            verdicts.append(found)
        combined = classify.combine_files(verdicts).verdict
        overall = outcome.verdict.verdict or Verdict.NOT_APPLICABLE
        if combined is not overall and len(patch.files) > 1:
            raise AuthoringError(
                f"the entry would read {release} as {combined}, not {overall.value} (a bug in hfpatch new)."
            )


def _added_in(release: str, text: bytes | None, patch: Patch, file: PatchFile) -> classify.Classification:
    found = classify.identify(text or b"", patch, file, release)
    if found.verdict is None:
        raise AuthoringError(
            f"{release} has {file.file}, which the fix adds, in another text than the fix's: the entry would refuse "
            "it there; leave that release out with --since or --until; nothing written."
        )
    return found


def _notes(fixes: Sequence[FileFix], judged: Mapping[str, _Release], patch: Patch, fixed: Fixed) -> list[str]:
    notes = []
    for fix in fixes:
        if fix.left_out and fix.whole:
            notes.append(
                f"the fix also changes {', '.join(fix.left_out)} in {fix.file}, which the entry does not carry (the "
                "release's own __version__; a statement moved as it was)"
            )
        elif fix.left_out:
            shown = ", ".join(fix.left_out[:6]) + (
                f" and {len(fix.left_out) - 6} more" if len(fix.left_out) > 6 else ""
            )
            notes.append(
                f"the fix also changes {shown} in {fix.file}, which the targets do not carry; "
                f"--target {patch.distribution}:{fix.module} carries the whole module's fix"
            )
    if patch.first_defined_in is None and judged:
        oldest = sorted_releases(judged)[0]
        if judged[oldest].verdict is not TableVerdict.ABSENT:
            notes.append(
                f"no release read lacks the targets, so the entry sets no first_defined_in: a release older than "
                f"{oldest} is one the entry does not know (read more with --since)"
            )
    del fixed
    return notes
