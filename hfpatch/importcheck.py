"""The last line of defence: before apply writes anything, the patched modules are imported in the application's
interpreter, their new bytes read from a scratch copy (nothing is written to the package, bytecode included). Where
the patched modules fail to import and the originals do, apply refuses: a patch that breaks the import is no fix.

Importing a module of transformers costs about a second, so only a patch that changes what runs at import pays for
it: a statement of the module or of a class body, a decorator, a default, an annotation, or a function the module
calls while it imports. A patch that only changes the bodies of functions nothing calls at import cannot change
what importing does, and is not imported.
"""

from __future__ import annotations

import ast
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from hfpatch import reasons, statements
from hfpatch.environment import Python, run_in
from hfpatch.errors import InterpreterError, UnexpectedCode


class Patched(NamedTuple):
    """One file as it is and as the patch makes it."""

    module: str
    path: Path
    before: bytes
    after: bytes


def changes_what_runs_at_import(before: bytes, after: bytes, what: str) -> bool:
    """Whether the patched file runs other code than the original when it is imported. Pure."""
    if before == after:
        return False
    try:
        old, new = statements.parse(before, what), statements.parse(after, what)
    except UnexpectedCode:
        return True
    if _import_time(old) != _import_time(new):
        return True
    called = _names_called_at_import(new)
    changed = {unit.key for unit in _changed_functions(old, new, "")}
    return bool({key.rpartition(".")[2] for key in changed} & called)


def _import_time(source: statements.SourceFile) -> list[str]:
    """The module as it runs when imported: every statement with the bodies of its functions left out (their
    decorators, defaults and annotations kept)."""
    return [ast.dump(_without_function_bodies(node), include_attributes=False) for node in source.tree.body]


def _without_function_bodies(node: ast.AST) -> ast.AST:
    """The statement with every function's body a `pass`: new nodes only where a statement holds statements, the
    rest shared with the parsed file (which is shared in turn, never changed: statements.parse)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _copy(node, body=[ast.Pass()])
    bodies = {field: value for field, value in ast.iter_fields(node) if field in _BODIES and isinstance(value, list)}
    if not bodies:
        return node
    return _copy(node, **{field: [_without_function_bodies(each) for each in value] for field, value in bodies.items()})


# The fields that hold statements, or nodes that hold them (an except clause, a match case).
_BODIES = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _copy(node: ast.AST, **changed: object) -> ast.AST:
    fields = {field: getattr(node, field, None) for field in node._fields}
    return type(node)(**(fields | changed))


def _names_called_at_import(source: statements.SourceFile) -> set[str]:
    """Names the module reads while it runs, outside the bodies of its functions."""
    return {
        found.id
        for node in source.tree.body
        for found in ast.walk(_without_function_bodies(node))
        if isinstance(found, ast.Name) and isinstance(found.ctx, ast.Load)
    }


def _changed_functions(old: statements.SourceFile, new: statements.SourceFile, scope: str) -> list[statements.Unit]:
    before = {unit.key: unit for unit in statements.units(old, scope)}
    found = []
    for unit in statements.units(new, scope):
        previous = before.get(unit.key)
        if previous is not None and previous.text == unit.text:
            continue
        if unit.kind == statements.CLASS:
            found += _changed_functions(old, new, unit.key)
        elif unit.kind == statements.FUNCTION:
            found.append(unit)
    return found


class ImportCheck(NamedTuple):
    refusal: reasons.ImportBreaks | None = None  # why the patched modules must not be written
    note: reasons.ImportUntold | None = None  # what the check could not tell


def check(python: Python, files: Sequence[Patched]) -> ImportCheck:
    """Whether the patched modules import where the originals do. Where the originals fail to import too, the
    check says nothing of the patch, and the note says so."""
    # An emptied module (a file the patch removes) runs nothing at import: it cannot break what imports it.
    needed = [
        file for file in files if file.after and changes_what_runs_at_import(file.before, file.after, str(file.path))
    ]
    if not needed:
        return ImportCheck()
    modules = [file.module for file in needed]
    with tempfile.TemporaryDirectory(prefix="hfpatch-import-") as scratch:
        replaced = {}
        for index, file in enumerate(needed):
            copy = Path(scratch) / f"{index}.py"
            copy.write_bytes(file.after)
            replaced[str(file.path)] = str(copy)
        patched = _import(python, modules, replaced, scratch)
        if patched.get("ok"):
            return ImportCheck()
        original = _import(python, modules, {}, scratch)
    if not original.get("ok"):  # the environment cannot import the module at all: nothing the patch broke
        return ImportCheck(note=reasons.ImportUntold(str(original.get("module")), str(original.get("error"))))
    return ImportCheck(refusal=reasons.ImportBreaks(str(patched.get("module")), str(patched.get("error"))))


def _import(python: Python, modules: list[str], replaced: dict[str, str], scratch: str) -> dict[str, object]:
    request = {"action": "import", "modules": modules, "replaced": replaced}
    remote = python._replace(in_process=False)  # importing the package into hfpatch itself would run it here
    try:
        # From a scratch directory: not the checkout or wherever hfpatch runs, but the application's own path.
        output = run_in(remote, request, env={"PYTHONDONTWRITEBYTECODE": "1"}, cwd=scratch)
    except InterpreterError as error:
        return {"ok": False, "module": modules[0], "error": str(error)}
    lines = output.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        answer = {}
    return answer if isinstance(answer, dict) else {}
