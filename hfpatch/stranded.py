"""hfpatch's state of a patch that no catalog given has: applied with `--catalog DIR`, then a command run without it.

Such a patch is never passed over. Every command reports it (its id, its files, and "give --catalog DIR"), as a
patch known from its state alone: a Patch whose files are those its state names, with no targets. Its state and
backup are all revert needs: it puts each file's original back (rebuilt with the other patches that stay on it,
where the catalogs given have them), or says why it cannot. apply cannot patch it again without its entry, and
check and verify cannot judge its code: they say what to give.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from hfpatch import state
from hfpatch.entry import Patch, PatchFile
from hfpatch.environment import Python
from hfpatch.errors import StateError

# What a patch known from its state alone has for its upstream and title.
UNKNOWN = "(not in any catalog given)"


def find(python: Python, known: Collection[str]) -> list[Patch]:
    """The patches hfpatch's state holds on the interpreter's path that no catalog given names, by id."""
    found: dict[str, Patch] = {}
    for entry in python.search_path:
        root = Path(entry)
        try:
            directories = sorted(state.state_root(root).iterdir())
        except OSError:
            continue
        for directory in directories:
            if directory.name == "files" or directory.name in known or directory.name in found:
                continue
            patch = _from_state(root, directory.name)
            if patch is not None:
                found[patch.id] = patch
    return list(found.values())


def _from_state(root: Path, patch_id: str) -> Patch | None:
    try:
        saved, _ = state.load(root, patch_id)
    except StateError:
        saved = None
    if saved is None or not saved.files:
        return None
    files = tuple(PatchFile(_module(change.file), change.file, ()) for change in saved.files)
    return Patch(
        id=patch_id,
        title=UNKNOWN,
        upstream=UNKNOWN,
        url="",
        distribution=saved.distribution,
        fixed_in=None,
        first_defined_in=None,
        files=files,
        directory=state.patch_dir(root, patch_id),
        whole=False,
    )


def _module(file: str) -> str:
    parts = file.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_stranded(patch: Patch) -> bool:
    """A patch known from its state alone (its directory is its state's)."""
    return patch.directory.parent.name == state.STATE_DIR
