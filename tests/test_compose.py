"""The new model from the user's side, on the toy distribution: one patch of two files (toypkg-pair), two patches
of one file that compose (toypkg-a and toypkg-b), and the state hfpatch 0.2 left behind.

Every run is a real process acting on a real site (tests/toy.py). Whatever happens, each file holds exactly one of
the texts the patches can make of it (computed here from the texts, never read off hfpatch), a patched file has its
original saved, and the next plain `hfpatch apply` or `hfpatch revert` finishes the job.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import (
    APPLY_FAULTS,
    KILLED,
    REVERT_FAULTS,
    Completed,
    Site,
    hfpatch,
    line_in_record,
    record_line,
    record_with_line,
    run_read_only,
    sha256,
    succeeded,
    tree,
    unchecked_bytecode,
)
from toy import (
    A_ID,
    B_ID,
    BUGGY_MODULE,
    BUGGY_WORDS,
    FIXED_MODULE,
    GREET,
    MODULE,
    PAIR_ID,
    PATCH_ID,
    SHOUT,
    TITLE,
    WORDS,
    make_composed_site,
    make_pair_site,
    make_site,
    with_changes,
    write_entry,
)

FILES = (MODULE, WORDS)
ORIGINAL = {MODULE: BUGGY_MODULE.encode(), WORDS: BUGGY_WORDS.encode()}
PATCHED = {MODULE: with_changes(BUGGY_MODULE, GREET).encode(), WORDS: with_changes(BUGGY_WORDS, TITLE).encode()}
# The fault points a run reaches once for each file (`<point>#1` at the first file, `<point>#2` at the second).
PER_FILE = ("after-write", "after-RECORD", "after-bytecode")


# ------------------------------------------------------------------------------------------------------ helpers


def backup(site: Site, file: str) -> Path:
    """hfpatch's copy of a file's original bytes."""
    return site.state_dir.joinpath("files", *file.split("/"), "original")


def pyc(site: Site, file: str) -> Path:
    return Path(importlib.util.cache_from_source(str(site.root / file)))


def bytecode_of(site: Site, file: str, texts: dict[str, bytes]) -> str | None:
    """Which of `texts` (name -> source) the file's cached bytecode was built from; None where there is none."""
    if not pyc(site, file).exists():
        return None
    source_hash = pyc(site, file).read_bytes()[8:16]
    names = [name for name, data in texts.items() if importlib.util.source_hash(data) == source_hash]
    assert names, f"{pyc(site, file)} was built from none of {sorted(texts)}"
    return names[0]


def phase(site: Site, patch_id: str | None = None) -> str | None:
    path = site.state_dir / (patch_id or site.patch_id) / "state.json"
    return json.loads(path.read_text())["phase"] if path.exists() else None


def twin(site: Site, root: Path) -> Site:
    """A byte-for-byte copy of the site as a killed run left it, so that apply and revert each converge from it."""
    shutil.copytree(site.root, root, symlinks=True)
    return dataclasses.replace(site, root=root)


Build = Callable[[Path], Site]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Build], Site]:
    """A site brought to a state by real runs once a module (and worker), for each test to take a copy of: the
    state holds paths relative to the site only, so a copy is the same environment elsewhere."""
    built: dict[str, Site] = {}

    def get(name: str, build: Build) -> Site:
        if name not in built:
            built[name] = build(tmp_path_factory.mktemp(name))
        return built[name]

    return get


def no_temporary_files(site: Site) -> None:
    leftovers = [path for path in site.root.rglob("*") if ".hfpatch-" in path.name]
    assert not leftovers, f"temporary files left behind: {leftovers}"


# --------------------------------------------------------------------------------------- one patch of two files


