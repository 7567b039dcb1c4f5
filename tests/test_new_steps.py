"""`hfpatch new`'s steps, each alone: what was asked, which releases, their texts, the fix understood, the release
table, the entry. The whole command is tested in test_new.py and test_sources.py; here each step's inputs and
outputs, on the made-up releases of tests/wheelfactory.py (a --find-links directory, no network)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
import wheelfactory as factory
from packaging.version import Version

from hfpatch import entry
from hfpatch.entry import FileShape
from hfpatch.errors import AuthoringError, UsageError
from hfpatch.new import command, draft, reading, selection, wheels
from hfpatch.new.assemble import Wanted, author
from hfpatch.new.request import Request, ask

V = Version
LISTED = [V(release) for release in factory.RELEASES]


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("wheels")
    factory.build(directory)
    return directory


def request(tmp_path: Path, *targets: str, **options: object) -> Request:
    given = {"fixed_in": "2.0", **options}
    return Request("madeup-total", targets or ("madeup:madeup.core:total",), catalog=str(tmp_path), **given)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------- what was asked


def test_what_was_asked_is_checked_into_versions_targets_and_the_entry_s_place(tmp_path: Path) -> None:
    checked = ask(request(tmp_path, "madeup:madeup.core:total", since="1.0", releases=("0.7",)))
    assert (checked.distribution, checked.fixed_in, checked.since, checked.named) == (
        "madeup",
        V("2.0"),
        V("1.0"),
        (V("0.7"),),
    )
    assert checked.targets is not None and checked.targets.modules == {"madeup.core": ("total",)}
    assert checked.destination == tmp_path / "madeup-total"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        pytest.param({"fixed_in": None}, "say where the fixed text is", id="no-source"),
        pytest.param({"from_edits": "madeup"}, "--fixed-in and --from-edits", id="release-and-edit"),
        pytest.param({"since": "2.1"}, "--since 2.1 is after --fixed-in 2.0", id="since-after-the-fix"),
        pytest.param({"until": "two"}, "--until 'two' is not a version", id="not-a-version"),
    ],
)
def test_what_cannot_be_asked_is_a_usage_error(tmp_path: Path, options: dict[str, object], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        ask(request(tmp_path, **options))


# ---------------------------------------------------------------------------------------- which releases


OLDER = "0.7 0.8 0.9 1.0 1.1 1.2"


@pytest.mark.parametrize(
    ("options", "older", "newer", "candidates"),
    [
        pytest.param({}, OLDER, "2.0.1 2.1", f"{OLDER} 2.0 2.1", id="default"),
        pytest.param({"since": "1.1"}, OLDER, "2.0.1 2.1", "1.1 1.2 2.0 2.1", id="since"),
        pytest.param({"until": "2.0.1"}, OLDER, "2.0.1 2.1", f"{OLDER} 2.0 2.0.1", id="until"),
        pytest.param({"all_releases": True}, OLDER, "2.0.1 2.1", f"{OLDER} 2.0 2.0.1 2.1", id="all"),
        pytest.param({"pre": True}, OLDER, "2.0.1 2.1 2.2rc1", f"{OLDER} 2.0 2.2rc1", id="pre"),
        pytest.param({"releases": ("2.0.1",)}, OLDER, "2.0.1 2.1", f"{OLDER} 2.0 2.0.1 2.1", id="named"),
    ],
)
def test_which_releases_are_before_and_after_the_fix(
    tmp_path: Path, options: dict[str, object], older: str, newer: str, candidates: str
) -> None:
    chosen = selection.select(ask(request(tmp_path, **options)), LISTED, "here")
    assert [str(version) for version in chosen.older] == older.split()
    assert [str(version) for version in chosen.newer] == newer.split()
    assert [str(version) for version in chosen.candidates] == candidates.split()


def test_a_build_is_read_against_the_release_it_says_it_is_and_a_fixed_in_that_is_none_names_the_nearest(
    tmp_path: Path,
) -> None:
    build = ask(request(tmp_path, fixed_in=None, fixed_from=str(tmp_path / "b.whl")))
    assert selection.select(build, LISTED, "here", build=V("1.1")).older[-1] == V("1.1")
    assert selection.select(build, LISTED, "here", build=V("1.1+local")).older[-1] == V("1.1")
    with pytest.raises(UsageError, match=r"--fixed-in 1\.5 is not a release of madeup in here \(the nearest: 1\.0"):
        selection.select(ask(request(tmp_path, fixed_in="1.5")), LISTED, "here")
    with pytest.raises(AuthoringError, match="no wheel of madeup in here"):
        selection.select(ask(request(tmp_path)), [], "here")


# ---------------------------------------------------------------------------- their texts, the fix understood


def test_the_fix_is_read_against_the_release_before_it_and_the_walk_back_stops_at_the_first_without_it(
    tmp_path: Path, links: Path
) -> None:
    wanted_asked = dataclasses.replace(ask(request(tmp_path)), find_links=links)
    releases = command.releases_of(wanted_asked)
    chosen = selection.select(wanted_asked, releases.versions(), releases.where)
    texts = reading.Reading(releases)
    fix_source = command.fix_of_release(wanted_asked, chosen, releases)
    wanted = command.wanted_files(wanted_asked, fix_source, None)
    assert wanted == [Wanted("madeup.core", factory.CORE, ("total",))]
    chosen, fix = command.read_the_fix(wanted_asked, chosen, texts, fix_source, wanted, None)
    assert (fix.label, fix.before, fix.texts) == (
        "madeup 2.0",
        "1.2",
        {factory.CORE: factory.CORE_TEXTS["2.0"].encode()},
    )
    assert sorted(texts.texts) == ["1.2", "2.0"]
    header = draft.header(wanted_asked, wanted, fix.label)
    fixes, fix, modules = command.understand_the_fix(header, wanted, fix, texts, fix_source)
    assert [change.key for change in fixes[0].changes] == ["total"]
    assert modules == {}
    reading.read_the_rest(texts, chosen, wanted_asked, fixes)
    assert sorted(texts.texts, key=V) == ["0.8", "0.9", "1.0", "1.1", "1.2", "2.0", "2.1"], (
        "0.8 lacks total: the walk stops"
    )


def test_a_released_wheel_given_as_the_build_moves_the_baseline_to_the_release_before_it(links: Path) -> None:
    releases = wheels.FindLinks(links, "madeup")
    texts = reading.Reading(releases, paths={factory.CORE})
    texts.read([V("2.0")])
    from hfpatch.new.sources import WheelSource

    built = WheelSource(links / "madeup-2.0-py3-none-any.whl", "madeup")
    chosen = selection.Selection((V("1.2"), V("2.0")), (), (V("1.2"), V("2.0")), ())
    assert reading.made_on(texts, built, chosen).older == (V("1.2"),)
    assert "1.2" in texts.texts


# ------------------------------------------------------------------------------------ the table, the entry


def test_the_table_is_shown_and_a_release_that_is_not_safe_stops_the_run(tmp_path: Path, links: Path) -> None:
    wanted_asked = dataclasses.replace(ask(request(tmp_path)), find_links=links)
    releases = command.releases_of(wanted_asked)
    chosen = selection.select(wanted_asked, releases.versions(), releases.where)
    texts = reading.Reading(releases)
    fix_source = command.fix_of_release(wanted_asked, chosen, releases)
    wanted = command.wanted_files(wanted_asked, fix_source, None)
    chosen, fix = command.read_the_fix(wanted_asked, chosen, texts, fix_source, wanted, None)
    header = draft.header(wanted_asked, wanted, fix.label)
    fixes, fix, modules = command.understand_the_fix(header, wanted, fix, texts, fix_source)
    reading.read_the_rest(texts, chosen, wanted_asked, fixes)
    authoring = author(header, fixes, fix, texts.texts, texts.unavailable, modules)
    out = io.StringIO()
    with pytest.raises(AuthoringError, match="not safe to backport as it stands"):
        command.show_table(out, wanted_asked, wanted, authoring, chosen, releases.where, fix.label)
    assert "it is a function in madeup 2.0: add --target madeup:madeup.core:_clean" in out.getvalue()


def test_the_entry_s_header_names_the_fix_where_no_title_or_upstream_is_given(tmp_path: Path) -> None:
    given = ask(request(tmp_path))
    wanted = [Wanted("madeup.core", factory.CORE, ("total",))]
    header = draft.header(given, wanted, "madeup 2.0")
    assert (header.title, header.upstream, header.url) == (
        "total in madeup.core, as fixed in madeup 2.0",
        "madeup-total",
        "https://pypi.org/project/madeup/2.0/",
    )
    pulled = draft.header(dataclasses.replace(given, upstream="https://github.com/x/madeup/pull/7"), wanted, "-")
    assert pulled.upstream == "x/madeup#7"


# ------------------------------------------------------------------------- what patch releases carry (pinned)


def test_a_package_init_whose_lazy_import_table_changed_is_carried_without_its_version(tmp_path: Path) -> None:
    """A patch release's package __init__.py: its lazy-import table gains a name (a module-level `if TYPE_CHECKING:`
    block, once refused as "the transform did not produce the fixed if TYPE_CHECKING"), and its __version__ differs,
    which is the release's own and never carried."""
    head = '"""lazy."""\nimport sys\nfrom typing import TYPE_CHECKING\n\nfrom .utils import _LazyModule\n\n'
    head += '__version__ = "{}"\n\n'
    lazy = "else:\n    sys.modules[__name__] = _LazyModule(__name__, _import_structure)\n"
    old = '_import_structure = {"a": ["A"]}\n\nif TYPE_CHECKING:\n    from .a import A\n' + lazy
    new = old.replace('["A"]}', '["A"], "b": ["B"]}').replace("A\nelse", "A\n    from .b import B\nelse")
    links = tmp_path / "wheels"
    links.mkdir()
    for version, text in (("1.0", old), ("1.1", old), ("1.2", new)):
        files = {"lazy/__init__.py": (head.format(version) + text).encode(), "lazy/utils.py": b"_LazyModule = 1\n"}
        factory.write_wheel(links, version, files, name="lazy")
    out = io.StringIO()
    assert command.run(Request("lazy-b", ("lazy:lazy",), "1.2", str(tmp_path / "c"), find_links=str(links)), out) == 0
    said = out.getvalue()
    assert "1.1      A     needs-patch  _import_structure: 1 line differs from the fix; if TYPE_CHECKING" in said, said
    assert "note: the fix also changes __version__ in lazy/__init__.py, which the entry does not carry" in said
    from hfpatch import entry

    (file,) = entry.load(tmp_path / "c" / "lazy-b").files
    assert [target.name for target in file.targets] == ["_import_structure", "if TYPE_CHECKING"]


