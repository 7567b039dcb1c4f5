"""OpenVEX as its specification (openvex/spec, OPENVEX-SPEC.md, v0.2.0) defines a document, checked field by field
from the specification's text (no schema copied in), and a statement matched to a scanner's finding as
openvex/go-vex matches it (Trivy and Grype call it)."""

from __future__ import annotations

import re
from typing import Any

STATUSES = {"not_affected", "affected", "fixed", "under_investigation"}
JUSTIFICATIONS = {
    "component_not_present",
    "vulnerable_code_not_present",
    "vulnerable_code_not_in_execute_path",
    "vulnerable_code_cannot_be_controlled_by_adversary",
    "inline_mitigations_already_exist",
}
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def openvex_faults(document: dict[str, Any]) -> list[str]:
    """What the OpenVEX specification (v0.2.0, OPENVEX-SPEC.md) requires of a document, checked field by field:
    the document's @context, @id, author, timestamp, version and statements; each statement's vulnerability (with
    its name), products (each addressable), and status (one of the labels); a not_affected statement's
    justification label or impact statement; an affected statement's action statement."""
    faults = []
    context = document.get("@context")
    if not (isinstance(context, str) and re.fullmatch(r"https://openvex\.dev/ns(/v\d+\.\d+\.\d+)?", context)):
        faults.append(f"@context {context!r}")
    if not (isinstance(document.get("@id"), str) and IRI.fullmatch(document["@id"])):
        faults.append("@id is not an IRI")
    if not (isinstance(document.get("author"), str) and document["author"].strip()):
        faults.append("no author")
    if not (isinstance(document.get("timestamp"), str) and RFC3339.fullmatch(document["timestamp"])):
        faults.append("timestamp")
    if not (type(document.get("version")) is int and document["version"] >= 1):
        faults.append("version")
    statements = document.get("statements")
    if not isinstance(statements, list):
        return [*faults, "statements is not a list"]
    for index, statement in enumerate(statements):
        faults += [f"statement {index}: {fault}" for fault in _statement_faults(statement)]
    return faults


def _statement_faults(statement: dict[str, Any]) -> list[str]:
    faults = []
    vulnerability = statement.get("vulnerability")
    if not (isinstance(vulnerability, dict) and isinstance(vulnerability.get("name"), str) and vulnerability["name"]):
        faults.append("vulnerability has no name")
    products = statement.get("products")
    if not (isinstance(products, list) and products and all(_addressable(product) for product in products)):
        faults.append("a product that cannot be addressed")
    for product in products or []:
        if not all(_addressable(component) for component in product.get("subcomponents", [])):
            faults.append("a subcomponent that cannot be addressed")
    status = statement.get("status")
    if status not in STATUSES:
        faults.append(f"status {status!r}")
    explained = statement.get("justification") in JUSTIFICATIONS or bool(statement.get("impact_statement"))
    if status == "not_affected" and not explained:
        faults.append("not_affected without a justification or an impact statement")
    if status == "affected" and not statement.get("action_statement"):
        faults.append("affected without an action statement")
    if status != "not_affected" and "justification" in statement:
        faults.append("a justification on a statement that is not not_affected")
    return faults


def _addressable(component: object) -> bool:
    """A product or subcomponent is identified by its @id (an IRI), its identifiers or its hashes."""
    if not isinstance(component, dict):
        return False
    named = isinstance(component.get("@id"), str) and IRI.fullmatch(component["@id"]) is not None
    return named or bool(component.get("identifiers")) or bool(component.get("hashes"))


def scanner_matches(statement: dict[str, Any], *, product: str, subcomponent: str) -> bool:
    """Whether a scanner applies the statement to a finding, as openvex/go-vex's Statement.Matches (which Trivy and
    Grype call) decides: a product whose @id is the one the scan names, and, where the product lists subcomponents
    and the scan names one, one of them; no subcomponent named in the scan (a package taken as its own product)
    matches a product by its @id alone."""

    def same(ours: str, theirs: str) -> bool:
        return ours == theirs

    for listed in statement["products"]:
        if not same(listed["@id"], product):
            continue
        components = listed.get("subcomponents", [])
        if not components or not subcomponent or any(same(each["@id"], subcomponent) for each in components):
            return True
    return False
