"""Judging one release for a fix: what each target is there, and what the fixed text would do to it. Pure.

- the same text as the fix: fixed; no target at all: absent (the bug is not there yet, or no longer);
- another signature, or a method whose class lacks an attribute the fix uses: not applicable, since replacing it
  would break the callers or fail at run time;
- the fix uses a name (a helper, a constant, an import) that the release's module does not bind: not safe. A patch
  must never raise NameError. A helper that is a plain function can be added as another target, which the patch
  then inserts where it is absent;
- otherwise: needs the patch.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import enum
import symtable
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from packaging.version import Version

from hfpatch import definitions, versions
from hfpatch.entry import Patch, Verdict
from hfpatch.errors import AuthoringError, UnexpectedCode

_MODULE_NAMES = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__", "__cached__",
    "__path__",
}  # fmt: skip
_BINDING_DECORATORS = ("staticmethod", "classmethod", "property", "cached_property")


class Judged(enum.Enum):
    """What a release comes to for the fix: the table's verdict column."""

    NEEDS_PATCH = "needs-patch"
    FIXED = "fixed"
    NOT_APPLICABLE = "not-applicable"
    ABSENT = "absent"  # none of the targets: the bug is not there yet (or no longer)
    NOT_SAFE = "not-safe"  # the fix would use a name this release's module lacks: no entry is written
    SKIPPED = "skipped"  # the release could not be read

    @property
    def verdict(self) -> Verdict | None:
        """The verdict the entry records for a release file; None for one without the targets."""
        return _ENTRY_VERDICT[self]


_ENTRY_VERDICT = {
    Judged.NEEDS_PATCH: Verdict.NEEDS_PATCH,
    Judged.FIXED: Verdict.FIXED,
    Judged.NOT_APPLICABLE: Verdict.NOT_APPLICABLE,
    Judged.ABSENT: None,
    Judged.NOT_SAFE: None,
    Judged.SKIPPED: None,
}


@dataclass(frozen=True)
class ReleaseVerdict:
    kind: Judged
    reason: str
    # Names the fix uses that the release's module does not bind, each with the target that uses it.
    missing: tuple[tuple[str, str], ...] = ()


class Status(enum.Enum):
    ABSENT = "absent"
    FIXED = "fixed"
    NEEDS = "needs-patch"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Judgement:
    """One target in one release."""

    status: Status
    definition: definitions.Definition | None = None
    reason: str = ""
    kind: str | None = None  # what the name is where it is not a function
    lacking: tuple[str, ...] = ()  # Class.attribute the fixed method uses that this release's class lacks


@dataclass(frozen=True)
class Fix:
    """The fixed release's definition of one target, and what it needs from its surroundings."""

    name: str
    definition: definitions.Definition
    node: ast.FunctionDef | ast.AsyncFunctionDef
    free_names: frozenset[str]


def sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(releases, key=Version)


def fixed_definitions(source: bytes, header: Patch, targets: Sequence[str]) -> dict[str, Fix]:
    """Each target's fixed definition, in the fixed release; AuthoringError where one is not a function there."""
    parsed = _parse(source, f"{header.file} of {header.distribution} {header.fixed_in}")
    fixes = {}
    for name in targets:
        kind = definitions.kind_of(parsed, name)
        found = definitions.find(parsed, name)
        if kind != "function" or found is None:
            what = f"is a {kind}" if kind else "is not defined"
            raise AuthoringError(
                f"{name} {what} in {header.module} of {header.distribution} {header.fixed_in} (the --fixed-in "
                "release); a target is a module-level function or a method (Class.method) that the fixed release "
                "defines."
            )
        node = _function_node(found.canonical)
        fixes[name] = Fix(name, found, node, free_names(found.canonical))
    return fixes


def defines_any(source: bytes | None, targets: Sequence[str], what: str) -> bool:
    """Whether a release binds any target (of any kind): the walk back to the first release stops where none is."""
    if source is None:
        return False
    try:
        parsed = definitions.parse(source, what)
    except UnexpectedCode:
        return False
    return any(definitions.kind_of(parsed, name) is not None for name in targets)


