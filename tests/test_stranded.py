"""A patch applied from a catalog that a later command is not given: every command reports it, revert puts the
original back from hfpatch's state and backup alone (or says why not), and nothing exits 0 leaving it unsaid.

Real hfpatch processes over toypkg (tests/toy.py): `apply --catalog DIR --patch toypkg-1`, then commands without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Completed, Site, clean_env, hfpatch, python_path, tree
from toy import BUGGY_MODULE, FIXED_MODULE, PATCH_ID, make_site

GIVE = (
    f"no catalog given has {PATCH_ID}, which hfpatch's state holds in toypkg/core.py; give --catalog DIR, the "
    "catalog it was applied from, to"
)


def without_catalog(site: Site, *args: str) -> Completed:
    """hfpatch on the site's interpreter path, given neither the site's catalog nor a patch: the built-in one only."""
    return hfpatch(*args, "--no-config", env=clean_env(PYTHONPATH=python_path(site.root)))


@pytest.fixture
def applied(tmp_path: Path) -> Site:
    site = make_site(tmp_path)
    done = without_catalog(site, "apply", "--catalog", str(site.team_catalog), "--patch", PATCH_ID)
    assert done.code == 0, done.out + done.err
    assert site.file.read_text(encoding="utf-8") == FIXED_MODULE
    return site


@pytest.mark.parametrize(
    ("command", "code", "to"),
    [("check", 1, "check"), ("verify", 1, "verify"), ("apply", 0, "apply"), ("list", 0, "check")],
)
def test_every_command_reports_a_patch_no_catalog_given_has(applied: Site, command: str, code: int, to: str) -> None:
    done = without_catalog(applied, command)
    assert done.code == code, done.out + done.err
    assert f"{PATCH_ID}: applied: {GIVE} {to} it" in done.text, done.out
    assert applied.file.read_text(encoding="utf-8") == FIXED_MODULE


def test_quiet_check_still_reports_it(applied: Site) -> None:
    done = without_catalog(applied, "check", "-q")
    assert done.code == 1
    assert GIVE in done.text


def test_revert_puts_the_original_back_from_the_state_and_backup_alone(applied: Site) -> None:
    record = make_site(applied.root.parent / "pristine").record.read_bytes()
    done = without_catalog(applied, "revert", "-q")
    assert (done.code, done.out, done.err) == (0, "", "")
    assert applied.file.read_text(encoding="utf-8") == BUGGY_MODULE
    assert applied.record.read_bytes() == record
    assert not applied.state_dir.exists()
    assert without_catalog(applied, "check").code == 2  # nothing installed the built-in catalog is for, as before


def test_revert_refuses_an_edited_file_and_keeps_everything(applied: Site) -> None:
    applied.file.write_text(FIXED_MODULE + "# a local edit\n", encoding="utf-8")
    before = tree(applied.root)
    done = without_catalog(applied, "revert")
    assert done.code == 2, done.out + done.err
    assert f"{PATCH_ID}: refused:" in done.text and "was changed since hfpatch applied" in done.text
    assert tree(applied.root) == before


def test_apply_cannot_patch_it_again_without_its_entry(applied: Site) -> None:
    applied.file.write_text(BUGGY_MODULE, encoding="utf-8")  # a reinstall of the same release put the original back
    done = without_catalog(applied, "apply")
    assert done.code == 2, done.out + done.err
    assert f"{PATCH_ID}: refused: {GIVE} apply it" in done.text
