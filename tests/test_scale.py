"""`check` at catalog scale: what a run reads is what the environment holds, not what the catalogs hold.

In process (cli.main) over toypkg (tests/toy.py) in a site of its own, through an interpreter that puts the site on
its path (support.wrapper_python), as a deployment's --python would.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import in_process, run, sha256, wrapper_python
from toy import A_ID, B_ID, BUGGY_MODULE, FIXED_GREET, PATCH_ID, entry_data, make_composed_site, make_site

from hfpatch import catalog, entry, files, index, statements


def test_a_file_two_entries_name_is_read_hashed_and_parsed_once_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """toypkg-a and toypkg-b both change core.py, rebuilt here (no digest knows it, so its code is parsed)."""
    site = make_composed_site(tmp_path)
    site.file.write_text(BUGGY_MODULE + "# rebuilt by a vendor\n", encoding="utf-8")
    python = wrapper_python(tmp_path / "bin" / "python", site.root)
    reads: Counter[Path] = Counter()
    parses: Counter[str] = Counter()
    hashes: Counter[bytes] = Counter()
    read_bytes, parse, digest = files.read_bytes, statements._parse, hashlib.sha256

    def counted_read(path: Path) -> bytes:
        reads[path] += 1
        return read_bytes(path)

    def counted_parse(source: bytes, what: str) -> statements.SourceFile:
        parses[what] += 1
        return parse(source, what)

    def counted_digest(data: bytes = b"") -> hashlib._Hash:
        hashes[bytes(data)] += 1
        return digest(data)

    monkeypatch.setattr(files, "read_bytes", counted_read)
    monkeypatch.setattr(hashlib, "sha256", counted_digest)
    monkeypatch.setattr(statements, "_parse", counted_parse)
    monkeypatch.setenv("HFPATCH_CATALOG", str(site.team_catalog))
    argv = ["check", "--python", python, "--patch", A_ID, "--patch", B_ID, "--no-config"]
    done = in_process(argv, capsys)
    assert done.code == 1, done.out + done.err
    assert (done.label(A_ID), done.label(B_ID)) == ("needs-patch", "needs-patch")
    assert reads[site.file] == 1 and reads[site.record] == 1, reads
    assert parses["toypkg/core.py"] == 1, parses
    assert hashes[site.file.read_bytes()] == 1, hashes.values()


# ------------------------------------------------------------------------------------------------ the index


def test_the_built_in_index_matches_the_built_in_entries() -> None:
    assert index.stale(catalog.builtin_catalog()) is None, "run `python -m hfpatch.index patches`"


def absent_catalog(where: Path, count: int) -> Path:
    """`count` copies of the toy entry, each for a distribution of its own that no interpreter here imports."""
    template = entry_data(with_probe=False)
    for number in range(count):
        name = f"absentlib{number:02d}"
        data = {
            **template,
            "id": f"{name}-1",
            "distribution": name,
            "module": f"{name}.core",
            "file": f"{name}/core.py",
        }
        directory = where / f"{name}-1"
        (directory / "fixed").mkdir(parents=True)
        (directory / "fixed" / "greet.py").write_text(FIXED_GREET, encoding="utf-8")
        (directory / "patch.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    index.write(where)
    return where


def scramble_keeping_size_and_time(path: Path) -> None:
    """Unreadable as an entry, yet as the index last saw it (its size, its modification time)."""
    before = path.stat()
    path.write_bytes(b"x" * before.st_size)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _beside_toypkg(tmp_path: Path) -> tuple[Path, list[str]]:
    """toypkg installed, and a catalog of three entries of other distributions, each patch.json scrambled as the
    index last saw it (an error if it were read): the catalog, and check's command line over it and toypkg's own."""
    site = make_site(tmp_path / "toy")
    python = wrapper_python(tmp_path / "bin" / "python", site.root)
    catalog_dir = absent_catalog(tmp_path / "team", 3)
    for directory in sorted(catalog_dir.glob("*-1")):
        scramble_keeping_size_and_time(directory / "patch.json")
    return catalog_dir, [
        "check",
        "--python",
        python,
        "--catalog",
        str(catalog_dir),
        "--catalog",
        str(site.team_catalog),
    ]


def test_an_entry_of_an_absent_distribution_is_never_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """toypkg is installed, and a catalog of three entries of other distributions beside its own: they are
    reported from the index alone (their patch.json, scrambled, would be an error if it were read)."""
    catalog_dir, argv = _beside_toypkg(tmp_path)
    done = in_process([*argv, "--no-config", "--json"], capsys)
    assert done.code == 1, done.out + done.err
    conditions = {item["id"]: item["condition"] for item in done.document()["environments"][0]["patches"]}
    assert {conditions[f"absentlib{number:02d}-1"] for number in range(3)} == {"not-installed"}
    assert conditions[PATCH_ID] == "needs-patch"
    headers = catalog_dir / index.HEADERS
    record = json.loads((catalog_dir / index.INDEX).read_text(encoding="utf-8"))["entries"]["absentlib01-1"]
    headers.write_text(headers.read_text(encoding="utf-8").replace(record["sha256"], "0" * 64), encoding="utf-8")
    index._LINES.clear()
    other = in_process([*argv, "--no-config", "--json"], capsys)
    assert (other.code, "absentlib01-1/patch.json is not valid JSON" in other.err) == (2, True), "another's line"


def test_plain_check_counts_the_entries_of_packages_no_environment_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain check folds them into its count of not-installed entries without making patches of them (their
    patch.json, scrambled, would be an error if it were read); -v lists each, from the index alone. toypkg's own
    entry, whose package the interpreter imports, is acted on whatever catalog it is in."""
    made: Counter[str] = Counter()
    from_index = entry.from_index

    def counted(header: Mapping[str, Any], directory: Path) -> entry.Patch:
        made[directory.name] += 1
        return from_index(header, directory)

    monkeypatch.setattr(entry, "from_index", counted)
    _, argv = _beside_toypkg(tmp_path)
    plain = in_process([*argv, "--no-config"], capsys)
    assert (plain.code, plain.label(PATCH_ID)) == (1, "needs-patch"), plain.out + plain.err
    (folded,) = [line for line in plain.lines if line.strip().startswith("not concerned here:")]
    builtin = len(catalog.entry_dirs([catalog.builtin_catalog()]))
    assert f"{builtin + 3} not-installed" in folded, folded
    assert "absentlib" not in plain.out
    assert not [name for name in made if name.startswith("absentlib")], made
    listed = in_process([*argv, "--no-config", "-v"], capsys)
    assert [listed.label(f"absentlib{number:02d}-1") for number in range(3)] == ["not-installed"] * 3
    assert in_process([*argv, "--no-config", "-q"], capsys).out.count("not concerned") == 0


