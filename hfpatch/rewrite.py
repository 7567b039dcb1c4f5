"""What the patch makes of a file: each target statement replaced by its fixed text, inserted where the fix added it,
or taken out where the fix removed it. Pure: bytes in, bytes out.

One generic libcst transform serves every patch: the statement is parsed, within a scaffold that gives it the
indentation it has in the file, and its node is replaced by the fixed one (a patch may bring its own transform
where whole-statement replacement cannot express the change). Only each statement's own lines are handed to libcst;
they are put back with the file's line endings, and every other byte of the file stays as it was. The result is
checked, or nothing is returned: every target must now have the fixed text (or be gone), and a released file must
become the file the catalog records.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import libcst

from hfpatch import shapes, statements
from hfpatch.classify import digest_of, unit_of
from hfpatch.entry import FileShape, Patch, PatchFile, Target, Verdict
from hfpatch.errors import UnexpectedCode

Transform = Callable[[libcst.Module, str], libcst.Module]
# A statement indented in its file is parsed as the body of this block.
_SCAFFOLD = "if True:\n"


class ReplaceStatement(libcst.CSTTransformer):
    """Replace the statement at `index` of a module (or of the scaffold's block) by `replacement`, keeping the lines
    that lead into it."""

    def __init__(self, replacement: libcst.BaseStatement, *, scaffolded: bool) -> None:
        super().__init__()
        self.replacement = replacement
        # Whether the statement was parsed inside the scaffold (it is indented in its file). Told, never guessed from
        # the tree: a statement of the module that is an `if` itself (`if TYPE_CHECKING:`) is no scaffold.
        self.scaffolded = scaffolded
        self.replaced = 0

    def leave_Module(self, original_node: libcst.Module, updated_node: libcst.Module) -> libcst.Module:
        body = list(updated_node.body)
        if self.scaffolded:  # the statement is the scaffold block's only one
            assert isinstance(body[0], libcst.If)
            block = body[0].body
            assert isinstance(block, libcst.IndentedBlock)
            inner = block.body[0]
            body[0] = body[0].with_changes(body=block.with_changes(body=[self._swap(inner)]))
        else:
            body[0] = self._swap(body[0])
        return updated_node.with_changes(body=body)

    def _swap(self, node: libcst.BaseStatement) -> Any:
        self.replaced += 1
        leading = getattr(node, "leading_lines", ())
        return self.replacement.with_changes(leading_lines=leading)


def _parsed(text: str, indent: str, what: str) -> libcst.Module:
    try:
        return libcst.parse_module(f"{_SCAFFOLD}{text}\n" if indent else f"{text}\n")
    except libcst.ParserSyntaxError:
        raise UnexpectedCode(f"libcst cannot parse {what}") from None


def _statement(module: libcst.Module, indent: str) -> libcst.BaseStatement:
    node = module.body[0]
    if indent:
        assert isinstance(node, libcst.If) and isinstance(node.body, libcst.IndentedBlock)
        return node.body.body[0]
    return node


def _render(module: libcst.Module, indent: str) -> str:
    code = module.code
    return (code[len(_SCAFFOLD) :] if indent else code).rstrip("\n")


def replace_with_fixed(unit: statements.Unit, target: Target, fixed_text: str | None = None) -> str:
    """The default transform: the statement's node becomes the fixed one (`fixed_text`, or the target's); the text
    that comes out is checked to be that fixed text exactly, byte for byte."""
    fixed_text = target.fixed_text if fixed_text is None else fixed_text
    assert fixed_text is not None
    old = _parsed(unit.text, unit.indent, f"{target.name} as it is in the file")
    fixed = _parsed(fixed_text, unit.indent, f"the fixed text of {target.name}")
    if len(old.body) != 1 or len(fixed.body) != 1:
        raise UnexpectedCode(f"the fixed text of {target.name} is not one statement")
    replacer = ReplaceStatement(_statement(fixed, unit.indent), scaffolded=bool(unit.indent))
    result = _render(old.visit(replacer), unit.indent)
    if replacer.replaced != 1 or result != fixed_text:
        raise UnexpectedCode(f"the transform did not produce the fixed {target.name}")
    return result


def patched(source: bytes, patch: Patch, file: PatchFile) -> bytes:
    """The file with the patch applied; raises UnexpectedCode unless every target comes out exactly fixed. A file
    the patch removes comes out empty (its original is kept, as every file's is)."""
    if file.shape is FileShape.REMOVE:
        return b""
    if file.shape is FileShape.ADD:  # the whole module; classify refuses any other file in its place
        assert file.added is not None
        return file.added
    parsed = statements.parse(source, file.file)
    known = file.known_file(hashlib.sha256(source).hexdigest())
    releases = () if known is None else known.releases  # whose form a text is, where two forms share it
    place = shapes.Place(parsed, file, _rewriter(_custom_transform(patch), releases))
    edits: list[shapes.Edit] = []
    expected: dict[str, str | None] = {}  # the digest each target must come out with (None: gone)
    for target in file.targets:
        unit = unit_of(parsed, target)
        edits += _edits(place, target, unit, len(edits))
        digest = None if unit is None else digest_of(unit, target)
        expected[target.name] = shapes.of(target).expected(target, digest, releases)
    lines = list(parsed.lines)
    if lines and not lines[-1].endswith(("\n", "\r")) and any(edit.start >= len(lines) for edit in edits):
        lines[-1] += parsed.newline  # something goes after the last line, which has no line ending of its own
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.order), reverse=True):
        lines[edit.start : edit.end] = edit.lines
    result = parsed.encode(tuple(lines))
    _check(result, source, patch, file, expected)
    return result


