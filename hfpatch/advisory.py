"""The advisory register: what the catalog knows of each security advisory, read and validated in this one module,
and the pure function that says where an advisory stands in one environment.

A catalog holds its register in `advisories/`, one record a file, named by the advisory's primary id:

    <catalog>/advisories/CVE-2025-3264.json

A record says which releases the advisories list as affected (what pip-audit and scanners act on, by version), which
entries carry upstream's whole fix (`entries`) or a part of it (`partial_entries`), and for an advisory that concerns
files only (conversion scripts), which files of the wheel; for one no entry carries, which releases' wheels have the
code (`affected`, where that is not the advisories' range). An entry's own `"advisories"` with no record are read as a
record of that entry alone, with no range: fixed where it is applied, open where it needs applying.

Where an advisory stands is decided by the installed code, never by a version alone: by the condition each entry
finds, by which of the record's files are installed; `listed` only decides whether an advisory that no entry speaks
for here is named at all (open: no entry covers the release; or no fix exists upstream), and `affected` in its
place where the wheels show the code in other releases than the advisories list: a listed release outside
`affected` is named not affected (the vulnerable code is not in it), as a scanner that goes by `listed` needs to read.
"""

from __future__ import annotations

import enum
import json
import operator
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from hfpatch import versions
from hfpatch.diagnosis import Condition
from hfpatch.entry import ADVISORY, DISTRIBUTION, ID
from hfpatch.errors import CatalogError

if TYPE_CHECKING:
    from packaging.version import Version

SCHEMA = 1
DIRECTORY = "advisories"
_KEYS = frozenset(
    {"schema", "ids", "distribution", "title", "listed", "fixed_in", "fix", "upstream", "entries", "partial_entries"}
    | {"files", "about"}
)
_OPTIONAL = frozenset({"affected", "mitigation", "package"})
# One clause of a PEP 440 specifier set; its version is checked with versions.is_version (no packaging import).
_CLAUSE = re.compile(r"\s*(~=|===|==|!=|<=|>=|<|>)\s*(\S+?)\s*")


class Fix(enum.Enum):
    """What upstream did about the advisory."""

    SOURCE = "source"  # changed the code: an entry carries it
    PACKAGING = "packaging"  # stopped shipping the files (conversion scripts from 4.48.0 on)
    NONE = "none"  # nothing


class Record(NamedTuple):
    ids: tuple[str, ...]
    distribution: str
    title: str
    # The range the advisories list as affected (a PEP 440 specifier set, "" for every release); None for a record
    # made of an entry's own advisories, whose range nobody gave.
    listed: str | None
    fixed_in: str | None
    fix: Fix
    upstream: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    partial_entries: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    # What a user can do where nothing here closes it (no fix upstream, no entry for the release).
    mitigation: str | None = None
    # The releases whose wheels carry the vulnerable code, as read off them, where that differs from `listed` (an
    # unfixed hole still in releases after the range the advisories give): names an advisory no entry speaks for.
    affected: str | None = None
    # The distribution's top-level package, where it is not the distribution's name as an import name (PIL).
    import_name: str | None = None
    path: Path | None = None  # the record's file; None for an entry's own advisories

    @property
    def primary(self) -> str:
        return self.ids[0]

    @property
    def package(self) -> str:
        """The top-level package the distribution installs (accelerate, huggingface_hub), where a record of no entry
        finds it."""
        return self.import_name or canonical(self.distribution).replace("-", "_")

    @property
    def aliases(self) -> tuple[str, ...]:
        return self.ids[1:]


class Register(NamedTuple):
    records: tuple[Record, ...] = ()

    def of(self, distribution: str) -> list[Record]:
        wanted = canonical(distribution)
        return [record for record in self.records if canonical(record.distribution) == wanted]

    def naming(self, advisory: str) -> Record | None:
        return next((record for record in self.records if advisory in record.ids), None)

    @property
    def distributions(self) -> list[str]:
        return list(dict.fromkeys(record.distribution for record in self.records))


