"""What the application's interpreter would import. Runs inside that interpreter (3.10 or newer), standard library only.

hfpatch calls `describe` directly when the application's interpreter is its own; for `--python` it runs this file's
source with `python -c` in that interpreter and reads the JSON it prints. Nothing of the described package is imported.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any


def describe(package: str) -> dict[str, Any]:
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return {
        "executable": sys.executable,
        "version": ".".join(str(part) for part in sys.version_info[:3]),
        "cache_tag": sys.implementation.cache_tag,
        "magic": importlib.util.MAGIC_NUMBER.hex(),
        "package_dir": locations[0] if spec is not None and spec.origin and locations else None,
        "found": spec is not None,
        # Where an uninstalled package's hfpatch state may still lie (site-packages, PYTHONPATH entries).
        # os.path.isdir, not Path.is_dir: an entry this user may not search (EACCES) is no directory to it either.
        "search_path": [entry for entry in sys.path if entry and os.path.isdir(entry)],  # noqa: PTH112
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
    }


def locate(packages: list[str]) -> dict[str, Any]:
    """Where each top-level package lies, as describe() says it (`found`, `package_dir`), asked at once: a catalog
    of hundreds of entries names hundreds of distributions, most of them not installed. A name that no directory
    of the path has an entry for is not looked for (_unlisted): the import system's path finder could not find it."""
    unlisted = _unlisted(packages)
    found: dict[str, Any] = {}
    for package in packages:
        spec = None if package in unlisted else importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        found[package] = {
            "found": spec is not None,
            "package_dir": locations[0] if spec is not None and spec.origin and locations else None,
        }
    return {"packages": found}


def absent(packages: list[str]) -> list[str]:
    """Those of `packages` this interpreter cannot import, in order: as locate() finds them, without describing the
    others (a catalog's hundreds of distributions, most of them not installed, asked by hfpatch in its own process)."""
    unlisted = _unlisted(packages)
    return [package for package in packages if package in unlisted or importlib.util.find_spec(package) is None]


def _unlisted(packages: list[str]) -> set[str]:
    """The packages this interpreter's finders cannot find, told without the path finder's search where that is
    certain: each entry of the path is a directory the standard file finder reads (no other path hook, no zip),
    names match exactly (no PYTHONCASEOK), and the name is not imported, built in or frozen. A file finder finds
    `name` only as a directory or a file `name.<suffix>` in one of those directories; any other finder on
    sys.meta_path (an editable install's) is asked as the import system would ask it. Uncertain: empty."""
    import importlib.machinery
    import zipimport

    hooks_known = all(
        hook is zipimport.zipimporter or getattr(hook, "__qualname__", "").startswith("FileFinder.path_hook")
        for hook in sys.path_hooks
    )
    if "PYTHONCASEOK" in os.environ or not hooks_known:
        return set()
    names: set[str] = set()
    for entry in sys.path:
        importer = sys.path_importer_cache.get(entry)
        if importer is not None and not isinstance(importer, importlib.machinery.FileFinder):
            return set()
        try:
            listed = os.listdir(entry or os.getcwd())  # noqa: PTH208, PTH109
        except NotADirectoryError:
            return set()  # a zip file: zipimport's to read
        except OSError:
            continue  # not there (python3XX.zip), or not readable: the path finder finds nothing in it either
        names.update(name.partition(".")[0] for name in listed)
    standard = (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter, importlib.machinery.PathFinder)
    others = [finder for finder in sys.meta_path if finder not in standard]
    unlisted = set()
    for package in packages:
        if package in names or package in sys.modules or package in sys.builtin_module_names:
            continue
        if importlib.machinery.FrozenImporter.find_spec(package) is not None:
            continue
        if not any(_finds(finder, package) for finder in others):
            unlisted.add(package)
    return unlisted


def _finds(finder: Any, package: str) -> bool:
    find_spec = getattr(finder, "find_spec", None)
    return find_spec is None or find_spec(package, None) is not None


def distribution(name: str) -> dict[str, Any]:
    """Where the interpreter's copy of a distribution lies: its version, its dist-info, the directory it is in."""
    import importlib.metadata

    try:
        found = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return {"found": False}
    dist_info = getattr(found, "_path", None)  # PathDistribution's; every installer's metadata is one
    return {
        "found": True,
        "version": found.version,
        "dist_info": None if dist_info is None else str(dist_info),
        "root": str(found.locate_file("")),
    }


def compile_bytecode(source: str, requests: list[dict[str, Any]]) -> None:
    """Write .pyc files for `source`, each at the optimisation level and invalidation mode asked for."""
    import py_compile

    for request in requests:
        py_compile.compile(
            source,
            cfile=request["cfile"],
            doraise=True,
            optimize=request["optimize"],
            invalidation_mode=py_compile.PycInvalidationMode[request["mode"]],
        )


def import_modules(modules: list[str], replaced: dict[str, str]) -> dict[str, Any]:
    """Import each module, the files `replaced` names (path -> a file holding the bytes to use instead) read from
    there: what the patched modules do when the application imports them, before anything is written. Nothing is
    written, bytecode included."""
    import importlib.abc
    import importlib.machinery
    import traceback

    sys.dont_write_bytecode = True
    instead = {os.path.realpath(path): Path(data).read_bytes() for path, data in replaced.items()}

    class Patched(importlib.machinery.SourceFileLoader):
        def get_data(self, path: str) -> bytes:
            found = instead.get(os.path.realpath(path))
            return found if found is not None else super().get_data(path)

        def get_code(self, fullname: str) -> Any:
            path = self.get_filename(fullname)
            if os.path.realpath(path) in instead:  # never a cached .pyc of the old bytes
                return self.source_to_code(self.get_data(path), path)
            return super().get_code(fullname)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.origin and os.path.realpath(spec.origin) in instead:
                spec.loader = Patched(fullname, spec.origin)
            if spec is None:  # a module the patch adds: not on disk yet
                name = fullname.rpartition(".")[2]
                for entry in path if path is not None else sys.path:
                    origin = os.path.join(entry, f"{name}.py")  # noqa: PTH118
                    if os.path.realpath(origin) in instead:
                        loader = Patched(fullname, origin)
                        return importlib.util.spec_from_file_location(fullname, origin, loader=loader)
            return spec

    sys.meta_path.insert(0, Finder())
    for module in modules:
        try:
            importlib.import_module(module)
        except BaseException as error:  # what the application would meet: any failure, SystemExit included
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            return {"ok": False, "module": module, "error": last[:500]}
    return {"ok": True}


if __name__ == "__main__":
    import json

    # `python -c` puts the working directory first on sys.path; a process of the environment would not see it.
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    request = json.loads(sys.argv[1])
    if request["action"] == "describe":
        print(json.dumps(describe(request["package"])))
    elif request["action"] == "locate":
        print(json.dumps(locate(request["packages"])))
    elif request["action"] == "distribution":
        print(json.dumps(distribution(request["name"])))
    elif request["action"] == "import":
        print(json.dumps(import_modules(request["modules"], request["replaced"])))
    elif request["action"] == "source_hash":
        print(importlib.util.source_hash(Path(request["path"]).read_bytes()).hex())
    else:
        compile_bytecode(request["source"], request["requests"])
