"""Each shape of fix in one place: what a target of that shape is where the file lacks it (judging), what the patch
makes of it (editing) and the text it must then have, and how it is said (describing).

A target's shape (entry.Shape) is what the fix does to one statement: replace it, insert it at its anchor where it
is absent (and replace it where it is there), or delete it. A file's shape (entry.FileShape) is what the fix does to
the whole file: edit its statements (the targets' shapes), or remove its code. What every shape shares stays with
its caller: classify recognises a statement that is there by its known forms, and rewrite changes only a form the
patch is written for and turns the fixed text into the statement's new lines (the libcst transform, which rewrite
hands in here as `Place.rewritten`). Pure: texts in, verdicts and edits out; no libcst import.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hfpatch.entry import EMPTY_SHA256, FileShape, PatchFile, Shape, Target, Verdict, release_span, text_sha256
from hfpatch.errors import UnexpectedCode

if TYPE_CHECKING:
    from hfpatch import statements


@dataclass(frozen=True)
class Edit:
    """lines[start:end] become `lines`; edits at one place keep the order they were made in."""

    start: int
    end: int
    lines: tuple[str, ...]
    order: int


@dataclass
class Place:
    """One file being patched: what an edit of one of its targets needs."""

    parsed: statements.SourceFile
    file: PatchFile
    # The new text of a statement that is there in a form the patch is written for (rewrite's transform).
    rewritten: Callable[[statements.Unit, Target], str]
    # Where each inserted target went, for the insertions anchored to it.
    inserted: dict[str, int] = field(default_factory=dict)


class Replacement:
    """Shape.REPLACE: a known form of the statement becomes the fixed text; where it is absent, it is not the patch's
    to add (the release predates it, or the code is not what the entry knows)."""

    def absent(self, target: Target, has_the_fix: str | None) -> tuple[Verdict, str] | None:
        """Where the file lacks the statement: its verdict, or None where the patch's other facts decide (the first
        release that defines it). `has_the_fix`: the first release with the fix, where this release is one."""
        if has_the_fix is not None:
            return Verdict.FIXED, f"{target.name} is gone from this release, which has the fix ({has_the_fix}+)"
        return None

    def put_in(self, place: Place, target: Target, order: int) -> list[Edit]:
        """The edits where the file lacks the statement."""
        raise UnexpectedCode(f"{place.file.file} has no {target.name}; nothing to patch")

    def change(self, place: Place, target: Target, unit: statements.Unit, order: int) -> list[Edit]:
        """The edits of a statement there in a form the patch is written for: its new text, and the lead the fixed
        release gives it where the lead above it is one the fix changed."""
        from hfpatch import statements

        text = place.rewritten(unit, target)
        edits = [Edit(unit.start, unit.end, tuple(statements.placed(text, place.parsed.newline)), order)]
        lead = statements.lead_of(place.parsed, unit)
        if target.lead is not None and text_sha256(lead) in target.lead_was:
            edits.append(Edit(unit.lead, unit.start, _lead_lines(target.lead, place.parsed.newline), order))
        return edits

    def expected(self, target: Target, digest: str | None, releases: Collection[str] = ()) -> str | None:
        """The digest the statement must have once patched, from the digest it has before (None: absent): the fixed
        text of its form (the form's own, else the target's; `releases`: those of the file, Target.fixed_for); one
        fixed already stays as it is."""
        if digest is None:
            return target.fixed_sha256
        if target.stays(digest):
            return digest
        fixed_text = target.fixed_for(digest, releases)
        return None if fixed_text is None else text_sha256(fixed_text)

    def describe(self, target: Target) -> str:
        return f"replaces {target.name}"


class Insertion(Replacement):
    """Shape.INSERT: as a replacement where the statement is there; where it is absent (a helper, an import the fix
    added), put in at its anchor: after `after`, or else before `before`, or neither: at the start of its scope."""

    def absent(self, target: Target, has_the_fix: str | None) -> tuple[Verdict, str] | None:
        adds = (Verdict.NEEDS_PATCH, f"{target.name} is absent; the patch adds it")
        return super().absent(target, has_the_fix) or adds

    def put_in(self, place: Place, target: Target, order: int) -> list[Edit]:
        edit = _legacy_insertion(place, target, order) if target.legacy else _insertion(place, target, order)
        return [edit]

    def describe(self, target: Target) -> str:
        if target.after is not None:
            return f"adds {target.name} after {target.after}"
        if target.before is not None:
            return f"adds {target.name} before {target.before}"
        return f"adds {target.name} at the start of its scope"


class Deletion(Replacement):
    """Shape.DELETE: a known form of the statement is taken out with the comment and blank lines above it; where it
    is absent, the file has the fix."""

    def absent(self, target: Target, has_the_fix: str | None) -> tuple[Verdict, str] | None:
        return Verdict.FIXED, f"{target.name}, which the fix removes, is absent"

    def put_in(self, place: Place, target: Target, order: int) -> list[Edit]:
        return []

    def change(self, place: Place, target: Target, unit: statements.Unit, order: int) -> list[Edit]:
        return [Edit(unit.lead, unit.end, (), order)]

    def expected(self, target: Target, digest: str | None, releases: Collection[str] = ()) -> str | None:
        return None  # gone

    def describe(self, target: Target) -> str:
        return f"removes {target.name}"


SHAPES: dict[Shape, Replacement] = {Shape.REPLACE: Replacement(), Shape.INSERT: Insertion(), Shape.DELETE: Deletion()}


def of(target: Target) -> Replacement:
    return SHAPES[target.shape]


def describe(file: PatchFile) -> str:
    """What the patch does to one file, in words: "replaces a, adds b after a" or "removes its code"."""
    if file.shape is FileShape.REMOVE:
        return "removes its code (the file is emptied)"
    if file.shape is FileShape.ADD:
        return "adds the module (a new file)"
    return ", ".join(of(target).describe(target) for target in file.targets)


# ------------------------------------------------------------------------------------------ a removed file


def removed(digest: str, file: PatchFile) -> tuple[Verdict | None, str]:
    """FileShape.REMOVE, a file in no form a release shipped: empty (the fix), or code hfpatch leaves alone."""
    if digest == EMPTY_SHA256:
        return Verdict.FIXED, f"{file.file} is empty: its code is removed, as the fix removes it"
    shipped = [release for known in file.known_files for release in known.releases]
    releases = release_span([shipped[0], shipped[-1]] if shipped else [], empty="unlisted")
    return None, f"{file.file} is none of the files the releases {releases} shipped"


# ------------------------------------------------------------------------------------------- an added file


def added(source: bytes, file: PatchFile, has_the_fix: str | None = None) -> tuple[Verdict | None, str]:
    """FileShape.ADD. `source` is b"" where the file is absent (facts: a file there but empty is not this). The
    entry's bytes: the fix; absent: the patch adds it; other bytes in a release that has the fix (`has_the_fix`: its
    fixed_in): that release's own text of the module; any other bytes are a file hfpatch must never overwrite."""
    if source == file.added:
        return Verdict.FIXED, f"{file.file} is the module the fix adds"
    if has_the_fix is not None:  # a later release may change the module, or drop it
        what = "absent" if not source else "another text of it"
        return Verdict.FIXED, f"{file.file} is {what}, in a release that has the fix ({has_the_fix}+)"
    if not source:
        return Verdict.NEEDS_PATCH, f"{file.file} is absent; the patch adds it"
    return None, f"{file.file} is there with other bytes than the module the fix adds: hfpatch will not overwrite it"


