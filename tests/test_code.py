"""The pure core on source text: which definition is the target, what the code is, and what the patch makes of it.

The transformers entry is exercised on files built around the golden texts; the generic machinery (methods, several
targets, inserted helpers, custom transforms) on made-up entries written to tmp_path.
"""

from __future__ import annotations

import ast
import hashlib
import json
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hfpatch import catalog, entry, statements
from hfpatch.classify import identify
from hfpatch.entry import Patch, Verdict
from hfpatch.errors import UnexpectedCode
from hfpatch.rewrite import patched

GOLDEN = Path(__file__).parent / "golden" / "transformers-46618"
BUGGY = (GOLDEN / "two-argument-resolving.py").read_text(encoding="utf-8")
FOUR_ARGUMENT = (GOLDEN / "four-argument.py").read_text(encoding="utf-8")
FIXED = (GOLDEN / "fixed.py").read_text(encoding="utf-8")
NAME = "_compute_local_source_files_hash"

HEAD = (
    '"""Dynamic modules, cut down to what surrounds the function the patch replaces."""\n'
    "\n"
    "import hashlib\n"
    "import os\n"
    "from pathlib import Path\n"
    "\n"
    "\n"
    "def get_relative_import_files(module_file):\n"
    "    return []\n"
    "\n"
    "\n"
)
TAIL = "\n\ndef get_class_in_module(class_name, module_path):\n    return None\n"
TABBED_TAIL = "\n\nclass Loader:\n\tdef load(self, path):\n\t\tif path:\n\t\t\treturn path\n\t\treturn None\n"


def module(*functions: str, head: str = HEAD, tail: str = TAIL) -> str:
    return head + "\n\n".join(functions) + tail


def nested(function: str) -> str:
    """The function defined inside another function: a local name, not the module's."""
    return f"def _wrapper():\n{textwrap.indent(function, '    ')}    return {NAME}\n"


def method(function: str) -> str:
    """The function as a method of an unrelated class."""
    return f"class _Cache:\n{textwrap.indent(function, '    ')}"


def lf(text: str) -> bytes:
    return text.encode("utf-8")


def crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("utf-8")


def bom(text: str) -> bytes:
    return b"\xef\xbb\xbf" + text.encode("utf-8")


def bom_crlf(text: str) -> bytes:
    return b"\xef\xbb\xbf" + crlf(text)


@pytest.fixture(scope="module")
def transformers_patch() -> Patch:
    return entry.load(catalog.builtin_catalog() / "transformers-46618")


# ------------------------------------------------------------------------------------------ the golden forms


@pytest.mark.parametrize(
    ("function", "version", "verdict", "says"),
    [
        pytest.param(BUGGY, "5.12.1", Verdict.NEEDS_PATCH, "is the 5.10.1 to 5.12.1 code", id="buggy"),
        pytest.param(BUGGY, None, Verdict.NEEDS_PATCH, "is the 5.10.1 to 5.12.1 code", id="buggy-no-version"),
        # The code decides over the version: a release that claims the fix but carries the bug still needs it.
        pytest.param(BUGGY, "5.13.0", Verdict.NEEDS_PATCH, "is the 5.10.1 to 5.12.1 code", id="buggy-in-5.13"),
        pytest.param(
            FOUR_ARGUMENT,
            "5.9.0",
            Verdict.NOT_APPLICABLE,
            "is the 5.8.0 to 5.9.0 code (signature (pretrained_model_name_or_path, module_file, resolved_module_file, "
            "modules_needed) where the fix has (pretrained_model_name_or_path, resolved_module_file): the fix would "
            "break its callers",
            id="four-argument",
        ),
        pytest.param(FIXED, "5.13.0", Verdict.FIXED, "is the 5.13.0 to 5.24.0 code", id="fixed"),
        pytest.param(FIXED, "5.12.1", Verdict.FIXED, "is the 5.13.0 to 5.24.0 code", id="fixed-in-5.12"),
    ],
)
def test_each_golden_form_is_identified_by_its_code(
    transformers_patch: Patch, function: str, version: str | None, verdict: Verdict, says: str
) -> None:
    found = identify(lf(module(function)), transformers_patch, transformers_patch.files[0], version)
    assert found.verdict is verdict
    assert says in found.detail


ENCODINGS = [
    pytest.param(lf, TAIL, id="lf"),
    pytest.param(crlf, TAIL, id="crlf"),
    pytest.param(bom, TAIL, id="utf8-bom"),
    pytest.param(bom_crlf, TAIL, id="utf8-bom-crlf"),
    pytest.param(lf, TABBED_TAIL, id="tabs-elsewhere"),
]


