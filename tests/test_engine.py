"""Every command end to end on the toy distribution: hfpatch as real processes acting on a site of real files.

A few runs go through `cli.main` in process; they name the interpreter with --python so that the site, which only
the environment's PYTHONPATH puts on the path, is what they act on.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import py_compile
import shutil
import sys
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from support import Completed, Site, record_hash, tree, write_files
from toy import (
    BUGGY_GREET,
    BUGGY_MODULE,
    FIXED_GREET,
    FIXED_MODULE,
    MODULE,
    PATCH_ID,
    entry_data,
    make_site,
    write_catalog,
)

import hfpatch
from hfpatch import cli

BUGGY, FIXED = BUGGY_MODULE.encode(), FIXED_MODULE.encode()


def result(done: Completed) -> tuple[str, str]:
    """The label and sentence of the one result line, `  toypkg-1: <label>: <sentence>`, held to the output rules:
    results go to stdout only, and the sentence does not say its label again."""
    assert done.err == "", done.err
    prefix = f"  {PATCH_ID}: "
    (line,) = [line for line in done.lines if line.startswith(prefix)]
    label, sentence = line[len(prefix) :].split(": ", 1)
    words = " ".join(word for word in sentence.lower().split() if "/" not in word)  # paths may hold any word
    assert label not in words and label.replace("-", " ") not in words, line
    return label, sentence


def entry(done: Completed) -> dict[str, Any]:
    """The patch's entry of the one JSON document on stdout (json.loads refuses anything around it)."""
    assert done.err == "", done.err
    document = json.loads(done.out)
    assert document["schema"] == 3
    (environment,) = document["environments"]
    (found,) = environment["patches"]
    assert isinstance(found, dict)
    return found


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return make_site(tmp_path)


@pytest.fixture
def applied(site: Site) -> Site:
    done = site.run("apply")
    assert done.code == 0, done.out + done.err
    return site


# ----------------------------------------------------------------------------------------------------- the bug


def test_check_finds_the_bug_and_names_the_upstream_fix_and_its_release(site: Site) -> None:
    before = tree(site.root)
    done = site.run("check")
    assert done.code == 1
    label, sentence = result(done)
    assert label == "needs-patch"
    assert "example/toypkg#1" in sentence and "fixed in 2.0" in sentence
    assert tree(site.root) == before


@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600], ids=["0644", "0755", "0600"])
def test_apply_makes_the_file_the_fixed_module_and_revert_the_original_both_keeping_its_mode(
    site: Site, mode: int
) -> None:
    site.file.chmod(mode)
    done = site.run("apply")
    assert done.code == 0, done.out + done.err
    assert result(done)[0] == "patched"
    assert site.file.read_bytes() == FIXED
    assert site.file.stat().st_mode & 0o7777 == mode
    assert site.run("revert").code == 0
    assert site.file.read_bytes() == BUGGY
    assert site.file.stat().st_mode & 0o7777 == mode


def test_apply_keeps_a_byte_exact_backup_and_a_state_of_what_it_did(applied: Site) -> None:
    assert applied.backup.read_bytes() == BUGGY
    saved = json.loads(applied.state.read_text(encoding="utf-8"))
    assert saved["schema"] == 2
    assert saved["phase"] == "applied"
    assert saved["patch"] == PATCH_ID
    assert saved["files"] == [{"file": MODULE, "before_sha256": sha256(BUGGY), "after_sha256": sha256(FIXED)}]
    assert (saved["distribution"], saved["version"], saved["dist_info"]) == ("toypkg", "1.0", "toypkg-1.0.dist-info")
    assert saved["hfpatch_version"] == hfpatch.__version__
    held = json.loads(applied.file_state.read_text(encoding="utf-8"))
    assert (held["schema"], held["file"], held["patches"]) == (2, MODULE, [PATCH_ID])
    assert (held["original_sha256"], held["sha256"]) == (sha256(BUGGY), sha256(FIXED))
    assert held["record_line_before"] == f"{MODULE},{record_hash(BUGGY)},{len(BUGGY)}"


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_apply_changes_only_the_files_RECORD_line_and_revert_puts_RECORD_back_byte_for_byte(
    tmp_path: Path, newline: str
) -> None:
    site = make_site(tmp_path, record_newline=newline)
    before = site.record.read_bytes()
    old_line = f"{MODULE},{record_hash(BUGGY)},{len(BUGGY)}{newline}".encode()
    new_line = f"{MODULE},{record_hash(FIXED)},{len(FIXED)}{newline}".encode()
    assert before.count(old_line) == 1
    assert site.run("apply").code == 0
    assert site.record.read_bytes() == before.replace(old_line, new_line)
    done = site.run("revert")
    assert done.code == 0, done.out + done.err
    assert result(done)[0] == "reverted"
    assert site.record.read_bytes() == before
    assert site.file.read_bytes() == BUGGY
    assert not site.holds_state


