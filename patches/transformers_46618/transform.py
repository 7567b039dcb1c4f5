"""The upstream change of transformers PR #46618, as a libcst transform.

Hashing a local module must not follow the hub cache's file symlinks into `blobs/`: relative imports are looked up
beside the file as the snapshot shows it. Only the directory part of each path is canonicalised, so that the cache
key stays relative to the (resolved) model directory even when the snapshot is reached through a symlinked ancestor.
"""

from __future__ import annotations

from collections import Counter

import libcst

from hfpatch.errors import TransformMismatch

FUNCTION = "_compute_local_source_files_hash"
HELPER = "_resolve_relative_source_path"
CANONICAL = "canonical_path"
SOURCE = "source_file_path"

# target of the assignment -> argument of the `Path(...).resolve()` it is assigned
_UNRESOLVED_ASSIGNMENTS = {"resolved_module_file": "resolved_module_file", SOURCE: "source_file"}


def _resolved_path_argument(node: libcst.BaseExpression) -> str | None:
    """`Path(<name>).resolve()` -> "<name>"; anything else -> None.

    Plain isinstance checks rather than libcst.matchers: importing the matchers costs apply about 0.2 s.
    """
    if not (isinstance(node, libcst.Call) and not node.args and isinstance(node.func, libcst.Attribute)):
        return None
    inner = node.func.value
    if node.func.attr.value != "resolve" or not isinstance(inner, libcst.Call):
        return None
    if not (isinstance(inner.func, libcst.Name) and inner.func.value == "Path" and len(inner.args) == 1):
        return None
    argument = inner.args[0]
    if argument.keyword is not None or argument.star or not isinstance(argument.value, libcst.Name):
        return None
    return argument.value.value


class _Backport(libcst.CSTTransformer):
    def __init__(self, config: libcst.PartialParserConfig) -> None:
        super().__init__()
        self.config = config
        self.functions: list[str] = []
        self.edits: Counter[str] = Counter()

    def visit_FunctionDef(self, node: libcst.FunctionDef) -> bool:
        self.functions.append(node.name.value)
        return self.functions[0] == FUNCTION

    def leave_FunctionDef(
        self, original_node: libcst.FunctionDef, updated_node: libcst.FunctionDef
    ) -> libcst.FunctionDef:
        self.functions.pop()
        if self.functions != [FUNCTION] or updated_node.name.value != HELPER:
            return updated_node
        assert isinstance(updated_node.body, libcst.IndentedBlock)
        canonical = libcst.parse_statement(
            f"{CANONICAL} = {SOURCE}.parent.resolve() / {SOURCE}.name\n", config=self.config
        )
        self.edits["canonical path"] += 1
        body = updated_node.body.with_changes(body=(canonical, *updated_node.body.body))
        return updated_node.with_changes(body=body)

    def _in_helper(self) -> bool:
        return self.functions == [FUNCTION, HELPER]

    def leave_Assign(self, original_node: libcst.Assign, updated_node: libcst.Assign) -> libcst.Assign:
        if self.functions != [FUNCTION] or len(updated_node.targets) != 1:
            return updated_node
        target = updated_node.targets[0].target
        if not isinstance(target, libcst.Name) or target.value not in _UNRESOLVED_ASSIGNMENTS:
            return updated_node
        if _resolved_path_argument(updated_node.value) != _UNRESOLVED_ASSIGNMENTS[target.value]:
            return updated_node
        call = updated_node.value
        assert isinstance(call, libcst.Call) and isinstance(call.func, libcst.Attribute)
        self.edits[f"keep {target.value} unresolved"] += 1
        return updated_node.with_changes(value=call.func.value)

    def leave_Return(self, original_node: libcst.Return, updated_node: libcst.Return) -> libcst.Return:
        if not self._in_helper() or updated_node.value is None:
            return updated_node
        # `source_file_path.<method>(...)...` -> `canonical_path.<method>(...)...`
        self.edits["return canonical path"] += 1
        return updated_node.with_changes(value=updated_node.value.visit(_RenameSource()))

    def leave_ExceptHandler(
        self, original_node: libcst.ExceptHandler, updated_node: libcst.ExceptHandler
    ) -> libcst.ExceptHandler:
        if not self._in_helper() or not isinstance(updated_node.body, libcst.IndentedBlock):
            return updated_node
        first, *rest = updated_node.body.body
        if not isinstance(first, libcst.SimpleStatementLine) or not first.leading_lines:
            return updated_node
        # Upstream dropped the comment on the fallback together with the change.
        self.edits["drop fallback comment"] += 1
        first = first.with_changes(leading_lines=())
        return updated_node.with_changes(body=updated_node.body.with_changes(body=(first, *rest)))


class _RenameSource(libcst.CSTTransformer):
    def leave_Name(self, original_node: libcst.Name, updated_node: libcst.Name) -> libcst.Name:
        if updated_node.value == SOURCE:
            return updated_node.with_changes(value=CANONICAL)
        return updated_node


_EXPECTED_EDITS = Counter(
    {
        "canonical path": 1,
        "keep resolved_module_file unresolved": 1,
        f"keep {SOURCE} unresolved": 1,
        "return canonical path": 2,
        "drop fallback comment": 1,
    }
)


def transform(module: libcst.Module) -> libcst.Module:
    """Rewrite the module's top-level _compute_local_source_files_hash; every other node is left as it is."""
    backport = _Backport(module.config_for_parsing)
    result = module.visit(backport)
    if backport.edits != _EXPECTED_EDITS:
        raise TransformMismatch(
            f"the {FUNCTION} transform made {dict(backport.edits)}, expected {dict(_EXPECTED_EDITS)}"
        )
    return result