@pytest.mark.parametrize(("encode", "tail"), ENCODINGS)
def test_the_buggy_form_becomes_the_fixed_text_and_nothing_else_changes(
    transformers_patch: Patch, encode: Callable[[str], bytes], tail: str
) -> None:
    result = patched(encode(module(BUGGY, tail=tail)), transformers_patch, transformers_patch.files[0])
    assert result == encode(module(FIXED, tail=tail))
    assert identify(result, transformers_patch, transformers_patch.files[0], "5.12.1").verdict is Verdict.FIXED


def test_a_crlf_file_keeps_crlf_on_every_line_including_the_new_ones(transformers_patch: Patch) -> None:
    result = patched(crlf(module(BUGGY)), transformers_patch, transformers_patch.files[0])
    assert b"\n" not in result.replace(b"\r\n", b"")
    assert result.count(b"\r\n") == module(FIXED).count("\n")


@pytest.mark.parametrize(("encode", "tail"), ENCODINGS)
def test_already_fixed_code_is_left_alone(transformers_patch: Patch, encode: Callable[[str], bytes], tail: str) -> None:
    source = encode(module(FIXED, tail=tail))
    assert patched(source, transformers_patch, transformers_patch.files[0]) == source


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        pytest.param(
            "    model_path = Path(pretrained_model_name_or_path).resolve()\n",
            "    model_path = Path(pretrained_model_name_or_path)\n",
            "line 8 differs from the 5.10.1 to 5.12.1 code: 'model_path = Path(pretrained_model_name_or_path)'",
            id="changed-line",
        ),
        pytest.param(
            '    """\n    model_path',
            '    """\n    print("debug")\n    model_path',
            "line 8 differs from the 5.10.1 to 5.12.1 code: 'print(\"debug\")'",
            id="added-line",
        ),
        pytest.param(
            "    resolved_module_file = Path(resolved_module_file).resolve()\n",
            "",
            "lacks line 9 of the 5.10.1 to 5.12.1 code (after line 8)",
            id="removed-line",
        ),
        pytest.param(
            "    return source_files_hash.hexdigest()[:16]",
            "    return source_files_hash.hexdigest()[:16]  # shorter",
            "line 30 differs from the 5.10.1 to 5.12.1 code: 'return source_files_hash.hexdigest()[:16]  # shorter'",
            id="comment-added",
        ),
        pytest.param(
            f"def {NAME}(",
            f"@functools.cache\ndef {NAME}(",
            "line 1 differs from the 5.10.1 to 5.12.1 code: '@functools.cache'",
            id="decorated",  # decorators are part of the definition
        ),
    ],
)
def test_an_edited_function_is_unrecognised_and_the_detail_names_the_line(
    transformers_patch: Patch, old: str, new: str, says: str
) -> None:
    assert old in BUGGY
    found = identify(lf(module(BUGGY.replace(old, new))), transformers_patch, transformers_patch.files[0], "5.12.1")
    assert found.verdict is None
    assert found.detail == f"{NAME} {says}"


@pytest.mark.parametrize(
    ("source", "says"),
    [
        pytest.param(b"", "is empty", id="empty"),
        pytest.param(b" \n\t\n", "is empty", id="blank"),
        pytest.param(b"def broken(:\n    pass\n", "is not valid Python (line 1)", id="not-python"),
        pytest.param(b"x = 1\x00\n", "is not valid Python", id="nul-byte"),
        pytest.param(b"x = '\xff'\n", "is not valid UTF-8 (or its declared encoding)", id="not-utf8"),
        pytest.param(
            b"# -*- coding: klingon -*-\nx = 1\n", "is not valid UTF-8 (or its declared encoding)", id="codec"
        ),
        pytest.param(
            b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nx = 1\n",
            "is not valid UTF-8 (or its declared encoding)",
            id="bom-latin1",
        ),
    ],
)
def test_a_file_that_is_not_python_is_unexpected_code(transformers_patch: Patch, source: bytes, says: str) -> None:
    expected = f"transformers/dynamic_module_utils.py {says}"
    with pytest.raises(UnexpectedCode) as identifying:
        identify(source, transformers_patch, transformers_patch.files[0], "5.12.1")
    assert str(identifying.value) == expected
    with pytest.raises(UnexpectedCode) as rewriting:
        patched(source, transformers_patch, transformers_patch.files[0])
    assert str(rewriting.value) == expected


def test_decorators_are_part_of_the_definition() -> None:
    source = statements.parse(lf(module("@functools.cache\n@other\n" + BUGGY)), "m.py")
    found = statements.find(source, NAME)
    assert found is not None
    assert found.text == ("@functools.cache\n@other\n" + BUGGY).rstrip("\n")
    assert source.lines[found.start] == "@functools.cache\n"
    assert "".join(source.lines[found.start : found.end]) == "@functools.cache\n@other\n" + BUGGY


