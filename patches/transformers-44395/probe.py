"""`hfpatch verify` for transformers-44395 (CVE-2026-4372), run in the target interpreter: torch, CPU, no network.

In transformers 5.1.0 and 5.2.0 PreTrainedConfig.__init__ sets every unknown key of config.json as an attribute,
the private _attn_implementation_internal too, so from_pretrained takes a repo id written there for a requested
attention kernel and has the kernels package download and import that repo's code, without trust_remote_code. 5.3.0
skips the two private keys.

It saves a tiny Llama in a scratch directory, writes "_attn_implementation_internal": "attacker/evil-kernel" into its
config.json, and puts a stand-in kernels distribution (0.12.0) first on sys.path whose get_kernel(), where the real
one downloads and imports the repo, writes a marker file. Then AutoModelForCausalLM.from_pretrained(the directory).
Right: the model loads and the marker is not written. The bug: it is. It removes the scratch directory and prints
one JSON line: ok, bug, error_type, error, loader_file (transformers.configuration_utils' file), version, and needs
where torch is absent.
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

MODULE = "transformers.configuration_utils"
REPO = "attacker/evil-kernel"
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


def run(scratch: Path, marker: Path) -> dict[str, Any]:
    importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result["version"] = transformers.__version__
    model_dir = scratch / "model"
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(str(model_dir))
    config_file = model_dir / "config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    saved["_attn_implementation_internal"] = REPO
    config_file.write_text(json.dumps(saved), encoding="utf-8")

    failure: Exception | None = None
    try:
        transformers.AutoModelForCausalLM.from_pretrained(str(model_dir))
    except Exception as error:  # what from_pretrained did after the kernel ran, or why it failed without it
        failure = error
    if marker.exists():
        after = "" if failure is None else f"; from_pretrained then failed with {type(failure).__name__}"
        result.update(
            bug=True,
            error_type="CodeExecution",
            error=(
                f"AutoModelForCausalLM.from_pretrained (no trust_remote_code) ran the code of the kernel repo {REPO} "
                f"that config.json names in _attn_implementation_internal{after}"
            ),
        )
    elif failure is None:
        result["ok"] = True
    else:
        result.update(error_type=type(failure).__name__, error=f"from_pretrained: {failure}"[:400])
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
