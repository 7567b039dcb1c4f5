"""Hugging Face hub-cache snapshots of a tiny remote-code model: the one place the suite builds them.

A snapshot is laid out as huggingface_hub leaves it on disk:

    models--<org>--<name>/blobs/<sha256 of the content>          the bytes
    models--<org>--<name>/snapshots/<revision>/<file>            relative symlinks: ../../blobs/<sha256>
    models--<org>--<name>/refs/main                              the revision

The model's config class imports a sibling module, which may import another sibling. Code that resolves the
snapshot's links looks for those siblings in blobs/, where they are not (the bug of PR #46618).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CONFIG_MODULE = "configuration_custom.py"
HIDDEN_SIZE = 48

_CONFIG_JSON = (
    b'{\n  "auto_map": {"AutoConfig": "configuration_custom.CustomConfig"},\n  "model_type": "hfpatch-custom"\n}\n'
)
_CONFIG_MODULE_SOURCE = (
    b"from transformers import PretrainedConfig\n"
    b"\n"
    b"from .helpers import default_hidden_size\n"
    b"\n"
    b"\n"
    b"class CustomConfig(PretrainedConfig):\n"
    b'    model_type = "hfpatch-custom"\n'
    b"\n"
    b"    def __init__(self, hidden_size=None, **kwargs):\n"
    b"        self.hidden_size = default_hidden_size() if hidden_size is None else hidden_size\n"
    b"        super().__init__(**kwargs)\n"
)


@dataclass(frozen=True)
class RemoteCodeModel:
    """A model whose config class lives in the repository (auto_map), with its files' bytes."""

    files: Mapping[str, bytes]
    # The config module and every module it reaches through relative imports: what transformers hashes into
    # the module cache key of a local model directory.
    config_module_and_its_imports: tuple[str, ...]


# configuration_custom imports helpers, which imports constants: a sibling importing another sibling.
CHAINED_IMPORTS = RemoteCodeModel(
    files={
        "config.json": _CONFIG_JSON,
        CONFIG_MODULE: _CONFIG_MODULE_SOURCE,
        "helpers.py": b"from .constants import HIDDEN_SIZE\n\n\ndef default_hidden_size():\n    return HIDDEN_SIZE\n",
        "constants.py": f"HIDDEN_SIZE = {HIDDEN_SIZE}\n".encode(),
    },
    config_module_and_its_imports=(CONFIG_MODULE, "helpers.py", "constants.py"),
)

# configuration_custom imports helpers, which imports nothing of the model's.
DIRECT_IMPORT = RemoteCodeModel(
    files={
        "config.json": _CONFIG_JSON,
        CONFIG_MODULE: _CONFIG_MODULE_SOURCE,
        "helpers.py": f"def default_hidden_size():\n    return {HIDDEN_SIZE}\n".encode(),
    },
    config_module_and_its_imports=(CONFIG_MODULE, "helpers.py"),
)


@dataclass(frozen=True)
class Snapshot:
    repo_dir: Path
    revision: str

    @property
    def path(self) -> Path:
        """The directory a user hands to from_pretrained: snapshots/<revision>."""
        return self.repo_dir / "snapshots" / self.revision

    @property
    def blobs(self) -> Path:
        return self.repo_dir / "blobs"


def repo_folder_name(repo_id: str) -> str:
    """models--org--name, as huggingface_hub names a model repository's folder in its cache."""
    return "--".join(["models", *repo_id.split("/")])


def revision_of(files: Mapping[str, bytes]) -> str:
    """A 40-hex commit id, stable for the same files (a stand-in for the hub's git commit)."""
    commit = hashlib.sha1(usedforsecurity=False)
    for name in sorted(files):
        commit.update(name.encode("utf-8") + b"\0" + files[name] + b"\0")
    return commit.hexdigest()


def write_snapshot(cache_dir: Path, repo_id: str, model: RemoteCodeModel = CHAINED_IMPORTS) -> Snapshot:
    """Write `model` into the hub cache at `cache_dir`, as the snapshot of `repo_id` that refs/main names."""
    files = model.files
    snapshot = Snapshot(cache_dir / repo_folder_name(repo_id), revision_of(files))
    snapshot.blobs.mkdir(parents=True, exist_ok=True)
    snapshot.path.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        blob = hashlib.sha256(data).hexdigest()
        (snapshot.blobs / blob).write_bytes(data)
        (snapshot.path / name).symlink_to(Path("..", "..", "blobs", blob))
    refs = snapshot.repo_dir / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "main").write_text(snapshot.revision, encoding="utf-8")
    return snapshot


def write_plain_copy(parent: Path, snapshot: Snapshot) -> Path:
    """The snapshot's files as regular files in `parent`/<revision>: the same model, no links anywhere.

    The directory is named after the revision, as the snapshot's is, so that the name part of the module cache
    key is the same for both and only the hash part can differ.
    """
    copy = parent / snapshot.revision
    copy.mkdir(parents=True)
    for link in sorted(snapshot.path.iterdir()):
        (copy / link.name).write_bytes(link.read_bytes())
    return copy


def expected_cache_key(model: RemoteCodeModel) -> str:
    """The hash part of the module cache key that a fixed transformers (5.13.0+) gives `model` in a local dir.

    Written from the behaviour upstream specifies, not from its code: sha256 over the config module and its
    transitive relative imports, sorted by their path relative to the model directory, each contributing that
    POSIX path (UTF-8) and then its bytes; the first 16 hex digits. Links play no part in it.
    """
    key = hashlib.sha256()
    for relative in sorted(model.config_module_and_its_imports):
        key.update(relative.encode("utf-8"))
        key.update(model.files[relative])
    return key.hexdigest()[:16]


def through_symlinked_ancestor(path: Path, ancestor: Path, link: Path) -> Path:
    """`path` reached through `link`, a new symlink to its `ancestor` (link/... in place of real/...)."""
    link.symlink_to(ancestor, target_is_directory=True)
    return link / path.relative_to(ancestor)
