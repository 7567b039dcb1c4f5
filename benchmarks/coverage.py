"""How much of a real upstream fix `hfpatch new` carries: the patch releases of Hugging Face libraries, file by file.

A patch release X.Y.Z (Z >= 1) carries only fixes cherry-picked onto X.Y.(Z-1), so the diff of the two wheels is a
set of real upstream fixes. For every `.py` file the two wheels hold in different forms (version bumps, added and
deleted files set aside), this installs the older release in a venv and runs hfpatch as a user would, in
subprocesses: `new`, `apply`, `check`, the modules' import, `revert`, `check`. What `new` is asked for is the mode:

- `module` (the default): `--target DIST:MODULE`, the whole module's fix, for every changed file; the changed files
  of one fix are one patch (`patch_groups`): a file whose newer text imports a name (at its top or in a function,
  directly or through a package's re-export) whose binding another changed file changes or adds goes with that
  file, transitively, in either direction. A helper whose signature a fix changes is then carried with its callers.
- `definitions`: each file alone, its changed functions and methods as targets (`targets_for`): hfpatch 0.2's reach.

Then it compares each patched file with the newer release's, statement by statement:

- fully backported: every top-level and class-body statement is the newer release's, the modules of the patch
  import where the originals did, and revert brings back the original bytes with `check` clean;
- partial: `new` wrote an entry, but it carries only part of the file's change;
- refused: `new` wrote nothing (exit 2), or apply refused what it wrote, with the reason in one of a few categories
  and the raw message;
- WRONG: apply said it succeeded but a module of the patch no longer imports, a statement the entry claims differs
  from the newer release's, or revert does not restore the bytes. Each is a bug in hfpatch, printed loudly (exit 1).

    python benchmarks/coverage.py --cache DIR [--mode module|definitions] [--set tuning|held-out] [--pair DIST==OLD]
        [--limit-files N] [--out JSON [--resume]] [--report JSON...]

Run it with an interpreter that has hfpatch, pip (25.1 or newer) and uv installed (`nox -s coverage` makes one).
It prints the table and writes every file's observations as JSON (--out) after each patch, for comparing two runs of
hfpatch; `--resume` keeps what a stopped run wrote there and runs the rest.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import difflib
import enum
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from hfpatch import statements
from hfpatch.statements import Unit

SCHEMA = 1
TORCH_VERSION = "2.13.0"  # the build on this machine's disk; any other version is gigabytes from the index
# Distributions whose modules import torch: the venv sees the shared torch through a .pth, never an install of it.
USES_TORCH = frozenset({"transformers", "accelerate", "peft"})
COMMAND_TIMEOUT = 900

# ------------------------------------------------------------------------------------------------------ the pairs


class Split(enum.Enum):
    TUNING = "tuning"
    HELD_OUT = "held-out"


@dataclass(frozen=True)
class Pair:
    """A patch release `new` and the release it was cut from, `old`."""

    distribution: str
    old: str
    new: str
    split: Split

    @property
    def name(self) -> str:
        return f"{self.distribution} {self.old}->{self.new}"

    @property
    def slug(self) -> str:
        return f"{canonicalize_name(self.distribution)}-{self.old}-{self.new}"


T, H = Split.TUNING, Split.HELD_OUT
# Every pair's releases are on the index as wheels. Sorted by distribution, then version; the split was fixed blind,
# before any run, by one rule: every third pair in this order is held out (`split_follows_the_rule` checks it).
PAIRS: tuple[Pair, ...] = (
    Pair("accelerate", "0.34.1", "0.34.2", T),
    Pair("accelerate", "1.8.0", "1.8.1", T),
    Pair("accelerate", "1.10.0", "1.10.1", H),
    Pair("huggingface_hub", "0.35.2", "0.35.3", T),
    Pair("huggingface_hub", "0.36.1", "0.36.2", T),
    Pair("huggingface_hub", "1.12.1", "1.12.2", H),
    Pair("huggingface_hub", "1.20.0", "1.20.1", T),
    Pair("huggingface_hub", "1.25.0", "1.25.1", T),
    Pair("peft", "0.15.1", "0.15.2", H),
    Pair("peft", "0.17.0", "0.17.1", T),
    Pair("peft", "0.18.0", "0.18.1", T),
    Pair("peft", "0.21.1", "0.21.2", H),
    Pair("transformers", "4.52.3", "4.52.4", T),
    Pair("transformers", "4.53.1", "4.53.2", T),
    Pair("transformers", "4.54.0", "4.54.1", H),
    Pair("transformers", "4.55.3", "4.55.4", T),
    Pair("transformers", "4.56.1", "4.56.2", T),
    Pair("transformers", "4.57.1", "4.57.2", H),
    Pair("transformers", "5.5.3", "5.5.4", T),
    Pair("transformers", "5.8.0", "5.8.1", T),
    Pair("transformers", "5.10.1", "5.10.2", H),
    Pair("transformers", "5.14.0", "5.14.1", T),
    Pair("transformers", "5.16.0", "5.16.1", T),
    Pair("transformers", "5.22.1", "5.22.2", H),
)


def split_follows_the_rule(pairs: Sequence[Pair]) -> bool:
    ordered = sorted(pairs, key=lambda pair: (pair.distribution, Version(pair.old)))
    return list(pairs) == ordered and all(
        pair.split is (Split.HELD_OUT if index % 3 == 2 else Split.TUNING) for index, pair in enumerate(pairs)
    )


# ------------------------------------------------------------------------- the pure core: what changed in a file


class FileKind(enum.Enum):
    CHANGED = "changed"
    VERSION_BUMP = "version-bump"
    ADDED = "added"
    ADDED_MODEL = "added-model"
    DELETED = "deleted"


EXCLUDED_KINDS = (FileKind.VERSION_BUMP, FileKind.ADDED, FileKind.ADDED_MODEL, FileKind.DELETED)
_MODEL_DIRECTORY = re.compile(r"^(?P<root>(?:.+/)?models/[^/]+/)")
_VERSION_TEXT = re.compile(r"\d+(\.\d+)+\S*")


def classify_files(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> dict[str, FileKind]:
    """Every `.py` path the two releases do not share byte for byte, and what kind of difference it is."""
    kinds: dict[str, FileKind] = {}
    for path in sorted(old.keys() | new.keys()):
        if path not in new:
            kinds[path] = FileKind.DELETED
        elif path not in old:
            kinds[path] = FileKind.ADDED_MODEL if _in_new_model_directory(path, old) else FileKind.ADDED
        elif old[path] != new[path]:
            kinds[path] = FileKind.VERSION_BUMP if is_version_bump(old[path], new[path]) else FileKind.CHANGED
    return kinds


def _in_new_model_directory(path: str, old: Iterable[str]) -> bool:
    match = _MODEL_DIRECTORY.match(path)
    return match is not None and not any(other.startswith(match["root"]) for other in old)


def is_version_bump(old: bytes, new: bytes) -> bool:
    """The two files differ only in string literals that are versions (`__version__ = "4.53.2"`)."""
    old_tokens, new_tokens = _version_blind_tokens(old), _version_blind_tokens(new)
    return old_tokens is not None and old_tokens == new_tokens


def _version_blind_tokens(source: bytes) -> list[str] | None:
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return ["<version>" if _is_version_literal(token) else token.string for token in tokens]


def _is_version_literal(token: tokenize.TokenInfo) -> bool:
    if token.type != tokenize.STRING:
        return False
    try:
        value = ast.literal_eval(token.string)
    except (ValueError, SyntaxError):
        return False
    if not isinstance(value, str) or not _VERSION_TEXT.fullmatch(value):
        return False
    try:
        Version(value)
    except InvalidVersion:
        return False
    return True


def module_of(path: str) -> str:
    """The module a wheel member is: a/b/c.py is a.b.c, a/b/__init__.py is a.b."""
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


# ----------------------------------------------------------------------- the pure core: statements and definitions

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line breaks Python counts; str.splitlines counts form feeds too


def statement_units(source: str) -> tuple[Unit, ...]:
    """Every statement of the module and of each class's body, as hfpatch names them (hfpatch.statements: a key
    each, the text as the file has it), a class by its header alone: a changed method is that method, not its
    class. A unit of a class body is indented; one of the module is not."""
    parsed = statements.parse(source.encode("utf-8"), "the file")
    lines = _LINE_BREAK.split(source)
    units: list[Unit] = []
    for unit in statements.units(parsed):
        if unit.kind == statements.CLASS:
            assert isinstance(unit.node, ast.ClassDef)
            units.append(unit._replace(text=_class_header(unit.node, lines)))
            units.extend(statements.units(parsed, unit.key))
        else:
            units.append(unit)
    return tuple(units)


def in_a_class(unit: Unit) -> bool:
    return bool(unit.indent)


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])


def _text(node: ast.stmt, lines: Sequence[str]) -> str:
    assert node.end_lineno is not None
    return _dedented(lines[_first_line(node) - 1 : node.end_lineno])


def _class_header(node: ast.ClassDef, lines: Sequence[str]) -> str:
    """Decorators and the `class` line(s), up to the first statement of the body, without comments after them."""
    end = max(node.lineno, _first_line(node.body[0]) - 1)
    header = list(lines[_first_line(node) - 1 : end])
    while len(header) > 1 and (not header[-1].strip() or header[-1].strip().startswith("#")):
        header.pop()
    return _dedented(header)


def _dedented(lines: Sequence[str]) -> str:
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))] if lines else ""
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines).rstrip()


def definition_texts(source: str) -> dict[str, str]:
    """Module-level functions and methods (Class.method) as Python binds them (the last of a name), by text, in the
    order of the file."""
    lines = _LINE_BREAK.split(source)
    functions: dict[str, ast.stmt] = {}
    classes: dict[str, ast.ClassDef] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
            classes.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
            functions.pop(node.name, None)
    bound = list(functions.items())
    for name, node in classes.items():
        methods: dict[str, ast.stmt | None] = {}
        for child in node.body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                methods[child.name] = None if isinstance(child, ast.ClassDef) else child
        bound += [(f"{name}.{method}", child) for method, child in methods.items() if child is not None]
    return {name: _text(node, lines) for name, node in sorted(bound, key=lambda item: item[1].lineno)}


def class_names(source: str) -> frozenset[str]:
    return frozenset(
        unit.key for unit in statement_units(source) if unit.kind == statements.CLASS and not in_a_class(unit)
    )


def targets_for(old_text: str, new_text: str) -> list[str]:
    """The one place that chooses what `hfpatch new` is asked to carry (mode `definitions`): every module-level
    function and method whose text differs in the newer release, or that the newer release adds, in its order."""
    old = definition_texts(old_text)
    return [name for name, text in definition_texts(new_text).items() if old.get(name) != text]


def units_differing(left: Sequence[Unit], right: Sequence[Unit]) -> list[Unit]:
    """The units of either side that the other lacks, in order (a changed statement counts once, by its right); a
    unit is the same in both where its key and text are."""
    matcher = difflib.SequenceMatcher(None, _compared(left), _compared(right), autojunk=False)
    differing: list[Unit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        right_part, left_part = list(right[j1:j2]), list(left[i1:i2])
        differing += right_part + left_part[len(right_part) :]
    return differing


def _compared(units: Sequence[Unit]) -> list[tuple[str, str]]:
    return [(unit.key, unit.text) for unit in units]


# ------------------------------------------------------------------------- the pure core: why `new` said no


class Reason(enum.Enum):
    NEEDS_IMPORT = "needs an import"
    NEEDS_STATEMENT = "needs a constant/statement"
    CLASS_ATTRIBUTE = "class attribute"
    NEW_CLASS = "new class"
    SIGNATURE = "signature change"
    NAME_MISSING = "name missing"
    MULTI_FILE = "multi-file"
    PLACEMENT = "new definition, no place"
    ONLY_NEW = "only new definitions"
    STATEMENTS_ONLY = "statements only (no target)"
    CALLEE_CHANGED = "calls into a module it does not carry"
    TAKES_AWAY = "takes away a name still used"
    OTHER_KIND = "another kind of statement"
    APPLY_REFUSED = "apply refused the entry"
    APPLY_IMPORT = "apply refused: the patched module would not import"
    ADDED_FILE = "needs a file the release lacks"
    MODULE_TARGET = "module target unsupported"
    INTERNAL_ERROR = "internal error"
    SELF_CHECK = "new's self-check failed"
    REWRITE = "the rewrite does not produce the fix"
    OTHER = "other"


@dataclass(frozen=True)
class Context:
    """What the classification of a refusal may look at besides the message."""

    old: str  # the older release
    old_classes: frozenset[str]
    imported_from: Mapping[str, str]  # in the newer release's file: a name it imports -> the module it comes from
    pair_modules: frozenset[str]  # the modules the pair changes or adds, outside this file's patch


_MISSING = re.compile(
    r"uses (?P<name>[A-Za-z_][\w.]*), which [^;]*?(?:lacks|lack); "
    r"(?:(?P<function>add --target)|(?P<unbound>the .+? module does not bind it)|it is an? (?P<kind>\w+) in)"
)


def refusal_reasons(stdout: str, stderr: str, targets: Sequence[str], context: Context) -> list[Reason]:
    """The categories of a refusal of `new` (exit 2), most telling first; the raw message is kept beside them.
    hfpatch 0.3 says why on stdout (after the table) and ends with one line on stderr: both are read."""
    said = f"{stdout}\n{stderr}"
    if "internal error" in stderr:
        return [Reason.INTERNAL_ERROR]
    if "is not DIST:MODULE:QUALNAME" in stderr:
        return [Reason.MODULE_TARGET]
    if "a bug in hfpatch new" in said or "this is a bug in the catalog entry" in said:
        return [Reason.SELF_CHECK]
    missing = [_missing_reason(match, context) for match in _MISSING.finditer(said)]
    if missing:
        return list(dict.fromkeys(missing))
    unsafe = [reason for pattern, reason in _UNSAFE if pattern in said]
    if unsafe:
        return unsafe
    if "no release read needs the patch" in stderr:
        return [_not_applicable_reason(_table_reason(stdout, context.old))]
    if "no later target of its scope says where it goes" in said:
        new_class = any("." in name and name.split(".")[0] not in context.old_classes for name in targets)
        return [Reason.NEW_CLASS if new_class else Reason.PLACEMENT]
    return [Reason.OTHER]


def _missing_reason(match: re.Match[str], context: Context) -> Reason:
    if _comes_from_the_pair(match["name"], context):
        return Reason.MULTI_FILE  # the helper arrives through another file the same fix changes
    if match["unbound"]:
        return Reason.NAME_MISSING
    if match["function"]:
        return Reason.OTHER  # a plain helper: targets_for asks for every changed function, so this is a surprise
    return {"import": Reason.NEEDS_IMPORT, "class": Reason.NEW_CLASS}.get(match["kind"], Reason.NEEDS_STATEMENT)


_UNSAFE = (("; carry that module too", Reason.CALLEE_CHANGED), ("the fix takes away ", Reason.TAKES_AWAY))


_NO_MODULE = re.compile(r"No module named '(?P<module>[\w.]+)'")


def apply_refusal_reason(output: str, added_modules: frozenset[str]) -> Reason:
    """Why apply refused an entry new wrote: its import check (the patched module would not import), and there an
    import of a module the pair adds (a file hfpatch does not carry), or something else."""
    if "fails to import here" not in output:
        return Reason.APPLY_REFUSED
    missing = _NO_MODULE.search(output)
    return Reason.ADDED_FILE if missing and missing["module"] in added_modules else Reason.APPLY_IMPORT


def _table_reason(stdout: str, release: str) -> str:
    return next((line for line in stdout.splitlines() if line.split(" ", 1)[0] == release), "")


def _not_applicable_reason(row: str) -> Reason:
    if row.split()[2:3] == ["absent"]:
        return Reason.ONLY_NEW  # every target is new: the release the patch is for has none of them
    if "signature" in row:
        return Reason.SIGNATURE
    if "never defines" in row:
        return Reason.CLASS_ATTRIBUTE
    if "the transform did not produce the fixed" in row:
        return Reason.REWRITE
    if re.search(r" is an? \w+ here, not an? ", row):
        return Reason.OTHER_KIND
    return Reason.OTHER


def statement_reasons(changes: Iterable[Unit], context: Context) -> list[Reason]:
    """What a fix made of statements alone needs, by the kinds of statement it changes (no definition to target)."""
    reasons = []
    for unit in changes:
        if in_a_class(unit):
            reasons.append(Reason.CLASS_ATTRIBUTE)
        elif unit.kind == statements.CLASS:
            reasons.append(Reason.OTHER if unit.key in context.old_classes else Reason.NEW_CLASS)
        elif unit.kind == statements.IMPORT:
            reasons.append(Reason.MULTI_FILE if _imports_from_the_pair(unit, context) else Reason.NEEDS_IMPORT)
        elif unit.kind in (statements.ASSIGNMENT, statements.STATEMENT):
            reasons.append(Reason.NEEDS_STATEMENT)
    return [Reason.STATEMENTS_ONLY, *dict.fromkeys(reasons)]


def _imports_from_the_pair(unit: Unit, context: Context) -> bool:
    """An import of a module that the same fix changes or adds: the fix spans files."""
    node = unit.node
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    return any(_comes_from_the_pair(alias.asname or alias.name.split(".")[0], context) for alias in node.names)


def _comes_from_the_pair(name: str, context: Context) -> bool:
    """Whether the newer file imports `name` from a module (or as a submodule) that the same pair changes or adds."""
    source = context.imported_from.get(name)
    return source is not None and (source in context.pair_modules or f"{source}.{name}" in context.pair_modules)


def imported_names(source: str, module: str, is_package: bool) -> dict[str, str]:
    """The names a module imports anywhere at its top (if/try blocks too) -> the absolute module each comes from."""
    package = module if is_package else module.rpartition(".")[0]
    names: dict[str, str] = {}
    for node in _top_statements(ast.parse(source).body):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            names.update({alias.asname or alias.name: base for alias in node.names if alias.name != "*"})
        elif isinstance(node, ast.Import):
            names.update({(alias.asname or alias.name).split(".")[0]: alias.name for alias in node.names})
    return names


def _top_statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "handlers", []), getattr(node, "finalbody", [])):
                for child in block:
                    yield from _top_statements(child.body if isinstance(child, ast.ExceptHandler) else [child])


def _absolute(module: str, level: int, package: str) -> str:
    if level == 0:
        return module
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, module] if module else base)


# ------------------------------------------------------------------- the pure core: which files are one patch


@dataclass(frozen=True)
class Binding:
    """The statement that binds a name at a module's top, as its AST dump (a change of comments or layout is no
    change); for `from X import name`, the module and name it comes from."""

    dump: str
    source: str | None = None
    original: str = ""


def module_bindings(source: str, module: str, is_package: bool) -> dict[str, Binding]:
    """Every name a module binds at its top (if/try blocks too) -> the statement that binds it last."""
    package = module if is_package else module.rpartition(".")[0]
    bound: dict[str, Binding] = {}
    for node in _top_statements(ast.parse(source).body):
        dump = ast.dump(node)
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = Binding(dump, base, alias.name)
        else:
            bound.update((name, Binding(dump)) for name in _names_bound(node))
    return bound


def _names_bound(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [name.id for target in node.targets for name in ast.walk(target) if isinstance(name, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Import):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return []


class Wheels:
    """The modules of a pair's two wheels, for following a name to the statement that binds it (parsed once)."""

    def __init__(self, old: Mapping[str, bytes], new: Mapping[str, bytes]) -> None:
        self._texts = ({module_of(p): d for p, d in old.items()}, {module_of(p): d for p, d in new.items()})
        self._packages = frozenset(module_of(p) for p in (*old, *new) if p.endswith("__init__.py"))
        self._parsed: dict[tuple[int, str], dict[str, Binding]] = {}

    def bindings(self, side: int, module: str) -> dict[str, Binding]:
        """side 0: the older release, 1: the newer."""
        if (side, module) not in self._parsed:
            data = self._texts[side].get(module)
            try:
                found = {} if data is None else module_bindings(data.decode("utf-8"), module, module in self._packages)
            except (SyntaxError, UnicodeDecodeError, ValueError):
                found = {}
            self._parsed[side, module] = found
        return self._parsed[side, module]

    def changed_bindings(self, module: str, name: str) -> set[str]:
        """The modules whose binding of `name` the newer release changes or adds, where `from module import name`
        leads: the module itself and, through re-exports (`from .generic import f` in a package's __init__), the
        modules the name comes from."""
        changed: set[str] = set()
        for _ in range(_MAX_REEXPORTS):
            new = self.bindings(1, module).get(name)
            if new is None:
                break
            old = self.bindings(0, module).get(name)
            if old is None or old.dump != new.dump:
                changed.add(module)
            if new.source is None:
                break
            module, name = new.source, new.original
        return changed