# ------------------------------------------------------------------------------------ where an insertion goes


def _lead_lines(lead: str, newline: str) -> tuple[str, ...]:
    from hfpatch import statements

    return tuple(statements.placed_lead(lead, newline))


def _insertion(place: Place, target: Target, order: int) -> Edit:
    """A statement the fix added: where the fixed release has it, after the statement before it there (or before the
    one after it); the comment and blank lines above it come along."""
    from hfpatch import statements

    assert target.fixed_text is not None
    parsed, inserted = place.parsed, place.inserted
    text = statements.placed(target.fixed_text, parsed.newline)
    following = None if target.before is None else statements.find(parsed, target.before)
    if following is not None and target.lead is not None and target.next_lead is not None:
        # It opens the group of the statement after it (an import added above the others): here that statement's
        # lead is the inserted one's in the fixed release, so it goes after that lead, and that statement gets the
        # lead the fixed release gives it.
        here = statements.lead_of(parsed, following)
        if here == target.lead != target.next_lead:
            # ...unless that statement is a target that puts its own lead in
            targets = place.file.targets
            relead = any(other.name == following.key and text_sha256(here) in other.lead_was for other in targets)
            after = () if relead else _lead_lines(target.next_lead, parsed.newline)
            inserted[target.name] = following.start
            return Edit(following.start, following.start, (*text, *after), order)
    position = _position(parsed, target, following, inserted)
    if position is None:
        where = f"after {target.after}" if target.after else f"before {target.before}"
        raise UnexpectedCode(f"{target.name} goes {where}, which {place.file.file} does not have")
    inserted[target.name] = position
    lead = _lead_lines(target.lead or "", parsed.newline)
    return Edit(position, position, (*lead, *text), order)


def _position(
    parsed: statements.SourceFile, target: Target, following: statements.Unit | None, inserted: dict[str, int]
) -> int | None:
    from hfpatch import statements

    position = None
    if target.after is not None:
        anchor = statements.find(parsed, target.after)
        position = anchor.end if anchor is not None else inserted.get(target.after)
    if position is None and following is not None:
        position = following.lead
    if position is None and target.after is None and target.before is None:
        position = _start_of_scope(parsed, target.name)
    if position is None and target.before is None:  # the last of its scope in the fixed release: last here too
        position = _end_of_scope(parsed, target.name)
    return position


def _end_of_scope(parsed: statements.SourceFile, name: str) -> int | None:
    from hfpatch import statements

    owner = statements.owner_of(parsed, name)
    found = statements.units(parsed, owner)
    return found[-1].end if found else (len(parsed.lines) if not owner else None)


def _start_of_scope(parsed: statements.SourceFile, name: str) -> int | None:
    from hfpatch import statements

    owner = statements.owner_of(parsed, name)
    found = statements.units(parsed, owner)
    return found[0].lead if found else (0 if not owner else None)


def _legacy_insertion(place: Place, target: Target, order: int) -> Edit:
    """Schema 2: hfpatch 0.2 put a helper just before the next target of its scope, at that target's indentation,
    with the blank lines PEP 8 asks for after it (one between methods, two at the top level)."""
    from hfpatch import statements

    assert target.fixed_text is not None
    anchor = None if target.before is None else statements.find(place.parsed, target.before)
    if anchor is None:
        raise UnexpectedCode(f"{target.name} is absent and no later target of its scope says where it goes")
    blank = 1 if target.name.rpartition(".")[0] else 2
    body = legacy_placed(target.fixed_text, anchor.indent, place.parsed.newline)
    return Edit(anchor.start, anchor.start, (*body, *([place.parsed.newline] * blank)), order)


def legacy_placed(text: str, indent: str, newline: str) -> tuple[str, ...]:
    """Schema 2's dedented text, indented for its place (blank lines stay blank)."""
    return tuple(f"{indent}{line}{newline}" if line.strip() else f"{line}{newline}" for line in text.split("\n"))
