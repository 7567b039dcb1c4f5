"""apply, check, revert and list end to end: real processes on a private copy of the installed release."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

import pytest
from conftest import PATCH_ID, Site, make_venv, run_hfpatch
from conftest import sha256_of as _sha256
from conftest import tree as _tree
from releases import BUGGY, FIXED, FORM_BY_RELEASE, FOUR_ARGUMENT, UPSTREAM_FIXED_FILE_SHA256


def _json(stdout: str) -> dict[str, object]:
    document = json.loads(stdout)
    assert isinstance(document, dict)
    return document


def _patch_entry(document: dict[str, object]) -> dict[str, object]:
    environments = document["environments"]
    assert isinstance(environments, list) and len(environments) == 1
    (entry,) = environments[0]["patches"]
    assert isinstance(entry, dict)
    return entry


@pytest.fixture
def unaffected_site(site: Site) -> Site:
    if FORM_BY_RELEASE[site.version] == BUGGY:
        pytest.skip(f"{site.version} carries the buggy form")
    return site


# ------------------------------------------------------------------------------------------------ affected releases


def test_check_says_the_patch_is_needed(buggy_site: Site) -> None:
    done = run_hfpatch("check", env=buggy_site.env())
    assert done.code == 1
    assert "needs-patch" in done.out
    assert "5.13.0" in done.out


def test_apply_makes_the_file_upstreams_and_keeps_a_backup_and_a_record(buggy_site: Site) -> None:
    site = buggy_site
    original, record_before, mode = site.file.read_bytes(), site.record.read_bytes(), site.file.stat().st_mode
    done = run_hfpatch("apply", env=site.env())
    assert done.code == 0, done.err
    assert "patched" in done.out and "#46618" in done.out
    assert _sha256(site.file) == UPSTREAM_FIXED_FILE_SHA256
    assert site.file.stat().st_mode == mode
    assert (site.state_dir / PATCH_ID / "original").read_bytes() == original
    record = json.loads((site.state_dir / PATCH_ID / "state.json").read_text())
    assert record["schema"] == 1
    assert record["patch"] == PATCH_ID
    assert record["version"] == site.version
    assert record["before_sha256"] == hashlib.sha256(original).hexdigest()
    assert record["after_sha256"] == UPSTREAM_FIXED_FILE_SHA256
    assert record["phase"] == "applied"
    assert record["hfpatch_version"] and record["applied_at"]
    _assert_record_matches_file(site, record_before)


def _assert_record_matches_file(site: Site, record_before: bytes) -> None:
    """RECORD lists the installed bytes; every other line is as pip wrote it."""
    data = site.file.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    expected_line = f"transformers/dynamic_module_utils.py,sha256={digest},{len(data)}"
    lines, old_lines = site.record.read_text().splitlines(), record_before.decode().splitlines()
    assert expected_line in lines
    assert [line for line in lines if line != expected_line] == [
        line for line in old_lines if not line.startswith("transformers/dynamic_module_utils.py,")
    ]


def test_a_second_apply_changes_nothing(buggy_site: Site) -> None:
    assert run_hfpatch("apply", env=buggy_site.env()).code == 0
    before, inode = _tree(buggy_site.root), buggy_site.file.stat().st_ino
    done = run_hfpatch("apply", env=buggy_site.env())
    assert done.code == 0
    assert "already-applied" in done.out
    assert _tree(buggy_site.root) == before
    assert buggy_site.file.stat().st_ino == inode


def test_check_after_apply_is_green(buggy_site: Site) -> None:
    assert run_hfpatch("apply", env=buggy_site.env()).code == 0
    done = run_hfpatch("check", env=buggy_site.env())
    assert done.code == 0
    assert "applied" in done.out


def test_revert_restores_the_original_bytes_and_record_and_drops_the_state(buggy_site: Site) -> None:
    site = buggy_site
    original, record_before, mode = site.file.read_bytes(), site.record.read_bytes(), site.file.stat().st_mode
    assert run_hfpatch("apply", env=site.env()).code == 0
    done = run_hfpatch("revert", env=site.env())
    assert done.code == 0, done.err
    assert site.file.read_bytes() == original
    assert site.record.read_bytes() == record_before
    assert site.file.stat().st_mode == mode
    assert not (site.state_dir / PATCH_ID).exists()
    assert run_hfpatch("check", env=site.env()).code == 1


def test_dry_run_prints_the_diff_and_writes_nothing(buggy_site: Site) -> None:
    before = _tree(buggy_site.root)
    done = run_hfpatch("apply", "--dry-run", env=buggy_site.env())
    assert done.code == 0
    assert "+        canonical_path = source_file_path.parent.resolve() / source_file_path.name" in done.out
    assert "-    resolved_module_file = Path(resolved_module_file).resolve()" in done.out
    assert _tree(buggy_site.root) == before
    assert not buggy_site.state_dir.exists()


def test_revert_dry_run_writes_nothing(buggy_site: Site) -> None:
    assert run_hfpatch("apply", env=buggy_site.env()).code == 0
    before = _tree(buggy_site.root)
    done = run_hfpatch("revert", "--dry-run", env=buggy_site.env())
    assert done.code == 0
    assert "+    resolved_module_file = Path(resolved_module_file).resolve()" in done.out
    assert _tree(buggy_site.root) == before


def test_a_reinstall_that_drops_the_patch_is_caught_and_healed(buggy_site: Site) -> None:
    site = buggy_site
    original, record_before = site.file.read_bytes(), site.record.read_bytes()
    assert run_hfpatch("apply", env=site.env()).code == 0
    site.file.write_bytes(original)  # what `pip install --force-reinstall` of the same release leaves
    site.record.write_bytes(record_before)
    done = run_hfpatch("check", env=site.env())
    assert done.code == 1
    assert "dropped" in done.out
    assert run_hfpatch("apply", env=site.env()).code == 0
    assert _sha256(site.file) == UPSTREAM_FIXED_FILE_SHA256
    assert run_hfpatch("check", env=site.env()).code == 0


def test_an_edited_file_is_not_reverted_without_force(buggy_site: Site) -> None:
    site = buggy_site
    original = site.file.read_bytes()
    assert run_hfpatch("apply", env=site.env()).code == 0
    site.file.write_bytes(site.file.read_bytes() + b"\n# local edit\n")
    before = _tree(site.root)
    assert run_hfpatch("check", env=site.env()).code == 2
    done = run_hfpatch("revert", env=site.env())
    assert done.code == 2
    assert "changed since hfpatch applied" in done.err
    assert "Traceback" not in done.err
    assert _tree(site.root) == before
    forced = run_hfpatch("revert", "--force", env=site.env())
    assert forced.code == 0
    assert site.file.read_bytes() == original


def test_json_is_one_document_with_a_schema(buggy_site: Site) -> None:
    done = run_hfpatch("check", "--json", env=buggy_site.env())
    assert done.code == 1
    document = _json(done.out)
    assert document["schema"] == 1
    assert document["command"] == "check"
    assert document["exit_code"] == 1
    entry = _patch_entry(document)
    assert entry["id"] == PATCH_ID
    assert entry["condition"] == "needs-patch"
    assert entry["version"] == buggy_site.version
    assert entry["upstream"] == "huggingface/transformers#46618"
    assert entry["fixed_in"] == "5.13.0"
    assert entry["file"] == str(buggy_site.file)


@pytest.mark.parametrize("optimize", ["", "-O", "-OO"], ids=["opt-0", "opt-1", "opt-2"])
@pytest.mark.parametrize("mode", ["UNCHECKED_HASH", "CHECKED_HASH", "TIMESTAMP"])
def test_no_cached_bytecode_runs_the_old_code(buggy_site: Site, optimize: str, mode: str) -> None:
    site = buggy_site
    level = {"": 0, "-O": 1, "-OO": 2}[optimize]
    _compile(site, mode, level)
    assert _runs_fixed_code(site, optimize) is False
    assert run_hfpatch("apply", env=site.env()).code == 0
    assert _runs_fixed_code(site, optimize) is True
    assert run_hfpatch("revert", env=site.env()).code == 0
    assert _runs_fixed_code(site, optimize) is False


def _compile(site: Site, mode: str, level: int) -> None:
    script = (
        "import py_compile, sys; "
        "py_compile.compile(sys.argv[1], doraise=True, optimize=int(sys.argv[2]), "
        "invalidation_mode=py_compile.PycInvalidationMode[sys.argv[3]])"
    )
    _python([sys.executable, "-c", script, str(site.file), str(level), mode], site)


def _runs_fixed_code(site: Site, optimize: str) -> bool:
    """Import the module the way a user process does and look at the code object it really runs."""
    script = (
        "import sys, transformers.dynamic_module_utils as m\n"
        "assert m.__file__ == sys.argv[1], m.__file__\n"
        "def names(code):\n"
        "    found = set(code.co_varnames)\n"
        "    for const in code.co_consts:\n"
        "        if hasattr(const, 'co_varnames'): found |= names(const)\n"
        "    return found\n"
        "print('canonical_path' in names(m._compute_local_source_files_hash.__code__))\n"
    )
    command = [sys.executable, *([optimize] if optimize else []), "-c", script, str(site.file)]
    return _python(command, site).strip().splitlines()[-1] == "True"


def _python(command: list[str], site: Site) -> str:
    import subprocess

    env = site.env(PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_revert_after_an_upgrade_never_writes_old_bytes_over_the_new_install(buggy_site: Site, tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv", buggy_site.version)
    assert run_hfpatch("apply", python=venv.python).code == 0
    venv.pip("install", "--no-deps", "--no-compile", "transformers==5.13.0")
    upgraded = venv.site_packages / "transformers" / "dynamic_module_utils.py"
    installed = upgraded.read_bytes()
    check = run_hfpatch("check", python=venv.python)
    assert check.code == 0
    assert "stale record" in check.out
    assert "obsolete" in check.out
    done = run_hfpatch("revert", python=venv.python)
    assert done.code == 0, done.err
    assert "5.12.1" in done.out or buggy_site.version in done.out
    assert upgraded.read_bytes() == installed
    assert not (venv.site_packages / ".hfpatch" / PATCH_ID).exists()


# -------------------------------------------------------------------------------------------- unaffected releases


def test_apply_changes_nothing_where_the_patch_is_not_needed(unaffected_site: Site) -> None:
    before = _tree(unaffected_site.root)
    done = run_hfpatch("apply", env=unaffected_site.env())
    assert done.code == 0
    assert "nothing-to-do" in done.out
    assert _tree(unaffected_site.root) == before
    assert not unaffected_site.state_dir.exists()


def test_check_is_green_where_the_patch_is_not_needed(unaffected_site: Site) -> None:
    done = run_hfpatch("check", "--json", env=unaffected_site.env())
    assert done.code == 0
    expected = {FIXED: "fixed-upstream", FOUR_ARGUMENT: "not-applicable"}[FORM_BY_RELEASE[unaffected_site.version]]
    assert _patch_entry(_json(done.out))["condition"] == expected


def test_stale_bytecode_over_fixed_source_is_caught_and_rebuilt(unaffected_site: Site) -> None:
    """What a Dockerfile `sed` over a pre-compiled image can leave: fixed source, old code in an unchecked .pyc."""
    import py_compile

    site = unaffected_site
    if FORM_BY_RELEASE[site.version] != FIXED:
        pytest.skip("needs the fixed form in the source")
    other = site.root / "other_code.py"
    other.write_bytes(site.file.read_bytes() + b"\nSTALE = True\n")
    pyc = site.file.parent / "__pycache__" / f"dynamic_module_utils.{sys.implementation.cache_tag}.pyc"
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    py_compile.compile(str(other), cfile=str(pyc), doraise=True, invalidation_mode=unchecked)
    check = run_hfpatch("check", env=site.env())
    assert check.code == 1
    assert "bytecode" in check.out
    stale_pyc = pyc.read_bytes()
    dry = run_hfpatch("apply", "--dry-run", env=site.env())
    assert dry.code == 0
    assert pyc.read_bytes() == stale_pyc
    done = run_hfpatch("apply", env=site.env())
    assert done.code == 0, done.err
    assert "refreshed-bytecode" in done.out
    assert run_hfpatch("check", env=site.env()).code == 0
    assert _sha256(site.file) == hashlib.sha256(other.read_bytes()[: -len(b"\nSTALE = True\n")]).hexdigest()


def test_obsolete_patches_can_be_made_to_fail(unaffected_site: Site) -> None:
    if FORM_BY_RELEASE[unaffected_site.version] != FIXED:
        pytest.skip("only releases with the upstream fix make the patch obsolete")
    plain = run_hfpatch("check", env=unaffected_site.env())
    assert plain.code == 0
    assert "remove `hfpatch apply` from your build" in plain.out
    assert run_hfpatch("check", "--fail-on-obsolete", env=unaffected_site.env()).code == 1


# ------------------------------------------------------------------------------------------------- any environment


def test_an_environment_without_transformers_needs_nothing(tmp_path: Path) -> None:
    import subprocess

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    python = str(tmp_path / "bare" / "bin" / "python")
    for command in ("check", "apply", "revert"):
        done = run_hfpatch(command, python=python)
        assert done.code == 0, done.err
        assert "not installed" in done.out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(["check", "--python", "/nonexistent/python"], "no Python interpreter", id="missing-python"),
        pytest.param(["check", "--python", "/etc/hostname"], "cannot run /etc/hostname", id="not-a-python"),
        pytest.param(["check", "--python", "/bin/true"], "does not behave like a Python", id="not-python"),
        pytest.param(["apply", "--patch", "no-such-patch"], "no patch named", id="unknown-patch"),
        pytest.param(["frobnicate"], "No such command", id="unknown-command"),
        pytest.param(["check", "--no-such-option"], "No such option", id="unknown-option"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args: list[str], says: str) -> None:
    done = run_hfpatch(*args, python=None)
    assert done.code == 2
    assert says in done.out + done.err
    assert "Traceback" not in done.err


@pytest.mark.parametrize("command", [[], ["apply"], ["check"], ["revert"], ["verify"], ["list"]])
def test_every_command_has_help(command: list[str]) -> None:
    done = run_hfpatch(*command, "--help", python=None)
    assert done.code == 0
    assert "Usage:" in done.out


def test_version() -> None:
    import hfpatch

    done = run_hfpatch("--version", python=None)
    assert done.code == 0
    assert hfpatch.__version__ in done.out


def test_list_shows_the_catalog_and_the_state_here(site: Site) -> None:
    done = run_hfpatch("list", "--patch", PATCH_ID, env=site.env())
    assert done.code == (1 if FORM_BY_RELEASE[site.version] == BUGGY else 0)
    assert PATCH_ID in done.out
    assert "huggingface/transformers#46618" in done.out
    assert site.version in done.out
    assert run_hfpatch("list", "--python", "/nonexistent/python", python=None).code == 2


def test_a_wrapper_script_given_as_python_is_the_environment_acted_on(buggy_site: Site, tmp_path: Path) -> None:
    """`--python` may be a script that sets the environment up and execs the interpreter: hfpatch runs it, not the
    interpreter it ends in, so it acts on the environment the wrapper makes."""
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={buggy_site.root} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    env = {key: value for key, value in buggy_site.env().items() if key != "PYTHONPATH"}
    check = run_hfpatch("check", env=env, python=str(wrapper))
    assert check.code == 1
    assert str(buggy_site.root / "transformers") in check.out
    assert run_hfpatch("apply", env=env, python=str(wrapper)).code == 0
    assert _sha256(buggy_site.file) == UPSTREAM_FIXED_FILE_SHA256
    assert run_hfpatch("revert", env=env, python=str(wrapper)).code == 0


@pytest.mark.parametrize("prints", ["{}", "[1]", '{"executable": 1}'], ids=["empty-object", "a-list", "wrong-shape"])
def test_a_python_that_answers_nonsense_is_one_line_and_exit_2(tmp_path: Path, prints: str) -> None:
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho '{prints}'\n")
    fake.chmod(0o755)
    done = run_hfpatch("check", python=str(fake))
    assert done.code == 2
    assert "does not behave like a Python interpreter" in done.err
    assert "Traceback" not in done.err


def test_odd_files_in_pycache_are_left_alone_and_never_crash(buggy_site: Site) -> None:
    cache = buggy_site.file.parent / "__pycache__"
    cache.mkdir(exist_ok=True)
    odd = cache / "dynamic_module_utils.cpython-311.bak.pyc"
    odd.write_bytes(b"not bytecode")
    for command in ("apply", "check", "revert"):
        done = run_hfpatch(command, env=buggy_site.env())
        assert done.code in (0, 1), done.err
        assert "Traceback" not in done.err
    assert odd.read_bytes() == b"not bytecode"


def test_the_console_script_is_installed() -> None:
    import shutil
    import subprocess

    script = shutil.which("hfpatch", path=str(Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("hfpatch, version ")
