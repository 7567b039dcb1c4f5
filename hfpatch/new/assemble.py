"""The entry from every release's judgement: the table's rows, each target's forms with their verdicts, the whole
files known by digest, and a check that hfpatch reads every release as the table says. Pure: texts in, an entry
(or why there can be none) out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hfpatch import classify, definitions, rewrite
from hfpatch.entry import Form, KnownFile, Patch, Target, Verdict, release_span
from hfpatch.errors import AuthoringError, UnexpectedCode
from hfpatch.new.judge import (
    Fix,
    Judged,
    Judgement,
    ReleaseVerdict,
    Status,
    after_the_fix,
    fixed_definitions,
    judge,
    kind_in_fix,
    release_verdict,
    sorted_releases,
)

FIX_LABEL = "fix"  # the fixed text's label in the table's form column


@dataclass(frozen=True)
class Row:
    """One release in the table: the form of each target (a letter, `fix`, `-` where absent), verdict and why."""

    release: str
    forms: tuple[str, ...]
    verdict: Judged
    reason: str


@dataclass(frozen=True)
class Missing:
    """A name the fix uses that some releases' module does not bind."""

    name: str
    users: tuple[str, ...]
    releases: tuple[str, ...]
    # What the name is in the fixed release: "function" (it can be added as a target), "class", "variable",
    # "import", or None (a name that release does not bind either).
    kind_in_fix: str | None


@dataclass(frozen=True)
class Authoring:
    targets: tuple[str, ...]  # in the order of the entry
    rows: tuple[Row, ...]
    patch: Patch | None  # None where no entry can be written
    missing: tuple[Missing, ...] = ()
    notes: tuple[str, ...] = ()
    refusal: str = ""  # why no entry can be written, where it is neither a missing name nor no release needing it


def author(
    texts: Mapping[str, bytes | None],
    header: Patch,
    targets: Sequence[str],
    unavailable: Mapping[str, str] | None = None,
) -> Authoring:
    """The table and the entry, from each release's file. `header` is the entry without targets or known files (its
    `file` the module's path inside the wheels); `unavailable`: releases that could not be read, and why."""
    fix_source = texts.get(header.fixed_in)
    if fix_source is None:
        raise AuthoringError(f"{header.distribution} {header.fixed_in} (the --fixed-in release) has no {header.file}.")
    fixes = fixed_definitions(fix_source, header, targets)
    ordered = sorted(targets, key=lambda name: fixes[name].definition.start)
    fix_parsed = definitions.parse(fix_source, header.file)
    releases = sorted_releases(texts)
    sources: dict[str, definitions.SourceFile | None] = {}
    skipped = dict(unavailable or {})
    for release in releases:
        text = texts[release]
        try:
            sources[release] = None if text is None else definitions.parse(text, f"{header.file} of {release}")
        except UnexpectedCode as error:
            skipped[release] = f"{error} for this Python; no form recorded"
    judged = {
        release: {
            name: after_the_fix(judge(name, source, fixes, fix_parsed, ordered), release, header.fixed_in)
            for name in ordered
        }
        for release, source in sources.items()
    }
    labels = _labels(ordered, fixes, judged)
    outcomes = {
        release: release_verdict(header, ordered, fixes, fix_parsed, source, judged[release])
        for release, source in sources.items()
    }
    by_release = {
        **{release: Row(release, tuple("?" for _ in ordered), Judged.SKIPPED, why) for release, why in skipped.items()},
        **{
            release: Row(release, tuple(labels[name].get(release, "-") for name in ordered), found.kind, found.reason)
            for release, found in outcomes.items()
        },
    }
    rows = tuple(by_release[release] for release in sorted_releases(by_release))
    hints = _class_hints(header, judged, fix_parsed)
    missing = _missing(outcomes, fix_parsed)
    if missing:
        return Authoring(tuple(ordered), rows, None, missing, tuple(hints))
    needing = [release for release, found in outcomes.items() if found.kind is Judged.NEEDS_PATCH]
    split = _split_forms(ordered, judged)
    if not needing or split:
        return Authoring(tuple(ordered), rows, None, (), tuple(hints), split)
    insertable = {name for release in needing for name in ordered if judged[release][name].status is Status.ABSENT}
    ordered = _insertion_order(ordered, insertable)
    entry_targets = tuple(
        Target(name, fixes[name].definition.canonical, _forms(name, fixes[name], judged), name in insertable)
        for name in ordered
    )
    draft = header._replace(first_defined_in=_first_defined_in(releases, outcomes), targets=entry_targets)
    known, notes = _known_files(draft, texts, outcomes)
    patch = draft._replace(known_files=known)
    _check_entry(patch, texts, outcomes)
    notes += hints
    if patch.first_defined_in is None and releases and releases[0] in sources:
        notes.append(
            f"no release read lacks the targets, so the entry sets no first_defined_in; hfpatch will refuse a "
            f"release older than {releases[0]} (read more with --since)"
        )
    return Authoring(tuple(ordered), rows, patch, (), tuple(notes))


