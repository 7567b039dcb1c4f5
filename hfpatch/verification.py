"""`hfpatch verify`: run each patch's probe with the real code in the application's interpreter.

A probe is a script of the catalog entry, run with `python -c` in the application's interpreter. Its last line on stdout
is one JSON object: `ok` (the behaviour is right), `bug` (the failure is the bug the patch fixes), `error_type`,
`error`, and `loader_file` (the file of the patched module that the interpreter imports).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from hfpatch.diagnosis import CHECK_EXIT, Condition
from hfpatch.errors import ExitCode
from hfpatch.plan import Action

if TYPE_CHECKING:
    from hfpatch.engine import Outcome
    from hfpatch.environment import Python

PROBE_TIMEOUT = 600


def verify(checked: Outcome) -> Outcome:
    """What the probe says of the real code, given what `check` found; the engine calls it for `verify`."""
    patch, facts = checked.patch, checked.facts
    installation = None if facts is None else facts.installation
    if facts is None or installation is None:
        return _with(checked, Action.NOTHING_TO_VERIFY, ExitCode.OK, checked.message)
    if checked.condition in (Condition.NOT_APPLICABLE, Condition.FIXED_UPSTREAM):
        # The release does not carry the code the patch is for: nothing of hfpatch's to prove, and a probe of a
        # later release can be slow (huggingface_hub 1.x retries a refused connection for most of a minute).
        return _with(checked, Action.NOT_NEEDED, CHECK_EXIT[checked.condition], checked.message)
    if CHECK_EXIT[checked.condition] is ExitCode.ERROR:
        # Edited or unknown code, or hfpatch's own state in doubt: whatever a probe says, that is the news.
        return checked
    if patch.probe is None:
        message = f"{patch.id} is checked by its digests only ({checked.message})"
        return _with(checked, Action.NO_PROBE, CHECK_EXIT[checked.condition], message)
    result = _run_probe(patch.probe, facts.python)
    where = str(result.get("loader_file") or "")
    paths = [installation.path_of(file.file) for file in patch.files]
    shadow = f" (the interpreter imports {where}, not {paths[0]})" if where and Path(where) not in paths else ""
    if result.get("ok"):
        message = f"the real code works here{shadow}: {_context(checked)}"
        return _with(checked, Action.VERIFIED, ExitCode.OK, message)
    failure = f"{result.get('error_type', 'failure')}: {result.get('error', 'no detail')}"
    if result.get("bug"):
        advice = f"; {checked.advice}" if checked.advice else ""
        message = f"the bug of {patch.upstream} is live here{shadow}: {failure}{advice}"
        return _with(checked, Action.VERIFY_FAILED, ExitCode.ACTION_NEEDED, message)
    return _with(checked, Action.VERIFY_FAILED, ExitCode.ERROR, f"the real code failed{shadow}: {failure}")


def _with(checked: Outcome, action: Action, code: ExitCode, message: str) -> Outcome:
    return checked._replace(action=action, exit_code=code, message=message)


def _context(checked: Outcome) -> str:
    if checked.condition is Condition.APPLIED:
        return "the patch is applied and in effect"
    return checked.message


def _run_probe(probe: Path, python: Python) -> dict[str, object]:
    source = probe.read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [python.executable, "-c", source],
            capture_output=True,
            text=True,
            env=env,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"ok": False, "error_type": type(error).__name__, "error": str(error)}
    lines = done.stdout.strip().splitlines()
    try:
        parsed = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"ok": False, "error_type": "ProbeCrashed", "error": last}
    return parsed
