"""What the patch makes of a file: each target's definition replaced by its fixed text. Pure: bytes in, bytes out.

One generic libcst transform serves every patch: it replaces the definition with the fixed one, parsed as code (a
patch may bring its own transform where whole-definition replacement cannot express the change). Only each
definition's own lines are handed to libcst, dedented, and put back at the definition's indentation with the file's
line endings; every other byte of the file stays as it was. The result is checked, or nothing is returned: every
target must now have the fixed text, and a released file must become the file the catalog records.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

import libcst

from hfpatch import definitions
from hfpatch.entry import Patch, Target, Verdict
from hfpatch.errors import UnexpectedCode

Transform = Callable[[libcst.Module, str], libcst.Module]


class ReplaceDefinition(libcst.CSTTransformer):
    """Replace the module-level function named `name` by `replacement`, keeping the lines that lead into it."""

    def __init__(self, name: str, replacement: libcst.FunctionDef) -> None:
        super().__init__()
        self.name = name
        self.replacement = replacement
        self.replaced = 0

    def visit_FunctionDef(self, node: libcst.FunctionDef) -> bool:
        return False  # nested definitions are never the target

    def leave_FunctionDef(
        self, original_node: libcst.FunctionDef, updated_node: libcst.FunctionDef
    ) -> libcst.FunctionDef:
        if original_node.name.value != self.name:
            return updated_node
        self.replaced += 1
        return self.replacement.with_changes(leading_lines=original_node.leading_lines)


def replace_with_fixed(fixed_text: str) -> Transform:
    """The default transform: the definition becomes the fixed text."""

    def transform(module: libcst.Module, name: str) -> libcst.Module:
        fixed = libcst.parse_module(fixed_text + "\n")
        replacement = fixed.body[0] if len(fixed.body) == 1 else None
        if not isinstance(replacement, libcst.FunctionDef):
            raise UnexpectedCode(f"the fixed text of {name} is not a function definition")
        replacer = ReplaceDefinition(name.rsplit(".", 1)[-1], replacement)
        result = module.visit(replacer)
        if replacer.replaced != 1:
            raise UnexpectedCode(f"the transform found {replacer.replaced} definitions of {name}, not one")
        # The module holds only this definition: render it with the fixed text's indentation, not the file's
        # (a tab-indented file's would turn the fixed text's spaces into tabs, and it would not be the fixed text).
        return result.with_changes(default_indent=fixed.default_indent)

    return transform


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    lines: tuple[str, ...]


def patched(source: bytes, patch: Patch) -> bytes:
    """The file with the patch applied; raises UnexpectedCode unless every target comes out exactly fixed."""
    parsed = definitions.parse(source, patch.file)
    transform = _custom_transform(patch)
    edits = sorted((_edit(parsed, patch, target, transform) for target in patch.targets), key=lambda e: e.start)
    lines = list(parsed.lines)
    for edit in reversed([edit for edit in edits if edit is not None]):
        lines[edit.start : edit.end] = edit.lines
    result = parsed.encode(tuple(lines))
    _check(result, source, patch)
    return result


def _edit(parsed: definitions.SourceFile, patch: Patch, target: Target, transform: Transform | None) -> _Edit:
    found = definitions.find(parsed, target.name)
    if found is None:
        if not target.insert_if_absent:
            raise UnexpectedCode(f"{patch.file} has no {target.name}; nothing to patch")
        return _insertion(parsed, patch, target)
    if found.sha256 == target.fixed_sha256:
        return _Edit(found.start, found.start, ())
    form = target.form_of(found.sha256)
    if form is None or form.verdict is not Verdict.NEEDS_PATCH:
        # Never rewrite code the fix was not written for, whatever the caller decided before.
        raise UnexpectedCode(f"{target.name} in {patch.file} is not a form {patch.id} is written for")
    try:
        module = libcst.parse_module(found.canonical + "\n")
    except libcst.ParserSyntaxError:
        raise UnexpectedCode(f"libcst cannot parse {target.name} in {patch.file}") from None
    new = (transform or replace_with_fixed(target.fixed_text))(module, target.name).code
    return _Edit(found.start, found.end, _placed(new, found.indent, parsed.newline))


def _insertion(parsed: definitions.SourceFile, patch: Patch, target: Target) -> _Edit:
    """A definition the fix added: placed before the next target of the same scope, as upstream places helpers."""
    scope = target.name.rpartition(".")[0]
    later = patch.targets[patch.targets.index(target) + 1 :]
    for anchor in later:
        if anchor.name.rpartition(".")[0] != scope:
            continue
        found = definitions.find(parsed, anchor.name)
        if found is not None:
            blank = "\n\n" if scope else "\n\n\n"  # PEP 8: one blank line between methods, two at module level
            placed = _placed(target.fixed_text + blank, found.indent, parsed.newline)
            return _Edit(found.start, found.start, placed)
    raise UnexpectedCode(f"{target.name} is absent and no later target of its scope says where it goes")


def _placed(text: str, indent: str, newline: str) -> tuple[str, ...]:
    """Lines of `text`, indented for their place (blank lines stay blank) and ending as the file's lines do."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    lines = [f"{indent}{line}" if line.strip() else line for line in body.split("\n")] + [""] * (trailing - 1)
    return tuple(line + newline for line in lines)


def _check(result: bytes, source: bytes, patch: Patch) -> None:
    bug = f"this is a bug in the catalog entry {patch.id} or in hfpatch"
    try:
        parsed = definitions.parse(result, patch.file)
    except UnexpectedCode:
        raise UnexpectedCode(f"the patched {patch.file} would not be valid Python; {bug}") from None
    for target in patch.targets:
        found = definitions.find(parsed, target.name)
        if found is None or found.sha256 != target.fixed_sha256:
            raise UnexpectedCode(f"the transform did not produce the fixed {target.name}; {bug}")
    known = patch.known_file(hashlib.sha256(source).hexdigest())
    if known is not None and known.patched_sha256 and hashlib.sha256(result).hexdigest() != known.patched_sha256:
        raise UnexpectedCode(f"the patched file would differ from upstream's {patch.fixed_in} file; {bug}")


def _custom_transform(patch: Patch) -> Transform | None:
    if patch.transform is None:
        return None
    spec = importlib.util.spec_from_file_location(f"hfpatch_transform_{patch.id.replace('-', '_')}", patch.transform)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    transform: Transform = module.transform
    return transform
