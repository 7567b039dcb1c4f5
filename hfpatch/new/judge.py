"""Judging the releases for a fix: what the fix changes, what each target is in each release, and whether the
fixed text can go in there. Pure: texts in, judgements out.

The fix is read off two texts of each file: the fixed one and the newest release before it. With `--target
DIST:MODULE`, every statement that differs is a target; with names, the statements bound to those names. A target
is replaced, inserted where the fix added it, or taken out where the fix removed it.

In each release, each target is:
- fixed (its text is the fix's), absent, or needs the patch;
- not applicable where replacing it would break the callers (another signature, another kind of statement) or
  where the fix cannot go in (the statement it goes after is not there);
and a release that needs the patch is patched (hfpatch.rewrite, as `apply` patches) and the result checked: every
name the changed statements use must be bound (a patch must never raise NameError), a name the fix takes away must
not be used any more, and a function of another module that the fix calls must take the call there as it does in
the fixed release. What fails these checks is not safe, and no entry is written.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import enum
import hashlib
import symtable
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from hfpatch import statements, versions
from hfpatch.entry import Form, PatchFile, Shape, Target, Verdict, shaped, text_sha256
from hfpatch.errors import AuthoringError, UnexpectedCode

# Names every module has without binding them, and that a statement may use.
MODULE_NAMES = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__", "__cached__",
    "__path__", "__annotations__", "__dict__", "__module__", "__qualname__",
}  # fmt: skip
_BINDING_DECORATORS = ("staticmethod", "classmethod", "property", "cached_property")


class TableVerdict(enum.Enum):
    """What a release comes to for the fix: the table's verdict column."""

    NEEDS_PATCH = "needs-patch"
    FIXED = "fixed"
    NOT_APPLICABLE = "not-applicable"
    ABSENT = "absent"  # none of the targets: the bug is not there yet (or no longer)
    NOT_SAFE = "not-safe"  # the patched release would fail: no entry is written
    SKIPPED = "skipped"  # the release could not be read

    @property
    def verdict(self) -> Verdict | None:
        """The verdict the entry records for a release file; None for one without the targets."""
        return _ENTRY_VERDICT[self]


_ENTRY_VERDICT = {
    TableVerdict.NEEDS_PATCH: Verdict.NEEDS_PATCH,
    TableVerdict.FIXED: Verdict.FIXED,
    TableVerdict.NOT_APPLICABLE: Verdict.NOT_APPLICABLE,
    TableVerdict.ABSENT: None,
    TableVerdict.NOT_SAFE: None,
    TableVerdict.SKIPPED: None,
}


@dataclass(frozen=True)
class Change:
    """One statement the fix changes, as the fixed text has it (or, for a statement it removes, as the release
    before the fix has it)."""

    key: str
    shape: Shape  # as the fix has it: in the entry, a replaced statement some release lacks is inserted there
    kind: str
    text: str  # the fixed text (for DELETE: the text before)
    node: ast.stmt
    lead: str = ""
    after: str | None = None
    before: str | None = None
    lead_was: tuple[str, ...] = ()
    next_lead: str | None = None


@dataclass(frozen=True)
class FileFix:
    """What the fix changes in one file, and what else differs there that it does not carry."""

    module: str
    file: str
    changes: tuple[Change, ...]
    left_out: tuple[str, ...] = ()  # keys of other statements that differ between the release before and the fix
    whole: bool = False  # --target DIST:MODULE


class Standing(enum.Enum):
    ABSENT = "absent"
    FIXED = "fixed"
    NEEDS = "needs-patch"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Judgement:
    """One target in one release."""

    status: Standing
    unit: statements.Unit | None = None
    reason: str = ""


