"""`python -m hfpatch.migrate CATALOG...`: turn the entries hfpatch 0.1 wrote (patch.toml, schema 1) into the
patch.json that hfpatch reads now, in place.

Each entry keeps everything else (fixed/, probe.py, transform.py): only patch.toml is replaced. The new patch.json
must load and say what the old file said (its leading comments become `about`); only then is patch.toml removed.
An entry that already has a patch.json is left alone. Exit 0 when every entry found is converted, 2 otherwise: a
file that cannot be read or converted, or a catalog with nothing to convert.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from hfpatch import catalog, entry, files
from hfpatch.errors import CatalogError, ExitCode, HfpatchError

# hfpatch 0.1's names for the lists, by the name they have now.
_RENAMED = {"target": "targets", "file_form": "known_files"}


def converted(text: str) -> dict[str, Any]:
    """patch.json's content for an hfpatch 0.1 patch.toml; ValueError where the TOML does not parse."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise HfpatchError(
                "reading patch.toml needs Python 3.11 or newer, or tomli (`pip install tomli`)."
            ) from None
    old = tomllib.loads(text)
    about = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        about.append(line[1:].strip())
    new: dict[str, Any] = {"schema": 2}  # the layout of hfpatch 0.2, whose digests 0.1's are
    if about:
        new["about"] = about
    for key, value in old.items():
        if key == "schema":
            if value != 1:
                raise ValueError(f"schema {value!r}, where hfpatch 0.1 wrote schema 1")
            continue
        new[_RENAMED.get(key, key)] = _targets(value) if key == "target" else value
    return new


def _targets(targets: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{("forms" if key == "form" else key): value for key, value in target.items()} for target in targets]


def convert(directory: Path) -> entry.Patch:
    """Write DIRECTORY/patch.json from DIRECTORY/patch.toml, check it loads, then remove patch.toml."""
    old = directory / entry.OLD_ENTRY
    new = directory / entry.ENTRY
    try:
        data = converted(old.read_text(encoding="utf-8"))
    except OSError as error:
        raise CatalogError(f"cannot read {old}: {error.strerror}.") from None
    except ValueError as error:  # TOMLDecodeError, UnicodeDecodeError, a schema not 0.1's
        raise CatalogError(f"{old} is not an entry hfpatch 0.1 wrote: {error}.") from None
    patch = entry.from_data(data, directory, old)
    files.write_atomically(new, entry.render(patch).encode("utf-8"))
    if entry.load(directory) != patch:
        files.remove(new)  # patch.toml stays, as it was
        raise CatalogError(f"{new} does not read back as {old} says (a bug in hfpatch); {old} is kept.")
    files.remove(old)
    return patch


USAGE = "usage: python -m hfpatch.migrate CATALOG [CATALOG ...]"


def main(argv: Sequence[str], out: TextIO = sys.stdout) -> int:
    if list(argv) in (["-h"], ["--help"]):
        try:
            print(f"{USAGE}\n\n{__doc__}", file=out, flush=True)
        except BrokenPipeError:  # `--help | head`
            files.reader_gone(out)
        return int(ExitCode.OK)
    if not argv or any(argument.startswith("-") for argument in argv):
        print(f"{USAGE}\nhfpatch: error: give the catalog directories to convert, and nothing else.", file=sys.stderr)
        return int(ExitCode.ERROR)
    results = [_migrate(Path(given), out) for given in argv]
    return int(ExitCode.OK if all(results) else ExitCode.ERROR)


def _migrate(directory: Path, out: TextIO) -> bool:
    """Convert every hfpatch 0.1 entry in the catalog (or the one entry) `directory`; False where any is not."""
    if directory.name == entry.OLD_ENTRY:  # the file itself was named: its entry
        directory = directory.parent
    try:
        entries = [directory] if (directory / entry.OLD_ENTRY).is_file() else sorted(directory.iterdir())
    except OSError as error:
        return _error(f"cannot list the catalog {directory}: {error.strerror}.")
    old = catalog.unconverted(entries)
    if not old:
        if any((each / entry.ENTRY).is_file() for each in entries):
            return _error(f"{directory} is converted already (its entries are {entry.ENTRY}): nothing to do.")
        return _error(f"{directory} holds no entry to convert (no */{entry.OLD_ENTRY}); is it the catalog directory?")
    done = True
    for each in old:
        try:
            patch = convert(each)
        except HfpatchError as error:
            done = _error(str(error))
            continue
        print(f"converted {each / entry.OLD_ENTRY} to {each / entry.ENTRY} ({patch.id})", file=out)
    return done


def _error(message: str) -> bool:
    print(f"hfpatch: error: {message}", file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