# --------------------------------------------------------------------------------- which definition is the target

# (source, verdict in 5.12.1, what the patch makes of it; None: it refuses)
WHICH = [
    pytest.param(
        module(nested(BUGGY), FIXED), Verdict.FIXED, module(nested(BUGGY), FIXED), id="nested-buggy-beside-fixed"
    ),
    pytest.param(
        module(nested(BUGGY), BUGGY), Verdict.NEEDS_PATCH, module(nested(BUGGY), FIXED), id="nested-buggy-beside-buggy"
    ),
    pytest.param(module(nested(BUGGY)), None, None, id="nested-only"),
    pytest.param(
        module(method(BUGGY), FIXED), Verdict.FIXED, module(method(BUGGY), FIXED), id="method-buggy-beside-fixed"
    ),
    pytest.param(
        module(method(BUGGY), BUGGY), Verdict.NEEDS_PATCH, module(method(BUGGY), FIXED), id="method-buggy-beside-buggy"
    ),
    pytest.param(module(method(BUGGY)), None, None, id="method-only"),
    # Python binds the last definition: only that one counts, and only that one is replaced.
    pytest.param(module(BUGGY, FIXED), Verdict.FIXED, module(BUGGY, FIXED), id="buggy-then-fixed"),
    pytest.param(module(FIXED, BUGGY), Verdict.NEEDS_PATCH, module(FIXED, FIXED), id="fixed-then-buggy"),
    pytest.param(module(BUGGY, BUGGY), Verdict.NEEDS_PATCH, module(BUGGY, FIXED), id="buggy-twice"),
    pytest.param(module(FOUR_ARGUMENT, BUGGY), Verdict.NEEDS_PATCH, module(FOUR_ARGUMENT, FIXED), id="four-then-buggy"),
]


@pytest.mark.parametrize(("source", "verdict", "result"), WHICH)
def test_the_target_is_the_module_level_function_python_binds(
    transformers_patch: Patch, source: str, verdict: Verdict | None, result: str | None
) -> None:
    assert identify(lf(source), transformers_patch, transformers_patch.files[0], "5.12.1").verdict is verdict
    if result is None:
        with pytest.raises(UnexpectedCode, match=f"has no {NAME}; nothing to patch"):
            patched(lf(source), transformers_patch, transformers_patch.files[0])
    else:
        assert patched(lf(source), transformers_patch, transformers_patch.files[0]) == lf(result)


# -------------------------------------------------------------------------------------------- the version rules

UNKNOWN = module(BUGGY.replace("[:16]", "[:12]"))
ABSENT = module("")


@pytest.mark.parametrize(
    ("source", "version", "verdict", "says"),
    [
        pytest.param(UNKNOWN, "5.13.0", Verdict.FIXED, "in a release that has the fix (5.13.0+)", id="unknown-5.13.0"),
        pytest.param(UNKNOWN, "5.30.1", Verdict.FIXED, "in a release that has the fix (5.13.0+)", id="unknown-later"),
        pytest.param(UNKNOWN, "5.14.0rc1", None, "line 30 differs", id="unknown-pre-release"),
        pytest.param(UNKNOWN, "5.14.0.dev0", None, "line 30 differs", id="unknown-dev-release"),
        pytest.param(UNKNOWN, "5.12.1", None, "line 30 differs", id="unknown-before-the-fix"),
        pytest.param(UNKNOWN, None, None, "line 30 differs", id="unknown-no-version"),
        pytest.param(UNKNOWN, "not a version", None, "line 30 differs", id="unknown-bad-version"),
        pytest.param(ABSENT, "5.7.0", Verdict.NOT_APPLICABLE, "as in every release before 5.8.0", id="absent-5.7.0"),
        pytest.param(ABSENT, "5.13.0", Verdict.FIXED, "gone from this release, which has the fix", id="absent-5.13"),
        pytest.param(ABSENT, "5.14.0rc1", None, "yet transformers 5.14.0rc1 should", id="absent-pre-release"),
        pytest.param(ABSENT, "5.8.0", None, "yet transformers 5.8.0 should", id="absent-5.8.0"),
        pytest.param(ABSENT, "5.10.1", None, "yet transformers 5.10.1 should", id="absent-5.10.1"),
        pytest.param(ABSENT, None, None, "yet transformers (unknown version) should", id="absent-no-version"),
    ],
)
def test_the_version_decides_only_where_the_code_is_not_a_known_form(
    transformers_patch: Patch, source: str, version: str | None, verdict: Verdict | None, says: str
) -> None:
    found = identify(lf(source), transformers_patch, transformers_patch.files[0], version)
    assert found.verdict is verdict
    assert says in found.detail


