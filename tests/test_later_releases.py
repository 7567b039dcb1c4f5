"""scripts/later_releases.py: an entry learns the digests of releases after the fix, by hfpatch's own reading.

Over `madeup` (tests/wheelfactory.py): the entry is written by a real `hfpatch new` from the wheels up to 2.0; then
2.0.1 (2.0's file), 2.1 (the fix in a file that differs elsewhere) and 2.3, which has the bug again, come out; and
0.6, older than any release it read, whose total is code it does not know, is found.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
import wheelfactory as factory
from support import hfpatch, in_process, run, sha256, wrapper_python

from hfpatch import catalog, entry, errors, index, statements

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "later_releases.py"
OLDER = '"""madeup.core, before 0.7."""\n\n\ndef total(items):\n    return sum(item for item in items)\n'
TARGETS = ["--target", "madeup:madeup.core:total", "--target", "madeup:madeup.core:_clean"]


def _written(tmp_path: Path) -> tuple[Path, Path]:
    early = tmp_path / "early"
    factory.build(early, ("0.8", "0.9", "1.0", "1.1", "1.2", "2.0"))
    catalog = tmp_path / "catalog"
    reading = ["--fixed-in", "2.0", "--catalog", str(catalog), "--find-links", str(early)]
    done = hfpatch("new", "madeup-total", *TARGETS, *reading)
    assert done.code == 0, done.out + done.err
    later = tmp_path / "later"
    factory.build(later, ("2.0", "2.0.1", "2.1"))
    regressed = {**factory.release_files("1.0"), "madeup/__init__.py": b'"""madeup 2.3."""\n'}
    factory.write_wheel(later, "2.3", regressed)
    older = {"madeup/__init__.py": b'"""madeup 0.6."""\n', factory.CORE: OLDER.encode()}
    factory.write_wheel(later, "0.6", older)
    return catalog, later


def _known(catalog: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    (file,) = entry.load(catalog / "madeup-total").files
    return {known.sha256: (known.label, known.releases) for known in file.known_files}


def _script(catalog: Path, later: Path) -> None:
    done = run([sys.executable, str(SCRIPT), "--wheels", str(later), str(catalog)], cwd=catalog.parent)
    assert done.code == 0, done.out + done.err
    assert "madeup-total: madeup 2.3 madeup/core.py is needs-patch: not recorded" in done.err


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each file is parsed from here on, by its path inside site-packages."""
    parses: Counter[str] = Counter()
    parse = statements._parse

    def counted(source: bytes, what: str) -> statements.SourceFile:
        parses[what] += 1
        return parse(source, what)

    monkeypatch.setattr(statements, "_parse", counted)
    return parses


def _check_argv(tmp_path: Path, site: Path, written: Path) -> list[str]:
    python = wrapper_python(tmp_path / "bin" / "python", site)
    return ["check", "--python", python, "--catalog", str(written), "--patch", "madeup-total", "--no-config"]


def test_the_releases_after_the_fix_are_known_by_digest_and_a_regression_is_left_to_be_read(tmp_path: Path) -> None:
    catalog, later = _written(tmp_path)
    before, read = _known(catalog), entry.load(catalog / "madeup-total").releases_read
    assert sha256(factory.CORE_TEXTS["2.1"]) not in before
    _script(catalog, later)
    after = _known(catalog)
    assert after[sha256(factory.CORE_TEXTS["2.0"])] == ("fixed", ("2.0", "2.0.1"))  # one file, two releases
    assert after[sha256(factory.CORE_TEXTS["2.1"])] == ("fixed", ("2.1",))
    assert after[sha256(OLDER)] == ("unknown", ("0.6",))  # outside releases_read
    buggy = sha256(factory.CORE_TEXTS["1.0"])  # what 2.3 ships: its row is as new wrote it
    assert after[buggy] == before[buggy] and "2.3" not in after[buggy][1]
    assert entry.load(catalog / "madeup-total").releases_read == read  # what it was written from
    assert index.stale(catalog) is None


def test_check_on_a_later_release_decides_by_digest_as_it_did_by_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written, later = _written(tmp_path)
    site = factory.install(later / "madeup-2.1-py3-none-any.whl", tmp_path / "site")
    parses = _counting_parses(monkeypatch)
    argv = _check_argv(tmp_path, site, written)
    parsed = in_process(argv, capsys)
    assert parses["madeup/core.py"] == 1
    _script(written, later)
    statements._PARSED.clear()
    catalog._whole.cache_clear()  # the entry as the script left it, as a new process reads it
    known = in_process(argv, capsys)
    assert parses["madeup/core.py"] == 1  # not again
    labels = [(done.code, done.label("madeup-total")) for done in (parsed, known)]
    assert labels == [(0, "fixed-upstream")] * 2, known.out + known.err


def test_check_on_a_release_of_code_the_entry_does_not_know_is_not_covered_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written, later = _written(tmp_path)
    site = factory.install(later / "madeup-0.6-py3-none-any.whl", tmp_path / "site")
    parses = _counting_parses(monkeypatch)
    argv = _check_argv(tmp_path, site, written)
    parsed = in_process(argv, capsys)
    _script(written, later)
    statements._PARSED.clear()
    catalog._whole.cache_clear()
    known = in_process(argv, capsys)
    assert parses["madeup/core.py"] == 1  # the first check's, not the second's
    assert [done.label("madeup-total") for done in (parsed, known)] == ["not-covered"] * 2, known.out
    assert parsed.text == known.text


def test_a_file_not_applicable_carries_its_reason_and_check_gives_it_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    written, later = _written(tmp_path)
    factory.write_wheel(later, "0.9", factory.release_files("0.9"))  # total(items, start, strict=False)
    site = factory.install(later / "madeup-0.9-py3-none-any.whl", tmp_path / "site")
    parses = _counting_parses(monkeypatch)
    argv = _check_argv(tmp_path, site, written)
    parsed = in_process(argv, capsys)
    assert parses["madeup/core.py"] == 1  # no reason recorded yet: the code gives it
    _script(written, later)
    (file,) = entry.load(written / "madeup-total").files
    (row,) = [known for known in file.known_files if "0.9" in known.releases]
    assert row.label == "not-applicable" and "total" in row.reason
    statements._PARSED.clear()
    catalog._whole.cache_clear()
    known = in_process(argv, capsys)
    assert parses["madeup/core.py"] == 1  # the reason came from the row
    assert [done.label("madeup-total") for done in (parsed, known)] == ["not-applicable"] * 2, known.out
    assert parsed.text == known.text


def test_only_a_known_file_that_is_not_applicable_has_a_reason(tmp_path: Path) -> None:
    written, _ = _written(tmp_path)
    path = written / "madeup-total" / "patch.json"
    data = json.loads(path.read_text())
    row = next(known for known in data["files"][0]["known_files"] if known["verdict"] == "fixed")
    row["reason"] = "a fixed file has no reason to give"
    path.write_text(json.dumps(data))
    with pytest.raises(errors.CatalogError, match="only a known file that is not applicable has a reason"):
        entry.load(written / "madeup-total")
