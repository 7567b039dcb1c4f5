"""`hfpatch verify` for transformers-43140 (CVE-2026-1839), run in the target interpreter: torch and accelerate, CPU.

Trainer._load_rng_state in transformers 4.52.1 to 4.57.6 unpickles a checkpoint's rng_state.pth with torch.load and no
weights_only, so resuming from a crafted checkpoint runs the pickle's code. torch 2.6 and later default torch.load to
weights_only=True, which hides the hole unless TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 is set (the documented switch for old
checkpoints; an explicit weights_only=True overrides it): the probe sets it, as on torch<2.6 where the hole is open.

It trains a 4->1 linear model for 2 steps on CPU in a scratch directory (a checkpoint at each step), resumes from
checkpoint-2 once as saved, then replaces checkpoint-2/rng_state.pth with a pickle whose __reduce__ writes a marker
file and resumes again. Right: the plain resume works, and the crafted file is refused (UnpicklingError) without
running. The bug: the marker is written. It removes the scratch directory and prints one JSON line: ok, bug,
error_type, error, loader_file (transformers.trainer's file), version, and needs where torch or accelerate is absent.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pickle
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

MODULE = "transformers.trainer"


def missing() -> str | None:
    """What the Trainer needs that this interpreter cannot import."""
    for name in ("torch", "accelerate"):
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def toy_model(torch: Any) -> Any:
    """A 4->1 linear model whose forward takes a batch's x and y and returns its MSE loss, as the Trainer wants."""

    def init(self: Any) -> None:
        torch.nn.Module.__init__(self)
        self.lin = torch.nn.Linear(4, 1)

    def forward(self: Any, x: Any, y: Any) -> dict[str, Any]:
        return {"loss": torch.nn.functional.mse_loss(self.lin(x).squeeze(-1), y)}

    return type("Toy", (torch.nn.Module,), {"__init__": init, "forward": forward})()


class Payload:
    """Pickles as a call of exec that writes the marker: what a crafted rng_state.pth holds."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return exec, (f"open({str(self.marker)!r}, 'w').write('pickled code ran')",)


def run(scratch: Path) -> dict[str, Any]:
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # before torch is imported
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result["version"] = transformers.__version__
    torch.manual_seed(0)
    data = [{"x": torch.randn(4), "y": torch.randn(())} for _ in range(8)]

    def train(max_steps: int, resume: Path | None = None) -> None:
        args = transformers.TrainingArguments(
            output_dir=str(scratch / "out"),
            max_steps=max_steps,
            save_steps=1,
            per_device_train_batch_size=2,
            use_cpu=True,
            report_to="none",
            logging_strategy="no",
            disable_tqdm=True,
        )
        trainer = transformers.Trainer(model=toy_model(torch), args=args, train_dataset=data)
        trainer.train(resume_from_checkpoint=None if resume is None else str(resume))

    train(2)
    checkpoint = scratch / "out" / "checkpoint-2"
    try:
        train(3, checkpoint)
    except Exception as error:  # the plain resume must work: a failure here is not the bug
        result.update(error_type=type(error).__name__, error=f"resuming from a checkpoint as saved: {error}"[:400])
        return result

    premise, marker = scratch / "premise", scratch / "marker"
    torch.save({"python": Payload(premise)}, str(scratch / "premise.pth"))
    torch.load(str(scratch / "premise.pth"))  # torch.load as 4.57.6 calls it: must run the pickle, or nothing is shown
    if not premise.exists():
        result.update(error_type="ProbeError", error="torch.load without weights_only did not run a pickle here")
        return result

    torch.save({"python": Payload(marker)}, str(checkpoint / "rng_state.pth"))
    refusal: Exception | None = None
    try:
        train(3, checkpoint)
    except Exception as error:  # the fixed code refuses the file with UnpicklingError; anything else is reported
        refusal = error
    if marker.exists():
        after = "" if refusal is None else f"; the resume then failed with {type(refusal).__name__}"
        result.update(
            bug=True,
            error_type="CodeExecution",
            error=f"Trainer.train(resume_from_checkpoint=...) ran the code pickled in rng_state.pth{after}",
        )
    elif isinstance(refusal, pickle.UnpicklingError):
        result["ok"] = True
    elif refusal is None:
        result.update(
            error_type="ProbeError", error="the crafted rng_state.pth loaded without error and without running"
        )
    else:
        result.update(error_type=type(refusal).__name__, error=f"resuming from the crafted checkpoint: {refusal}"[:400])
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    warnings.filterwarnings("ignore")
    spec = importlib.util.find_spec(MODULE)  # the file, without importing torch
    loader_file = None if spec is None else spec.origin
    needs = missing()
    if needs is not None:
        result: dict[str, Any] = {"ok": False, "bug": False, "needs": needs, "error_type": "ModuleNotFoundError"}
        result.update(error=f"the Trainer needs {needs}, which this interpreter cannot import")
    else:
        scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
        try:
            result = run(scratch)
        except Exception as error:  # training the toy model or importing transformers failed: not the bug
            result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    result["loader_file"] = loader_file
    print(json.dumps(result))


if __name__ == "__main__":
    main()
