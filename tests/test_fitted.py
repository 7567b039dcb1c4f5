"""A form's own fixed text: one entry fits its fix to an older line whose code the fixed text cannot replace.

The fix of 2.0 calls a helper (`check_safe`) that 1.1 has and 1.0 lacks; 1.0's `load` is another form. The entry
carries 2.0's text for 1.1's form and, for 1.0's, a text of its own (the check written into the method). The pure
core first (the rewrite of each form, what the patched code is classified as, the entry read, written and refused),
then `hfpatch new` writes the entry from 1.1 and 2.0, 1.0's form is added by hand as an author does, and a real venv
of 1.0 is checked, patched, checked, reverted byte for byte and checked again by hfpatch processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import wheelfactory as factory
from support import hfpatch, in_process, make_venv, sha256

from hfpatch import classify, entry, statements
from hfpatch.entry import Form, KnownFile, Patch, PatchFile, Target, Verdict
from hfpatch.errors import CatalogError
from hfpatch.rewrite import patched

LOADER_10 = '''"""Loads what it is given."""

import json
import pickle


def load(path):
    with open(path, "rb") as handle:
        return pickle.load(handle)
'''
LOADER_11 = '''"""Loads what it is given."""

import json
import pickle


def check_safe():
    if not SAFE:
        raise ValueError("unsafe here")


SAFE = True


def load(path):
    # what it was given
    with open(path, "rb") as handle:
        return pickle.load(handle)
'''
LOADER_20 = LOADER_11.replace(
    '    with open(path, "rb") as handle:\n        return pickle.load(handle)\n',
    "    check_safe()\n    with open(path) as handle:\n        return json.load(handle)\n",
)
FIXED_20 = LOADER_20.split("\n\n\n")[-1].rstrip("\n")
# 1.0's own fixed text: 2.0's load with the helper's check written into it (1.0 has no check_safe).
FIXED_10 = (
    "def load(path):\n"
    "    if not globals().get('SAFE', True):\n"
    '        raise ValueError("unsafe here")\n'
    "    with open(path) as handle:\n"
    "        return json.load(handle)"
)
PATCHED_10 = LOADER_10.replace(LOADER_10.split("\n\n\n")[-1], FIXED_10 + "\n")
FORM_10 = LOADER_10.split("\n\n\n")[-1].rstrip("\n")
FORM_11 = LOADER_11.split("\n\n\n")[-1].rstrip("\n")


def _target() -> Target:
    forms = (
        Form(sha256(FORM_10), Verdict.NEEDS_PATCH, ("1.0",), fixed_text=FIXED_10),
        Form(sha256(FORM_11), Verdict.NEEDS_PATCH, ("1.1",)),
    )
    return Target("load", FIXED_20, forms)


def _patch(target: Target) -> tuple[Patch, PatchFile]:
    file = PatchFile("madeup.loader", "madeup/loader.py", (target,))
    patch = Patch("madeup-fit", "t", "u", "https://example.invalid", "madeup", "2.0", None, (file,), Path("madeup-fit"))
    return patch, file


# ------------------------------------------------------------------------------------------- the core, pure


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(LOADER_10, PATCHED_10, id="the-old-form-gets-its-own-text"),
        pytest.param(LOADER_11, LOADER_20, id="the-form-the-fix-was-written-for-gets-the-targets"),
        pytest.param(PATCHED_10, PATCHED_10, id="noop-its-own-text-is-fixed"),
        pytest.param(LOADER_20, LOADER_20, id="noop-the-fixed-release"),
    ],
)
def test_each_form_becomes_its_fixed_text_and_a_second_apply_changes_nothing(before: str, after: str) -> None:
    patch, file = _patch(_target())
    result = patched(before.encode(), patch, file)
    assert result == after.encode()
    assert patched(result, patch, file) == result
    crlf = before.replace("\n", "\r\n").encode()
    assert patched(crlf, patch, file) == after.replace("\n", "\r\n").encode()


# 1.05 (made up): 1.1's load, the same text, in a file without check_safe. One text, two forms of disjoint
# releases: 1.05's gets 1.0's fitted text, 1.1's the target's; the file's digest says which release it is.
LOADER_105 = LOADER_10.replace(FORM_10, FORM_11)
PATCHED_105 = LOADER_105.replace(FORM_11, FIXED_10)


def _shared_text_patch() -> tuple[Patch, PatchFile]:
    target = _target()
    shared = Form(sha256(FORM_11), Verdict.NEEDS_PATCH, ("1.05",), fixed_text=FIXED_10)
    target = target._replace(forms=(*target.forms, shared))
    known = (
        KnownFile(sha256(LOADER_105), ("1.05",), Verdict.NEEDS_PATCH, patched_sha256=sha256(PATCHED_105)),
        KnownFile(sha256(LOADER_11), ("1.1",), Verdict.NEEDS_PATCH, patched_sha256=sha256(LOADER_20)),
    )
    patch, file = _patch(target)
    file = file._replace(known_files=known)
    return patch._replace(files=(file,)), file


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(LOADER_105, PATCHED_105, id="the-release-without-the-helper-gets-the-fitted-text"),
        pytest.param(LOADER_11, LOADER_20, id="the-release-with-it-gets-the-targets"),
        # a file no release of the entry has: the first form of the text (the one the fix was written for)
        pytest.param(LOADER_11.replace("Loads what", "Reads what"), None, id="unknown-file-first-form"),
    ],
)
def test_one_text_of_two_forms_becomes_the_fixed_text_of_the_files_release(before: str, after: str | None) -> None:
    patch, file = _shared_text_patch()
    result = patched(before.encode(), patch, file)
    expected = before.replace(FORM_11, FIXED_20) if after is None else after
    assert result.decode() == expected
    assert patched(result, patch, file) == result


# A second target whose release has it in a form without the bug (transformers 4.29-4.50's check_imports, beside
# the get_imports the fix replaces): it is left as it is while the file's other target is patched.
CHECK_11 = LOADER_11.split("\n\n\n")[1].rstrip("\n")
CHECK_FIXED = CHECK_11.replace("unsafe here", "unsafe here, as in 2.0")


def test_a_form_known_as_fixed_is_left_as_it_is_while_another_target_of_the_file_is_patched() -> None:
    check = Target("check_safe", CHECK_FIXED, (Form(sha256(CHECK_11), Verdict.FIXED, ("1.1",)),))
    patch, file = _patch(_target())
    file = file._replace(targets=(check, *file.targets))
    patch = patch._replace(files=(file,))
    result = patched(LOADER_11.encode(), patch, file)
    assert result == LOADER_20.encode()
    assert classify.identify(result, patch, file, None).verdict is Verdict.FIXED
    assert patched(result, patch, file) == result


@pytest.mark.parametrize(
    ("source", "verdict", "says"),
    [
        pytest.param(LOADER_10, Verdict.NEEDS_PATCH, "load is the 1.0 code", id="old-form"),
        pytest.param(PATCHED_10, Verdict.FIXED, "the fixed text of the 1.0 code", id="old-form-patched"),
        pytest.param(LOADER_20, Verdict.FIXED, "the fixed text", id="the-targets-text"),
    ],
)
def test_a_forms_own_fixed_text_is_known_as_fixed(source: str, verdict: Verdict, says: str) -> None:
    patch, file = _patch(_target())
    found = classify.identify(source.encode(), patch, file, None)
    assert (found.verdict, says in found.detail) == (verdict, True), found.detail


def test_a_released_file_the_entry_calls_not_applicable_stays_so_whatever_its_form() -> None:
    """A line with the form the fix was written for, but without the helper its text calls (transformers 4.50.x):
    the entry knows that release's file as not-applicable, and apply leaves it."""
    patch, file = _patch(_target())
    known = KnownFile(sha256(LOADER_11), ("1.1",), Verdict.NOT_APPLICABLE)
    file = file._replace(known_files=(known,))
    found = classify.identify(LOADER_11.encode(), patch._replace(files=(file,)), file, "1.1")
    assert found.verdict is Verdict.NOT_APPLICABLE
    assert found.detail == (
        "the released 1.1 file is one the fix would break, though load is the 1.1 code: hfpatch leaves it"
    )


