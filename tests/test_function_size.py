"""Every function in hfpatch/ fits on a screen: no definition (its decorators included) is longer than 60 lines.

Read with ast from the checkout, so a nested function or a method counts as its own definition and its enclosing
function counts its lines too. A function still over the limit is named in OVER with its owner; the list only
shrinks: a name there that has come under the limit fails too, so it is taken out in the change that cut it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hfpatch"
LIMIT = 60

# "path:qualified name" -> the session that owns the file and is cutting it.
OVER: dict[str, str] = {}


def definitions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of a module with its dotted name inside the module (Class.method, outer.inner)."""
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                stack.append((f"{name}.", child))
            else:
                stack.append((prefix, child))


def length(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = min([function.lineno, *(decorator.lineno for decorator in function.decorator_list)])
    assert function.end_lineno is not None
    return function.end_lineno - first + 1


def lengths() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, function in definitions(tree):
            found[f"{path.relative_to(PACKAGE).as_posix()}:{name}"] = length(function)
    return found


def test_no_function_in_the_package_is_longer_than_60_lines() -> None:
    found = lengths()
    over = {name: lines for name, lines in found.items() if lines > LIMIT and name not in OVER}
    assert not over, f"over {LIMIT} lines (cut them, or name them in OVER with their owner): {over}"


def test_the_list_of_functions_still_over_only_shrinks() -> None:
    found = lengths()
    cut = [name for name in OVER if found.get(name, 0) <= LIMIT]
    assert not cut, f"no longer over {LIMIT} lines (or gone): take them out of OVER: {cut}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("def f():\n    pass\n", {"f": 2}, id="a-function"),
        pytest.param("@decorator\n@other(1)\ndef f():\n    pass\n", {"f": 4}, id="decorators-count"),
        pytest.param(
            "class C:\n    def m(self):\n        def inner():\n            pass\n        return inner\n",
            {"C.m": 4, "C.m.inner": 2},
            id="methods-and-nested-functions-by-their-dotted-names",
        ),
        pytest.param("if True:\n    async def g():\n        pass\n", {"g": 2}, id="inside-a-statement-at-module-level"),
    ],
)
def test_each_definition_is_measured_from_its_first_decorator_to_its_last_line(
    source: str, expected: dict[str, int]
) -> None:
    assert {name: length(function) for name, function in definitions(ast.parse(source))} == expected


def test_a_function_of_61_lines_is_over() -> None:
    source = "def f():\n" + "    x = 1\n" * 60
    ((name, function),) = definitions(ast.parse(source))
    assert (name, length(function)) == ("f", 61)
    assert length(function) > LIMIT
