"""`hfpatch new`: a catalog entry written from the wheels of a made-up distribution (tests/wheelfactory.py).

The releases come from a --find-links directory (no network), or from pip pointed at a local directory (the path
through pip and the wheel cache, still offline). The entries are checked against digests taken here with hashlib,
then applied, checked and reverted in real venvs by hfpatch processes. The pure core (`assemble.author` on texts)
is tested on a table of small modules.
"""

from __future__ import annotations

import compileall
import dataclasses
import ensurepip
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import wheelfactory as factory
from packaging.version import Version
from support import (
    Completed,
    Site,
    Venv,
    clean_env,
    dependencies_view,
    hfpatch,
    in_process,
    line_in_record,
    make_venv,
    record_line,
    run,
    sha256,
)

from hfpatch import catalog, classify, entry, statements
from hfpatch.entry import Patch, Shape, Verdict
from hfpatch.new import assemble, judge

TOTAL = ["--target", "madeup:madeup.core:total"]
CLEAN = ["--target", "madeup:madeup.core:_clean"]
ADD = ["--target", "madeup:madeup.basket:Basket.add"]
DEFAULT_RELEASES = ["0.8", "0.9", "1.0", "1.1", "1.2", "2.0", "2.1"]


def canonical(text: str, indent: str = "") -> str:
    """The canonical text of a definition written here: its lines, dedented, without the final newline."""
    return "\n".join(line[len(indent) :] for line in text.rstrip("\n").split("\n"))


def line_digests(text: str) -> list[str]:
    return [sha256(line)[:12] for line in text.split("\n")]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("wheels")
    factory.build(directory)
    return directory


@dataclass(frozen=True)
class Written:
    catalog: Path
    total: Completed
    basket: Completed

    def load(self, patch_id: str) -> Patch:
        return entry.load(self.catalog / patch_id)