def test_an_apply_under_a_misspelt_distribution_is_finished_and_reverted_once_the_entry_is_right(
    tmp_path: Path,
) -> None:
    """The entry names "toypkgg": hfpatch finds the module but no metadata, says so, and patches the file alone. With
    the name put right, the state is no stale one (nothing was reinstalled): check asks to finish, apply updates
    RECORD, and revert puts file and RECORD back byte for byte."""
    site = make_site(tmp_path)
    entry = site.team_catalog / PATCH_ID / "patch.json"
    right = entry.read_text(encoding="utf-8")
    record = site.record.read_bytes()
    entry.write_text(right.replace('"distribution": "toypkg"', '"distribution": "toypkgg"'), encoding="utf-8")
    done = site.run("apply")
    assert done.code == 0, done.out + done.err
    assert "note: " in done.text and "has no toypkgg-*.dist-info" in done.text
    assert site.file.read_bytes() == FIXED and site.record.read_bytes() == record
    entry.write_text(right, encoding="utf-8")
    checked = site.run("check")
    assert (checked.code, result(checked)[0]) == (1, "incomplete"), checked.out
    assert "RECORD does not match the file; run `hfpatch apply --patch toypkg-1` to finish" in checked.flat
    assert site.run("apply").code == 0
    assert site.run("check").code == 0
    reverted = site.run("revert")
    assert (reverted.code, result(reverted)[0]) == (0, "reverted"), reverted.out
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY, record)


# ------------------------------------------------------------------------------------------------- idempotence


def test_a_second_apply_says_applied_and_writes_nothing(applied: Site) -> None:
    before = tree(applied.root)
    done = applied.run("apply")
    assert done.code == 0
    assert result(done)[0] == "applied"
    assert tree(applied.root) == before
    check = applied.run("check")
    assert (check.code, result(check)[0]) == (0, "applied")


def test_a_second_revert_has_nothing_to_revert_and_writes_nothing(applied: Site) -> None:
    assert applied.run("revert").code == 0
    before = tree(applied.root)
    done = applied.run("revert")
    assert done.code == 0
    assert "nothing to revert" in result(done)[1]
    assert tree(applied.root) == before


def test_verify_finds_the_bug_live_before_apply_and_the_fix_working_after(site: Site) -> None:
    before = site.run("verify")
    assert before.code == 1
    label, sentence = result(before)
    assert label == "verify-failed"
    assert "TypeError" in sentence
    assert site.run("apply").code == 0
    after = site.run("verify")
    assert (after.code, result(after)[0]) == (0, "verified")


# ---------------------------------------------------------------------------------------------------- dry runs


def _changed_lines(diff: str, sign: str) -> list[str]:
    return [line[1:] for line in diff.splitlines() if line.startswith(sign) and not line.startswith(sign * 3)]


def test_apply_dry_run_prints_the_diff_and_writes_nothing(site: Site) -> None:
    before = tree(site.root)
    done = site.run("apply", "--dry-run")
    assert done.code == 0
    assert result(done)[0] == "would-apply"
    assert f"--- a/{MODULE}\n+++ b/{MODULE}\n" in done.text
    added = [line for line in FIXED_GREET.splitlines() if line not in BUGGY_GREET.splitlines()]
    assert (_changed_lines(done.out, "+"), _changed_lines(done.out, "-")) == (added, [])
    assert tree(site.root) == before


def test_revert_dry_run_prints_the_diff_back_and_writes_nothing(applied: Site) -> None:
    before = tree(applied.root)
    done = applied.run("revert", "--dry-run")
    assert done.code == 0
    assert result(done)[0] == "would-revert"
    removed = [line for line in FIXED_GREET.splitlines() if line not in BUGGY_GREET.splitlines()]
    assert (_changed_lines(done.out, "+"), _changed_lines(done.out, "-")) == ([], removed)
    assert tree(applied.root) == before