@dataclass(frozen=True)
class Pair:
    """The site of toypkg-pair and what it may hold: each file original or patched, and RECORD as installed."""

    site: Site
    record: bytes  # as the installer wrote it

    def holds(self, file: str) -> str:
        """Which text the file holds, asserting it is one of the two: "original" or "patched"."""
        data = (self.site.root / file).read_bytes()
        assert data in (ORIGINAL[file], PATCHED[file]), f"{file} holds neither the original nor the patched bytes"
        return "original" if data == ORIGINAL[file] else "patched"

    def record_with(self, patched: tuple[str, ...]) -> bytes:
        """RECORD once the files named are patched (the others original): only their lines differ."""
        record = self.record
        for file in patched:
            record = record_with_line(record, record_line(file, ORIGINAL[file]), record_line(file, PATCHED[file]))
        return record

    def bytecode(self, file: str) -> str | None:
        return bytecode_of(self.site, file, {"original": ORIGINAL[file], "patched": PATCHED[file]})

    def whole(self) -> tuple[str, str]:
        """A state a crash may leave, never a mix: each file whole, RECORD one of its forms, the original of every
        patched file saved; returns what each file holds."""
        held = (self.holds(MODULE), self.holds(WORDS))
        patched = tuple(file for file, what in zip(FILES, held, strict=True) if what == "patched")
        forms = [self.record_with(files) for files in ((), (MODULE,), (WORDS,), FILES)]
        assert self.site.record.read_bytes() in forms, "RECORD is in none of the forms a run passes through"
        for file in patched:
            assert backup(self.site, file).read_bytes() == ORIGINAL[file], f"{file} is patched without its original"
        no_temporary_files(self.site)
        return held

    def assert_applied(self) -> None:
        assert self.whole() == ("patched", "patched")
        assert self.site.record.read_bytes() == self.record_with(FILES)
        assert phase(self.site) == "applied"
        assert [self.bytecode(file) for file in FILES] == ["patched", "patched"]
        check = self.site.run("check")
        assert (check.code, check.label(PAIR_ID)) == (0, "applied"), check.out + check.err

    def assert_reverted(self) -> None:
        assert self.whole() == ("original", "original")
        assert self.site.record.read_bytes() == self.record, "RECORD is not byte for byte as installed"
        assert not self.site.holds_state, "hfpatch's state or an original is left behind"
        assert [self.bytecode(file) for file in FILES] == ["original", "original"]


def pair_site(where: Path) -> Site:
    """toypkg 1.0 with both modules, each with unchecked-hash bytecode that hfpatch must rebuild."""
    site = make_pair_site(where)
    for file in FILES:
        unchecked_bytecode(site.root / file)
    return site


def applied_pair_site(where: Path) -> Site:
    site = pair_site(where)
    succeeded(site.run("apply"))
    return site


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    site = pair_site(tmp_path)
    return Pair(site, site.record.read_bytes())


@pytest.fixture
def applied_pair(pair: Pair, prepared: Callable[[str, Build], Site], tmp_path: Path) -> Pair:
    """The pair with toypkg-pair applied by a real run (a copy of one made once)."""
    return Pair(twin(prepared("applied-pair", applied_pair_site), tmp_path / "applied"), pair.record)


def test_a_patch_of_two_files_is_checked_applied_and_reverted_as_one_byte_for_byte(pair: Pair) -> None:
    site = pair.site
    check = site.run("check", "--json")
    assert check.code == 1, check.out + check.err
    (found,) = check.document()["environments"][0]["patches"]
    assert found["condition"] == "needs-patch"
    assert found["files"] == [{"file": str(site.root / file), "sha256": sha256(ORIGINAL[file])} for file in FILES]

    done = succeeded(site.run("apply"))
    assert done.label(PAIR_ID) == "patched"
    # Each file named inside the environment the heading names (the JSON document keeps them whole, above).
    assert done.lines[0].endswith(f": toypkg 1.0 in {site.root}"), done.out
    assert f"  {PAIR_ID}: patched: {', '.join(FILES)} now have the fix " in done.text, done.out
    pair.assert_applied()
    saved = json.loads(site.state.read_text())
    assert [change["file"] for change in saved["files"]] == list(FILES)
    for file in FILES:
        held = json.loads(backup(site, file).with_name("state.json").read_text())
        assert (held["patches"], held["sha256"]) == ([PAIR_ID], sha256(PATCHED[file]))
        assert held["record_line_before"] == line_in_record(pair.record, file)
    check = site.run("check", "--json")
    (found,) = check.document()["environments"][0]["patches"]
    assert (check.code, found["condition"]) == (0, "applied")
    assert [item["sha256"] for item in found["files"]] == [sha256(PATCHED[file]) for file in FILES]
    verify = site.run("verify")  # no probe: the digests say it all
    assert (verify.code, verify.label(PAIR_ID)) == (0, "no-probe"), verify.out + verify.err

    done = succeeded(site.run("revert"))
    assert done.label(PAIR_ID) == "reverted"
    pair.assert_reverted()
    check = site.run("check")
    assert (check.code, check.label(PAIR_ID)) == (1, "needs-patch")


