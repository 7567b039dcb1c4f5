"""Security advisories end to end, on the made-up toypkg (tests/toy.py) with an advisory register in its catalog:
`check` names every advisory the catalog knows for the installed release (text, --json), writes it as OpenVEX
(--vex) and as pip-audit's options (--pip-audit); before apply, after apply, after revert, and where a run was
killed. Every run is a real process.

    <catalog>/toypkg-1/                         the toy entry; its "advisories" name CVE-2026-0001's two ids
    <catalog>/advisories/CVE-2026-0001.json     fixed by toypkg-1 (listed <2.0, fixed in 2.0)
    <catalog>/advisories/CVE-2026-0002.json     no fix upstream, every release listed, a mitigation
    <catalog>/advisories/CVE-2026-0003.json     a conversion script no release of this site ships

The runs read [tool.hfpatch] from a pyproject.toml that requires toypkg-1, so that every advisory of an installed
distribution is named (with `--patch`, only those that name a chosen patch are).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from openvex import openvex_faults, scanner_matches
from support import Completed, Site, hfpatch, run, write_files
from toy import A_ID, B_ID, PATCH_ID, make_composed_site, make_site

FIXED = ["CVE-2026-0001", "GHSA-2345-6789-cfgh"]  # the advisory toypkg-1 closes
UNFIXED = "CVE-2026-0002"
SCRIPT = "CVE-2026-0003"
SCRIPT_FILE = "toypkg/convert_old.py"

RECORDS: dict[str, dict[str, Any]] = {
    FIXED[0]: {
        "ids": FIXED,
        "title": "greet(None) crashes whoever greets nobody",
        "listed": "<2.0",
        "fixed_in": "2.0",
        "fix": "source",
        "upstream": ["https://example.invalid/toypkg/pull/1"],
        "entries": [PATCH_ID],
        "files": [],
    },
    UNFIXED: {
        "ids": [UNFIXED],
        "title": "greet echoes whatever name it is given",
        "listed": "",
        "fixed_in": None,
        "fix": "none",
        "upstream": [],
        "entries": [],
        "files": [],
        "mitigation": "greet only names you trust",
    },
    SCRIPT: {
        "ids": [SCRIPT],
        "title": "a conversion script unpickles what it is given",
        "listed": "",
        "fixed_in": None,
        "fix": "none",
        "upstream": [],
        "entries": [],
        "files": [SCRIPT_FILE],
    },
}


def write_register(catalog: Path, records: dict[str, dict[str, Any]] = RECORDS) -> None:
    directory = catalog / "advisories"
    directory.mkdir(exist_ok=True)
    for name, fields in records.items():
        record = {"schema": 1, "distribution": "toypkg", "partial_entries": [], "about": ["made up"], **fields}
        (directory / f"{name}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")


def name_advisories(catalog: Path, patch_id: str, ids: list[str]) -> None:
    """The entry in the schema that has advisories (its file's keys under files), naming `ids`."""
    path = catalog / patch_id / "patch.json"
    data = json.loads(path.read_text())
    if data["schema"] == 2:
        file = {key: data.pop(key) for key in ("module", "file", "targets", "known_files")}
        data["files"] = [file]
    data.update(schema=3, advisories=ids)
    path.write_text(json.dumps(data, indent=2))


class Audited:
    """A site, its catalog with the register, and a pyproject.toml that requires the site's patch."""

    def __init__(self, site: Site, where: Path) -> None:
        self.site = site
        self.config = where / "pyproject.toml"
        self.config.write_text(f'[tool.hfpatch]\npatches = ["{site.patch_id}"]\n', encoding="utf-8")

    def run(self, *args: str, **env: str) -> Completed:
        return hfpatch(*args, "--config", str(self.config), env=self.site.env(**env))

    def document(self) -> dict[str, Any]:
        done = self.run("check", "--json")
        assert done.code in (0, 1), done.err
        (environment,) = done.document()["environments"]
        assert isinstance(environment, dict)
        return environment

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Each toypkg advisory's status object in check --json, by its primary id."""
        found = self.document()["advisory_statuses"]
        return {status["id"]: status for status in found if status["distribution"] == "toypkg"}

    def vex(self, *args: str, **env: str) -> dict[str, Any]:
        done = self.run("check", "--vex", *args, **env)
        assert done.code in (0, 1) and done.err == "", done.err
        document: dict[str, Any] = json.loads(done.out)
        assert openvex_faults(document) == []
        return document


@pytest.fixture
def audited(tmp_path: Path) -> Audited:
    site = make_site(tmp_path)
    name_advisories(site.team_catalog, PATCH_ID, FIXED)
    write_register(site.team_catalog)
    return Audited(site, tmp_path)


def advisory_lines(done: Completed) -> list[str]:
    """check's lines about the toypkg advisories (and what follows each: its files, its mitigation)."""
    lines, keep = [], False
    for line in done.lines:
        if line.startswith("  ") and not line.startswith("    "):
            keep = bool(re.match(r"  (CVE-2026-000\d|advisories: )", line))
        if keep:
            lines.append(line)
    return lines


# ---------------------------------------------------------------------------------------------------- check


def test_before_apply_check_names_each_advisory_and_why_it_is_open(audited: Audited) -> None:
    done = audited.run("check")
    assert done.code == 1, done.err  # toypkg-1 needs applying: the patch's own exit code, not the advisories'
    assert advisory_lines(done) == [
        f"  {FIXED[0]} ({FIXED[1]}): open: {PATCH_ID} is not applied here; run "
        f"`hfpatch apply --config {audited.config}`",
        f"  {UNFIXED}: open: upstream has no fix",
        "    mitigation: greet only names you trust",
        "  advisories: 1 not affected (-v names them)",
    ]
    verbose = advisory_lines(audited.run("check", "-v"))
    assert verbose[-1] == f"  {SCRIPT}: not-affected: toypkg 1.0 has none of the files it concerns ({SCRIPT_FILE})"


def _another_line(catalog: Path) -> str:
    """A second entry of CVE-2026-0001, written for toypkg 2.1 to 2.3 only (another line of greet's code, a form
    1.0 does not have), toypkg-1 for 1.0 to 2.0: on 1.0 it is not-covered, beside toypkg-1, which decides."""
    other = "toypkg-1-line"
    path = catalog / PATCH_ID / "patch.json"
    data = json.loads(path.read_text())
    data["releases_read"] = ["1.0", "2.0"]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    data.update(id=other, releases_read=["2.1", "2.3"])
    for file in data["files"]:
        file["known_files"] = []
        for target in file["targets"]:
            for form in target["forms"]:
                form.update(sha256="0" * 64, releases=["2.1"], lines=[])
    shutil.copytree(catalog / PATCH_ID, catalog / other)
    (catalog / other / "patch.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    for fixed in (catalog / other / "fixed").glob("*.py"):  # that line's own fixed text
        fixed.write_text(fixed.read_text(encoding="utf-8").rstrip("\n") + "  # 2.1\n", encoding="utf-8")
    return other


def test_an_entry_of_another_line_beside_the_one_that_decides_an_open_advisory_is_folded(audited: Audited) -> None:
    other = _another_line(audited.site.team_catalog)
    write_register(audited.site.team_catalog, {FIXED[0]: RECORDS[FIXED[0]] | {"entries": [PATCH_ID, other]}})
    done = hfpatch("check", env=audited.site.env())
    assert done.code == 1, done.out + done.err
    assert not [line for line in done.lines if line.startswith(f"  {other}:")], done.out
    assert re.search(r"not concerned here: .*\b1 not-covered", done.out), done.out
    assert f"  {FIXED[0]} ({FIXED[1]}): open: {PATCH_ID} is not applied here" in done.out, done.out
    assert f"  {other}: not-covered: " in hfpatch("check", "-v", env=audited.site.env()).out
    # toypkg-1 applied, the other line's entry says whose patch the file holds.
    assert hfpatch("apply", "--patch", PATCH_ID, env=audited.site.env()).code == 0
    verbose = hfpatch("check", "-v", env=audited.site.env())
    said = " ".join(line.strip() for line in verbose.lines)
    assert f"{other}: not-covered: toypkg 1.0 is older than 2.1" in said, verbose.out
    assert f"as released but for {PATCH_ID}, which hfpatch applied (RECORD agrees)" in said, verbose.out
    assert f"{FIXED[0]} ({FIXED[1]}): fixed: {PATCH_ID} is applied here" in said, verbose.out


def test_once_applied_the_advisory_is_fixed_and_folded(audited: Audited) -> None:
    assert audited.run("apply").code == 0
    done = audited.run("check")
    assert done.code == 0, done.out + done.err
    assert advisory_lines(done) == [
        f"  {UNFIXED}: open: upstream has no fix",
        "    mitigation: greet only names you trust",
        "  advisories: 1 fixed, 1 not affected (-v names them)",
    ]
    assert f"  {FIXED[0]} ({FIXED[1]}): fixed: {PATCH_ID} is applied here" in audited.run("check", "-v").out
    # --patch names the advisories of the patches named, each in full.
    named = hfpatch("check", "--patch", PATCH_ID, env=audited.site.env())
    assert advisory_lines(named) == [f"  {FIXED[0]} ({FIXED[1]}): fixed: {PATCH_ID} is applied here"]


def test_reverted_it_is_open_again(audited: Audited) -> None:
    assert audited.run("apply").code == 0
    assert audited.run("revert").code == 0
    assert audited.statuses()[FIXED[0]]["status"] == "open"
    assert audited.run("check", "--pip-audit").out == f"--ignore-vuln {SCRIPT}\n"


def test_an_interrupted_apply_leaves_it_open(audited: Audited) -> None:
    assert audited.run("apply", HFPATCH_FAULT="apply:after-write").code != 0  # killed with the file written
    status = audited.statuses()[FIXED[0]]
    assert (status["status"], status["reason"]) == ("open", "not-applied")
    assert status["entries"] == [{"id": PATCH_ID, "condition": "incomplete", "targets_absent": False}]
    assert "not finished" in status["message"]
    assert FIXED[0] not in audited.run("check", "--pip-audit").out


def test_quiet_names_only_what_apply_closes(audited: Audited) -> None:
    assert advisory_lines(audited.run("check", "-q")) == [
        f"  {FIXED[0]} ({FIXED[1]}): open: {PATCH_ID} is not applied here; run "
        f"`hfpatch apply --config {audited.config}`"
    ]
    assert audited.run("apply").code == 0
    assert audited.run("check", "-q").out == ""


def test_a_script_advisory_names_the_installed_files_it_concerns(audited: Audited) -> None:
    (audited.site.root / SCRIPT_FILE).write_text("import pickle\n", encoding="utf-8")
    lines = advisory_lines(audited.run("check"))
    assert lines[-2:] == [f"  {SCRIPT}: open: upstream has no fix", f"    file: {SCRIPT_FILE}"]
    status = audited.statuses()[SCRIPT]
    assert (status["status"], status["reason"], status["files"]) == ("open", "no-upstream-fix", [SCRIPT_FILE])
    assert audited.run("check", "--pip-audit").out == ""


def test_a_script_upstream_stopped_shipping_says_so_where_it_is_still_installed(audited: Audited) -> None:
    """A record of fix "packaging" (transformers' conversion scripts, gone from wheels since 4.48.0): open where a
    file is installed, with the release that stopped shipping it, never "fixed in no release" nor "no fix"."""
    write_register(audited.site.team_catalog, {SCRIPT: RECORDS[SCRIPT] | {"fix": "packaging", "fixed_in": "2.0"}})
    (audited.site.root / SCRIPT_FILE).write_text("import pickle\n", encoding="utf-8")
    lines = advisory_lines(audited.run("check"))
    assert lines[-2:] == [
        f"  {SCRIPT}: open: upstream stopped shipping the files in 2.0; no entry moves them aside in toypkg 1.0",
        f"    file: {SCRIPT_FILE}",
    ]
    assert audited.statuses()[SCRIPT]["reason"] == "not-covered"


# ------------------------------------------------------------------------------------------------- --json


def test_json_carries_every_status_with_its_fields(audited: Audited) -> None:
    environment = audited.document()
    assert environment["advisories"] == {
        "fixed": [],
        "open": [*FIXED, UNFIXED],
        "not_affected": [SCRIPT],
        "unknown": [],
    }
    statuses = audited.statuses()
    assert list(statuses) == [FIXED[0], UNFIXED, SCRIPT]  # open first, then not affected
    fixed = statuses[FIXED[0]]
    assert fixed == {
        "id": FIXED[0],
        "ids": FIXED,
        "title": "greet(None) crashes whoever greets nobody",
        "distribution": "toypkg",
        "version": "1.0",
        "status": "open",
        "reason": "not-applied",
        "message": f"{PATCH_ID} is not applied here; run `hfpatch apply --config {audited.config}`",
        "action": f"Run `hfpatch apply --config {audited.config}` in this environment.",
        "listed": True,
        "listed_range": "<2.0",
        "fixed_in": "2.0",
        "fix": "source",
        "upstream": ["https://example.invalid/toypkg/pull/1"],
        "entries": [{"id": PATCH_ID, "condition": "needs-patch", "targets_absent": False}],
        "partial_entries": [],
        "files": [],
        "pip_audit_ignores": False,
        "record": str(audited.site.team_catalog / "advisories" / f"{FIXED[0]}.json"),
    }
    assert (statuses[UNFIXED]["reason"], statuses[UNFIXED]["action"]) == (
        "no-upstream-fix",
        "greet only names you trust",
    )
    assert (statuses[SCRIPT]["status"], statuses[SCRIPT]["reason"]) == ("not-affected", "component-not-present")
    (patch,) = environment["patches"]
    assert (patch["advisories"], patch["advisory_status"]) == (FIXED, "open")


def test_json_once_applied(audited: Audited) -> None:
    assert audited.run("apply").code == 0
    environment = audited.document()
    assert environment["advisories"]["fixed"] == FIXED
    assert environment["patches"][0]["advisory_status"] == "fixed"
    fixed = audited.statuses()[FIXED[0]]
    assert (fixed["status"], fixed["reason"], fixed["action"], fixed["pip_audit_ignores"]) == (
        "fixed",
        "patch-applied",
        None,
        True,
    )


def test_a_release_with_the_fix_is_fixed_upstream_and_pip_audit_leaves_it(tmp_path: Path) -> None:
    """toypkg 2.0 has the fix: the advisory is fixed, by the release, and pip-audit does not list 2.0 anyway."""
    site = make_site(tmp_path, version="2.0")
    name_advisories(site.team_catalog, PATCH_ID, FIXED)
    write_register(site.team_catalog)
    audited = Audited(site, tmp_path)
    fixed = audited.statuses()[FIXED[0]]
    assert (fixed["status"], fixed["reason"], fixed["listed"]) == ("fixed", "release-has-fix", False)
    assert audited.run("check", "--pip-audit").out == f"--ignore-vuln {SCRIPT}\n"


def test_an_entry_s_own_advisories_without_a_record_are_fixed_where_it_is_applied(tmp_path: Path) -> None:
    """A team's entry that names its advisories and no record: open where it needs applying, fixed once applied;
    pip-audit then ignores them (nothing else is said of them: no range is known)."""
    site = make_site(tmp_path)
    name_advisories(site.team_catalog, PATCH_ID, ["CVE-2026-0009"])
    before = json.loads(site.run("check", "--json").out)["environments"][0]
    assert before["advisories"]["open"] == ["CVE-2026-0009"]
    assert site.run("check", "--pip-audit").out == ""
    assert site.run("apply").code == 0
    assert site.run("check", "--pip-audit").out == "--ignore-vuln CVE-2026-0009\n"
    (status,) = json.loads(site.run("check", "--json").out)["environments"][0]["advisory_statuses"]
    assert (status["status"], status["record"], status["listed"]) == ("fixed", None, None)


def test_an_entry_the_command_did_not_choose_is_checked_for_the_advisory(tmp_path: Path) -> None:
    """[tool.hfpatch] requires toypkg-a; the register's advisory is toypkg-b's: toypkg-b is checked read-only, and
    the advice applies it by name."""
    site = make_composed_site(tmp_path)
    name_advisories(site.team_catalog, B_ID, FIXED)
    write_register(site.team_catalog, {FIXED[0]: RECORDS[FIXED[0]] | {"entries": [B_ID]}})
    audited = Audited(site, tmp_path)
    done = audited.run("check")
    patches = [line.split(":")[0].strip() for line in done.lines if re.match(r"  [a-z]", line)]
    assert patches == [A_ID]  # the patch the file requires; toypkg-b is only read
    assert advisory_lines(done) == [
        f"  {FIXED[0]} ({FIXED[1]}): open: {B_ID} is not applied here; run "
        f"`hfpatch apply --patch {B_ID} --config {audited.config}`"
    ]


@pytest.mark.parametrize("package", [None, "toyx"])
def test_a_distribution_no_entry_names_is_found_by_its_package(audited: Audited, package: str | None) -> None:
    """toy-extras 3.0 installs the package toyx: a record of it and no entry finds it where it says so."""
    files = {"toyx/__init__.py": b""}
    write_files(
        audited.site.root,
        {**files, "toy_extras-3.0.dist-info/METADATA": b"Name: toy-extras\nVersion: 3.0\n\n"},
        "toy_extras-3.0.dist-info",
    )
    record: dict[str, Any] = {"ids": ["CVE-2026-0007"], "distribution": "toy-extras", "title": "toyx trusts its input"}
    record |= {"listed": "", "fixed_in": None, "fix": "none", "upstream": [], "entries": [], "files": []}
    write_register(audited.site.team_catalog, {"CVE-2026-0007": record | ({"package": package} if package else {})})
    found = [status for status in audited.document()["advisory_statuses"] if status["distribution"] == "toy-extras"]
    if package is None:
        assert found == []  # "toy_extras" is no package here: nothing of toy-extras is installed, as far as it can tell
    else:
        assert [(status["id"], status["version"], status["status"]) for status in found] == [
            ("CVE-2026-0007", "3.0", "open")
        ]


# -------------------------------------------------------------------------------------------------- --pip-audit


def test_pip_audit_ignores_what_is_fixed_or_not_there_and_never_what_is_open(audited: Audited) -> None:
    options = audited.run("check", "--pip-audit")
    assert (options.code, options.out, options.err) == (1, f"--ignore-vuln {SCRIPT}\n", "")
    assert audited.run("apply").code == 0
    options = audited.run("check", "--pip-audit")
    assert options.code == 0, options.err
    assert options.out == f"--ignore-vuln {FIXED[0]} --ignore-vuln {FIXED[1]} --ignore-vuln {SCRIPT}\n"
    # As a CI line's shell passes them on: `pip-audit $(hfpatch check --pip-audit)`.
    command = [sys.executable, "-m", "hfpatch", "check", "--pip-audit", "--config", str(audited.config)]
    words = run(["bash", "-c", 'printf "%s\\n" $("$@")', "bash", *command], env=audited.site.env())
    assert words.out.split("\n")[:-1] == ["--ignore-vuln", FIXED[0], "--ignore-vuln", FIXED[1], "--ignore-vuln", SCRIPT]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("--pip-audit", "--python", sys.executable, "--python", sys.executable), "one --python at most"),
        pytest.param(("--vex", "--python", sys.executable, "--python", sys.executable), "one --python at most"),
        pytest.param(("--vex", "--json"), "check --vex prints its own document; leave out --json"),
        pytest.param(("--vex", "--pip-audit"), "not allowed with argument"),
        pytest.param(("--vex-product", "pkg:oci/app"), "--vex-product and --vex-author go with --vex"),
        pytest.param(("--vex", "--vex-product", "my app"), "--vex-product 'my app' is not an IRI"),
        pytest.param(("--vex", "--vex-author", " "), "--vex-author is empty"),
    ],
)
def test_scanner_options_that_do_not_fit_are_one_line_exit_2(
    audited: Audited, args: tuple[str, ...], message: str
) -> None:
    done = audited.run("check", *args)
    assert done.code == 2, done.out + done.err
    # A --json caller reads one document on stdout, the error's.
    assert done.document()["error"] in done.err if "--json" in args else done.out == "", done.out
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: ") and message in line, line