@dataclass(frozen=True)
class FileJudgement:
    """One file in one release: its verdict, why, and each target's judgement; the patched text where it needs."""

    kind: TableVerdict
    reason: str
    judged: Mapping[str, Judgement] = field(default_factory=dict)
    patched: bytes | None = None
    # Names the patched module would lack, each with the target that uses it (a missing import, helper...).
    missing: tuple[tuple[str, str], ...] = ()
    # Class.attribute a fixed method reads that its class here lacks (and the fixed release's has).
    lacking: tuple[str, ...] = ()


def sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(releases, key=Version)


def parse(source: bytes, what: str) -> statements.SourceFile:
    try:
        return statements.parse(source, what)
    except UnexpectedCode as error:
        raise AuthoringError(f"{error}.") from None


# --------------------------------------------------------------------------------------------- the fix itself


_VERSION = "__version__"


def fix_of(
    module: str, file: str, fixed: bytes, before: bytes | None, names: Sequence[str] | None, what: str
) -> FileFix:
    """What the fix changes in one file: every statement that differs from the release before it (names None: the
    whole module), or the statements bound to the names given."""
    fix = parse(fixed, f"{file} of {what}")
    old = None if before is None else parse(before, f"{file} before the fix")
    differing = _differences(fix, old, "")
    if names is None:
        # The release's own version is no part of a fix: a backport that carried it would make the patched release
        # say it is the fixed one (a package __init__ of a patch release differs in it always).
        moved = _moved_as_they_were(differing)
        changes = [change for change in differing if change.key != _VERSION and change.key not in moved]
        if not changes:
            raise AuthoringError(f"{file} of {what} is the same as in the release before it: no fix to carry.")
        left_out = tuple(dict.fromkeys(change.key for change in differing if change not in changes))
        return FileFix(module, file, tuple(changes), left_out, whole=True)
    chosen: list[Change] = []
    for name in names:
        found = _bound(fix, old, name, what, file)
        chosen += [change for change in found if change.key not in {each.key for each in chosen}]
    taken = {change.key for change in chosen}
    within = {key for change in chosen if change.kind == statements.CLASS for key in [change.key]}
    left_out = tuple(
        change.key
        for change in differing
        if change.key not in taken
        and not any(change.key.startswith(f"{owner}.") for owner in within)
        and not any(key.startswith(f"{change.key}.") for key in taken)
    )
    return FileFix(module, file, tuple(sorted(chosen, key=lambda change: _order(fix, change))), left_out)


def _moved_as_they_were(changes: Sequence[Change]) -> set[str]:
    """The statements the fix only moved: removed at one place and added, as they were, at another. Where a
    statement stands among definitions is no part of a fix, and carrying the move would need both at once."""
    removed = {change.key: change.text for change in changes if change.shape is Shape.DELETE}
    return {change.key for change in changes if change.shape is Shape.INSERT and removed.get(change.key) == change.text}


def _order(fix: statements.SourceFile, change: Change) -> tuple[int, int]:
    unit = statements.find(fix, change.key)
    return (0, unit.start) if unit is not None else (1, 0)


def _bound(
    fix: statements.SourceFile, old: statements.SourceFile | None, name: str, what: str, file: str
) -> list[Change]:
    """The statements that bind `name` (`f`, `Config.x`) in the fixed file, each as the fix changes it; where the
    fixed file has none but the release before does, the fix removes them."""
    scope = name.rpartition(".")[0]
    differing: dict[str, Change] = {}
    for difference in _differences(fix, old, ""):
        # A statement the fix moved is added there and removed here: as a target, it is the statement it became.
        differing.setdefault(difference.key, difference)
    found = statements.bound_to(fix, name)
    if not found:
        gone = [] if old is None else statements.bound_to(old, name)
        if not gone:
            near = difflib.get_close_matches(name, _names_in(fix), n=3, cutoff=0.7)
            maybe = f" (did you mean {' or '.join(near)}?)" if near else ""
            raise AuthoringError(
                f"{name} is not defined in {file} of {what}{maybe}: a target is a name its module or a class binds "
                "(a function, a method, a class, a constant, an import); --target DIST:MODULE carries every "
                "statement the fix changes in the module."
            )
        return [_deletion(unit) for unit in gone]
    changes = []
    for unit in found:
        change = differing.get(unit.key)
        was = None if old is None else statements.find(old, unit.key)
        if change is not None and change.shape is Shape.INSERT and was is not None:
            # Moved by the fix (statements around it were reordered): the target is replaced where a release has
            # it, with the lead it has there; the order of the statements around it is none of the patch's.
            assert old is not None
            moved = _placement(fix, unit, Shape.REPLACE, scope)
            change = dataclasses.replace(moved, lead=_lead(old, was))
        if change is not None:
            changes.append(change)
        else:  # the same text before the fix: still the user's target (it may differ in older releases)
            changes.append(_placement(fix, unit, Shape.REPLACE, scope))
    return changes


