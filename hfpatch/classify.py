"""What an installed file is, for one file of a patch. Pure: the file's bytes and the release's version in, a verdict
out.

The code decides; the version only decides where the code is not one the catalog knows: an unknown form in a final
release at or after `fixed_in` is trusted as fixed, a target absent before `first_defined_in` predates the bug.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, NamedTuple

from hfpatch import versions
from hfpatch.entry import (
    FileShape,
    Form,
    Patch,
    PatchFile,
    Target,
    Verdict,
    release_span,
    text_sha256,
)

if TYPE_CHECKING:
    from hfpatch import statements


class TargetClassification(NamedTuple):
    """What one target is in the file: its verdict (None: not a form the catalog knows) and in words."""

    target: Target
    verdict: Verdict | None
    detail: str
    absent: bool = False


class Classification(NamedTuple):
    verdict: Verdict | None  # None: unrecognised code; hfpatch will not touch it
    detail: str
    targets: tuple[TargetClassification, ...] = ()
    # A released file known by its digest: the releases that ship it.
    released_in: tuple[str, ...] = ()


def identify(
    source: bytes, patch: Patch, file: PatchFile, version: str | None, digest: str | None = None
) -> Classification:
    """Classify one file of the patch by its code (`digest`: its sha256, where the caller has it: a run hashes each
    file once). Raises UnexpectedCode where it is not Python at all."""
    digest = hashlib.sha256(source).hexdigest() if digest is None else digest
    known = file.known_file(digest)
    if file.shape is FileShape.ADD:
        from hfpatch import shapes

        return Classification(*shapes.added(source, file, patch.fixed_in if _has_the_fix(version, patch) else None))
    if file.shape is FileShape.REMOVE and known is None:
        from hfpatch import shapes

        return Classification(*shapes.removed(digest, file))
    if known is not None:
        what = "file" if len(patch.files) == 1 else file.file
        where = f"the released {release_span(known.releases, empty='unlisted')} {what}"
        if known.code_unknown:  # another line's code, outside the releases the entry was written from
            return Classification(None, f"{where} is code {patch.id} does not know", released_in=known.releases)
        if known.verdict is None:
            return Classification(Verdict.NOT_APPLICABLE, f"{where} has no {file.target_names}")
        if known.verdict is not Verdict.NOT_APPLICABLE:  # for that one, the form's reason is worth a parse
            return Classification(known.verdict, where, released_in=known.releases)
        if known.reason:  # unless the reason was recorded with it (the classifier's own, read off the release)
            return Classification(known.verdict, known.reason, released_in=known.releases)
    # ast and tokenize only for a file the catalog does not know by digest: `check` on a known release never parses.
    from hfpatch import statements

    parsed = statements.parse(source, file.file)
    found = [(target, unit_of(parsed, target)) for target in file.targets]
    combined = _combine(tuple(_verdict(unit, target, patch, file, version) for target, unit in found))
    if known is not None and combined.verdict is not Verdict.NOT_APPLICABLE:
        # A released file the entry calls not-applicable whatever its targets' forms say: a form that needs the patch
        # elsewhere, in a release that lacks what the fixed text calls (the entry's about says which).
        detail = f"{where} is one the fix would break, though {combined.detail}: hfpatch leaves it"
        return Classification(Verdict.NOT_APPLICABLE, detail, combined.targets, known.releases)
    return combined


def unit_of(parsed: statements.SourceFile, target: Target) -> statements.Unit | None:
    """The statement a target names in a file (for schema 2: the function Python binds to the name)."""
    from hfpatch import statements

    return statements.find_bound(parsed, target.name) if target.legacy else statements.find(parsed, target.name)


def digest_of(unit: statements.Unit, target: Target) -> str:
    """The digest the entry knows this unit's text by (schema 2's entries digest the dedented definition)."""
    from hfpatch import statements

    return text_sha256(statements.legacy_canonical(unit)) if target.legacy else unit.sha256


def text_of(unit: statements.Unit, target: Target) -> str:
    from hfpatch import statements

    return statements.legacy_canonical(unit) if target.legacy else unit.text


def _verdict(
    unit: statements.Unit | None, target: Target, patch: Patch, file: PatchFile, version: str | None
) -> TargetClassification:
    if unit is None:
        return _absent(target, patch, file, version)
    form = target.form_of(digest_of(unit, target))
    if form is not None:
        return TargetClassification(target, form.verdict, _form_detail(target, form))
    if _has_the_fix(version, patch):
        detail = f"{target.name} is a form hfpatch does not know, in a release that has the fix ({patch.fixed_in}+)"
        return TargetClassification(target, Verdict.FIXED, detail)
    return TargetClassification(target, None, what_differs(target, text_of(unit, target)))


def _has_the_fix(version: str | None, patch: Patch) -> bool:
    return patch.fixed_in is not None and versions.is_final_at_least(version, patch.fixed_in)


def _form_detail(target: Target, form: Form) -> str:
    if not form.releases and form.reason:  # a text the patch puts in (Target.form_of): no release has it
        return f"{target.name} is {form.reason}"
    detail = f"{target.name} is the {form.release_range} code"
    return f"{detail} ({form.reason})" if form.reason and form.verdict is Verdict.NOT_APPLICABLE else detail


def _absent(target: Target, patch: Patch, file: PatchFile, version: str | None) -> TargetClassification:
    """A target the file lacks: its shape says what that means (hfpatch.shapes), else the release's place."""
    from hfpatch import shapes

    decided = shapes.of(target).absent(target, patch.fixed_in if _has_the_fix(version, patch) else None)
    if decided is not None:
        return TargetClassification(target, *decided, absent=True)
    if patch.first_defined_in is not None and versions.is_older(version, patch.first_defined_in):
        detail = f"{target.name} is absent, as in every release before {patch.first_defined_in}"
        return TargetClassification(target, Verdict.NOT_APPLICABLE, detail, absent=True)
    detail = f"{file.file} has no {target.name}, yet {patch.distribution} {version or '(unknown version)'} should"
    return TargetClassification(target, None, detail, absent=True)