def _edits(place: shapes.Place, target: Target, unit: statements.Unit | None, order: int) -> list[shapes.Edit]:
    """A target's edits, by its shape (hfpatch.shapes); a statement that is there is changed only in a form the
    patch is written for."""
    shape = shapes.of(target)
    if unit is None:
        return shape.put_in(place, target, order)
    digest = digest_of(unit, target)
    if target.stays(digest):
        return []
    form = target.form_of(digest)
    if form is None or form.verdict is not Verdict.NEEDS_PATCH:
        # Never rewrite code the fix was not written for, whatever the caller decided before.
        raise UnexpectedCode(f"{target.name} in {place.file.file} is not a form the patch is written for")
    return shape.change(place, target, unit, order)


def _rewriter(transform: Transform | None, releases: Sequence[str] = ()) -> Callable[[statements.Unit, Target], str]:
    """The new text of a statement in a form the patch is written for: the fixed text (its form's own, else the
    target's; of the form of `releases`, where two share a text) through libcst, an entry's own transform, or schema
    2's dedented text indented."""

    def rewritten(unit: statements.Unit, target: Target) -> str:
        if target.legacy:
            return _legacy(unit, target, transform)
        if transform is not None and unit.kind == statements.FUNCTION:
            return _custom(unit, target, transform)
        return replace_with_fixed(unit, target, target.fixed_for(digest_of(unit, target), releases))

    return rewritten


def _check(result: bytes, source: bytes, patch: Patch, file: PatchFile, expected: dict[str, str | None]) -> None:
    bug = f"this is a bug in the catalog entry {patch.id} or in hfpatch"
    try:
        parsed = statements.parse(result, file.file)
    except UnexpectedCode:
        raise UnexpectedCode(f"the patched {file.file} would not be valid Python; {bug}") from None
    for target in file.targets:
        unit = unit_of(parsed, target)
        digest = expected[target.name]
        if digest is None:
            if unit is not None:
                raise UnexpectedCode(f"the transform left {target.name} in, which the fix removes; {bug}")
        elif unit is None or digest_of(unit, target) != digest:
            raise UnexpectedCode(f"the transform did not produce the fixed {target.name}; {bug}")
    known = file.known_file(hashlib.sha256(source).hexdigest())
    if known is not None and known.patched_sha256 and hashlib.sha256(result).hexdigest() != known.patched_sha256:
        upstream = f"upstream's {patch.fixed_in} file" if patch.fixed_in else "the file the entry records"
        what = "file" if len(patch.files) == 1 else file.file
        raise UnexpectedCode(f"the patched {what} would differ from {upstream}; {bug}")


# ------------------------------------------------------------------------ an entry's own transform, schema 2


def _custom(unit: statements.Unit, target: Target, transform: Transform) -> str:
    """An entry's transform.py works on the definition dedented, as a module of its own."""
    indent = unit.indent
    if not all(line.startswith(indent) or not line.strip() for line in unit.text.split("\n")):
        raise UnexpectedCode(f"{target.name} has lines left of its def; an entry's transform cannot take it")
    dedented = statements.legacy_canonical(unit)
    try:
        module = libcst.parse_module(dedented + "\n")
    except libcst.ParserSyntaxError:
        raise UnexpectedCode(f"libcst cannot parse {target.name}") from None
    code = transform(module, target.name).code.rstrip("\n")
    return "\n".join(f"{indent}{line}" if line else line for line in code.split("\n"))


def _legacy(unit: statements.Unit, target: Target, transform: Transform | None) -> str:
    """Schema 2: the fixed text is the dedented definition, indented for its place (blank lines stay blank)."""
    assert target.fixed_text is not None
    try:
        fixed = ast.parse(target.fixed_text).body
    except SyntaxError:
        fixed = []
    if len(fixed) != 1 or not isinstance(fixed[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise UnexpectedCode(f"the fixed text of {target.name} is not a function definition")
    if transform is not None:
        return _custom(unit, target, transform)
    return "\n".join(line.rstrip("\r\n") for line in shapes.legacy_placed(target.fixed_text, unit.indent, "\n"))


def _custom_transform(patch: Patch) -> Transform | None:
    if patch.transform is None:
        return None
    spec = importlib.util.spec_from_file_location(f"hfpatch_transform_{patch.id.replace('-', '_')}", patch.transform)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    transform: Transform = module.transform
    return transform
