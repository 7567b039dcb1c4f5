"""Every shape of fix a patch release carries: imports, constants, class attributes and dataclass fields, new
definitions, a property with its setter, several files, statements removed; exact to the byte, string contents too.

The pure core is tested over texts: which key names each statement (golden/shapes/module.py), and what the rewrite
makes of a file for each shape (before -> after, no-op, refusal). Then `hfpatch new` reads the shapes off the wheels
of a made-up distribution, and real venvs get each entry applied, imported, used and reverted by hfpatch processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import wheelfactory as factory
from support import REPOSITORY, Completed, Venv, hfpatch, in_process, make_venv, sha256

from hfpatch import entry, shapes, statements
from hfpatch.classify import identify
from hfpatch.entry import FileShape, Form, Patch, PatchFile, Shape, Target, Verdict
from hfpatch.errors import UnexpectedCode
from hfpatch.rewrite import patched

GOLDEN = REPOSITORY / "tests" / "golden" / "shapes" / "module.py"


# --------------------------------------------------------------------------------------- keys, pure


def test_each_statement_of_a_module_and_of_a_class_body_has_its_key() -> None:
    source = statements.parse(GOLDEN.read_bytes(), "module.py")
    assert [unit.key for unit in statements.units(source)] == [
        "__doc__",
        "import os",
        "import numpy as np",
        "from .utils import#1",
        "from .utils import",
        "LIMIT#1",
        "LIMIT",
        "MAPPING",
        "__all__ +=",
        "a; b",
        "f",
        "Config",
        "if TYPE_CHECKING",
        "try: import json",
        "register()",
    ]
    assert [unit.key for unit in statements.units(source, "Config")] == [
        "Config.__doc__",
        "Config.size",
        'Config."""',
        "Config.window#1",
        "Config.window",
    ]


def test_a_key_names_the_statement_python_binds_last_and_the_ones_before_are_numbered() -> None:
    source = statements.parse(GOLDEN.read_bytes(), "module.py")
    setter, getter = statements.find(source, "Config.window"), statements.find(source, "Config.window#1")
    assert setter is not None and setter.text.startswith("    @window.setter")
    assert getter is not None and getter.text.startswith("    @property")
    assert [unit.key for unit in statements.bound_to(source, "Config.window")] == ["Config.window#1", "Config.window"]
    assert [unit.key for unit in statements.bound_to(source, "json")] == ["try: import json"]
    limit = statements.find(source, "LIMIT")
    assert limit is not None and limit.text == "LIMIT = 4"


def test_a_unit_is_its_own_lines_as_the_file_has_them_and_its_lead_is_apart() -> None:
    source = statements.parse(GOLDEN.read_bytes(), "module.py")
    f = statements.find(source, "f")
    assert f is not None
    assert f.text == "@decorate\ndef f(x, y=1):\n    return x"
    assert "".join(source.lines[f.lead : f.start]) == "\n\n# a comment above f\n"
    size = statements.find(source, "Config.size")
    assert size is not None and (size.text, size.indent, size.kind) == ("    size: int = 3", "    ", "variable")


# ------------------------------------------------------------------------------------------- rewrite, pure


def _patch(file: PatchFile) -> Patch:
    return Patch("shapes-1", "t", "u", "https://example.invalid", "shapes", "2.0", None, (file,), Path("shapes-1"))


def _target(name: str, fixed: str | None, was: tuple[str, ...] = (), **placement: object) -> Target:
    forms = tuple(Form(sha256(text), Verdict.NEEDS_PATCH, ("1.0",)) for text in was)
    shape = Shape.DELETE if fixed is None else Shape.REPLACE if was else Shape.INSERT
    return Target(name, fixed, forms, shape, **placement)  # type: ignore[arg-type]