# -------------------------------------------------------------------------------------------------------- --vex


def test_vex_states_each_advisory_for_this_environment(audited: Audited) -> None:
    document = audited.vex()
    statements = {statement["vulnerability"]["name"]: statement for statement in document["statements"]}
    assert {name: statement["status"] for name, statement in statements.items()} == {
        FIXED[0]: "affected",
        UNFIXED: "affected",
        SCRIPT: "not_affected",
    }
    fixed = statements[FIXED[0]]
    assert fixed["vulnerability"]["aliases"] == [FIXED[1]]
    assert fixed["action_statement"] == f"Run `hfpatch apply --config {audited.config}` in this environment."
    assert statements[UNFIXED]["action_statement"] == "greet only names you trust"
    assert statements[SCRIPT]["justification"] == "component_not_present"
    # Scoped to this environment: the product is the interpreter, the installed distribution its subcomponent.
    environment = Path(sys.executable).absolute().as_uri()
    assert fixed["products"] == [{"@id": environment, "subcomponents": [{"@id": "pkg:pypi/toypkg@1.0"}]}]
    assert document["tooling"].startswith("hfpatch ") and document["author"] == "unknown"


def test_vex_after_apply_and_after_revert(audited: Audited) -> None:
    assert audited.run("apply").code == 0
    applied = {each["vulnerability"]["name"]: each for each in audited.vex()["statements"]}
    assert applied[FIXED[0]]["status"] == "fixed"
    assert applied[FIXED[0]]["status_notes"] == f"{PATCH_ID} is applied here"
    assert "action_statement" not in applied[FIXED[0]]
    assert audited.run("revert").code == 0
    reverted = {each["vulnerability"]["name"]: each for each in audited.vex()["statements"]}
    assert reverted[FIXED[0]]["status"] == "affected"