def canonical(distribution: str) -> str:
    """A distribution's name as the packaging specifications compare it (huggingface_hub is huggingface-hub)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


# ------------------------------------------------------------------------------------------------- reading


def load(catalogs: Iterable[Path]) -> Register:
    """Every record of the catalogs' registers, validated; one advisory id in two records is refused."""
    records: list[Record] = []
    seen: dict[str, Path] = {}
    for catalog in catalogs:
        directory = catalog / DIRECTORY
        try:
            listed = os.listdir(directory)  # noqa: PTH208 - names: Paths only for the records
            names = sorted(name for name in listed if name.endswith(".json") and name != ".json")
        except FileNotFoundError:
            continue
        except OSError as error:
            raise CatalogError(f"cannot list the advisory register {directory}: {error.strerror}.") from None
        for path in (directory / name for name in names):
            record = read(path)
            for advisory in record.ids:
                if advisory in seen:
                    raise CatalogError(
                        f"{advisory} has two advisory records, {seen[advisory]} and {path}; keep one of them."
                    )
                seen[advisory] = path
            records.append(record)
    return Register(tuple(records))


def read(path: Path) -> Record:
    """One record, validated; any fault is a CatalogError naming the file and the key."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        raise CatalogError(f"cannot read {path}: {error.strerror}.") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise CatalogError(f"{path} is not valid JSON: {error}.") from None
    except RecursionError:
        raise CatalogError(f"{path} is not valid JSON: it nests too deeply.") from None
    try:
        if not isinstance(data, dict):
            raise ValueError(f"it holds a JSON {type(data).__name__}, not an object")
        return _record(data, path)
    except KeyError as error:
        raise CatalogError(f"{path} is not a valid advisory record: missing {error}.") from None
    except (TypeError, ValueError) as error:
        raise CatalogError(f"{path} is not a valid advisory record: {error}.") from None


def _record(data: Mapping[str, Any], path: Path) -> Record:
    schema = data.get("schema")
    if type(schema) is not int or schema != SCHEMA:
        newer = " (a newer hfpatch wrote it? upgrade hfpatch)" if type(schema) is int and schema > SCHEMA else ""
        raise ValueError(f"schema must be {SCHEMA}, not {schema!r}{newer}")
    unknown = sorted(set(data) - _KEYS - _OPTIONAL)
    if unknown:
        raise ValueError(f"it has an unknown key {unknown[0]!r} (it may have {', '.join(sorted(_KEYS | _OPTIONAL))})")
    missing = sorted(_KEYS - set(data))
    if missing:
        raise KeyError(missing[0])
    ids = _ids(data, path)
    fix = _fix(data)
    fixed_in = None if data["fixed_in"] is None else _version(data, "fixed_in")
    if fix is Fix.NONE and fixed_in is not None:
        raise ValueError(f'fix is "none" but fixed_in is {fixed_in!r}: a release with the fix is a fix')
    entries, partial = _names(data, "entries"), _names(data, "partial_entries")
    both = next((name for name in entries if name in partial), None)
    if both is not None:
        raise ValueError(f"{both!r} is in both entries and partial_entries: an entry carries the whole fix or a part")
    files = tuple(_file(value) for value in _strings(data, "files"))
    if fix is Fix.PACKAGING and not files:
        raise ValueError('fix is "packaging" but files names none: say which files upstream stopped shipping')
    return Record(
        ids=ids,
        distribution=_distribution(data),
        title=_string(data, "title"),
        listed=_specifiers(data, "listed"),
        affected=_specifiers(data, "affected") if "affected" in data else None,
        fixed_in=fixed_in,
        fix=fix,
        upstream=tuple(_url(value) for value in _strings(data, "upstream")),
        entries=entries,
        partial_entries=partial,
        files=files,
        about=_strings(data, "about"),
        mitigation=_string(data, "mitigation") if "mitigation" in data else None,
        import_name=_package(data) if "package" in data else None,
        path=path,
    )


def _ids(data: Mapping[str, Any], path: Path) -> tuple[str, ...]:
    ids = _strings(data, "ids")
    if not ids:
        raise ValueError("ids names no advisory")
    wrong = next((value for value in ids if not ADVISORY.fullmatch(value)), None)
    if wrong is not None:
        raise ValueError(f"ids lists {wrong!r}, which is no CVE, GHSA or PYSEC id (CVE-2025-3264, ...)")
    if len(set(ids)) != len(ids):
        raise ValueError("ids names an advisory twice")
    # The primary id is the CVE where there is one, else the GHSA, else the PYSEC id.
    best = min(ids, key=lambda value: ("CVE-", "GHSA-", "PYSEC-").index(_id_kind(value)))
    if _id_kind(ids[0]) != _id_kind(best):
        raise ValueError(f"ids must start with the primary id, {best} (a CVE where there is one, else the GHSA)")
    if path.name != f"{ids[0]}.json":
        raise ValueError(f"the record of {ids[0]} must be named {ids[0]}.json")
    return ids


def _id_kind(advisory: str) -> str:
    return advisory.split("-")[0] + "-"


def _fix(data: Mapping[str, Any]) -> Fix:
    value = data["fix"]
    try:
        return Fix(value)
    except ValueError:
        known = ", ".join(repr(fix.value) for fix in Fix)
        raise ValueError(f"fix {value!r} is none of {known}") from None


def _specifiers(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f'{key} must be a PEP 440 specifier set such as "<4.51.0" ("" for every release)')
    for clause in value.split(",") if value.strip() else ():
        match = _CLAUSE.fullmatch(clause)
        version = match[2].removesuffix(".*") if match else ""
        wildcard = match is not None and match[2].endswith(".*") and match[1] in ("==", "!=")
        if match is None or not versions.is_version(version) or (match[2].endswith(".*") and not wildcard):
            raise ValueError(f"{key} {value!r} is not a PEP 440 specifier set: {clause.strip()!r}")
    return value


def _distribution(data: Mapping[str, Any]) -> str:
    value = _string(data, "distribution")
    if not DISTRIBUTION.fullmatch(value):
        raise ValueError(f"distribution {value!r} is not a distribution's name")
    return value


def _package(data: Mapping[str, Any]) -> str:
    value = _string(data, "package")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError(f"package {value!r} is not a top-level package's name")
    return value


def _names(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = _strings(data, key)
    wrong = next((value for value in values if not ID.fullmatch(value)), None)
    if wrong is not None:
        raise ValueError(f"{key} lists {wrong!r}, which is no entry's id")
    if len(set(values)) != len(values):
        raise ValueError(f"{key} names an entry twice")
    return values


def _file(value: str) -> str:
    if not value or value.startswith("/") or ".." in value.split("/") or "\\" in value:
        raise ValueError(f"files lists {value!r}, which is not a path relative to site-packages as RECORD names it")
    return value


def _url(value: str) -> str:
    if not value.startswith(("https://", "http://")) or value.split() != [value]:  # no whitespace in it
        raise ValueError(f"upstream lists {value!r}, which is not a URL")
    return value


def _version(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not versions.is_version(value):
        raise ValueError(f"{key} {value!r} is not a version (PEP 440) or null")
    return value


def _string(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ValueError(f"{key} must be a non-empty string of one line")
    return value


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = data[key]
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise ValueError(f"{key} must be a list of strings")
    return tuple(values)


def of_entry(patch_id: str, distribution: str, title: str, fixed_in: str | None, ids: Sequence[str]) -> Record:
    """The record an entry's own advisories make where the register has none: no range, the entry alone."""
    return Record(tuple(ids), distribution, title, None, fixed_in, Fix.SOURCE, entries=(patch_id,))