def test_an_entry_of_a_package_no_environment_imports_is_acted_on_where_hfpatch_keeps_its_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The state of an entry left behind where its distribution was uninstalled is said of it: it is not counted."""
    site = make_site(tmp_path / "toy")
    python = wrapper_python(tmp_path / "bin" / "python", site.root)
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    (site.root / ".hfpatch" / "absentlib01-1").mkdir(parents=True)
    argv = ["check", "--python", python, "--catalog", str(catalog_dir), "--no-config"]
    done = in_process(argv, capsys)
    assert "absentlib01-1: not-installed" in done.out, done.out
    assert "absentlib00-1" not in done.out


def test_where_no_environment_imports_any_package_the_error_names_every_distribution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An interpreter that has none of the catalogs' distributions is the wrong one, counted entries or not."""
    site = make_site(tmp_path / "toy")
    python = wrapper_python(tmp_path / "bin" / "python", tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    done = in_process(["check", "--python", python, "--catalog", str(catalog_dir), "--no-config"], capsys)
    assert done.code == 2, done.out + done.err
    assert "has none of the distributions the patches are for (absentlib00, absentlib01, " in done.err, done.err
    assert site.root.is_dir()


def test_two_entries_of_one_statement_of_a_package_nobody_imports_are_refused_in_plain_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Counting an entry does not let its clash with another entry of the same file pass unsaid."""
    catalog_dir = absent_catalog(tmp_path / "team", 1)
    twin = catalog_dir / "absentlib00-2"
    twin.mkdir()
    (twin / "fixed").mkdir()
    (twin / "fixed" / "greet.py").write_text(FIXED_GREET, encoding="utf-8")
    data = json.loads((catalog_dir / "absentlib00-1" / "patch.json").read_text(encoding="utf-8"))
    (twin / "patch.json").write_text(json.dumps({**data, "id": twin.name}, indent=2) + "\n", encoding="utf-8")
    index.write(catalog_dir)
    done = in_process(["check", "--catalog", str(catalog_dir), "--no-config"], capsys)
    assert done.code == 2, done.out + done.err
    assert "absentlib00-1 and absentlib00-2 both change greet" in done.err, done.err


def test_an_entry_of_files_the_release_never_had_is_never_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry of toypkg whose file toypkg 1.0 never had (RECORD does not list it, nor is it on disk) is
    not-applicable from its header alone: its patch.json, scrambled, would be an error if it were read whole."""
    site = make_site(tmp_path / "toy")
    python = wrapper_python(tmp_path / "bin" / "python", site.root)
    where = tmp_path / "team" / "toypkg-never-1"
    data = {**entry_data(with_probe=False), "id": where.name, "module": "toypkg.never", "file": "toypkg/never.py"}
    (where / "fixed").mkdir(parents=True)
    (where / "fixed" / "greet.py").write_text(FIXED_GREET, encoding="utf-8")
    (where / "patch.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    index.write(where.parent)
    scramble_keeping_size_and_time(where / "patch.json")
    argv = ["check", "--python", python, "--catalog", str(where.parent), "--catalog", str(site.team_catalog)]
    done = in_process([*argv, "--no-config", "--json"], capsys)
    assert done.code == 1, done.out + done.err
    conditions = {item["id"]: item["condition"] for item in done.document()["environments"][0]["patches"]}
    assert (conditions[where.name], conditions[PATCH_ID]) == ("not-applicable", "needs-patch")
    (site.root / "toypkg" / "never.py").write_text("x = 1\n", encoding="utf-8")
    assert in_process([*argv, "--no-config"], capsys).code == 2, "on disk: the entry is read whole, its fault said"


def test_an_entry_whose_installed_files_its_index_knows_by_digest_is_checked_unopened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """toypkg 1.0's core.py is a known file of toypkg-1: `check` takes its verdict from known.jsonl beside the index,
    and its patch.json (scrambled, as the index last saw it) is never read. Code no digest knows, a stale
    known.jsonl, or hfpatch's state in the environment each have the entry read whole: there its fault is said."""
    site = make_site(tmp_path / "toy")
    python = wrapper_python(tmp_path / "bin" / "python", site.root)
    index.write(site.team_catalog)
    entry_file = site.team_catalog / PATCH_ID / "patch.json"
    kept = entry_file.read_bytes()
    scramble_keeping_size_and_time(entry_file)
    argv = ["check", "--python", python, "--catalog", str(site.team_catalog), "--patch", PATCH_ID, "--no-config"]
    done = in_process(argv, capsys)
    assert (done.code, done.label(PATCH_ID)) == (1, "needs-patch"), done.out + done.err
    assert "the released 1.0 file" in done.out

    known_file = site.team_catalog / index.KNOWN
    rows = known_file.read_text(encoding="utf-8")
    known_file.write_text(rows.replace(sha256(kept), "0" * 64), encoding="utf-8")
    index._LINES.clear()
    other = in_process(argv, capsys)
    assert (other.code, f"{entry_file} is not valid JSON" in other.err) == (2, True), "known.jsonl of another entry"
    known_file.write_text(rows, encoding="utf-8")
    index._LINES.clear()

    site.file.write_text(BUGGY_MODULE + "# rebuilt\n", encoding="utf-8")
    rebuilt = in_process(argv, capsys)
    assert (rebuilt.code, f"{entry_file} is not valid JSON" in rebuilt.err) == (2, True), "read whole: its fault said"
    site.file.write_text(BUGGY_MODULE, encoding="utf-8")
    assert in_process(argv, capsys).code == 1
    (site.root / ".hfpatch").mkdir()
    held = in_process(argv, capsys)
    assert (held.code, f"{entry_file} is not valid JSON" in held.err) == (2, True), "hfpatch's state here"


def test_an_entry_changed_after_its_index_is_read_from_patch_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index is only a shortcut: an entry modified since (or of another size) is read, and a fault in it said."""
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    entry_file = catalog_dir / "absentlib01-1" / "patch.json"
    scramble_keeping_size_and_time(entry_file)
    later = entry_file.stat().st_mtime_ns + 10_000_000_000
    os.utime(entry_file, ns=(later, later))
    done = in_process(["check", "--catalog", str(catalog_dir), "--no-config"], capsys)
    assert done.code == 2
    assert f"{entry_file} is not valid JSON" in done.err


def test_a_catalog_without_an_index_is_read_from_its_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    (catalog_dir / index.INDEX).unlink()
    scramble_keeping_size_and_time(catalog_dir / "absentlib00-1" / "patch.json")
    done = in_process(["check", "--catalog", str(catalog_dir), "--no-config"], capsys)
    assert done.code == 2
    assert "absentlib00-1/patch.json is not valid JSON" in done.err


def test_the_index_command_writes_and_checks_an_index(tmp_path: Path) -> None:
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    check = run([sys.executable, "-m", "hfpatch.index", "--check", str(catalog_dir)])
    assert (check.code, check.err) == (0, "")
    entry_file = catalog_dir / "absentlib00-1" / "patch.json"
    entry_file.write_text(entry_file.read_text(encoding="utf-8").replace("greet(None) fails", "greet fails"))
    stale = run([sys.executable, "-m", "hfpatch.index", "--check", str(catalog_dir)])
    assert stale.code == 1
    assert stale.err == (
        f"{catalog_dir / 'index.json'} does not match the entries beside it: "
        f"`python -m hfpatch.index {catalog_dir}` writes it\n"
    )
    wrote = run([sys.executable, "-m", "hfpatch.index", str(catalog_dir)])
    assert (wrote.code, wrote.out) == (0, f"wrote {catalog_dir / 'index.json'}\n")
    lines = (catalog_dir / index.HEADERS).read_text(encoding="utf-8").splitlines()
    (line,) = [line for line in lines if line.startswith("absentlib00-1\t")]
    assert json.loads(line.partition("\t")[2])[1]["title"] == "greet fails"
    assert json.loads((catalog_dir / index.INDEX).read_text())["entries"]["absentlib00-1"]["distribution"] == (
        "absentlib00"
    )
    (catalog_dir / index.HEADERS).unlink()
    missing = run([sys.executable, "-m", "hfpatch.index", "--check", str(catalog_dir)])
    assert (missing.code, missing.err.split(":")[0]) == (1, f"{catalog_dir / index.HEADERS} is missing")


def test_an_index_of_hfpatch_before_headers_jsonl_is_read_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Schema 1 held each header in index.json: a catalog indexed by that hfpatch is still never opened where its
    distributions are not installed (their patch.json, scrambled, would be an error if it were read)."""
    catalog_dir = absent_catalog(tmp_path / "team", 2)
    records = json.loads((catalog_dir / index.INDEX).read_text(encoding="utf-8"))["entries"]
    lines = (catalog_dir / index.HEADERS).read_text(encoding="utf-8").splitlines()[1:]
    written = {name: json.loads(rest) for name, _, rest in (line.partition("\t") for line in lines)}
    kept = ("distribution", "files", "advisories")
    old = {
        name: {
            "sha256": sha,
            "size": records[name]["size"],
            "header": {**rest, **{key: records[name][key] for key in kept if records[name][key]}},
            "changes": changes,
        }
        for name, (sha, rest, changes) in written.items()
    }
    (catalog_dir / index.INDEX).write_text(json.dumps({"schema": 1, "entries": old}), encoding="utf-8")
    (catalog_dir / index.HEADERS).unlink()
    os.utime(catalog_dir / index.INDEX, ns=(time.time_ns(), time.time_ns()))
    for directory in sorted(catalog_dir.glob("*-1")):
        scramble_keeping_size_and_time(directory / "patch.json")
    for view in ([], ["-v"], ["--json"]):
        done = in_process(["check", "--catalog", str(catalog_dir), "--no-config", *view], capsys)
        assert done.code in (0, 2) and "is not valid JSON" not in done.err, done.err
    listed = in_process(["check", "--catalog", str(catalog_dir), "--no-config", "-v"], capsys)
    assert listed.label("absentlib01-1") == "not-installed"


def test_packages_located_at_once_are_those_the_import_system_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """introspect.locate answers for hundreds of distributions at once, most without asking the path finder: each
    answer is importlib.util.find_spec's."""
    import importlib.util

    from hfpatch import introspect

    (tmp_path / "madeup_pkg").mkdir()
    (tmp_path / "madeup_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "madeup_namespace").mkdir()
    (tmp_path / "madeup_module.py").write_text("", encoding="utf-8")
    (tmp_path / "madeup_ext.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    names = ["madeup_pkg", "madeup_namespace", "madeup_module", "madeup_ext", "madeup_absent", "json", "sys"]
    names += ["_frozen_importlib", "zipimport", "hfpatch", "pytest", *(f"absentlib{number:03d}" for number in range(5))]
    located = introspect.locate(names)["packages"]
    assert {name: located[name]["found"] for name in names} == {
        name: importlib.util.find_spec(name) is not None for name in names
    }
    assert located["madeup_pkg"]["package_dir"] == str(tmp_path / "madeup_pkg")
    assert introspect.absent(names) == [name for name in names if importlib.util.find_spec(name) is None]


def test_an_environment_that_imports_no_package_of_the_entries_counted_alone_is_the_wrong_one() -> None:
    """Where every entry of a run was only counted (none concerns the environment), the run says so as it says it
    of patches: the interpreter has none of their distributions."""
    from hfpatch import commands, plan

    results = commands.resolve([])
    counted = [catalog.Dormant("absentlib00-1", "absentlib00", "absentlib00", ("absentlib00/core.py",))]
    options = plan.Options(lookup=catalog.finder([]))
    (result,) = commands.run(plan.Command.CHECK, results, [], options, dormant=counted)
    assert result.error is not None and "the distributions the patches are for (absentlib00)" in result.error
    assert commands.exit_code([result]) == 2