def test_vex_names_the_products_a_scanner_knows_the_environment_by(audited: Audited) -> None:
    image = "pkg:oci/app@sha256%3A" + "ab" * 32
    document = audited.vex("--vex-product", image, "--vex-product", "pkg:generic/app@1.0", "--vex-author", "Team A")
    statement = document["statements"][0]
    component = {"@id": "pkg:pypi/toypkg@1.0"}
    assert statement["products"] == [
        {"@id": image, "subcomponents": [component]},
        {"@id": "pkg:generic/app@1.0", "subcomponents": [component]},
    ]
    assert document["author"] == "Team A"
    # As Trivy and Grype match them (openvex/go-vex): a scan that meets toypkg 1.0 under the image matches; one that
    # meets it anywhere else, with the package itself as the product, does not.
    assert scanner_matches(statement, product=image, subcomponent="pkg:pypi/toypkg@1.0")
    assert not scanner_matches(statement, product="pkg:pypi/toypkg@1.0", subcomponent="")
    assert not scanner_matches(statement, product="pkg:oci/other@sha256%3A00", subcomponent="pkg:pypi/toypkg@1.0")


def test_vex_is_the_same_document_for_the_same_facts_at_the_same_time(audited: Audited) -> None:
    """A reproducible build sets SOURCE_DATE_EPOCH: the document's time is that one, and its @id follows its content."""
    first, second = audited.vex(SOURCE_DATE_EPOCH="1767225600"), audited.vex(SOURCE_DATE_EPOCH="1767225600")
    assert first == second and first["timestamp"] == "2026-01-01T00:00:00Z"
    assert audited.run("apply").code == 0
    assert audited.vex(SOURCE_DATE_EPOCH="1767225600")["@id"] != first["@id"]


