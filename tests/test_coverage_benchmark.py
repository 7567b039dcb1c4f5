"""The pure core of benchmarks/coverage.py: what it counts as changed, what it asks `hfpatch new` for, its verdicts.

The benchmark itself runs hfpatch on real releases (`nox -s coverage`); these cases pin the judgements it makes, so
that a figure it prints means what its docstring says.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "coverage.py"
    spec = importlib.util.spec_from_file_location("coverage_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


cov = _load()

OLD = """import os

LIMIT = 3


def total(values):
    return sum(values)


class Basket:
    size = 1

    def add(self, item):
        self.items.append(item)

    @property
    def count(self):
        return len(self.items)

    @count.setter
    def count(self, value):
        pass
"""


def test_the_split_is_every_third_pair_in_order() -> None:
    assert cov.split_follows_the_rule(cov.PAIRS)
    held_out = [pair for pair in cov.PAIRS if pair.split is cov.Split.HELD_OUT]
    assert len(held_out) == len(cov.PAIRS) // 3


@pytest.mark.parametrize(
    ("new", "targets"),
    [
        pytest.param(OLD, [], id="unchanged"),
        pytest.param(OLD.replace("sum(values)", "sum(values, 0)"), ["total"], id="function-body"),
        pytest.param(OLD.replace("append(item)", "append(item)  # why"), ["Basket.add"], id="method-comment"),
        pytest.param(OLD + "\n\ndef helper():\n    pass\n", ["helper"], id="added-function"),
        pytest.param(OLD.replace("LIMIT = 3", "LIMIT = 4"), [], id="constant-only"),
        # Python binds the setter to the name: that is the definition a target can name.
        pytest.param(OLD.replace("        pass", "        self.n = value"), ["Basket.count"], id="setter"),
        pytest.param(OLD.replace("len(self.items)", "len(self.items) + 0"), [], id="getter-shadowed"),
    ],
)
def test_targets_for(new: str, targets: list[str]) -> None:
    assert cov.targets_for(OLD, new) == targets


def test_statement_units_are_hfpatch_s_and_split_a_class_into_header_and_body() -> None:
    """The units are hfpatch.statements' (the keys `new`'s targets name), a class by its header alone."""
    units = cov.statement_units(OLD)
    assert [(unit.key, unit.kind, cov.in_a_class(unit)) for unit in units] == [
        ("import os", "import", False),
        ("LIMIT", "variable", False),
        ("total", "function", False),
        ("Basket", "class", False),
        ("Basket.size", "variable", True),
        ("Basket.add", "function", True),
        ("Basket.count#1", "function", True),
        ("Basket.count", "function", True),
    ]
    assert units[3].text == "class Basket:"


def test_units_differing_counts_a_changed_statement_once() -> None:
    old = cov.statement_units(OLD)
    new = cov.statement_units(OLD.replace("LIMIT = 3", "LIMIT = 4").replace("size = 1", "size = 2"))
    assert [(unit.key, unit.text) for unit in cov.units_differing(old, new)] == [
        ("LIMIT", "LIMIT = 4"),
        ("Basket.size", "    size = 2"),
    ]


@pytest.mark.parametrize(
    ("old", "new", "bump"),
    [
        pytest.param(b'__version__ = "4.53.1"\n', b'__version__ = "4.53.2"\n', True, id="version"),
        pytest.param(b'V = "1.0"\nX = 1\n', b'V = "1.1"\nX = 2\n', False, id="and-code"),
        pytest.param(b'X = "a"\n', b'X = "b"\n', False, id="other-string"),
        pytest.param(b'V = "1.0"\n', b'V = "1.0"  # note\n', False, id="comment"),
    ],
)
def test_is_version_bump(old: bytes, new: bytes, bump: bool) -> None:
    assert cov.is_version_bump(old, new) is bump


def test_classify_files() -> None:
    old = {"pkg/models/a/m.py": b"x = 1\n", "pkg/gone.py": b"", "pkg/v.py": b'V = "1.0"\n', "pkg/same.py": b""}
    new = {
        "pkg/models/a/m.py": b"x = 2\n",
        "pkg/models/a/extra.py": b"",
        "pkg/models/b/m.py": b"",
        "pkg/v.py": b'V = "1.1"\n',
        "pkg/same.py": b"",
    }
    assert cov.classify_files(old, new) == {
        "pkg/gone.py": cov.FileKind.DELETED,
        "pkg/models/a/extra.py": cov.FileKind.ADDED,
        "pkg/models/a/m.py": cov.FileKind.CHANGED,
        "pkg/models/b/m.py": cov.FileKind.ADDED_MODEL,
        "pkg/v.py": cov.FileKind.VERSION_BUMP,
    }


FIXED = OLD.replace("sum(values)", "sum(values, 0)").replace("LIMIT = 3", "LIMIT = 4")
PATCHED = OLD.replace("sum(values)", "sum(values, 0)")


@pytest.mark.parametrize(
    ("observed", "verdict"),
    [
        pytest.param(dict(new_exit=2), "refused", id="new-refused"),
        pytest.param(dict(apply_exit=2), "refused", id="apply-refused"),
        pytest.param(dict(apply_exit=2, restored=False), "WRONG", id="apply-refused-bytes-lost"),
        pytest.param(dict(patched=FIXED), "fully-backported", id="full"),
        pytest.param(dict(), "partial", id="constant-not-carried"),
        pytest.param(dict(imports_after=False), "WRONG", id="import-broken"),
        pytest.param(dict(imports_before=False, imports_after=False), "partial", id="never-imported"),
        pytest.param(dict(patched=OLD), "WRONG", id="claimed-not-carried"),
        pytest.param(dict(patched=FIXED, restored=False), "WRONG", id="revert-lost-bytes"),
        pytest.param(dict(patched=FIXED, check_after_revert="incomplete"), "partial", id="check-unclean"),
    ],
)
def test_measure(observed: dict[str, object], verdict: str) -> None:
    base: dict[str, object] = dict(
        new_exit=0,
        claimed=("total",),
        apply_exit=0,
        patched=PATCHED,
        imports_before=True,
        imports_after=True,
        restored=True,
        check_after_apply="applied",
        check_after_revert="needs-patch",
    )
    measured = cov.measure(cov.Observed(**{**base, **observed}), FIXED, [cov.Reason.NEEDS_IMPORT])
    assert measured.carried.value == verdict


CONTEXT = dict(old="1.0", old_classes=frozenset({"Basket"}), imported_from={"helper": "pkg.util"})


@pytest.mark.parametrize(
    ("stderr", "pair_modules", "reasons"),
    [
        pytest.param(
            "uses helper, which 1.0 lacks; it is an import in 1.1, which hfpatch new cannot insert",
            frozenset(),
            ["needs an import"],
            id="import",
        ),
        pytest.param(
            "uses helper, which 1.0 lacks; it is an import in 1.1, which hfpatch new cannot insert",
            frozenset({"pkg.util"}),
            ["multi-file"],
            id="import-from-a-changed-file",
        ),
        pytest.param(
            "uses LIMIT, which 1.0 lacks; it is a variable in 1.1, which hfpatch new cannot insert",
            frozenset(),
            ["needs a constant/statement"],
            id="variable",
        ),
        pytest.param(
            "uses np, which 1.0 lacks; the 1.1 module does not bind it either (a builtin of a newer Python?)",
            frozenset(),
            ["name missing"],
            id="unbound",
        ),
    ],
)
def test_refusal_reasons(stderr: str, pair_modules: frozenset[str], reasons: list[str]) -> None:
    context = cov.Context(**CONTEXT, pair_modules=pair_modules)
    assert [reason.value for reason in cov.refusal_reasons("", stderr, ["total"], context)] == reasons


def test_a_refusal_for_a_signature_is_read_off_the_older_release_row() -> None:
    stdout = "release  form  verdict  reason\n1.0  A  not-applicable  signature (a) where the fix has (a, b)\n"
    context = cov.Context(**CONTEXT, pair_modules=frozenset())
    stderr = "hfpatch: error: no release read needs the patch: each has the fix"
    assert cov.refusal_reasons(stdout, stderr, ["total"], context) == [cov.Reason.SIGNATURE]


def test_a_refusal_where_every_target_is_new() -> None:
    stdout = "release  form  verdict  reason\n1.0  -  absent  helper not defined\n1.1  fix  fixed  identical\n"
    context = cov.Context(**CONTEXT, pair_modules=frozenset())
    stderr = "hfpatch: error: no release read needs the patch: each has the fix"
    assert cov.refusal_reasons(stdout, stderr, ["helper"], context) == [cov.Reason.ONLY_NEW]


def test_a_module_level_target_is_judged_by_its_statement() -> None:
    observed = cov.Observed(
        new_exit=0,
        claimed=("LIMIT", "from os import", "Basket.count#1"),
        apply_exit=0,
        patched=PATCHED,  # LIMIT = 3 where the fix has 4
        imports_before=True,
        imports_after=True,
        restored=True,
        check_after_apply="applied",
        check_after_revert="needs-patch",
    )
    measured = cov.measure(observed, FIXED)
    assert measured.carried is cov.Carried.WRONG
    assert measured.wrong == ("LIMIT, which the entry carries, differs from the newer release's after apply",)


def test_bound_texts_names_module_and_class_statements() -> None:
    texts = cov.bound_texts(OLD)
    assert texts["LIMIT"] == "LIMIT = 3"
    assert texts["Basket.size"] == "size = 1"
    assert texts["Basket.count"].startswith("@count.setter")  # the last binding, as Python binds it
    assert "os" in texts and "Basket" in texts


# A helper that util changes, a caller of it, a file that imports an unchanged name of util, and one that reaches the
# helper through the package's re-export.
GROUP_OLD = {
    "pkg/__init__.py": b"from .util import helper, other\n",
    "pkg/util.py": b"def helper(a):\n    return a\n\n\ndef other():\n    pass\n\n\nX = 1\n",
    "pkg/caller.py": b"from .util import helper\n\nhelper(1)\n",
    "pkg/bystander.py": b"from .util import other\n\nY = 1\n",
    "pkg/via.py": b"def f():\n    from pkg import helper\n    return helper(1)\n",
}
GROUP_NEW = {
    **GROUP_OLD,
    "pkg/util.py": b"def helper(a, b=0):\n    return a + b\n\n\ndef other():\n    pass\n\n\nX = 2\n",
    "pkg/caller.py": b"from .util import helper\n\nhelper(1, b=2)\n",
    "pkg/bystander.py": b"from .util import other\n\nY = 2\n",
    "pkg/via.py": b"def f():\n    from pkg import helper\n    return helper(1, 2)\n",
}


def test_patch_groups_put_a_changed_helper_with_its_changed_callers() -> None:
    changed = ["pkg/bystander.py", "pkg/caller.py", "pkg/util.py", "pkg/via.py"]
    groups = cov.patch_groups(changed, cov.Wheels(GROUP_OLD, GROUP_NEW), GROUP_NEW)
    assert groups == [("pkg/bystander.py",), ("pkg/caller.py", "pkg/util.py", "pkg/via.py")]


def test_apply_refusal_reason() -> None:
    refused = "refused: the patched pkg.a fails to import here (ModuleNotFoundError: No module named 'pkg.new')"
    assert cov.apply_refusal_reason(refused, frozenset({"pkg.new"})) is cov.Reason.ADDED_FILE
    assert cov.apply_refusal_reason(refused, frozenset()) is cov.Reason.APPLY_IMPORT
    assert cov.apply_refusal_reason("refused: unknown code", frozenset()) is cov.Reason.APPLY_REFUSED


@pytest.mark.parametrize(
    ("stderr", "reasons"),
    [
        pytest.param(
            "not safe to backport as it stands:\n  - the fix of f calls g from pkg/util.py, which here is (a) where "
            "pkg 1.1 has (a, b); carry that module too (--target DIST:pkg.util)",
            ["calls into a module it does not carry"],
            id="callee-changed",
        ),
        pytest.param(
            "not safe to backport as it stands:\n  - the fix takes away LIMIT, which the rest of this release's "
            "pkg/a.py still uses",
            ["takes away a name still used"],
            id="takes-away",
        ),
        pytest.param(
            "the fix of f uses np, which 1.0 lacks; the pkg 1.1 module does not bind it either (a builtin?)",
            ["name missing"],
            id="unbound-named-with-its-release",
        ),
    ],
)
def test_refusal_reasons_of_hfpatch_0_3(stderr: str, reasons: list[str]) -> None:
    context = cov.Context(**CONTEXT, pair_modules=frozenset())
    assert [reason.value for reason in cov.refusal_reasons("", stderr, ["f"], context)] == reasons
