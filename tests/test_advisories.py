"""Security advisories: an entry names those its fix closes; list, check and check --json say where each stands in
each environment, and `check --pip-audit` gives pip-audit `--ignore-vuln` for exactly those fixed there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import Site, hfpatch, run
from toy import PATCH_ID, make_site

ADVISORIES = ["CVE-2026-0001", "GHSA-2345-6789-cfgh"]


def _with_advisories(site: Site) -> Site:
    path = site.team_catalog / PATCH_ID / "patch.json"
    data = json.loads(path.read_text())
    # The toy entry in the schema that has advisories: its file's keys under files.
    file = {key: data.pop(key) for key in ("module", "file", "targets", "known_files")}
    data.update(schema=3, files=[file], advisories=ADVISORIES)
    path.write_text(json.dumps(data, indent=2))
    return site


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return _with_advisories(make_site(tmp_path))


def _environment(site: Site) -> dict[str, object]:
    done = site.run("check", "--json")
    (environment,) = json.loads(done.out)["environments"]
    assert isinstance(environment, dict)
    return environment


def test_before_apply_the_advisories_are_open_and_pip_audit_ignores_none(site: Site) -> None:
    environment = _environment(site)
    assert environment["advisories"] == {"fixed": [], "open": ADVISORIES}
    patches = environment["patches"]
    assert isinstance(patches, list) and len(patches) == 1
    patch = patches[0]
    assert (patch["advisories"], patch["advisory_status"]) == (ADVISORIES, "open")
    text = site.run("check")
    assert f"({', '.join(ADVISORIES)} open here)" in text.out
    options = site.run("check", "--pip-audit")
    assert (options.code, options.out, options.err) == (1, "", "")


def test_once_applied_pip_audit_ignores_exactly_the_advisories_fixed_here(site: Site) -> None:
    assert site.run("apply").code == 0
    environment = _environment(site)
    assert environment["advisories"] == {"fixed": ADVISORIES, "open": []}
    assert f"({', '.join(ADVISORIES)} fixed here)" in site.run("check").out
    options = site.run("check", "--pip-audit")
    assert options.code == 0, options.err
    assert options.out == "--ignore-vuln CVE-2026-0001 --ignore-vuln GHSA-2345-6789-cfgh\n"
    # As a CI line's shell passes them on: `pip-audit $(hfpatch check --pip-audit)`.
    words = run(["bash", "-c", 'printf "%s\\n" $("$@")', "bash", *site.command("check", "--pip-audit")], env=site.env())
    assert words.out.split("\n")[:-1] == ["--ignore-vuln", ADVISORIES[0], "--ignore-vuln", ADVISORIES[1]]


def test_an_interrupted_patch_leaves_its_advisories_open(site: Site) -> None:
    assert site.run("apply", HFPATCH_FAULT="apply:after-write").code != 0  # killed with the file written
    assert _environment(site)["advisories"] == {"fixed": [], "open": ADVISORIES}
    assert site.run("check", "--pip-audit").out == ""


def test_a_release_fixed_upstream_is_none_of_hfpatch_s_to_say(tmp_path: Path) -> None:
    """pip-audit knows the release by its version; hfpatch tells nothing of an advisory it did not close."""
    fixed = _with_advisories(make_site(tmp_path, version="2.0"))
    environment = _environment(fixed)
    assert environment["advisories"] == {"fixed": [], "open": []}
    assert fixed.run("check", "--pip-audit").out == ""


def test_pip_audit_options_are_for_one_environment(site: Site) -> None:
    done = hfpatch(
        "check", "--pip-audit", "--python", sys.executable, patch=PATCH_ID, python=sys.executable, env=site.env()
    )
    assert done.code == 2
    assert done.err.strip().endswith("give one --python at most") and done.out == ""


def test_list_names_the_advisories_of_each_patch(site: Site) -> None:
    listed = site.run("list")
    assert listed.listing()[PATCH_ID]["what it fixes"] == f"greet(None) fails (fixes {', '.join(ADVISORIES)})"
    (environment,) = json.loads(site.run("list", "--json").out)["environments"]
    assert environment["patches"][0]["advisories"] == ADVISORIES
