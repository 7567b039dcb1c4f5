"""The project's declaration, `[tool.hfpatch]` in its pyproject.toml: the catalogs it uses and the patches it
requires, so that each Dockerfile and CI line is a plain `hfpatch apply` or `hfpatch check`.

    [tool.hfpatch]
    catalog = ["hfpatches"]                          # team catalogs, relative to this file
    patches = ["transformers-46618", "mylib-123"]    # what this project requires (default: every patch)

Found as ruff and pytest find theirs: the nearest pyproject.toml from the current directory upward, and only that
one. A pyproject.toml without the table is a project without hfpatch configuration: the search stops there, and the
command acts as it does without a file. `--config FILE` names the file (which must have the table), `--no-config`
ignores any.

`check` runs at every container start: the file is read as bytes and scanned for the table first, and tomllib
(tomli on Python 3.10) is imported only for a file that has one.
"""

from __future__ import annotations

import re
import stat
import sys
from pathlib import Path
from typing import Any, NamedTuple

from hfpatch.errors import ConfigError

FILE = "pyproject.toml"
TABLE = "[tool.hfpatch]"
KEYS = ("catalog", "patches")


class Config(NamedTuple):
    path: Path  # the pyproject.toml, absolute
    catalogs: tuple[Path, ...]  # absolute
    patches: tuple[str, ...]  # empty: every patch of the catalogs
    text: str  # the file, to name the line of a key or a value

    def unknown_patch(self, patch_id: str, sentence: str) -> ConfigError:
        """A required id that no catalog has: the catalog's sentence, at the line that names the id."""
        return ConfigError(f"{_where(self.path, self.text, 'patches', patch_id)}: {TABLE} patches: {sentence}")


def load(named: str | None = None, *, ignore: bool = False, start: Path | None = None) -> Config | None:
    """The configuration that applies: the file named, else the nearest pyproject.toml from `start` (the current
    directory) upward where it has the table; None where there is none, or it is to be ignored."""
    if ignore:
        return None
    if named is not None:
        path = Path(named).absolute()
        if not _is_file(path):
            raise ConfigError(f"the configuration file {path} (--config) does not exist.")
        found = _parse(path, _read(path))
        if found is None:
            raise ConfigError(f"{path} (--config) has no {TABLE} table; name a {FILE} that has one.")
        return found
    nearest = find(start if start is not None else _cwd())
    if nearest is None:
        return None
    data = _read(nearest)
    return _parse(nearest, data) if declares_table(data) else None


def find(start: Path | None) -> Path | None:
    """The nearest pyproject.toml from `start` upward."""
    if start is None:
        return None
    for directory in (start, *start.parents):
        if _is_file(directory / FILE):
            return directory / FILE
    return None


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the current directory was removed: no project to be in
        return None


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:  # absent, or below a directory this user may not enter: no file to read there
        return False


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigError(
            f"cannot read {path}: {error.strerror or error}; hfpatch reads {TABLE} from the nearest {FILE} "
            "(`--no-config` ignores it)."
        ) from None


# A table header ([a.b], [[a.b]]) and a key (bare, quoted or dotted) before its `=`. Patterns, not compiled ones:
# compiling costs every `check` its start-up; only a file that names hfpatch is scanned with them.
_HEADER = rb"[ \t]*\[\[?([^\]\n]*)\]"
_KEY = rb"[ \t]*([A-Za-z0-9_\-\"'. \t]+?)[ \t]*="


def _dotted(key: bytes) -> list[bytes]:
    return [part.strip(b" \t\"'") for part in key.split(b".")]


def declares_table(data: bytes) -> bool:
    """Whether the file may define tool.hfpatch (a table header, a dotted key, an inline table), or a tool table
    whose name is within a typo of it, by a scan of its lines that is never False where it does (a header inside a
    multi-line string aside): a pyproject.toml of a project that does not use hfpatch costs no TOML parser."""
    if b"patch" not in data.lower():
        return False
    table: list[bytes] = []
    for line in data.splitlines():
        header = re.match(_HEADER, line)
        if header:
            table = _dotted(header[1])
            if table[:1] == [b"tool"] and len(table) > 1 and _ours(table[1]):
                return True
            continue
        key = re.match(_KEY, line)
        if key and b"patch" in line.lower():
            full = table + _dotted(key[1])
            if full == [b"tool"] or (full[:1] == [b"tool"] and len(full) > 1 and _ours(full[1])):
                return True  # tool = { hfpatch = { ... } }, or tool.hfpatch.catalog = ...
    return False


def _ours(name: bytes) -> bool:
    """tool.hfpatch, or a name within a typo of it ([tool.hfpatchs], [tool.hf-patch])."""
    return name == b"hfpatch" or _near_miss(name.decode("utf-8", "replace"))


def _near_miss(name: str) -> bool:
    """Another spelling of hfpatch: hf-patch, hf_patch, hfpatches, or one letter added, dropped, changed or two
    swapped (hfpatchs, hpatch, hfptach)."""
    wanted = "hfpatch"
    if name == wanted:
        return False
    name = name.lower().replace("-", "").replace("_", "")
    if name.startswith(wanted):
        return True
    if abs(len(name) - len(wanted)) > 1:
        return False
    previous = list(range(len(wanted) + 1))
    for row, letter in enumerate(name, 1):
        current = [row]
        for column, other in enumerate(wanted, 1):
            current.append(min(previous[column] + 1, current[-1] + 1, previous[column - 1] + (letter != other)))
        previous = current
    swaps = (name[:at] + name[at + 1] + name[at] + name[at + 2 :] for at in range(len(name) - 1))
    return previous[-1] <= 1 or wanted in swaps