def test_vex_of_an_environment_with_no_advisory_has_no_statement(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    done = site.run("check", "--vex")
    document = json.loads(done.out)
    assert (done.code, document["statements"], openvex_faults(document)) == (1, [], [])


# --------------------------------------------------------------------------------------------- refusals


def test_a_record_naming_an_entry_no_catalog_has_is_refused(audited: Audited) -> None:
    write_register(audited.site.team_catalog, {FIXED[0]: RECORDS[FIXED[0]] | {"entries": [PATCH_ID, "toypkg-9"]}})
    done = audited.run("check")
    assert (done.code, done.out) == (2, ""), done.out
    record = audited.site.team_catalog / "advisories" / f"{FIXED[0]}.json"
    assert done.err == f"hfpatch: error: {record} names the entry toypkg-9, which no catalog given has.\n"


def test_an_entry_claiming_an_advisory_its_record_does_not_give_it_is_refused(audited: Audited) -> None:
    write_register(audited.site.team_catalog, {FIXED[0]: RECORDS[FIXED[0]] | {"entries": []}})
    done = audited.run("check", "--json")
    assert done.code == 2
    assert (
        f"{PATCH_ID} names {FIXED[0]}, whose record" in done.err and "neither entries nor partial_entries" in done.err
    )
    assert done.document()["error"] is not None


def test_a_bad_record_is_refused_before_check_runs(audited: Audited) -> None:
    path = audited.site.team_catalog / "advisories" / f"{UNFIXED}.json"
    path.write_text(path.read_text().replace('"fix": "none"', '"fix": "unknown"'))
    done = audited.run("check")
    assert (done.code, done.out) == (2, "")
    assert (
        done.err == f"hfpatch: error: {path} is not a valid advisory record: fix 'unknown' is none of 'source', "
        "'packaging', 'none'.\n"
    )


BREAKS = [
    pytest.param(lambda d: d.pop("@context"), "@context None", id="no-context"),
    pytest.param(lambda d: d.update({"@id": "vex 1"}), "@id is not an IRI", id="id-not-iri"),
    pytest.param(lambda d: d.pop("author"), "no author", id="no-author"),
    pytest.param(lambda d: d.update(timestamp="yesterday"), "timestamp", id="timestamp"),
    pytest.param(lambda d: d.update(version=0), "version", id="version"),
    pytest.param(lambda d: d["statements"][0]["vulnerability"].pop("name"), "vulnerability has no name", id="name"),
    pytest.param(lambda d: d["statements"][0].update(products=[]), "a product that cannot be addressed", id="product"),
    pytest.param(lambda d: d["statements"][0].update(status="patched"), "status 'patched'", id="status"),
    pytest.param(lambda d: d["statements"][0].pop("action_statement"), "affected without an action", id="action"),
    pytest.param(
        lambda d: [d["statements"][2].pop(key) for key in ("justification", "impact_statement")],
        "not_affected without a justification",
        id="justification",
    ),
]


@pytest.mark.parametrize(("breaks", "fault"), BREAKS)
def test_the_specification_s_checks_catch_what_it_requires(audited: Audited, breaks: Any, fault: str) -> None:
    document = audited.vex()
    breaks(document)
    assert any(fault in each for each in openvex_faults(document)), openvex_faults(document)