# --------------------------------------------------------------------------------------------- other releases


def test_a_release_with_the_upstream_fix_is_left_alone_and_can_fail_as_obsolete(tmp_path: Path) -> None:
    site = make_site(tmp_path, version="2.0")
    before = tree(site.root)
    check = site.run("check")
    assert check.code == 0
    label, sentence = result(check)
    assert label == "fixed-upstream"
    assert "obsolete" in sentence
    obsolete = site.run("check", "--fail-on-obsolete")
    assert (obsolete.code, result(obsolete)[0]) == (1, "fixed-upstream")
    apply = site.run("apply")
    assert apply.code == 0
    assert tree(site.root) == before


@pytest.mark.parametrize("command", ["apply", "revert"])
def test_a_state_left_from_an_older_release_is_noted_and_cleared(tmp_path: Path, command: str) -> None:
    old = make_site(tmp_path / "old")
    assert old.run("apply").code == 0
    upgraded = make_site(tmp_path / "new", version="2.0")
    shutil.copytree(old.state_dir, upgraded.state_dir)
    file, record = upgraded.file.read_bytes(), upgraded.record.read_bytes()
    check = upgraded.run("check")
    assert check.code == 0
    assert "note: stale state: hfpatch patched toypkg 1.0, and 2.0 is installed now" in check.text
    done = upgraded.run(command)
    assert done.code == 0, done.out + done.err
    result(done)
    assert not upgraded.holds_state
    assert (upgraded.file.read_bytes(), upgraded.record.read_bytes()) == (file, record)
    again = upgraded.run("check")
    assert (again.code, "note:" in again.text) == (0, False)


