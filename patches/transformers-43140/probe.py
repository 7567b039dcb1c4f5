"""`hfpatch verify` for transformers-43140 (CVE-2026-1839), run in the target interpreter: torch and accelerate, CPU.

Trainer._load_rng_state in transformers 4.16.0 to 4.50.3 and 4.52.1 to 4.57.6 unpickles a checkpoint's rng_state.pth
with torch.load and no weights_only, so resuming from a crafted checkpoint runs the pickle's code. torch 2.6 and later
default torch.load to weights_only=True, which hides the hole unless TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 is set (the
documented switch for old checkpoints; an explicit weights_only=True overrides it): the probe sets it, as on torch<2.6
where the hole is open.

It trains a 4->1 linear model for 2 steps on CPU in a scratch directory (a checkpoint at each step), resumes from
checkpoint-2 once as saved, then replaces checkpoint-2/rng_state.pth with a pickle whose __reduce__ writes a marker
file and resumes again. Right: the plain resume works, and the crafted file is refused (UnpicklingError) without
running. The bug: the marker is written.

The fix's other half refuses torch older than 2.6, whose weights_only loader runs code too (CVE-2025-32434): 4.51.x
loads with weights_only=True and lacks that refusal. Such a torch cannot be installed here, so where the crafted file
was refused the probe calls the installed Trainer._load_rng_state on the checkpoint as saved while this process's
torch reports 2.5.1 (torch.__version__ and its distribution's metadata version, transformers' cached version checks
cleared): right, it raises ValueError; the bug, it hands the file to torch.load (watched, called through).

It removes the scratch directory and prints one JSON line: ok, bug, error_type, error, loader_file
(transformers.trainer's file), version, and needs where torch or accelerate is absent.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import pickle
import random
import shutil
import sys
import tempfile
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MODULE = "transformers.trainer"
OLD_TORCH = "2.5.1"


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


def _clear_version_caches() -> None:
    """transformers caches what it found of torch (functools.lru_cache on its version checks)."""
    utils = sys.modules.get("transformers.utils.import_utils")
    for value in vars(utils).values() if utils is not None else ():
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            clear()


@contextlib.contextmanager
def torch_reporting(torch: Any, reported: str) -> Iterator[None]:
    """This process's torch reports `reported`, as transformers reads it (torch.__version__, the metadata)."""
    real_version, real_metadata = torch.__version__, importlib.metadata.version

    def metadata_version(distribution_name: str) -> str:
        return reported if distribution_name == "torch" else real_metadata(distribution_name)

    torch.__version__, importlib.metadata.version = reported, metadata_version
    _clear_version_caches()
    try:
        yield
    finally:
        torch.__version__, importlib.metadata.version = real_version, real_metadata
        _clear_version_caches()


def on_old_torch(torch: Any, load_rng_state: Any) -> dict[str, Any]:
    """The refusal of torch<2.6: the installed method, on a checkpoint as saved, where torch reports 2.5.1. The bug
    is that it hands the file to torch.load at all (watched, and called through); the fix raises ValueError first."""
    loads: list[object] = []
    real_load = torch.load

    def watched_load(*args: Any, **kwargs: Any) -> Any:
        loads.append(args[0] if args else kwargs.get("f"))
        return real_load(*args, **kwargs)

    refusal: Exception | None = None
    torch.load = watched_load
    try:
        with torch_reporting(torch, OLD_TORCH):
            load_rng_state()
    except Exception as error:  # the fixed code refuses with ValueError; anything else is reported
        refusal = error
    finally:
        torch.load = real_load
    if loads:
        after = "" if refusal is None else f" (then {type(refusal).__name__})"
        return {
            "bug": True,
            "error_type": "OldTorchLoad",
            "error": (
                f"Trainer._load_rng_state handed rng_state.pth to torch.load where torch reports {OLD_TORCH}{after}: "
                "it does not refuse torch older than 2.6, whose torch.load runs code from the file even with "
                "weights_only=True (CVE-2025-32434)"
            ),
        }
    if isinstance(refusal, ValueError) and "2.6" in str(refusal):
        return {"ok": True}
    what = "no error" if refusal is None else f"{type(refusal).__name__}: {refusal}"
    return {"error_type": "ProbeError", "error": f"resuming where torch reports {OLD_TORCH}: {what}"[:400]}