@pytest.mark.usefixtures("read_only_mounts")
def test_an_apply_that_cannot_write_the_second_file_puts_the_first_back_and_leaves_no_state(pair: Pair) -> None:
    """toypkg/text is a read-only mount: core.py is written, its RECORD line and bytecode too, then words.py fails."""
    site = pair.site
    done = run_read_only(site, "apply", directory=(site.root / WORDS).parent)
    assert done.code == 2, done.out + done.err
    assert f"cannot write {WORDS}: the filesystem is read-only" in done.text, done.out
    assert "Traceback" not in done.err
    assert pair.whole() == ("original", "original")
    assert site.record.read_bytes() == pair.record
    assert pair.bytecode(MODULE) in (None, "original")
    assert not site.holds_state, "a failed first apply left a state or an original behind"
    succeeded(site.run("apply"))
    pair.assert_applied()


def test_an_apply_that_fails_at_the_second_files_bytecode_puts_both_back_and_the_next_run_converges(
    pair: Pair,
) -> None:
    """words.py's cached .pyc is a directory: both files and their RECORD lines are written when removing it fails.
    The rollback's own refresh fails the same way, so the state stays (phase "applying") for the next run."""
    site = pair.site
    pyc(site, WORDS).unlink()
    pyc(site, WORDS).mkdir()
    done = site.run("apply")
    assert done.code == 2, done.out + done.err
    assert f"cannot remove {pyc(site, WORDS).relative_to(site.root)}: " in done.out and "Traceback" not in done.err
    assert pair.whole() == ("original", "original")
    assert site.record.read_bytes() == pair.record
    assert phase(site) == "applying"
    check = site.run("check")
    assert (check.code, check.label(PAIR_ID)) == (1, "incomplete")
    pyc(site, WORDS).rmdir()
    unchecked_bytecode(site.root / WORDS)
    succeeded(site.run("apply"))
    pair.assert_applied()


@dataclass(frozen=True)
class Fault:
    """A fault point of a run over two files (`#2`: the second time it is reached, at the second file), and what a
    run killed there leaves: each file, each RECORD line, the phase, each file's bytecode, check's word."""

    point: str
    files: tuple[str, str]
    record: tuple[str, ...]  # the files whose RECORD line describes the patched bytes
    phase: str | None
    bytecode: tuple[str, str]
    condition: str = "incomplete"

    @property
    def command(self) -> str:
        return self.point.split(":")[0]


ORIG, PTCH = "original", "patched"
PAIR_FAULTS = [
    Fault("apply:after-backup", (ORIG, ORIG), (), None, (ORIG, ORIG), "needs-patch"),
    Fault("apply:after-state-applying", (ORIG, ORIG), (), "applying", (ORIG, ORIG)),
    Fault("apply:after-write#1", (PTCH, ORIG), (), "applying", (ORIG, ORIG)),
    Fault("apply:after-RECORD#1", (PTCH, ORIG), (MODULE,), "applying", (ORIG, ORIG)),
    Fault("apply:after-bytecode#1", (PTCH, ORIG), (MODULE,), "applying", (PTCH, ORIG)),
    Fault("apply:after-write#2", (PTCH, PTCH), (MODULE,), "applying", (PTCH, ORIG)),
    Fault("apply:after-RECORD#2", (PTCH, PTCH), FILES, "applying", (PTCH, ORIG)),
    Fault("apply:after-bytecode#2", (PTCH, PTCH), FILES, "applying", (PTCH, PTCH)),
    Fault("revert:after-state-reverting", (PTCH, PTCH), FILES, "reverting", (PTCH, PTCH)),
    Fault("revert:after-write#1", (ORIG, PTCH), FILES, "reverting", (PTCH, PTCH)),
    Fault("revert:after-RECORD#1", (ORIG, PTCH), (WORDS,), "reverting", (PTCH, PTCH)),
    Fault("revert:after-bytecode#1", (ORIG, PTCH), (WORDS,), "reverting", (ORIG, PTCH)),
    Fault("revert:after-write#2", (ORIG, ORIG), (WORDS,), "reverting", (ORIG, PTCH)),
    Fault("revert:after-RECORD#2", (ORIG, ORIG), (), "reverting", (ORIG, PTCH)),
    Fault("revert:after-bytecode#2", (ORIG, ORIG), (), "reverting", (ORIG, ORIG)),
]