@pytest.mark.parametrize(
    ("verdict", "expected", "says"),
    [
        pytest.param("needs-patch", Verdict.NEEDS_PATCH, "the released 1.0 file", id="needs-patch"),
        pytest.param("fixed", Verdict.FIXED, "the released 1.0 file", id="fixed"),
        pytest.param("absent", Verdict.NOT_APPLICABLE, "the released 1.0 file has no greet", id="absent"),
    ],
)
def test_a_released_file_is_known_by_its_digest_without_parsing(
    tmp_path: Path, verdict: str, expected: Verdict, says: str
) -> None:
    source = b"\x00 not even Python \xff"
    greeter = write_entry(
        tmp_path, [Spec("greet", FUNCTION_FIXED, ())], file_forms=[(sha256(source), verdict, None, ["1.0"])]
    )
    found = identify(source, greeter, greeter.files[0], "1.0")
    assert (found.verdict, found.detail) == (expected, says)


# ----------------------------------------------------------------------------------- generic targets, made up

GREETER = (
    '"""A made-up module."""\n'
    "\n"
    "\n"
    "class Greeter:\n"
    '    """Greets."""\n'
    "\n"
    "    def greet(self, name):\n"
    '        return "Hello, " + name\n'
    "\n"
    "    def shout(self, name):\n"
    "        return self.greet(name).upper()\n"
    "\n"
    "\n"
    "def greet(name):\n"
    "    return Greeter().greet(name)\n"
)
METHOD_BUGGY = 'def greet(self, name):\n    return "Hello, " + name\n'
METHOD_FIXED = 'def greet(self, name):\n    if name is None:\n        name = "world"\n    return "Hello, " + name\n'
METHOD_FIXED_SPACED = METHOD_FIXED.replace("\n    return", "\n\n    return")  # a blank line inside
METHOD_WITH_HELPER = 'def greet(self, name):\n    return "Hello, " + (self._default() if name is None else name)\n'
METHOD_HELPER = 'def _default(self):\n    return "world"\n'
STATIC_BUGGY = '@staticmethod\ndef greet(name):\n    return "Hello, " + name\n'
STATIC_FIXED = (
    '@staticmethod\ndef greet(name):\n    if name is None:\n        name = "world"\n    return "Hello, " + name\n'
)
SHOUT_BUGGY = "def shout(self, name):\n    return self.greet(name).upper()\n"
SHOUT_FIXED = 'def shout(self, name):\n    return self.greet(name).upper() + "!"\n'
FUNCTION_BUGGY = "def greet(name):\n    return Greeter().greet(name)\n"
FUNCTION_FIXED = 'def greet(name):\n    return Greeter().greet("world" if name is None else name)\n'
FUNCTION_WITH_HELPER = "def greet(name):\n    return Greeter().greet(_default_name(name))\n"
FUNCTION_WITH_INNER = (
    'def greet(name):\n    def greet(who):\n        return "Hello, " + who\n\n    return greet(name)\n'
)
FUNCTION_WITH_INNER_FIXED = FUNCTION_WITH_INNER.replace("greet(name)\n", 'greet("world" if name is None else name)\n')
FUNCTION_HELPER = 'def _default_name(name):\n    return "world" if name is None else name\n'


@dataclass(frozen=True)
class Spec:
    """A made-up target: its name, fixed text, and known forms as (text, verdict)."""

    name: str
    fixed: str
    forms: tuple[tuple[str, str], ...]
    insert_if_absent: bool = False


def sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def write_entry(
    catalog_dir: Path,
    targets: Sequence[Spec],
    *,
    transform: str | None = None,
    file_forms: Sequence[tuple[str, str, str | None, list[str]]] = (),
) -> Patch:
    """A catalog entry on disk, its digests taken with hashlib of the texts, loaded as hfpatch loads one."""
    directory = catalog_dir / "greeter-1"
    (directory / "fixed").mkdir(parents=True)
    data: dict[str, Any] = {
        "schema": 2,
        "id": "greeter-1",
        "title": "greet(None) fails",
        "upstream": "example/greeter#1",
        "url": "https://example.invalid/greeter/pull/1",
        "distribution": "greeter",
        "module": "greeter.core",
        "file": "greeter/core.py",
        "fixed_in": "2.0",
        "first_defined_in": "0.5",
        "targets": [],
        "known_files": [],
    }
    if transform is not None:
        (directory / "transform.py").write_text(transform, encoding="utf-8")
        data["transform"] = "transform.py"
    for index, target in enumerate(targets):
        fixed = f"fixed/{index}-{target.name}.py"
        (directory / fixed).write_text(target.fixed, encoding="utf-8")
        forms = [{"sha256": sha256(text.rstrip("\n")), "verdict": verdict} for text, verdict in target.forms]
        data["targets"].append({"name": target.name, "fixed": fixed, "forms": forms})
        if target.insert_if_absent:
            data["targets"][-1]["insert_if_absent"] = True
    for digest, verdict, patched_digest, releases in file_forms:
        known = {"sha256": digest, "verdict": verdict, "releases": releases}
        if patched_digest is not None:
            known["patched_sha256"] = patched_digest
        data["known_files"].append(known)
    (directory / "patch.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return entry.load(directory)


def tabbed(text: str) -> str:
    """The text with each leading four spaces as a tab."""
    return "\n".join(_tab_line(line) for line in text.split("\n"))


def _tab_line(line: str) -> str:
    stripped = line.lstrip(" ")
    return "\t" * ((len(line) - len(stripped)) // 4) + stripped


def in_class(text: str, indent: str = "    ") -> str:
    return textwrap.indent(text, indent)


TRANSFORM = '''\
"""Adds the None guard to the function it is given, and keeps what it was given beside itself."""
from pathlib import Path

import libcst

GUARD = libcst.parse_statement('if name is None:\\n    name = "world"\\n')


def transform(module: libcst.Module, name: str) -> libcst.Module:
    Path(__file__).with_name("received.txt").write_text(f"{name}\\n{module.code}", encoding="utf-8")
    body = []
    for statement in module.body:
        if isinstance(statement, libcst.FunctionDef) and statement.name.value == name.rsplit(".", 1)[-1]:
            block = statement.body
            statement = statement.with_changes(body=block.with_changes(body=[GUARD, *block.body]))
        body.append(statement)
    return module.with_changes(body=body)
'''

WRONG_TRANSFORM = """\
import libcst


def transform(module: libcst.Module, name: str) -> libcst.Module:
    return libcst.parse_module(module.code.replace("Hello", "Goodbye"))
"""

GENERIC = [
    pytest.param(
        GREETER,
        [Spec("Greeter.greet", METHOD_FIXED, ((METHOD_BUGGY, "needs-patch"),))],
        None,
        GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_FIXED)),
        id="method",
    ),
    pytest.param(
        tabbed(GREETER),
        [Spec("Greeter.greet", METHOD_FIXED, ((tabbed(METHOD_BUGGY), "needs-patch"),))],
        None,
        # Only the def line's indentation is the definition's place; the fixed text keeps its own inside it.
        tabbed(GREETER).replace(tabbed(in_class(METHOD_BUGGY)), in_class(METHOD_FIXED, "\t")),
        id="method-of-a-tab-indented-class",
    ),
    pytest.param(
        GREETER,
        [Spec("Greeter.greet", METHOD_FIXED_SPACED, ((METHOD_BUGGY, "needs-patch"),))],
        None,
        # Placed at the method's indentation, a blank line stays empty: the file is upstream's byte for byte.
        GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_FIXED_SPACED)),
        id="method-fix-with-a-blank-line",
    ),
    pytest.param(
        GREETER.replace(in_class(METHOD_BUGGY), in_class(STATIC_BUGGY)),
        [Spec("Greeter.greet", STATIC_FIXED, ((STATIC_BUGGY, "needs-patch"),))],
        None,
        GREETER.replace(in_class(METHOD_BUGGY), in_class(STATIC_FIXED)),
        id="decorated-method",  # the decorator is part of the definition, in its form and in its fixed text
    ),
    pytest.param(
        GREETER,
        [
            Spec("Greeter.greet", METHOD_FIXED, ((METHOD_BUGGY, "needs-patch"),)),
            Spec("Greeter.shout", SHOUT_FIXED, ((SHOUT_BUGGY, "needs-patch"),)),
        ],
        None,
        GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_FIXED)).replace(
            in_class(SHOUT_BUGGY), in_class(SHOUT_FIXED)
        ),
        id="two-methods",
    ),
    pytest.param(
        GREETER,
        [
            Spec("greet", FUNCTION_FIXED, ((FUNCTION_BUGGY, "needs-patch"),)),
            Spec("Greeter.shout", SHOUT_FIXED, ((SHOUT_BUGGY, "needs-patch"),)),
        ],
        None,
        GREETER.replace(FUNCTION_BUGGY, FUNCTION_FIXED).replace(in_class(SHOUT_BUGGY), in_class(SHOUT_FIXED)),
        id="a-function-and-a-method",
    ),
    pytest.param(
        GREETER.replace(FUNCTION_BUGGY, FUNCTION_WITH_INNER),
        [Spec("greet", FUNCTION_WITH_INNER_FIXED, ((FUNCTION_WITH_INNER, "needs-patch"),))],
        None,
        GREETER.replace(FUNCTION_BUGGY, FUNCTION_WITH_INNER_FIXED),
        id="a-function-with-an-inner-function-of-its-name",  # only the outer one is the definition replaced
    ),
    pytest.param(
        GREETER,
        [
            Spec("_default_name", FUNCTION_HELPER, (), insert_if_absent=True),
            Spec("greet", FUNCTION_WITH_HELPER, ((FUNCTION_BUGGY, "needs-patch"),)),
        ],
        None,
        GREETER.replace(FUNCTION_BUGGY, FUNCTION_HELPER + "\n\n" + FUNCTION_WITH_HELPER),  # two blank lines
        id="module-level-helper-inserted",
    ),
    pytest.param(
        GREETER,
        [
            Spec("Greeter._default", METHOD_HELPER, (), insert_if_absent=True),
            Spec("Greeter.greet", METHOD_WITH_HELPER, ((METHOD_BUGGY, "needs-patch"),)),
        ],
        None,
        GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_HELPER + "\n" + METHOD_WITH_HELPER)),  # one
        id="method-helper-inserted",
    ),
    pytest.param(
        tabbed(GREETER),
        [
            Spec("Greeter._default", METHOD_HELPER, (), insert_if_absent=True),
            Spec("Greeter.greet", METHOD_WITH_HELPER, ((tabbed(METHOD_BUGGY), "needs-patch"),)),
        ],
        None,
        tabbed(GREETER).replace(
            tabbed(in_class(METHOD_BUGGY)), in_class(METHOD_HELPER + "\n" + METHOD_WITH_HELPER, "\t")
        ),
        id="method-helper-inserted-in-a-tab-indented-class",
    ),
    pytest.param(
        GREETER,
        [Spec("Greeter.greet", METHOD_FIXED, ((METHOD_BUGGY, "needs-patch"),))],
        TRANSFORM,
        GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_FIXED)),
        id="custom-transform",
    ),
    pytest.param(
        tabbed(GREETER),
        [Spec("Greeter.greet", tabbed(METHOD_FIXED), ((tabbed(METHOD_BUGGY), "needs-patch"),))],
        TRANSFORM,
        tabbed(GREETER).replace(tabbed(in_class(METHOD_BUGGY)), in_class(tabbed(METHOD_FIXED), "\t")),
        id="custom-transform-in-a-tab-indented-class",
    ),
]