def _names_in(source: statements.SourceFile) -> list[str]:
    """Every name a target may be: what the module binds, and Class.name for what its classes bind."""
    names = sorted(statements.module_names(source))
    for unit in statements.units(source):
        if unit.kind == statements.CLASS:
            names += sorted(
                f"{unit.key}.{name}" for member in statements.units(source, unit.key) for name in member.binds
            )
    return names


def _differences(fix: statements.SourceFile, old: statements.SourceFile | None, scope: str) -> list[Change]:
    """Every statement of a scope that the fix changes, adds or removes; inside a class whose own lines (its
    decorators and `class` line) stay the same, statement by statement."""
    new_units = statements.units(fix, scope)
    old_units = [] if old is None else statements.units(old, scope)
    old_by_key = {unit.key: unit for unit in old_units}
    kept = _kept_in_order(old_units, new_units)
    changes: list[Change] = []
    for unit in new_units:
        previous = old_by_key.get(unit.key) if unit.key in kept else None
        if previous is None:
            changes.append(_placement(fix, unit, Shape.INSERT, scope))
            continue
        if previous.text != unit.text:
            if unit.kind == statements.CLASS and previous.kind == statements.CLASS and _same_head(previous, unit):
                assert old is not None
                changes += _differences(fix, old, unit.key)
            else:
                changes.append(_placement(fix, unit, Shape.REPLACE, scope, previous, old))
    new_keys = {unit.key for unit in new_units}
    for unit in old_units:
        if unit.key not in new_keys or unit.key not in kept:
            changes.append(_deletion(unit))
    return changes


def _kept_in_order(old_units: Sequence[statements.Unit], new_units: Sequence[statements.Unit]) -> set[str]:
    """The keys both scopes have in the same order; one the fix moved counts as removed there and added here."""
    old_keys = [unit.key for unit in old_units]
    new_keys = [unit.key for unit in new_units]
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    kept: set[str] = set()
    for block in matcher.get_matching_blocks():
        kept |= set(old_keys[block.a : block.a + block.size])
    return kept


def _same_head(old: statements.Unit, new: statements.Unit) -> bool:
    """A class keeps its decorators, bases and `class` line: what changes is inside its body."""
    assert isinstance(old.node, ast.ClassDef) and isinstance(new.node, ast.ClassDef)
    if not old.node.body or not new.node.body:
        return False
    return _head_text(old) == _head_text(new)


def _head_text(unit: statements.Unit) -> str:
    assert isinstance(unit.node, ast.ClassDef)
    # The first statement begins at its first decorator: a decorator the fix drops from the first method is that
    # method's change, never the class's head (else the class is replaced whole, its methods' signatures unjudged).
    first = min(
        min([node.lineno, *(each.lineno for each in getattr(node, "decorator_list", ()))]) for node in unit.node.body
    )
    start = min([unit.node.lineno, *(decorator.lineno for decorator in unit.node.decorator_list)])
    return "\n".join(unit.text.split("\n")[: first - start])


def _lead(source: statements.SourceFile, unit: statements.Unit) -> str:
    return statements.lead_of(source, unit)