def _combine(targets: tuple[TargetClassification, ...]) -> Classification:
    """Unknown code anywhere wins; then a target the fix cannot apply to; then one that needs it."""
    for verdict in (None, Verdict.NOT_APPLICABLE):
        for found in targets:
            if found.verdict is verdict:
                return Classification(verdict, found.detail, targets)
    needing = [found for found in targets if found.verdict is Verdict.NEEDS_PATCH]
    present_fixed = any(found.verdict is Verdict.FIXED and not found.absent for found in targets)
    if needing and (any(not found.absent for found in needing) or not present_fixed):
        return Classification(Verdict.NEEDS_PATCH, "; ".join(found.detail for found in needing), targets)
    if not needing:
        return Classification(Verdict.FIXED, "; ".join(found.detail for found in targets), targets)
    # Only statements to add beside code that has the fix already: no release the catalog knows is like that.
    return Classification(None, "; ".join(found.detail for found in targets), targets)


def combine_files(verdicts: list[Classification]) -> Classification:
    """One patch's verdict from each of its files' (a patch of one file: that file's)."""
    if len(verdicts) == 1:
        return verdicts[0]
    for verdict in (None, Verdict.NOT_APPLICABLE, Verdict.NEEDS_PATCH):
        chosen = [found for found in verdicts if found.verdict is verdict]
        if chosen:
            return Classification(verdict, "; ".join(found.detail for found in chosen), ())
    released = set.intersection(*(set(found.released_in) for found in verdicts))
    return Classification(Verdict.FIXED, "; ".join(found.detail for found in verdicts), (), tuple(sorted(released)))


def what_differs(target: Target, text: str) -> str:
    """Point at the first line where a statement leaves the known form it is closest to."""
    import difflib  # only for code nobody expected: a refusal, never on the common path

    from hfpatch.statements import line_digests

    lines = line_digests(text)
    candidates = [form for form in target.forms if form.lines]
    if not candidates:
        return f"{target.name} matches no known form"
    closest = max(candidates, key=lambda form: difflib.SequenceMatcher(None, lines, form.lines).ratio())
    text_lines = text.split("\n")
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, lines, closest.lines).get_opcodes():
        if tag == "equal":
            continue
        if i1 < i2:
            return (
                f"{target.name} line {i1 + 1} differs from the {closest.release_range} code: {text_lines[i1].strip()!r}"
            )
        return f"{target.name} lacks line {j1 + 1} of the {closest.release_range} code (after line {i1})"
    return f"{target.name} matches no known form"