@pytest.mark.parametrize(("source", "targets", "transform", "result"), GENERIC)
def test_a_made_up_entry_patches_each_target_and_nothing_else(
    tmp_path: Path, source: str, targets: list[Spec], transform: str | None, result: str
) -> None:
    assert result != source
    greeter = write_entry(tmp_path, targets, transform=transform)
    assert identify(lf(source), greeter, greeter.files[0], "1.0").verdict is Verdict.NEEDS_PATCH
    after = patched(lf(source), greeter, greeter.files[0])
    assert after == lf(result)
    assert identify(after, greeter, greeter.files[0], "1.0").verdict is Verdict.FIXED
    assert patched(after, greeter, greeter.files[0]) == after
    assert greet_of(after)(None) == "Hello, world"
    assert patched(crlf(source), greeter, greeter.files[0]) == crlf(result)


def greet_of(code: bytes) -> Callable[[str | None], str]:
    """The module's greet(), from running the code: the result must be Python that works, not only text."""
    namespace: dict[str, Callable[[str | None], str]] = {}
    exec(compile(code, "greeter/core.py", "exec"), namespace)
    return namespace["greet"]


def test_the_buggy_made_up_module_fails_as_the_bug_says() -> None:
    with pytest.raises(TypeError):
        greet_of(lf(GREETER))(None)


def test_a_custom_transform_receives_the_dedented_definition_as_its_own_module(tmp_path: Path) -> None:
    greeter = write_entry(
        tmp_path,
        [Spec("Greeter.greet", tabbed(METHOD_FIXED), ((tabbed(METHOD_BUGGY), "needs-patch"),))],
        transform=TRANSFORM,
    )
    patched(lf(tabbed(GREETER)), greeter, greeter.files[0])
    received = (tmp_path / "greeter-1" / "received.txt").read_text(encoding="utf-8")
    assert received == "Greeter.greet\n" + tabbed(METHOD_BUGGY)