def test_a_statement_a_whole_module_fix_only_moved_is_left_where_it_is_and_the_rest_carried(tmp_path: Path) -> None:
    """Moved as it was, a statement is removed at one place and added at another: once refused as "the transform
    did not produce the fixed b" (both at once); now left where the release has it, and said so."""
    a, a_fix, b = "def a(x):\n    return x\n", "def a(x):\n    return x or 0\n", "def b(y):\n    return y * 2\n"
    links = tmp_path / "wheels"
    links.mkdir()
    for version, body in (("1.0", f"{a}\n\n{b}"), ("1.1", f"{a}\n\n{b}"), ("1.2", f"{b}\n\n{a_fix}")):
        files = {"mv/__init__.py": b"", "mv/core.py": f'"""mv."""\n\n\n{body}'.encode()}
        factory.write_wheel(links, version, files, name="mv")
    out = io.StringIO()
    assert command.run(Request("mv-1", ("mv:mv.core",), "1.2", str(tmp_path / "c"), find_links=str(links)), out) == 0
    said = out.getvalue()
    assert "1.1      A     needs-patch  same signature as the fix; 1 line differs from the fix" in said, said
    assert "note: the fix also changes b in mv/core.py, which the entry does not carry" in said
    from hfpatch import entry, rewrite

    patch = entry.load(tmp_path / "c" / "mv-1")
    assert [target.name for target in patch.files[0].targets] == ["a"]
    old = f'"""mv."""\n\n\n{a}\n\n{b}'.encode()
    assert rewrite.patched(old, patch, patch.files[0]) == f'"""mv."""\n\n\n{a_fix}\n\n{b}'.encode()


