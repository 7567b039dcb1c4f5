"""`hfpatch verify` for transformers#41758 with #41808, run as a script in the target interpreter (no torch or network).

For Qwen2VLConfig and Qwen2_5_VLConfig in turn, it saves a default config in a scratch directory, loads it back with
AutoConfig.from_pretrained and checks what a user reads off the loaded config: model_type is the composite model's
("qwen2_vl"), not its text config's ("qwen2_vl_text", 4.57.0 to 4.57.5: __getattribute__ forwards it to text_config,
whose model_type the loaded config.json set); and name_or_path set on the config is read back and leaves
text_config's alone (4.57.0 to 4.57.4: __setattr__ writes it into text_config; 4.57.5: written on the config but still
read from text_config). It removes the scratch directory and prints one JSON line: ok, bug (the failure is one the
patch fixes), error_type, error, loader_file (transformers.models.qwen2_vl.configuration_qwen2_vl as imported) and
version.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

NAME = "hfpatch/probe-finetune"


class WrongAttribute(Exception):
    """A loaded config reads an attribute of its text config's where its own is meant: the bug the patch fixes."""


def problems(config_class: Any, directory: Path) -> list[str]:
    """Save a default config_class, load it back, and say where it reads or writes text_config's values."""
    from transformers import AutoConfig

    config_class().save_pretrained(str(directory))
    config = AutoConfig.from_pretrained(str(directory))
    name = config_class.__name__
    if type(config) is not config_class:
        raise TypeError(f"AutoConfig loads a saved {name} as {type(config).__name__}")
    text_config, found = config.text_config, []
    if config.model_type != config_class.model_type:
        found.append(f"{name} from config.json has model_type {config.model_type!r}, not {config_class.model_type!r}")
    text_name = text_config.name_or_path
    config.name_or_path = NAME
    if config.name_or_path != NAME:
        found.append(f"{name}.name_or_path = {NAME!r} reads back {config.name_or_path!r}")
    if text_config.name_or_path != text_name:
        found.append(f"{name}.name_or_path = {NAME!r} sets text_config's")
    return found


def run(scratch: Path) -> dict[str, Any]:
    import transformers
    import transformers.models.qwen2_vl.configuration_qwen2_vl as patched
    from transformers import Qwen2_5_VLConfig, Qwen2VLConfig

    transformers.logging.set_verbosity_error()
    result: dict[str, Any] = {"ok": False, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=patched.__file__, version=transformers.__version__)
    try:
        found = [each for kind in (Qwen2VLConfig, Qwen2_5_VLConfig) for each in problems(kind, scratch / kind.__name__)]
        if found:
            raise WrongAttribute("; ".join(found))
    except Exception as error:  # the probe reports every failure of the real code, whatever it is
        bug = isinstance(error, WrongAttribute)
        result.update(error_type=type(error).__name__, error=str(error)[:600], bug=bug)
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
    except Exception as error:  # importing transformers or its Qwen-VL configs failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
