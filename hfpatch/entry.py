"""The catalog entry format, `patch.json`: what a patch is, read, validated and written in this one module.

An entry is a directory:

    <catalog>/<id>/patch.json          what the patch targets, where it comes from, the known forms by digest
    <catalog>/<id>/fixed/<name>.py     the exact fixed text of each definition it replaces
    <catalog>/<id>/probe.py            optional: what `hfpatch verify` runs in the application's interpreter
    <catalog>/<id>/transform.py        optional: a libcst transform where replacing whole definitions cannot do

The entries are JSON, not TOML: `check` reads every entry of every catalog it is given, and the standard library
parses JSON in C, an order of magnitude faster than tomllib parses the same data, without importing tomllib's ~5 ms
(benchmarks/bench.py). `render` writes them laid out for review; `load` refuses anything it would not write.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch import versions
from hfpatch.errors import CatalogError

SCHEMA = 2
ENTRY = "patch.json"
# What hfpatch 0.1 wrote: TOML, schema 1 (python -m hfpatch.migrate converts it).
OLD_ENTRY = "patch.toml"
# What an entry's id and a target's name may be; `hfpatch new` checks its input against the same patterns.
ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_DIGEST = re.compile(r"[0-9a-f]{64}")
# A known file's verdict where the release has none of the targets (no Verdict: no form of them to judge).
ABSENT = "absent"


class Verdict(enum.Enum):
    """What a known form of a definition means for the patch."""

    NEEDS_PATCH = "needs-patch"
    FIXED = "fixed"
    NOT_APPLICABLE = "not-applicable"


class Form(NamedTuple):
    """One text a definition has had in real releases, known by the sha256 of its canonical text."""

    sha256: str
    verdict: Verdict
    releases: tuple[str, ...]
    reason: str = ""
    # Short digests of each line of the canonical text: enough to point at the line where unknown code differs.
    lines: tuple[str, ...] = ()

    @property
    def release_range(self) -> str:
        return release_span(self.releases)


class Target(NamedTuple):
    """A definition the patch replaces: a module-level function or a method (`Class.method`)."""

    name: str
    fixed_text: str
    forms: tuple[Form, ...]
    # Absent from a release that needs the patch (a helper the fix added): insert it before the next target.
    insert_if_absent: bool = False

    @property
    def fixed_sha256(self) -> str:
        return text_sha256(self.fixed_text)

    def form_of(self, digest: str) -> Form | None:
        for form in self.forms:
            if form.sha256 == digest:
                return form
        if digest == self.fixed_sha256:
            return Form(digest, Verdict.FIXED, (), "the fixed text")
        return None


class KnownFile(NamedTuple):
    """A whole released file: recognised by digest without parsing it, and what the patch must make of it."""

    sha256: str
    releases: tuple[str, ...]
    verdict: Verdict | None  # None: the targets are absent
    patched_sha256: str | None = None


class Patch(NamedTuple):
    id: str
    title: str
    upstream: str
    url: str
    distribution: str
    module: str
    # The patched file, relative to the directory that holds the top-level package (site-packages), POSIX style.
    file: str
    fixed_in: str
    # The first release that defines the targets; absent targets in older releases mean the bug is not there yet.
    first_defined_in: str | None
    targets: tuple[Target, ...]
    known_files: tuple[KnownFile, ...]
    directory: Path
    probe: Path | None = None
    transform: Path | None = None
    # Free text for the reader of the entry: where it came from, what it proves (JSON has no comments).
    about: tuple[str, ...] = ()

    @property
    def package(self) -> str:
        return self.module.split(".")[0]

    @property
    def target_names(self) -> str:
        return ", ".join(target.name for target in self.targets)

    def known_file(self, digest: str) -> KnownFile | None:
        return next((known for known in self.known_files if known.sha256 == digest), None)


def release_span(releases: Sequence[str], empty: str = "no listed release") -> str:
    """ "5.10.1 to 5.12.1", or the one release, or `empty`."""
    if not releases:
        return empty
    return releases[0] if len(releases) == 1 else f"{releases[0]} to {releases[-1]}"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(directory: Path) -> Patch:
    """Read and validate one entry; any fault is a CatalogError naming the file and what is wrong."""
    path = directory / ENTRY
    try:
        data = json.loads(path.read_bytes(), object_pairs_hook=_object)
    except OSError as error:
        raise CatalogError(f"cannot read {path}: {error.strerror}.") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise CatalogError(f"{path} is not valid JSON: {error}.") from None
    except RecursionError:
        raise CatalogError(f"{path} is not valid JSON: it nests too deeply.") from None
    return from_data(data, directory, path)


def from_data(data: object, directory: Path, path: Path) -> Patch:
    """Validate an entry's content (as read from `path`) for the entry directory `directory`."""
    try:
        if not isinstance(data, dict):
            raise ValueError(f"it holds a JSON {type(data).__name__}, not an object")
        return _patch(data, directory)
    except OSError as error:  # a fixed/ file that is there but cannot be read
        raise CatalogError(f"cannot read {error.filename}: {error.strerror}.") from None
    except (KeyError, TypeError, ValueError) as error:
        detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise CatalogError(f"{path} is not a valid patch entry: {detail}.") from None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        twice = next(key for key in data if sum(name == key for name, _ in pairs) > 1)
        raise ValueError(f"the key {twice!r} appears twice in one object")
    return data