def each_file(points: list[str]) -> list[str]:
    """The fault points in the order a run over two files meets them: those reached once a file, for each file."""
    once = [point for point in points if point.split(":")[1] not in PER_FILE]
    per_file = [point for point in points if point.split(":")[1] in PER_FILE]
    return once + [f"{point}#{n}" for n in (1, 2) for point in per_file]


def test_the_table_names_every_fault_point_for_every_file_and_a_third_time_never_comes(pair: Pair) -> None:
    assert [fault.point for fault in PAIR_FAULTS] == each_file(APPLY_FAULTS) + each_file(REVERT_FAULTS)
    done = succeeded(pair.site.run("apply", HFPATCH_FAULT="apply:after-write#3"))  # two files: reached twice
    assert done.label(PAIR_ID) == "patched"


@pytest.mark.parametrize("fault", [pytest.param(fault, id=fault.point) for fault in PAIR_FAULTS])
def test_a_run_of_two_files_killed_at_any_step_leaves_each_whole_and_plain_apply_or_revert_converges(
    request: pytest.FixtureRequest, fault: Fault, tmp_path: Path
) -> None:
    pair: Pair = request.getfixturevalue("applied_pair" if fault.command == "revert" else "pair")
    site = pair.site
    killed = site.run(fault.command, HFPATCH_FAULT=fault.point)
    assert killed.code == KILLED, f"never reached {fault.point}: {killed.out}{killed.err}"

    assert pair.whole() == fault.files
    assert site.record.read_bytes() == pair.record_with(fault.record)
    assert phase(site) == fault.phase
    assert all(backup(site, file).read_bytes() == ORIGINAL[file] for file in FILES)  # saved before anything else
    assert (pair.bytecode(MODULE), pair.bytecode(WORDS)) == fault.bytecode
    check = site.run("check")
    assert (check.code, check.label(PAIR_ID)) == (1, fault.condition), check.out + check.err

    other = Pair(twin(site, tmp_path / "twin"), pair.record)
    done = succeeded(site.run("apply"))
    assert done.label(PAIR_ID) == ("completed" if fault.files == (PTCH, PTCH) else "patched")
    pair.assert_applied()
    succeeded(other.site.run("revert"))
    other.assert_reverted()


CRASH_AFTER_CRASH = [
    ("apply:after-write#1", "revert:after-state-reverting"),
    ("apply:after-bytecode#2", "revert:after-write#1"),
    ("apply:after-RECORD#2", "revert:after-bytecode#2"),
    ("revert:after-write#1", "apply:after-state-applying"),
]


@pytest.mark.parametrize(
    ("first", "second"), [pytest.param(*kills, id="-then-".join(kills)) for kills in CRASH_AFTER_CRASH]
)
def test_a_run_killed_while_finishing_another_killed_run_still_converges_with_the_originals_kept(
    request: pytest.FixtureRequest, first: str, second: str, tmp_path: Path
) -> None:
    """An apply killed before it wrote the files' states, then a revert killed too: only the journals say which
    file holds the patch, and the next run must neither leave a patched file without its original nor take the
    patched bytes for the original."""
    pair: Pair = request.getfixturevalue("applied_pair" if first.startswith("revert") else "pair")
    site = pair.site
    for point in (first, second):
        killed = site.run(point.split(":")[0], HFPATCH_FAULT=point)
        assert killed.code == KILLED, f"never reached {point}: {killed.out}{killed.err}"
        pair.whole()
    other = Pair(twin(site, tmp_path / "twin"), pair.record)
    patched = "patched" in pair.whole()
    done = succeeded(site.run("revert"))
    assert ("restored the original" in done.text) is patched, done.out
    assert ("were already the original" in done.text) is not patched, done.out
    pair.assert_reverted()
    succeeded(other.site.run("apply"))
    other.assert_applied()
    succeeded(other.site.run("revert"))
    other.assert_reverted()


# ------------------------------------------------------------------------------------- two patches of one file

FIX_OF = {A_ID: GREET, B_ID: SHOUT}
ORDERS = [pytest.param((A_ID, B_ID), id="a-then-b"), pytest.param((B_ID, A_ID), id="b-then-a")]


