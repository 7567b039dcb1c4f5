"""`hfpatch new`: a catalog entry written from the upstream release's wheels.

The core is pure: `author` takes each release's file ({version: bytes, or None where the release has no such file})
and returns the table of releases, the forms of each target with their verdicts, the whole-file forms, and the patch
entry, or why there can be none. It decides, for every release, what the fixed text would do there:

- the same text as the fix: fixed; no target at all: absent (the bug is not there yet, or no longer);
- another signature, or a method whose class lacks an attribute the fix uses: not applicable, since replacing it
  would break the callers or fail at run time;
- the fix uses a name (a helper, a constant, an import) that the release's module does not bind: not safe. No entry
  is written: a patch must never raise NameError. A helper that is a plain function can be added as another target,
  which the patch then inserts where it is absent;
- otherwise: needs the patch, and the patched file is computed (hfpatch.rewrite) and recorded by digest.

hfpatch.newentry is the shell around it: it picks the releases, reads their wheels, prints the table and writes the
entry. Only `hfpatch new` imports these modules.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import enum
import hashlib
import symtable
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from hfpatch import classify, definitions, rewrite, versions
from hfpatch.entry import Form, KnownFile, Patch, Target, Verdict, release_span
from hfpatch.errors import HfpatchError, UnexpectedCode, UsageError


class AuthoringError(HfpatchError):
    """The entry cannot be written as asked: a target that is not a function, a release that cannot be read..."""


ABSENT = "absent"
NOT_SAFE = "not-safe"
SKIPPED = "skipped"
FIX_LABEL = "fix"
# Names every module has without binding them, and that a function may use.
_MODULE_NAMES = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__", "__cached__",
    "__path__",
}  # fmt: skip
_BINDING_DECORATORS = ("staticmethod", "classmethod", "property", "cached_property")


@dataclass(frozen=True)
class Meta:
    """What the entry says about itself; `file` is the module's path inside the wheels."""

    id: str
    title: str
    upstream: str
    url: str
    distribution: str
    module: str
    file: str
    fixed_in: str


@dataclass(frozen=True)
class Row:
    """One release in the table: the form of each target (a letter, `fix`, `-` where absent), verdict and why."""

    release: str
    forms: tuple[str, ...]
    verdict: str
    reason: str


@dataclass(frozen=True)
class Missing:
    """A name the fix uses that some releases' module does not bind."""

    name: str
    users: tuple[str, ...]
    releases: tuple[str, ...]
    # What the name is in the fixed release: "function" (it can be added as a target), "class", "variable",
    # "import", or None (a name that release does not bind either).
    kind_in_fix: str | None


@dataclass(frozen=True)
class Authoring:
    targets: tuple[str, ...]  # in the order of the entry
    rows: tuple[Row, ...]
    patch: Patch | None  # None where no entry can be written
    missing: tuple[Missing, ...] = ()
    notes: tuple[str, ...] = ()
    refusal: str = ""  # why no entry can be written, where it is neither a missing name nor no release needing it


# ------------------------------------------------------------------------------------------------ the pure core


class _Status(enum.Enum):
    ABSENT = "absent"
    FIXED = "fixed"
    NEEDS = "needs-patch"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class _Judgement:
    """One target in one release."""

    status: _Status
    definition: definitions.Definition | None = None
    reason: str = ""
    kind: str | None = None  # what the name is where it is not a function
    lacking: tuple[str, ...] = ()  # Class.attribute the fixed method uses that this release's class lacks


@dataclass(frozen=True)
class _Fix:
    """The fixed release's definition of one target, and what it needs from its surroundings."""

    name: str
    definition: definitions.Definition
    node: ast.FunctionDef | ast.AsyncFunctionDef
    free_names: frozenset[str]