_MAX_REEXPORTS = 6


def imports_anywhere(source: str, module: str, is_package: bool) -> list[tuple[str, str]]:
    """Every `from X import name` of a file, at its top or inside a function: (absolute X, name)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            found += [(base, alias.name) for alias in node.names if alias.name != "*"]
    return found


def patch_groups(changed: Sequence[str], wheels: Wheels, new: Mapping[str, bytes]) -> list[tuple[str, ...]]:
    """The changed files of a pair, put together where they are one fix: a file whose newer text imports a name
    whose binding the newer release changes in another changed file (a helper it adds, a function whose signature
    it changes) is one patch with that file, and so on transitively (the files linked that way, in either
    direction, are one group). Each group in path order; the groups in the order of their first file."""
    modules = {module_of(path): path for path in changed}
    parent = {path: path for path in changed}

    def root(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    for path in changed:
        module = module_of(path)
        try:
            imported = imports_anywhere(new[path].decode("utf-8"), module, path.endswith("__init__.py"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for source, name in imported:
            for other in wheels.changed_bindings(source, name):
                if other in modules and other != module:
                    parent[root(modules[other])] = root(path)
    groups: dict[str, list[str]] = {}
    for path in changed:
        groups.setdefault(root(path), []).append(path)
    return sorted((tuple(sorted(group)) for group in groups.values()), key=lambda group: changed.index(group[0]))


def bound_texts(source: str) -> dict[str, str]:
    """The statements a patch's target keys name (hfpatch.statements): a module's or a class body's names (`f`,
    `LIMIT`, `Config`, `Config.size`, `Config.method`) -> the source text of the statement binding it last."""
    lines = _LINE_BREAK.split(source)
    texts: dict[str, str] = {}
    for node in ast.parse(source).body:
        for name in _names_bound(node) if not isinstance(node, ast.ImportFrom) else []:
            texts[name] = _text(node, lines)
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                for name in _names_bound(child) if not isinstance(child, ast.ImportFrom) else []:
                    texts[f"{node.name}.{name}"] = _text(child, lines)
    return texts


# ------------------------------------------------------------------------------ the pure core: the measure


class Carried(enum.Enum):
    """How much of a file's fix the entry `new` wrote carries (hfpatch's own verdicts are another thing: what a form
    is for a patch)."""

    FULL = "fully-backported"
    PARTIAL = "partial"
    REFUSED = "refused"
    WRONG = "WRONG"


@dataclass(frozen=True)
class Observed:
    """What the runs of hfpatch and of the module's import showed for one file."""

    new_exit: int | None  # None: `new` was not run (no target)
    claimed: tuple[str, ...] = ()  # the targets the written entry names
    apply_exit: int | None = None
    patched: str | None = None  # the file after apply
    imports_before: bool = False
    imports_after: bool | None = None
    restored: bool | None = None  # the original bytes back after revert
    check_after_apply: str | None = None  # the patch's condition
    check_after_revert: str | None = None
    apply_refusal: Reason | None = None  # why apply refused, where it says (importcheck)