DATACLASS = "@dataclass\nclass Box:\n    width: int = 1\n    depth: int = 1\n"
# A string whose lines sit left of the method, and a line of only spaces inside it.
STRINGS = (
    'class Report:\n    def render(self):\n        head = """\nReport\n  ======\n"""\n'
    '        \n        return head + "1"\n'
)
# A package __init__ whose lazy-import table gained a name (a statement of the module that is an `if` itself).
LAZY = "import sys\n\nif TYPE_CHECKING:\n    from .a import A\nelse:\n    sys.modules[__name__] = _Lazy(_table)\n"
LAZY_FIX = LAZY.replace("    from .a import A\n", "    from .a import A\n    from .b import B\n")
REWRITES = [
    pytest.param(
        "import os\n\nX = 1\n",
        [_target("import json", "import json", after="import os")],
        "import os\nimport json\n\nX = 1\n",
        id="an-import-where-the-fix-has-it",
    ),
    pytest.param(
        "LIMIT = 3  # the limit\n",
        [_target("LIMIT", "LIMIT = 5", ("LIMIT = 3  # the limit",))],
        "LIMIT = 5\n",
        id="a-constant",
    ),
    pytest.param(
        DATACLASS,
        [_target("Box.height", "    height: int = 1", after="Box.width")],
        DATACLASS.replace("    depth", "    height: int = 1\n    depth"),
        id="a-dataclass-field-in-its-place",
    ),
    pytest.param(
        "X = 1\n\n\ndef f():\n    return X\n",
        [_target("Unit", 'class Unit:\n    name = "cm"', after="X", lead="\n\n")],
        'X = 1\n\n\nclass Unit:\n    name = "cm"\n\n\ndef f():\n    return X\n',
        id="a-new-class-with-its-lead",
    ),
    pytest.param(
        "X = 1\n\n# obsolete\nregister(X)\nY = 2\n",
        [_target("register()", None, ("register(X)",))],
        "X = 1\nY = 2\n",
        id="a-statement-the-fix-removes-with-its-comment",
    ),
    pytest.param(
        "class C:\n    x = 1\n",
        [
            _target("C.p#1", "    @property\n    def p(self):\n        return 1", after="C.x", lead=""),
            _target("C.p", "    @p.setter\n    def p(self, v):\n        pass", after="C.p#1", lead=""),
        ],
        "class C:\n    x = 1\n    @property\n    def p(self):\n        return 1\n    @p.setter\n    def p(self, v):\n"
        "        pass\n",
        id="a-property-and-its-setter-in-order",
    ),
    pytest.param(
        STRINGS,
        [
            _target(
                "Report.render",
                STRINGS.split("\n", 1)[1].rstrip("\n").replace('"1"', '"2"'),
                (STRINGS.split("\n", 1)[1].rstrip("\n"),),
            )
        ],
        STRINGS.replace('"1"', '"2"'),
        id="string-contents-and-a-whitespace-only-line-kept",
    ),
    pytest.param(
        LAZY,
        [
            _target(
                "if TYPE_CHECKING", LAZY_FIX.split("\n\n", 1)[1].rstrip("\n"), (LAZY.split("\n\n", 1)[1].rstrip("\n"),)
            )
        ],
        LAZY_FIX,
        id="a-module-level-if-block-a-lazy-import-table-s",
    ),
    pytest.param("import os\n", [_target("import os", "import os", ("import sys",))], "import os\n", id="noop"),
]


@pytest.mark.parametrize(("before", "targets", "after"), REWRITES)
def test_each_shape_comes_out_exactly_and_every_other_byte_stays(
    before: str, targets: list[Target], after: str
) -> None:
    file = PatchFile("shapes.core", "shapes/core.py", tuple(targets))
    result = patched(before.encode(), _patch(file), file)
    assert result == after.encode()
    crlf = patched(before.replace("\n", "\r\n").encode(), _patch(file), file)
    assert crlf == after.replace("\n", "\r\n").encode()
    assert patched(result, _patch(file), file) == result  # a second apply changes nothing


@pytest.mark.parametrize(
    ("before", "target", "says"),
    [
        pytest.param(
            "LIMIT = 4\n", _target("LIMIT", "LIMIT = 5", ("LIMIT = 3",)), "is not a form the patch", id="form"
        ),
        pytest.param(
            "Y = 1\n",
            _target("import json", "import json", after="import os", before="X"),
            "goes after import os",
            id="no-anchor",
        ),
        pytest.param(
            "Y = 1\n", _target("X", "X = 2", ("X = 1",)), "has no X; nothing to patch", id="a-replacement-absent"
        ),
    ],
)
def test_a_shape_that_cannot_come_out_exactly_is_refused(before: str, target: Target, says: str) -> None:
    file = PatchFile("shapes.core", "shapes/core.py", (target,))
    with pytest.raises(UnexpectedCode, match=says):
        patched(before.encode(), _patch(file), file)


