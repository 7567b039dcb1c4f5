"""The catalog entry format, `patch.json`: what a patch is, read, validated and written in this one module.

An entry is a directory:

    <catalog>/<id>/patch.json          what the patch changes, where it comes from, every known form by digest
    <catalog>/<id>/fixed/...           the exact fixed text of each statement it puts in
    <catalog>/<id>/probe.py            optional: what `hfpatch verify` runs in the application's interpreter
    <catalog>/<id>/transform.py        optional: a libcst transform where replacing whole statements cannot do

A patch changes one or more files of one distribution. In each file it changes *targets*: statements of the module
or of a class body, named by their keys (hfpatch.statements), each in its shape (`Shape`): a function or method
replaced by its fixed text, an import or a constant inserted where the fixed release has it (its anchor: after the
statement before it there, or before the one after it), a statement the fix removed deleted.

The entries are JSON, not TOML: `check` reads every entry of every catalog it is given, and the standard library
parses JSON in C, an order of magnitude faster than tomllib parses the same data, without importing tomllib's ~5 ms
(benchmarks/bench.py). `render` writes them laid out for review; `load` refuses anything it would not write;
`write` puts a whole entry's directory in place (patch.json, the fixed texts, a probe), or nothing.

Schema 5 writes each target's shape ("replace", "insert" with its anchor, "delete") and each file's ("edit", the
default, or "remove": the file's code taken out, each release's file known by digest and emptied by apply, its
original kept as every original is). A form may have a fixed text of its own (from schema 4): where the releases of
a line have the statement in a form the target's fixed text cannot replace (it calls a helper they lack), that form
is rewritten to a text fitted to it. The older schemas are read and converted as they are read: schema 4 (a file's
shape; a target's `delete` and `insert_if_absent` flags), schema 3 (hfpatch 0.3: a list of files, the flags) and
schema 2 (hfpatch 0.2: one file, definitions digested dedented). Every entry is written in schema 5, except one of
schema 2, whose digests only schema 2 describes.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch import versions
from hfpatch.errors import AuthoringError, CatalogError, UsageError

SCHEMA = 5
READS = (2, 3, 4, 5)
ENTRY = "patch.json"
# What hfpatch 0.1 wrote: TOML, schema 1 (python -m hfpatch.migrate converts it).
OLD_ENTRY = "patch.toml"
# What an entry's id and a name in a key may be; `hfpatch new` checks its input against the same patterns.
ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
# A dotted name: a module (a.b.c) or a statement's name inside it (Class.method).
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
# A distribution's name as PEP 508 spells one (before normalisation).
DISTRIBUTION = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
ADVISORY = re.compile(r"(CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}|PYSEC-\d{4}-\d+)")
_DIGEST = re.compile(r"[0-9a-f]{64}")
# A known file's verdict where the release has none of the targets (no Verdict: no form of them to judge).
ABSENT = "absent"
# A known file's verdict where the release, outside those the entry was written from, has the targets in code the
# entry does not know (another line's, which another entry carries): `check` says not-covered without parsing it.
UNKNOWN = "unknown"


class Verdict(enum.Enum):
    """What a known form of a statement means for the patch."""

    NEEDS_PATCH = "needs-patch"
    FIXED = "fixed"
    NOT_APPLICABLE = "not-applicable"


class FileShape(enum.Enum):
    """What a patch does to a file: edits its statements, removes its code (the fixed release has no such file), or
    adds it (a module the fix creates, which the fixed release ships and the others lack)."""

    EDIT = "edit"
    REMOVE = "remove"
    ADD = "add"


class Shape(enum.Enum):
    """What the fix does to a statement (a target): the one word the entry, `new`, classify and rewrite use."""

    # Its known forms become the fixed text; where it is absent, it is not the patch's to add.
    REPLACE = "replace"
    # As replace, and where it is absent it is put in at its anchor: after the statement `after`, or else before
    # `before` (keys of the fixed release), or neither: at the start of its scope.
    INSERT = "insert"
    # Taken out where it is in a known form; where it is absent, the file has the fix.
    DELETE = "delete"


# The keys of a target each shape has beside its name, shape and forms (schema 5): a key another shape has is
# refused, never kept unread.
SHAPE_KEYS = {
    Shape.REPLACE: frozenset({"fixed", "lead", "lead_was"}),
    Shape.INSERT: frozenset({"fixed", "after", "before", "lead", "lead_was", "next_lead"}),
    Shape.DELETE: frozenset(),
}

# What a removed file holds once the patch is applied: nothing (the digest of no bytes).
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


class Form(NamedTuple):
    """One text a statement has had in real releases, known by the sha256 of its text."""

    sha256: str
    verdict: Verdict
    releases: tuple[str, ...]
    reason: str = ""
    # Short digests of each line of the text: enough to point at the line where unknown code differs.
    lines: tuple[str, ...] = ()
    # This form's own fixed text, where it is not the target's (an older line whose code the fix must be fitted to:
    # a helper the target's text calls is absent there); None: the target's. Only a form that needs the patch has one.
    fixed_text: str | None = None
    # Where that text lies in the entry (relative, POSIX).
    fixed_file: str | None = None

    @property
    def release_range(self) -> str:
        return release_span(self.releases)


class Target(NamedTuple):
    """A statement the patch changes, named by its key, in its shape: it gets `fixed_text` (None: deleted)."""

    name: str
    fixed_text: str | None
    forms: tuple[Form, ...]
    shape: Shape = Shape.REPLACE
    # An insertion's anchor: after the statement `after` of its scope, or else before `before` (keys of the fixed
    # release); neither: at the start of its scope.
    after: str | None = None
    before: str | None = None
    # The comment and blank lines above it in the fixed release (each ending in "\n"): inserted with it, and put in
    # place of a lead whose digest `lead_was` lists (a replaced statement: only there).
    lead: str | None = None
    lead_was: tuple[str, ...] = ()
    # The lead of the statement after it in the fixed release (`before`): what that statement gets where the
    # insertion opens its group.
    next_lead: str | None = None
    # Where the fixed text lies in the entry (relative, POSIX).
    fixed_file: str | None = None
    # Schema 2: digests and the fixed text are the definition dedented (hfpatch.statements.legacy_canonical).
    legacy: bool = False

    @property
    def fixed_sha256(self) -> str | None:
        return None if self.fixed_text is None else text_sha256(self.fixed_text)

    def fixed_for(self, digest: str, releases: Collection[str] = ()) -> str | None:
        """The fixed text a statement of this digest becomes: its form's own, else the target's. One text can be two
        forms of disjoint releases, each its own fixed text (the same method where one line has the helper the fix
        calls and the other lacks it): the form of `releases` (those of the file it is in), else the first."""
        forms = [form for form in self.forms if form.sha256 == digest]
        form = next((form for form in forms if not set(form.releases).isdisjoint(releases)), None)
        form = form or next(iter(forms), None)
        return form.fixed_text if form is not None and form.fixed_text is not None else self.fixed_text

    def fixed_digests(self) -> tuple[str, ...]:
        """The digest of every text the patch puts in for this target: the target's, then each form's own."""
        own = (text_sha256(form.fixed_text) for form in self.forms if form.fixed_text is not None)
        return tuple(dict.fromkeys([*([self.fixed_sha256] if self.fixed_sha256 else []), *own]))

    def stays(self, digest: str) -> bool:
        """A statement of this digest is left as it is by apply: a text the patch puts in, or a form without the
        bug (one known as fixed, beside another target of its file that needs the patch)."""
        if digest in self.fixed_digests():
            return True
        form = self.form_of(digest)
        return form is not None and form.verdict is Verdict.FIXED

    def form_of(self, digest: str) -> Form | None:
        for form in self.forms:
            if form.sha256 == digest:
                return form
        if digest == self.fixed_sha256:
            return Form(digest, Verdict.FIXED, (), "the fixed text")
        fitted = next((form for form in self.forms if form.fixed_text and text_sha256(form.fixed_text) == digest), None)
        if fitted is not None:
            return Form(digest, Verdict.FIXED, (), f"the fixed text of the {fitted.release_range} code")
        return None


class KnownFile(NamedTuple):
    """A whole released file: recognised by digest without parsing it, and what the patch must make of it."""

    sha256: str
    releases: tuple[str, ...]
    verdict: Verdict | None  # None: the targets are absent, or (code_unknown) in code the entry does not know
    patched_sha256: str | None = None
    code_unknown: bool = False
    # Not applicable: why, as the classifier says it of this file (where recorded, check need not parse it for that).
    reason: str = ""

    @property
    def label(self) -> str:
        """The verdict as patch.json spells it."""
        return UNKNOWN if self.code_unknown else ABSENT if self.verdict is None else self.verdict.value


def known_verdict(label: str) -> tuple[Verdict | None, bool]:
    """A known file's verdict and whether it is code the entry does not know, from patch.json's spelling; ValueError
    for any other word."""
    if label == UNKNOWN:
        return None, True
    if label == ABSENT:
        return None, False
    return Verdict(label), False


class PatchFile(NamedTuple):
    """One file a patch changes."""

    module: str
    # Relative to the directory that holds the top-level package (site-packages), POSIX style.
    file: str
    targets: tuple[Target, ...]
    known_files: tuple[KnownFile, ...] = ()
    shape: FileShape = FileShape.EDIT
    # FileShape.ADD: the whole file the patch creates, byte for byte, and where it lies in the entry (relative, POSIX).
    added: bytes | None = None
    added_file: str | None = None

    @property
    def target_names(self) -> str:
        if self.shape is FileShape.REMOVE:
            return f"the code of {self.file}"
        if self.shape is FileShape.ADD:
            return f"the module {self.file} the fix adds"
        return ", ".join(target.name for target in self.targets)

    def known_file(self, digest: str) -> KnownFile | None:
        return next((known for known in self.known_files if known.sha256 == digest), None)


class Patch(NamedTuple):
    id: str
    title: str
    upstream: str
    url: str
    distribution: str
    # The first release with the fix; None where no release has it yet (a fix taken from an unreleased build).
    fixed_in: str | None
    # The first release that defines the targets; absent targets in older releases mean the bug is not there yet.
    first_defined_in: str | None
    files: tuple[PatchFile, ...]
    directory: Path
    probe: Path | None = None
    transform: Path | None = None
    # Free text for the reader of the entry: where it came from, what it proves (JSON has no comments).
    about: tuple[str, ...] = ()
    # The security advisories the fix closes (CVE, GHSA and PYSEC ids).
    advisories: tuple[str, ...] = ()
    # The oldest and the newest release `hfpatch new` read: what the entry knows.
    releases_read: tuple[str, str] | None = None
    # False for an entry read as its header (each file's module and path, no targets): all a command needs in an
    # environment that does not have the distribution (catalog.select reads the whole entry where it is needed).
    whole: bool = True

    @property
    def package(self) -> str:
        """The top-level package every file of the patch lies in."""
        return self.files[0].module.split(".")[0]

    @property
    def target_names(self) -> str:
        return "; ".join(f"{file.target_names}" for file in self.files)

    @property
    def file_names(self) -> str:
        return ", ".join(file.file for file in self.files)

    @property
    def fixed_upstream(self) -> str:
        """In words: where the fix is upstream."""
        return f"in {self.fixed_in}" if self.fixed_in else "upstream, in no release yet"


def release_span(releases: Sequence[str], empty: str = "no listed release") -> str:
    """ "5.10.1 to 5.12.1", or the one release, or `empty`."""
    if not releases:
        return empty
    return releases[0] if len(releases) == 1 else f"{releases[0]} to {releases[-1]}"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------------------- reading


def load(directory: Path, *, whole: bool = True) -> Patch:
    """Read and validate one entry; any fault is a CatalogError naming the file and what is wrong. Not `whole`:
    its header and the module and path of each file, validated; the rest is neither checked nor kept."""
    path = directory / ENTRY
    try:
        data = json.loads(path.read_bytes(), object_pairs_hook=_object)
    except OSError as error:
        raise CatalogError(f"cannot read {path}: {error.strerror}.") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise CatalogError(f"{path} is not valid JSON: {error}.") from None
    except RecursionError:
        raise CatalogError(f"{path} is not valid JSON: it nests too deeply.") from None
    return from_data(data, directory, path, whole=whole)


def from_data(data: object, directory: Path, path: Path, *, whole: bool = True) -> Patch:
    """Validate an entry's content (as read from `path`) for the entry directory `directory`."""
    try:
        if not isinstance(data, dict):
            raise ValueError(f"it holds a JSON {type(data).__name__}, not an object")
        return _patch(data, directory, whole)
    except OSError as error:  # a fixed/ file that is there but cannot be read
        raise CatalogError(f"cannot read {error.filename}: {error.strerror}.") from None
    except (KeyError, TypeError, ValueError) as error:
        detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise CatalogError(f"{path} is not a valid patch entry: {detail}.") from None