@dataclass(frozen=True)
class Measure:
    """What the benchmark found of one file: how much is carried, why not all, and what is wrong."""

    carried: Carried
    reasons: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()  # what makes it WRONG, in sentences
    remaining: tuple[Unit, ...] = ()  # the units that still differ from the newer release


def measure(observed: Observed, new_text: str, refusal: Sequence[Reason] = ()) -> Measure:
    """How much of one file's fix is carried; `refusal` holds the categories where `new` wrote nothing."""
    if observed.new_exit != 0:
        return Measure(Carried.REFUSED, tuple(reason.value for reason in refusal or [Reason.OTHER]))
    if observed.apply_exit != 0 or observed.patched is None:
        if observed.restored is False:  # a failed apply must leave the file as it was
            return Measure(Carried.WRONG, (), ("apply failed, and the original bytes are not back after revert",))
        return Measure(Carried.REFUSED, ((observed.apply_refusal or Reason.APPLY_REFUSED).value,))
    wrong = _wrong(observed, new_text)
    remaining = tuple(units_differing(statement_units(observed.patched), statement_units(new_text)))
    if wrong:
        return Measure(Carried.WRONG, (), tuple(wrong), remaining)
    reasons = list(dict.fromkeys(f"{unit.kind} not carried" for unit in remaining))
    if observed.check_after_apply != "applied":
        reasons.append(f"check after apply: {observed.check_after_apply}")
    if observed.check_after_revert != "needs-patch":
        reasons.append(f"check after revert: {observed.check_after_revert}")
    if reasons:
        return Measure(Carried.PARTIAL, tuple(reasons), (), remaining)
    return Measure(Carried.FULL)


