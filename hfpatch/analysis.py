"""The pure core: what installed code is, and what it must become. Bytes in, verdicts and bytes out; no disk."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from hfpatch.catalog import KnownForm, Patch, Verdict
from hfpatch.errors import UnexpectedCode

if TYPE_CHECKING:
    import libcst


@dataclass(frozen=True)
class Identification:
    verdict: Verdict
    form: KnownForm | None
    # One sentence on how the verdict was reached (for unrecognised code: what differs).
    detail: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def line_digest(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:12]


def function_fingerprint(function_source: str) -> tuple[str, tuple[str, ...]]:
    """The digest of a function's exact source and of each of its lines."""
    lines = function_source.split("\n")
    return sha256(function_source.encode("utf-8")), tuple(line_digest(line) for line in lines)


def identify(source: bytes, patch: Patch, version: str | None) -> Identification:
    """Classify the installed file by its code; the version only decides where the code is not one we know."""
    digest = sha256(source)
    if digest in patch.known_files:
        form_name = patch.known_files[digest]
        if form_name is None:
            return Identification(Verdict.NOT_APPLICABLE, None, f"{patch.function} does not exist in this release")
        form = patch.form(form_name)
        return Identification(form.verdict, form, f"the file is the released {form.releases} file")
    module = parse(source, patch)
    function = find_function(module, patch.function)
    if function is None:
        return _absent(patch, version)
    text = function_source(module, function)
    function_digest, lines = function_fingerprint(text)
    for form in patch.forms:
        if form.function_sha256 == function_digest:
            return Identification(form.verdict, form, f"{patch.function} is the {form.releases} code")
    return _unrecognised(patch, version, text, lines)


def parse(source: bytes, patch: Patch) -> libcst.Module:
    import libcst

    if not source.strip():
        raise UnexpectedCode(f"{patch.target} is empty; reinstall {patch.distribution}.")
    try:
        return libcst.parse_module(source)
    except (libcst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UnexpectedCode(
            f"{patch.target} is not valid Python ({first_line}); reinstall {patch.distribution}."
        ) from None


def find_function(module: libcst.Module, name: str) -> libcst.FunctionDef | None:
    import libcst

    found = None
    for statement in module.body:
        if isinstance(statement, libcst.FunctionDef) and statement.name.value == name:
            found = statement  # the last definition is the one Python binds
    return found


def function_source(module: libcst.Module, function: libcst.FunctionDef) -> str:
    code = module.code_for_node(function.with_changes(leading_lines=()))
    return code.replace("\r\n", "\n").rstrip("\n")


def _absent(patch: Patch, version: str | None) -> Identification:
    parsed = _version(version)
    if parsed is not None and parsed < Version(patch.introduced_in):
        return Identification(
            Verdict.NOT_APPLICABLE, None, f"{patch.function} is absent, as in every release before {patch.introduced_in}"
        )
    if parsed is not None and parsed >= Version(patch.fixed_in):
        return Identification(
            Verdict.FIXED, None, f"{patch.function} is gone from this release, which is {patch.fixed_in} or newer"
        )
    return Identification(
        Verdict.UNRECOGNISED,
        None,
        f"{patch.target} has no {patch.function}, yet {patch.distribution} {version or '(unknown version)'} should define it",
    )


def _unrecognised(patch: Patch, version: str | None, text: str, lines: tuple[str, ...]) -> Identification:
    parsed = _version(version)
    if parsed is not None and parsed >= Version(patch.fixed_in) and not parsed.is_prerelease:
        return Identification(
            Verdict.FIXED,
            None,
            f"{patch.function} differs from every known form, and this release is {patch.fixed_in} or newer, "
            "which has the fix",
        )
    return Identification(Verdict.UNRECOGNISED, None, _what_differs(patch, text, lines))


def _what_differs(patch: Patch, text: str, lines: tuple[str, ...]) -> str:
    """Point at the first line where the function leaves the known form it is closest to."""
    candidates = [form for form in patch.forms if form.line_digests]
    if not candidates:
        return f"{patch.function} matches no known form"
    scored = [(difflib.SequenceMatcher(None, lines, form.line_digests).ratio(), form) for form in candidates]
    _, closest = max(scored, key=lambda pair: pair[0])
    text_lines = text.split("\n")
    matcher = difflib.SequenceMatcher(None, lines, closest.line_digests)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 < i2:
            return (
                f"{patch.function} line {i1 + 1} differs from the {closest.releases} code: "
                f"{text_lines[i1].strip()!r}"
            )
        return f"{patch.function} lacks line {j1 + 1} of the {closest.releases} code (after line {i1})"
    return f"{patch.function} matches no known form"


def _version(version: str | None) -> Version | None:
    if version is None:
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def patched(source: bytes, patch: Patch) -> bytes:
    """The file with the patch applied; raises UnexpectedCode unless the result is exactly the fixed form.

    Only the function changes: every byte before and after it is kept, and the result is checked against the
    recorded digest of the upstream file wherever the input is a released file.
    """
    module = parse(source, patch)
    before_function = find_function(module, patch.function)
    if before_function is None:
        raise UnexpectedCode(f"{patch.target} has no {patch.function}; nothing to patch.")
    new_module = patch.transform()(module)
    after_function = find_function(new_module, patch.function)
    assert after_function is not None
    new_source: bytes = new_module.bytes
    _check_only_function_changed(module, before_function, new_module, after_function, patch)
    identification = identify(new_source, patch, None)
    if identification.verdict is not Verdict.FIXED:
        raise UnexpectedCode(
            f"the transform of {patch.id} did not produce the fixed {patch.function}; this is a bug in hfpatch."
        )
    expected = patch.expected_results.get(sha256(source))
    if expected is not None and sha256(new_source) != expected:
        raise UnexpectedCode(
            f"the transform of {patch.id} did not produce upstream's {patch.fixed_in} file; this is a bug in hfpatch."
        )
    return new_source


def _check_only_function_changed(
    before: libcst.Module,
    before_function: libcst.FunctionDef,
    after: libcst.Module,
    after_function: libcst.FunctionDef,
    patch: Patch,
) -> None:
    old_code, new_code = before.code, after.code
    old_function, new_function = before.code_for_node(before_function), after.code_for_node(after_function)
    old_at, new_at = old_code.rfind(old_function), new_code.rfind(new_function)
    same_prefix = old_code[:old_at] == new_code[:new_at]
    same_suffix = old_code[old_at + len(old_function) :] == new_code[new_at + len(new_function) :]
    if old_at < 0 or new_at < 0 or not same_prefix or not same_suffix:
        raise UnexpectedCode(
            f"the transform of {patch.id} changed code outside {patch.function}; this is a bug in hfpatch."
        )


def unified_diff(before: bytes, after: bytes, path: str) -> str:
    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))
