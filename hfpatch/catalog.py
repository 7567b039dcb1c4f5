"""What a patch is, and where the catalogs of them are: plain data, read from `patch.json` files.

A catalog is a directory of entries, one directory each:

    <catalog>/<id>/patch.json          what the patch targets, where it comes from, the known forms by digest
    <catalog>/<id>/fixed/<name>.py     the exact fixed text of each definition it replaces
    <catalog>/<id>/probe.py            optional: what `hfpatch verify` runs in the target interpreter
    <catalog>/<id>/transform.py        optional: a libcst transform where replacing whole definitions cannot do

The built-in catalog is `hfpatch/patches` in an installed wheel and `patches/` beside `hfpatch/` in a checkout.
Teams add their own with `--catalog DIR` or HFPATCH_CATALOG.

The entries are JSON, not TOML: `check` reads every entry of every catalog it is given, and the standard library
parses JSON in C, an order of magnitude faster than tomllib parses the same data, without importing tomllib's ~5 ms
(benchmarks/bench.py). `hfpatch new` writes them, laid out for review (authoring.render_entry).
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch.errors import CatalogError

SCHEMA = 2
ENTRY = "patch.json"
# What hfpatch 0.1 wrote: TOML, schema 1 (python -m hfpatch.migrate converts it).
OLD_ENTRY = "patch.toml"
CATALOG_VARIABLE = "HFPATCH_CATALOG"
# What an entry's id and a target's name may be; `hfpatch new` checks its input against the same patterns.
ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_DIGEST = re.compile(r"[0-9a-f]{64}")


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


# --------------------------------------------------------------------------------------------------- discovery


def builtin_catalog() -> Path:
    """hfpatch/patches in an installed wheel; patches/ beside the hfpatch package in a checkout."""
    package = Path(__file__).resolve().parent
    shipped = package / "patches"
    if os.path.isdir(shipped):  # noqa: PTH112 - Path.is_dir raises where it may not look; isdir says False
        return shipped
    return package.parent / "patches"


def catalog_dirs(extra: Sequence[str] = ()) -> list[Path]:
    """The built-in catalog, then those named by HFPATCH_CATALOG, then those given with --catalog."""
    from_environment = [part for part in os.environ.get(CATALOG_VARIABLE, "").split(os.pathsep) if part]
    named = [builtin_catalog(), *(Path(part) for part in (*from_environment, *extra))]
    # A directory named twice (the variable in the Dockerfile, and --catalog on the command line) is one catalog.
    seen: set[str] = set()
    unique = []
    for directory in named:
        if os.path.realpath(directory) not in seen:
            seen.add(os.path.realpath(directory))
            unique.append(directory)
    return unique


def entry_dirs(catalogs: Iterable[Path]) -> dict[str, Path]:
    """Every entry's directory by id. A team's entry may not take an id the built-in catalog or another uses."""
    found: dict[str, Path] = {}
    for index, catalog in enumerate(catalogs):
        try:
            what = None if stat.S_ISDIR(catalog.stat().st_mode) else "is not a directory"
        except PermissionError:
            raise CatalogError(f"cannot read the catalog {catalog}: permission denied.") from None
        except OSError:
            what = "does not exist"
        if what is not None:
            raise CatalogError(
                f"the catalog {catalog} {what}; give --catalog (or {CATALOG_VARIABLE}) a directory of patch entries."
            )
        if index > 0 and ((catalog / ENTRY).is_file() or (catalog / OLD_ENTRY).is_file()):
            raise CatalogError(
                f"{catalog} is a patch entry, not a catalog; give --catalog (or {CATALOG_VARIABLE}) the directory "
                f"that holds it, {catalog.parent}."
            )
        try:
            entries = sorted(catalog.iterdir())
        except OSError as error:
            raise CatalogError(f"cannot list the catalog {catalog}: {error.strerror}.") from None
        old = unconverted(entries)
        if old:
            raise CatalogError(
                f"{old[0] / OLD_ENTRY} is an entry in the format of hfpatch 0.1 (TOML); this hfpatch reads {ENTRY}: "
                f"`python -m hfpatch.migrate {catalog}` converts the catalog in place (keeping fixed/ and probe.py)."
            )
        listed = [entry for entry in entries if (entry / ENTRY).is_file()]
        if index > 0 and not listed:
            raise CatalogError(f"the catalog {catalog} holds no patch (no */{ENTRY}); is it the right directory?")
        for entry in listed:
            if entry.name in found:
                raise CatalogError(
                    f"two patches are named {entry.name}: {found[entry.name]} and {entry}; rename one of them."
                )
            found[entry.name] = entry
    return found


def unconverted(entries: Iterable[Path]) -> list[Path]:
    """The entries hfpatch 0.1 wrote (patch.toml) that have no patch.json yet."""
    return [entry for entry in entries if (entry / OLD_ENTRY).is_file() and not (entry / ENTRY).is_file()]


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
        fixed_in=_string(data, "fixed_in"),
        first_defined_in=_optional_string(data, "first_defined_in"),
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
        releases=_strings(data, "releases"),
        reason=_optional_string(data, "reason") or "",
        lines=_strings(data, "lines"),
    )


def _known_file(data: Mapping[str, Any]) -> KnownFile:
    _known_keys(data, "a known file")
    _optional_string(data, "note")  # for the reader only
    return KnownFile(
        sha256=_digest(data, "sha256"),
        releases=_strings(data, "releases"),
        verdict=None if _string(data, "verdict") == "absent" else _verdict(data, "absent"),
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