def _placement(
    fix: statements.SourceFile,
    unit: statements.Unit,
    shape: Shape,
    scope: str,
    previous: statements.Unit | None = None,
    old: statements.SourceFile | None = None,
) -> Change:
    """A statement as the fix has it, with where it goes: after the statement before it in its scope, or before the
    one after it."""
    siblings = statements.units(fix, scope)
    index = next(index for index, each in enumerate(siblings) if each.key == unit.key)
    after = siblings[index - 1].key if index > 0 else None
    following = siblings[index + 1] if index + 1 < len(siblings) else None
    before = following.key if following is not None else None
    next_lead = _lead(fix, following) if following is not None else None
    lead = _lead(fix, unit)
    lead_was: tuple[str, ...] = ()
    if previous is not None and old is not None:
        was = _lead(old, previous)
        if was != lead:
            lead_was = (text_sha256(was),)
    return Change(unit.key, shape, unit.kind, unit.text, unit.node, lead, after, before, lead_was, next_lead)


def _deletion(unit: statements.Unit) -> Change:
    return Change(unit.key, Shape.DELETE, unit.kind, unit.text, unit.node)


# ------------------------------------------------------------------------------------------- each release


def judge(change: Change, source: statements.SourceFile, release: str, fixed_in: str | None) -> Judgement:
    """One target in one release's file."""
    unit = statements.find(source, change.key)
    if unit is None:
        return Judgement(Standing.ABSENT)
    if change.shape is Shape.DELETE:
        if fixed_in is not None and versions.is_at_least(release, fixed_in):
            return Judgement(Standing.FIXED, unit, "a later form of the fixed code")
        return Judgement(Standing.NEEDS, unit, f"the fix removes {change.key}")
    if unit.text == change.text:
        return Judgement(Standing.FIXED, unit)
    if fixed_in is not None and versions.is_at_least(release, fixed_in):
        # Upstream kept changing the code after it fixed it: a later form has the fix, whatever its text.
        return Judgement(Standing.FIXED, unit, "a later form of the fixed code")
    if unit.kind != change.kind:
        return Judgement(Standing.NOT_APPLICABLE, unit, f"{change.key} is a {unit.kind} here, not a {change.kind}")
    if unit.indent != statements.find_indent(change.text):
        return Judgement(Standing.NOT_APPLICABLE, unit, f"{change.key} is indented otherwise here")
    reason = changed_lines(unit.text, change.text)
    if unit.kind == statements.FUNCTION:
        assert isinstance(unit.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        assert isinstance(change.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        old, new = signature(unit.node), signature(change.node)
        if old != new and not accepts_every_call_of(change.node, unit.node, in_a_class=bool(unit.indent)):
            reason = f"signature {old} where the fix has {new}: the fix would break its callers"
            return Judgement(Standing.NOT_APPLICABLE, unit, reason)
        if old != new:
            return Judgement(
                Standing.NEEDS, unit, f"signature {old} where the fix has {new}, which takes every call of it; {reason}"
            )
        return Judgement(Standing.NEEDS, unit, f"same signature as the fix; {reason}")
    return Judgement(Standing.NEEDS, unit, reason)


def changed_lines(old_text: str, new_text: str) -> str:
    old, new = old_text.split("\n"), new_text.split("\n")
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
    return f"{changed} line{'s' if changed != 1 else ''} differ{'s' if changed == 1 else ''} from the fix"


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """What callers depend on: parameter names, kinds and which have defaults; async; how the class binds it."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    first_default = len(positional) - len(arguments.defaults)
    parts = []
    for index, parameter in enumerate(positional):
        parts.append(parameter.arg + ("=..." if index >= first_default else ""))
        if index == len(arguments.posonlyargs) - 1:
            parts.append("/")
    if arguments.vararg is not None:
        parts.append(f"*{arguments.vararg.arg}")
    elif arguments.kwonlyargs:
        parts.append("*")
    for parameter, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        parts.append(parameter.arg + ("=..." if default is not None else ""))
    if arguments.kwarg is not None:
        parts.append(f"**{arguments.kwarg.arg}")
    binding = [f"@{name} " for name in map(_decorator_name, node.decorator_list) if _binds(name)]
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    return f"{''.join(binding)}{prefix}({', '.join(parts)})"


def accepts_every_call_of(
    new: ast.FunctionDef | ast.AsyncFunctionDef, old: ast.FunctionDef | ast.AsyncFunctionDef, *, in_a_class: bool = True
) -> bool:
    """The fixed function takes every call the old one took: the same parameters in the same places, new ones only
    with defaults (or *args/**kwargs added), bound the same way. A module's function (not `in_a_class`) is called
    alike with or without @staticmethod, which binds nothing there (its object is callable, Python 3.10+): a fix
    that only drops or adds it there keeps every call (transformers 4.57.2's continuous_batching/requests.py)."""
    if _binding(new, in_a_class) != _binding(old, in_a_class):
        return False
    if isinstance(new, ast.AsyncFunctionDef) != isinstance(old, ast.AsyncFunctionDef):
        return False
    old_positional = [*old.args.posonlyargs, *old.args.args]
    new_positional = [*new.args.posonlyargs, *new.args.args]
    if [arg.arg for arg in new_positional[: len(old_positional)]] != [arg.arg for arg in old_positional]:
        return False
    if len(new.args.posonlyargs) > len(old.args.posonlyargs):
        return False
    new_first_default = len(new_positional) - len(new.args.defaults)
    old_first_default = len(old_positional) - len(old.args.defaults)
    if new_first_default > old_first_default or any(
        index < new_first_default for index in range(len(old_positional), len(new_positional))
    ):
        return False
    if old.args.vararg is not None and new.args.vararg is None:
        return False
    if old.args.kwarg is not None and new.args.kwarg is None:
        return False
    old_keywords = {
        arg.arg: default is not None for arg, default in zip(old.args.kwonlyargs, old.args.kw_defaults, strict=True)
    }
    new_keywords = {
        arg.arg: default is not None for arg, default in zip(new.args.kwonlyargs, new.args.kw_defaults, strict=True)
    }
    for name, has_default in new_keywords.items():
        if name not in old_keywords and not has_default:
            return False
        if name in old_keywords and old_keywords[name] and not has_default:
            return False
    return all(name in new_keywords or new.args.kwarg is not None for name in old_keywords)


def _binding(node: ast.FunctionDef | ast.AsyncFunctionDef, in_a_class: bool = True) -> list[str]:
    names = [name for name in map(_decorator_name, node.decorator_list) if _binds(name)]
    return names if in_a_class else [name for name in names if name.rsplit(".", 1)[-1] != "staticmethod"]


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    try:
        return ast.unparse(target)
    except (AttributeError, ValueError):  # pragma: no cover - every expression unparses
        return ""


def _binds(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last in _BINDING_DECORATORS or last in ("setter", "getter", "deleter")


# -------------------------------------------------------------------------- what the patched release needs


def free_names(text: str) -> frozenset[str]:
    """The names a statement's text reads from outside it: see reads."""
    here, globals_ = reads(text)
    return here | globals_


def reads(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names a statement reads that it does not bind itself: those read where it stands (a class body's
    statements, a method's decorators and defaults read the class scope), and those its functions read as globals
    (from the module, never from a class)."""
    table = symtable.symtable(statements.dedented(text), "<fixed>", "exec")
    here = {
        symbol.get_name()
        for symbol in table.get_symbols()
        if symbol.is_referenced() and not symbol.is_assigned() and not symbol.is_imported()
    }
    globals_: set[str] = set()
    pending = list(table.get_children())
    while pending:
        scope = pending.pop()
        pending.extend(scope.get_children())
        globals_ |= {
            symbol.get_name() for symbol in scope.get_symbols() if symbol.is_global() and symbol.is_referenced()
        }
    globals_.discard("__class__")  # what super() reads: the compiler provides it inside a class
    return frozenset(here - MODULE_NAMES), frozenset(globals_ - MODULE_NAMES)


def missing_names(
    patched: statements.SourceFile, targets: Sequence[Change], fix: statements.SourceFile
) -> list[tuple[str, str]]:
    """(name, target) for each name a changed statement reads that the patched module would not bind where it is
    read: a function reads the module's names; a class body's statement also the names its earlier statements bind.
    A class statement that reads a name its class binds only later (a property's setter before the property) fails
    as the module is imported."""
    module = statements.module_names(patched) | MODULE_NAMES
    stars = _star_imports(patched)
    fix_names = statements.module_names(fix)
    found: list[tuple[str, str]] = []
    for change in targets:
        if change.shape is Shape.DELETE:
            continue
        unit = statements.find(patched, change.key)
        if unit is None:
            continue
        owner = statements.owner_of(patched, change.key)
        in_scope = set(module)
        if owner:
            for sibling in statements.units(patched, owner):
                if sibling.key == unit.key:
                    break
                in_scope |= sibling.binds
        here, globals_ = reads(unit.text)
        lacking = {name for name in here if name not in in_scope} | {name for name in globals_ if name not in module}
        # A name the fixed module does not bind either comes from a star import both make (`from .x import *`).
        covered = stars and stars <= _star_imports(fix)
        found += [(name, change.key) for name in sorted(lacking) if not (covered and name not in fix_names)]
    return found


def _star_imports(source: statements.SourceFile) -> frozenset[str]:
    return frozenset(
        f"{'.' * node.level}{node.module or ''}"
        for node in ast.walk(source.tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
    )


def names_taken_away(
    before: statements.SourceFile, patched: statements.SourceFile, targets: Sequence[Change]
) -> list[str]:
    """Names the release binds at its top level that the patched file no longer binds, while the patched file still
    reads them (a constant the fix renamed, in a release whose other code still uses the old name)."""
    lost = statements.module_names(before) - statements.module_names(patched)
    if not lost:
        return []
    changed = {change.key for change in targets}
    used: set[str] = set()
    for unit in statements.units(patched):
        if unit.key not in changed:
            used |= free_names(unit.text)
    return sorted(lost & used)


def _first_parameter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    if any(_decorator_name(decorator) == "staticmethod" for decorator in node.decorator_list):
        return None
    positional = [*node.args.posonlyargs, *node.args.args]
    return positional[0].arg if positional else None


def _attribute_uses(node: ast.AST, owner: str) -> tuple[set[str], set[str]]:
    """The attributes of `owner` (self, cls) that a function reads and those it sets."""
    reads: set[str] = set()
    sets: set[str] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == owner:
            (reads if isinstance(part.ctx, ast.Load) else sets).add(part.attr)
    return reads, sets


def class_attributes(source: statements.SourceFile, owner: str) -> set[str]:
    """What a class defines itself: names its body binds, and attributes its methods set on self (or cls)."""
    names: set[str] = set()
    for unit in statements.units(source, owner):
        names |= unit.binds
        if isinstance(unit.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = _first_parameter(unit.node)
            if first is not None:
                names |= _attribute_uses(unit.node, first)[1]
    return names


def attributes_lacking(change: Change, patched: statements.SourceFile, fix: statements.SourceFile) -> list[str]:
    """Attributes a fixed method reads (`self.size`) that its class defines in the fixed release but not in the
    patched one: the call would fail with AttributeError."""
    if change.shape is Shape.DELETE or not isinstance(change.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    owner = statements.owner_of(fix, change.key)
    first = _first_parameter(change.node)
    if not owner or first is None or not statements.units(patched, owner):
        return []
    reads, sets = _attribute_uses(change.node, first)
    added = class_attributes(fix, owner) - class_attributes(patched, owner)
    return sorted((reads - sets) & added)


def imported_from(source: statements.SourceFile, name: str, package: str, module: str, is_package: bool) -> str | None:
    """The module of the distribution that `name` is imported from at the top level (`from .utils import name`,
    `from transformers.utils import name`), or None where it does not come from within the package."""
    for node in source.tree.body:
        for statement in ast.walk(node):
            if not isinstance(statement, ast.ImportFrom):
                continue
            if not any((alias.asname or alias.name) == name for alias in statement.names):
                continue
            if statement.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (statement.level - 1)] if statement.level > 1 else parts
                return ".".join([*parts, *([statement.module] if statement.module else [])]) or None
            if statement.module and (statement.module == package or statement.module.startswith(f"{package}.")):
                return statement.module
    return None


def callee_signature(source: statements.SourceFile | None, name: str) -> str | None:
    """How a module's function or class is called: its signature (a class's `__init__`'s, or the fields a class
    without one declares, as a dataclass or NamedTuple is called); None where it has none."""
    if source is None:
        return None
    unit = statements.find(source, name)
    if unit is None:
        return None
    if isinstance(unit.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return signature(unit.node)
    if isinstance(unit.node, ast.ClassDef):
        init = statements.find(source, f"{name}.__init__")
        if init is not None and isinstance(init.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return f"class {signature(init.node)}"
        fields = [_field(statement) for statement in unit.node.body if isinstance(statement, ast.AnnAssign)]
        return f"class with fields ({', '.join(filter(None, fields))})" if any(fields) else "class"
    return unit.kind


def _field(statement: ast.AnnAssign) -> str | None:
    if not isinstance(statement.target, ast.Name) or "ClassVar" in ast.unparse(statement.annotation):
        return None
    return statement.target.id + ("=..." if statement.value is not None else "")


def callee_accepts(here: statements.SourceFile, there: statements.SourceFile, name: str) -> bool:
    """The module's `name` here takes every call that `there`'s takes: the same callee, or a function that
    accepts all its calls (a class: its `__init__`; fields must be the same)."""
    ours, theirs = callee_signature(here, name), callee_signature(there, name)
    if ours == theirs:
        return True
    old, new = _callable(here, name), _callable(there, name)
    return old is not None and new is not None and accepts_every_call_of(old, new)


def _callable(source: statements.SourceFile, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    unit = statements.find(source, name)
    if unit is not None and isinstance(unit.node, ast.ClassDef):
        unit = statements.find(source, f"{name}.__init__")
    if unit is not None and isinstance(unit.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return unit.node
    return None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------------- drafting


def draft_file(fix: FileFix, judged: Mapping[str, Judgement], legacy: bool = False) -> PatchFile:
    """The entry's part for one file, as it would patch one release: each target known in the form the release has
    it (so that the rewrite, which only rewrites known forms, takes it), absent ones inserted."""
    targets = []
    for change in fix.changes:
        judgement = judged.get(change.key)
        forms: tuple[Form, ...] = ()
        if judgement is not None and judgement.unit is not None and judgement.status is Standing.NEEDS:
            forms = (Form(judgement.unit.sha256, Verdict.NEEDS_PATCH, ()),)
        targets.append(target_of(change, forms))
    del legacy
    return PatchFile(fix.module, fix.file, tuple(targets))


def target_of(change: Change, forms: tuple[Form, ...], insert: bool = True) -> Target:
    """The entry's target for a change: a statement the fix adds or replaces is inserted (`insert`) where some
    release lacks it."""
    deleted = change.shape is Shape.DELETE
    return shaped(
        Target(
            name=change.key,
            fixed_text=None if deleted else change.text,
            forms=forms,
            shape=Shape.DELETE if deleted else Shape.INSERT if insert else Shape.REPLACE,
            after=change.after,
            before=change.before,
            lead=change.lead,
            lead_was=change.lead_was,
            next_lead=change.next_lead,
        )
    )