F_FIX, F_WAS = "def f():\n    return 2", "def f():\n    return 1"


@pytest.mark.parametrize(
    ("target", "version", "verdict", "says"),
    [
        pytest.param(_target("f", F_FIX, (F_WAS,)), "1.0", None, "has no f", id="replace"),
        pytest.param(
            _target("f", F_FIX, (F_WAS,)),
            "2.0",
            Verdict.FIXED,
            "f is gone from this release, which has the fix (2.0+)",
            id="replace-in-a-release-with-the-fix",
        ),
        pytest.param(_target("f", F_FIX), "1.0", Verdict.NEEDS_PATCH, "the patch adds it", id="insert"),
        pytest.param(_target("f", None, (F_WAS,)), "1.0", Verdict.FIXED, "which the fix removes", id="delete"),
    ],
)
def test_a_statement_the_file_lacks_is_judged_by_its_shape(
    target: Target, version: str, verdict: Verdict | None, says: str
) -> None:
    file = PatchFile("shapes.core", "shapes/core.py", (target,))
    found = identify(b"X = 1\n", _patch(file), file, version)
    assert (found.verdict, says in found.detail) == (verdict, True), found.detail


def test_each_shape_says_what_it_does_to_its_statement() -> None:
    file = PatchFile(
        "shapes.core",
        "shapes/core.py",
        (
            _target("a", "a = 2", ("a = 1",)),
            _target("b", "b = 1", after="a"),
            _target("c", "c = 1", before="d"),
            _target("e", "e = 1"),
            _target("f", None, ("f = 1",)),
        ),
    )
    assert shapes.describe(file) == (
        "replaces a, adds b after a, adds c before d, adds e at the start of its scope, removes f"
    )
    removed = PatchFile("shapes.old", "shapes/old.py", (), shape=FileShape.REMOVE)
    assert shapes.describe(removed) == "removes its code (the file is emptied)"


# ------------------------------------------------------------------------ new, from a made-up distribution

SHAPES_10 = '''"""Shapes."""

import os
from dataclasses import dataclass

SCALE = 1


@dataclass
class Box:
    width: int = 1
    depth: int = 1

    def area(self):
        return self.width * self.depth * SCALE


def describe(box):
    return f"{box.width}x{box.depth} {os.sep}"
'''
SHAPES_20 = '''"""Shapes."""

import math
import os
from dataclasses import dataclass

SCALE = 2


class Unit:
    name = "cm"


@dataclass
class Box:
    width: int = 1
    height: int = 1
    depth: int = 1

    def area(self):
        return self.width * self.depth * SCALE

    def volume(self):
        return math.prod([self.width, self.height, self.depth])


def describe(box):
    return f"{box.width}x{box.height}x{box.depth} {Unit.name}"
'''
CONFIG_10 = "class Config:\n    def __init__(self, window=4):\n        self.sliding_window = window\n"
CONFIG_20 = CONFIG_10 + (
    "\n"
    "    @property\n"
    "    def window_pattern(self):\n"
    "        return self.sliding_window // 2\n"
    "\n"
    "    @window_pattern.setter\n"
    "    def window_pattern(self, value):\n"
    "        self.sliding_window = value * 2\n"
)
UTILS_10 = "def check_inputs(func):\n    return func\n"
UTILS_20 = (
    "def check_inputs(func=None, *, tie=True):\n"
    "    def wrap(function):\n"
    "        return function\n\n"
    "    return wrap if func is None else wrap(func)\n"
)
MODELS_10 = "from .utils import check_inputs\n\n\nclass Model:\n    @check_inputs\n    def forward(self, x):\n"
MODELS_10 += "        return x\n"
MODELS_20 = MODELS_10.replace("@check_inputs\n", "@check_inputs(tie=False)\n").replace("return x\n", "return x + 1\n")
COUNTER_10 = "LIMIT = 3\n\n\ndef bump(x):\n    return min(x + 1, LIMIT)\n"
COUNTER_20 = "LIMIT = 5\n\n\ndef bump(x):\n    return min(x + 1, LIMIT) if x >= 0 else 0\n"
TEXT_10 = STRINGS
TEXT_20 = STRINGS.replace('"1"', '"2"')
META_10 = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Meta:\n    size: int\n\n\n"
    "def read(text):\n    return Meta(size=int(text))\n"
)
META_20 = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Meta:\n    size: int\n    remote: str | None = None\n"
    "\n\ndef read(text):\n    size, _, remote = text.partition(' ')\n"
    "    return Meta(size=int(size), remote=remote or None)\n"
)