def text_with(*patch_ids: str) -> bytes:
    """core.py with the fixes of the patches named, computed from the texts: what hfpatch must make of it."""
    return with_changes(BUGGY_MODULE, *(FIX_OF[patch_id] for patch_id in sorted(patch_ids))).encode()


def fixes_in(site: Site) -> set[str]:
    """The patches whose fix core.py holds, asserting it holds one of the texts the patches can make of it."""
    data = site.file.read_bytes()
    found = [held for held in ((), (A_ID,), (B_ID,), (A_ID, B_ID)) if text_with(*held) == data]
    assert found, "core.py holds none of the texts toypkg-a and toypkg-b can make of it"
    return set(found[0])


def run_on(site: Site, *args: str, patches: tuple[str, ...] = (A_ID, B_ID), **env: str) -> Completed:
    """hfpatch acting on the site's patches named (both by default)."""
    selection = [word for patch_id in patches for word in ("--patch", patch_id)]
    return hfpatch(*args, *selection, env=site.env(**env))


def labels(done: Completed, patches: tuple[str, ...] = (A_ID, B_ID)) -> dict[str, str]:
    return {patch_id: done.label(patch_id) for patch_id in patches}


def file_state(site: Site) -> dict[str, object]:
    parsed: dict[str, object] = json.loads(backup(site, MODULE).with_name("state.json").read_text())
    return parsed


def assert_both_applied(site: Site, record: bytes) -> None:
    assert site.file.read_bytes() == text_with(A_ID, B_ID)
    assert site.record.read_bytes() == record_with_line(
        record, record_line(MODULE, text_with()), record_line(MODULE, text_with(A_ID, B_ID))
    )
    assert backup(site, MODULE).read_bytes() == text_with()
    check = run_on(site, "check")
    assert (check.code, labels(check)) == (0, {A_ID: "applied", B_ID: "applied"}), check.out + check.err


def assert_neither(site: Site, record: bytes, *, check_too: bool = True) -> None:
    assert site.file.read_bytes() == text_with()
    assert site.record.read_bytes() == record, "RECORD is not byte for byte as installed"
    assert not site.holds_state, "hfpatch's state or an original is left behind"
    if not check_too:
        return
    check = run_on(site, "check")
    assert (check.code, labels(check)) == (1, {A_ID: "needs-patch", B_ID: "needs-patch"}), check.out + check.err


@pytest.fixture
def composed(tmp_path: Path) -> Site:
    return make_composed_site(tmp_path)


def composed_with(prepared: Callable[[str, Build], Site], where: Path, *applied: str) -> Site:
    """A copy of the composed site with the patches named applied, by real runs in that order."""

    def build(root: Path) -> Site:
        site = make_composed_site(root)
        for patch_id in applied:
            succeeded(run_on(site, "apply", patches=(patch_id,)))
        return site

    return twin(prepared("-".join(applied), build), where / "copy")


@pytest.mark.parametrize("applied", ORDERS)
@pytest.mark.parametrize("reverted", ORDERS)
def test_two_patches_of_one_file_compose_in_either_order_and_each_reverts_on_its_own(
    composed: Site, applied: tuple[str, str], reverted: tuple[str, str]
) -> None:
    site, record = composed, composed.record.read_bytes()
    for patch_id in applied:
        done = succeeded(run_on(site, "apply", patches=(patch_id,)))
        assert done.label(patch_id) == "patched"
    assert_both_applied(site, record)
    assert file_state(site)["patches"] == list(applied)

    first, second = reverted
    done = succeeded(run_on(site, "revert", patches=(first,)))
    assert done.label(first) == "reverted"
    assert f"took {first} out of {site.file.relative_to(site.root)}; {second} stays applied" in done.text, done.out
    assert site.file.read_bytes() == text_with(second), "the file is not the original with only the other's fix"
    assert line_in_record(site.record.read_bytes(), MODULE) == record_line(MODULE, text_with(second))
    assert file_state(site)["patches"] == [second]
    check = run_on(site, "check")
    assert (check.code, labels(check)) == (1, {first: "needs-patch", second: "applied"}), check.out + check.err

    done = succeeded(run_on(site, "revert", patches=(second,)))
    assert (done.label(second), "restored the original" in done.text) == ("reverted", True), done.out
    assert_neither(site, record)