@pytest.mark.parametrize(
    ("source", "targets", "transform", "says"),
    [
        pytest.param(
            GREETER,
            [Spec("Greeter.greet", METHOD_FIXED, ((METHOD_BUGGY, "needs-patch"),))],
            WRONG_TRANSFORM,
            "the transform did not produce the fixed Greeter.greet; this is a bug in the catalog entry greeter-1",
            id="transform-result-not-the-fixed-text",
        ),
        pytest.param(
            GREETER,
            [Spec("Greeter.greet", "GREETING = 'Hello'\n", ((METHOD_BUGGY, "needs-patch"),))],
            None,
            "the fixed text of Greeter.greet is not a function definition",
            id="fixed-text-not-a-function",
        ),
        pytest.param(
            GREETER,
            [Spec("Greeter.wave", METHOD_FIXED, ())],
            None,
            "greeter/core.py has no Greeter.wave; nothing to patch",
            id="target-absent",
        ),
        pytest.param(
            GREETER,
            [
                Spec("Greeter.greet", METHOD_WITH_HELPER, ((METHOD_BUGGY, "needs-patch"),)),
                Spec("Greeter._default", METHOD_HELPER, (), insert_if_absent=True),
            ],
            None,
            "Greeter._default is absent and no later target of its scope says where it goes",
            id="helper-with-no-later-target",
        ),
        pytest.param(
            GREETER,
            [
                Spec("_default", METHOD_HELPER, (), insert_if_absent=True),
                Spec("Greeter.greet", METHOD_WITH_HELPER, ((METHOD_BUGGY, "needs-patch"),)),
            ],
            None,
            "_default is absent and no later target of its scope says where it goes",
            id="helper-whose-later-target-is-in-another-scope",
        ),
    ],
)
def test_a_patch_that_cannot_come_out_exactly_fixed_returns_nothing(
    tmp_path: Path, source: str, targets: list[Spec], transform: str | None, says: str
) -> None:
    greeter = write_entry(tmp_path, targets, transform=transform)
    with pytest.raises(UnexpectedCode) as raised:
        patched(lf(source), greeter, greeter.files[0])
    assert str(raised.value).startswith(says)


def test_a_known_file_must_become_the_file_the_catalog_records(tmp_path: Path) -> None:
    source = lf(GREETER)
    result = lf(GREETER.replace(in_class(METHOD_BUGGY), in_class(METHOD_FIXED)))
    targets = [Spec("Greeter.greet", METHOD_FIXED, ((METHOD_BUGGY, "needs-patch"),))]
    right = write_entry(tmp_path / "right", targets, file_forms=[(sha256(source), "needs-patch", sha256(result), [])])
    assert patched(source, right, right.files[0]) == result
    wrong = write_entry(tmp_path / "wrong", targets, file_forms=[(sha256(source), "needs-patch", "0" * 64, [])])
    with pytest.raises(UnexpectedCode, match=r"the patched file would differ from upstream's 2\.0 file"):
        patched(source, wrong, wrong.files[0])


@pytest.mark.parametrize(
    ("version", "floor"),
    [
        ("5.12.1", "5.13.0"),
        ("5.13.0", "5.13.0"),
        ("5.13", "5.13.0"),
        ("5.13.0.0", "5.13"),
        ("10.0", "9.99.99"),
        ("05.1", "5.1"),
        ("4.46.3", "4.52.1"),
        ("5.13.0rc1", "5.13.0"),
        ("5.13.0.dev0", "5.12.1"),
        ("5.13.0.post1", "5.13.0"),
        ("1!1.0", "2.0"),
        ("5.12.1+local", "5.12.1"),
        ("not a version", "1.0"),
    ],
)
def test_versions_compare_as_pep_440_compares_them(version: str, floor: str) -> None:
    """Plain releases are compared without packaging (not on check's path); every answer is packaging's."""
    from packaging.version import InvalidVersion, Version

    from hfpatch import versions

    try:
        parsed: Version | None = Version(version)
    except InvalidVersion:
        parsed = None
    below = Version(floor)
    assert versions.is_at_least(version, floor) is (parsed is not None and parsed >= below)
    assert versions.is_older(version, floor) is (parsed is not None and parsed < below)
    final = parsed is not None and not parsed.is_prerelease
    assert versions.is_final_at_least(version, floor) is (final and parsed is not None and parsed >= below)
    if parsed is not None:
        assert versions.is_at_least(floor, version) is (below >= parsed)


@pytest.mark.parametrize(
    "text",
    [
        *("4.57.6", "5.0.0rc3", "5", "05.1", "v1.0", "1.0-RC1", "1!2.0", "1.0.post1", "1.0.dev0", "1.0+local.7"),
        *("", "1.", ".1", "1..0", "1.0rc", "one", "1.0+", "5.0.0rc3x"),
    ],
)
def test_a_version_is_one_as_packaging_reads_one(text: str) -> None:
    """versions.is_version, whether or not the text is simply spelt, agrees with packaging (which also takes
    surrounding spaces: an entry's version may not have them)."""
    from packaging.version import InvalidVersion, Version

    from hfpatch import versions

    try:
        Version(text)
        valid = True
    except InvalidVersion:
        valid = False
    assert versions.is_version(text) is valid
    assert not versions.is_version(f" {text}")


