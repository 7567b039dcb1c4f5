r"""`hfpatch verify` for transformers-44395: transformers 5.1.0-5.2.0: from_pretrained of a model whose config.json sets _attn_implementation_internal to a Hub repo id loads that repo as an attention kernel and runs its code, without trust_remote_code, where the kernels package is installed (huggingface/transformers#44395).

hfpatch new wrote this skeleton; until reproduce() is written it stops with NotImplementedError, and verify reports
a broken probe (exit 2). verify runs it with `python -c` (so no __file__) in the application's interpreter, in an
empty scratch directory removed after, with HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1, HF_DATASETS_OFFLINE=1 and a
Hugging Face home of its own (HF_HOME in the scratch directory), for at most 600 s. Its last line on stdout is one
JSON object: ok (true: the code works), bug (true: the failure is the bug the patch fixes), error_type, error, and
loader_file (the file of transformers.configuration_utils that the interpreter imports). The README's "Probes" has the whole protocol.
"""

from __future__ import annotations

import json


def reproduce() -> None:
    """Run the code the fix is for the way the bug shows: return when it works, raise when it fails."""
    raise NotImplementedError("the probe of transformers-44395 is the skeleton hfpatch new wrote: write its reproduce()")


def is_the_bug(error: Exception) -> bool:
    """Whether a failure of reproduce() is the bug the patch fixes (rather than something else going wrong)."""
    return False


def main() -> None:
    import transformers.configuration_utils as patched

    result = {"ok": False, "bug": False, "error_type": "", "error": "", "loader_file": patched.__file__}
    try:
        reproduce()
    except NotImplementedError:
        raise
    except Exception as error:  # every failure of the real code is reported; is_the_bug tells which
        result.update(error_type=type(error).__name__, error=str(error)[:400], bug=is_the_bug(error))
    else:
        result["ok"] = True
    print(json.dumps(result))


main()
