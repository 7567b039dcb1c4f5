"""`hfpatch verify` for transformers#46618, run as a script in the target interpreter (standard library only).

It prints one JSON line: ok (the real loader works), bug (its failure is the bug the patch fixes), error_type,
error, loader_file (the file of the patched module the interpreter imports) and version.

It lays out a hub-cache snapshot in a scratch directory (content-named blobs, relative symlinks, refs/main) whose
remote-code configuration imports a sibling module, loads it offline with the real loader, prints one JSON line,
and removes the scratch directory. The bug shows as FileNotFoundError for the sibling inside blobs/.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

MODEL_FILES = {
    "config.json": json.dumps(
        {"model_type": "hfpatch-probe", "auto_map": {"AutoConfig": "configuration_probe.ProbeConfig"}}
    ),
    "configuration_probe.py": (
        "from transformers import PretrainedConfig\n"
        "\n"
        "from .probe_constants import MARKER\n"
        "\n"
        "\n"
        "class ProbeConfig(PretrainedConfig):\n"
        '    model_type = "hfpatch-probe"\n'
        "    marker = MARKER\n"
    ),
    "probe_constants.py": 'MARKER = "hfpatch"\n',
}


def lay_out_snapshot(hub: Path) -> Path:
    repo = hub / "models--hfpatch--probe"
    revision = hashlib.sha1(b"hfpatch verify").hexdigest()
    snapshot = repo / "snapshots" / revision
    for directory in (repo / "blobs", repo / "refs", snapshot):
        directory.mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    for name, text in MODEL_FILES.items():
        data = text.encode("utf-8")
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        (snapshot / name).symlink_to(Path("..", "..", "blobs", blob))
    return snapshot


def load(snapshot: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"ok": False}
    try:
        import transformers
        import transformers.dynamic_module_utils as loader
        from transformers import AutoConfig

        result["version"] = transformers.__version__
        result["loader_file"] = loader.__file__
        config = AutoConfig.from_pretrained(str(snapshot), trust_remote_code=True)
        result.update(ok=True, module=type(config).__module__)
    except Exception as error:  # the probe reports every failure of the real loader, whatever it is
        message = str(error)
        result.update(error_type=type(error).__name__, error=message[:400], bug="/blobs/" in message)
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    try:
        os.environ.update(
            HF_HUB_OFFLINE="1",
            HF_HOME=str(scratch / "home"),
            HF_MODULES_CACHE=str(scratch / "modules"),
            TRANSFORMERS_VERBOSITY="error",
        )
        sys.dont_write_bytecode = True
        result = load(lay_out_snapshot(scratch / "hub"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
