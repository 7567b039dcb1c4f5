"""`hfpatch verify` for transformers-gas-5.5.4, run in the target interpreter: torch and accelerate, CPU, no network.

In transformers 5.2.0 to 5.5.3 Trainer.create_accelerator_and_postprocess hands num_steps=gradient_accumulation_steps
to Accelerate's GradientAccumulationPlugin, so Accelerator.backward divides the loss by N again after the Trainer
has (outside DeepSpeed): with gradient_accumulation_steps=N>1 every update is N times too small. 5.5.4 passes
num_steps=1: the Trainer alone accumulates.

It takes one SGD step (learning rate 0.1, no clipping) of a 4->1 linear model on 4 fixed samples twice, with a batch
of 4 and no accumulation, and with a batch of 2 accumulated over 2 steps: the same update, mathematically. Right:
the two updates agree. The bug: the accumulated one is half the other. It prints one JSON line: ok, bug, error_type,
error, loader_file (transformers.trainer's file), version, and needs where torch or accelerate is absent.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

MODULE = "transformers.trainer"
ACCUMULATED = 2  # gradient_accumulation_steps of the second run: the bug makes its update 1/2 of the first


def missing() -> str | None:
    """What the Trainer needs that this interpreter cannot import."""
    for name in ("torch", "accelerate"):
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def toy_model(torch: Any) -> Any:
    """A 4->1 linear model, the same weights each time, whose forward returns the batch's MSE loss."""

    def init(self: Any) -> None:
        torch.nn.Module.__init__(self)
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(4, 1)

    def forward(self: Any, x: Any, y: Any) -> dict[str, Any]:
        return {"loss": torch.nn.functional.mse_loss(self.lin(x).squeeze(-1), y)}

    return type("Toy", (torch.nn.Module,), {"__init__": init, "forward": forward})()


def run(scratch: Path) -> dict[str, Any]:
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    transformers.logging.set_verbosity_error()
    generator = torch.Generator().manual_seed(1)
    data = [{"x": torch.randn(4, generator=generator), "y": torch.randn((), generator=generator)} for _ in range(4)]

    def update(batch: int, accumulation: int) -> tuple[float, Any]:
        """The size of one optimizer step's change to the weights, and the accelerator's own accumulation steps."""
        model = toy_model(torch)
        before = model.lin.weight.detach().clone()
        args = transformers.TrainingArguments(
            output_dir=str(scratch / f"out-{batch}x{accumulation}"),
            max_steps=1,
            per_device_train_batch_size=batch,
            gradient_accumulation_steps=accumulation,
            optim="sgd",
            learning_rate=0.1,
            lr_scheduler_type="constant",
            max_grad_norm=0.0,
            use_cpu=True,
            report_to="none",
            save_strategy="no",
            logging_strategy="no",
            disable_tqdm=True,
            seed=0,
        )
        trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
        trainer.train()
        change = float((model.lin.weight.detach() - before).norm().item())
        return change, trainer.accelerator.gradient_accumulation_steps

    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result["version"] = transformers.__version__
    whole, _ = update(4, 1)
    accumulated, steps = update(4 // ACCUMULATED, ACCUMULATED)
    ratio = accumulated / whole
    found = (
        f"one SGD step: batch 4 x accumulation 1 moves the weights by {whole:.6f}, batch 2 x accumulation 2 by "
        f"{accumulated:.6f} (ratio {ratio:.3f}; Accelerator.gradient_accumulation_steps={steps})"
    )
    result["measured"] = found
    if abs(ratio - 1) < 1e-3:
        result["ok"] = True
    elif abs(ratio - 1 / ACCUMULATED) < 1e-3:
        result.update(bug=True, error_type="GradientScaleError", error=f"the loss is divided twice: {found}")
    else:
        result.update(error_type="GradientScaleError", error=f"the updates disagree, not by 1/2: {found}")
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