def from_index(header: Mapping[str, Any], directory: Path) -> Patch:
    """An entry's header as a catalog's index holds it (hfpatch.index.header), unvalidated: the index was written
    from the entry read whole, and is taken only while patch.json is what it was written from. A catalog of
    hundreds of entries of distributions not installed costs a look-up each, not a validation each."""
    files = tuple(PatchFile(str(file["module"]), str(file["file"]), ()) for file in header["files"])
    span = header.get("releases_read")
    return Patch(
        id=str(header["id"]),
        title=str(header["title"]),
        upstream=str(header["upstream"]),
        url=str(header["url"]),
        distribution=str(header["distribution"]),
        fixed_in=header.get("fixed_in"),
        first_defined_in=header.get("first_defined_in"),
        files=files,
        directory=directory,
        advisories=tuple(header.get("advisories", ())),
        releases_read=None if span is None else (str(span[0]), str(span[1])),
        whole=False,
    )


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        twice = next(key for key in data if sum(name == key for name, _ in pairs) > 1)
        raise ValueError(f"the key {twice!r} appears twice in one object")
    return data


_HEADER = frozenset(
    {"schema", "about", "id", "title", "upstream", "url", "distribution", "fixed_in", "first_defined_in"}
    | {"probe", "transform", "advisories", "releases_read"}
)
_FILE = frozenset({"module", "file", "targets", "known_files", "shape", "fixed"})
# The keys each object may have: a misspelt one ("Probe") is refused, never read as absent.
_KEYS = {
    "the entry": _HEADER | {"files"},
    "the entry (schema 2)": (_HEADER - {"advisories", "releases_read"}) | _FILE,
    "a file": _FILE,
    "a target": frozenset({"name", "shape", "forms"}).union(*SHAPE_KEYS.values()),
    "a target (schema 3)": frozenset({"name", "fixed", "delete", "insert_if_absent", "after", "before", "lead"})
    | {"lead_was", "next_lead", "forms"},
    "a target (schema 2)": frozenset({"name", "fixed", "insert_if_absent", "forms"}),
    "a form": frozenset({"sha256", "verdict", "reason", "releases", "lines", "fixed"}),
    "a known file": frozenset({"sha256", "verdict", "releases", "patched_sha256", "note", "reason"}),
}


