"""Bad input, on the toy distribution: a command line, catalog or --python that cannot be, a target file that is not
the code, a damaged state or backup.

What cannot be acted on at all (the command line, the catalog, the interpreter) is one line on stderr, `hfpatch:
error: ...`; these run as real processes, as a user meets them. What one patch refuses is its result: one line on
stdout, nothing on stderr; these run in process (cli.main), many commands each. Either way: exit 2,
no traceback, and every entry of the site and catalog as it was.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import Completed, Site, tree
from toy import B_ID, BUGGY_MODULE, FIXED_MODULE, MODULE, PATCH_ID, make_site, write_catalog, write_entry

import hfpatch
from hfpatch import cli

BUGGY, FIXED = BUGGY_MODULE.encode(), FIXED_MODULE.encode()


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return make_site(tmp_path)


# ------------------------------------------------------------------- what cannot be acted on: one line on stderr


def _catalog_is_a_file(site: Site, tmp: Path) -> tuple[list[str], str]:
    (tmp / "a-file").write_text("not a catalog\n")
    return ["check", "--catalog", str(tmp / "a-file")], f"the catalog {tmp / 'a-file'} is not a directory"


def _catalog_missing(site: Site, tmp: Path) -> tuple[list[str], str]:
    return ["check", "--catalog", str(tmp / "missing")], f"the catalog {tmp / 'missing'} does not exist"


def _catalog_empty(site: Site, tmp: Path) -> tuple[list[str], str]:
    (tmp / "empty").mkdir()
    return ["check", "--catalog", str(tmp / "empty")], f"the catalog {tmp / 'empty'} holds no patch"


def _catalog_is_an_entry(site: Site, tmp: Path) -> tuple[list[str], str]:
    entry = site.team_catalog / PATCH_ID
    says = f"{entry} is a patch entry, not a catalog; give --catalog (or HFPATCH_CATALOG) the directory that holds it"
    return ["check", "--catalog", str(entry)], f"{says}, {site.team_catalog}."


def _entry_not_json(site: Site, tmp: Path) -> tuple[list[str], str]:
    entry = site.team_catalog / PATCH_ID / "patch.json"
    entry.write_text(entry.read_text().rstrip().rstrip("}") + ',\n  "fixed_in": [\n')
    return ["check"], f"{entry} is not valid JSON"


def _entry_names_no_version(site: Site, tmp: Path) -> tuple[list[str], str]:
    """A catalog defect, said as one: not `unrecognised` code to reinstall, as a comparison at check time said it."""
    path = site.team_catalog / PATCH_ID / "patch.json"
    path.write_text(path.read_text().replace('"fixed_in": "2.0"', '"fixed_in": "next"'))
    return ["check"], f"{path} is not a valid patch entry: fixed_in 'next' is not a version (PEP 440)"


def _two_patches_of_one_statement(site: Site, tmp: Path) -> tuple[list[str], str]:
    import shutil

    shutil.copytree(site.team_catalog / PATCH_ID, tmp / "another" / "toypkg-2")
    path = tmp / "another" / "toypkg-2" / "patch.json"
    path.write_text(path.read_text().replace(f'"id": "{PATCH_ID}"', '"id": "toypkg-2"'))
    command = ["check", "--catalog", str(tmp / "another"), "--patch", PATCH_ID, "--patch", "toypkg-2"]
    return command, "toypkg-1 and toypkg-2 both change greet in toypkg/core.py: of two patches of one statement"


def _two_patches_of_one_statement_applied(site: Site, tmp: Path) -> tuple[list[str], str]:
    command, says = _two_patches_of_one_statement(site, tmp)
    return ["apply", *command[1:]], says


def _a_patch_of_a_class_and_one_of_its_method(site: Site, tmp: Path) -> tuple[list[str], str]:
    """toypkg-class replaces the class Greeter, toypkg-b its method shout: one statement is inside the other."""
    import shutil

    write_entry(tmp / "another", B_ID)
    shutil.copytree(site.team_catalog / PATCH_ID, tmp / "another" / "toypkg-class")
    path = tmp / "another" / "toypkg-class" / "patch.json"
    text = path.read_text().replace(f'"id": "{PATCH_ID}"', '"id": "toypkg-class"')
    path.write_text(text.replace('"name": "greet"', '"name": "Greeter"'))
    command = ["apply", "--catalog", str(tmp / "another"), "--patch", "toypkg-class", "--patch", B_ID]
    return command, "toypkg-class and toypkg-b both change Greeter in toypkg/core.py (Greeter.shout is in it)"


def _duplicate_id(site: Site, tmp: Path) -> tuple[list[str], str]:
    write_catalog(tmp / "another")
    return ["check", "--catalog", str(tmp / "another")], f"two patches are named {PATCH_ID}"


def _python_missing(site: Site, tmp: Path) -> tuple[list[str], str]:
    return ["check", "--python", str(tmp / "bin" / "python")], f"no Python interpreter at '{tmp / 'bin' / 'python'}'"


def _python_a_venv_directory(site: Site, tmp: Path) -> tuple[list[str], str]:
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    return ["check", "--python", str(venv)], f"did you mean --python {venv / 'bin' / 'python'}?"


def _python_not_executable(site: Site, tmp: Path) -> tuple[list[str], str]:
    script = tmp / "python"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    script.chmod(0o644)
    return ["check", "--python", str(script)], f"{script} is not executable"


def _python_2(site: Site, tmp: Path) -> tuple[list[str], str]:
    """Answers the version question as a Python 2.7 does, and fails at anything else (hfpatch's 3.10 code)."""
    script = tmp / "python2.7"
    script.write_text(
        '#!/bin/sh\ncase "$1 $2" in\n'
        "  \"-c \"*hfpatch-python*) printf 'hfpatch-python 2.7' ;;\n"
        '  *) echo "SyntaxError: invalid syntax" >&2; exit 1 ;;\nesac\n'
    )
    script.chmod(0o755)
    return ["check", "--python", str(script)], f"{script} is Python 2.7; hfpatch acts on Python 3.10 or newer"


def _fixed(args: list[str], says: str) -> Callable[[Site, Path], tuple[list[str], str]]:
    return lambda site, tmp: (args, says)


ENVIRONMENT_ERRORS = [
    pytest.param(_fixed(["check", "--patch", "no-such"], "no patch named 'no-such'"), id="unknown-patch"),
    pytest.param(_catalog_is_a_file, id="catalog-is-a-file"),
    pytest.param(_catalog_missing, id="catalog-missing"),
    pytest.param(_catalog_empty, id="catalog-empty"),
    pytest.param(_catalog_is_an_entry, id="catalog-is-an-entry"),
    pytest.param(_entry_not_json, id="entry-not-json"),
    pytest.param(_entry_names_no_version, id="entry-names-no-version"),
    pytest.param(_duplicate_id, id="duplicate-id"),
    pytest.param(_two_patches_of_one_statement, id="two-patches-of-one-statement"),
    pytest.param(_two_patches_of_one_statement_applied, id="two-patches-of-one-statement-applied"),
    pytest.param(_a_patch_of_a_class_and_one_of_its_method, id="a-patch-of-a-class-and-one-of-its-method"),
    pytest.param(
        _fixed(["check", "--no-such-option"], "unrecognized arguments: --no-such-option"), id="unknown-option"
    ),
    pytest.param(_fixed([], "the following arguments are required: COMMAND"), id="no-command"),
    pytest.param(_fixed(["frobnicate"], "invalid choice: 'frobnicate'"), id="unknown-command"),
    pytest.param(
        _fixed(
            ["check", "--fail-on-obsolet"], "unrecognized arguments: --fail-on-obsolet (see `hfpatch check --help`)"
        ),
        id="an-abbreviated-option",
    ),
    pytest.param(_fixed(["--versio", "check"], "unrecognized arguments: --versio"), id="an-abbreviated-version"),
    pytest.param(_fixed(["migrate", "team"], "is `python -m hfpatch.migrate DIR`, not a command"), id="migrate"),
    pytest.param(
        _fixed(
            ["--json", "check", "--patch", PATCH_ID],
            f"comes first, then its options: `hfpatch check --json --patch {PATCH_ID}`",
        ),
        id="options-before-the-command",
    ),
    pytest.param(
        _fixed(["--patch", "list", "check"], "comes first, then its options: `hfpatch check --patch list`"),
        id="options-before-the-command-with-a-command-as-a-value",
    ),
    pytest.param(_python_missing, id="python-missing"),
    pytest.param(_python_a_venv_directory, id="python-a-venv-directory"),
    pytest.param(_python_not_executable, id="python-not-executable"),
    pytest.param(_fixed(["check", "--python", "/bin/ls"], "/bin/ls does not answer as a Python"), id="python-ls"),
    pytest.param(_fixed(["check", "--python", "/bin/true"], "/bin/true does not answer as a Python"), id="python-true"),
    pytest.param(_python_2, id="python-2"),
]


@pytest.mark.parametrize("make", ENVIRONMENT_ERRORS)
def test_what_cannot_be_acted_on_is_one_error_line_and_exit_2_touching_nothing(
    site: Site, tmp_path: Path, make: Callable[[Site, Path], tuple[list[str], str]]
) -> None:
    inputs = tmp_path / "input"
    inputs.mkdir()
    args, says = make(site, inputs)
    before = tree(tmp_path)
    done = site.run(*args)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: ")
    assert says in line
    assert '{"action"' not in line  # hfpatch's own request to the interpreter is no message for the user
    assert tree(tmp_path) == before


AFTER_PARSING = [
    pytest.param(_fixed(["check", "--patch", "no-such"], "no patch named 'no-such'"), id="unknown-patch"),
    pytest.param(_entry_not_json, id="entry-not-json"),
    pytest.param(_entry_names_no_version, id="entry-names-no-version"),
    pytest.param(_catalog_missing, id="catalog-missing"),
    pytest.param(_duplicate_id, id="duplicate-id"),
    pytest.param(_python_missing, id="python-missing"),
    pytest.param(_python_2, id="python-2"),
]
JSON_COMMANDS = ["apply", "check", "revert", "verify", "list"]


@pytest.mark.parametrize("command", JSON_COMMANDS)
@pytest.mark.parametrize("make", AFTER_PARSING)
def test_with_json_an_error_after_parsing_is_one_document_on_stdout_for_every_command(
    site: Site,
    tmp_path: Path,
    command: str,
    make: Callable[[Site, Path], tuple[list[str], str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A program that reads `--json` reads stdout: whatever goes wrong once the command line parses (a bad entry, an
    unknown --patch, an interpreter that cannot be used), it gets one document that says so, and exit 2."""
    inputs = tmp_path / "input"
    inputs.mkdir()
    args, says = make(site, inputs)
    monkeypatch.setenv("HFPATCH_CATALOG", str(site.team_catalog))
    before = tree(tmp_path)
    done = in_process(capsys, command, *args[1:], "--json")
    assert done.code == 2, done.out + done.err
    document = json.loads(done.out)
    assert (document["schema"], document["command"], document["exit_code"]) == (3, command, 2)
    errors = [document["error"], *(environment["error"] for environment in document["environments"])]
    assert [error for error in errors if error is not None and says in error], document
    assert done.err in ("", f"hfpatch: error: {document['error']}\n")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("command", [command for command in JSON_COMMANDS if command != "list"])
def test_with_json_an_environment_without_the_distribution_is_one_document(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_catalog(tmp_path / "catalog")
    monkeypatch.setenv("HFPATCH_CATALOG", str(tmp_path / "catalog"))
    done = in_process(capsys, command, "--json", "--python", sys.executable)
    assert done.code == 2
    (environment,) = json.loads(done.out)["environments"]
    assert (environment["python"], environment["exit_code"]) == (sys.executable, 2)
    assert "has none of the distributions the patches are for (toypkg)" in environment["error"]
    assert [entry["condition"] for entry in environment["patches"]] == ["not-installed"]


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["check", "--json", "--python", "/usr/bin/python3", "--python", "py2", "--fail-on-obsolete"],
        ["apply", "--dry-run", "--patch", "a", "--catalog", "c"],
        ["revert", "--force", "--json"],
        ["verify", "--patch", "check"],
        ["list", "--catalog", "apply"],
        ["new", "x-1", "--target", "d:m:f", "--fixed-in", "2", "--catalog", "c", "--release", "1", "--pre"],
    ],
)
def test_a_command_line_is_read_as_the_whole_parser_reads_it(argv: list[str]) -> None:
    assert cli.parse(argv) == cli.build_parser().parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "out"),
    [
        pytest.param(["--version", "check"], f"hfpatch {hfpatch.__version__}\n", id="version-before-a-command"),
        pytest.param(["-h"], "usage: hfpatch [-h] [--version] COMMAND ...\n", id="help"),
        pytest.param(["check", "-h"], "usage: hfpatch check [-h] [--python PATH]", id="help-of-a-command"),
    ],
)
def test_help_and_version_answer_as_argparse_does(
    argv: list[str], out: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(out)


# ----------------------------------------------------------------------------- what one patch refuses: its result


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> Completed:
    code = cli.main([*args, "--patch", PATCH_ID])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return Completed(code, captured.out, captured.err)


def result(done: Completed) -> tuple[str, str]:
    """Label and sentence of the one result line; a patch's refusal is its result, on stdout, none on stderr."""
    assert done.err == "", done.err
    prefix = f"  {PATCH_ID}: "
    (line,) = [line for line in done.lines if line.startswith(prefix)]
    label, sentence = line[len(prefix) :].split(": ", 1)
    return label, sentence


Run = Callable[..., Completed]


@pytest.fixture
def run(site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """cli.main in this process, acting on this interpreter with the site first on its path, as PYTHONPATH puts it
    for a process: hfpatch finds packages with find_spec, which never imports them."""
    monkeypatch.syspath_prepend(str(site.root))
    monkeypatch.setenv("HFPATCH_CATALOG", str(site.team_catalog))
    monkeypatch.delenv("HFPATCH_FAULT", raising=False)
    return lambda *args: in_process(capsys, *args)


def refused(run: Run, args: tuple[str, ...], label: str, says: str) -> None:
    done = run(*args)
    assert done.code == 2, done.out
    assert result(done)[0] == label, done.out
    assert says in result(done)[1], done.out


def _make_a_directory(file: Path) -> None:
    file.unlink()
    file.mkdir()


def _writes(data: bytes) -> Callable[[Path], object]:
    return lambda file: file.write_bytes(data)


TARGET_DAMAGE = [
    pytest.param(_writes(BUGGY + b"\ndef broken(:\n"), "unrecognised", "is not valid Python (line", id="not-python"),
    pytest.param(_writes(BUGGY.replace(b"Hello", b"Hell\xf6")), "unrecognised", "is not valid UTF-8", id="not-utf-8"),
    pytest.param(_writes(b""), "unrecognised", f"{MODULE} is empty", id="empty"),
    pytest.param(_writes(BUGGY + b"\x00\n"), "unrecognised", "is not valid Python", id="nul-bytes"),
    pytest.param(_make_a_directory, "error", "cannot read", id="a-directory"),
    pytest.param(Path.unlink, "error", "is missing; reinstall toypkg", id="missing"),
]


@pytest.mark.parametrize(("damage", "condition", "says"), TARGET_DAMAGE)
def test_a_target_file_that_is_not_the_code_is_refused_and_kept(
    site: Site, run: Run, damage: Callable[[Path], object], condition: str, says: str
) -> None:
    damage(site.file)
    before = tree(site.root)
    refused(run, ("check",), condition, says)
    for args in (("apply",), ("apply", "--dry-run")):
        refused(run, args, "refused", says)
    if condition == "error":  # the file cannot even be read: revert cannot know there is nothing to do
        refused(run, ("revert",), "refused", says)
    else:
        revert = run("revert")
        assert revert.code == 0, revert.out
        assert "nothing to revert" in result(revert)[1]
    document = run("apply", "--json")
    assert (document.code, document.err) == (2, "")
    (entry,) = json.loads(document.out)["environments"][0]["patches"]
    assert (entry["condition"], entry["action"], entry["exit_code"]) == (condition, "refused", 2)
    assert says in entry["message"]
    assert tree(site.root) == before
    assert not site.state_dir.exists()


def _edited(edit: Callable[[dict[str, Any]], object]) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        saved = json.loads(data)
        edit(saved)
        return json.dumps(saved).encode()

    return damage


def _escaping_file(saved: dict[str, Any]) -> None:
    """A path out of the site, made consistent with the RECORD line it would restore: only the '..' gives it away."""
    saved["file"] = "../outside.py"
    saved["record_line_before"] = "../outside.py" + saved["record_line_before"][len(MODULE) :]


def _escaping_change(saved: dict[str, Any]) -> None:
    saved["files"][0]["file"] = "../outside.py"


CORRUPT = "is corrupt; nothing was changed"
NEWER = "was written by a newer hfpatch (9.0, state schema 3); upgrade hfpatch"
# (which state: the patch's or the file's, what is done to it, what every command says)
STATE_DAMAGE = [
    pytest.param("patch", lambda data: b"not json\n", CORRUPT, id="not-json"),
    pytest.param("patch", lambda data: data[: len(data) // 2], CORRUPT, id="truncated"),
    pytest.param("patch", lambda data: b"[]\n", CORRUPT, id="a-list"),
    pytest.param("file", _edited(lambda saved: saved.update(sha256=5)), CORRUPT, id="digest-not-a-string"),
    pytest.param("patch", _edited(lambda saved: saved.update(version=1.0)), CORRUPT, id="version-not-a-string"),
    pytest.param("patch", _edited(lambda saved: saved.update(phase="half-done")), CORRUPT, id="unknown-phase"),
    pytest.param("file", _edited(lambda saved: saved.pop("original_sha256")), CORRUPT, id="missing-field"),
    pytest.param("file", _edited(lambda saved: saved.update(patches="toypkg-1")), CORRUPT, id="patches-a-string"),
    pytest.param("file", _edited(_escaping_file), CORRUPT, id="file-escapes"),
    pytest.param("patch", _edited(_escaping_change), CORRUPT, id="change-escapes"),
    pytest.param(
        "patch",
        _edited(lambda saved: saved.update(schema=3, hfpatch_version="9.0", new_field=[1])),
        NEWER,
        id="newer-schema",
    ),
    pytest.param(
        "file", _edited(lambda saved: saved.update(schema=3, hfpatch_version="9.0")), NEWER, id="newer-file-schema"
    ),
    pytest.param("patch", lambda data: b"\xff\xfe" + data, "cannot read hfpatch's state", id="not-utf-8"),
    pytest.param("file", lambda data: b"\xff\xfe" + data, "cannot read hfpatch's state", id="file-not-utf-8"),
]


@pytest.mark.parametrize(("which", "damage", "says"), STATE_DAMAGE)
def test_a_damaged_state_is_refused_by_every_command_and_kept(
    site: Site, run: Run, which: str, damage: Callable[[bytes], bytes], says: str
) -> None:
    assert run("apply").code == 0
    damaged = site.state if which == "patch" else site.file_state
    damaged.write_bytes(damage(damaged.read_bytes()))
    before = tree(site.root)
    refused(run, ("check",), "error", says)
    for args in (("apply",), ("apply", "--dry-run"), ("revert",), ("revert", "--force"), ("revert", "--dry-run")):
        refused(run, args, "refused", says)
    assert tree(site.root) == before


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_a_lost_backup_is_a_note_to_check_and_revert_refuses_touching_nothing(
    site: Site, run: Run, damage: str
) -> None:
    assert run("apply").code == 0
    backup = site.backup.relative_to(site.root)  # the heading names the site; a line, what lies in it
    if damage == "missing":
        site.backup.unlink()
        says = f"hfpatch's backup {backup} is missing"
    else:
        site.backup.write_bytes(BUGGY + b"# altered\n")
        says = f"hfpatch's backup {backup} is not the original any more"
    before = tree(site.root)
    check = run("check")
    assert (check.code, result(check)[0]) == (0, "applied")  # the fix is in place and runs; the way back is gone
    assert f"    note: {says}" in check.text
    apply = run("apply")
    assert (apply.code, result(apply)[0]) == (0, "applied")
    for args in (("revert",), ("revert", "--force"), ("revert", "--dry-run")):
        refused(run, args, "refused", says)
    assert tree(site.root) == before
    assert site.file.read_bytes() == FIXED


def test_the_in_process_runs_act_on_the_site(site: Site, run: Run) -> None:
    """The refusals above mean something only if these runs see the site at all."""
    done = run("check")
    assert (done.code, result(done)[0]) == (1, "needs-patch")
    assert f": toypkg 1.0 in {site.root}\n" in done.text