def test_reverting_one_of_two_patches_of_a_file_refuses_without_the_others_entry(
    composed: Site, tmp_path: Path
) -> None:
    site = composed
    succeeded(run_on(site, "apply"))
    only_a = write_entry(tmp_path / "only-a", A_ID)
    before = tree(site.root)
    done = run_on(site, "revert", patches=(A_ID,), HFPATCH_CATALOG=str(only_a))
    assert (done.code, done.label(A_ID)) == (2, "refused"), done.out + done.err
    assert "also holds the patch toypkg-b, which no catalog given has" in done.text
    assert "Traceback" not in done.err
    assert tree(site.root) == before, "a refused revert changed something"
    # with toypkg-b's entry in a catalog given (not selected), the file is rebuilt with its fix
    done = succeeded(run_on(site, "revert", patches=(A_ID,)))
    assert fixes_in(site) == {B_ID}


def killed_and_converging(site: Site, record: bytes, where: Path, command: str, patch_id: str, point: str) -> None:
    """Kill `command` of one patch at `point`; then each file is whole, its original saved, check asks for action
    (never a refusal: the other patch's file is not \"edited\"), and plain apply or revert converges."""
    killed = run_on(site, command, patches=(patch_id,), HFPATCH_FAULT=point)
    assert killed.code == KILLED, f"never reached {point}: {killed.out}{killed.err}"
    assert fixes_in(site)  # whole: one of the texts
    assert backup(site, MODULE).read_bytes() == text_with()
    no_temporary_files(site)
    check = run_on(site, "check")
    assert check.code == 1, check.out + check.err
    assert set(labels(check).values()) <= {"applied", "incomplete", "needs-patch"}, check.out

    other = twin(site, where / "twin")
    succeeded(run_on(site, "apply"))
    assert_both_applied(site, record)
    succeeded(run_on(other, "revert"))
    assert_neither(other, record, check_too=False)


# Every fault point where the killed patch sorts after the other (a plain run must finish it first), and the other
# way round the point where the file has changed under the other's state.
SECOND_APPLY_KILLED = [
    *(pytest.param((A_ID, B_ID), point, id=f"{point}-a-then-b") for point in APPLY_FAULTS),
    pytest.param((B_ID, A_ID), "apply:after-write", id="apply:after-write-b-then-a"),
]
FIRST_REVERT_KILLED = [
    *(pytest.param((B_ID, A_ID), point, id=f"{point}-b-then-a") for point in REVERT_FAULTS),
    pytest.param((A_ID, B_ID), "revert:after-write", id="revert:after-write-a-then-b"),
]


@pytest.mark.parametrize(("order", "point"), SECOND_APPLY_KILLED)
def test_the_second_patch_of_a_file_killed_while_it_applies_converges_with_plain_apply_or_revert(
    composed: Site, prepared: Callable[[str, Build], Site], order: tuple[str, str], point: str, tmp_path: Path
) -> None:
    first, second = order
    site = composed_with(prepared, tmp_path, first)
    killed_and_converging(site, composed.record.read_bytes(), tmp_path, "apply", second, point)


@pytest.mark.parametrize(("order", "point"), FIRST_REVERT_KILLED)
def test_the_first_patch_of_a_file_killed_while_it_reverts_converges_with_plain_apply_or_revert(
    composed: Site, prepared: Callable[[str, Build], Site], order: tuple[str, str], point: str, tmp_path: Path
) -> None:
    site = composed_with(prepared, tmp_path, *order)
    killed_and_converging(site, composed.record.read_bytes(), tmp_path, "revert", order[0], point)


def test_a_reinstall_drops_both_patches_of_a_file_and_apply_puts_both_back(composed: Site, tmp_path: Path) -> None:
    site, record = composed, composed.record.read_bytes()
    succeeded(run_on(site, "apply"))
    site.file.write_bytes(text_with())  # what pip install --force-reinstall leaves
    site.record.write_bytes(record)
    check = run_on(site, "check")
    assert (check.code, labels(check)) == (1, {A_ID: "dropped", B_ID: "dropped"}), check.out + check.err
    other = twin(site, tmp_path / "twin")
    done = succeeded(run_on(site, "apply"))
    assert labels(done) == {A_ID: "patched", B_ID: "patched"}
    assert_both_applied(site, record)
    succeeded(run_on(other, "revert"))
    assert_neither(other, record)