RELEASES = {
    "1.0": {"shapes": SHAPES_10, "config": CONFIG_10, "utils": UTILS_10, "models": MODELS_10, "counter": COUNTER_10,
            "text": TEXT_10, "meta": META_10},
    "2.0": {"shapes": SHAPES_20, "config": CONFIG_20, "utils": UTILS_20, "models": MODELS_20, "counter": COUNTER_20,
            "text": TEXT_20, "meta": META_20},
}  # fmt: skip


def _files(version: str) -> dict[str, bytes]:
    files = {"madeup/__init__.py": b""}
    files |= {f"madeup/{name}.py": text.encode() for name, text in RELEASES[version].items()}
    return files


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("shape-wheels")
    for version in RELEASES:
        factory.write_wheel(directory, version, _files(version))
    return directory


def _new(capsys: pytest.CaptureFixture[str], wheels: Path, catalog: Path, patch_id: str, *targets: str) -> Completed:
    argv = ["new", patch_id, "--fixed-in", "2.0", "--catalog", str(catalog), "--find-links", str(wheels)]
    for target in targets:
        argv += ["--target", f"madeup:{target}"]
    return in_process(argv, capsys)


def _venv(tmp_path: Path, wheels: Path) -> Venv:
    return make_venv(tmp_path / "venv", "--no-index", str(wheels / "madeup-1.0-py3-none-any.whl"))


def _hfpatch(venv: Venv, command: str, catalog: Path, patch_id: str) -> Completed:
    return hfpatch(command, "--catalog", str(catalog), patch=patch_id, python=venv.python)