_ORDERED: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def within(specifiers: str | None, version: str | None) -> bool | None:
    """Whether the release is in the range (a PEP 440 specifier set); None where that cannot be told (no range, no
    version, or one that is not PEP 440)."""
    if specifiers is None:
        return None
    if not specifiers.strip():
        return True
    numbers = versions.simple_key(version)  # simply spelt against simply spelt: no packaging import (check's path)
    parsed = None if numbers is not None else versions.parse(version)
    if numbers is None and parsed is None:
        return None
    for clause in specifiers.split(","):
        match = _CLAUSE.fullmatch(clause)
        assert match is not None, f"{specifiers!r} was validated when it was read"
        comparison, bound = match[1], match[2]
        ordered = comparison in _ORDERED and not bound.endswith(".*")
        simple_bound = versions.simple_key(bound) if ordered and numbers is not None else None
        if simple_bound is not None:
            held = _ORDERED[comparison](numbers, simple_bound)
        else:
            parsed = versions.parse(version) if parsed is None else parsed
            assert parsed is not None, "a simply spelt release is a version"
            held = _holds(comparison, bound, parsed, ordered)
        if not held:
            return False
    return True


def _holds(comparison: str, bound: str, version: Version, ordered: bool) -> bool:
    # An ordered bound as the advisories' ranges mean it (OSV: introduced <= v < fixed, in version order): a
    # pre-release of the fixed release is before it, where PEP 440's `<` would leave it out.
    if ordered:
        limit = versions.parse(bound)
        assert limit is not None, f"{bound!r} was validated when it was read"
        return _ORDERED[comparison](version, limit)
    from packaging.specifiers import Specifier  # ~=, ===, a wildcard: packaging's specifier, only here

    return Specifier(f"{comparison}{bound}").contains(version, prereleases=True)