def _known_keys(data: Mapping[str, Any], what: str) -> None:
    unknown = sorted(set(data) - _KEYS[what])
    if unknown:
        allowed = ", ".join(sorted(_KEYS[what]))
        raise ValueError(f"{what.partition(' (')[0]} has an unknown key {unknown[0]!r} (it may have {allowed})")


def _patch(data: Mapping[str, Any], directory: Path, whole: bool = True) -> Patch:
    schema = data.get("schema")
    if type(schema) is not int or schema not in READS:
        newer = " (a newer hfpatch wrote it? upgrade hfpatch)" if type(schema) is int and schema > SCHEMA else ""
        reads = f"{', '.join(map(str, READS[:-1]))} or {READS[-1]}"
        raise ValueError(f"schema must be {SCHEMA} (this hfpatch reads schema {reads}), not {schema!r}{newer}")
    legacy = schema == 2
    _known_keys(data, "the entry (schema 2)" if legacy else "the entry")
    patch_id = _string(data, "id")
    if not ID.fullmatch(patch_id) or patch_id != directory.name:
        raise ValueError(
            f"id {patch_id!r} must be lowercase letters, digits, '.', '_', '-', and name its directory "
            f"({directory.name!r})"
        )
    if legacy:
        files: tuple[PatchFile, ...] = (_file(data, directory, schema=schema, whole=whole),)
    else:
        files = tuple(_file(item, directory, schema=schema, whole=whole) for item in _objects(data, "files"))
    if schema < 4 and any(file.shape is not FileShape.EDIT for file in files):
        raise ValueError(f"a file's shape needs schema 4, and the entry is schema {schema}")
    if schema < 5 and any(file.shape is FileShape.ADD for file in files):
        raise ValueError(f"a file the patch adds needs schema 5, and the entry is schema {schema}")
    if files and all(file.shape is FileShape.ADD for file in files):
        raise ValueError("every file of it is one the patch adds: one it edits or removes says which releases need it")
    if schema < 4 and any(_fitted(file) for file in files):
        raise ValueError(f"a form's own fixed text needs schema 4, and the entry is schema {schema}")
    if not files:
        raise ValueError("it names no files")
    if len({file.file for file in files}) != len(files):
        raise ValueError("a file is named twice")
    if len({file.module.split(".")[0] for file in files}) != 1:
        raise ValueError("its files lie in more than one top-level package")
    return Patch(
        id=patch_id,
        title=_string(data, "title"),
        upstream=_string(data, "upstream"),
        url=_string(data, "url"),
        distribution=_string(data, "distribution"),
        fixed_in=_version(data, "fixed_in") if legacy or "fixed_in" in data else None,
        first_defined_in=_version(data, "first_defined_in") if "first_defined_in" in data else None,
        files=files,
        directory=directory,
        probe=_optional_file(data, "probe", directory),
        transform=_optional_file(data, "transform", directory),
        about=_strings(data, "about"),
        advisories=_advisories(data),
        releases_read=_span(data, "releases_read"),
        whole=whole,
    )