# ------------------------------------------------------------------------------- the entry, read and written


def _written(catalog: Path) -> Path:
    patch, file = _patch(_target())
    known = (KnownFile(sha256(LOADER_10), ("1.0",), Verdict.NEEDS_PATCH, patched_sha256=sha256(PATCHED_10)),)
    patch = patch._replace(files=(file._replace(known_files=known),), directory=catalog / "madeup-fit")
    return entry.write(catalog, entry.with_fixed_files(patch), force=False)


def test_an_entry_with_a_forms_own_text_is_written_in_schema_5_and_reads_back_as_written(tmp_path: Path) -> None:
    directory = _written(tmp_path / "catalog")
    data = json.loads((directory / "patch.json").read_text())
    assert data["schema"] == 5
    (written,) = data["files"][0]["targets"]
    assert written["fixed"] == "fixed/load.py"
    assert [form.get("fixed") for form in written["forms"]] == ["fixed/load-1.0.py", None]
    assert (directory / "fixed" / "load-1.0.py").read_text() == FIXED_10 + "\n"
    loaded = entry.load(directory)
    assert entry.render(loaded) == (directory / "patch.json").read_text()
    assert loaded.files[0].targets[0].forms[0].fixed_text == FIXED_10


def _refusal(data: dict[str, Any]) -> None:
    form = data["files"][0]["targets"][0]["forms"][0]
    form["verdict"] = "fixed"