def parse_version(text: str, option: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{option} {text!r} is not a version (PEP 440), such as 5.13.0.") from None


def _sorted_releases(releases: Iterable[str]) -> list[str]:
    return sorted(releases, key=Version)


def fixed_definitions(source: bytes, meta: Meta, targets: Sequence[str]) -> dict[str, _Fix]:
    """Each target's fixed definition, in the fixed release; AuthoringError where one is not a function there."""
    parsed = _parse(source, f"{meta.file} of {meta.distribution} {meta.fixed_in}")
    fixes = {}
    for name in targets:
        kind = definitions.kind_of(parsed, name)
        found = definitions.find(parsed, name)
        if kind != "function" or found is None:
            what = f"is a {kind}" if kind else "is not defined"
            raise AuthoringError(
                f"{name} {what} in {meta.module} of {meta.distribution} {meta.fixed_in} (the --fixed-in release); "
                "a target is a module-level function or a method (Class.method) that the fixed release defines."
            )
        node = _function_node(found.canonical)
        fixes[name] = _Fix(name, found, node, free_names(found.canonical))
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


def author(
    texts: Mapping[str, bytes | None], meta: Meta, targets: Sequence[str], unavailable: Mapping[str, str] | None = None
) -> Authoring:
    """The table and the entry, from each release's file. `unavailable`: releases that could not be read, and why."""
    fix_source = texts.get(meta.fixed_in)
    if fix_source is None:
        raise AuthoringError(f"{meta.distribution} {meta.fixed_in} (the --fixed-in release) has no {meta.file}.")
    fixes = fixed_definitions(fix_source, meta, targets)
    ordered = sorted(targets, key=lambda name: fixes[name].definition.start)
    fix_parsed = definitions.parse(fix_source, meta.file)
    releases = _sorted_releases(texts)
    sources: dict[str, definitions.SourceFile | None] = {}
    skipped = dict(unavailable or {})
    for release in releases:
        text = texts[release]
        try:
            sources[release] = None if text is None else definitions.parse(text, f"{meta.file} of {release}")
        except UnexpectedCode as error:
            skipped[release] = f"{error} for this Python; no form recorded"
    judged = {
        release: {
            name: _after_the_fix(_judge(name, source, fixes, fix_parsed, ordered), release, meta.fixed_in)
            for name in ordered
        }
        for release, source in sources.items()
    }
    labels = _labels(ordered, fixes, judged)
    outcomes = {
        release: _release_verdict(meta, ordered, fixes, fix_parsed, source, judged[release])
        for release, source in sources.items()
    }
    by_release = {
        **{release: Row(release, tuple("?" for _ in ordered), SKIPPED, why) for release, why in skipped.items()},
        **{
            release: Row(release, tuple(labels[name].get(release, "-") for name in ordered), verdict, reason)
            for release, (verdict, reason, _) in outcomes.items()
        },
    }
    rows = tuple(by_release[release] for release in _sorted_releases(by_release))
    hints = _class_hints(meta, judged, fix_parsed)
    missing = _missing(outcomes, fix_parsed)
    if missing:
        return Authoring(tuple(ordered), rows, None, missing, tuple(hints))
    needing = [release for release, (verdict, _, _) in outcomes.items() if verdict == Verdict.NEEDS_PATCH.value]
    split = _split_forms(ordered, judged)
    if not needing or split:
        return Authoring(tuple(ordered), rows, None, (), tuple(hints), split)
    insertable = {name for release in needing for name in ordered if judged[release][name].status is _Status.ABSENT}
    ordered = _insertion_order(ordered, insertable)
    entry_targets = tuple(
        Target(name, fixes[name].definition.canonical, _forms(name, fixes[name], judged), name in insertable)
        for name in ordered
    )
    draft = Patch(
        id=meta.id,
        title=meta.title,
        upstream=meta.upstream,
        url=meta.url,
        distribution=meta.distribution,
        module=meta.module,
        file=meta.file,
        fixed_in=meta.fixed_in,
        first_defined_in=_first_defined_in(releases, outcomes),
        targets=entry_targets,
        known_files=(),
        directory=Path(meta.id),
    )
    known, notes = _known_files(draft, texts, outcomes)
    patch = draft._replace(known_files=known)
    _check_entry(patch, texts, outcomes)
    notes += hints
    if patch.first_defined_in is None and releases and releases[0] in sources:
        notes.append(
            f"no release read lacks the targets, so the entry sets no first_defined_in; hfpatch will refuse a "
            f"release older than {releases[0]} (read more with --since)"
        )
    return Authoring(tuple(ordered), rows, patch, (), tuple(notes))


def _after_the_fix(judgement: _Judgement, release: str, fixed_in: str) -> _Judgement:
    """Upstream kept changing the code after it fixed it: a release at or after --fixed-in has the fix, whatever
    its text (a later signature is no reason to call it not applicable, it needs no patch)."""
    if judgement.definition is None or judgement.status is _Status.FIXED:
        return judgement
    if not versions.is_at_least(release, fixed_in):
        return judgement
    return _Judgement(_Status.FIXED, judgement.definition, "a later form of the fixed code")


def _parse(source: bytes, what: str) -> definitions.SourceFile:
    try:
        return definitions.parse(source, what)
    except UnexpectedCode as error:
        raise AuthoringError(f"{error}.") from None


def _function_node(canonical: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    node = ast.parse(canonical).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return node


def _judge(
    name: str,
    source: definitions.SourceFile | None,
    fixes: Mapping[str, _Fix],
    fix_parsed: definitions.SourceFile,
    targets: Sequence[str],
) -> _Judgement:
    if source is None:
        return _Judgement(_Status.ABSENT)
    kind = definitions.kind_of(source, name)
    found = definitions.find(source, name) if kind == "function" else None
    if kind is None:
        return _Judgement(_Status.ABSENT)
    if found is None:
        return _Judgement(_Status.NOT_APPLICABLE, None, f"{name} is a {kind} here, not a function", kind)
    fix = fixes[name]
    if found.sha256 == fix.definition.sha256:
        return _Judgement(_Status.FIXED, found)
    old, new = signature(_function_node(found.canonical)), signature(fix.node)
    if old != new:
        reason = f"signature {old} where the fix has {new}: the fix would break its callers"
        return _Judgement(_Status.NOT_APPLICABLE, found, reason)
    if "." in name:
        lacking = _attributes_lacking(name, source, fix, fix_parsed, targets)
        if lacking:
            owner = name.split(".")[0]
            uses = ", ".join(f"self.{attribute}" for attribute in lacking)
            reason = f"the fix uses {uses}, which {owner} here never defines"
            lacks = tuple(f"{owner}.{attribute}" for attribute in lacking)
            return _Judgement(_Status.NOT_APPLICABLE, found, reason, lacking=lacks)
    return _Judgement(_Status.NEEDS, found, f"same signature as the fix; {_changed_lines(found, fix)}")


def _changed_lines(found: definitions.Definition, fix: _Fix) -> str:
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
    name: str, source: definitions.SourceFile, fix: _Fix, fix_parsed: definitions.SourceFile, targets: Sequence[str]
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


def _release_verdict(
    meta: Meta,
    targets: Sequence[str],
    fixes: Mapping[str, _Fix],
    fix_parsed: definitions.SourceFile,
    source: definitions.SourceFile | None,
    judged: Mapping[str, _Judgement],
) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(verdict, reason, missing names with the target that uses each) of one release."""

    def named(target: str, text: str) -> str:
        return f"{target}: {text}" if len(targets) > 1 else text

    present = [name for name in targets if judged[name].status is not _Status.ABSENT]
    if source is None:
        return ABSENT, f"no {meta.file} in this release", ()
    if not present:
        return ABSENT, f"{', '.join(targets)} not defined", ()
    for name in present:
        if judged[name].status is _Status.NOT_APPLICABLE:
            return Verdict.NOT_APPLICABLE.value, named(name, judged[name].reason), ()
    if all(judged[name].status is _Status.FIXED for name in targets):
        later = [judged[name].reason for name in targets if judged[name].reason]
        return Verdict.FIXED.value, later[0] if later else "identical to the fix", ()
    if not any(judged[name].status is _Status.NEEDS for name in present):
        absent = ", ".join(name for name in targets if judged[name].status is _Status.ABSENT)
        return Verdict.FIXED.value, f"the targets it has are identical to the fix ({absent} absent)", ()
    changing = [name for name in targets if judged[name].status in (_Status.NEEDS, _Status.ABSENT)]
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
        return NOT_SAFE, f"{', '.join(names)} missing (the fix of {', '.join(users)} uses it)", lacking
    reasons = [
        named(name, judged[name].reason)
        if judged[name].status is _Status.NEEDS
        else f"{name} absent: the patch adds it"
        for name in changing
    ]
    return Verdict.NEEDS_PATCH.value, "; ".join(reasons), ()


def _missing(
    outcomes: Mapping[str, tuple[str, str, tuple[tuple[str, str], ...]]], fix_parsed: definitions.SourceFile
) -> tuple[Missing, ...]:
    users: dict[str, set[str]] = {}
    releases: dict[str, list[str]] = {}
    for release in _sorted_releases(outcomes):
        for name, user in outcomes[release][2]:
            users.setdefault(name, set()).add(user)
            if release not in releases.setdefault(name, []):
                releases[name].append(release)
    return tuple(
        Missing(name, tuple(sorted(users[name])), tuple(releases[name]), _kind_in_fix(fix_parsed, name))
        for name in sorted(users)
    )


def _kind_in_fix(fix_parsed: definitions.SourceFile, name: str) -> str | None:
    if name not in definitions.module_names(fix_parsed):
        return None
    return definitions.kind_of(fix_parsed, name) or "import"


def _labels(
    targets: Sequence[str], fixes: Mapping[str, _Fix], judged: Mapping[str, Mapping[str, _Judgement]]
) -> dict[str, dict[str, str]]:
    """Per target, per release: `fix`, a letter per other form (in order of first release), `-`, or the kind."""
    labels: dict[str, dict[str, str]] = {}
    for name in targets:
        by_digest: dict[str, str] = {fixes[name].definition.sha256: FIX_LABEL}
        labels[name] = {}
        for release in _sorted_releases(judged):
            judgement = judged[release][name]
            if judgement.definition is None:
                labels[name][release] = judgement.kind or "-"
                continue
            digest = judgement.definition.sha256
            if digest not in by_digest:
                by_digest[digest] = _letter(len(by_digest) - 1)
            labels[name][release] = by_digest[digest]
    return labels


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"F{index + 1}"


def _insertion_order(targets: list[str], insertable: set[str]) -> list[str]:
    """The fixed release's order, except that a target to insert goes before a target of its scope that is never
    absent where it is inserted (the rewrite inserts before the next such target)."""
    ordered = list(targets)
    for name in [name for name in targets if name in insertable]:
        scope = name.rpartition(".")[0]
        anchors = [other for other in ordered if other not in insertable and other.rpartition(".")[0] == scope]
        if anchors and not any(ordered.index(anchor) > ordered.index(name) for anchor in anchors):
            ordered.remove(name)
            ordered.insert(ordered.index(anchors[0]), name)
    return ordered


def _grouped(name: str, judged: Mapping[str, Mapping[str, _Judgement]]) -> dict[str, list[tuple[str, _Judgement]]]:
    """The releases of each distinct text of a target, by digest, in order of first release."""
    grouped: dict[str, list[tuple[str, _Judgement]]] = {}
    for release in _sorted_releases(judged):
        judgement = judged[release][name]
        if judgement.definition is not None:
            grouped.setdefault(judgement.definition.sha256, []).append((release, judgement))
    return grouped


def _forms(name: str, fix: _Fix, judged: Mapping[str, Mapping[str, _Judgement]]) -> tuple[Form, ...]:
    forms = []
    for digest, seen in _grouped(name, judged).items():
        first = seen[0][1]
        assert first.definition is not None
        verdict = {_Status.FIXED: Verdict.FIXED, _Status.NEEDS: Verdict.NEEDS_PATCH}.get(
            first.status, Verdict.NOT_APPLICABLE
        )
        releases = tuple(release for release, _ in seen)
        reason = "" if verdict is Verdict.FIXED else first.reason
        forms.append(Form(digest, verdict, releases, reason, definitions.line_digests(first.definition.canonical)))
    return tuple(forms)


def _split_forms(targets: Sequence[str], judged: Mapping[str, Mapping[str, _Judgement]]) -> str:
    """Why no entry can be written where one text of a target takes the fix in one release and not in another
    (its class differs): a form has one verdict, and hfpatch never rewrites a form that is not needs-patch."""
    for name in targets:
        for seen in _grouped(name, judged).values():
            taking = [release for release, judgement in seen if judgement.status is _Status.NEEDS]
            refusing = [release for release, judgement in seen if judgement.status is _Status.NOT_APPLICABLE]
            if taking and refusing:
                why = judged[refusing[0]][name].reason
                return (
                    f"{name} has the same text in {release_span(taking)}, which can take the fix, and in "
                    f"{release_span(refusing)}, where {why}; one form cannot have both verdicts, so leave one side out "
                    "with --since or --until; nothing written."
                )
    return ""


def lack_phrase(releases: Sequence[str]) -> str:
    return "lacks" if len(releases) == 1 else "lack"


def _first_defined_in(releases: Sequence[str], outcomes: Mapping[str, tuple[str, str, object]]) -> str | None:
    """The first release read that has a target, where an older release read has none (the bug's start)."""
    seen_absent = False
    for release in releases:
        if release not in outcomes:
            continue
        if outcomes[release][0] == ABSENT:
            seen_absent = True
        else:
            return release if seen_absent else None
    return None


def _known_files(
    draft: Patch, texts: Mapping[str, bytes | None], outcomes: Mapping[str, tuple[str, str, object]]
) -> tuple[tuple[KnownFile, ...], list[str]]:
    by_digest: dict[str, list[str]] = {}
    for release in _sorted_releases(outcomes):
        text = texts[release]
        if text is not None:
            by_digest.setdefault(hashlib.sha256(text).hexdigest(), []).append(release)
    fix_text = texts[draft.fixed_in]
    fix_digest = hashlib.sha256(fix_text).hexdigest() if fix_text is not None else ""
    known, notes = [], []
    for digest, releases in by_digest.items():
        verdict = outcomes[releases[0]][0]
        patched = None
        if verdict == Verdict.NEEDS_PATCH.value:
            try:
                patched = hashlib.sha256(rewrite.patched(texts[releases[0]] or b"", draft)).hexdigest()
            except UnexpectedCode as error:
                raise AuthoringError(f"cannot patch the {release_span(releases)} {draft.file}: {error}.") from None
            if patched == fix_digest:
                notes.append(f"patched, the {release_span(releases)} file is the {draft.fixed_in} file byte for byte")
        kept = None if verdict == ABSENT else Verdict(verdict)
        known.append(KnownFile(digest, tuple(releases), kept, patched))
    return tuple(known), notes


def _check_entry(
    patch: Patch, texts: Mapping[str, bytes | None], outcomes: Mapping[str, tuple[str, str, object]]
) -> None:
    """hfpatch must read every release as the table says (each one that needs the patch was patched already, for
    its file's patched digest)."""
    for release, (verdict, _, _) in outcomes.items():
        text = texts[release]
        if text is None:
            continue
        found = classify.identify(text, patch, release).verdict
        expected = Verdict.NOT_APPLICABLE if verdict == ABSENT else Verdict(verdict)
        if found is not expected:
            raise AuthoringError(
                f"the entry would read {release} as {found.value if found else 'unknown'}, not {expected.value} "
                "(a bug in hfpatch new)."
            )


def _class_hints(
    meta: Meta, judged: Mapping[str, Mapping[str, _Judgement]], fix_parsed: definitions.SourceFile
) -> list[str]:
    """Where a method's fix calls a method its class lacks in some releases, say how to bring it along."""
    lacking: dict[str, list[str]] = {}
    for release in _sorted_releases(judged):
        for judgement in judged[release].values():
            for attribute in judgement.lacking:
                lacking.setdefault(attribute, []).append(release)
    return [
        f"{release_span(releases)} {lack_phrase(releases)} {attribute}, which the fix calls; add --target "
        f"{meta.distribution}:{meta.module}:{attribute} to insert it and patch them too"
        for attribute, releases in lacking.items()
        if definitions.kind_of(fix_parsed, attribute) == "function"
    ]


# ------------------------------------------------------------------------------------------------- rendering


def render_table(authoring: Authoring) -> str:
    form_header = "form" if len(authoring.targets) == 1 else f"form ({'/'.join(authoring.targets)})"
    lines = [("release", form_header, "verdict", "reason")]
    lines += [(row.release, "/".join(row.forms), row.verdict, row.reason) for row in authoring.rows]
    widths = [max(len(line[column]) for line in lines) for column in range(3)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True)), line[3]]).rstrip()
        for line in lines
    )