def test_while_one_patch_of_a_file_is_interrupted_the_other_waits_for_it_untouched(
    composed: Site, prepared: Callable[[str, Build], Site], tmp_path: Path
) -> None:
    """toypkg-b's apply is killed after it wrote core.py: toypkg-a, applied before, is not \"edited\", and a run of
    toypkg-a alone would make toypkg-b's journal untrue, so it refuses, naming toypkg-b, and writes nothing."""
    site = composed_with(prepared, tmp_path, A_ID)
    assert run_on(site, "apply", patches=(B_ID,), HFPATCH_FAULT="apply:after-write").code == KILLED
    check = run_on(site, "check", patches=(A_ID,))
    assert (check.code, check.label(A_ID)) == (1, "incomplete"), check.out + check.err
    assert (
        "as the interrupted apply of toypkg-b left it" in check.text and "with toypkg-b among the patches" in check.text
    )
    before = tree(site.root)
    for command in ("apply", "revert"):
        done = run_on(site, command, patches=(A_ID,))
        assert (done.code, done.label(A_ID)) == (2, "refused"), done.out + done.err
        assert "the apply of toypkg-b was interrupted" in done.text and "nothing was changed" in done.text
    assert tree(site.root) == before
    done = succeeded(run_on(site, "revert"))  # both: toypkg-b's run is finished first
    assert labels(done) == {A_ID: "reverted", B_ID: "reverted"}
    assert_neither(site, composed.record.read_bytes())


# ------------------------------------------------------------------------------------------ hfpatch 0.2's state

# What hfpatch 0.2 kept of a patch: one state a patch, of its one file, with the original beside it.
HFPATCH_02_FIELDS = {
    "schema", "patch", "hfpatch_version", "applied_at", "distribution", "version", "dist_info", "target",
    "before_sha256", "after_sha256", "record_line_before", "phase",
}  # fmt: skip


def as_hfpatch_02_left_it(site: Site, phase: str) -> None:
    """Turn this hfpatch's state of an apply of toypkg-1 into the one hfpatch 0.2 wrote of it (schema 1), with the
    original in .hfpatch/<id>/original and no state of the file."""
    saved = json.loads(site.state.read_text())
    held = json.loads(site.file_state.read_text())
    (change,) = saved["files"]
    state = {
        "schema": 1,
        "patch": saved["patch"],
        "hfpatch_version": "0.2.0",
        "applied_at": saved["applied_at"],
        "distribution": saved["distribution"],
        "version": saved["version"],
        "dist_info": saved["dist_info"],
        "target": change["file"],
        "before_sha256": change["before_sha256"],
        "after_sha256": change["after_sha256"],
        "record_line_before": held["record_line_before"],
        "phase": phase,
    }
    assert set(state) == HFPATCH_02_FIELDS
    original = site.backup.read_bytes()
    shutil.rmtree(site.state_dir / "files")
    (site.state.parent / "original").write_bytes(original)
    site.state.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")


def applied_toy_site(where: Path) -> Site:
    site = make_site(where)
    succeeded(site.run("apply"))
    return site


@pytest.fixture
def applied_toy(prepared: Callable[[str, Build], Site], tmp_path: Path) -> Site:
    """toypkg 1.0 with toypkg-1 applied by this hfpatch (a copy of one made once)."""
    return twin(prepared("applied-toy", applied_toy_site), tmp_path / "site")


def assert_in_the_new_layout(site: Site) -> None:
    saved = json.loads(site.state.read_text())
    assert (saved["schema"], saved["phase"]) == (2, "applied")
    held = json.loads(site.file_state.read_text())
    assert (held["patches"], held["sha256"]) == ([PATCH_ID], sha256(FIXED_MODULE))
    assert site.backup.read_bytes() == BUGGY_MODULE.encode()
    assert not (site.state.parent / "original").exists(), "hfpatch 0.2's backup is left beside the state"