SIMPLY_SPELT = ["4.57.6", "4.57.6.0", "5", "5.0.0a1", "5.0.0a2", "5.0.0b1", "5.0.0rc1", "5.0.0rc3", "5.0.0", "5.0.1"]


@pytest.mark.parametrize("left", [*SIMPLY_SPELT, "05.0.0rc10"])
def test_a_simply_spelt_release_orders_as_packaging_orders_it(left: str) -> None:
    """advisory.within compares such releases without packaging; every order is packaging's."""
    from packaging.version import Version

    from hfpatch import versions

    for right in SIMPLY_SPELT:
        key, other = versions.simple_key(left), versions.simple_key(right)
        assert key is not None and other is not None
        assert (key < other, key == other) == (Version(left) < Version(right), Version(left) == Version(right))
    assert [versions.simple_key(text) for text in ("5.0.0-rc1", "5.0.0c1", "5.0.0.post1", "1!5.0", None)] == [None] * 5


@pytest.mark.parametrize(
    ("after", "changes"),
    [
        pytest.param("def f(x=1):\n    return 2\n\nLIMIT = f()\n\ndef g():\n    return 3\n", False, id="unchanged"),
        pytest.param("def f(x=1):\n    return 2\n\nLIMIT = f()\n\ndef g():\n    return 4\n", False, id="a-body"),
        pytest.param("def f(x=1):\n    return 2\n\nLIMIT = (f())\n\ndef g():\n    return 3\n", False, id="spacing"),
        pytest.param("def f(x=2):\n    return 2\n\nLIMIT = f()\n\ndef g():\n    return 3\n", True, id="a-default"),
        pytest.param("def f(x=1):\n    return 5\n\nLIMIT = f()\n\ndef g():\n    return 3\n", True, id="called"),
        pytest.param("def f(x=1):\n    return 2\n\nLIMIT = g()\n\ndef g():\n    return 3\n", True, id="a-statement"),
        pytest.param(
            "def f(x=1):\n    return 2\n\nLIMIT = f()\n\n@staticmethod\ndef g():\n    return 3\n", True, id="decorated"
        ),
    ],
)
def test_what_runs_at_import_is_told_from_the_code(after: str, changes: bool) -> None:
    """apply imports a patched module first only where the patch changes what runs when it is imported."""
    from hfpatch.importcheck import changes_what_runs_at_import

    before = b"def f(x=1):\n    return 2\n\nLIMIT = f()\n\ndef g():\n    return 3\n"
    assert changes_what_runs_at_import(before, after.encode(), "m.py") is changes


_NESTED = (
    "import os\n\nif os.name:\n    def f():\n        return 1\nelse:\n    def f():\n        return 2\n\n"
    "try:\n    import json\nexcept ImportError:\n    def g():\n        return 3\n\n"
    "class C:\n    LIMIT = 1\n\n    def m(self, x=1):\n        return 4\n\n    KEY = h()\n"
)


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        pytest.param(("return 1", "return 9"), False, id="a-body-in-an-if"),
        pytest.param(("return 2", "return 9"), False, id="a-body-in-an-else"),
        pytest.param(("return 3", "return 9"), False, id="a-body-in-an-except-clause"),
        pytest.param(("return 4", "return 9"), False, id="a-method-body"),
        pytest.param(("LIMIT = 1", "LIMIT = 2"), True, id="a-class-statement"),
        pytest.param(("x=1", "x=2"), True, id="a-method-default"),
        pytest.param(("import json", "import json, re"), True, id="a-statement-in-a-try"),
        pytest.param(("    def g():\n", "    def g(a=f()):\n"), True, id="a-default-in-an-except-clause"),
        pytest.param(("import os\n", "import os\nimport re\n"), True, id="a-statement-added"),
        pytest.param(("KEY = h()\n", "KEY = h()\n\n    def h(self):\n        return 5\n"), True, id="a-method-added"),
    ],
)
def test_what_runs_at_import_inside_blocks_and_classes(edit: tuple[str, str], changes: bool) -> None:
    """A function's body is left out wherever the function stands (an if, an except clause, a class); every other
    statement there is what runs at import. The parsed original is shared, never changed by the comparison."""
    from hfpatch import statements
    from hfpatch.importcheck import changes_what_runs_at_import

    before = _NESTED.encode()
    after = _NESTED.replace(*edit).encode()
    assert after != before
    parsed = statements.parse(before, "m.py")
    shown = ast.dump(parsed.tree)
    assert changes_what_runs_at_import(before, after, "m.py") is changes
    assert ast.dump(statements.parse(before, "m.py").tree) == shown