def test_revert_clears_a_stale_state_where_the_new_release_no_longer_has_the_file(tmp_path: Path) -> None:
    """Upgraded to a 3.0 that moved the module (its RECORD does not list the file): nothing there concerns the patch,
    yet the state is another install's, and revert clears it without writing the old backup anywhere."""
    site = make_site(tmp_path)
    assert site.run("apply").code == 0
    shutil.rmtree(site.file.parent)
    shutil.rmtree(site.dist_info)
    files = {"toypkg/__init__.py": b"", "toypkg/greeting.py": b"GREETING = 'Hello'\n"}
    files["toypkg-3.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: toypkg\nVersion: 3.0\n\n"
    write_files(site.root, files, "toypkg-3.0.dist-info")
    check = site.run("check")
    assert (check.code, result(check)[0]) == (0, "not-applicable"), check.out
    assert "toypkg 3.0 has no toypkg/core.py (its RECORD does not list it)" in check.text
    assert "note: stale state: hfpatch patched toypkg 1.0, and 3.0 is installed now" in check.text
    package = tree(site.root / "toypkg")
    done = site.run("revert")
    assert (done.code, result(done)[0]) == (0, "cleared-stale"), done.out + done.err
    assert not (site.state_dir / PATCH_ID).exists()
    assert tree(site.root / "toypkg") == package and not site.file.exists()


def test_revert_clears_a_stale_state_first_where_the_new_release_s_file_is_missing(tmp_path: Path) -> None:
    """Upgraded to a 3.0 whose RECORD lists the file, gone from the disk: check calls that an error (reinstall), yet
    the state is another install's, and revert clears it before it judges any file, writing nothing else."""
    site = make_site(tmp_path)
    assert site.run("apply").code == 0
    shutil.rmtree(site.file.parent)
    shutil.rmtree(site.dist_info)
    files = {"toypkg/__init__.py": b"", site.relative_file: b"GREETING = 'Hello'\n"}
    files["toypkg-3.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: toypkg\nVersion: 3.0\n\n"
    write_files(site.root, files, "toypkg-3.0.dist-info")
    site.file.unlink()
    check = site.run("check")
    assert (check.code, result(check)[0]) == (2, "error"), check.out + check.err
    package = tree(site.root / "toypkg")
    done = site.run("revert")
    assert (done.code, result(done)[0]) == (0, "cleared-stale"), done.out + done.err
    assert not (site.state_dir / PATCH_ID).exists()
    assert tree(site.root / "toypkg") == package and not site.file.exists()


# ------------------------------------------------------------------------------------- changed behind its back


def test_a_file_edited_after_apply_is_edited_for_every_command_and_only_force_reverts_it(site: Site) -> None:
    record = site.record.read_bytes()
    assert site.run("apply").code == 0
    site.file.write_bytes(FIXED + b"# a local edit\n")
    before = tree(site.root)
    for command in ("apply", "check", "revert"):
        found = entry(site.run(command, "--json"))
        assert (found["condition"], found["exit_code"]) == ("edited", 2), command
    refused = site.run("revert")
    assert refused.code == 2
    assert result(refused)[0] == "refused"
    assert tree(site.root) == before
    forced = site.run("revert", "--force")
    assert forced.code == 0, forced.out + forced.err
    assert site.file.read_bytes() == BUGGY
    assert site.record.read_bytes() == record
    assert not site.holds_state


def test_a_patch_dropped_by_a_reinstall_is_caught_and_applied_again(site: Site) -> None:
    record = site.record.read_bytes()
    assert site.run("apply").code == 0
    site.file.write_bytes(BUGGY)  # what `pip install --force-reinstall` of the same release leaves
    site.record.write_bytes(record)
    check = site.run("check")
    assert (check.code, result(check)[0]) == (1, "dropped")
    apply = site.run("apply")
    assert (apply.code, result(apply)[0]) == (0, "patched")
    assert site.file.read_bytes() == FIXED
    assert site.run("check").code == 0


@pytest.mark.parametrize("loss", ["missing", "damaged"])
def test_revert_of_a_file_that_holds_the_original_again_needs_no_backup(site: Site, loss: str) -> None:
    """A reinstall put the original back (dropped), and the backup is lost: there is nothing to restore, so revert
    clears the state rather than refuse for want of a backup, and touches neither file nor RECORD."""
    record = site.record.read_bytes()
    assert site.run("apply").code == 0
    site.file.write_bytes(BUGGY)
    site.record.write_bytes(record)
    if loss == "missing":
        site.backup.unlink()
    else:
        site.backup.write_bytes(BUGGY + b"# damaged\n")
    assert result(site.run("check"))[0] == "dropped"
    done = site.run("revert")
    assert (done.code, result(done)) == (
        0,
        ("reverted", f"{site.file.relative_to(site.root)} was already the original; cleared hfpatch's state"),
    )
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY, record)
    assert not (site.state_dir / PATCH_ID).exists()


@pytest.mark.parametrize("loss", ["missing", "damaged"])
def test_apply_of_a_file_that_holds_the_original_again_saves_its_backup_anew(site: Site, loss: str) -> None:
    """As above, but applied again: the file is the original by the state's digest, so it is the backup to keep, and
    a later revert restores it."""
    record = site.record.read_bytes()
    assert site.run("apply").code == 0
    site.file.write_bytes(BUGGY)
    site.record.write_bytes(record)
    if loss == "missing":
        site.backup.unlink()
    else:
        site.backup.write_bytes(BUGGY + b"# damaged\n")
    done = site.run("apply")
    assert (done.code, result(done)[0]) == (0, "patched"), done.out + done.err
    assert (site.file.read_bytes(), site.backup.read_bytes()) == (FIXED, BUGGY)
    done = site.run("revert")
    assert (done.code, result(done)) == (0, ("reverted", f"restored the original {site.file.relative_to(site.root)}"))
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY, record)


# ------------------------------------------------------------------------------------------------------ output


OUTCOME_FIELDS = {
    "id",
    "upstream",
    "url",
    "fixed_in",
    "distribution",
    "advisories",
    "advisory_status",
    "condition",
    "action",
    "exit_code",
    "message",
    "notes",
    "version",
    "file",
    "file_sha256",
    "files",
    "state",
    "diff",
}


