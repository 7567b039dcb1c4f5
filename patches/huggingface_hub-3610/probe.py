"""`hfpatch verify` for huggingface_hub#3610, run as a script in the target interpreter (standard library only).

It makes a local folder in a scratch directory, as hf_hub_download(local_dir=...) and upload_large_folder leave one,
with a metadata file under .cache/huggingface/ cut short (what a killed run or a full disk leaves), and reads it with
the real code, offline, twice: hf_hub_download("hfpatch/probe-local-dir", "config.json", local_dir=...) over a
download metadata file, and read_upload_metadata (what upload_large_folder reads each file's state with) over an
upload metadata file. In 0.32.0 to 1.2.1 both discard the bad file and then read the variable it was to fill:
UnboundLocalError. 1.2.2 returns what it knows (no download metadata; an upload metadata of the file's size only),
so the offline download returns the file already in the folder. It removes the scratch directory and prints one
JSON line: ok, bug (the failure is the one the patch fixes), error_type, error, loader_file
(huggingface_hub._local_folder as imported) and version.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ID = "hfpatch/probe-local-dir"
DOWNLOADED = "config.json"
UPLOADED = "data.bin"
# A metadata file cut short after its first line: the commit hash of a download, the timestamp of an upload.
TRUNCATED = {"download": "0123456789abcdef0123456789abcdef01234567\n", "upload": "1700000000.0\n"}


def raised_in(error: BaseException, function: str, module_file: str) -> bool:
    """Whether the error was raised in that function of the module the interpreter imported."""
    frame, here = error.__traceback__, os.path.realpath(module_file)
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_name == function and os.path.realpath(code.co_filename) == here:
            return True
        frame = frame.tb_next
    return False


def lay_out(folder: Path) -> dict[str, Path]:
    """The local folder: the two files, and a metadata file cut short for each; the metadata files by kind."""
    (folder / DOWNLOADED).write_text('{"model_type": "hfpatch-probe"}')
    (folder / UPLOADED).write_bytes(b"\0" * 1234)
    metadata = {
        "download": folder / ".cache" / "huggingface" / "download" / f"{DOWNLOADED}.metadata",
        "upload": folder / ".cache" / "huggingface" / "upload" / f"{UPLOADED}.metadata",
    }
    for kind, path in metadata.items():
        path.parent.mkdir(parents=True)
        path.write_text(TRUNCATED[kind])
    return metadata


def download(folder: Path) -> None:
    huggingface_hub: Any = importlib.import_module("huggingface_hub")
    path = Path(huggingface_hub.hf_hub_download(REPO_ID, DOWNLOADED, local_dir=str(folder)))
    if path.resolve() != (folder / DOWNLOADED).resolve():
        raise ValueError(f"hf_hub_download(local_dir=...) offline returned {path}, not the file in the folder")


def upload(folder: Path) -> None:
    local_folder: Any = importlib.import_module("huggingface_hub._local_folder")
    metadata = local_folder.read_upload_metadata(folder, UPLOADED)
    size = (folder / UPLOADED).stat().st_size
    if metadata.size != size or metadata.sha256 is not None or metadata.is_uploaded:
        raise ValueError(f"read_upload_metadata over a cut-short file returned {metadata!r}, not what it knows")


def run(folder: Path) -> dict[str, Any]:
    huggingface_hub: Any = importlib.import_module("huggingface_hub")
    local_folder: Any = importlib.import_module("huggingface_hub._local_folder")
    result: dict[str, Any] = {"ok": True, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=local_folder.__file__, version=huggingface_hub.__version__)
    metadata = lay_out(folder)
    failures: list[tuple[str, Exception, bool]] = []
    readers = (("download", download, "read_download_metadata"), ("upload", upload, "read_upload_metadata"))
    for kind, check, reader in readers:
        try:
            check(folder)
        except Exception as error:  # the probe reports every failure of the real code, whatever it is
            # The bug: the metadata reader discards the bad file, then reads the metadata it never built.
            bug = isinstance(error, UnboundLocalError) and raised_in(error, reader, local_folder.__file__)
            failures.append((kind, error, bug))
            continue
        if metadata[kind].exists():
            failures.append((kind, ValueError(f"the cut-short {metadata[kind].name} was not removed"), False))
    if failures:  # a failure that is not the bug goes first: the patch would not cure it
        failures.sort(key=lambda failure: failure[2])
        # error_type names the first failure's kind of error; the others name their own
        said = "; ".join(
            f"[{kind} metadata] {f'{type(error).__name__}: ' if index else ''}{error}"
            for index, (kind, error, _) in enumerate(failures)
        )
        result.update(ok=False, bug=all(bug for *_, bug in failures), error_type=type(failures[0][1]).__name__)
        result["error"] = " ".join(said.split())[:400]
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    try:
        os.environ.update(
            HF_HUB_OFFLINE="1",  # the download finds the file in the folder: it needs no server
            HF_HOME=str(scratch / "home"),
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
            HF_HUB_VERBOSITY="error",
        )
        (scratch / "folder").mkdir()
        result = run(scratch / "folder")
    except Exception as error:  # laying out the folder or importing huggingface_hub failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