def _wheels(tmp_path: Path, name: str, releases: dict[str, dict[str, str]]) -> str:
    links = tmp_path / "wheels"
    links.mkdir()
    for version, files in releases.items():
        factory.write_wheel(links, version, {path: text.encode() for path, text in files.items()}, name=name)
    return str(links)


def test_a_fix_that_calls_into_a_module_its_release_adds_carries_that_module_as_a_file_it_adds(tmp_path: Path) -> None:
    """huggingface_hub 1.12.2's inference/_providers/__init__.py: its table of providers names the class of a
    module that 1.12.2 adds (deepinfra.py). Once refused ("an entry cannot create a module"); now the entry adds that
    module (file shape "add", the fixed release's bytes), and reads each release as the table says."""
    old = 'from .a import ATask\n\nPROVIDERS = {"a": ATask}\n'
    new = old.replace("ATask\n\n", "ATask\nfrom .b import BTask\n\n").replace("ATask}", 'ATask, "b": BTask}')
    base = {"prov/__init__.py": "", "prov/providers/a.py": "class ATask:\n    pass\n"}
    added = "class BTask:\n    pass\n"
    releases = {
        "1.0": {**base, "prov/providers/__init__.py": old},
        "1.1": {**base, "prov/providers/__init__.py": old},
        "1.2": {**base, "prov/providers/__init__.py": new, "prov/providers/b.py": added},
    }
    links = _wheels(tmp_path, "prov", releases)
    out = io.StringIO()
    asked = Request("prov-b", ("prov:prov.providers",), "1.2", str(tmp_path / "c"), find_links=links)
    assert command.run(asked, out) == 0, out.getvalue()
    said = out.getvalue()
    assert "  prov/providers/b.py: adds the module (a new file)" in said, said
    patch = entry.load(tmp_path / "c" / "prov-b")
    assert [(file.file, file.shape) for file in patch.files] == [
        ("prov/providers/__init__.py", FileShape.EDIT),
        ("prov/providers/b.py", FileShape.ADD),
    ]
    assert patch.files[1].added == added.encode()
    assert (tmp_path / "c" / "prov-b" / "fixed" / "prov/providers/b.py").read_bytes() == added.encode()


