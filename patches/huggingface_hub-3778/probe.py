"""`hfpatch verify` for huggingface_hub#3778, run as a script in the target interpreter (standard library only).

It serves a 1 MiB file from a loopback HTTP server that, like CloudFront when `Accept-Encoding: gzip` is sent,
ignores `Range` and answers 200 with the whole file. It leaves a 300000-byte partial download in a hub cache made in
a scratch directory (blobs/<etag>.incomplete, what an interrupted hf_hub_download leaves behind), and downloads the
file again with the real hf_hub_download, which resumes it: it sends `Range: bytes=300000-` and, in 1.1.0 to 1.4.0,
appends the whole file to the partial one, so that http_get's consistency check fails (file should be of size 1048576
but has size 1348576). 1.4.1's http_get starts the file over on a 200. It removes the scratch directory and prints
one JSON line: ok (the file downloaded is the file served), bug (the failure is the one the patch fixes),
error_type, error, loader_file (huggingface_hub.file_download as imported), version and the Range headers the
server saw.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO_ID = "hfpatch/probe-download"
FILENAME = "model.safetensors"
COMMIT = hashlib.sha1(b"hfpatch verify huggingface_hub-3778").hexdigest()
PAYLOAD = bytes(range(256)) * 4096  # 1 MiB
ETAG = hashlib.sha256(PAYLOAD).hexdigest()
PARTIAL = 300_000  # what the interrupted download left
RESUMED = f"bytes={PARTIAL}-"
# The Range header of every GET the server answered (None: no Range sent).
RANGES: list[str | None] = []


class IgnoresRange(BaseHTTPRequestHandler):
    """The Hub's resolve endpoint for one file, answering every GET with 200 and the whole file."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_headers(self) -> bool:
        if self.path.split("?")[0] not in (f"/{REPO_ID}/resolve/{rev}/{FILENAME}" for rev in ("main", COMMIT)):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.send_header("ETag", f'"{ETAG}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.end_headers()
        return True

    def do_HEAD(self) -> None:
        self.send_headers()

    def do_GET(self) -> None:
        RANGES.append(self.headers.get("Range"))
        if self.send_headers():
            self.wfile.write(PAYLOAD)


def through_http_get(error: BaseException, module_file: str) -> bool:
    """Whether the error was raised in the http_get of the module the interpreter imported."""
    frame, here = error.__traceback__, os.path.realpath(module_file)
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_name == "http_get" and os.path.realpath(code.co_filename) == here:
            return True
        frame = frame.tb_next
    return False


def download(hub: Path) -> dict[str, Any]:
    """Resume the partial download with the real hf_hub_download; ok when the file is the file served."""
    huggingface_hub: Any = importlib.import_module("huggingface_hub")
    patched: Any = importlib.import_module("huggingface_hub.file_download")
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=patched.__file__, version=huggingface_hub.__version__, ranges=RANGES)
    blobs = hub / f"models--{REPO_ID.replace('/', '--')}" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / f"{ETAG}.incomplete").write_bytes(PAYLOAD[:PARTIAL])
    try:
        path = Path(huggingface_hub.hf_hub_download(REPO_ID, FILENAME, cache_dir=str(hub)))
    except Exception as error:  # the probe reports every failure of the real download, whatever it is
        message = " ".join(str(error).split())  # on one line
        # The bug: the resume asked for a range, got the whole file, and appended it to the partial one.
        bug = (
            RESUMED in RANGES
            and isinstance(error, OSError)
            and "Consistency check failed" in message
            and f"has size {PARTIAL + len(PAYLOAD)}" in message
            and through_http_get(error, patched.__file__)
        )
        result.update(error_type=type(error).__name__, error=message[:400], bug=bug)
        return result
    data = path.read_bytes()
    if RESUMED not in RANGES:  # nothing was resumed: the probe did not exercise the code the fix is for
        result.update(error_type="ProbeError", error=f"hf_hub_download sent no {RESUMED!r} (it sent {RANGES})")
    elif data != PAYLOAD:
        result.update(
            error_type="CorruptDownload", error=f"{len(data)} bytes downloaded, not the {len(PAYLOAD)} served"
        )
        result.update(bug=len(data) == PARTIAL + len(PAYLOAD))
    else:
        result["ok"] = True
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), IgnoresRange)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # Either switch turns huggingface_hub offline, and the download must reach the loopback server.
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ.pop(name, None)
        os.environ.update(
            HF_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}",
            HF_HOME=str(scratch / "home"),
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            HF_HUB_DISABLE_XET="1",
            NO_PROXY="127.0.0.1",
            no_proxy="127.0.0.1",
        )
        result = download(scratch / "hub")
    except Exception as error:  # laying out the cache or importing huggingface_hub failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
