"""Where a definition stands in a Python file, and its canonical text. Pure: bytes in, places and text out.

The canonical text of a definition is what the catalog's digests are taken of: its lines from the first decorator
to the end of its body, the indentation of its `def` line removed, newlines as "\\n", no final newline. A method
and a module-level function with the same code have the same canonical text, and so does a file with CRLF endings.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from typing import Any, NamedTuple

from hfpatch.errors import UnexpectedCode

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class SourceFile(NamedTuple):
    """A decoded Python file, split into lines as Python's tokenizer counts them (endings kept)."""

    encoding: str
    lines: tuple[str, ...]
    tree: ast.Module

    def encode(self, lines: tuple[str, ...]) -> bytes:
        return "".join(lines).encode(self.encoding)

    @property
    def newline(self) -> str:
        first = next((line for line in self.lines if line.endswith(("\n", "\r"))), "\n")
        return first[len(first.rstrip("\r\n")) :]


class Definition(NamedTuple):
    """A function's place in a file: lines[start:end] hold it, decorators included."""

    name: str
    start: int
    end: int
    indent: str
    canonical: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical.encode("utf-8")).hexdigest()


def parse(source: bytes, what: str) -> SourceFile:
    """Decode and parse a file (never run it); UnexpectedCode names `what` and why it is not Python."""
    if not source.strip():
        raise UnexpectedCode(f"{what} is empty")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        raise UnexpectedCode(f"{what} is not valid UTF-8 (or its declared encoding)") from None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if isinstance(error, SyntaxError) and error.lineno else ""
        raise UnexpectedCode(f"{what} is not valid Python{where}") from None
    return SourceFile(encoding, tuple(_LINE.findall(text)), tree)


def find(source: SourceFile, qualname: str) -> Definition | None:
    """The function (or Class.method) that Python binds to `qualname` when it runs the module, or None."""
    node = _bound_node(source.tree.body, qualname.split("."))
    if node is None:
        return None
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    assert node.end_lineno is not None
    start, end = first - 1, node.end_lineno
    head = source.lines[node.lineno - 1]
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    return Definition(qualname, start, end, indent, canonical(source.lines[start:end], indent))


def kind_of(source: SourceFile, qualname: str) -> str | None:
    """What `qualname` is at its place: "function", "class", "variable", or None where nothing binds it."""
    *outer, name = qualname.split(".")
    body: list[ast.stmt] = source.tree.body
    if outer:
        scope = _last(body, outer[0], (ast.ClassDef,))
        if scope is None:
            return None
        body = scope.body
    kind = None
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            kind = "function"
        elif isinstance(node, ast.ClassDef) and node.name == name:
            kind = "class"
        elif name in _assigned_names(node):
            kind = "variable"
    return kind


def canonical(lines: tuple[str, ...] | list[str], indent: str) -> str:
    stripped = [line.rstrip("\r\n") for line in lines]
    dedented = [line[len(indent) :] if line.startswith(indent) else line for line in stripped]
    return "\n".join(dedented).rstrip("\n")


def line_digests(text: str) -> tuple[str, ...]:
    return tuple(hashlib.sha256(line.encode("utf-8")).hexdigest()[:12] for line in text.split("\n"))


def module_names(source: SourceFile) -> frozenset[str]:
    """The names a module binds at its top level: imports, definitions, assignments (what a function may use)."""
    names: set[str] = set()
    for node in source.tree.body:
        names |= _bound_at_top(node)
    return frozenset(names)


def _bound_at_top(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
    bound = _assigned_names(node)
    # Imports and definitions inside top-level if/try blocks (TYPE_CHECKING, optional dependencies) bind too.
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            bound |= _bound_at_top(child)
    return bound


def _assigned_names(node: ast.AST) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = set()
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Name):
                names.add(part.id)
    return names


def _bound_node(body: list[ast.stmt], path: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if len(path) == 2:
        scope = _last(body, path[0], (ast.ClassDef,))
        return None if scope is None else _bound_node(scope.body, path[1:])
    found = _last(body, path[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return found if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _last(body: list[ast.stmt], name: str, kinds: tuple[type[ast.stmt], ...]) -> Any:
    found = None
    for node in body:
        if isinstance(node, kinds) and getattr(node, "name", None) == name:
            found = node  # the last definition is the one Python binds
    return found
