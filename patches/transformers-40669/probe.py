"""`hfpatch verify` for transformers#40669, run as a script in the target interpreter (no torch, no network).

It writes a hub-cache snapshot of a tiny fast tokenizer in a scratch directory and loads it by repo id, pinned to
its commit so that the one request left is list_repo_templates' listing of additional_chat_templates/, twice: with
the hub's offline switch turned on at runtime (OfflineModeIsEnabled, a builtin ConnectionError, escapes in 4.56.0)
and with HF_ENDPOINT on a refused port (requests' ConnectionError escapes in 4.52.0 to 4.55.4); 4.56.1 catches both
and falls back to the cache. It removes the scratch directory and prints one JSON line: ok, bug (the failure is the
one the patch fixes), error_type, error, loader_file (transformers.utils.hub as imported) and version.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ID = "hfpatch/probe-tokenizer"
REVISION = hashlib.sha1(b"hfpatch verify transformers-40669").hexdigest()
# Optional files the tokenizer loaders look up: marked absent in the cache, so that none of them is requested.
ABSENT = "added_tokens.json special_tokens_map.json chat_template.jinja chat_template.json tokenizer.model config.json"
FILES = {
    "tokenizer.json": {
        **dict.fromkeys(("truncation", "padding", "normalizer", "post_processor", "decoder")),
        "version": "1.0",
        "added_tokens": [],
        "pre_tokenizer": {"type": "Whitespace"},
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2}, "unk_token": "[UNK]"},
    },
    "tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]"},
}
# What escapes list_repo_templates when the listing request cannot reach the Hub.
CONNECTION_FAILURES = {"huggingface_hub.errors.OfflineModeIsEnabled", "requests.exceptions.ConnectionError"}


def lay_out_snapshot(hub: Path) -> None:
    repo = hub / f"models--{REPO_ID.replace('/', '--')}"
    snapshot, absent = repo / "snapshots" / REVISION, repo / ".no_exist" / REVISION
    for directory in (repo / "blobs", repo / "refs", snapshot, absent):
        directory.mkdir(parents=True)
    (repo / "refs" / "main").write_text(REVISION)
    for name, content in FILES.items():
        data = json.dumps(content).encode("utf-8")
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        (snapshot / name).symlink_to(Path("..", "..", "blobs", blob))
    for name in ABSENT.split():
        (absent / name).touch()


def is_the_bug(error: BaseException, hub_file: str) -> bool:
    """A connection failure of the template listing that list_repo_templates let escape."""
    kinds = {f"{kind.__module__}.{kind.__qualname__}" for kind in type(error).__mro__}
    frame, here = error.__traceback__, os.path.realpath(hub_file)
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_name == "list_repo_templates" and os.path.realpath(code.co_filename) == here:
            return bool(kinds & CONNECTION_FAILURES)
        frame = frame.tb_next
    return False


def load(hub_offline: bool) -> BaseException | None:
    from transformers import AutoTokenizer

    constants: Any = importlib.import_module("huggingface_hub.constants")
    constants.HF_HUB_OFFLINE = hub_offline
    getattr(importlib.import_module("huggingface_hub.utils"), "reset_sessions", lambda: None)()  # new switch value
    try:
        ids = AutoTokenizer.from_pretrained(REPO_ID, revision=REVISION)("hello world")["input_ids"]
        if ids != [1, 2]:
            raise ValueError(f"the probe tokenizer encodes 'hello world' as {ids}, not [1, 2]")
    except Exception as error:  # the probe reports every failure of the real loader, whatever it is
        return error
    return None


def run(scratch: Path, port: int) -> dict[str, Any]:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # transformers' own offline flag must stay off
        os.environ.pop(name, None)
    os.environ.update(
        HF_HOME=str(scratch / "home"),
        HF_HUB_CACHE=str(scratch / "hub"),
        HF_ENDPOINT=f"http://127.0.0.1:{port}",
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_PROXY="127.0.0.1",
        no_proxy="127.0.0.1",
        TRANSFORMERS_VERBOSITY="error",
    )
    lay_out_snapshot(scratch / "hub")
    import transformers
    import transformers.utils.hub as hub

    result: dict[str, Any] = {"ok": True, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=hub.__file__, version=transformers.__version__)
    failures = [(way, error) for way, off in (("hub offline", True), ("port refused", False)) if (error := load(off))]
    bugs = [is_the_bug(error, hub.__file__) for _, error in failures]
    if failures:  # a failure that is not the bug goes first: the patch would not cure it
        way, error = failures[bugs.index(False)] if False in bugs else failures[0]
        result.update(ok=False, bug=all(bugs), error_type=type(error).__name__, error=f"[{way}] {error}"[:400])
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    refused = socket.socket()  # bound and never listening: connections to its port are refused while it is open
    refused.bind(("127.0.0.1", 0))
    try:
        result = run(scratch, refused.getsockname()[1])
    except Exception as error:  # laying out the snapshot or importing transformers failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    finally:
        refused.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
