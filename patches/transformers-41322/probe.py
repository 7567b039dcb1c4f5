"""`hfpatch verify` for transformers#41322, run as a script in the target interpreter (torch not needed, no network).

It parses a training command line with the real HfArgumentParser(TrainingArguments), as every run_*.py example and
TRL script does: `--lr_scheduler_type cosine_with_min_lr --lr_scheduler_kwargs '{"min_lr": 1e-06}'`. In 4.57.0 to
4.57.4 the field is annotated Union[dict[str, Any], str], which the parser turns into type=dict, so argparse rejects
the JSON string ("invalid dict value") and exits with status 2; 4.57.5's Optional[Union[dict, str]] field takes the
string, which TrainingArguments.__post_init__ loads as a dict. Where torch is installed, __post_init__ sets up the
device with accelerate: a command line the parser takes then needs accelerate to become TrainingArguments, and without
it the probe says so ("needs"), as it does where 4.56.x's parser cannot read TrainingArguments without accelerate. It
prints one JSON line: ok, bug (the command line is rejected for --lr_scheduler_kwargs), error_type, error, needs,
loader_file (transformers.training_args as imported) and version.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

KWARGS = {"min_lr": 1e-06}


class Rejected(Exception):
    """HfArgumentParser refused the command line (argparse printed an error and exited)."""


def parse(output_dir: Path) -> Any:
    """The TrainingArguments that the command line gives; Rejected where the parser exits."""
    from transformers import HfArgumentParser, TrainingArguments

    argv = ["--output_dir", str(output_dir), "--lr_scheduler_type", "cosine_with_min_lr"]
    argv += ["--lr_scheduler_kwargs", json.dumps(KWARGS)]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            (arguments,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(argv)
    except SystemExit as exited:  # argparse's way of refusing a command line
        last = (said.getvalue().strip().splitlines() or ["no message"])[-1]
        raise Rejected(f"HfArgumentParser(TrainingArguments) exited with {exited.code}: {last}") from None
    return arguments


def needs_accelerate(error: Exception) -> bool:
    """Whether the real code failed for want of accelerate, not for the bug: with torch installed, TrainingArguments
    sets up its device with accelerate; and 4.56.x (older than the entry covers) annotates a field with accelerate's
    ParallelismConfig, imported only where accelerate 1.10.1 is, which HfArgumentParser then cannot resolve."""
    if isinstance(error, ImportError):
        return "accelerate" in str(error)
    unresolved = error.__context__
    return (
        isinstance(error, RuntimeError) and isinstance(unresolved, NameError) and unresolved.name == "ParallelismConfig"
    )


def run(scratch: Path) -> dict[str, Any]:
    import transformers
    import transformers.training_args as patched

    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=patched.__file__, version=transformers.__version__)
    try:
        arguments = parse(scratch / "output")
        if arguments.lr_scheduler_kwargs != KWARGS:
            raise ValueError(f"--lr_scheduler_kwargs {json.dumps(KWARGS)} gives {arguments.lr_scheduler_kwargs!r}")
    except Exception as error:  # the probe reports every failure of the real code, whatever it is
        bug = isinstance(error, Rejected) and "--lr_scheduler_kwargs" in str(error)
        result.update(error_type=type(error).__name__, error=str(error)[:400], bug=bug)
        if needs_accelerate(error):
            result["needs"] = "accelerate"
    else:
        result["ok"] = True
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    os.environ.update(HF_HUB_OFFLINE="1", HF_HOME=str(scratch / "home"), TRANSFORMERS_VERBOSITY="error")
    try:
        result = run(scratch)
    except Exception as error:  # importing transformers or its training arguments failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