def _file(data: Mapping[str, Any], directory: Path, *, schema: int, whole: bool = True) -> PatchFile:
    legacy = schema == 2
    if not legacy:
        _known_keys(data, "a file")
    module = _string(data, "module")
    if not DOTTED.fullmatch(module):
        raise ValueError(f"module {module!r} must be a dotted module name")
    file = _string(data, "file")
    if file.startswith("/") or ".." in file.split("/") or not file.endswith(".py"):
        raise ValueError(f"file {file!r} must be a .py path relative to site-packages")
    shape = _shape(data, file)
    if not whole:
        return PatchFile(module, file, (), shape=shape)
    if shape is FileShape.REMOVE:
        return _removed_file(data, module, file)
    if shape is FileShape.ADD:
        return _added_file(data, directory, module, file)
    if "fixed" in data:
        raise ValueError(f"{file} is not added: only a file the patch adds has a 'fixed' text of its own")
    targets = tuple(_target(item, directory, schema) for item in _objects(data, "targets"))
    if not targets:
        raise ValueError(f"it names no targets in {file}")
    if legacy:  # hfpatch 0.2 inserted a helper before the next target of its scope
        targets = tuple(
            target._replace(before=_next_of_scope(targets, index)) if target.shape is Shape.INSERT else target
            for index, target in enumerate(targets)
        )
    if len({target.name for target in targets}) != len(targets):
        raise ValueError(f"a target is named twice in {file}")
    known = tuple(_known_file(item) for item in _objects(data, "known_files"))
    return PatchFile(module, file, targets, known)


def _fitted(file: PatchFile) -> bool:
    """Whether a form of the file's targets has a fixed text of its own (schema 4)."""
    return any(form.fixed_text is not None for target in file.targets for form in target.forms)


def _shape(data: Mapping[str, Any], file: str) -> FileShape:
    value = data.get("shape", FileShape.EDIT.value)
    try:
        return FileShape(value)
    except ValueError:
        *others, last = (repr(shape.value) for shape in FileShape)
        raise ValueError(f"the shape of {file} must be {', '.join(others)} or {last}, not {value!r}") from None


def _removed_file(data: Mapping[str, Any], module: str, file: str) -> PatchFile:
    """A file whose code the patch takes out: no targets; every release's file known by digest, each needing the
    patch, which makes it empty."""
    if "targets" in data:
        raise ValueError(f"{file} is removed: it has no targets")
    known = tuple(_known_file(item) for item in _objects(data, "known_files"))
    if not known:
        raise ValueError(f"{file} is removed: its known_files name each released form of it")
    for item in known:
        if item.verdict is not Verdict.NEEDS_PATCH or item.patched_sha256 not in (None, EMPTY_SHA256):
            raise ValueError(f"{file} is removed: each known file needs the patch, which empties it")
    known = tuple(item._replace(patched_sha256=EMPTY_SHA256) for item in known)
    return PatchFile(module, file, (), known, FileShape.REMOVE)