def after_the_fix(judgement: Judgement, release: str, fixed_in: str) -> Judgement:
    """Upstream kept changing the code after it fixed it: a release at or after --fixed-in has the fix, whatever
    its text (a later signature is no reason to call it not applicable, it needs no patch)."""
    if judgement.definition is None or judgement.status is Status.FIXED:
        return judgement
    if not versions.is_at_least(release, fixed_in):
        return judgement
    return Judgement(Status.FIXED, judgement.definition, "a later form of the fixed code")


def _parse(source: bytes, what: str) -> definitions.SourceFile:
    try:
        return definitions.parse(source, what)
    except UnexpectedCode as error:
        raise AuthoringError(f"{error}.") from None


def _function_node(canonical: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    node = ast.parse(canonical).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return node


def judge(
    name: str,
    source: definitions.SourceFile | None,
    fixes: Mapping[str, Fix],
    fix_parsed: definitions.SourceFile,
    targets: Sequence[str],
) -> Judgement:
    if source is None:
        return Judgement(Status.ABSENT)
    kind = definitions.kind_of(source, name)
    found = definitions.find(source, name) if kind == "function" else None
    if kind is None:
        return Judgement(Status.ABSENT)
    if found is None:
        return Judgement(Status.NOT_APPLICABLE, None, f"{name} is a {kind} here, not a function", kind)
    fix = fixes[name]
    if found.sha256 == fix.definition.sha256:
        return Judgement(Status.FIXED, found)
    old, new = signature(_function_node(found.canonical)), signature(fix.node)
    if old != new:
        reason = f"signature {old} where the fix has {new}: the fix would break its callers"
        return Judgement(Status.NOT_APPLICABLE, found, reason)
    if "." in name:
        lacking = _attributes_lacking(name, source, fix, fix_parsed, targets)
        if lacking:
            owner = name.split(".")[0]
            uses = ", ".join(f"self.{attribute}" for attribute in lacking)
            reason = f"the fix uses {uses}, which {owner} here never defines"
            lacks = tuple(f"{owner}.{attribute}" for attribute in lacking)
            return Judgement(Status.NOT_APPLICABLE, found, reason, lacking=lacks)
    return Judgement(Status.NEEDS, found, f"same signature as the fix; {_changed_lines(found, fix)}")


def _changed_lines(found: definitions.Definition, fix: Fix) -> str:
    old, new = found.canonical.split("\n"), fix.definition.canonical.split("\n")
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


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    try:
        return ast.unparse(target)
    except (AttributeError, ValueError):  # pragma: no cover - every expression unparses
        return ""


def _binds(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last in _BINDING_DECORATORS or last in ("setter", "getter", "deleter")


def free_names(text: str) -> frozenset[str]:
    """The names a function's text reads from its module: not parameters, locals, or names of nested scopes."""
    table = symtable.symtable(text, "<fixed>", "exec")
    # At the top: what the decorators, defaults and annotations read; the function's own name is bound there.
    names = {
        symbol.get_name()
        for symbol in table.get_symbols()
        if symbol.is_referenced() and not symbol.is_assigned() and not symbol.is_imported()
    }
    pending = list(table.get_children())
    while pending:
        scope = pending.pop()
        pending.extend(scope.get_children())
        names |= {symbol.get_name() for symbol in scope.get_symbols() if symbol.is_global() and symbol.is_referenced()}
    names.discard("__class__")  # what super() reads: the compiler provides it inside a class
    return frozenset(names - _MODULE_NAMES)


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


def _class_node(tree: ast.Module, name: str) -> ast.ClassDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            found = node  # the last one is what the module binds
    return found


def class_attributes(node: ast.ClassDef) -> set[str]:
    """What a class defines itself: names its body binds, and attributes its methods set on self (or cls)."""
    body = definitions.SourceFile("utf-8", (), ast.Module(body=node.body, type_ignores=[]))
    names = set(definitions.module_names(body))
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            owner = _first_parameter(statement)
            if owner is not None:
                names |= _attribute_uses(statement, owner)[1]
    return names


def _attributes_lacking(
    name: str, source: definitions.SourceFile, fix: Fix, fix_parsed: definitions.SourceFile, targets: Sequence[str]
) -> list[str]:
    """Attributes the fixed method reads that its class defines in the fixed release but not in this one."""
    owner, _ = name.split(".")
    first = _first_parameter(fix.node)
    old_class, new_class = _class_node(source.tree, owner), _class_node(fix_parsed.tree, owner)
    if first is None or old_class is None or new_class is None:
        return []
    reads, sets = _attribute_uses(fix.node, first)
    added = class_attributes(new_class) - class_attributes(old_class)
    supplied = {target.split(".")[1] for target in targets if target.startswith(f"{owner}.")}
    return sorted((reads - sets) & added - supplied)


def _bound(source: definitions.SourceFile, targets: Sequence[str]) -> frozenset[str]:
    return definitions.module_names(source) | {name for name in targets if "." not in name} | _MODULE_NAMES


def _star_imports(source: definitions.SourceFile) -> frozenset[str]:
    return frozenset(
        f"{'.' * node.level}{node.module or ''}"
        for node in ast.walk(source.tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
    )


def release_verdict(
    header: Patch,
    targets: Sequence[str],
    fixes: Mapping[str, Fix],
    fix_parsed: definitions.SourceFile,
    source: definitions.SourceFile | None,
    judged: Mapping[str, Judgement],
) -> ReleaseVerdict:
    """What one release comes to, and why."""

    def named(target: str, text: str) -> str:
        return f"{target}: {text}" if len(targets) > 1 else text

    present = [name for name in targets if judged[name].status is not Status.ABSENT]
    if source is None:
        return ReleaseVerdict(Judged.ABSENT, f"no {header.file} in this release")
    if not present:
        return ReleaseVerdict(Judged.ABSENT, f"{', '.join(targets)} not defined")
    for name in present:
        if judged[name].status is Status.NOT_APPLICABLE:
            return ReleaseVerdict(Judged.NOT_APPLICABLE, named(name, judged[name].reason))
    if all(judged[name].status is Status.FIXED for name in targets):
        later = [judged[name].reason for name in targets if judged[name].reason]
        return ReleaseVerdict(Judged.FIXED, later[0] if later else "identical to the fix")
    if not any(judged[name].status is Status.NEEDS for name in present):
        absent = ", ".join(name for name in targets if judged[name].status is Status.ABSENT)
        return ReleaseVerdict(Judged.FIXED, f"the targets it has are identical to the fix ({absent} absent)")
    changing = [name for name in targets if judged[name].status in (Status.NEEDS, Status.ABSENT)]
    bound = _bound(source, targets)
    # A name the fixed release does not bind either can only come from a star import both releases make.
    stars = _star_imports(fix_parsed)
    covered = stars and stars <= _star_imports(source)
    fix_bound = definitions.module_names(fix_parsed)
    lacking = tuple(
        (free, name)
        for name in changing
        for free in sorted(fixes[name].free_names)
        if free not in bound and not (covered and free not in fix_bound)
    )
    if lacking:
        names = sorted({free for free, _ in lacking})
        users = sorted({user for _, user in lacking})
        reason = f"{', '.join(names)} missing (the fix of {', '.join(users)} uses it)"
        return ReleaseVerdict(Judged.NOT_SAFE, reason, lacking)
    reasons = [
        named(name, judged[name].reason) if judged[name].status is Status.NEEDS else f"{name} absent: the patch adds it"
        for name in changing
    ]
    return ReleaseVerdict(Judged.NEEDS_PATCH, "; ".join(reasons))


def kind_in_fix(fix_parsed: definitions.SourceFile, name: str) -> str | None:
    if name not in definitions.module_names(fix_parsed):
        return None
    return definitions.kind_of(fix_parsed, name) or "import"