def test_json_is_one_document_with_every_field_of_the_outcome(site: Site) -> None:
    done = site.run("check", "--json")
    assert done.code == 1
    document = json.loads(done.out)
    assert (document["schema"], document["command"], document["exit_code"]) == (3, "check", 1)
    assert document["hfpatch_version"] == hfpatch.__version__
    found = entry(done)
    assert set(found) == OUTCOME_FIELDS
    assert (found["id"], found["condition"], found["action"], found["exit_code"]) == (
        PATCH_ID,
        "needs-patch",
        "checked",
        1,
    )
    assert (found["upstream"], found["fixed_in"], found["version"]) == ("example/toypkg#1", "2.0", "1.0")
    assert (found["file"], found["file_sha256"], found["state"]) == (str(site.file), sha256(BUGGY), None)
    assert found["files"] == [{"file": str(site.file), "sha256": sha256(BUGGY)}]
    applied = entry(site.run("apply", "--json"))
    assert (applied["action"], applied["exit_code"]) == ("patched", 0)
    after = entry(site.run("check", "--json"))
    assert (after["condition"], after["file_sha256"], after["state"]["phase"]) == ("applied", sha256(FIXED), "applied")


def test_a_patch_named_twice_is_acted_on_once(site: Site) -> None:
    done = site.run("apply", "--patch", PATCH_ID)  # the site's run names it as well
    assert (done.code, result(done)[0]) == (0, "patched")
    assert len(json.loads(site.run("check", "--json", "--patch", PATCH_ID).out)["environments"][0]["patches"]) == 1


def test_advice_repeats_the_options_the_user_gave(site: Site) -> None:
    done = site.run("check", python=sys.executable)
    assert done.code == 1
    assert f"`hfpatch apply --python {sys.executable} --patch {PATCH_ID}`" in result(done)[1]


def test_list_prints_the_catalog_entry_and_exits_0_where_the_patch_is_needed(site: Site) -> None:
    done = site.run("list")
    assert (done.code, done.err) == (0, "")
    row = {"distribution": "toypkg", "releases": "1.0", "fixed in": "2.0", "here": "needs-patch"}
    assert done.listing() == {PATCH_ID: {"id": PATCH_ID, **row, "what it fixes": "greet(None) fails"}}
    assert f"\ncatalogs: {site.team_catalog}\n" in done.out  # where the entries listed come from
    assert f"\nhere: {sys.executable} [Python " in done.out and done.out.endswith(f": toypkg 1.0 in {site.root}\n")


# ---------------------------------------------------------------------------------------------------- bytecode


def _greet_constants(pyc: Path) -> tuple[object, ...]:
    module = marshal.loads(pyc.read_bytes()[16:])
    (greet,) = [const for const in module.co_consts if isinstance(const, CodeType) and const.co_name == "greet"]
    return tuple(greet.co_consts)