REFUSALS = [
    pytest.param(
        lambda data: (data.update(schema=3), data["files"][0]["targets"][0].pop("shape")),
        "a form's own fixed text needs schema 4",
        id="schema-3",
    ),
    pytest.param(_refusal, "has a fixed text of its own, but its verdict is fixed", id="on-a-fixed-form"),
    pytest.param(
        lambda data: data["files"][0]["targets"][0]["forms"][0].update(fixed="../elsewhere.py"),
        "is not a file inside",
        id="outside-the-entry",
    ),
    pytest.param(
        lambda data: data["files"][0]["targets"][0]["forms"][0].update(fixed=7),
        "fixed must be a non-empty string",
        id="not-a-path",
    ),
]


@pytest.mark.parametrize(("change", "says"), REFUSALS)
def test_a_forms_own_fixed_text_where_it_cannot_be_is_refused(tmp_path: Path, change: Any, says: str) -> None:
    directory = _written(tmp_path / "catalog")
    data = json.loads((directory / "patch.json").read_text())
    change(data)
    (directory / "patch.json").write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=says):
        entry.load(directory)


def test_a_forms_own_fixed_text_that_is_another_form_or_of_a_deleted_target_is_refused(tmp_path: Path) -> None:
    directory = _written(tmp_path / "catalog")
    (directory / "fixed" / "load-1.0.py").write_text(FORM_11 + "\n")
    (directory / "patch.json").write_text((directory / "patch.json").read_text())
    with pytest.raises(CatalogError, match="is itself one of its forms"):
        entry.load(directory)
    data = json.loads((directory / "patch.json").read_text())
    target = data["files"][0]["targets"][0]
    del target["fixed"]
    target["shape"] = "delete"
    (directory / "patch.json").write_text(json.dumps(data))
    with pytest.raises(CatalogError, match="but the fix deletes load"):
        entry.load(directory)


# ------------------------------------------------------------------- new, then 1.0's form by hand; a real venv


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fitted-wheels")
    for version, text in (("1.0", LOADER_10), ("1.1", LOADER_11), ("2.0", LOADER_20)):
        factory.write_wheel(directory, version, {"madeup/__init__.py": b"", "madeup/loader.py": text.encode()})
    return directory


def _fit_the_old_form(directory: Path) -> None:
    """What an author does for a line `new` cannot carry: add its form, with its own text, and its known file."""
    written = entry.load(directory)
    (file,) = written.files
    (target,) = file.targets
    old = Form(sha256(FORM_10), Verdict.NEEDS_PATCH, ("1.0",), lines=statements.line_digests(FORM_10))
    target = target._replace(forms=(old._replace(fixed_text=FIXED_10), *target.forms))
    known = KnownFile(sha256(LOADER_10), ("1.0",), Verdict.NEEDS_PATCH, patched_sha256=sha256(PATCHED_10))
    file = file._replace(targets=(target,), known_files=(known, *file.known_files))
    fitted = entry.with_fixed_files(written._replace(files=(file,), releases_read=("1.0", "2.0")))
    entry.write(directory.parent, fitted, force=True, previous=written)


def test_the_old_line_is_patched_checked_and_reverted_byte_for_byte(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog"
    argv = ["new", "madeup-fit", "--target", "madeup:madeup.loader:load", "--fixed-in", "2.0", "--since", "1.1"]
    done = in_process([*argv, "--catalog", str(catalog), "--find-links", str(wheels)], capsys)
    assert done.code == 0, done.out + done.err
    _fit_the_old_form(catalog / "madeup-fit")
    venv = make_venv(tmp_path / "venv", "--no-index", str(wheels / "madeup-1.0-py3-none-any.whl"))
    installed = venv.site_packages / "madeup" / "loader.py"

    def run(*command: str) -> Any:
        return hfpatch(*command, "--catalog", str(catalog), patch="madeup-fit", python=venv.python)

    assert run("check").code == 1
    applied = run("apply")
    assert (applied.code, applied.label("madeup-fit")) == (0, "patched"), applied.out + applied.err
    assert installed.read_text() == PATCHED_10
    use = "import json, sys; open('x.json', 'w').write('[1]'); from madeup.loader import load; print(load('x.json'))"
    assert venv.run(f"import os; os.chdir({str(tmp_path)!r}); {use}") == "[1]"
    checked = run("check", "--json")
    assert checked.code == 0, checked.out
    (result,) = checked.document()["environments"][0]["patches"]
    assert result["condition"] == "applied"
    reverted = run("revert")
    assert reverted.code == 0, reverted.out + reverted.err
    assert installed.read_bytes() == LOADER_10.encode()
    assert run("check").code == 1