def test_a_whole_modules_fix_makes_the_old_release_the_fixed_file_byte_for_byte(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    """An import, a constant, a new class, a dataclass field in its place, a new method and a changed function."""
    done = _new(capsys, wheels, tmp_path / "catalog", "madeup-shapes", "madeup.shapes")
    assert done.code == 0, done.out + done.err
    assert done.table()["1.0"][1] == "needs-patch"
    assert "note: patched, the 1.0 file is the 2.0 file byte for byte" in done.text
    written = entry.load(tmp_path / "catalog" / "madeup-shapes")
    (file,) = written.files
    assert [target.name for target in file.targets] == [
        "import math", "SCALE", "Unit", "Box.height", "Box.volume", "describe",
    ]  # fmt: skip
    venv = _venv(tmp_path, wheels)
    installed = venv.site_packages / "madeup" / "shapes.py"
    use = "from madeup.shapes import Box, describe; box = Box(1, 2, 3); print(describe(box), box.volume())"
    assert "TypeError" in venv.run(use)  # 1.0's Box takes two fields
    applied = _hfpatch(venv, "apply", tmp_path / "catalog", "madeup-shapes")
    assert (applied.code, applied.label("madeup-shapes")) == (0, "patched"), applied.out + applied.err
    assert installed.read_text() == SHAPES_20
    assert venv.run(use) == "1x2x3 cm 6"
    checked = _hfpatch(venv, "check", tmp_path / "catalog", "madeup-shapes")
    assert checked.code == 0, checked.out + checked.err
    reverted = _hfpatch(venv, "revert", tmp_path / "catalog", "madeup-shapes")
    assert reverted.code == 0, reverted.out + reverted.err
    assert installed.read_text() == SHAPES_10


def test_a_property_is_carried_with_its_setter(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    """A name bound by two definitions is carried whole: the setter alone would fail as the module imports."""
    done = _new(capsys, wheels, tmp_path / "catalog", "madeup-config", "madeup.config:Config.window_pattern")
    assert done.code == 0, done.out + done.err
    (file,) = entry.load(tmp_path / "catalog" / "madeup-config").files
    assert [target.name for target in file.targets] == ["Config.window_pattern#1", "Config.window_pattern"]
    venv = _venv(tmp_path, wheels)
    assert _hfpatch(venv, "apply", tmp_path / "catalog", "madeup-config").code == 0
    assert (venv.site_packages / "madeup" / "config.py").read_text() == CONFIG_20
    use = "from madeup.config import Config; c = Config(); c.window_pattern = 3; print(c.sliding_window)"
    assert venv.run(use) == "6"


def test_a_fix_that_calls_another_module_with_a_new_signature_is_refused_naming_both_or_carries_it(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog"
    alone = _new(capsys, wheels, catalog, "madeup-models", "madeup.models:Model.forward")
    assert alone.code == 2
    assert alone.table()["1.0"][1] == "not-safe"
    assert (
        "the fix of Model.forward calls check_inputs from madeup/utils.py, which here is (func) where madeup 2.0 "
        "has (func=..., *, tie=...); carry that module too (--target DIST:madeup.utils)"
    ) in alone.text
    assert not (catalog / "madeup-models").exists()
    both = _new(capsys, wheels, catalog, "madeup-models", "madeup.models:Model.forward", "madeup.utils")
    assert both.code == 0, both.out + both.err
    written = entry.load(catalog / "madeup-models")
    assert [file.file for file in written.files] == ["madeup/models.py", "madeup/utils.py"]
    venv = _venv(tmp_path, wheels)
    applied = _hfpatch(venv, "apply", catalog, "madeup-models")
    assert applied.code == 0, applied.out + applied.err
    assert venv.run("from madeup.models import Model; print(Model().forward(1))") == "2"
    checked = _hfpatch(venv, "check", catalog, "madeup-models")
    assert (checked.code, checked.label("madeup-models")) == (0, "applied")
    assert _hfpatch(venv, "revert", catalog, "madeup-models").code == 0
    assert (venv.site_packages / "madeup" / "models.py").read_text() == MODELS_10
    assert (venv.site_packages / "madeup" / "utils.py").read_text() == UTILS_10


def test_a_fix_that_constructs_a_class_of_its_module_with_new_fields_is_refused_or_carries_the_class(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    """The fix of read() builds Meta(remote=...), a field 1.0's dataclass lacks: read() alone would raise TypeError
    at run time (or, caught, lose data), so it is refused naming the class, or carried with it."""
    catalog = tmp_path / "catalog"
    alone = _new(capsys, wheels, catalog, "madeup-meta", "madeup.meta:read")
    assert alone.code == 2
    assert alone.table()["1.0"][1] == "not-safe"
    assert (
        "the fix of read calls Meta, which here is class with fields (size) where madeup 2.0 has class with fields "
        "(size, remote=...); add --target DIST:madeup.meta:Meta to carry it"
    ) in alone.text
    assert not (catalog / "madeup-meta").exists()
    both = _new(capsys, wheels, catalog, "madeup-meta", "madeup.meta:read", "madeup.meta:Meta")
    assert both.code == 0, both.out + both.err
    venv = _venv(tmp_path, wheels)
    assert _hfpatch(venv, "apply", catalog, "madeup-meta").code == 0
    assert venv.run("from madeup.meta import read; print(read('3 hub'))") == "Meta(size=3, remote='hub')"
    assert (venv.site_packages / "madeup" / "meta.py").read_text() == META_20


def test_what_the_fix_changes_beside_its_targets_is_named_and_not_carried(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    done = _new(capsys, wheels, tmp_path / "catalog", "madeup-counter", "madeup.counter:bump")
    assert done.code == 0, done.out + done.err
    assert (
        "note: the fix also changes LIMIT in madeup/counter.py, which the targets do not carry; --target "
        "madeup:madeup.counter carries the whole module's fix"
    ) in done.text


def test_string_contents_and_whitespace_only_lines_come_out_as_the_fixed_release_has_them(
    capsys: pytest.CaptureFixture[str], wheels: Path, tmp_path: Path
) -> None:
    done = _new(capsys, wheels, tmp_path / "catalog", "madeup-text", "madeup.text:Report.render")
    assert done.code == 0, done.out + done.err
    assert "note: patched, the 1.0 file is the 2.0 file byte for byte" in done.text
    venv = _venv(tmp_path, wheels)
    assert _hfpatch(venv, "apply", tmp_path / "catalog", "madeup-text").code == 0
    assert (venv.site_packages / "madeup" / "text.py").read_bytes() == TEXT_20.encode()


# ------------------------------------------------------------------------------------------ the import check


def _entry(catalog: Path, fixed: str, was: str, name: str) -> Path:
    """A hand-written entry for madeup.counter (what `new` would have refused): its digests taken here."""
    directory = catalog / "madeup-hand"
    (directory / "fixed").mkdir(parents=True)
    (directory / "fixed" / "target.py").write_text(fixed + "\n")
    data = {
        "schema": 3,
        "id": "madeup-hand",
        "title": "t",
        "upstream": "u",
        "url": "https://example.invalid",
        "distribution": "madeup",
        "fixed_in": "2.0",
        "files": [
            {
                "module": "madeup.counter",
                "file": "madeup/counter.py",
                "targets": [
                    {
                        "name": name,
                        "fixed": "fixed/target.py",
                        "forms": [{"sha256": sha256(was), "verdict": "needs-patch", "releases": ["1.0"]}],
                    }
                ],
            }
        ],
    }
    import json

    (directory / "patch.json").write_text(json.dumps(data, indent=2))
    return catalog


def test_a_patch_whose_module_would_not_import_is_refused_and_nothing_is_written(wheels: Path, tmp_path: Path) -> None:
    catalog = _entry(tmp_path / "catalog", "LIMIT = int('five')", "LIMIT = 3", "LIMIT")
    venv = _venv(tmp_path, wheels)
    installed = venv.site_packages / "madeup" / "counter.py"
    done = _hfpatch(venv, "apply", catalog, "madeup-hand")
    assert done.code == 2, done.out + done.err
    assert "the patched madeup.counter fails to import here (ValueError: invalid literal for int()" in done.text
    assert "where the original imports; nothing was changed" in done.text
    assert installed.read_text() == COUNTER_10
    assert not (venv.site_packages / ".hfpatch" / "madeup-hand").exists()


def test_a_patch_of_function_bodies_alone_is_not_imported(wheels: Path, tmp_path: Path) -> None:
    """The module cannot import here (its dependency is gone), patched or not: a body-only patch says nothing of
    it; a patch of what runs at import says the check could not tell."""
    body = "def bump(x):\n    return min(x + 1, LIMIT) if x >= 0 else 0"
    catalog = _entry(tmp_path / "catalog", body, COUNTER_10.split("\n\n\n")[1].rstrip("\n"), "bump")
    venv = _venv(tmp_path, wheels)
    installed = venv.site_packages / "madeup" / "counter.py"
    installed.write_text("import not_installed_anywhere\n" + COUNTER_10)
    from support import record_line

    record = next(venv.site_packages.glob("madeup-1.0.dist-info")) / "RECORD"
    lines = [
        record_line("madeup/counter.py", installed.read_bytes()) if line.startswith("madeup/counter.py,") else line
        for line in record.read_text().splitlines()
    ]
    record.write_text("\n".join(lines) + "\n")
    done = _hfpatch(venv, "apply", catalog, "madeup-hand")
    assert (done.code, done.label("madeup-hand")) == (0, "patched"), done.out + done.err
    assert "import check" not in done.text
    assert _hfpatch(venv, "revert", catalog, "madeup-hand").code == 0
    statement = _entry(tmp_path / "other", "LIMIT = 5", "LIMIT = 3", "LIMIT")
    done = _hfpatch(venv, "apply", statement, "madeup-hand")
    assert done.code == 0, done.out + done.err
    assert "does not import here, patched or not (ModuleNotFoundError" in done.text