def test_apply_rebuilds_cached_bytecode_for_the_new_source_in_its_own_mode(site: Site) -> None:
    cache, tag = site.file.parent / "__pycache__", sys.implementation.cache_tag
    timestamp, unchecked = cache / f"core.{tag}.pyc", cache / f"core.{tag}.opt-1.pyc"
    py_compile.compile(str(site.file), cfile=str(timestamp), doraise=True)
    mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
    py_compile.compile(str(site.file), cfile=str(unchecked), doraise=True, optimize=1, invalidation_mode=mode)
    other = cache / "core.cpython-99.pyc"
    shutil.copyfile(timestamp, other)
    unrelated = cache / f"__init__.{tag}.pyc"
    py_compile.compile(str(site.file.parent / "__init__.py"), cfile=str(unrelated), doraise=True)
    untouched = unrelated.read_bytes()
    assert "world" not in _greet_constants(timestamp)

    assert site.run("apply").code == 0

    header = timestamp.read_bytes()[:16]
    assert header[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(header[4:8], "little") == 0  # still timestamp-based
    assert int.from_bytes(header[8:12], "little") == int(site.file.stat().st_mtime) & 0xFFFFFFFF
    assert int.from_bytes(header[12:16], "little") == len(FIXED)
    assert "world" in _greet_constants(timestamp)
    header = unchecked.read_bytes()[:16]
    assert int.from_bytes(header[4:8], "little") == 0b01  # still hash-based, unchecked
    assert header[8:16] == importlib.util.source_hash(FIXED)
    assert "world" in _greet_constants(unchecked)
    assert not other.exists()
    assert unrelated.read_bytes() == untouched


# --------------------------------------------------------------------------------------- odd catalogs and hosts


def test_without_a_probe_verify_says_so_and_never_verified(site: Site) -> None:
    shutil.rmtree(site.team_catalog)
    write_catalog(site.team_catalog, with_probe=False)
    before = site.run("verify")
    assert before.code == 1
    assert result(before)[0] == "no-probe"
    assert site.run("apply").code == 0
    after = site.run("verify")
    assert after.code == 0
    assert result(after)[0] == "no-probe"
    assert "verified" not in after.text


@pytest.mark.parametrize("command", ["apply", "verify", "check", "revert"])
def test_an_environment_without_the_distribution_is_one_error_line_pointing_at_python(
    tmp_path: Path, command: str
) -> None:
    site = make_site(tmp_path)
    shutil.rmtree(site.file.parent)
    shutil.rmtree(site.dist_info)
    before = tree(tmp_path)
    done = site.run(command)
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: ")
    assert "point --python at the application's interpreter" in line
    given = site.run(command, python=sys.executable)
    assert given.code == 2
    (line,) = given.err.splitlines()
    assert line.endswith(f"nothing to {command}; is it the application's interpreter (the one that imports toypkg)?")
    assert tree(tmp_path) == before


def test_list_in_an_environment_without_the_distribution_exits_0(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    shutil.rmtree(site.file.parent)
    done = site.run("list")
    assert (done.code, done.err) == (0, "")
    assert done.listing()[PATCH_ID]["here"] == "not-installed"


# ------------------------------------------------------------------------------------------------- in process


def in_process(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> Completed:
    """cli.main in this process. The site is only on the path of processes started with its environment, so the
    run names an interpreter with --python: hfpatch asks that one, as a subprocess, what it imports."""
    for key, value in site.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HFPATCH_FAULT", raising=False)
    code = cli.main([*args, "--patch", PATCH_ID, "--python", sys.executable])
    captured = capsys.readouterr()
    return Completed(code, captured.out, captured.err)


def test_main_in_process_acts_on_the_interpreter_given_with_python(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    check = in_process(site, monkeypatch, capsys, "check")
    assert check.code == 1
    assert check.lines[0] == f"{sys.executable} [Python {sys.version.split()[0]}]: toypkg 1.0 in {site.root}"
    assert result(check)[0] == "needs-patch"
    apply = in_process(site, monkeypatch, capsys, "apply")
    assert (apply.code, result(apply)[0]) == (0, "patched")
    assert site.file.read_bytes() == FIXED
    found = entry(in_process(site, monkeypatch, capsys, "check", "--json"))
    assert (found["condition"], found["exit_code"], found["file"]) == ("applied", 0, str(site.file))
    revert = in_process(site, monkeypatch, capsys, "revert")
    assert (revert.code, result(revert)[0]) == (0, "reverted")
    assert site.file.read_bytes() == BUGGY


SHOUT = "def shout(self, name):\n    return greet(name).upper()"


def _with_an_old_patch(site: Site) -> None:
    """A second entry for toypkg, of another statement, whose fix shipped in 0.9: obsolete on every release the site
    can hold."""
    old = site.team_catalog / "toypkg-old"
    (old / "fixed").mkdir(parents=True)
    (old / "fixed" / "shout.py").write_text("def shout(self, name):\n    return greet(name).upper()\n")
    target = {"name": "Greeter.shout", "fixed": "fixed/shout.py", "forms": []}
    data = {**entry_data(), "id": "toypkg-old", "fixed_in": "0.9", "first_defined_in": "0.1"}
    data.update(targets=[target], known_files=[])
    data.pop("probe")
    (old / "patch.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    ("version", "apply_first", "expected"),
    [
        pytest.param("1.0", True, 0, id="one-patch-applied-one-obsolete"),
        pytest.param("2.0", False, 1, id="every-patch-obsolete"),
    ],
)
def test_fail_on_obsolete_fails_only_where_apply_has_nothing_left_to_do(
    tmp_path: Path, version: str, apply_first: bool, expected: int
) -> None:
    site = make_site(tmp_path, version=version)
    _with_an_old_patch(site)
    if apply_first:
        assert site.run("apply").code == 0
    done = site.run("check", "--fail-on-obsolete", "--patch", "toypkg-old")
    assert done.code == expected, done.out + done.err
    assert ("obsolete: every patch is fixed upstream or not applicable here" in done.text) is bool(expected)
    assert "toypkg-old: fixed-upstream:" in done.text
