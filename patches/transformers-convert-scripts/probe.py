"""`hfpatch verify` for transformers-convert-scripts, run in the target interpreter: torch, CPU, no network.

transformers up to 4.47.1 ships its models' conversion scripts (transformers/models/*/convert_*.py), which load the
checkpoint or config they are given with pickle, torch.load, yaml.load or eval: run on a file someone else made,
they run its code (CVE-2024-11392, -11393, -11394, CVE-2025-14920, -14921, -14924, -14926 to -14929). 4.48.0
stopped shipping them. The entry takes their code out of an installed release (each file emptied, its original
kept for `revert`).

The attack: the Reformer script (CVE-2024-11394) run as its documentation says, `python -m
transformers.models.reformer.convert_reformer_trax_checkpoint_to_pytorch`, on a tiny config and a "Trax checkpoint"
whose pickle writes a marker file when it is loaded. The bug: the marker is written. Right: it is not (the emptied
script runs nothing). Every other script the advisories name must hold no code either, where the release ships it.
It prints one JSON line: ok, bug, error_type, error, loader_file (the Reformer script's file), needs where torch is
absent.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SCRIPT = "transformers.models.reformer.convert_reformer_trax_checkpoint_to_pytorch"
# The other scripts the advisories name, as modules (each where the release ships it).
NAMED = [
    "transformers.models.mobilevitv2.convert_mlcvnets_to_pytorch",
    "transformers.models.maskformer.convert_maskformer_swin_to_pytorch",
    "transformers.models.maskformer.convert_maskformer_resnet_to_pytorch",
    "transformers.models.perceiver.convert_perceiver_haiku_to_pytorch",
    "transformers.models.transfo_xl.convert_transfo_xl_original_tf_checkpoint_to_pytorch",
    "transformers.models.deprecated.transfo_xl.convert_transfo_xl_original_tf_checkpoint_to_pytorch",
    "transformers.models.megatron_gpt2.convert_megatron_gpt2_checkpoint",
    "transformers.models.sew.convert_sew_original_pytorch_checkpoint_to_pytorch",
    "transformers.models.sew_d.convert_sew_d_original_pytorch_checkpoint_to_pytorch",
    "transformers.models.hubert.convert_distilhubert_original_s3prl_checkpoint_to_pytorch",
    "transformers.models.hubert.convert_hubert_original_pytorch_checkpoint_to_pytorch",
    "transformers.models.x_clip.convert_x_clip_original_pytorch_to_hf",
]


class Payload:
    """A "checkpoint" whose unpickling writes the marker file, and nothing else."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('unpickled')",))


def _origin(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:  # a package of the path is not in this release
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def _attack(scratch: Path) -> tuple[bool, str]:
    """Run the Reformer script on the crafted checkpoint: whether the marker was written, and what the run said."""
    marker = scratch / "marker"
    config = scratch / "config.json"
    config.write_text(json.dumps({"is_decoder": True, "attn_layers": ["local", "lsh"]}), encoding="utf-8")
    checkpoint = scratch / "model.pkl"
    checkpoint.write_bytes(pickle.dumps(Payload(marker)))
    arguments = ["--trax_model_pkl_path", str(checkpoint), "--config_file", str(config)]
    command = [sys.executable, "-m", SCRIPT, *arguments, "--pytorch_dump_path", str(scratch / "out.bin")]
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, timeout=400)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return marker.exists(), last


def main() -> dict[str, Any]:
    loader = _origin(SCRIPT)
    result: dict[str, Any] = {"loader_file": str(loader) if loader else None}
    if importlib.util.find_spec("torch") is None:
        return result | {"ok": False, "needs": "torch", "error": "the Reformer script imports torch"}
    if loader is None:
        return result | {"ok": False, "error_type": "ModuleNotFoundError", "error": f"{SCRIPT} is not installed"}
    scratch = Path(tempfile.mkdtemp(prefix="convert-scripts-"))
    try:
        unpickled, said = _attack(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if unpickled:
        return result | {"ok": False, "bug": True, "error_type": "CodeExecution", "error": "the script ran the pickle"}
    if loader.stat().st_size:
        # The script holds code, yet the payload did not run: the real code failed before loading it.
        return result | {"ok": False, "error_type": "ScriptFailed", "error": said or "the script failed"}
    with_code = [name for name in NAMED if (origin := _origin(name)) is not None and origin.stat().st_size]
    if with_code:
        return result | {"ok": False, "bug": True, "error_type": "ScriptShipped", "error": f"{with_code[0]} has code"}
    return result | {"ok": True}


if __name__ == "__main__":
    try:
        outcome = main()
    except Exception as error:  # the probe's verdict is its last line, whatever failed
        outcome = {"ok": False, "error_type": type(error).__name__, "error": str(error)}
    print(json.dumps(outcome))
