"""What the installed code is, for one patch. Pure: the file's bytes and the release's version in, a verdict out.

The code decides; the version only decides where the code is not one the catalog knows: an unknown form in a final
release at or after `fixed_in` is trusted as fixed, a target absent before `first_defined_in` predates the bug.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, NamedTuple

from hfpatch import versions
from hfpatch.entry import Form, Patch, Target, Verdict, release_span

if TYPE_CHECKING:
    from hfpatch import definitions


class TargetVerdict(NamedTuple):
    """What one target is in the file: its verdict (None: not a form the catalog knows) and in words."""

    target: Target
    verdict: Verdict | None
    detail: str
    absent: bool = False


class Classification(NamedTuple):
    verdict: Verdict | None  # None: unrecognised code; hfpatch will not touch it
    detail: str
    findings: tuple[TargetVerdict, ...] = ()
    # A released file known by its digest: the releases that ship it.
    released_in: tuple[str, ...] = ()


def identify(source: bytes, patch: Patch, version: str | None) -> Classification:
    """Classify the file by its code. Raises UnexpectedCode where it is not Python at all."""
    known = patch.known_file(hashlib.sha256(source).hexdigest())
    if known is not None:
        where = f"the released {release_span(known.releases, empty='unlisted')} file"
        if known.verdict is None:
            return Classification(Verdict.NOT_APPLICABLE, f"{where} has no {patch.target_names}")
        if known.verdict is not Verdict.NOT_APPLICABLE:  # for that one, the form's reason is worth a parse
            return Classification(known.verdict, where, released_in=known.releases)
    # ast and tokenize only for a file the catalog does not know by digest: `check` on a known release never parses.
    from hfpatch import definitions

    parsed = definitions.parse(source, patch.file)
    found = [(target, definitions.find(parsed, target.name)) for target in patch.targets]
    return _combine(tuple(_finding(definition, target, patch, version) for target, definition in found))


def _finding(found: definitions.Definition | None, target: Target, patch: Patch, version: str | None) -> TargetVerdict:
    if found is None:
        return _absent(target, patch, version)
    form = target.form_of(found.sha256)
    if form is not None:
        return TargetVerdict(target, form.verdict, _form_detail(target, form))
    if versions.is_final_at_least(version, patch.fixed_in):
        detail = f"{target.name} is a form hfpatch does not know, in a release that has the fix ({patch.fixed_in}+)"
        return TargetVerdict(target, Verdict.FIXED, detail)
    return TargetVerdict(target, None, what_differs(target, found.canonical))


def _form_detail(target: Target, form: Form) -> str:
    detail = f"{target.name} is the {form.release_range} code"
    return f"{detail} ({form.reason})" if form.reason and form.verdict is Verdict.NOT_APPLICABLE else detail


def _absent(target: Target, patch: Patch, version: str | None) -> TargetVerdict:
    if target.insert_if_absent:
        return TargetVerdict(target, Verdict.NEEDS_PATCH, f"{target.name} is absent; the patch adds it", absent=True)
    if patch.first_defined_in is not None and versions.is_older(version, patch.first_defined_in):
        detail = f"{target.name} is absent, as in every release before {patch.first_defined_in}"
        return TargetVerdict(target, Verdict.NOT_APPLICABLE, detail, absent=True)
    if versions.is_final_at_least(version, patch.fixed_in):
        detail = f"{target.name} is gone from this release, which has the fix ({patch.fixed_in}+)"
        return TargetVerdict(target, Verdict.FIXED, detail, absent=True)
    detail = f"{patch.file} has no {target.name}, yet {patch.distribution} {version or '(unknown version)'} should"
    return TargetVerdict(target, None, detail, absent=True)


def _combine(findings: tuple[TargetVerdict, ...]) -> Classification:
    """Unknown code anywhere wins; then a target the fix cannot apply to; then one that needs it."""
    for verdict in (None, Verdict.NOT_APPLICABLE):
        for finding in findings:
            if finding.verdict is verdict:
                return Classification(verdict, finding.detail, findings)
    present = [finding for finding in findings if not finding.absent]
    if any(finding.verdict is Verdict.NEEDS_PATCH for finding in present):
        needing = [finding.detail for finding in findings if finding.verdict is Verdict.NEEDS_PATCH]
        return Classification(Verdict.NEEDS_PATCH, "; ".join(needing), findings)
    if all(finding.verdict is Verdict.FIXED for finding in findings):
        return Classification(Verdict.FIXED, "; ".join(finding.detail for finding in findings), findings)
    # Only helpers to add, and nothing that needs them: not a form of any release the catalog knows.
    return Classification(None, "; ".join(finding.detail for finding in findings), findings)


def what_differs(target: Target, text: str) -> str:
    """Point at the first line where a definition leaves the known form it is closest to."""
    import difflib  # only for code nobody expected: a refusal, never on the common path

    from hfpatch.definitions import line_digests

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