_KEY_OF_A_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)?")


def _wrong(observed: Observed, new_text: str) -> list[str]:
    assert observed.patched is not None
    problems = []
    if observed.imports_before and observed.imports_after is False:
        problems.append("the module imported before apply and no longer imports after it")
    patched, fixed = bound_texts(observed.patched), bound_texts(new_text)
    for name in observed.claimed:  # a key hfpatch.statements gives a name (`f`, `C.m`, `LIMIT`): it must be the fix's
        if _KEY_OF_A_NAME.fullmatch(name) and patched.get(name) != fixed.get(name):
            problems.append(f"{name}, which the entry carries, differs from the newer release's after apply")
    if observed.restored is not True:
        problems.append("revert did not restore the original bytes")
    return problems


# ------------------------------------------------------------------------------------- the edges: processes


@dataclass(frozen=True)
class Ran:
    command: tuple[str, ...]
    exit_code: int  # -1 where it timed out
    stdout: str
    stderr: str
    seconds: float


def run(command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> Ran:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return Ran(tuple(command), -1, "", f"timed out after {COMMAND_TIMEOUT} s", time.perf_counter() - start)
    return Ran(tuple(command), done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""


def hfpatch(*arguments: str, cwd: Path) -> Ran:
    """hfpatch as a user runs it: the installed command of this interpreter's environment, in its own process."""
    return run([sys.executable, "-m", "hfpatch", *arguments], cwd=cwd)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------- the edges: wheels


def cached_wheel(cache: Path, distribution: str, version: str) -> Path | None:
    wanted = (canonicalize_name(distribution), Version(version))
    for path in sorted(cache.glob("*.whl"), key=lambda path: not path.name.endswith("-none-any.whl")):
        try:
            name, found, _, _ = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        if (name, found) == wanted:
            return path
    return None


def fetch_wheel(cache: Path, distribution: str, version: str) -> Path:
    """The release's wheel from the cache, or pip-downloaded into a scratch directory and moved in whole."""
    found = cached_wheel(cache, distribution, version)
    if found is not None:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as scratch:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
        done = run([*command, "-d", scratch, f"{distribution}=={version}"], cwd=cache)
        downloaded = sorted(Path(scratch).glob("*.whl"))
        if done.exit_code != 0 or not downloaded:
            raise SystemExit(f"cannot download {distribution}=={version}: {last_line(done.stderr)}")
        for path in downloaded:
            path.replace(cache / path.name)
    found = cached_wheel(cache, distribution, version)
    assert found is not None, f"pip downloaded no wheel of {distribution} {version}"
    return found


def python_members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist() if name.endswith(".py")}


def built_on(wheel: Path) -> datetime.date | None:
    """When the wheel was built, from its members' times (None where the build pinned them, as to 1980)."""
    with zipfile.ZipFile(wheel) as archive:
        newest = max(info.date_time for info in archive.infolist())
    return datetime.date(*newest[:3]) if newest[0] >= 2000 else None


def find_links_of(wheels: Sequence[Path], directory: Path) -> Path:
    """A directory holding exactly the two wheels: what `new --find-links` reads."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.iterdir():
        if stale not in [directory / wheel.name for wheel in wheels]:
            stale.unlink()
    for wheel in wheels:
        linked = directory / wheel.name
        if not linked.exists():
            try:
                os.link(wheel, linked)
            except OSError:
                shutil.copyfile(wheel, linked)
    return directory


# ------------------------------------------------------------------------------------------ the edges: venvs


@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    site_packages: Path


def uv_command() -> list[str]:
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        raise SystemExit("uv is needed to build the venvs: pip install uv")
    return [found]


def ensure_torch(directory: Path) -> Path:
    """torch, installed once with `pip install --target` and shared by every venv through a .pth file."""
    if not (directory / "torch" / "__init__.py").is_file():
        print(f"installing torch {TORCH_VERSION} into {directory} (once)", file=sys.stderr, flush=True)
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(directory)]
        done = run([*command, f"torch=={TORCH_VERSION}"], cwd=directory.parent)
        if done.exit_code != 0:
            raise SystemExit(f"cannot install torch {TORCH_VERSION}: {last_line(done.stderr)}")
    return directory


def ensure_venv(pair: Pair, old_wheel: Path, work: Path, torch: Path | None) -> Venv:
    """A venv with the older release and its dependencies (as resolved when it was built), reused across runs."""
    root = work / "venvs" / f"{canonicalize_name(pair.distribution)}-{pair.old}"
    ready = root / ".coverage-ready"
    if not ready.is_file():
        _build_venv(pair, old_wheel, root, torch)
        ready.write_text(json.dumps({"distribution": pair.distribution, "version": pair.old}) + "\n")
    python = root / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root).stdout
    return Venv(root, python, Path(purelib.strip()))


def _build_venv(pair: Pair, old_wheel: Path, root: Path, torch: Path | None) -> None:
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    uv = uv_command()
    done = run([*uv, "venv", "--quiet", "--python", sys.executable, str(root)], cwd=root.parent)
    if done.exit_code != 0:
        raise SystemExit(f"uv venv {root} failed: {last_line(done.stderr)}")
    install = [*uv, "pip", "install", "--quiet", "--python", str(root / "bin" / "python")]
    built = built_on(old_wheel)
    if built is not None:  # the dependencies of that day: a later major release of one may not import with it
        install += ["--exclude-newer", (built + datetime.timedelta(days=2)).isoformat()]
    if pair.distribution in USES_TORCH:
        excludes = root / "excludes.txt"
        excludes.write_text("torch\n")
        install += ["--excludes", str(excludes)]
    done = run([*install, f"{pair.distribution}=={pair.old}"], cwd=root)
    if done.exit_code != 0:
        raise SystemExit(f"installing {pair.distribution}=={pair.old} failed: {last_line(done.stderr)}")
    if torch is not None and pair.distribution in USES_TORCH:
        site = next((root / "lib").glob("python3*/site-packages"))
        (site / "shared-torch.pth").write_text(f"{torch}\n")


def is_pristine(venv: Venv, old: Mapping[str, bytes], paths: Iterable[str]) -> bool:
    """Every file the run will patch is the release's own, and no state of a run is left behind."""
    states = venv.site_packages / ".hfpatch"
    if states.is_dir() and any(path.name.startswith("cov-") for path in states.iterdir()):
        return False
    return all((venv.site_packages / path).read_bytes() == old[path] for path in paths)


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")


def error_line(stderr: str) -> str:
    """The exception a traceback ends with (libraries print warnings after it too), else the last line."""
    lines = [line.strip() for line in stderr.splitlines()]
    return next((line[:500] for line in reversed(lines) if _EXCEPTION_LINE.match(line)), last_line(stderr))


# ---------------------------------------------------------------------------------------- one patch, end to end


@dataclass
class FileResult:
    path: str
    module: str
    targets: list[str]
    verdict: str = ""  # how much is carried (Carried; the results file keeps the key it always had)
    reasons: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    message: str = ""  # new's (or apply's) raw refusal: its last line
    refusal: str = ""  # new's (or apply's) whole stderr where it refused (its first 4000 characters)
    table_row: str = ""  # where new found no release needing the patch: the older release's row of its table
    changes: list[str] = field(default_factory=list)  # the statements that differ between the two releases
    claimed: list[str] = field(default_factory=list)
    units_changed: int = 0  # statements that differ between the two releases
    units_remaining: int | None = None  # ... between the patched file and the newer release's
    remaining: list[str] = field(default_factory=list)
    byte_identical: bool | None = None
    imports_before: bool = False
    import_error: str = ""
    imports_after: bool | None = None
    import_error_after: str = ""
    restored: bool | None = None
    check_after_apply: str | None = None
    check_after_revert: str | None = None
    exits: dict[str, int] = field(default_factory=dict)
    step_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0  # the whole patch's (every file of a group shares its run)
    patch_id: str = ""
    group: list[str] = field(default_factory=list)  # every file of the patch this file was carried in


@dataclass(frozen=True)
class Member:
    """One changed file of a patch: its path and its two releases' bytes."""

    path: str
    old: bytes
    new: bytes


@dataclass(frozen=True)
class Job:
    """Everything one patch's run needs: one file, or (mode `module`) the files of one fix."""

    pair: Pair
    members: tuple[Member, ...]
    venv: Venv
    find_links: Path
    directory: Path  # this patch's catalog and logs
    patch_id: str
    mode: str
    pair_modules: frozenset[str]
    added_modules: frozenset[str] = frozenset()  # the modules of files the newer release adds


def run_group(job: Job) -> list[FileResult]:
    """`new` for every file of the patch at once, then apply, check, import, revert and check; a verdict per file."""
    start = time.perf_counter()
    shutil.rmtree(job.directory, ignore_errors=True)
    job.directory.mkdir(parents=True)
    group = [member.path for member in job.members]
    results, texts = [], []
    for member in job.members:
        module = module_of(member.path)
        old_text, new_text = member.old.decode("utf-8"), member.new.decode("utf-8")
        result = FileResult(member.path, module, _targets(job, module, old_text, new_text))
        result.patch_id, result.group = job.patch_id, group
        changes = units_differing(statement_units(old_text), statement_units(new_text))
        result.units_changed, result.changes = len(changes), [_describe(unit) for unit in changes]
        results.append(result)
        texts.append((old_text, new_text, changes))
    before = _imports_before(job, [result.module for result in results])
    for result in results:
        result.imports_before, result.import_error = before[result.module]
    if not any(result.targets for result in results):
        assert len(results) == 1, "a group is made in module mode, where every file is a target"
        old_text, new_text, changes = texts[0]
        measures = [measure(Observed(None), new_text, statement_reasons(changes, _context(job, 0)))]
    else:
        measures = _run_hfpatch(job, results)
    seconds = round(time.perf_counter() - start, 1)
    for result, found in zip(results, measures, strict=True):
        result.verdict = found.carried.value
        result.reasons = list(found.reasons)
        result.wrong = list(found.wrong)
        result.remaining = [_describe(unit) for unit in found.remaining]
        if result.exits.get("apply") == 0:
            result.units_remaining = len(found.remaining)
        result.seconds = seconds
    return results


def _describe(unit: Unit) -> str:
    return f"{unit.kind} {unit.key[:80]}"


def _targets(job: Job, module: str, old_text: str, new_text: str) -> list[str]:
    if job.mode == "module":
        return [f"{job.pair.distribution}:{module}"]
    return [f"{job.pair.distribution}:{module}:{name}" for name in targets_for(old_text, new_text)]


_IMPORT_EACH = """import importlib, json, sys
errors = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        errors[name] = ""
    except BaseException as error:
        errors[name] = f"{type(error).__name__}: {error}".splitlines()[0][:500]
print(json.dumps(errors))
"""


def imports(venv: Venv, modules: Sequence[str], scratch: Path) -> dict[str, tuple[bool, str]]:
    """Whether each module imports in the venv (offline, from a scratch directory), and why not: one interpreter
    imports them in turn (torch is imported once), and says the exception each raised."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = run([str(venv.python), "-c", _IMPORT_EACH, *modules], cwd=scratch, env=env)
    try:
        errors = json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):  # the interpreter died (or timed out) before it could say
        errors = {module: error_line(done.stderr) or f"exit {done.exit_code}" for module in modules}
    return {module: (not errors.get(module, "no answer"), str(errors.get(module, "no answer"))) for module in modules}


def _imports_before(job: Job, modules: Sequence[str]) -> dict[str, tuple[bool, str]]:
    """The pristine venv's answers, kept beside it: the release's own files import the same way every run."""
    known = job.venv.root / ".coverage-imports.json"
    answers: dict[str, list[Any]] = json.loads(known.read_text()) if known.is_file() else {}
    unknown = [module for module in modules if module not in answers]
    if unknown:
        answers |= {module: list(answer) for module, answer in imports(job.venv, unknown, job.directory).items()}
        known.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    return {module: (bool(answers[module][0]), str(answers[module][1])) for module in modules}


def _run_hfpatch(job: Job, results: Sequence[FileResult]) -> list[Measure]:
    """`new` (every file's targets in one patch), then, where it wrote an entry, apply, check, import, revert, check."""
    catalog = job.directory / "catalog"
    chosen = [f"--target={target}" for result in results for target in result.targets]
    releases = ["--fixed-in", job.pair.new, "--since", job.pair.old, "--find-links", str(job.find_links)]
    new = hfpatch("new", job.patch_id, *chosen, *releases, "--catalog", str(catalog), cwd=job.directory)
    created = _logged(job, "new", new, results)
    if created.exit_code != 0:
        measured = []
        for index, result in enumerate(results):
            result.message, result.refusal = last_line(created.stderr), _said(created)
            result.table_row = _table_reason(created.stdout, job.pair.old)
            names = [target.rsplit(":", 1)[-1] for target in result.targets]
            reasons = refusal_reasons(created.stdout, created.stderr, names, _context(job, index))
            measured.append(measure(Observed(created.exit_code), job.members[index].new.decode("utf-8"), reasons))
        return measured
    entry = json.loads((catalog / job.patch_id / "patch.json").read_text())
    claimed = {item["file"]: [target["name"] for target in item["targets"]] for item in entry["files"]}
    for result in results:
        result.claimed = claimed.get(result.path, [])
    observed = _apply_and_revert(job, results, catalog)
    return [measure(seen, member.new.decode("utf-8")) for seen, member in zip(observed, job.members, strict=True)]


def _said(ran: Ran) -> str:
    """What a refusal says, for the results: new's lines after its table (why), and its stderr."""
    why = ran.stdout[ran.stdout.find("\nnot safe") + 1 :] if "\nnot safe" in ran.stdout else ""
    return f"{why}{ran.stderr}"[-4000:]


def _apply_and_revert(job: Job, results: Sequence[FileResult], catalog: Path) -> list[Observed]:
    installed = [job.venv.site_packages / member.path for member in job.members]
    selected = ["--python", str(job.venv.python), "--catalog", str(catalog), "--patch", job.patch_id]
    applied = _logged(job, "apply", hfpatch("apply", *selected, cwd=job.directory), results)
    patched = [path.read_bytes() for path in installed]
    checked = _logged(job, "check", hfpatch("check", "--json", *selected, cwd=job.directory), results)
    condition = _condition(checked, job.patch_id)
    touched = [r.module for r, m, now in zip(results, job.members, patched, strict=True) if now != m.old]
    after = imports(job.venv, touched, job.directory) if touched else {}
    for result, member, now in zip(results, job.members, patched, strict=True):
        result.byte_identical = now == member.new
        result.check_after_apply = condition
        if applied.exit_code != 0:
            result.message = last_line(applied.stderr) or last_line(applied.stdout)
            result.refusal = (applied.stdout + applied.stderr)[-4000:]
        result.imports_after, result.import_error_after = after.get(result.module, (result.imports_before, ""))
    _logged(job, "revert", hfpatch("revert", *selected, cwd=job.directory), results)
    checked = _logged(job, "check-after-revert", hfpatch("check", "--json", *selected, cwd=job.directory), results)
    observed = []
    for result, member, path, now in zip(results, job.members, installed, patched, strict=True):
        result.restored = sha256(path.read_bytes()) == sha256(member.old)
        result.check_after_revert = _condition(checked, job.patch_id)
        observed.append(
            Observed(
                new_exit=0,
                claimed=tuple(result.claimed),
                apply_exit=applied.exit_code,
                patched=now.decode("utf-8") if applied.exit_code == 0 else None,
                imports_before=result.imports_before,
                imports_after=result.imports_after,
                restored=result.restored,
                check_after_apply=result.check_after_apply,
                check_after_revert=result.check_after_revert,
                apply_refusal=apply_refusal_reason(applied.stdout + applied.stderr, job.added_modules)
                if applied.exit_code != 0
                else None,
            )
        )
    return observed


def _logged(job: Job, step: str, ran: Ran, results: Sequence[FileResult]) -> Ran:
    """Keep the command and its output beside the catalog: a surprising result can be read and run again."""
    for result in results:
        result.exits[step] = ran.exit_code
        result.step_seconds[step] = round(ran.seconds, 2)
    log = {"command": list(ran.command), "exit_code": ran.exit_code, "seconds": round(ran.seconds, 2)}
    (job.directory / f"{step}.json").write_text(json.dumps({**log, "stdout": ran.stdout, "stderr": ran.stderr}))
    return ran


def _condition(checked: Ran, patch_id: str) -> str | None:
    try:
        document = json.loads(checked.stdout)
    except json.JSONDecodeError:
        return None
    for environment in document.get("environments", []):
        for outcome in environment.get("patches", []):
            if outcome.get("id") == patch_id:
                return str(outcome.get("condition"))
    return None


def _context(job: Job, index: int) -> Context:
    return context_of(job.pair, job.members, index, job.pair_modules)


def context_of(pair: Pair, members: Sequence[Member], index: int, pair_modules: frozenset[str]) -> Context:
    member = members[index]
    module = module_of(member.path)
    old_text, new_text = member.old.decode("utf-8"), member.new.decode("utf-8")
    imported = imported_names(new_text, module, member.path.endswith("/__init__.py"))
    together = frozenset(module_of(other.path) for other in members)
    return Context(pair.old, class_names(old_text), imported, pair_modules - together)


def reread(results: Sequence[PairResult], cache: Path, work: Path) -> int:
    """Every refusal's reasons read again from the logs its run kept (WORK/runs/PAIR/PATCH/new.json, apply.json)
    with this version of the benchmark: a better reading of hfpatch's messages needs no second run. Returns how many
    files' reasons changed."""
    changed = 0
    for result in results:
        pair = next(pair for pair in PAIRS if pair.name == result.pair)
        refused = [file for file in result.files if file.verdict == Carried.REFUSED.value and file.exits]
        if not refused:
            continue
        wheels = [fetch_wheel(cache, pair.distribution, version) for version in (pair.old, pair.new)]
        old, new = python_members(wheels[0]), python_members(wheels[1])
        kinds = classify_files(old, new)
        pair_modules = frozenset(module_of(path) for path, kind in kinds.items() if kind is not FileKind.DELETED)
        added = frozenset(
            module_of(path) for path, kind in kinds.items() if kind in (FileKind.ADDED, FileKind.ADDED_MODEL)
        )
        for file in refused:
            directory = work / "runs" / pair.slug / file.patch_id
            members = tuple(Member(path, old[path], new[path]) for path in file.group or [file.path])
            if file.exits.get("new") != 0:
                log = json.loads((directory / "new.json").read_text())
                ran = Ran(tuple(log["command"]), log["exit_code"], log["stdout"], log["stderr"], log["seconds"])
                names = [target.rsplit(":", 1)[-1] for target in file.targets]
                context = context_of(pair, members, [member.path for member in members].index(file.path), pair_modules)
                reasons = [reason.value for reason in refusal_reasons(ran.stdout, ran.stderr, names, context)]
                file.refusal, file.table_row = _said(ran), _table_reason(ran.stdout, pair.old)
            else:
                log = json.loads((directory / "apply.json").read_text())
                reasons = [apply_refusal_reason(log["stdout"] + log["stderr"], added).value]
                file.refusal = (log["stdout"] + log["stderr"])[-4000:]
            changed += reasons != file.reasons
            file.reasons = reasons
    return changed


# ----------------------------------------------------------------------------------------------- one pair


@dataclass
class PairResult:
    pair: str
    distribution: str
    old: str
    new: str
    split: str
    files_changed: int = 0  # every .py the two wheels do not share
    excluded: dict[str, int] = field(default_factory=dict)
    skipped_by_limit: int = 0
    files: list[FileResult] = field(default_factory=list)
    venv_seconds: float = 0.0
    seconds: float = 0.0
    finished: bool = False  # every file judged (a stopped run's last pair is not)


@dataclass(frozen=True)
class Settings:
    cache: Path
    work: Path
    torch: Path | None
    mode: str
    limit_files: int | None


def run_pair(
    pair: Pair,
    settings: Settings,
    progress: TextIO,
    saved: Callable[[PairResult], None],
    earlier: PairResult | None = None,
) -> PairResult:
    """Every changed file of the pair, end to end (one patch at a time: a file, or in mode `module` the files of one
    fix); `saved` is handed the pair's result after each patch; `earlier` is a stopped run's, whose patches count."""
    start = time.perf_counter()
    wheels = [fetch_wheel(settings.cache, pair.distribution, version) for version in (pair.old, pair.new)]
    old, new = python_members(wheels[0]), python_members(wheels[1])
    kinds = classify_files(old, new)
    result = PairResult(pair.name, pair.distribution, pair.old, pair.new, pair.split.value, len(kinds))
    result.excluded = {kind.value: sum(1 for each in kinds.values() if each is kind) for kind in EXCLUDED_KINDS}
    changed = [path for path, kind in kinds.items() if kind is FileKind.CHANGED]
    chosen = changed if settings.limit_files is None else changed[: settings.limit_files]
    result.skipped_by_limit = len(changed) - len(chosen)
    runs = settings.work / "runs" / pair.slug
    find_links = find_links_of(wheels, runs / "wheels")
    venv_start = time.perf_counter()
    venv = ensure_venv(pair, wheels[0], settings.work, settings.torch)
    if not is_pristine(venv, old, chosen):  # a run was killed midway: start from the release's own files
        (venv.root / ".coverage-ready").unlink()
        venv = ensure_venv(pair, wheels[0], settings.work, settings.torch)
    result.venv_seconds = round(time.perf_counter() - venv_start, 1)
    pair_modules = frozenset(module_of(path) for path, kind in kinds.items() if kind is not FileKind.DELETED)
    added = frozenset(module_of(path) for path, kind in kinds.items() if kind in (FileKind.ADDED, FileKind.ADDED_MODEL))
    groups = patch_groups(chosen, Wheels(old, new), new) if settings.mode == "module" else [(p,) for p in chosen]
    done = {file.path: file for file in (earlier.files if earlier is not None else [])}
    for index, group in enumerate(groups):
        if all(path in done for path in group):  # --resume: this patch's files were judged by the stopped run
            result.files += [done[path] for path in group]
            continue
        patch_id = f"cov-{index:03d}"
        members = tuple(Member(path, old[path], new[path]) for path in group)
        job = Job(pair, members, venv, find_links, runs / patch_id, patch_id, settings.mode, pair_modules, added)
        outcomes = run_group(job)
        result.files += outcomes
        print(_progress_line(pair, len(result.files), len(chosen), outcomes), file=progress, flush=True)
        saved(result)
        if any(outcome.restored is False for outcome in outcomes):  # no longer the release's: rebuild it
            (venv.root / ".coverage-ready").unlink(missing_ok=True)
            venv = ensure_venv(pair, wheels[0], settings.work, settings.torch)
    result.seconds = round(time.perf_counter() - start, 1)
    result.finished = True
    return result


def _progress_line(pair: Pair, done: int, total: int, outcomes: Sequence[FileResult]) -> str:
    lines = []
    for outcome in outcomes:
        why = "; ".join(outcome.wrong or outcome.reasons)
        lines.append(
            f"[{pair.name} {done}/{total}] {outcome.verdict} {outcome.path} ({outcome.seconds}s) {why}".rstrip()
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the report

_SHORT = {kind.value: kind.value.split("-")[0] for kind in EXCLUDED_KINDS} | {"added-model": "model"}


def render_table(results: Sequence[PairResult]) -> str:
    header = ("pair", "set", "changed", "excluded", "targeted", "full", "partial", "refused", "wrong")
    rows = [header, *(_row(result.pair, result.split, [result]) for result in results)]
    for split in Split:
        subset = [result for result in results if result.split == split.value]
        if subset:
            rows.append(_row(f"total {split.value}", "", subset))
    rows.append(_row("total", "", results))
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _row(label: str, split: str, results: Sequence[PairResult]) -> tuple[str, ...]:
    files = [file for result in results for file in result.files]
    verdicts = Counter(file.verdict for file in files)
    excluded: Counter[str] = Counter()
    for result in results:
        excluded.update(result.excluded)
    excluded_text = " ".join(f"{_SHORT[kind]}:{count}" for kind, count in excluded.items() if count) or "0"
    skipped = sum(result.skipped_by_limit for result in results)
    targeted = f"{len(files)}" + (f" (+{skipped} by limit)" if skipped else "")
    return (
        label,
        split,
        str(sum(result.files_changed for result in results)),
        excluded_text,
        targeted,
        str(verdicts[Carried.FULL.value]),
        str(verdicts[Carried.PARTIAL.value]),
        str(verdicts[Carried.REFUSED.value]),
        str(verdicts[Carried.WRONG.value]),
    )


def render_reasons(results: Sequence[PairResult]) -> str:
    files = [file for result in results for file in result.files]
    refused = [file.reasons or [Reason.OTHER.value] for file in files if file.verdict == Carried.REFUSED.value]
    counts = Counter(reasons[0] for reasons in refused)
    # A file with no changed definition was never put to `new`: what its statements would need, each counted.
    needs = Counter(need for reasons in refused if reasons[0] == Reason.STATEMENTS_ONLY.value for need in reasons[1:])
    partial = Counter(reason for file in files if file.verdict == Carried.PARTIAL.value for reason in file.reasons)
    lines = [f"refused, by reason ({len(refused)}):"]
    lines += [f"  {count:4d}  {reason}" for reason, count in counts.most_common()]
    if needs:
        lines.append("        statements only, needing: " + ", ".join(f"{need} {n}" for need, n in needs.most_common()))
    lines += ["partial, what is not carried:", *(f"  {count:4d}  {reason}" for reason, count in partial.most_common())]
    return "\n".join(lines)


def render_wrong(results: Sequence[PairResult]) -> str:
    lines = []
    for result in results:
        for file in result.files:
            if file.verdict == Carried.WRONG.value:
                error = f" ({file.import_error_after})" if file.import_error_after else ""
                lines.append(f"WRONG: {result.pair} {file.path}: {'; '.join(file.wrong)}{error}")
    return "\n".join(lines)


def document(results: Sequence[PairResult], settings: Settings, seconds: float) -> dict[str, Any]:
    import hfpatch  # the hfpatch the runs used: this interpreter's

    return {
        "schema": SCHEMA,
        "hfpatch_version": hfpatch.__version__,
        "hfpatch_location": str(Path(hfpatch.__file__).parent),
        "hfpatch_commit": _commit(Path(hfpatch.__file__).parent),  # "" where it is an installed copy (nox's)
        "benchmark_commit": _commit(Path(__file__).resolve().parent),
        "mode": settings.mode,
        "limit_files": settings.limit_files,
        "python": sys.version.split()[0],
        "seconds": round(seconds, 1),
        "pairs": [asdict(result) for result in results],
    }


@functools.cache
def _commit(directory: Path) -> str:
    """The commit of the checkout hfpatch was imported from (with `+dirty` where its files differ), or ""."""
    head = run(["git", "rev-parse", "HEAD"], cwd=directory)
    if head.exit_code != 0:
        return ""
    dirty = run(["git", "status", "--porcelain", "--", "."], cwd=directory).stdout.strip()
    return head.stdout.strip() + ("+dirty" if dirty else "")


# ------------------------------------------------------------------------------------------------- the command


def default_cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hfpatch-coverage"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    root = default_cache_root()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=root / "wheels", help="the wheel cache (pip downloads into it)")
    parser.add_argument("--work", type=Path, default=root / "work", help="venvs (kept, reused) and per-file logs")
    parser.add_argument(
        "--torch-dir",
        type=Path,
        default=root / f"torch-{TORCH_VERSION}",
        help=f"a `pip install --target` of torch {TORCH_VERSION}, made there if absent",
    )
    parser.add_argument("--no-torch", action="store_true", help="give the venvs no torch (modules needing it fail)")
    parser.add_argument(
        "--mode",
        choices=["definitions", "module"],
        default="module",
        help="module: --target DIST:MODULE for every changed file, the files of one fix in one patch; definitions: "
        "each file alone, its changed functions and methods as targets (hfpatch 0.2's reach)",
    )
    parser.add_argument("--set", dest="split", choices=[split.value for split in Split], help="only these pairs")
    parser.add_argument("--pair", action="append", default=[], metavar="DIST==OLD", help="only this pair (repeatable)")
    parser.add_argument("--limit-files", type=int, help="at most N changed files of each pair (in path order)")
    parser.add_argument("--out", type=Path, help="the JSON results (default: WORK/results-MODE.json)")
    parser.add_argument(
        "--resume", action="store_true", help="keep what --out holds of a stopped run with the same mode; run the rest"
    )
    parser.add_argument(
        "--reread",
        action="store_true",
        help="with --report: read the refusals' reasons again from the logs the runs kept in --work (writes --out)",
    )
    parser.add_argument("--list", action="store_true", help="print the pairs and their set, run nothing")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="print the tables of earlier runs' --out (several: their pairs together)",
    )
    return parser.parse_args(argv)


def select_pairs(split: str | None, named: Sequence[str]) -> list[Pair]:
    chosen = [pair for pair in PAIRS if split is None or pair.split.value == split]
    if named:
        wanted = {(canonicalize_name(item.partition("==")[0]), item.partition("==")[2]) for item in named}
        chosen = [pair for pair in chosen if (canonicalize_name(pair.distribution), pair.old) in wanted]
        if len(chosen) != len(wanted):
            raise SystemExit(f"--pair {', '.join(named)}: not every one is a pair of the list (see --list)")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    assert split_follows_the_rule(PAIRS), "the held-out set is every third pair in order; the list breaks it"
    pairs = select_pairs(args.split, args.pair)
    if args.list:
        print("\n".join(f"{pair.split.value:8s}  {pair.name}" for pair in pairs))
        return 0
    if args.report:
        results = merged([load_results(path) for path in args.report])
        if args.reread:
            changed = reread(results, args.cache.absolute(), args.work.absolute())
            print(f"--reread: the reasons of {changed} refused files read otherwise", file=sys.stderr)
            if args.out:
                _write(
                    args.out,
                    {
                        "reread": True,
                        "benchmark_commit": _commit(Path(__file__).resolve().parent),
                        "pairs": [asdict(result) for result in results],
                    },
                )
        return report(results)
    import hfpatch  # the one every run uses: this interpreter's (nox installs the checkout's)

    print(f"hfpatch {hfpatch.__version__} from {Path(hfpatch.__file__).parent}", file=sys.stderr, flush=True)
    needs_torch = not args.no_torch and any(pair.distribution in USES_TORCH for pair in pairs)
    torch = ensure_torch(args.torch_dir.absolute()) if needs_torch else None
    settings = Settings(args.cache.absolute(), args.work.absolute(), torch, args.mode, args.limit_files)
    out = args.out or settings.work / f"results-{settings.mode}.json"
    start, results = time.perf_counter(), list[PairResult]()
    earlier = _resumed(out, settings.mode) if args.resume else {}

    def save(unfinished: PairResult | None = None) -> None:  # a run stopped midway keeps every file it finished
        written = results if unfinished is None else [*results, unfinished]
        _write(out, document(written, settings, time.perf_counter() - start))

    for pair in pairs:
        stopped = earlier.get(pair.name)
        if stopped is not None and stopped.finished:
            results.append(stopped)
        else:
            results.append(run_pair(pair, settings, sys.stderr, save, stopped))
        save()
    print(f"{time.perf_counter() - start:.0f} s; results in {out}", file=sys.stderr)
    return report(results)


def _resumed(out: Path, mode: str) -> dict[str, PairResult]:
    if not out.is_file():
        return {}
    if json.loads(out.read_text()).get("mode") != mode:
        raise SystemExit(f"--resume: {out} holds a run of another mode; give another --out")
    return {result.pair: result for result in load_results(out)}


def report(results: Sequence[PairResult]) -> int:
    """Print the tables; exit 1 where any result is WRONG (a bug in hfpatch), after saying so loudly."""
    print(render_table(results))
    print(render_reasons(results))
    wrong = render_wrong(results)
    if wrong:
        print(f"\n{'!' * 72}\n{wrong}\n{'!' * 72}", file=sys.stderr)
        return 1
    return 0


def merged(runs: Sequence[Sequence[PairResult]]) -> list[PairResult]:
    """The pairs of several runs in the list's order; a pair run twice counts as in the later run."""
    latest = {result.pair: result for run in runs for result in run}
    return sorted(latest.values(), key=lambda result: (result.distribution, Version(result.old)))


def load_results(path: Path) -> list[PairResult]:
    pairs = json.loads(path.read_text())["pairs"]
    return [PairResult(**{**pair, "files": [FileResult(**file) for file in pair["files"]]}) for pair in pairs]


def _write(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(json.dumps(data, indent=1) + "\n")
    scratch.replace(path)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
