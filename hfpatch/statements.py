"""Where each statement of a Python file stands, under a key that names it across releases. Pure: bytes in, places
and text out.

A file's top level, and the body of each class, is a sequence of statements; each is one *unit* of a patch: a
function, a class, an import, an assignment, any other statement. A unit's key names it in its scope, the same way
in every release: a definition or an assignment by the name it binds (`f`, `Config.__init__`, `LIMIT`), an import
by what it imports from (`from .utils import`, `import numpy as np`), any other statement by its head (`if
TYPE_CHECKING`, `AutoConfig.register()`). Where a key stands more than once in a scope (a property and its setter,
overloads, two `if TYPE_CHECKING` blocks), the last one has the key itself, as the last definition is the one Python
binds, and the ones before it are `key#1`, `key#2`, ...

A unit's text is its own lines, from its first decorator to its last line, exactly as the file has them (the
indentation of its scope included, newlines as "\\n"): what the catalog's digests are taken of, and what a patch
puts in. The comment and blank lines just above it are its lead, kept apart: they are not code.

Entries of schema 2 digest the older canonical text (`legacy_canonical`): the definition dedented by the indentation
of its `def` line.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from typing import NamedTuple

from hfpatch.entry import text_sha256
from hfpatch.errors import UnexpectedCode

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
FUNCTION, CLASS, ASSIGNMENT, IMPORT, STATEMENT = "function", "class", "variable", "import", "statement"


class SourceFile(NamedTuple):
    """A decoded Python file, split into lines as Python's tokenizer counts them (endings kept)."""

    encoding: str
    lines: tuple[str, ...]
    tree: ast.Module

    def encode(self, lines: tuple[str, ...] | list[str]) -> bytes:
        return "".join(lines).encode(self.encoding)

    @property
    def newline(self) -> str:
        first = next((line for line in self.lines if line.endswith(("\n", "\r"))), "\n")
        return first[len(first.rstrip("\r\n")) :]


class Unit(NamedTuple):
    """One statement of a scope: lines[start:end] hold it (decorators included), lines[lead:start] its lead."""

    key: str
    kind: str
    binds: frozenset[str]
    lead: int
    start: int
    end: int
    indent: str
    text: str
    node: ast.stmt

    @property
    def sha256(self) -> str:
        return text_sha256(self.text)


# The files parsed in this process, by their bytes alone (`what` only names a file that does not parse): several
# entries of a catalog name one file (check parses a file that no entry knows by digest once, whichever entries name
# it), and apply parses the original and the patched text to rewrite, then to tell what runs at import (hfpatch.
# importcheck). A SourceFile is never changed once made.
_PARSED: dict[bytes, SourceFile] = {}
_PARSED_KEPT = 8


def parse(source: bytes, what: str) -> SourceFile:
    """Decode and parse a file (never run it); UnexpectedCode names `what` and why it is not Python."""
    kept = _PARSED.get(source)
    if kept is None:
        kept = _parse(source, what)
        if len(_PARSED) >= _PARSED_KEPT:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[source] = kept
    return kept


def _parse(source: bytes, what: str) -> SourceFile:
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


def units(source: SourceFile, scope: str = "") -> list[Unit]:
    """The units of the module (scope "") or of the class a scope names (`Config`, `Outer.Inner`), in file order;
    [] where the scope is not a class of the file."""
    if not scope:
        return _units(source, source.tree.body, "", 0)
    owner = find(source, scope)
    if owner is None or not isinstance(owner.node, ast.ClassDef):
        return []
    return _units(source, owner.node.body, f"{scope}.", owner.node.lineno)


def find(source: SourceFile, key: str) -> Unit | None:
    """The unit a key names, or None where the file has none such. A key is read against the file: `A.b` is the
    unit `b` of class `A` where the file has a class `A`, and the module's statement `A.b` (`A.b = 1`) otherwise."""
    scope: list[Unit] = _units(source, source.tree.body, "", 0)
    prefix = ""
    rest = key
    while True:
        found = next((unit for unit in scope if unit.key == prefix + rest), None)
        if found is not None:
            return found
        head, dot, tail = rest.partition(".")
        owner = next((unit for unit in scope if unit.key == prefix + head and unit.kind == CLASS), None)
        if not dot or owner is None:
            return None
        assert isinstance(owner.node, ast.ClassDef)
        prefix = f"{prefix}{head}."
        scope, rest = _units(source, owner.node.body, prefix, owner.node.lineno), tail


