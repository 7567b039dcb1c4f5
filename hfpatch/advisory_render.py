"""What a person, a program and a scanner read of the advisories in an environment: the lines of `check`, the
fields of `check --json`, pip-audit's options (`check --pip-audit`) and an OpenVEX document (`check --vex`).

Each reason becomes words here and nowhere else, so the same fact reads the same in text, JSON and OpenVEX.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import hfpatch
from hfpatch.advisory import AdvisoryStatus, Finding, Fix, Reason, Status
from hfpatch.audit import Audit
from hfpatch.diagnosis import Condition
from hfpatch.errors import UsageError

OPENVEX_CONTEXT = "https://openvex.dev/ns/v0.2.0"
# What each status and reason is called in OpenVEX (its status labels and justifications).
_VEX_STATUS = {
    Status.FIXED: "fixed",
    Status.OPEN: "affected",
    Status.NOT_AFFECTED: "not_affected",
    Status.UNKNOWN: "under_investigation",
}
_JUSTIFICATION = {
    Reason.CODE_NOT_PRESENT: "vulnerable_code_not_present",
    Reason.COMPONENT_NOT_PRESENT: "component_not_present",
}
_UNAPPLIED = {
    Condition.NEEDS_PATCH: "not applied",
    Condition.DROPPED: "no longer applied (the file holds the original again)",
    Condition.INCOMPLETE: "not finished (an interrupted run, or a lagging RECORD or bytecode)",
}
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


# ------------------------------------------------------------------------------------------------- words


def _named(findings: Sequence[Finding]) -> str:
    return ", ".join(finding.entry for finding in findings)


def _release(status: AdvisoryStatus) -> str:
    return f"{status.record.distribution} {status.version or '(no version metadata)'}"


def sentence(status: AdvisoryStatus, audit: Audit) -> str:
    """Why the advisory has its status here, and what to do where anything can be done, in one sentence."""
    record, reason = status.record, status.reason
    if reason is Reason.PATCH_APPLIED:
        return f"{_named(status.entries)} is applied here"
    if reason is Reason.RELEASE_HAS_FIX:
        since = f" (fixed in {record.fixed_in})" if record.fixed_in else ""
        return f"{_release(status)} has upstream's fix{since}"
    if reason is Reason.CODE_HAS_FIX:
        return f"the installed code is the fix {_named(status.entries)} carries, though not by hfpatch"
    if reason is Reason.NOT_APPLIED:
        words = _UNAPPLIED.get(status.entries[0].condition, "not applied")
        return f"{_named(status.entries)} is {words} here; run `{audit.command_for(f.entry for f in status.entries)}`"
    if reason is Reason.PARTLY_MITIGATED:
        rest = f"{record.distribution} {record.fixed_in} has all of it" if record.fixed_in else "no release has all"
        return f"{_named(status.partial)} is applied, and carries only part of upstream's fix; {rest}"
    if reason in (Reason.NOT_COVERED, Reason.NO_UPSTREAM_FIX):
        return _unfixed(status, audit)
    if reason is Reason.CODE_NOT_PRESENT and status.entries:
        return f"the code it concerns is not in {_release(status)} ({_named(status.entries)} finds none of it)"
    if reason is Reason.CODE_NOT_PRESENT:
        listed = f"releases {record.listed}" if record.listed else "every release"
        return (
            f"the code it concerns is not in {_release(status)}: the wheels have it in {record.affected} only, "
            f"though the advisories list {listed}"
        )
    if reason is Reason.COMPONENT_NOT_PRESENT:
        return f"{_release(status)} has none of the files it concerns ({_files(record.files)})"
    if reason is Reason.CODE_NOT_KNOWN:
        found = status.entries or status.partial
        conditions = ", ".join(dict.fromkeys(finding.condition.value for finding in found))
        return f"the code {_named(found)} fixes is not a form hfpatch knows here ({conditions})"
    return f"{record.distribution} has no version metadata here, and no entry speaks for the release"


def _unfixed(status: AdvisoryStatus, audit: Audit) -> str:
    record = status.record
    if status.reason is Reason.NO_UPSTREAM_FIX:
        words = "upstream has no fix"
    elif record.fix is Fix.PACKAGING:
        since = f" in {record.fixed_in}" if record.fixed_in else ""
        words = f"upstream stopped shipping the files{since}; no entry moves them aside in {_release(status)}"
    elif record.fixed_in:
        words = f"no entry carries the fix to {_release(status)}; upstream fixed it in {record.fixed_in}"
    else:
        words = f"no entry carries the fix to {_release(status)}; upstream's fix is in no release yet"
    if status.partial:
        words += (
            f"; `{audit.command_for(f.entry for f in status.partial)}` mitigates part of it ({_named(status.partial)})"
        )
    return words


def _files(files: Sequence[str]) -> str:
    return files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"


def action(status: AdvisoryStatus, audit: Audit) -> str | None:
    """What to do about an open advisory (OpenVEX's action_statement); None where it is not open."""
    if status.status is not Status.OPEN:
        return None
    record, reason = status.record, status.reason
    if reason is Reason.NOT_APPLIED:
        return f"Run `{audit.command_for(f.entry for f in status.entries)}` in this environment."
    upgrade = f"Upgrade {record.distribution} to {record.fixed_in} or later." if record.fixed_in else ""
    if reason is Reason.PARTLY_MITIGATED:
        return f"hfpatch carries only part of the fix here ({_named(status.partial)}). {upgrade}".strip()
    if status.partial:
        return f"Run `{audit.command_for(f.entry for f in status.partial)}` to mitigate part of it. {upgrade}".strip()
    if upgrade:
        return upgrade
    return record.mitigation or "No fix exists upstream, and hfpatch carries none: limit what reaches the code."


# ------------------------------------------------------------------------------------------------- check


def text_lines(audit: Audit | None, *, verbose: bool = False, quiet: bool = False) -> list[str]:
    """check's lines: one for each open or unknown advisory (with the installed files a script advisory concerns),
    the fixed and not-affected ones counted in one line unless `verbose`; `quiet`: only those `apply` closes."""
    if audit is None:
        return []
    lines: list[str] = []
    folded = {Status.FIXED: 0, Status.NOT_AFFECTED: 0}
    for status in audit.statuses:
        if quiet and status.reason is not Reason.NOT_APPLIED:
            continue
        if status.status in folded and not verbose:
            folded[status.status] += 1
            continue
        also = f" ({', '.join(status.record.aliases)})" if status.record.aliases else ""
        lines.append(f"  {status.record.primary}{also}: {status.status.value}: {sentence(status, audit)}")
        if status.status is Status.OPEN:
            lines += [f"    file: {file}" for file in status.files]
            if status.record.mitigation and status.reason in (Reason.NO_UPSTREAM_FIX, Reason.NOT_COVERED):
                lines.append(f"    mitigation: {status.record.mitigation}")
    counts = [f"{count} {state.value.replace('-', ' ')}" for state, count in folded.items() if count]
    if counts:
        lines.append(f"  advisories: {', '.join(counts)} (-v names them)")
    return lines


def json_fields(audit: Audit | None) -> dict[str, Any]:
    """The environment's advisories in check --json: the ids by status, and each advisory with its fields."""
    statuses = () if audit is None else audit.statuses

    def ids(state: Status) -> list[str]:
        return [advisory for status in statuses if status.status is state for advisory in status.record.ids]

    return {
        "advisories": {state.value.replace("-", "_"): ids(state) for state in Status},
        "advisory_statuses": [] if audit is None else [_status_json(status, audit) for status in statuses],
    }


def _status_json(status: AdvisoryStatus, audit: Audit) -> dict[str, Any]:
    record = status.record
    return {
        "id": record.primary,
        "ids": list(record.ids),
        "title": record.title,
        "distribution": record.distribution,
        "version": status.version,
        "status": status.status.value,
        "reason": status.reason.value,
        "message": sentence(status, audit),
        "action": action(status, audit),
        # Whether the advisories list this release as affected (what pip-audit reports by version); null: unknown.
        "listed": status.listed,
        "listed_range": record.listed,
        "fixed_in": record.fixed_in,
        "fix": record.fix.value,
        "upstream": list(record.upstream),
        "entries": [_finding_json(finding) for finding in status.entries],
        "partial_entries": [_finding_json(finding) for finding in status.partial],
        "files": list(status.files),
        "pip_audit_ignores": _ignorable(status),
        "record": None if record.path is None else str(record.path),
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {"id": finding.entry, "condition": finding.condition.value, "targets_absent": finding.absent}


def _ignorable(status: AdvisoryStatus) -> bool:
    """pip-audit may ignore it here: fixed, or not affected, where pip-audit reports it (the release is listed) or
    hfpatch's patch closed it. Never an advisory open, partly mitigated or unknown here."""
    if status.status is Status.FIXED and status.reason in (Reason.PATCH_APPLIED, Reason.CODE_HAS_FIX):
        return True
    return status.status in (Status.FIXED, Status.NOT_AFFECTED) and status.listed is True


def pip_audit_options(audit: Audit | None) -> list[str]:
    """`--ignore-vuln ID` for every id of each advisory pip-audit may ignore here (it matches CVE, GHSA or PYSEC)."""
    if audit is None:
        return []
    ignored = [advisory for status in audit.statuses if _ignorable(status) for advisory in status.record.ids]
    return [f"--ignore-vuln {advisory}" for advisory in dict.fromkeys(ignored)]


# ------------------------------------------------------------------------------------------------- OpenVEX


class VexRequest(NamedTuple):
    """What --vex was given: the products its statements are about, and who issues the document."""

    products: tuple[str, ...] = ()
    author: str | None = None


def check_request(request: VexRequest) -> VexRequest:
    for product in request.products:
        if not _IRI.fullmatch(product):
            raise UsageError(
                f"--vex-product {product!r} is not an IRI: name the image or environment the statements are about, "
                "e.g. pkg:oci/app@sha256:<digest> (see the README's OpenVEX section)"
            )
    if request.author is not None and not request.author.strip():
        raise UsageError("--vex-author is empty: give the person or organisation that issues the document")
    return request


def purl(distribution: str, version: str | None) -> str:
    """The package URL of a PyPI distribution as the purl specification writes it (lowercase, '_' as '-')."""
    name = distribution.lower().replace("_", "-")
    return f"pkg:pypi/{name}" + ("" if version is None else f"@{_purl_escape(version)}")


def _purl_escape(text: str) -> str:
    return "".join(char if char.isalnum() or char in ".-_~" else f"%{ord(char):02X}" for char in text)


def vex_document(audit: Audit | None, interpreter: str, request: VexRequest) -> dict[str, Any]:
    """An OpenVEX (v0.2.0) document of the environment: a statement for each advisory the catalog knows on each
    installed distribution. Its products are the environment (--vex-product, else the interpreter as a file IRI),
    each with the installed distribution as its subcomponent: a statement never speaks of every install of
    pkg:pypi/NAME@VERSION, only of the distribution in the product named."""
    products = request.products or (Path(interpreter).absolute().as_uri(),)
    statements = [] if audit is None else [_statement(status, audit, products) for status in audit.statuses]
    timestamp = _timestamp()
    body = {
        "author": request.author or "unknown",
        "timestamp": timestamp,
        "version": 1,
        "tooling": f"hfpatch {hfpatch.__version__}",
        "statements": statements,
    }
    import hashlib
    import uuid  # --vex only

    # Named by its content, so that a reproducible build (SOURCE_DATE_EPOCH) writes the same document.
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).digest()
    return {"@context": OPENVEX_CONTEXT, "@id": f"urn:uuid:{uuid.UUID(bytes=digest[:16], version=5)}", **body}


def _statement(status: AdvisoryStatus, audit: Audit, products: Sequence[str]) -> dict[str, Any]:
    record = status.record
    vulnerability: dict[str, Any] = {"name": record.primary, "description": record.title}
    if record.aliases:
        vulnerability["aliases"] = list(record.aliases)
    component = {"@id": purl(record.distribution, status.version)}
    statement: dict[str, Any] = {
        "vulnerability": vulnerability,
        "products": [{"@id": product, "subcomponents": [component]} for product in products],
        "status": _VEX_STATUS[status.status],
    }
    words = sentence(status, audit)
    if status.status is Status.NOT_AFFECTED:
        statement["justification"] = _JUSTIFICATION[status.reason]
        statement["impact_statement"] = words
    else:
        statement["status_notes"] = words
    if status.status is Status.OPEN:
        statement["action_statement"] = action(status, audit)
    return statement


def _timestamp() -> str:
    """Now, in RFC 3339 (UTC); SOURCE_DATE_EPOCH's time where it is set, as reproducible builds ask."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    moment = int(epoch) if epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