# The keys each object may have: a misspelt one ("Probe") is refused, never read as absent.
_KEYS = {
    "the entry": frozenset(
        {"schema", "about", "id", "title", "upstream", "url", "distribution", "module", "file", "fixed_in"}
        | {"first_defined_in", "probe", "transform", "targets", "known_files"}
    ),
    "a target": frozenset({"name", "fixed", "insert_if_absent", "forms"}),
    "a form": frozenset({"sha256", "verdict", "reason", "releases", "lines"}),
    "a known file": frozenset({"sha256", "verdict", "releases", "patched_sha256", "note"}),
}


def _known_keys(data: Mapping[str, Any], what: str) -> None:
    unknown = sorted(set(data) - _KEYS[what])
    if unknown:
        raise ValueError(f"{what} has an unknown key {unknown[0]!r} (it may have {', '.join(sorted(_KEYS[what]))})")


def _patch(data: Mapping[str, Any], directory: Path) -> Patch:
    schema = data.get("schema")
    if type(schema) is not int or schema != SCHEMA:
        newer = " (a newer hfpatch wrote it? upgrade hfpatch)" if type(schema) is int and schema > SCHEMA else ""
        raise ValueError(f"schema must be {SCHEMA} (this hfpatch reads schema {SCHEMA}), not {schema!r}{newer}")
    _known_keys(data, "the entry")
    patch_id = _string(data, "id")
    if not ID.fullmatch(patch_id) or patch_id != directory.name:
        raise ValueError(
            f"id {patch_id!r} must be lowercase letters, digits, '.', '_', '-', and name its directory "
            f"({directory.name!r})"
        )
    file = _string(data, "file")
    if file.startswith("/") or ".." in file.split("/") or not file.endswith(".py"):
        raise ValueError(f"file {file!r} must be a .py path relative to site-packages")
    targets = tuple(_target(item, directory) for item in _objects(data, "targets"))
    if not targets:
        raise ValueError("it names no targets")
    if len({target.name for target in targets}) != len(targets):
        raise ValueError("a target is named twice")
    return Patch(
        id=patch_id,
        title=_string(data, "title"),
        upstream=_string(data, "upstream"),
        url=_string(data, "url"),
        distribution=_string(data, "distribution"),
        module=_string(data, "module"),
        file=file,
        fixed_in=_version(data, "fixed_in"),
        first_defined_in=_version(data, "first_defined_in") if "first_defined_in" in data else None,
        targets=targets,
        known_files=tuple(_known_file(item) for item in _objects(data, "known_files")),
        directory=directory,
        probe=_optional_file(data, "probe", directory),
        transform=_optional_file(data, "transform", directory),
        about=_strings(data, "about"),
    )