def test_a_module_the_fix_adds_in_another_text_in_an_older_release_is_refused(tmp_path: Path) -> None:
    old = 'from .a import ATask\n\nPROVIDERS = {"a": ATask}\n'
    new = old.replace("ATask\n\n", "ATask\nfrom .b import BTask\n\n").replace("ATask}", 'ATask, "b": BTask}')
    base = {"prov/__init__.py": "", "prov/providers/a.py": "class ATask:\n    pass\n"}
    links = _wheels(
        tmp_path,
        "prov",
        {
            "1.0": {**base, "prov/providers/__init__.py": old},
            "1.1": {**base, "prov/providers/__init__.py": old, "prov/providers/b.py": "OTHER = 1\n"},
            "1.2": {**base, "prov/providers/__init__.py": new, "prov/providers/b.py": "class BTask:\n    pass\n"},
        },
    )
    out = io.StringIO()
    asked = Request("prov-b", ("prov:prov.providers",), "1.2", str(tmp_path / "c"), find_links=links)
    with pytest.raises(AuthoringError) as raised:
        command.run(asked, out)
    assert "calls BTask from prov/providers/b.py, which here does not exist" in out.getvalue() + str(raised.value)
    assert not (tmp_path / "c").exists()


def test_a_module_function_whose_fix_drops_staticmethod_is_carried_and_a_method_s_is_not(tmp_path: Path) -> None:
    """transformers 4.57.2's generation/continuous_batching/requests.py drops a stray @staticmethod from a
    module's function: once refused as another signature ("the fix would break its callers"), though at module
    level it binds nothing (the object is called as the function is, Python 3.10+). In a class it does bind: a
    method that loses it stays not applicable."""
    head = '"""sm."""\n\n\n'
    old, new = "@staticmethod\ndef f():\n    return 1\n", "def f():\n    return 1\n"
    method_old = "class C:\n    x = 1\n\n    @staticmethod\n    def g():\n        return 1\n"
    method_new = "class C:\n    x = 1\n\n    def g(self):\n        return 1\n"
    texts = {"1.0": (old, method_old), "1.1": (old, method_old), "1.2": (new, method_new)}
    links = _wheels(
        tmp_path,
        "sm",
        {
            version: {
                "sm/__init__.py": "",
                "sm/core.py": head + function,
                "sm/klass.py": head + method,
                "sm/only.py": head + method.replace("    x = 1\n\n", ""),
            }
            for version, (function, method) in texts.items()
        },
    )
    out = io.StringIO()
    assert command.run(Request("sm-f", ("sm:sm.core",), "1.2", str(tmp_path / "c"), find_links=links), out) == 0
    said = out.getvalue()
    assert "1.1      A     needs-patch  signature @staticmethod () where the fix has (), which takes every call" in said
    from hfpatch import entry, rewrite

    patch = entry.load(tmp_path / "c" / "sm-f")
    assert rewrite.patched((head + old).encode(), patch, patch.files[0]) == (head + new).encode()
    out = io.StringIO()
    with pytest.raises(AuthoringError, match="no release read needs the patch"):
        command.run(Request("sm-g", ("sm:sm.klass",), "1.2", str(tmp_path / "d"), find_links=links), out)
    refused = "signature @staticmethod () where the fix has (self): the fix would break its callers"
    assert refused in out.getvalue(), out.getvalue()
    # The method is the class's first statement: its decorator is the method's, not the class's head (the class
    # was once replaced whole, the method's signature unjudged).
    out = io.StringIO()
    with pytest.raises(AuthoringError, match="no release read needs the patch"):
        command.run(Request("sm-h", ("sm:sm.only",), "1.2", str(tmp_path / "e"), find_links=links), out)
    assert refused in out.getvalue(), out.getvalue()
