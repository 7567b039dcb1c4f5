"""The pure core: what installed code is, and what it must become. Bytes in, verdicts and bytes out; no disk."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hfpatch.catalog import KnownForm, Patch, Verdict
from hfpatch.errors import UnexpectedCode

if TYPE_CHECKING:
    from packaging.version import Version


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
    located = locate_function(source, patch)
    if located is None:
        return _absent(patch, version)
    function_digest, lines = function_fingerprint(located.function_source)
    for form in patch.forms:
        if form.function_sha256 == function_digest:
            return Identification(form.verdict, form, f"{patch.function} is the {form.releases} code")
    return _unrecognised(patch, version, located.function_source, lines)


@dataclass(frozen=True)
class LocatedFunction:
    """A top-level function's place in a decoded file: lines[start:end] hold it, decorators included."""

    encoding: str
    lines: tuple[str, ...]
    start: int
    end: int

    @property
    def function_text(self) -> str:
        return "".join(self.lines[self.start : self.end])

    @property
    def function_source(self) -> str:
        """The text the catalog's digests are taken of: newlines as "\\n", no final newline."""
        return self.function_text.replace("\r\n", "\n").rstrip("\n")

    def with_function(self, text: str) -> bytes:
        lines = (*self.lines[: self.start], text, *self.lines[self.end :])
        return "".join(lines).encode(self.encoding)


def locate_function(source: bytes, patch: Patch) -> LocatedFunction | None:
    """Find the top-level function the patch targets. The file must decode and parse; it is never executed."""
    import ast
    import io
    import tokenize

    if not source.strip():
        raise UnexpectedCode(f"{patch.target} is empty; reinstall {patch.distribution}.")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        raise UnexpectedCode(
            f"{patch.target} is not valid UTF-8 (or its declared encoding); reinstall {patch.distribution}."
        ) from None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if isinstance(error, SyntaxError) and error.lineno else ""
        raise UnexpectedCode(f"{patch.target} is not valid Python{where}; reinstall {patch.distribution}.") from None
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == patch.function:
            found = node  # the last definition is the one Python binds
    if found is None:
        return None
    first = min([found.lineno, *(decorator.lineno for decorator in found.decorator_list)])
    assert found.end_lineno is not None
    return LocatedFunction(encoding, tuple(_split_lines(text)), first - 1, found.end_lineno)


def _split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (only \\n, \\r\\n and \\r end a line), endings kept."""
    import re

    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _absent(patch: Patch, version: str | None) -> Identification:
    parsed = _version(version)
    if parsed is not None and parsed < _version_of(patch.introduced_in):
        return Identification(
            Verdict.NOT_APPLICABLE,
            None,
            f"{patch.function} is absent, as in every release before {patch.introduced_in}",
        )
    if parsed is not None and parsed >= _version_of(patch.fixed_in):
        return Identification(
            Verdict.FIXED,
            None,
            f"{patch.function} is gone from this release, which is {patch.fixed_in} or newer",
        )
    return Identification(
        Verdict.UNRECOGNISED,
        None,
        f"{patch.target} has no {patch.function}, yet {patch.distribution} "
        f"{version or '(unknown version)'} should define it",
    )


def _unrecognised(patch: Patch, version: str | None, text: str, lines: tuple[str, ...]) -> Identification:
    parsed = _version(version)
    if parsed is not None and parsed >= _version_of(patch.fixed_in) and not parsed.is_prerelease:
        return Identification(
            Verdict.FIXED,
            None,
            f"{patch.function} differs from every known form, and this release is {patch.fixed_in} or newer, "
            "which has the fix",
        )
    return Identification(Verdict.UNRECOGNISED, None, _what_differs(patch, text, lines))


def _what_differs(patch: Patch, text: str, lines: tuple[str, ...]) -> str:
    """Point at the first line where the function leaves the known form it is closest to."""
    import difflib

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
                f"{patch.function} line {i1 + 1} differs from the {closest.releases} code: {text_lines[i1].strip()!r}"
            )
        return f"{patch.function} lacks line {j1 + 1} of the {closest.releases} code (after line {i1})"
    return f"{patch.function} matches no known form"


def _version(version: str | None) -> Version | None:
    """The parsed version, or None where it is unknown or not PEP 440 (the code alone decides then)."""
    from packaging.version import InvalidVersion

    if version is None:
        return None
    try:
        return _version_of(version)
    except InvalidVersion:
        return None


def at_least(version: str | None, floor: str) -> bool:
    """Whether a release is `floor` or newer; False where its version is unknown or not PEP 440."""
    parsed = _version(version)
    return parsed is not None and parsed >= _version_of(floor)


def _version_of(text: str) -> Version:
    # packaging is imported only where a version must be compared: `hfpatch check` mostly never needs it.
    from packaging.version import Version

    return Version(text)


def patched(source: bytes, patch: Patch) -> bytes:
    """The file with the patch applied; raises UnexpectedCode unless the result is exactly the fixed form.

    Only the function's own lines are handed to the libcst transform and replaced: every byte before and after
    them is kept by construction. The result is checked against the fixed form's digest, and against the
    recorded digest of upstream's file wherever the input is a released file.
    """
    import libcst

    located = locate_function(source, patch)
    if located is None:
        raise UnexpectedCode(f"{patch.target} has no {patch.function}; nothing to patch.")
    try:
        function_module = libcst.parse_module(located.function_text)
    except libcst.ParserSyntaxError:
        raise UnexpectedCode(f"libcst cannot parse {patch.function} in {patch.target}.") from None
    new_source = located.with_function(patch.transform()(function_module).code)
    new_located = locate_function(new_source, patch)
    digest, _ = function_fingerprint(new_located.function_source) if new_located else ("", ())
    if digest not in {form.function_sha256 for form in patch.forms if form.verdict is Verdict.FIXED}:
        raise UnexpectedCode(
            f"the transform of {patch.id} did not produce the fixed {patch.function}; this is a bug in hfpatch."
        )
    expected = patch.expected_results.get(sha256(source))
    if expected is not None and sha256(new_source) != expected:
        raise UnexpectedCode(
            f"the transform of {patch.id} did not produce upstream's {patch.fixed_in} file; this is a bug in hfpatch."
        )
    return new_source


def unified_diff(before: bytes, after: bytes, path: str) -> str:
    import difflib

    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))