def find_bound(source: SourceFile, qualname: str) -> Unit | None:
    """The definition Python binds to `qualname` (`f`, `Class.method`) when it runs the module: the last one of that
    name in its scope, and only where it is a function (what schema-2 entries name)."""
    scope, _, name = qualname.rpartition(".")
    if scope:
        classes = [unit for unit in units(source) if unit.kind == CLASS and isinstance(unit.node, ast.ClassDef)]
        owner = next((unit for unit in reversed(classes) if unit.node.name == scope), None)  # type: ignore[attr-defined]
        if owner is None or any(
            isinstance(unit.node, _DEFINITIONS) and unit.node.name == scope and unit.start > owner.start
            for unit in units(source)
        ):
            return None
        body = _units(source, owner.node.body, f"{owner.key}.", owner.node.lineno)  # type: ignore[attr-defined]
    else:
        body = units(source)
    found = [unit for unit in body if isinstance(unit.node, _DEFINITIONS) and unit.node.name == name]
    last = found[-1] if found else None
    return last if last is not None and last.kind == FUNCTION else None


def owner_of(source: SourceFile, key: str) -> str:
    """The class a key's unit lives in, or would live in ("" for the module): the longest run of its leading parts
    that names a class of the file. For a key the file does not have too (an insertion's)."""
    scope: list[Unit] = _units(source, source.tree.body, "", 0)
    prefix = ""
    rest = key
    while True:
        head, dot, tail = rest.partition(".")
        owner = next((unit for unit in scope if unit.key == prefix + head and unit.kind == CLASS), None)
        if not dot or owner is None or any(unit.key == prefix + rest for unit in scope):
            return prefix.rstrip(".")
        assert isinstance(owner.node, ast.ClassDef)
        prefix = f"{prefix}{head}."
        scope, rest = _units(source, owner.node.body, prefix, owner.node.lineno), tail


def bound_to(source: SourceFile, qualname: str) -> list[Unit]:
    """Every unit that binds `qualname` (`f`, `Config.x`): a function and its overloads, a property and its setter,
    a name assigned twice."""
    scope, _, name = qualname.rpartition(".")
    return [unit for unit in units(source, scope) if name in unit.binds]


def _units(source: SourceFile, body: list[ast.stmt], prefix: str, floor: int) -> list[Unit]:
    spans: list[tuple[list[ast.stmt], int, int]] = []
    for node in body:
        first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", ()))]) - 1
        end = node.end_lineno or node.lineno
        if spans and first < spans[-1][2]:  # statements that share a line (`a = 1; b = 2`) are one unit
            nodes, start, _ = spans.pop()
            spans.append(([*nodes, node], start, end))
        else:
            spans.append(([node], first, end))
    found: list[Unit] = []
    bases = ["; ".join(_base_key(node, node is body[0]) for node in nodes) for nodes, _, _ in spans]
    total = {base: bases.count(base) for base in bases}
    seen: dict[str, int] = {}
    previous_end = floor
    for (nodes, start, end), base in zip(spans, bases, strict=True):
        # The last statement of a key has the key itself (the definition Python binds); earlier ones are numbered.
        seen[base] = seen.get(base, 0) + 1
        key = prefix + (base if seen[base] == total[base] else f"{base}#{seen[base]}")
        lead = start
        while lead > previous_end and _is_trivia(source.lines[lead - 1]):
            lead -= 1
        lines = source.lines[start:end]
        head = lines[0]
        indent = head[: len(head) - len(head.lstrip(" \t"))]
        text = "\n".join(line.rstrip("\r\n") for line in lines)
        kind, binds = _kind(nodes)
        found.append(Unit(key, kind, binds, lead, start, end, indent, text, nodes[0]))
        previous_end = end
    return found