def test_an_applied_patch_in_hfpatch_02s_state_is_applied_and_reverts_to_no_state(
    applied_toy: Site, tmp_path: Path
) -> None:
    site, record = applied_toy, make_site(tmp_path / "installed").record.read_bytes()
    as_hfpatch_02_left_it(site, "applied")
    check = site.run("check")
    assert (check.code, check.label(PATCH_ID)) == (0, "applied"), check.out + check.err
    done = succeeded(site.run("revert"))
    assert done.label(PATCH_ID) == "reverted"
    assert site.file.read_bytes() == BUGGY_MODULE.encode()
    assert site.record.read_bytes() == record
    assert not site.holds_state, "hfpatch 0.2's state or backup is left behind"


@pytest.mark.parametrize("written", [True, False], ids=["killed-after-the-write", "killed-before-the-write"])
def test_an_apply_hfpatch_02_left_interrupted_is_finished_in_the_new_layout(
    applied_toy: Site, written: bool, tmp_path: Path
) -> None:
    site, record = applied_toy, make_site(tmp_path / "installed").record.read_bytes()
    as_hfpatch_02_left_it(site, "applying")
    site.record.write_bytes(record)  # 0.2 wrote RECORD after the file
    if not written:
        site.file.write_bytes(BUGGY_MODULE.encode())
    check = site.run("check")
    assert (check.code, check.label(PATCH_ID)) == (1, "incomplete"), check.out + check.err
    done = succeeded(site.run("apply"))
    assert done.label(PATCH_ID) == ("completed" if written else "patched")
    assert site.file.read_bytes() == FIXED_MODULE.encode()
    assert line_in_record(site.record.read_bytes(), MODULE) == record_line(MODULE, FIXED_MODULE.encode())
    assert_in_the_new_layout(site)
    check = site.run("check")
    assert (check.code, check.label(PATCH_ID)) == (0, "applied"), check.out + check.err
    succeeded(site.run("revert"))
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY_MODULE.encode(), record)
    assert not site.holds_state


@pytest.mark.parametrize("point", REVERT_FAULTS)
def test_a_revert_of_hfpatch_02s_state_killed_at_any_step_converges_and_keeps_the_original(
    applied_toy: Site, point: str, tmp_path: Path
) -> None:
    """The revert writes its state over 0.2's, which alone said where the original was."""
    site, record = applied_toy, make_site(tmp_path / "installed").record.read_bytes()
    as_hfpatch_02_left_it(site, "applied")
    killed = site.run("revert", HFPATCH_FAULT=point)
    assert killed.code == KILLED, f"never reached {point}: {killed.out}{killed.err}"
    assert site.file.read_bytes() in (BUGGY_MODULE.encode(), FIXED_MODULE.encode())
    check = site.run("check")
    assert (check.code, check.label(PATCH_ID)) == (1, "incomplete"), check.out + check.err
    other = twin(site, tmp_path / "twin")
    succeeded(site.run("revert"))
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY_MODULE.encode(), record)
    assert not site.holds_state
    succeeded(other.run("apply"))
    assert other.file.read_bytes() == FIXED_MODULE.encode()
    assert_in_the_new_layout(other)


def test_a_new_patch_of_a_file_hfpatch_02_patched_keeps_that_fix_and_the_original(
    applied_toy: Site, tmp_path: Path
) -> None:
    """0.2 kept no state of the file: the state its patch implies says what the file holds and where the original
    is, for the other patch of the file too."""
    site, record = applied_toy, make_site(tmp_path / "installed").record.read_bytes()
    as_hfpatch_02_left_it(site, "applied")
    catalogs = os.pathsep.join([str(site.team_catalog), str(write_entry(tmp_path / "more", B_ID))])
    both = (PATCH_ID, B_ID)
    done = succeeded(run_on(site, "apply", patches=both, HFPATCH_CATALOG=catalogs))
    assert labels(done, both) == {PATCH_ID: "applied", B_ID: "patched"}
    assert site.file.read_bytes() == with_changes(BUGGY_MODULE, GREET, SHOUT).encode()
    assert site.backup.read_bytes() == BUGGY_MODULE.encode(), "the file 0.2 patched was saved as the original"
    check = run_on(site, "check", patches=both, HFPATCH_CATALOG=catalogs)
    assert (check.code, labels(check, both)) == (0, {PATCH_ID: "applied", B_ID: "applied"}), check.out + check.err
    succeeded(run_on(site, "revert", patches=both, HFPATCH_CATALOG=catalogs))
    assert (site.file.read_bytes(), site.record.read_bytes()) == (BUGGY_MODULE.encode(), record)
    assert not site.holds_state