# ------------------------------------------------------------------------------------------------- judging


class Status(enum.Enum):
    FIXED = "fixed"
    OPEN = "open"
    NOT_AFFECTED = "not-affected"
    UNKNOWN = "unknown"


class Reason(enum.Enum):
    """Why an advisory has its status here."""

    PATCH_APPLIED = "patch-applied"  # fixed: an entry that carries the whole fix is applied
    RELEASE_HAS_FIX = "release-has-fix"  # fixed: the release has upstream's fix
    CODE_HAS_FIX = "code-has-fix"  # fixed: the code is the fix, not by hfpatch
    NOT_APPLIED = "not-applied"  # open: an entry carries the fix, and it is not applied
    PARTLY_MITIGATED = "partly-mitigated"  # open: an entry that carries part of the fix is applied
    NOT_COVERED = "not-covered"  # open: upstream fixed it, and no entry carries that to this release
    NO_UPSTREAM_FIX = "no-upstream-fix"  # open: upstream has no fix
    # not affected: the entries' targets are absent, or (no entry speaking) the release is listed, yet outside the
    # releases whose wheels have the code (`affected`)
    CODE_NOT_PRESENT = "vulnerable-code-not-present"
    COMPONENT_NOT_PRESENT = "component-not-present"  # not affected: none of the record's files is installed
    CODE_NOT_KNOWN = "code-not-known"  # unknown: an entry found code it does not know (or an error)
    VERSION_NOT_KNOWN = "version-not-known"  # unknown: no entry speaks, and the release's version is not known


class Finding(NamedTuple):
    """What one entry found here: its condition, and whether its targets are absent (the code is not there)."""

    entry: str
    condition: Condition
    absent: bool = False


class AdvisoryStatus(NamedTuple):
    record: Record
    status: Status
    reason: Reason
    version: str | None
    # The entries that decided it (those that speak for this release), and the partial ones that do.
    entries: tuple[Finding, ...] = ()
    partial: tuple[Finding, ...] = ()
    # The record's files that are installed here.
    files: tuple[str, ...] = ()
    # Whether the advisories list this release (None: not known): what a scanner reports by version.
    listed: bool | None = None


class _Kind(enum.IntEnum):
    """What an entry's condition says of the advisory, the one that decides first lowest."""

    NOT_APPLIED = 0
    UNKNOWN = 1
    APPLIED = 2
    CODE_HAS_FIX = 3
    RELEASE_HAS_FIX = 4
    ABSENT = 5
    SILENT = 6  # the entry does not speak for this release: another form, a release it was not written from


_KINDS = {
    Condition.APPLIED: _Kind.APPLIED,
    Condition.FIXED_OTHERWISE: _Kind.CODE_HAS_FIX,
    Condition.FIXED_UPSTREAM: _Kind.RELEASE_HAS_FIX,
    Condition.NEEDS_PATCH: _Kind.NOT_APPLIED,
    Condition.DROPPED: _Kind.NOT_APPLIED,
    Condition.INCOMPLETE: _Kind.NOT_APPLIED,
    Condition.UNRECOGNISED: _Kind.UNKNOWN,
    Condition.EDITED: _Kind.UNKNOWN,
    Condition.ERROR: _Kind.UNKNOWN,
    Condition.NOT_COVERED: _Kind.SILENT,
    Condition.NOT_INSTALLED: _Kind.SILENT,
}