def _target(data: Mapping[str, Any], directory: Path) -> Target:
    _known_keys(data, "a target")
    name = _string(data, "name")
    if not QUALNAME.fullmatch(name):
        raise ValueError(f"target {name!r} must be a function name or Class.method")
    fixed_path = _required_file(data, "fixed", directory)
    fixed_text = fixed_path.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip("\n")
    forms = tuple(_form(item) for item in _objects(data, "forms"))
    insert_if_absent = data.get("insert_if_absent", False)
    if not isinstance(insert_if_absent, bool):
        raise ValueError("insert_if_absent must be true or false")
    return Target(name, fixed_text, forms, insert_if_absent=insert_if_absent)


def _form(data: Mapping[str, Any]) -> Form:
    _known_keys(data, "a form")
    return Form(
        sha256=_digest(data, "sha256"),
        verdict=_verdict(data),
        releases=_versions(data, "releases"),
        reason=_optional_string(data, "reason") or "",
        lines=_strings(data, "lines"),
    )


def _known_file(data: Mapping[str, Any]) -> KnownFile:
    _known_keys(data, "a known file")
    _optional_string(data, "note")  # for the reader only
    return KnownFile(
        sha256=_digest(data, "sha256"),
        releases=_versions(data, "releases"),
        verdict=None if _string(data, "verdict") == ABSENT else _verdict(data, ABSENT),
        patched_sha256=_digest(data, "patched_sha256") if "patched_sha256" in data else None,
    )


def _verdict(data: Mapping[str, Any], *also: str) -> Verdict:
    value = _string(data, "verdict")
    try:
        return Verdict(value)
    except ValueError:
        known = ", ".join(repr(name) for name in (*(verdict.value for verdict in Verdict), *also))
        raise ValueError(f"verdict {value!r} is none of {known}") from None


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
    value = _string(data, key)
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
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise ValueError(f"{key} must be a list of strings")
    return tuple(_text(value, key) for value in values)


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


def _optional_file(data: Mapping[str, Any], key: str, directory: Path) -> Path | None:
    if key not in data:
        return None
    relative = _string(data, key)
    path = (directory / relative).resolve()
    if not path.is_relative_to(directory.resolve()) or not path.is_file():
        raise ValueError(f"{key} {relative!r} is not a file inside {directory}")
    return path


# ------------------------------------------------------------------------------------------------- writing


def fixed_path(target: Target) -> str:
    return f"fixed/{target.name}.py"


def render(patch: Patch) -> str:
    """The entry's patch.json, laid out for a reviewer: one key a line, digests and releases six a line."""
    fixed_file = next((known.sha256 for known in patch.known_files if patch.fixed_in in known.releases), None)
    entry: dict[str, object] = {"schema": SCHEMA}
    if patch.about:
        entry["about"] = list(patch.about)
    for key in ("id", "title", "upstream", "url", "distribution", "module", "file", "fixed_in", "first_defined_in"):
        if getattr(patch, key) is not None:
            entry[key] = getattr(patch, key)
    for key in ("probe", "transform"):
        path = getattr(patch, key)
        if path is not None:
            entry[key] = path.relative_to(patch.directory.resolve()).as_posix()
    entry["targets"] = [
        {
            "name": target.name,
            "fixed": fixed_path(target),
            **({"insert_if_absent": True} if target.insert_if_absent else {}),
            "forms": [
                {
                    "sha256": form.sha256,
                    "verdict": form.verdict.value,
                    **({"reason": form.reason} if form.reason else {}),
                    "releases": list(form.releases),
                    "lines": list(form.lines),
                }
                for form in target.forms
            ],
        }
        for target in patch.targets
    ]
    entry["known_files"] = [
        {
            "sha256": known.sha256,
            "verdict": known.verdict.value if known.verdict else ABSENT,
            "releases": list(known.releases),
            **({"patched_sha256": known.patched_sha256} if known.patched_sha256 else {}),
            **(
                {"note": f"patched, this is the {patch.fixed_in} file byte for byte"}
                if known.patched_sha256 and known.patched_sha256 == fixed_file
                else {}
            ),
        }
        for known in patch.known_files
    ]
    return _json(entry, "") + "\n"


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