def _missing(outcomes: Mapping[str, ReleaseVerdict], fix_parsed: definitions.SourceFile) -> tuple[Missing, ...]:
    users: dict[str, set[str]] = {}
    releases: dict[str, list[str]] = {}
    for release in sorted_releases(outcomes):
        for name, user in outcomes[release].missing:
            users.setdefault(name, set()).add(user)
            if release not in releases.setdefault(name, []):
                releases[name].append(release)
    return tuple(
        Missing(name, tuple(sorted(users[name])), tuple(releases[name]), kind_in_fix(fix_parsed, name))
        for name in sorted(users)
    )


def _labels(
    targets: Sequence[str], fixes: Mapping[str, Fix], judged: Mapping[str, Mapping[str, Judgement]]
) -> dict[str, dict[str, str]]:
    """Per target, per release: `fix`, a letter per other form (in order of first release), `-`, or the kind."""
    labels: dict[str, dict[str, str]] = {}
    for name in targets:
        by_digest: dict[str, str] = {fixes[name].definition.sha256: FIX_LABEL}
        labels[name] = {}
        for release in sorted_releases(judged):
            judgement = judged[release][name]
            if judgement.definition is None:
                labels[name][release] = judgement.kind or "-"
                continue
            digest = judgement.definition.sha256
            if digest not in by_digest:
                by_digest[digest] = _letter(len(by_digest) - 1)
            labels[name][release] = by_digest[digest]
    return labels


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"F{index + 1}"


def _insertion_order(targets: list[str], insertable: set[str]) -> list[str]:
    """The fixed release's order, except that a target to insert goes before a target of its scope that is never
    absent where it is inserted (the rewrite inserts before the next such target)."""
    ordered = list(targets)
    for name in [name for name in targets if name in insertable]:
        scope = name.rpartition(".")[0]
        anchors = [other for other in ordered if other not in insertable and other.rpartition(".")[0] == scope]
        if anchors and not any(ordered.index(anchor) > ordered.index(name) for anchor in anchors):
            ordered.remove(name)
            ordered.insert(ordered.index(anchors[0]), name)
    return ordered


def _grouped(name: str, judged: Mapping[str, Mapping[str, Judgement]]) -> dict[str, list[tuple[str, Judgement]]]:
    """The releases of each distinct text of a target, by digest, in order of first release."""
    grouped: dict[str, list[tuple[str, Judgement]]] = {}
    for release in sorted_releases(judged):
        judgement = judged[release][name]
        if judgement.definition is not None:
            grouped.setdefault(judgement.definition.sha256, []).append((release, judgement))
    return grouped


def _forms(name: str, fix: Fix, judged: Mapping[str, Mapping[str, Judgement]]) -> tuple[Form, ...]:
    forms = []
    for digest, seen in _grouped(name, judged).items():
        first = seen[0][1]
        assert first.definition is not None
        verdict = {Status.FIXED: Verdict.FIXED, Status.NEEDS: Verdict.NEEDS_PATCH}.get(
            first.status, Verdict.NOT_APPLICABLE
        )
        releases = tuple(release for release, _ in seen)
        reason = "" if verdict is Verdict.FIXED else first.reason
        forms.append(Form(digest, verdict, releases, reason, definitions.line_digests(first.definition.canonical)))
    return tuple(forms)