def _added_file(data: Mapping[str, Any], directory: Path, module: str, file: str) -> PatchFile:
    """A file the patch creates: its whole text, kept byte for byte; no targets, no known files (a release ships it
    as the fix has it, or lacks it)."""
    for key in ("targets", "known_files"):
        if key in data:
            raise ValueError(f"{file} is added: it has no {key}")
    try:
        path = _required_file(data, "fixed", directory)
    except KeyError:
        raise ValueError(f"{file} is added: 'fixed' names the file's whole text in the entry") from None
    added = path.read_bytes()
    try:
        added.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{file} is added: its text {_string(data, 'fixed')!r} is not UTF-8") from None
    if not added:
        raise ValueError(f"{file} is added: its text {_string(data, 'fixed')!r} is empty")
    return PatchFile(module, file, (), shape=FileShape.ADD, added=added, added_file=_string(data, "fixed"))


def _next_of_scope(targets: Sequence[Target], index: int) -> str | None:
    scope = targets[index].name.rpartition(".")[0]
    later = (target.name for target in targets[index + 1 :] if target.name.rpartition(".")[0] == scope)
    return next(later, None)


def _target(data: Mapping[str, Any], directory: Path, schema: int) -> Target:
    legacy = schema == 2
    _known_keys(data, "a target (schema 2)" if legacy else "a target (schema 3)" if schema < 5 else "a target")
    name = _string(data, "name")
    if legacy and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?", name):
        raise ValueError(f"target {name!r} must be a function name or Class.method")
    if not legacy and ("\n" in name or name != name.strip()):
        raise ValueError(f"target {name!r} must be one line, without surrounding spaces")
    shape = _target_shape(data, name) if schema >= 5 else _flags_shape(data, name)
    fixed_text = fixed_file = None
    if shape is not Shape.DELETE:
        fixed_text = _read_fixed(_required_file(data, "fixed", directory))
        fixed_file = _string(data, "fixed")
    forms = tuple(_form(item, directory) for item in _objects(data, "forms"))
    _check_fitted(name, forms, fixed_text)
    target = Target(
        name=name,
        fixed_text=fixed_text,
        forms=forms,
        shape=shape,
        after=_optional_string(data, "after"),
        before=_optional_string(data, "before"),
        lead=_lead(data, "lead"),
        next_lead=_lead(data, "next_lead"),
        lead_was=tuple(_digest_value(value, "lead_was") for value in _strings(data, "lead_was")),
        fixed_file=fixed_file,
        legacy=legacy,
    )
    return target if legacy else shaped(target)


def _target_shape(data: Mapping[str, Any], name: str) -> Shape:
    """Schema 5: the shape, and only the keys it has."""
    value = _string(data, "shape")
    try:
        shape = Shape(value)
    except ValueError:
        shapes = ", ".join(repr(shape.value) for shape in Shape)
        raise ValueError(f"the shape of target {name!r} must be one of {shapes}, not {value!r}") from None
    other = sorted(set(data) - {"name", "shape", "forms"} - SHAPE_KEYS[shape])
    if other:
        raise ValueError(f"target {name!r} is a {value}: it has no {other[0]!r}")
    return shape


def _flags_shape(data: Mapping[str, Any], name: str) -> Shape:
    """Schemas 2 to 4 said a target's shape by two flags."""
    delete = _flag(data, "delete")
    if delete and "fixed" in data:
        raise ValueError(f"target {name!r} is deleted and has a fixed text: one or the other")
    return Shape.DELETE if delete else Shape.INSERT if _flag(data, "insert_if_absent") else Shape.REPLACE


def shaped(target: Target) -> Target:
    """The target with only what its shape uses: a replaced statement has no anchor, and its lead only where it puts
    that lead in place of another; a deleted one has neither text nor lead (older schemas wrote them all)."""
    if target.shape is Shape.INSERT:
        return target
    if target.shape is Shape.DELETE:
        return target._replace(after=None, before=None, lead=None, lead_was=(), next_lead=None)
    lead = target.lead if target.lead_was else None
    return target._replace(after=None, before=None, lead=lead, next_lead=None)


def _lead(data: Mapping[str, Any], key: str) -> str | None:
    """Comment and blank lines, each ending in a newline ("" for none)."""
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, str) or (value and not value.endswith("\n")):
        raise ValueError(f"{key} must be lines, each ending in a newline")
    if any(line.strip() and not line.strip().startswith("#") for line in value.split("\n")):
        raise ValueError(f"{key} must hold only comments and blank lines")
    return _text(value, key)


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false")
    return value


def _form(data: Mapping[str, Any], directory: Path) -> Form:
    _known_keys(data, "a form")
    fixed_text = fixed_file = None
    if "fixed" in data:
        fixed_text = _read_fixed(_required_file(data, "fixed", directory))
        fixed_file = _string(data, "fixed")
    return Form(
        sha256=_digest(data, "sha256"),
        verdict=_verdict(data),
        releases=_versions(data, "releases"),
        reason=_optional_string(data, "reason") or "",
        lines=_strings(data, "lines"),
        fixed_text=fixed_text,
        fixed_file=fixed_file,
    )