@pytest.fixture(scope="module")
def written(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Written:
    """Two entries written by real `hfpatch new` processes: total (with its helper) and Basket.add."""
    directory = tmp_path_factory.mktemp("catalog")
    common = ["--fixed-in", "2.0", "--catalog", str(directory), "--find-links", str(wheels)]
    total = hfpatch("new", "madeup-total", *TOTAL, *CLEAN, *common)
    basket = hfpatch("new", "madeup-basket", *ADD, *common, "--upstream", "https://github.com/x/madeup/pull/7")
    return Written(directory, total, basket)


NewRun = Callable[..., Completed]


@pytest.fixture
def new(capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path) -> NewRun:
    """`hfpatch new ID ARGS` in process, into tmp_path/catalog, reading the factory's wheels unless told otherwise."""

    def run(patch_id: str, *args: str, find_links: Path | None = None, catalog_dir: Path | None = None) -> Completed:
        argv = ["new", patch_id, *args, "--catalog", str(catalog_dir or tmp_path / "catalog")]
        argv += ["--find-links", str(find_links or wheels)]
        return in_process(argv, capsys)

    return run


# ---------------------------------------------------------------------------------------- the made-up releases


def test_a_fix_that_calls_a_helper_old_releases_lack_is_not_safe_and_nothing_is_written(
    new: NewRun, tmp_path: Path
) -> None:
    done = new("madeup-total", *TOTAL, "--fixed-in", "2.0")
    assert done.code == 2
    table = done.table()
    assert list(table) == DEFAULT_RELEASES
    for release in ("1.0", "1.1", "1.2"):
        assert table[release][1] == "not-safe"
        assert table[release][2].startswith("_clean missing")
    assert table["0.9"][1] == "not-applicable"
    (line,) = done.err.splitlines()
    assert line == "hfpatch: error: not safe to backport as it stands (see above); nothing written."
    assert (
        "  - the fix of total uses _clean, which 1.0 to 1.2 lack; it is a function in madeup 2.0: add --target "
        "madeup:madeup.core:_clean to carry it" in done.out
    )
    assert not (tmp_path / "catalog").exists()


def test_the_release_table_says_each_release_s_form_verdict_and_reason(written: Written) -> None:
    assert written.total.code == 0, written.total.err
    insert = "_clean absent: the patch adds it; total: same signature as the fix"
    assert written.total.table() == {
        "0.8": ("-", "absent", "_clean, total not defined"),
        "0.9": (
            "A",
            "not-applicable",
            "total: signature (items, start, strict=...) where the fix has (items): the fix would break its callers",
        ),
        "1.0": ("B", "needs-patch", f"{insert}; 4 lines differ from the fix"),
        "1.1": ("B", "needs-patch", f"{insert}; 4 lines differ from the fix"),
        "1.2": ("C", "needs-patch", f"{insert}; 2 lines differ from the fix"),
        "2.0": ("fix", "fixed", "identical to the fix"),
        "2.1": ("fix", "fixed", "identical to the fix"),
    }
    assert "note: patched, the 1.2 file is the 2.0 file byte for byte" in written.total.out
    assert f"wrote {written.catalog / 'madeup-total'} (2 targets, 5 forms, 4 files on disk)" in written.total.out
    assert "  madeup/core.py: adds _clean after DEFAULT, replaces total\n" in written.total.out, written.total.out
    assert f"wrote {written.catalog / 'madeup-total' / 'probe.py'}, a skeleton" in written.total.out
    assert written.total.err == ""


def test_the_entry_records_every_form_by_digest_with_its_verdict_and_releases(written: Written) -> None:
    patch = written.load("madeup-total")
    (file,) = patch.files
    assert (patch.distribution, file.module, file.file) == ("madeup", "madeup.core", factory.CORE)
    assert (patch.fixed_in, patch.first_defined_in, patch.probe) == ("2.0", "0.9", patch.directory / "probe.py")
    assert patch.upstream == "madeup-total"
    clean, total = file.targets
    # The helper comes first, as in the fixed file, and is inserted where it is absent.
    assert (clean.name, clean.shape, total.name, total.shape) == ("_clean", Shape.INSERT, "total", Shape.REPLACE)
    assert clean.fixed_text == canonical(factory.CLEAN)
    assert total.fixed_text == canonical(factory.TOTAL_FIX)
    assert (patch.directory / "fixed" / "total.py").read_text() == factory.TOTAL_FIX
    forms = {form.sha256: form for form in total.forms}
    expected = [
        (factory.TOTAL_OTHER_SIGNATURE, Verdict.NOT_APPLICABLE, ("0.9",)),
        (factory.TOTAL_A, Verdict.NEEDS_PATCH, ("1.0", "1.1")),
        (factory.TOTAL_B, Verdict.NEEDS_PATCH, ("1.2",)),
        (factory.TOTAL_FIX, Verdict.FIXED, ("2.0", "2.1")),
    ]
    assert list(forms) == [sha256(canonical(text)) for text, _, _ in expected]
    for text, verdict, releases in expected:
        form = forms[sha256(canonical(text))]
        assert (form.verdict, form.releases) == (verdict, releases)
        assert list(form.lines) == line_digests(canonical(text))
    assert forms[sha256(canonical(factory.TOTAL_OTHER_SIGNATURE))].reason.startswith("signature (items, start, strict")
    assert [(form.sha256, form.verdict) for form in clean.forms] == [(sha256(canonical(factory.CLEAN)), Verdict.FIXED)]


def test_the_entry_records_every_released_file_and_what_patching_it_gives(written: Written) -> None:
    patch = written.load("madeup-total")
    files = {known.sha256: known for known in patch.files[0].known_files}
    core = {release: sha256(text) for release, text in factory.CORE_TEXTS.items()}
    assert list(files) == [core[release] for release in DEFAULT_RELEASES]
    verdicts = {release: files[core[release]].verdict for release in DEFAULT_RELEASES}
    assert verdicts == {
        "0.8": None,
        "0.9": Verdict.NOT_APPLICABLE,
        **dict.fromkeys(("1.0", "1.1", "1.2"), Verdict.NEEDS_PATCH),
        **dict.fromkeys(("2.0", "2.1"), Verdict.FIXED),
    }
    # 1.0 and 1.2 differ from 2.0 only in total and the missing helper; 1.1 also in its docstring.
    assert files[core["1.2"]].patched_sha256 == files[core["1.0"]].patched_sha256 == core["2.0"]
    patched_11 = factory.CORE_TEXTS["1.1"].replace(factory.TOTAL_A, factory.CLEAN + "\n\n" + factory.TOTAL_FIX)
    assert files[core["1.1"]].patched_sha256 == sha256(patched_11)
    entry = json.loads((patch.directory / "patch.json").read_text())
    notes = {known["sha256"]: known.get("note") for known in entry["files"][0]["known_files"]}
    assert notes[core["1.2"]] == notes[core["1.0"]] == "patched, this is the 2.0 file byte for byte"
    assert notes[core["1.1"]] is None
    assert entry["probe"] == "probe.py"


def test_hfpatch_reads_each_release_as_the_table_says(written: Written) -> None:
    patch = written.load("madeup-total")
    for release, (_, verdict, _) in written.total.table().items():
        source = factory.CORE_TEXTS[release].encode()
        found = classify.identify(source, patch, patch.files[0], release).verdict
        assert found is (Verdict.NOT_APPLICABLE if verdict == "absent" else Verdict(verdict)), release
        # An edited copy of the file is known by its target forms alone.
        edited = classify.identify(source + b"\n# edited\n", patch, patch.files[0], release).verdict
        assert edited is found, release


def test_an_entry_hfpatch_would_read_otherwise_than_the_table_is_refused_and_nothing_is_written(
    new: NewRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """new's last safety net: before it writes, it reads every release with the entry it is about to write, as
    check and apply will. Where that reading and the table disagree (here hfpatch's reader is made to misread 1.1,
    the kind of bug the net is for), new refuses as its own bug and writes nothing."""
    identify = classify.identify

    def misread(text: bytes, patch: Patch, file: entry.PatchFile, release: str | None) -> classify.Classification:
        found = identify(text, patch, file, release)
        return classify.Classification(Verdict.FIXED, "misread") if release == "1.1" else found

    monkeypatch.setattr(classify, "identify", misread)
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0")
    assert done.code == 2, done.out + done.err
    assert done.err.splitlines()[-1].endswith("(a bug in hfpatch new)."), done.err
    assert "of 1.1 as fixed, not needs-patch" in done.err, done.err
    assert not (tmp_path / "catalog" / "madeup-total").exists()


def test_a_method_whose_class_lacks_an_attribute_the_fix_uses_is_not_applicable(written: Written) -> None:
    assert written.basket.code == 0, written.basket.err
    table = written.basket.table()
    assert table["0.8"] == ("-", "absent", f"no {factory.BASKET} in this release")
    assert table["0.9"] == ("A", "not-applicable", "the fix uses self.limit, which Basket here never defines")
    assert {table[release][1] for release in ("1.0", "1.1", "1.2")} == {"needs-patch"}
    patch = written.load("madeup-basket")
    assert (patch.upstream, patch.url) == ("x/madeup#7", "https://github.com/x/madeup/pull/7")
    ((target,),) = [file.targets for file in patch.files]
    # A method's text is as its file has it, indentation and all: string contents are exact too.
    assert target.fixed_text == factory.ADD_FIX.rstrip("\n")
    forms = {form.sha256: (form.verdict, form.releases) for form in target.forms}
    assert forms == {
        sha256(factory.ADD_NO_LIMIT.rstrip("\n")): (Verdict.NOT_APPLICABLE, ("0.9",)),
        sha256(factory.ADD_BUGGY.rstrip("\n")): (Verdict.NEEDS_PATCH, ("1.0", "1.1", "1.2")),
        sha256(factory.ADD_FIX.rstrip("\n")): (Verdict.FIXED, ("2.0", "2.1")),
    }
    needs = patch.files[0].known_file(sha256(factory.BASKET_TEXTS["1.2"]))
    assert needs is not None and needs.patched_sha256 == sha256(factory.BASKET_TEXTS["2.0"])


@pytest.mark.parametrize(
    ("options", "releases", "first_defined_in"),
    [
        pytest.param([], DEFAULT_RELEASES, "0.9", id="default-back-to-the-first-that-defines-it-and-the-newest"),
        pytest.param(["--since", "1.1"], ["1.1", "1.2", "2.0", "2.1"], None, id="since-narrows"),
        pytest.param(["--since", "0.7"], ["0.7", *DEFAULT_RELEASES], "0.9", id="since-widens"),
        pytest.param(["--until", "2.0.1"], [*DEFAULT_RELEASES[:-1], "2.0.1"], "0.9", id="until-replaces-the-newest"),
        pytest.param(["--all-releases"], [*DEFAULT_RELEASES[:-1], "2.0.1", "2.1"], "0.9", id="all-releases"),
        pytest.param(["--pre"], [*DEFAULT_RELEASES[:-1], "2.2rc1"], "0.9", id="pre-releases-when-asked"),
        pytest.param(["--release", "0.7"], ["0.7", *DEFAULT_RELEASES], "0.9", id="a-release-named"),
    ],
)
def test_which_releases_are_read(
    new: NewRun, tmp_path: Path, options: list[str], releases: list[str], first_defined_in: str | None
) -> None:
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", *options)
    assert done.code == 0, done.err
    assert list(done.table()) == releases
    patch = entry.load(tmp_path / "catalog" / "madeup-total")
    assert patch.first_defined_in == first_defined_in
    assert {release for known in patch.files[0].known_files for release in known.releases} == set(releases)


def test_a_release_whose_module_lacks_the_helper_s_import_is_not_safe(
    new: NewRun, tmp_path: Path, wheels: Path
) -> None:
    """A name that is an import in the fixed release is carried as a target where the author adds it."""
    links = tmp_path / "links"
    links.mkdir()
    fix = "import json\n\n\ndef dump(value):\n    return json.dumps(value, sort_keys=True)\n"
    old = "def dump(value):\n    return repr(value)\n"
    for version, text in (("1.0", old), ("2.0", fix)):
        factory.write_wheel(links, version, {"madeup/__init__.py": b"", factory.CORE: text.encode()})
    done = new("madeup-dump", "--target", "madeup:madeup.core:dump", "--fixed-in", "2.0", find_links=links)
    assert done.code == 2
    assert done.table()["1.0"] == ("A", "not-safe", "json missing (the fix of dump uses it)")
    assert "it is an import in madeup 2.0: add --target madeup:madeup.core:json to carry it" in done.out
    carried = new(
        "madeup-dump",
        "--target",
        "madeup:madeup.core:dump",
        "--target",
        "madeup:madeup.core:json",
        "--fixed-in",
        "2.0",
        find_links=links,
    )
    assert carried.code == 0, carried.out + carried.err
    assert carried.table()["1.0"] == (
        "A",
        "needs-patch",
        "import json absent: the patch adds it; dump: same signature as the fix; 1 line differs from the fix",
    )
    assert "patched, the 1.0 file is the 2.0 file byte for byte" in carried.out


@pytest.mark.skipif(os.geteuid() != 0, reason="only root creates files for another user")
def test_what_root_writes_into_a_users_catalog_belongs_to_that_user(new: NewRun, tmp_path: Path) -> None:
    """sudo hfpatch new into a user's repository: the user can edit, commit and remove what it wrote."""
    repository = tmp_path / "repository"
    repository.mkdir()
    os.chown(repository, 4242, 4343)
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", catalog_dir=repository / "hfpatches")
    assert done.code == 0, done.err
    written = [repository / "hfpatches", *(repository / "hfpatches").rglob("*")]
    assert len(written) == 7  # hfpatches/, the entry, patch.json, probe.py, fixed/ and its two texts
    assert {(path.relative_to(repository).as_posix(), path.stat().st_uid, path.stat().st_gid) for path in written} == {
        (path.relative_to(repository).as_posix(), 4242, 4343) for path in written
    }


def test_a_catalog_named_relative_to_the_current_directory_is_written_there(wheels: Path, tmp_path: Path) -> None:
    done = hfpatch(
        "new", "madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", "--catalog", "hfpatches",
        "--find-links", str(wheels), cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.out + done.err
    written = entry.load(tmp_path / "hfpatches" / "madeup-total")
    assert written.probe == (tmp_path / "hfpatches" / "madeup-total" / "probe.py").resolve()
    assert json.loads((tmp_path / "hfpatches" / "madeup-total" / "patch.json").read_text())["probe"] == "probe.py"


def test_an_entry_that_changes_what_another_entry_changes_is_written_with_a_note_saying_so(new: NewRun) -> None:
    """Two entries of one statement are refused together by every command that reads both: new, which wrote the
    second, says so at once (a team re-writing a fix the built-in catalog carries meets it)."""
    first = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0")
    assert first.code == 0 and " both change " not in first.out, first.out + first.err
    second = new("madeup-again", *TOTAL, *CLEAN, "--fixed-in", "2.0")
    assert second.code == 0, second.out + second.err
    (note,) = [line for line in second.out.splitlines() if " both change " in line]
    assert note.startswith("note: madeup-again and madeup-total both change _clean in madeup/core.py"), note
    assert "only one can be applied" in note


def test_an_id_the_built_in_catalog_has_is_refused_except_for_the_built_in_catalog_itself(
    wheels: Path, tmp_path: Path
) -> None:
    """Two entries with one id make every command that reads both refuse: new refuses to write the second (exit 2,
    nothing written). Regenerating a built-in entry in a checkout writes into the built-in catalog itself."""
    checkout = tmp_path / "checkout"
    # An installed hfpatch carries its catalog inside the package; a checkout has it beside the package.
    package = Path(entry.__file__).parent
    shutil.copytree(package, checkout / "hfpatch", ignore=shutil.ignore_patterns("__pycache__", "patches"))
    (checkout / "patches").mkdir()
    env = clean_env(PYTHONPATH=str(checkout))
    args = ["new", "madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", "--find-links", str(wheels)]
    into_builtin = hfpatch(*args, "--catalog", str(checkout / "patches"), env=env)
    assert into_builtin.code == 0, into_builtin.out + into_builtin.err
    elsewhere = hfpatch(*args, "--catalog", str(tmp_path / "team"), env=env)
    assert elsewhere.code == 2
    assert elsewhere.err == (
        "hfpatch: error: madeup-total is the id of a built-in entry, and hfpatch refuses two entries with one id: "
        "choose another PATCH_ID.\n"
    )
    assert not (tmp_path / "team").exists()
    assert hfpatch("list", "--catalog", str(checkout / "patches"), env=env).code == 0


def test_the_first_line_comes_before_the_releases_are_listed(new: NewRun) -> None:
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0")
    assert done.code == 0, done.err
    assert done.out.splitlines()[0].startswith("listing the releases of madeup in ")


def test_an_existing_entry_is_refused_unless_forced_and_then_written_anew(new: NewRun, tmp_path: Path) -> None:
    """What `new` wrote is written anew; what it did not write (a file left by hand) is never deleted."""
    args = ["madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0"]
    assert new(*args).code == 0
    entry = tmp_path / "catalog" / "madeup-total"
    written = (entry / "patch.json").read_bytes()
    (entry / "patch.json").write_bytes(written + b"\n")
    (entry / "stray.txt").write_text("left by hand")
    refused = new(*args)
    assert refused.code == 2
    assert refused.err.startswith("hfpatch: error: ") and "--force" in refused.err
    assert (entry / "patch.json").read_bytes() == written + b"\n"
    assert new(*args, "--force").code == 0
    assert (entry / "patch.json").read_bytes() == written
    assert (entry / "stray.txt").read_text() == "left by hand"
    # The probe the author wrote is kept, and the entry no longer calls it a skeleton.
    (entry / "probe.py").write_text("print('the author wrote this probe')\n")
    assert new(*args, "--force").code == 0
    assert (entry / "probe.py").read_text() == "print('the author wrote this probe')\n"
    about = json.loads((entry / "patch.json").read_text())["about"]
    assert about == [line for line in json.loads(written)["about"] if "skeleton" not in line]
    assert sorted(path.name for path in (tmp_path / "catalog").iterdir()) == ["madeup-total"], "no scratch left"


# ------------------------------------------------------------------------- the verdicts, release by release


def releases_in(links: Path, texts: dict[str, str]) -> Path:
    """A --find-links directory with one wheel of madeup per release, its madeup/core.py the text given."""
    links.mkdir(parents=True, exist_ok=True)
    for version, text in texts.items():
        factory.write_wheel(links, version, {"madeup/__init__.py": b"", factory.CORE: text.encode()})
    return links


def target(*names: str) -> list[str]:
    return [word for name in names for word in ("--target", f"madeup:madeup.core:{name}")]


BOX_FIX = (
    "import functools\n\n\nclass Box:\n    def __init__(self):\n        self.items = []\n\n"
    "    def size(self):\n        return len(self.items)\n"
)
_SIZE = "    def size(self):\n        return len(self.items)\n"


def _box(size: str) -> str:
    return BOX_FIX.replace(_SIZE, size)


SETTER = (
    "    @property\n    def size(self):\n        return 0\n\n"
    "    @size.setter\n    def size(self, value):\n        pass\n"
)
PLAIN_SETTER = SETTER.replace("    @size.setter\n", "")
F_PLAIN = "import functools\n\n\ndef f(a):\n    return a\n"
BREAKS = "the fix would break its callers"


@pytest.mark.parametrize(
    ("old", "fix", "names", "verdict", "reason"),
    [
        pytest.param(
            _box("    @property\n    def size(self):\n        return 0\n"),
            BOX_FIX,
            ["Box.size"],
            "not-applicable",
            f"signature @property (self) where the fix has (self): {BREAKS}",
            id="a-property-became-a-method",
        ),
        pytest.param(
            BOX_FIX,
            _box("    @property\n    def size(self):\n        return len(self.items)\n"),
            ["Box.size"],
            "not-applicable",
            f"signature (self) where the fix has @property (self): {BREAKS}",
            id="a-method-became-a-property",
        ),
        pytest.param(
            _box("    @functools.cached_property\n    def size(self):\n        return 0\n"),
            BOX_FIX,
            ["Box.size"],
            "not-applicable",
            f"signature @functools.cached_property (self) where the fix has (self): {BREAKS}",
            id="a-cached-property-spelt-with-its-module",
        ),
        pytest.param(
            _box("    @classmethod\n    def size(cls):\n        return 0\n"),
            BOX_FIX,
            ["Box.size"],
            "not-applicable",
            f"signature @classmethod (cls) where the fix has (self): {BREAKS}",
            id="a-classmethod",
        ),
        pytest.param(
            _box(PLAIN_SETTER),
            _box(SETTER.replace("pass", "self.items = [value]")),
            ["Box.size"],
            "not-applicable",
            f"Box.size: signature (self, value) where the fix has @size.setter (self, value): {BREAKS}",
            id="the-name-now-binds-a-property-setter",
        ),
        pytest.param(
            F_PLAIN,
            F_PLAIN.replace("def f", "@functools.lru_cache(maxsize=None)\ndef f").replace("return a", "return a * 1"),
            ["f"],
            "needs-patch",
            "same signature as the fix; 2 lines differ from the fix",
            id="a-decorator-that-keeps-how-it-is-called",
        ),
        pytest.param(
            "def f(a, **options):\n    return a\n",
            "def f(a):\n    return a * 1\n",
            ["f"],
            "not-applicable",
            f"signature (a, **options) where the fix has (a): {BREAKS}",
            id="the-fix-drops-keyword-arguments",
        ),
        pytest.param(
            "def f(a, *, strict=False):\n    return a\n",
            "def f(a, *, strict):\n    return a * 1\n",
            ["f"],
            "not-applicable",
            f"signature (a, *, strict=...) where the fix has (a, *, strict): {BREAKS}",
            id="the-fix-drops-a-keyword-default",
        ),
    ],
)
def test_the_release_table_says_when_the_fix_would_change_how_the_name_is_called(
    new: NewRun, tmp_path: Path, old: str, fix: str, names: list[str], verdict: str, reason: str
) -> None:
    links = releases_in(tmp_path / "links", {"1.0": old, "2.0": fix})
    done = new("madeup-x", *target(*names), "--fixed-in", "2.0", find_links=links)
    assert done.table()["1.0"][1:] == (verdict, reason)
    if verdict == "needs-patch":
        assert done.code == 0, done.err
    else:
        assert (done.code, done.err.count("\n")) == (2, 1)
        assert "no release read needs the patch" in done.err
        assert not (tmp_path / "catalog").exists()


SKIP = 'SKIP = (None, "")\n'
CLEAN_SKIPPING = "def _clean(items):\n    return [item for item in items if item not in SKIP]\n"
TOTAL_CLEANED = "def total(items):\n    return sum(_clean(items))\n"


def test_a_helper_that_uses_a_name_an_old_release_lacks_is_not_safe(new: NewRun, tmp_path: Path) -> None:
    """The helper inserted with the patch would raise NameError there: the release is not safe, and no entry is
    written while it is read; a release that binds the name takes the patch."""
    links = releases_in(
        tmp_path / "links",
        {
            "1.0": "def total(items):\n    return sum(items)\n",
            "1.1": f"{SKIP}\n\ndef total(items):\n    return sum(items)\n",
            "2.0": f"{SKIP}\n\n{CLEAN_SKIPPING}\n\n{TOTAL_CLEANED}",
        },
    )
    done = new("madeup-x", *target("total", "_clean"), "--fixed-in", "2.0", find_links=links)
    assert done.code == 2
    table = done.table()
    # The form column has a letter for each combination of the targets' texts in the file (_clean absent, total).
    assert table["1.0"] == ("A", "not-safe", "SKIP missing (the fix of _clean uses it)")
    assert table["1.1"][1:] == ("needs-patch", "_clean absent: the patch adds it; total: same signature as the fix; "
                                "1 line differs from the fix")  # fmt: skip
    (line,) = done.err.splitlines()
    assert line == "hfpatch: error: not safe to backport as it stands (see above); nothing written."
    # Schema 3 carries any statement: the variable too, where the author adds it.
    assert (
        "  - the fix of _clean uses SKIP, which 1.0 lacks; it is a variable in madeup 2.0: add --target "
        "madeup:madeup.core:SKIP to carry it" in done.out
    )
    assert "--since 1.1 reads from the first release after them" in done.out
    assert not (tmp_path / "catalog").exists()
    since = new("madeup-x", *target("total", "_clean"), "--fixed-in", "2.0", "--since", "1.1", find_links=links)
    assert since.code == 0, since.err
    assert since.table()["1.1"][1] == "needs-patch"


BASKET_OLD = "class Basket:\n    def __init__(self):\n        self.items = []\n\n" + factory.ADD_BUGGY
BASKET_ROOMY = (
    "class Basket:\n    def __init__(self, limit=3):\n        self.items = []\n        self.limit = limit\n\n"
    "    def _room(self):\n        return len(self.items) < self.limit\n\n"
    "    def add(self, item):\n        if not self._room():\n            raise OverflowError('full')\n"
    "        self.items.append(item)\n"
)


def test_a_helper_method_that_reads_an_attribute_the_old_class_lacks_is_not_applicable(
    new: NewRun, tmp_path: Path
) -> None:
    """The gap this test was a strict xfail for (the entry was written, the patched 1.0 raised AttributeError in
    add): new now checks the attributes an inserted method reads against the old class."""
    links = releases_in(tmp_path / "links", {"1.0": BASKET_OLD, "2.0": BASKET_ROOMY})
    done = new("madeup-x", *target("Basket.add", "Basket._room"), "--fixed-in", "2.0", find_links=links)
    _, verdict, reason = done.table()["1.0"]
    assert verdict == "not-applicable"
    assert "self.limit" in reason
    assert done.code == 2
    assert not (tmp_path / "catalog").exists()


def test_a_helper_the_fixed_file_defines_after_its_caller_is_inserted_after_it_where_the_caller_stays(
    new: NewRun, tmp_path: Path
) -> None:
    """The fix puts total before SKIP and _clean after total: total is patched where 1.0 has it (the order of the
    statements around it is not the fix's), and _clean goes after it, as upstream places it. hfpatch 0.2 could only
    insert before the next target, and put _clean before total."""
    fix = f"{TOTAL_CLEANED}\n\n{CLEAN_SKIPPING}\n\n{SKIP}"
    old = f"{SKIP}\n\ndef total(items):\n    return sum(items)\n"
    links = releases_in(tmp_path / "links", {"1.0": old, "2.0": fix})
    done = new("madeup-x", *target("total", "_clean"), "--fixed-in", "2.0", find_links=links)
    assert done.code == 0, done.err
    assert done.table()["1.0"][1] == "needs-patch"
    patch = entry.load(tmp_path / "catalog" / "madeup-x")
    targets = patch.files[0].targets
    assert [(each.name, each.shape, each.fixed_text is None) for each in targets] == [
        ("total", Shape.REPLACE, False),
        ("_clean", Shape.INSERT, False),
    ]
    assert targets[1].after == "total"
    (needing,) = [known for known in patch.files[0].known_files if known.verdict is Verdict.NEEDS_PATCH]
    expected = f"{SKIP}\n\n{TOTAL_CLEANED}\n\n{CLEAN_SKIPPING}"
    assert needing.patched_sha256 == sha256(expected)


def test_a_release_that_has_the_helper_already_is_patched_around_it(new: NewRun, tmp_path: Path) -> None:
    """1.5 gained _clean before total used it: _clean stays as it is, total is patched, and 1.5 becomes 2.0."""
    texts = {release: factory.CORE_TEXTS[release] for release in ("1.0", "2.0")}
    texts["1.5"] = factory.CORE_TEXTS["2.0"].replace(factory.TOTAL_FIX, factory.TOTAL_A)
    done = new(
        "madeup-x", *target("total", "_clean"), "--fixed-in", "2.0", find_links=releases_in(tmp_path / "links", texts)
    )
    assert done.code == 0, done.err
    table = done.table()
    assert (table["1.0"][0], table["2.0"][0]) == ("A", "fix")
    assert table["1.5"] == ("B", "needs-patch", "total: same signature as the fix; 4 lines differ from the fix")
    # Per target, in the entry: 1.5's _clean is the fix's, its total the form 1.0 has.
    targets = {target.name: target for target in entry.load(tmp_path / "catalog" / "madeup-x").files[0].targets}
    forms = {name: {form.verdict: form.releases for form in target.forms} for name, target in targets.items()}
    assert forms["_clean"] == {Verdict.FIXED: ("1.5", "2.0")}
    assert forms["total"] == {Verdict.NEEDS_PATCH: ("1.0", "1.5"), Verdict.FIXED: ("2.0",)}
    assert "note: patched, the 1.5 file is the 2.0 file byte for byte" in done.out


def test_a_helper_method_is_inserted_as_upstream_places_it(new: NewRun, tmp_path: Path) -> None:
    """Box._step, which 2.0 added for grow, goes before grow with one blank line: patched, 1.0 is the 2.0 file."""
    old = "class Box:\n    def __init__(self):\n        self.size = 1\n\n    def grow(self):\n        return 2\n"
    step = "    def _step(self):\n        return 1\n\n"
    fix = old.replace("    def grow", step + "    def grow").replace("return 2", "return self._step() + self.size")
    links = releases_in(tmp_path / "links", {"1.0": old, "2.0": fix})
    done = new("madeup-x", *target("Box.grow", "Box._step"), "--fixed-in", "2.0", find_links=links)
    assert done.code == 0, done.err
    assert done.table()["1.0"][1:] == (
        "needs-patch",
        "Box._step absent: the patch adds it; Box.grow: same signature as the fix; 1 line differs from the fix",
    )
    assert "note: patched, the 1.0 file is the 2.0 file byte for byte" in done.out


def test_a_method_s_fix_with_blank_lines_makes_the_file_upstream_s(new: NewRun, tmp_path: Path) -> None:
    """A blank line inside the fixed method stays empty at the method's indentation: the patched 1.0 is 2.0."""
    old = "class Box:\n    def __init__(self):\n        self.size = 1\n\n    def grow(self):\n        return 2\n"
    fix = old.replace("        return 2\n", "        step = 1\n\n        return self.size + step\n")
    links = releases_in(tmp_path / "links", {"1.0": old, "2.0": fix})
    done = new("madeup-x", *target("Box.grow"), "--fixed-in", "2.0", find_links=links)
    assert done.code == 0, done.err
    assert "note: patched, the 1.0 file is the 2.0 file byte for byte" in done.out


def test_pre_releases_are_judged_by_their_text_before_the_fix_and_have_it_after(new: NewRun, tmp_path: Path) -> None:
    """With --pre: 2.0rc1 still has the bug (it needs the patch); 2.2rc1 rewrote total after the fix (it has it)."""
    texts = {release: factory.CORE_TEXTS[release] for release in ("1.2", "2.0", "2.2rc1")}
    texts["2.0rc1"] = factory.CORE_TEXTS["1.2"]
    links = releases_in(tmp_path / "links", texts)
    done = new("madeup-x", *target("total", "_clean"), "--fixed-in", "2.0", "--pre", find_links=links)
    assert done.code == 0, done.err
    table = done.table()
    assert list(table) == ["1.2", "2.0rc1", "2.0", "2.2rc1"]
    assert table["2.0rc1"][:2] == table["1.2"][:2] == ("A", "needs-patch")
    assert table["2.2rc1"] == ("B", "fixed", "a later form of the fixed code")
    patch = entry.load(tmp_path / "catalog" / "madeup-x")
    forms = {form.sha256: (form.verdict, form.releases) for form in patch.files[0].targets[1].forms}
    assert forms[sha256(canonical(factory.TOTAL_RC))] == (Verdict.FIXED, ("2.2rc1",))


def test_the_walk_back_goes_on_past_a_release_without_a_wheel(new: NewRun) -> None:
    """A release with only a source distribution (named here with --release) is a skipped row, not the start."""
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", "--release", "1.1.5")
    assert done.code == 0, done.err
    table = done.table()
    assert list(table) == ["0.8", "0.9", "1.0", "1.1", "1.1.5", "1.2", "2.0", "2.1"]
    assert table["1.1.5"] == ("?", "skipped", "no wheel")


def test_of_a_release_s_wheels_the_pure_python_one_is_read(new: NewRun, wheels: Path, tmp_path: Path) -> None:
    """1.1 also has a compiled wheel (as mypyc-built projects ship), whose core is a shared library: reading it
    would make 1.1 look like a release without total, and stop the walk back there."""
    links = tmp_path / "links"
    shutil.copytree(wheels, links)
    compiled = {"madeup/__init__.py": b"", "madeup/core.cpython-311-x86_64-linux-gnu.so": b"\x7fELF"}
    factory.write_wheel(links, "1.1", compiled, tag="cp311-cp311-manylinux_2_17_x86_64")
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", find_links=links)
    assert done.code == 0, done.err
    assert list(done.table()) == DEFAULT_RELEASES
    assert done.table()["1.1"][1] == "needs-patch"
    patch = entry.load(tmp_path / "catalog" / "madeup-total")
    assert patch.files[0].known_file(sha256(factory.CORE_TEXTS["1.1"])) is not None


# ----------------------------------------------------------------------------- names, as the packaging spec says


@pytest.fixture(scope="module")
def hub_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("hub-wheels")
    factory.build_hub(directory)
    return directory


def hub_target(spelling: str = factory.HUB, module: str = "core", name: str = "first") -> list[str]:
    return ["--target", f"{spelling}:made_up_hub.{module}:{name}"]


HUB_FIRST_TABLE = {
    "0.9": ("-", "absent", "first not defined"),
    "1.0": ("A", "needs-patch", "same signature as the fix; 1 line differs from the fix"),
    "1.0.1": ("fix", "fixed", "identical to the fix"),
    "2.0": ("fix", "fixed", "identical to the fix"),
    "3.0": ("fix", "fixed", "identical to the fix"),
}


@pytest.mark.parametrize("spelling", [factory.HUB, factory.HUB_METADATA_NAME, factory.HUB_WHEEL_NAME, "MADE.UP-HUB"])
def test_a_distribution_s_wheels_are_found_however_its_name_is_spelt(
    new: NewRun, hub_wheels: Path, tmp_path: Path, spelling: str
) -> None:
    """made_up_hub-X-py3-none-any.whl, whose METADATA says Made-Up.Hub: every spelling the packaging spec calls the
    same name finds its wheels and its .dist-info."""
    done = new("hub-first", *hub_target(spelling), "--fixed-in", "2.0", find_links=hub_wheels)
    assert done.code == 0, done.err
    assert done.table() == HUB_FIRST_TABLE
    assert entry.load(tmp_path / "catalog" / "hub-first").distribution == spelling


def test_targets_may_spell_the_distribution_differently(new: NewRun, hub_wheels: Path) -> None:
    """Two spellings of one name are one distribution: the run gets past the targets to reading the wheels."""
    both = [*hub_target(factory.HUB), *hub_target("made-up-hub", name="nope")]
    done = new("hub-first", *both, "--fixed-in", "2.0", find_links=hub_wheels)
    assert done.code == 2
    assert f"nope is not defined in {factory.HUB_CORE} of {factory.HUB} 2.0" in done.err


def test_an_entry_for_a_normalised_name_finds_the_installed_dist_info(
    new: NewRun, hub_wheels: Path, tmp_path: Path
) -> None:
    """Installed from its wheel, the distribution's .dist-info is made_up_hub-1.0.dist-info: apply finds it (the
    version, RECORD), and revert puts RECORD back."""
    assert new("hub-first", *hub_target(), "--fixed-in", "2.0", find_links=hub_wheels).code == 0
    root = factory.install(hub_wheels / "made_up_hub-1.0-py3-none-any.whl", tmp_path / "site")
    site = Site(root, factory.HUB_WHEEL_NAME, "1.0", factory.HUB_CORE, "hub-first", catalog=tmp_path / "catalog")
    record = site.record.read_bytes()
    applied = site.run("apply")
    assert (applied.code, applied.label("hub-first")) == (0, "patched"), applied.out + applied.err
    # The heading names the distribution by its metadata, found through made_up_hub-1.0.dist-info, and where it lies.
    assert applied.lines[0].endswith(f": {factory.HUB} 1.0 in {root}"), applied.out
    assert f"  hub-first: patched: {factory.HUB_CORE} now has the fix " in applied.out
    assert "note:" not in applied.out
    fixed = factory.hub_files("2.0")[factory.HUB_CORE]
    assert site.file.read_bytes() == fixed
    assert line_in_record(site.record.read_bytes(), factory.HUB_CORE) == record_line(factory.HUB_CORE, fixed)
    assert site.run("revert").code == 0
    assert site.record.read_bytes() == record


# --------------------------------------------------------------------------------------------------- bad input


def _damaged(wheels: Path, where: Path, damage: Callable[[Path], None]) -> Path:
    where.mkdir()
    for path in wheels.iterdir():
        shutil.copyfile(path, where / path.name)
    damage(where / "madeup-1.1-py3-none-any.whl")
    return where


def _flip(path: Path) -> None:
    factory.damage(path, factory.CORE)


def _rebuilt_and_damaged(compression: int, member: str = factory.CORE) -> Callable[[Path], None]:
    """1.1's wheel as built with `compression` (most wheels are deflated), then one member damaged."""

    def damage(path: Path) -> None:
        path.unlink()
        rebuilt = factory.write_wheel(path.parent, "1.1", factory.release_files("1.1"), compression=compression)
        factory.damage(rebuilt, member)

    return damage


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])


def _stale_record(path: Path) -> None:
    files = factory.release_files("1.1")
    files[factory.CORE] = files[factory.CORE].replace(b"counts", b"tallies")
    factory.write_wheel(path.parent, "1.1", files, record=factory.release_files("1.1"))


BOTH = [*TOTAL, *CLEAN, "--fixed-in", "2.0"]
WHEEL_11 = "madeup-1.1-py3-none-any.whl"


def _target(name: str) -> list[str]:
    return ["--target", name, "--fixed-in", "2.0"]


@pytest.mark.parametrize(
    ("args", "damage", "message"),
    [
        pytest.param(_target("nothere:nothere.core:f"), None, "no wheel of nothere in", id="unknown-distribution"),
        pytest.param(_target("madeup:madeup.core:DEFAULT"), None, "no release read needs the patch", id="unchanged"),
        pytest.param(
            _target("madeup:madeup.core:nope"), None, "nope is not defined in madeup/core.py of madeup 2.0", id="absent"
        ),
        pytest.param(
            _target("madeup:madeup.nowhere:f"),
            None,
            "has no madeup/nowhere.py or madeup/nowhere/__init__.py",
            id="module",
        ),
        pytest.param(
            [*TOTAL, "--fixed-in", "3.0"], None, "--fixed-in 3.0 is not a release of madeup", id="not-a-release"
        ),
        pytest.param([*TOTAL, "--fixed-in", "two"], None, "--fixed-in 'two' is not a version", id="not-a-version"),
        pytest.param([*ADD, "--fixed-in", "0.9"], None, "no release read needs the patch", id="nothing-needs-it"),
        pytest.param([*ADD, "--fixed-in", "0.8"], None, "madeup 0.8 has no madeup/basket.py", id="fixed-lacks-it"),
        pytest.param(BOTH, _flip, f"{WHEEL_11} is corrupt", id="corrupt-wheel"),
        pytest.param(
            BOTH,
            _rebuilt_and_damaged(zipfile.ZIP_DEFLATED),
            f"{WHEEL_11} is corrupt: cannot read {factory.CORE} (",
            id="corrupt-deflated-wheel",
        ),
        pytest.param(
            BOTH,
            _rebuilt_and_damaged(zipfile.ZIP_DEFLATED, "madeup-1.1.dist-info/RECORD"),
            f"{WHEEL_11} is corrupt: cannot read madeup-1.1.dist-info/RECORD (",
            id="corrupt-deflated-record",
        ),
        pytest.param(
            BOTH,
            _rebuilt_and_damaged(zipfile.ZIP_BZIP2),
            f"{WHEEL_11} is corrupt: cannot read {factory.CORE} (",
            id="corrupt-bzip2-wheel",
        ),
        pytest.param(
            BOTH,
            _rebuilt_and_damaged(zipfile.ZIP_LZMA),
            f"{WHEEL_11} is corrupt: cannot read {factory.CORE} (",
            id="corrupt-lzma-wheel",
        ),
        pytest.param(BOTH, _truncate, f"{WHEEL_11} is not a valid wheel", id="truncated-wheel"),
        pytest.param(BOTH, _stale_record, "does not match the digest its RECORD lists", id="record-mismatch"),
        pytest.param(_target("madeup:total"), None, "has no total.py or total/__init__.py", id="not-a-module"),
        pytest.param(
            _target("madeup:madeup.core:a.b.c"), None, "a.b.c is not defined in madeup/core.py", id="too-deep"
        ),
        pytest.param(_target("madeup:madeup.core:totl"), None, "(did you mean total?)", id="did-you-mean"),
        pytest.param(
            _target("madeup:madeup.basket:Basket.ad"),
            None,
            "(did you mean Basket.add or Basket?)",
            id="did-you-mean-a-method",
        ),
        pytest.param(_target("madeup:madeup.core:a:b"), None, "is not DIST:MODULE:NAME or DIST:MODULE", id="colons"),
        pytest.param(_target("madeup:madeup.core:1f"), None, "'1f' is not a name", id="not-a-name"),
        pytest.param(_target("madeup:madeup core:total"), None, "is not a module name", id="bad-module"),
        pytest.param(
            [*TOTAL, *_target("other:madeup.basket:Basket.add")], None, "the same distribution", id="two-distributions"
        ),
        pytest.param(
            [*TOTAL, *_target("madeup:madeup.core")], None, "another --target names one of its statements", id="both"
        ),
        pytest.param([*TOTAL, *TOTAL, "--fixed-in", "2.0"], None, "a --target is given twice", id="target-twice"),
        pytest.param(
            ["--fixed-in", "2.0"], None, "give --target DIST:MODULE[:NAME]: what the fix changes", id="no-target"
        ),
        pytest.param(
            _target("madeup:madeup.core:total")[:2], None, "say where the fixed text is: --fixed-in", id="no-fix"
        ),
        pytest.param(
            [*TOTAL, "--fixed-in", "2.0", "--fixed-from", "x.whl", "--from-edits", "madeup"],
            None,
            "give one of --fixed-from PATH and --from-edits DIST",
            id="two-sources",
        ),
        pytest.param(
            [*TOTAL, "--fixed-from", "nowhere.whl"], None, "--fixed-from nowhere.whl is neither a wheel", id="no-such"
        ),
        pytest.param([*TOTAL, "--fixed-in", "2.0", "--python", "python3"], None, "give it with --from-edits", id="py"),
        pytest.param([*TOTAL, "--fixed-in", "2.05"], None, "(the nearest: 2.0, 2.0.1, 2.1", id="nearest-releases"),
    ],
)
def test_bad_input_is_one_error_line_and_writes_nothing(
    new: NewRun,
    wheels: Path,
    tmp_path: Path,
    args: list[str],
    damage: Callable[[Path], None] | None,
    message: str,
) -> None:
    links = wheels if damage is None else _damaged(wheels, tmp_path / "damaged", damage)
    done = new("madeup-x", *args, find_links=links)
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: ")
    assert message in line
    assert not (tmp_path / "catalog").exists() or not any((tmp_path / "catalog").iterdir())


def test_a_catalog_that_is_a_file_is_refused(new: NewRun, tmp_path: Path) -> None:
    not_a_directory = tmp_path / "catalog-file"
    not_a_directory.write_text("")
    done = new("madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", catalog_dir=not_a_directory)
    assert done.code == 2
    assert (
        done.err == f"hfpatch: error: the catalog {not_a_directory} is not a directory; give --catalog a directory.\n"
    )


@pytest.mark.parametrize("patch_id", ["Madeup", "_madeup", "made up", "madeup/x"])
def test_an_id_that_cannot_name_a_directory_of_the_catalog_is_refused(new: NewRun, patch_id: str) -> None:
    done = new(patch_id, *TOTAL, *CLEAN, "--fixed-in", "2.0")
    assert done.code == 2
    assert "cannot be an id" in done.err


# ------------------------------------------------------------------------------------------- through pip, offline


def test_new_lists_the_releases_with_the_pip_a_stock_venv_has(wheels: Path, tmp_path: Path) -> None:
    """pip before 25.1 (a stock Python 3.11 venv has 23.2) cannot list releases as JSON: `new` reads its text."""
    import hfpatch

    venv = tmp_path / "stock"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    # The pip a stock venv gets: the wheel ensurepip holds, unpacked where `python -m venv` has pip install it
    # (pip installing itself took most of this test's time).
    (bundled,) = (Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl")
    site_packages = next(venv.glob("lib/python*/site-packages"))
    with zipfile.ZipFile(bundled) as archive:
        archive.extractall(site_packages)
    compileall.compile_dir(site_packages / "pip", quiet=1)  # as pip's install of itself does
    python = str(venv / "bin" / "python")
    pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, check=True).stdout
    if tuple(int(part) for part in pip.split()[1].split(".")[:2]) >= (25, 1):
        pytest.skip(f"this Python's ensurepip has {pip.split()[1]}, which lists releases as JSON")
    # hfpatch and its dependencies, behind the venv's own pip: a copy of hfpatch alone on PYTHONPATH
    code = tmp_path / "code"
    shutil.copytree(Path(hfpatch.__file__).parent, code / "hfpatch", ignore=shutil.ignore_patterns("__pycache__"))
    (site_packages / "_deps.pth").write_text(f"{dependencies_view(tmp_path, {'transformers', 'pip'})}\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env["PYTHONPATH"] = str(code)
    args = ["new", "madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", "--since", "1.2", "--catalog", str(tmp_path)]
    done = run([python, "-m", "hfpatch", *args], env=env)
    assert done.code == 0, done.out + done.err
    assert list(done.table()) == ["1.2", "2.0", "2.1"]
    assert "from the package index" in done.out


def test_through_pip_the_wheels_are_cached_and_reused(wheels: Path, tmp_path: Path) -> None:
    """pip reads a local directory instead of the index; the second run must not need its wheels again."""
    links = tmp_path / "links"
    shutil.copytree(wheels, links)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(links), PIP_NO_CACHE_DIR="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    # Three releases, to keep pip's runs few: the walk back is the same code with --find-links.
    args = ["new", "madeup-total", *TOTAL, *CLEAN, "--fixed-in", "2.0", "--since", "1.2"]
    first = hfpatch(*args, "--catalog", str(tmp_path / "first"), env=env)
    assert first.code == 0, first.err
    assert list(first.table()) == ["1.2", "2.0", "2.1"]
    assert "from the package index" in first.out
    cache = tmp_path / "xdg" / "hfpatch" / "wheels" / "madeup"
    assert sorted(path.name for path in cache.iterdir()) == [
        f"madeup-{release}-py3-none-any.whl" for release in ("1.2", "2.0", "2.1")
    ], "the wheels read, and no scratch"
    for path in links.iterdir():  # pip could only fetch damaged wheels now
        factory.damage(path, factory.CORE)
    second = hfpatch(*args, "--catalog", str(tmp_path / "second"), env=env)
    assert second.code == 0, second.err
    listing, said, *rest = second.out.replace("second", "first").splitlines()
    assert listing == first.out.splitlines()[0] == "listing the releases of madeup in the package index"
    assert said == "reading up to 3 releases of madeup from the package index (3 in the cache)"
    assert first.out.splitlines()[1] == "reading up to 3 releases of madeup from the package index (0 in the cache)"
    assert rest == first.out.splitlines()[2:]
    assert (tmp_path / "second" / "madeup-total" / "patch.json").read_bytes() == (
        tmp_path / "first" / "madeup-total" / "patch.json"
    ).read_bytes()


def test_through_pip_the_cache_serves_every_spelling_of_the_name(hub_wheels: Path, tmp_path: Path) -> None:
    """pip fetches made_up_hub wheels for Made_Up.Hub; a later run that spells it made-up.hub reads them from the
    same cache, though the directory pip reads from now holds only damaged wheels."""
    links = tmp_path / "links"
    shutil.copytree(hub_wheels, links)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(links), PIP_NO_CACHE_DIR="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    args = ["--fixed-in", "2.0", "--since", "1.0"]
    first = hfpatch("new", "hub-first", *hub_target(factory.HUB), *args, "--catalog", str(tmp_path / "1"), env=env)
    assert first.code == 0, first.err
    assert list(first.table()) == ["1.0", "1.0.1", "2.0", "3.0"]
    cache = tmp_path / "xdg" / "hfpatch" / "wheels" / "made-up-hub"
    assert sorted(path.name for path in cache.iterdir()) == [
        f"made_up_hub-{release}-py3-none-any.whl" for release in ("1.0", "1.0.1", "2.0", "3.0")
    ]
    for path in links.iterdir():
        factory.damage(path, factory.HUB_CORE)
    second = hfpatch("new", "hub-first", *hub_target("made-up.hub"), *args, "--catalog", str(tmp_path / "2"), env=env)
    assert second.code == 0, second.err
    assert second.table() == first.table()


def test_through_pip_an_unknown_distribution_is_one_error_line(tmp_path: Path, wheels: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    done = hfpatch(
        "new", "x", "--target", "nothere:nothere:f", "--fixed-in", "1.0", "--catalog", str(tmp_path / "c"),
        "--cache", str(tmp_path / "cache"), env=env,
    )  # fmt: skip
    assert done.code == 2
    (line,) = done.err.splitlines()
    assert line.startswith("hfpatch: error: pip finds no release of nothere (")


# ------------------------------------------------------------------------------------- the entries, in real venvs


def venv_with(path: Path, wheel: Path) -> Venv:
    """A real venv with one of the made-up releases installed from its wheel."""
    return make_venv(path, "--no-index", str(wheel))


def hfpatch_in(venv: Venv, command: str, written: Written, *patch_ids: str) -> Completed:
    selection = [word for patch_id in patch_ids for word in ("--patch", patch_id)]
    return hfpatch(command, "--python", venv.python, "--catalog", str(written.catalog), *selection)


def test_applied_to_1_2_both_entries_give_upstream_s_2_0_files_byte_for_byte(
    written: Written, wheels: Path, tmp_path: Path
) -> None:
    venv = venv_with(tmp_path / "venv", wheels / "madeup-1.2-py3-none-any.whl")
    core, basket = (venv.site_packages / "madeup") / "core.py", (venv.site_packages / "madeup") / "basket.py"
    record = venv.site_packages / "madeup-1.2.dist-info" / "RECORD"
    installed = record.read_bytes()
    assert hfpatch_in(venv, "check", written, "madeup-total", "madeup-basket").code == 1
    assert "None" in venv.run("from madeup.core import total; total([1, None])")  # the bug: TypeError on None
    applied = hfpatch_in(venv, "apply", written, "madeup-total", "madeup-basket")
    assert applied.code == 0, applied.out + applied.err
    with zipfile.ZipFile(wheels / "madeup-2.0-py3-none-any.whl") as fixed:
        assert core.read_bytes() == fixed.read(factory.CORE)
        assert basket.read_bytes() == fixed.read(factory.BASKET)
    assert venv.run("from madeup.core import total; print(total([1, None, 2]))") == "3"
    full = "from madeup.basket import Basket; b = Basket(1); b.add(1); b.add(2)"
    assert venv.run(full).endswith("OverflowError: the basket is full")
    assert hfpatch_in(venv, "check", written, "madeup-total", "madeup-basket").code == 0
    for relative, file in ((factory.CORE, core), (factory.BASKET, basket)):  # each patch rewrote its line of RECORD
        assert line_in_record(record.read_bytes(), relative) == record_line(relative, file.read_bytes())
    reverted = hfpatch_in(venv, "revert", written, "madeup-total", "madeup-basket")
    assert reverted.code == 0, reverted.out + reverted.err
    assert core.read_bytes() == factory.CORE_TEXTS["1.2"].encode()
    assert basket.read_bytes() == factory.BASKET_TEXTS["1.2"].encode()
    assert record.read_bytes() == installed, "each revert puts its own line back, the other patch's restore kept"


def test_applied_to_1_1_the_helper_is_inserted_and_the_rest_of_the_file_kept(
    written: Written, wheels: Path, tmp_path: Path
) -> None:
    venv = venv_with(tmp_path / "venv", wheels / "madeup-1.1-py3-none-any.whl")
    applied = hfpatch_in(venv, "apply", written, "madeup-total")
    assert applied.code == 0, applied.out + applied.err
    expected = factory.CORE_TEXTS["1.1"].replace(factory.TOTAL_A, factory.CLEAN + "\n\n" + factory.TOTAL_FIX)
    assert ((venv.site_packages / "madeup") / "core.py").read_text() == expected
    assert venv.run("from madeup.core import total; print(total([None, 4]))") == "4"
    skeleton = hfpatch_in(venv, "verify", written, "madeup-total")
    assert (skeleton.code, skeleton.label("madeup-total")) == (2, "broken-probe"), skeleton.out
    assert "is the skeleton hfpatch new wrote: write its reproduce()" in skeleton.text
    # The author writes what proves the fix, in the skeleton's own terms (in a copy: the entries are shared);
    # verify then runs the real code.
    own = dataclasses.replace(written, catalog=tmp_path / "catalog")
    shutil.copytree(written.catalog, own.catalog)
    probe = own.catalog / "madeup-total" / "probe.py"
    text = probe.read_text()
    reproduce = text[text.index("def reproduce()") : text.index("def is_the_bug")]
    proved = "def reproduce() -> None:\n    from madeup.core import total\n\n    assert total([None, 4]) == 4\n\n\n"
    probe.write_text(text.replace(reproduce, proved))
    assert hfpatch_in(venv, "verify", own, "madeup-total").label("madeup-total") == "verified"


def installed_site(wheel: Path, root: Path, written: Written, patch_id: str = "madeup-total") -> Site:
    """A release installed from its wheel into a site of its own (as pip would), with the entries of `written`."""
    factory.install(wheel, root)
    return Site(root, factory.NAME, factory.version_of(wheel), factory.CORE, patch_id, catalog=written.catalog)


def test_after_an_upgrade_to_another_affected_release_apply_patches_the_release_installed_now(
    written: Written, wheels: Path, tmp_path: Path
) -> None:
    """1.0 patched, then upgraded to 1.1 (pip replaces the package and its dist-info; hfpatch's state stays): apply
    patches 1.1's own file, never 1.0's backup, and revert gives 1.1 back."""
    site = installed_site(wheels / "madeup-1.0-py3-none-any.whl", tmp_path / "site", written)
    assert site.run("apply").code == 0
    shutil.rmtree(site.root / "madeup")
    shutil.rmtree(site.dist_info)
    factory.install(wheels / "madeup-1.1-py3-none-any.whl", site.root)
    check = site.run("check")
    assert (check.code, check.label("madeup-total")) == (1, "needs-patch"), check.out + check.err
    assert "stale state: hfpatch patched madeup 1.0, and 1.1 is installed now" in check.out
    applied = site.run("apply")
    assert (applied.code, applied.label("madeup-total")) == (0, "patched"), applied.out + applied.err
    patched_11 = factory.CORE_TEXTS["1.1"].replace(factory.TOTAL_A, factory.CLEAN + "\n\n" + factory.TOTAL_FIX)
    assert site.file.read_text() == patched_11
    assert site.run("check").label("madeup-total") == "applied"
    reverted = site.run("revert")
    assert (reverted.code, reverted.label("madeup-total")) == (0, "reverted"), reverted.out + reverted.err
    assert site.file.read_text() == factory.CORE_TEXTS["1.1"]


def test_unknown_code_in_one_target_is_refused_beside_a_target_the_fix_cannot_take(
    written: Written, wheels: Path, tmp_path: Path
) -> None:
    """0.9's total has another signature, and someone added a _clean of their own: code hfpatch does not know is
    a refusal (exit 2), not a release the patch does not apply to (exit 0)."""
    site = installed_site(wheels / "madeup-0.9-py3-none-any.whl", tmp_path / "site", written)
    assert site.run("check").label("madeup-total") == "not-applicable"
    site.file.write_text(site.file.read_text() + "\n\ndef _clean(items):\n    return list(items)\n")
    done = site.run("check")
    assert (done.code, done.label("madeup-total")) == (2, "unrecognised"), done.out + done.err
    assert "_clean line 2 differs from the 2.0 to 2.1 code: 'return list(items)'" in done.out


# ------------------------------------------------------------------------------------------------- the pure core

HEADER = Patch(
    id="m-1",
    title="t",
    upstream="u",
    url="https://example.invalid/m/1",
    distribution="m",
    fixed_in="2.0",
    first_defined_in=None,
    files=(),
    directory=Path("m-1"),
)


def authored(
    texts: dict[str, bytes], names: list[str] | None, unavailable: dict[str, str] | None = None
) -> assemble.Authoring:
    """The pure core over one file's texts, release by release: the fix is 2.0's, read against the newest before it."""
    releases = {release: {"m/core.py": text} for release, text in texts.items()}
    before = [
        release for release in judge.sorted_releases(texts) if release != "2.0" and Version(release) < Version("2.0")
    ]
    fixed = assemble.Fixed({"m/core.py": texts["2.0"]}, "2.0", before[-1] if before else None)
    wanted = [assemble.Wanted("m.core", "m/core.py", None if names is None else tuple(names))]
    fixes = assemble.understand(HEADER, wanted, fixed, releases)
    return assemble.author(HEADER, fixes, fixed, releases, unavailable)


FIX_MODULE = """\
import json
from os import path as ospath
LIMIT = 3


def helper(x):
    return x


class Box:
    def __init__(self):
        self.size = 1

    def _step(self):
        return 1

    def grow(self):
        return self._step() + self.size


def f(a, b=1):
    return helper(a) + LIMIT + len(json.dumps(ospath.sep)) + b
"""
HELPERS = "import json\nfrom os import path as ospath\nLIMIT = 3\n\n\ndef helper(x):\n    return x\n"
OLD_BOX = (
    "class Box:\n"
    "    def __init__(self):\n"
    "        self.size = 1\n\n"
    "    def _step(self):\n"
    "        return 1\n\n"
    "    def grow(self):\n"
    "        return 2\n"
)
OLD_BOX_NO_STEP = OLD_BOX.replace("    def _step(self):\n        return 1\n\n", "")


def _old(f_text: str, head: str = HELPERS, box: str = OLD_BOX) -> str:
    return f"{head}\n\n{box}\n\n{f_text}"


BODY = "def f(a, b=1):\n    return a\n"
WITHOUT_HELPER = _old(BODY, head=HELPERS.replace("def helper", "def other"))
TRY_IMPORT = "try:\n    import json\nexcept ImportError:\n    json = None\n"
STATIC_GROW = OLD_BOX.replace("def grow", "@staticmethod\n    def grow")
SIGNATURE = "not-applicable"


@pytest.mark.parametrize(
    ("old", "targets", "verdict", "reason"),
    [
        pytest.param(FIX_MODULE, ["f"], "fixed", "identical to the fix", id="same-text-fixed"),
        pytest.param(HELPERS, ["f"], "needs-patch", "f absent: the patch adds it", id="new-in-the-fix"),
        pytest.param(_old(BODY), ["f"], "needs-patch", "same signature as the fix; 1 line differs", id="needs-patch"),
        pytest.param(
            _old("def f(a, b, c=1):\n    return a\n"),
            ["f"],
            SIGNATURE,
            "signature (a, b, c=...) where the fix has (a, b=...): the fix would break its callers",
            id="more-parameters",
        ),
        pytest.param(_old("def f(x, b=1):\n    pass\n"), ["f"], SIGNATURE, "(x, b=...) where", id="renamed-parameter"),
        pytest.param(
            _old("def f(a, b):\n    pass\n"),
            ["f"],
            "needs-patch",
            "signature (a, b) where the fix has (a, b=...), which takes every call of it",
            id="a-default-added",
        ),
        pytest.param(_old("def f(a, *, b=1):\n    pass\n"), ["f"], SIGNATURE, "(a, *, b=...) where", id="keyword-only"),
        pytest.param(
            _old("def f(a, /, b=1):\n    pass\n"),
            ["f"],
            "needs-patch",
            "which takes every call of it",
            id="positional-only",
        ),
        pytest.param(_old("def f(a):\n    pass\n"), ["f"], "needs-patch", "which takes every call of it", id="b-added"),
        pytest.param(_old("def f(a, b=1, c=2):\n    pass\n"), ["f"], SIGNATURE, "(a, b=..., c=...) where", id="c-gone"),
        pytest.param(_old("async def f(a, b=1):\n    pass\n"), ["f"], SIGNATURE, "async (a, b=...) where", id="async"),
        pytest.param(_old("class f:\n    pass\n"), ["f"], SIGNATURE, "f is a class here, not a function", id="class"),
        pytest.param(_old("f = len\n"), ["f"], SIGNATURE, "f is a variable here, not a function", id="variable"),
        pytest.param(WITHOUT_HELPER, ["f"], "not-safe", "helper missing", id="helper-missing"),
        pytest.param(
            _old(BODY, head=HELPERS.replace("LIMIT = 3", "")), ["f"], "not-safe", "LIMIT missing", id="constant"
        ),
        pytest.param(
            _old(BODY, head=HELPERS.replace("import json", "")), ["f"], "not-safe", "json missing", id="import"
        ),
        pytest.param(
            _old(BODY, head=HELPERS.replace("import json", TRY_IMPORT)),
            ["f"],
            "needs-patch",
            "same signature",
            id="import-in-a-try-block",
        ),
        pytest.param(
            WITHOUT_HELPER, ["f", "helper"], "needs-patch", "helper absent: the patch adds it", id="helper-target"
        ),
        pytest.param(_old(BODY), ["Box.grow"], "needs-patch", "same signature", id="method"),
        pytest.param(
            _old(BODY, box=OLD_BOX.replace("self.size = 1", "pass")),
            ["Box.grow"],
            SIGNATURE,
            "the fix uses self.size, which Box here never defines",
            id="method-class-lacks-attribute",
        ),
        pytest.param(
            _old(BODY, box=STATIC_GROW),
            ["Box.grow"],
            SIGNATURE,
            "signature @staticmethod (self) where the fix has (self)",
            id="method-became-static",
        ),
        pytest.param(
            _old(BODY, box=OLD_BOX_NO_STEP),
            ["Box.grow", "Box._step"],
            "needs-patch",
            "Box._step absent: the patch adds it",
            id="method-with-its-helper-method",
        ),
    ],
)
def test_the_verdict_of_a_release(old: str, targets: list[str], verdict: str, reason: str) -> None:
    result = authored({"1.0": old.encode(), "2.0": FIX_MODULE.encode()}, targets)
    (row, fixed) = result.rows
    assert (row.release, fixed.verdict.value) == ("1.0", "fixed")
    assert row.verdict.value == verdict
    assert reason in row.reason
    assert (result.patch is not None) == (verdict == "needs-patch")
    assert bool(result.missing) == (verdict == "not-safe")
    if result.patch is not None:  # and the entry patches the release into exactly the fixed definitions
        from hfpatch import rewrite

        (file,) = result.patch.files
        patched = statements.parse(rewrite.patched(old.encode(), result.patch, file), "patched")
        for target in file.targets:
            found = statements.find(patched, target.name)
            assert found is not None and found.sha256 == target.fixed_sha256


def test_a_method_calling_a_method_its_class_lacks_is_not_applicable_with_a_hint() -> None:
    old = _old("def f(a, b=1):\n    return a\n", box=OLD_BOX_NO_STEP).encode()
    result = authored({"0.9": old, "1.0": old, "2.0": FIX_MODULE.encode()}, ["Box.grow"])
    assert result.rows[0].reason == "the fix uses self._step, which Box here never defines"
    assert result.patch is None
    assert (
        "0.9 to 1.0 lack Box._step, which the fix calls; add --target m:m.core:Box._step to insert it and patch them "
        "too"
    ) in result.notes


def test_the_missing_names_say_which_releases_lack_them_and_what_they_are() -> None:
    lacking = _old("def f(a, b=1):\n    return a\n", head="import json\nfrom os import path as ospath\n")
    texts = {"1.0": lacking.encode(), "1.1": lacking.encode(), "1.2": _old("def f(a, b=1):\n    return 0\n").encode()}
    result = authored({**texts, "2.0": FIX_MODULE.encode()}, ["f"])
    assert result.patch is None
    assert result.missing == (
        assemble.Missing("LIMIT", ("f",), ("1.0", "1.1"), "m.core", "variable"),
        assemble.Missing("helper", ("f",), ("1.0", "1.1"), "m.core", "function"),
    )
    assert [row.verdict.value for row in result.rows] == ["not-safe", "not-safe", "needs-patch", "fixed"]


def test_a_release_that_cannot_be_read_is_a_skipped_row_and_no_form() -> None:
    old = _old(BODY).encode()
    texts = {"0.9": b"def f(a, b=1)\n    return a\n", "1.0": old, "2.0": FIX_MODULE.encode()}
    result = authored(texts, ["f"], {"1.5": "no wheel (pip found none)"})
    rows = {row.release: (row.forms, row.verdict.value, row.reason) for row in result.rows}
    assert rows["0.9"] == (
        ("?",),
        "skipped",
        "m/core.py of 0.9 is not valid Python (line 1) for this Python; no form recorded",
    )
    assert rows["1.5"] == (("?",), "skipped", "no wheel (pip found none)")
    assert rows["1.0"][1] == "needs-patch"
    assert result.patch is not None
    assert {release for known in result.patch.files[0].known_files for release in known.releases} == {"1.0", "2.0"}


def test_a_name_both_releases_take_from_the_same_star_import_is_present() -> None:
    fix = "from os.path import *\n\n\ndef f(a):\n    return join(a, a)\n"
    same = "from os.path import *\n\n\ndef f(a):\n    return a\n"
    without = "def f(a):\n    return a\n"
    for old, verdict in ((same, "needs-patch"), (without, "not-safe")):
        result = authored({"1.0": old.encode(), "2.0": fix.encode()}, ["f"])
        assert result.rows[0].verdict.value == verdict


def test_one_text_that_takes_the_fix_in_one_release_and_not_in_another_is_refused() -> None:
    grow = "    def grow(self):\n        return 2\n"
    without_size = f"class Box:\n    def __init__(self):\n        pass\n\n{grow}"
    with_size = f"class Box:\n    def __init__(self):\n        self.size = 1\n\n{grow}"
    fix = (
        "class Box:\n    def __init__(self):\n        self.size = 1\n\n    def grow(self):\n        return self.size\n"
    )
    texts = {"1.0": without_size.encode(), "1.1": with_size.encode(), "2.0": fix.encode()}
    result = authored(texts, ["Box.grow"])
    assert [row.verdict.value for row in result.rows] == ["not-applicable", "needs-patch", "fixed"]
    assert result.patch is None
    assert result.refusal == (
        "Box.grow has the same text in 1.1, which can take the fix, and in 1.0, where the fix uses self.size, which "
        "Box here never defines; one form cannot have both verdicts, so leave one side out with --since or --until; "
        "nothing written."
    )
    narrowed = authored({"1.1": with_size.encode(), "2.0": fix.encode()}, ["Box.grow"])
    assert narrowed.patch is not None and narrowed.refusal == ""


EXCEPT = "def f(a):\n    import os\n    try:\n        pass\n    except E as e:\n        return e, os\n"
WALRUS = "def f(a):\n    if (n := a):\n        return n\n    return f(a - 1)\n"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        pytest.param("def f(a):\n    return a\n", set(), id="parameters"),
        pytest.param("def f(a):\n    b = g(a)\n    return len(b)\n", {"g"}, id="locals-and-builtins"),
        pytest.param("def f(a):\n    return [h(x) for x in a if x]\n", {"h"}, id="comprehension"),
        pytest.param("def f(a):\n    def inner(b):\n        return a + b + k\n    return inner\n", {"k"}, id="closure"),
        pytest.param("def f():\n    global G\n    G = 1\n    return G + H\n", {"G", "H"}, id="global"),
        pytest.param("@deco(D)\ndef f(a: T = V) -> R:\n    return a\n", {"deco", "D", "T", "V", "R"}, id="decorators"),
        pytest.param("def f(self):\n    return super().f() + __name__\n", set(), id="super-and-module-dunders"),
        pytest.param(EXCEPT, {"E"}, id="imports-and-except"),
        pytest.param("def f(a):\n    return (lambda t: t + q)(a)\n", {"q"}, id="lambda"),
        pytest.param(WALRUS, {"f"}, id="walrus-and-recursion"),
    ],
)
def test_the_names_a_fixed_function_reads_from_its_module(text: str, names: set[str]) -> None:
    assert judge.free_names(text) == names


@pytest.mark.parametrize(
    "value",
    ["plain", 'a "quoted" \\ back', "new\nline\ttab", "é ü — 漢字", "\x00\x1f\x7f", "emoji 😀"],
)
def test_an_entry_reads_back_as_written_whatever_its_text(value: str, tmp_path: Path) -> None:
    builtin = entry.load(catalog.builtin_catalog() / "transformers-46618")
    directory = tmp_path / builtin.id
    shutil.copytree(builtin.directory / "fixed", directory / "fixed")
    patch = builtin._replace(title=value, about=(value, "second line"), directory=directory, probe=None)
    (directory / "patch.json").write_text(entry.render(patch), encoding="utf-8")
    assert entry.load(directory) == patch


def test_check_loads_neither_new_nor_the_rewrite() -> None:
    """`check` runs on every container start: what only `new` and `apply` need must stay out of it."""
    code = (
        "import sys, hfpatch.cli\n"
        "hfpatch.cli.main(['check', '--patch', 'transformers-46618'])\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stderr.split())
    assert "hfpatch.cli" in loaded
    heavy = {
        "libcst",
        "hfpatch.new",
        "hfpatch.rewrite",
        "difflib",
        "zipfile",
    }
    assert not {name for name in loaded if name in heavy or name.split(".")[0] in heavy}


# ----------------------------------------------------------------------------------------------- progress


def test_progress_rewrites_one_line_on_a_terminal_and_writes_a_line_now_and_then_in_a_log() -> None:
    import io

    from hfpatch.new.progress import LOG_INTERVAL, Progress

    terminal = io.StringIO()
    shown = Progress(terminal, terminal=True)
    shown.one_more("1.0")
    shown.one_more("1.1")
    shown.done()
    assert terminal.getvalue() == (
        "\rread 1 release so far (the last: 1.0)\033[K\rread 2 releases so far (the last: 1.1)\033[K\r\033[K"
    )
    now = [0.0]
    log = io.StringIO()
    logged = Progress(log, terminal=False, clock=lambda: now[0])
    logged.one_more("1.0")
    assert log.getvalue() == ""
    now[0] = LOG_INTERVAL
    logged.one_more("1.1")
    now[0] = LOG_INTERVAL + 1
    logged.one_more("1.2")
    now[0] = 2 * LOG_INTERVAL + 1
    logged.one_more("2.0")
    logged.done()
    assert log.getvalue() == "read 2 releases so far (the last: 1.1)\nread 4 releases so far (the last: 2.0)\n"