def stand_in(transformers: Any) -> Any:
    """What Trainer._load_rng_state reads of its Trainer, as a Trainer on one CPU process has it."""
    not_distributed = transformers.training_args.ParallelMode.NOT_DISTRIBUTED
    args = types.SimpleNamespace(local_rank=-1, world_size=1, process_index=0, parallel_mode=not_distributed)
    return types.SimpleNamespace(args=args)


def saved_checkpoint(torch: Any, scratch: Path) -> Path:
    """A checkpoint whose rng_state.pth holds what Trainer._save_rng_state saves on one CPU process."""
    np: Any = importlib.import_module("numpy")
    checkpoint = scratch / "checkpoint"
    checkpoint.mkdir()
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()}
    torch.save(state, str(checkpoint / "rng_state.pth"))
    return checkpoint


def resumers(transformers: Any, torch: Any, scratch: Path, result: dict[str, Any]) -> tuple[Path, Any, Any]:
    """A checkpoint, how to resume from it, and how to load its RNG state alone. A Trainer trained 2 steps and
    resumed where this interpreter's accelerate can build the release's Trainer; where it cannot (accelerate 1.x
    refuses arguments that 4.45 and older pass, and TrainingArguments before 4.34 has no use_cpu), the installed
    Trainer._load_rng_state itself, on a checkpoint written as Trainer._save_rng_state writes one."""
    torch.manual_seed(0)
    data = [{"x": torch.randn(4), "y": torch.randn(())} for _ in range(8)]

    def trainer_for(max_steps: int) -> Any:
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
        return transformers.Trainer(model=toy_model(torch), args=args, train_dataset=data)

    try:
        trainer_for(2).train()
    except Exception as error:  # no resume has run: what fails is building or training the Trainer, not the bug
        result["via"] = "Trainer._load_rng_state"
        result["how"] = f"the method called alone: no Trainer here ({type(error).__name__}: {error})"[:300]
        checkpoint = saved_checkpoint(torch, scratch)
        holder = stand_in(transformers)

        def load_alone() -> None:
            transformers.Trainer._load_rng_state(holder, str(checkpoint))

        return checkpoint, load_alone, load_alone
    result["via"] = "Trainer.train(resume_from_checkpoint=...)"
    checkpoint = scratch / "out" / "checkpoint-2"
    return (
        checkpoint,
        lambda: trainer_for(3).train(resume_from_checkpoint=str(checkpoint)),
        lambda: trainer_for(3)._load_rng_state(str(checkpoint)),
    )


def run(scratch: Path) -> dict[str, Any]:
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # before torch is imported
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result["version"] = transformers.__version__
    checkpoint, resume, load_rng_state = resumers(transformers, torch, scratch, result)
    try:
        resume()
    except Exception as error:  # the plain resume must work: a failure here is not the bug
        result.update(error_type=type(error).__name__, error=f"resuming from a checkpoint as saved: {error}"[:400])
        return result

    premise, marker = scratch / "premise", scratch / "marker"
    torch.save({"python": Payload(premise)}, str(scratch / "premise.pth"))
    torch.load(str(scratch / "premise.pth"))  # torch.load as 4.57.6 calls it: must run the pickle, or nothing is shown
    if not premise.exists():
        result.update(error_type="ProbeError", error="torch.load without weights_only did not run a pickle here")
        return result

    shutil.copyfile(checkpoint / "rng_state.pth", scratch / "rng_state.saved")
    torch.save({"python": Payload(marker)}, str(checkpoint / "rng_state.pth"))
    refusal: Exception | None = None
    try:
        resume()
    except Exception as error:  # the fixed code refuses the file with UnpicklingError; anything else is reported
        refusal = error
    if marker.exists():
        after = "" if refusal is None else f"; the resume then failed with {type(refusal).__name__}"
        result.update(
            bug=True,
            error_type="CodeExecution",
            error=f"{result['via']} ran the code pickled in rng_state.pth{after}",
        )
    elif isinstance(refusal, pickle.UnpicklingError):
        shutil.copyfile(scratch / "rng_state.saved", checkpoint / "rng_state.pth")
        result.update(on_old_torch(torch, load_rng_state))
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