def _read_fixed(path: Path) -> str:
    return path.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip("\n")


def _check_fitted(name: str, forms: Sequence[Form], fixed_text: str | None) -> None:
    """A form's own fixed text: only where the patch rewrites that form, and never a text another form has."""
    for form in forms:
        if form.fixed_text is None:
            continue
        if form.verdict is not Verdict.NEEDS_PATCH:
            raise ValueError(f"a form of {name} has a fixed text of its own, but its verdict is {form.verdict.value}")
        if fixed_text is None:
            raise ValueError(f"a form of {name} has a fixed text of its own, but the fix deletes {name}")
        digest = text_sha256(form.fixed_text)
        if any(other.sha256 == digest for other in forms):
            raise ValueError(f"the fixed text of a form of {name} is itself one of its forms ({digest[:12]})")


def _known_file(data: Mapping[str, Any]) -> KnownFile:
    _known_keys(data, "a known file")
    _optional_string(data, "note")  # for the reader only
    label = _string(data, "verdict")
    verdict, unknown = (
        (None, True) if label == UNKNOWN else (None if label == ABSENT else _verdict(data, ABSENT), False)
    )
    if unknown and "patched_sha256" in data:
        raise ValueError("a known file of code the entry does not know has no patched_sha256")
    if "reason" in data and verdict is not Verdict.NOT_APPLICABLE:
        raise ValueError("only a known file that is not applicable has a reason")
    return KnownFile(
        sha256=_digest(data, "sha256"),
        releases=_versions(data, "releases"),
        verdict=verdict,
        patched_sha256=_digest(data, "patched_sha256") if "patched_sha256" in data else None,
        code_unknown=unknown,
        reason=_optional_string(data, "reason") or "",
    )


def _verdict(data: Mapping[str, Any], *also: str) -> Verdict:
    value = _string(data, "verdict")
    try:
        return Verdict(value)
    except ValueError:
        known = ", ".join(repr(name) for name in (*(verdict.value for verdict in Verdict), *also))
        raise ValueError(f"verdict {value!r} is none of {known}") from None


def _advisories(data: Mapping[str, Any]) -> tuple[str, ...]:
    found = _strings(data, "advisories")
    wrong = next((value for value in found if not ADVISORY.fullmatch(value)), None)
    if wrong is not None:
        raise ValueError(f"advisories lists {wrong!r}, which is no CVE, GHSA or PYSEC id (CVE-2026-1839, ...)")
    return found


def _span(data: Mapping[str, Any], key: str) -> tuple[str, str] | None:
    if key not in data:
        return None
    span = _versions(data, key)
    if len(span) != 2:
        raise ValueError(f"{key} must be two releases, the oldest and the newest read")
    return span[0], span[1]