def _parse(path: Path, data: bytes) -> Config | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path} is not UTF-8 text (byte {error.start}); TOML files are UTF-8.") from None
    document = _loads(path, text)
    tool = document.get("tool")
    table = tool.get("hfpatch") if isinstance(tool, dict) else None
    if table is None:
        _refuse_a_near_miss(path, text, tool)
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{_where(path, text, 'hfpatch')}: tool.hfpatch must be a table ({TABLE}), not {table!r}.")
    unknown = [key for key in table if key not in KEYS]
    if unknown:
        guess = _guess(unknown[0])
        end = "" if guess.endswith("?") else "."
        raise ConfigError(f"{_where(path, text, unknown[0])}: {TABLE} has no key {unknown[0]!r}{guess}{end}")
    catalogs = tuple(_catalog(path, text, name) for name in _strings(path, text, table, "catalog", "directories"))
    patches = tuple(dict.fromkeys(_strings(path, text, table, "patches", "patch ids")))
    if "patches" in table and not patches:
        raise ConfigError(
            f"{_where(path, text, 'patches')}: {TABLE} patches is empty; list the patches the project requires, "
            "or leave the key out for every patch of the catalogs."
        )
    return Config(path, catalogs, patches, text)


def _refuse_a_near_miss(path: Path, text: str, tool: object) -> None:
    """A [tool.*] table within a typo of hfpatch is a mistake, not a project without hfpatch: acting on every patch
    of the catalogs instead of the ones it lists would be the wrong thing, silently."""
    if not isinstance(tool, dict):
        return
    miss = next((name for name in tool if _near_miss(name)), None)
    if miss is not None:
        line = next((number for number, each in enumerate(text.splitlines(), 1) if miss in each), None)
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(f"{where}: [tool.{miss}] is no table hfpatch reads; did you mean {TABLE}?")


def _loads(path: Path, text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, as the package it came from (a dependency there)
        import tomli as tomllib
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        at = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message)
        if at is None:
            raise ConfigError(f"{path} is not valid TOML: {message}.") from None
        raise ConfigError(f"{path}:{at[2]}: not valid TOML: {at[1]} (column {at[3]}).") from None
    return document


def _guess(key: str) -> str:
    import difflib  # an error's hint only

    close = difflib.get_close_matches(key, KEYS, n=1)
    known = ", ".join(KEYS)
    return f" (it has {known}); did you mean {close[0]!r}?" if close else f" (it has {known})"


def _strings(path: Path, text: str, table: dict[str, Any], key: str, what: str) -> list[str]:
    """A key's value: a list of strings (a string alone is refused, as the README's table of types says)."""
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(each, str) and each for each in value):
        hint = f"; write {key} = [{value!r}]" if isinstance(value, str) else ""
        raise ConfigError(
            f"{_where(path, text, key)}: {TABLE} {key} must be a list of {what} (strings), not {value!r}{hint}."
        )
    return value


def _catalog(path: Path, text: str, name: str) -> Path:
    """A catalog the file names, relative to the file's directory; it must be a directory."""
    directory = path.parent / name
    try:
        kind = "is a directory" if stat.S_ISDIR(directory.stat().st_mode) else "is not a directory"
    except PermissionError:
        kind = "cannot be read (permission denied)"
    except OSError:
        kind = "does not exist"
    if kind != "is a directory":
        shown = name if name == str(directory) else f"{name} ({directory})"
        raise ConfigError(
            f"{_where(path, text, 'catalog', name)}: {TABLE} catalog: {shown} {kind}; name a directory of patch "
            f"entries, relative to {path.parent}."
        )
    return directory


def _where(path: Path, text: str, key: str, value: str | None = None) -> str:
    """`FILE:LINE`, the line that sets the key in the table (or names the value in it), where it can be found."""
    line = _line_of(text, key, value)
    return f"{path}:{line}" if line else str(path)


_TABLE_LINE = r"\s*\[\s*[\"']?tool[\"']?\s*\.\s*[\"']?hfpatch[\"']?\s*\]"


def _line_of(text: str, key: str, value: str | None) -> int | None:
    lines = text.splitlines()
    start = next((index for index, line in enumerate(lines) if re.match(_TABLE_LINE, line)), None)
    if start is None:  # a dotted key or an inline table: the first line that sets the key
        first, last = 0, len(lines)
        setting = re.compile(rf"(.*[\s.{{,]|)[\"']?{re.escape(key)}[\"']?\s*=")
    else:
        ends = [index for index in range(start + 1, len(lines)) if lines[index].lstrip().startswith("[")]
        first, last = start + 1, ends[0] if ends else len(lines)
        setting = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
    at = next((index for index in range(first, last) if setting.match(lines[index])), None)
    if at is None:
        return None
    if value is not None:
        quoted = (f'"{value}"', f"'{value}'")
        named = next((index for index in range(at, last) if any(each in lines[index] for each in quoted)), None)
        at = at if named is None else named
    return at + 1