_FIXED = {
    _Kind.APPLIED: Reason.PATCH_APPLIED,
    _Kind.CODE_HAS_FIX: Reason.CODE_HAS_FIX,
    _Kind.RELEASE_HAS_FIX: Reason.RELEASE_HAS_FIX,
}


def _kind(finding: Finding) -> _Kind:
    if finding.condition is Condition.NOT_APPLICABLE:
        return _Kind.ABSENT if finding.absent else _Kind.SILENT
    return _KINDS[finding.condition]


def judge(
    record: Record, findings: Mapping[str, Finding], version: str | None, installed: Iterable[str] = ()
) -> AdvisoryStatus | None:
    """Where the advisory stands in an environment: from what its entries found (`findings`, by entry id), the
    release's version and the record's files that are installed. None: nothing to say (no entry speaks for the
    release, and the advisories do not list it). A listed release outside `affected` that no entry speaks for is not
    affected: the wheels, read release by release, show it has none of the code."""
    present = tuple(file for file in record.files if file in set(installed))
    listed = within(record.listed, version)
    affected = listed if record.affected is None else within(record.affected, version)

    def status(state: Status, reason: Reason, **fields: Any) -> AdvisoryStatus:
        return AdvisoryStatus(record, state, reason, version, files=present, listed=listed, **fields)

    full = [findings[name] for name in record.entries if name in findings]
    decided = _deciding(full)
    if decided and _kind(decided[0]) is _Kind.NOT_APPLIED:
        return status(Status.OPEN, Reason.NOT_APPLIED, entries=decided, partial=_speaking(record, findings))
    if decided and _kind(decided[0]) is _Kind.UNKNOWN:
        return status(Status.UNKNOWN, Reason.CODE_NOT_KNOWN, entries=decided)
    if decided and _kind(decided[0]) in _FIXED:
        return status(Status.FIXED, _FIXED[_kind(decided[0])], entries=decided)
    partial = _speaking(record, findings)
    if partial and _kind(partial[0]) is _Kind.UNKNOWN:
        return status(Status.UNKNOWN, Reason.CODE_NOT_KNOWN, partial=partial)
    if partial and _kind(partial[0]) is _Kind.APPLIED:
        return status(Status.OPEN, Reason.PARTLY_MITIGATED, partial=partial)
    unfixed = Reason.NO_UPSTREAM_FIX if record.fix is Fix.NONE else Reason.NOT_COVERED
    if partial:  # a partial entry found the vulnerable code, not applied: open whatever the range
        return status(Status.OPEN, unfixed, partial=partial)
    if record.files and not present:
        return status(Status.NOT_AFFECTED, Reason.COMPONENT_NOT_PRESENT)
    if decided:  # every entry that speaks finds its targets absent
        return status(Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT, entries=decided)
    if affected is None and record.listed is not None:
        return status(Status.UNKNOWN, Reason.VERSION_NOT_KNOWN)
    if affected:
        return status(Status.OPEN, unfixed)
    if listed and record.affected is not None:  # listed, but the wheels show the release has no vulnerable code
        return status(Status.NOT_AFFECTED, Reason.CODE_NOT_PRESENT)
    return None


def _deciding(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """The findings of the kind that decides first, those that do not speak left out."""
    spoken = [finding for finding in findings if _kind(finding) is not _Kind.SILENT]
    if not spoken:
        return ()
    first = min(_kind(finding) for finding in spoken)
    return tuple(finding for finding in spoken if _kind(finding) is first)


def _speaking(record: Record, findings: Mapping[str, Finding]) -> tuple[Finding, ...]:
    """The partial entries that speak of the vulnerable code here: applied, not applied, or unknown code."""
    partial = [findings[name] for name in record.partial_entries if name in findings]
    wanted = (_Kind.UNKNOWN, _Kind.APPLIED, _Kind.NOT_APPLIED)
    for kind in wanted:
        chosen = tuple(finding for finding in partial if _kind(finding) is kind)
        if chosen:
            return chosen
    return ()
