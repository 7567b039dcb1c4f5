"""`hfpatch verify`: run each patch's probe with the real loader in the target interpreter."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hfpatch import engine
from hfpatch.catalog import Patch
from hfpatch.environment import Installation, Interpreter
from hfpatch.errors import ExitCode

PROBE_TIMEOUT = 600


def verify(patch: Patch, interpreter: Interpreter, installation: Installation | None) -> engine.Outcome:
    assessment = engine.assess(patch, interpreter, installation)
    if installation is None:
        return engine.Outcome(assessment, "verified", f"nothing to verify: {assessment.summary}", ExitCode.OK)
    result = _run_probe(patch, interpreter)
    where = str(result.get("loader_file") or "")
    shadow = (
        f" (the interpreter imports {where}, not {assessment.target})"
        if where and assessment.target and Path(where) != assessment.target
        else ""
    )
    if result.get("ok"):
        return engine.Outcome(
            assessment,
            "verified",
            f"the real loader works here{shadow}: {_context(assessment)}",
            ExitCode.OK,
        )
    failure = f"{result.get('error_type', 'failure')}: {result.get('error', 'no detail')}"
    if result.get("into_blobs"):
        return engine.Outcome(
            assessment,
            "verify-failed",
            f"the bug of {patch.upstream} is live here{shadow}: {failure}; run `hfpatch apply`",
            ExitCode.ACTION_NEEDED,
        )
    return engine.Outcome(assessment, "verify-failed", f"the real loader failed{shadow}: {failure}", ExitCode.ERROR)


def _context(assessment: engine.Assessment) -> str:
    condition = assessment.condition
    if condition is engine.Condition.FIXED_UPSTREAM:
        return "this release has the upstream fix, no patch needed"
    if condition is engine.Condition.APPLIED:
        return "the patch is applied and in effect"
    return assessment.summary


def _run_probe(patch: Patch, interpreter: Interpreter) -> dict[str, object]:
    module = patch.load(patch.probe_module)
    assert module.__file__ is not None
    source = Path(module.__file__).read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [interpreter.executable, "-c", source],
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