def _is_trivia(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _base_key(node: ast.stmt, first_of_body: bool) -> str:
    if isinstance(node, _DEFINITIONS):
        return node.name
    if isinstance(node, ast.Assign):
        return " = ".join(ast.unparse(target) for target in node.targets)
    if isinstance(node, ast.AnnAssign):
        return ast.unparse(node.target)
    if isinstance(node, ast.AugAssign):
        return f"{ast.unparse(node.target)} {_OPERATORS.get(type(node.op), '?')}="
    if isinstance(node, ast.Import):
        names = (alias.name + (f" as {alias.asname}" if alias.asname else "") for alias in node.names)
        return "import " + ", ".join(names)
    if isinstance(node, ast.ImportFrom):
        return f"from {'.' * node.level}{node.module or ''} import"
    if isinstance(node, ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return "__doc__" if first_of_body else '"""'  # a docstring; a string that documents what is above it
        if isinstance(node.value, ast.Call):
            return f"{ast.unparse(node.value.func)}()"
        return ast.unparse(node.value)[:80]
    if isinstance(node, (ast.If, ast.While)):
        return f"{type(node).__name__.lower()} {ast.unparse(node.test)}"
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return "with " + ", ".join(ast.unparse(item) for item in node.items)
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        inner = getattr(node, "body", [])
        return "try" + (f": {_base_key(inner[0], False)}" if inner else "")
    return type(node).__name__.lower()


_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@",
}  # fmt: skip


def _kind(nodes: list[ast.stmt]) -> tuple[str, frozenset[str]]:
    binds: set[str] = set()
    for node in nodes:
        binds |= bound_names(node)
    node = nodes[0]
    if len(nodes) == 1 and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return FUNCTION, frozenset(binds)
    if len(nodes) == 1 and isinstance(node, ast.ClassDef):
        return CLASS, frozenset(binds)
    if all(isinstance(each, (ast.Import, ast.ImportFrom)) for each in nodes):
        return IMPORT, frozenset(binds)
    if all(isinstance(each, (ast.Assign, ast.AnnAssign, ast.AugAssign)) for each in nodes):
        return ASSIGNMENT, frozenset(binds)
    return STATEMENT, frozenset(binds)


def bound_names(node: ast.stmt) -> set[str]:
    """The names a statement binds in its scope: what it defines, assigns or imports, in nested blocks too
    (imports under `if TYPE_CHECKING`, definitions under `try`), but not inside functions or classes."""
    if isinstance(node, _DEFINITIONS):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
    names = _assigned(node)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            names |= bound_names(child)
        elif isinstance(child, ast.ExceptHandler):
            names |= {child.name} if child.name else set()
            for statement in child.body:
                names |= bound_names(statement)
    return names


def _assigned(node: ast.AST) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    names = set()
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Name):
                names.add(part.id)
    # a walrus in an expression statement binds too
    if isinstance(node, ast.Expr):
        names |= {part.target.id for part in ast.walk(node) if isinstance(part, ast.NamedExpr)}
    return names


def module_names(source: SourceFile) -> frozenset[str]:
    """The names a module binds at its top level: imports, definitions, assignments (what a function may use)."""
    names: set[str] = set()
    for node in source.tree.body:
        names |= bound_names(node)
    return frozenset(names)


def find_indent(text: str) -> str:
    """The indentation of a unit's text: that of its first line."""
    first = text.split("\n", 1)[0]
    return first[: len(first) - len(first.lstrip(" \t"))]


def dedented(text: str) -> str:
    """A unit's text as code that compiles on its own: an indented one (a method) inside a block that takes it."""
    return f"if True:\n{text}\n" if find_indent(text) else f"{text}\n"


def lead_of(source: SourceFile, unit: Unit) -> str:
    """The comment and blank lines just above a unit, each ending in "\n" ("" where there are none)."""
    return "".join(line.rstrip("\r\n") + "\n" for line in source.lines[unit.lead : unit.start])


def placed_lead(lead: str, newline: str) -> list[str]:
    """A lead (lines each ending in "\n") as lines of a file whose lines end in `newline`."""
    return [line + newline for line in lead.split("\n")[:-1]]


def placed(text: str, newline: str) -> list[str]:
    """A unit's text as lines of a file whose lines end in `newline`."""
    return [line + newline for line in text.split("\n")]


# --------------------------------------------------------------------------------------- schema 2's digests


def legacy_canonical(unit: Unit) -> str:
    """The text schema-2 entries digest: the unit's lines with the indentation of its first line removed where a
    line starts with it, others as they are."""
    indent = unit.indent
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in unit.text.split("\n"))


def line_digests(text: str) -> tuple[str, ...]:
    """Short digests of each line: enough to point at the line where unknown code differs from a known form."""
    return tuple(hashlib.sha256(line.encode("utf-8")).hexdigest()[:12] for line in text.split("\n"))