def _objects(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ValueError(f"{key} must be a list of objects")
    return items


def _string(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return _text(value, key)


def _optional_string(data: Mapping[str, Any], key: str) -> str | None:
    return _string(data, key) if key in data else None


def _digest(data: Mapping[str, Any], key: str) -> str:
    return _digest_value(_string(data, key), key)


def _digest_value(value: str, key: str) -> str:
    if not _DIGEST.fullmatch(value):
        raise ValueError(f"{key} {value!r} is not a sha256 in lowercase hex")
    return value


def _version(data: Mapping[str, Any], key: str) -> str:
    value = _string(data, key)
    if not versions.is_version(value):
        raise ValueError(f"{key} {value!r} is not a version (PEP 440), such as 5.13.0")
    return value


def _versions(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = _strings(data, key)
    wrong = next((value for value in values if not versions.is_version(value)), None)
    if wrong is not None:
        raise ValueError(f"{key} lists {wrong!r}, which is not a version (PEP 440)")
    return values


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = data.get(key, [])
    # check loads every entry: the strings of a list are checked at once (join refuses anything but strings).
    try:
        joined = "".join(values) if isinstance(values, list) else None
    except TypeError:
        joined = None
    if joined is None:
        raise ValueError(f"{key} must be a list of strings")
    _text(joined, key)
    return tuple(values)


def _text(value: str, key: str) -> str:
    """JSON may escape half of a surrogate pair (\\ud800), which no file, terminal or JSON output can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{key} holds an unpaired surrogate escape (\\ud800 to \\udfff), which is not text") from None
    return value


def _required_file(data: Mapping[str, Any], key: str, directory: Path) -> Path:
    path = _optional_file(data, key, directory)
    if path is None:
        raise KeyError(key)
    return path


@functools.lru_cache(maxsize=64)
def _resolved(directory: Path) -> Path:
    """An entry's directory, resolved once for all the files it names."""
    return directory.resolve()


def _optional_file(data: Mapping[str, Any], key: str, directory: Path) -> Path | None:
    if key not in data:
        return None
    relative = _string(data, key)
    path = (directory / relative).resolve()
    if not path.is_relative_to(_resolved(directory)) or not path.is_file():
        raise ValueError(f"{key} {relative!r} is not a file inside {directory}")
    return path


# ------------------------------------------------------------------------------------------------- writing


def with_fixed_files(patch: Patch) -> Patch:
    """The patch with a place in fixed/ for each target's fixed text: fixed/<name>.py for a patch of one file,
    fixed/<module>/<name>.py for several, and <name>-<oldest release>.py for a form's own; names made safe for a
    file system and unique."""
    files = []
    for file in patch.files:
        if file.shape is FileShape.ADD:  # the whole file, at its path inside the package (no module name holds "/")
            files.append(file._replace(added_file=f"fixed/{file.file}"))
            continue
        where = "fixed" if len(patch.files) == 1 else f"fixed/{file.module}"
        taken: set[str] = set()
        targets = []
        for target in file.targets:
            if target.fixed_text is None:
                targets.append(target._replace(fixed_file=None))
                continue
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", target.name).strip(".") or "statement"
            fixed_file = f"{where}/{_unique(stem, taken)}.py"
            forms = tuple(
                form
                if form.fixed_text is None
                else form._replace(fixed_file=f"{where}/{_unique(f'{stem}-{_form_label(form)}', taken)}.py")
                for form in target.forms
            )
            targets.append(target._replace(fixed_file=fixed_file, forms=forms))
        files.append(file._replace(targets=tuple(targets)))
    return patch._replace(files=tuple(files))


def _unique(stem: str, taken: set[str]) -> str:
    """`stem`, or `stem-2`, `stem-3`...: a name no other fixed text of the file has (case folded)."""
    name, number = stem, 1
    while name.lower() in taken:
        number += 1
        name = f"{stem}-{number}"
    taken.add(name.lower())
    return name


def _form_label(form: Form) -> str:
    """A form's own fixed text is named after the oldest release of the form (or its digest, where none)."""
    return form.releases[0] if form.releases else form.sha256[:12]


def render(patch: Patch) -> str:
    """The entry's patch.json in schema 5, laid out for a reviewer: one key a line, digests and releases six a line.
    Every target with a fixed text must have its place (with_fixed_files). An entry of schema 2 (digested as hfpatch
    0.2 digested, such as one `python -m hfpatch.migrate` converts) is written in schema 2."""
    assert patch.whole, f"{patch.id} was read as its header only"
    legacy = all(target.legacy for file in patch.files for target in file.targets) and all(
        file.shape is FileShape.EDIT for file in patch.files
    )
    entry: dict[str, object] = {"schema": 2 if legacy else SCHEMA}
    if patch.about:
        entry["about"] = list(patch.about)
    for key in ("id", "title", "upstream", "url", "distribution"):
        entry[key] = getattr(patch, key)
    if legacy:
        (file,) = patch.files
        entry.update(module=file.module, file=file.file)
    for key in ("fixed_in", "first_defined_in"):
        if getattr(patch, key) is not None:
            entry[key] = getattr(patch, key)
    if patch.releases_read is not None:
        entry["releases_read"] = list(patch.releases_read)
    if patch.advisories:
        entry["advisories"] = list(patch.advisories)
    for key in ("probe", "transform"):
        path = getattr(patch, key)
        if path is not None:
            entry[key] = path.resolve().relative_to(patch.directory.resolve()).as_posix()
    if legacy:
        rendered = _render_file(patch, patch.files[0])
        entry.update(targets=rendered["targets"], known_files=rendered["known_files"])
    else:
        entry["files"] = [_render_file(patch, file) for file in patch.files]
    return _json(entry, "") + "\n"


def _render_file(patch: Patch, file: PatchFile) -> dict[str, object]:
    fixed_file = next((known.sha256 for known in file.known_files if patch.fixed_in in known.releases), None)
    shape: dict[str, object] = {} if file.shape is FileShape.EDIT else {"shape": file.shape.value}
    if file.shape is FileShape.ADD:
        assert file.added_file is not None, f"{file.file} has no place in fixed/"
        return {"module": file.module, "file": file.file, **shape, "fixed": file.added_file}
    targets = {} if file.shape is FileShape.REMOVE else {"targets": [_render_target(target) for target in file.targets]}
    return {
        "module": file.module,
        "file": file.file,
        **shape,
        **targets,
        "known_files": [
            {
                "sha256": known.sha256,
                "verdict": known.label,
                "releases": list(known.releases),
                **({"patched_sha256": known.patched_sha256} if known.patched_sha256 else {}),
                **({"reason": known.reason} if known.reason else {}),
                **(
                    {"note": f"patched, this is the {patch.fixed_in} file byte for byte"}
                    if known.patched_sha256 and known.patched_sha256 == fixed_file
                    else {}
                ),
            }
            for known in file.known_files
        ],
    }


def _render_target(target: Target) -> dict[str, object]:
    rendered: dict[str, object] = {"name": target.name}
    if target.legacy:  # schema 2: a fixed text always, and no place but before the next target
        assert target.fixed_file is not None
        rendered["fixed"] = target.fixed_file
        if target.shape is Shape.INSERT:
            rendered["insert_if_absent"] = True
        rendered["forms"] = _render_forms(target)
        return rendered
    target = shaped(target)
    rendered["shape"] = target.shape.value
    if target.fixed_text is not None:
        assert target.fixed_file is not None, f"{target.name} has no place in fixed/"
        rendered["fixed"] = target.fixed_file
    for key in ("after", "before", "lead", "next_lead"):
        if getattr(target, key) is not None:
            rendered[key] = getattr(target, key)
    if target.lead_was:
        rendered["lead_was"] = list(target.lead_was)
    rendered["forms"] = _render_forms(target)
    return rendered


def _render_forms(target: Target) -> list[dict[str, object]]:
    return [
        {
            "sha256": form.sha256,
            "verdict": form.verdict.value,
            **({"reason": form.reason} if form.reason else {}),
            "releases": list(form.releases),
            "lines": list(form.lines),
            **({"fixed": form.fixed_file} if form.fixed_text is not None else {}),
        }
        for form in target.forms
    ]


def _json(value: object, indent: str, per_line: int = 1) -> str:
    """JSON with objects one key a line and lists of strings `per_line` a line (about: one a line; digests and
    releases: six)."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(key)}: {_json(item, inner, 1 if key == 'about' else 6)}" for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        if any(isinstance(item, (dict, list)) for item in value):
            per_line = 1
        rows = [value[start : start + per_line] for start in range(0, len(value), per_line)]
        lines = [inner + ", ".join(_json(item, inner) for item in row) for row in rows]
        return "[\n" + ",\n".join(lines) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------- the directory


def write(
    catalog_dir: Path, patch: Patch, *, force: bool, previous: Patch | None = None, probe: str | None = None
) -> Path:
    """Write the entry beside its place, read it back, then rename it in: a reader sees no entry or a whole one.
    An entry replaced keeps every file `new` did not write (a probe, notes); those it wrote are written anew. The
    text of a probe, given, is written as the entry's probe."""
    import shutil
    import tempfile

    from hfpatch import files

    final = catalog_dir / patch.id
    files.make_directory(catalog_dir)
    try:
        scratch = Path(tempfile.mkdtemp(prefix=f".{patch.id}.new-", dir=catalog_dir))
    except OSError as error:
        raise AuthoringError(f"cannot write into {catalog_dir}: {error.strerror or error}.") from None
    try:
        staged = scratch / patch.id
        if force and final.is_dir():
            written = {ENTRY} | (set() if previous is None else _fixed_files(previous))
            shutil.copytree(final, staged, symlinks=True, ignore=_leaving(final, written))
            _prune_empty(staged)
        else:
            staged.mkdir()
        for relative, text in _fixed_texts(patch):
            path = staged / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n", encoding="utf-8")
        for relative, data in _added_texts(patch):
            path = staged / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)  # byte for byte: RECORD describes the file apply creates from it
        if probe is not None:
            assert patch.probe is not None
            (staged / patch.probe.name).write_text(probe, encoding="utf-8")
        (staged / ENTRY).write_text(render(patch), encoding="utf-8")
        loaded = load(staged)
        if _relative(loaded, staged) != _relative(patch, final):
            raise AuthoringError(f"the entry read back from {staged} differs from the one written (a bug).")
        if final.exists() or final.is_symlink():
            if not force:
                raise UsageError(f"{final} exists; give --force to replace it.")
            final.rename(scratch / "replaced")
        staged.rename(final)
        # What root (sudo) writes into a user's repository belongs to that user, as everything hfpatch creates.
        for path in sorted([final, *final.rglob("*")], key=lambda path: len(path.parts)):
            files.take_owner_of_directory(path)
    except OSError as error:
        raise AuthoringError(f"cannot write {final}: {error.strerror or error}.") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def _fixed_texts(patch: Patch) -> list[tuple[str, str]]:
    """Each fixed text of the entry with its place in it: the targets', then their forms' own."""
    placed: list[tuple[str, str]] = []
    for file in patch.files:
        for target in file.targets:
            owners: list[Target | Form] = [target, *target.forms]
            for owner in owners:
                if owner.fixed_text is not None:
                    assert owner.fixed_file is not None, f"a fixed text of {target.name} has no place in fixed/"
                    placed.append((owner.fixed_file, owner.fixed_text))
    return placed


def _added_texts(patch: Patch) -> list[tuple[str, bytes]]:
    """Each file the patch adds, with its place in the entry."""
    placed = []
    for file in patch.files:
        if file.shape is FileShape.ADD:
            assert file.added is not None and file.added_file is not None, f"{file.file} has no place in fixed/"
            placed.append((file.added_file, file.added))
    return placed


def _fixed_files(patch: Patch) -> set[str]:
    return {relative for relative, _ in _fixed_texts(patch)} | {relative for relative, _ in _added_texts(patch)}


def _relative(patch: Patch, directory: Path) -> Patch:
    """The entry as it reads wherever it lies: its probe and transform by their names inside it."""

    def inside(path: Path | None) -> Path | None:
        return None if path is None else path.resolve().relative_to(directory.resolve())

    return patch._replace(directory=Path(patch.id), probe=inside(patch.probe), transform=inside(patch.transform))


def _leaving(top: Path, written: set[str]) -> Callable[[str, list[str]], set[str]]:
    """copytree's ignore: the files `new` wrote before (it writes them anew), nothing else."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        relative = Path(directory).relative_to(top)
        return {name for name in names if (relative / name).as_posix().removeprefix("./") in written}

    return ignore


def _prune_empty(directory: Path) -> None:
    for path in sorted(directory.rglob("*"), key=lambda path: len(path.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