def _split_forms(targets: Sequence[str], judged: Mapping[str, Mapping[str, Judgement]]) -> str:
    """Why no entry can be written where one text of a target takes the fix in one release and not in another
    (its class differs): a form has one verdict, and hfpatch never rewrites a form that is not needs-patch."""
    for name in targets:
        for seen in _grouped(name, judged).values():
            taking = [release for release, judgement in seen if judgement.status is Status.NEEDS]
            refusing = [release for release, judgement in seen if judgement.status is Status.NOT_APPLICABLE]
            if taking and refusing:
                why = judged[refusing[0]][name].reason
                return (
                    f"{name} has the same text in {release_span(taking)}, which can take the fix, and in "
                    f"{release_span(refusing)}, where {why}; one form cannot have both verdicts, so leave one side out "
                    "with --since or --until; nothing written."
                )
    return ""


def lack_phrase(releases: Sequence[str]) -> str:
    return "lacks" if len(releases) == 1 else "lack"


def _first_defined_in(releases: Sequence[str], outcomes: Mapping[str, ReleaseVerdict]) -> str | None:
    """The first release read that has a target, where an older release read has none (the bug's start)."""
    seen_absent = False
    for release in releases:
        if release not in outcomes:
            continue
        if outcomes[release].kind is Judged.ABSENT:
            seen_absent = True
        else:
            return release if seen_absent else None
    return None


def _known_files(
    draft: Patch, texts: Mapping[str, bytes | None], outcomes: Mapping[str, ReleaseVerdict]
) -> tuple[tuple[KnownFile, ...], list[str]]:
    by_digest: dict[str, list[str]] = {}
    for release in sorted_releases(outcomes):
        text = texts[release]
        if text is not None:
            by_digest.setdefault(hashlib.sha256(text).hexdigest(), []).append(release)
    fix_text = texts[draft.fixed_in]
    fix_digest = hashlib.sha256(fix_text).hexdigest() if fix_text is not None else ""
    known, notes = [], []
    for digest, releases in by_digest.items():
        verdict = outcomes[releases[0]].kind.verdict
        patched = None
        if verdict is Verdict.NEEDS_PATCH:
            try:
                patched = hashlib.sha256(rewrite.patched(texts[releases[0]] or b"", draft)).hexdigest()
            except UnexpectedCode as error:
                raise AuthoringError(f"cannot patch the {release_span(releases)} {draft.file}: {error}.") from None
            if patched == fix_digest:
                notes.append(f"patched, the {release_span(releases)} file is the {draft.fixed_in} file byte for byte")
        known.append(KnownFile(digest, tuple(releases), verdict, patched))
    return tuple(known), notes


def _check_entry(patch: Patch, texts: Mapping[str, bytes | None], outcomes: Mapping[str, ReleaseVerdict]) -> None:
    """hfpatch must read every release as the table says (each one that needs the patch was patched already, for
    its file's patched digest)."""
    for release, judged in outcomes.items():
        text = texts[release]
        if text is None:
            continue
        found = classify.identify(text, patch, release).verdict
        expected = judged.kind.verdict or Verdict.NOT_APPLICABLE
        if found is not expected:
            raise AuthoringError(
                f"the entry would read {release} as {found.value if found else 'unknown'}, not {expected.value} "
                "(a bug in hfpatch new)."
            )


def _class_hints(
    header: Patch, judged: Mapping[str, Mapping[str, Judgement]], fix_parsed: definitions.SourceFile
) -> list[str]:
    """Where a method's fix calls a method its class lacks in some releases, say how to bring it along."""
    lacking: dict[str, list[str]] = {}
    for release in sorted_releases(judged):
        for judgement in judged[release].values():
            for attribute in judgement.lacking:
                lacking.setdefault(attribute, []).append(release)
    return [
        f"{release_span(releases)} {lack_phrase(releases)} {attribute}, which the fix calls; add --target "
        f"{header.distribution}:{header.module}:{attribute} to insert it and patch them too"
        for attribute, releases in lacking.items()
        if definitions.kind_of(fix_parsed, attribute) == "function"
    ]
