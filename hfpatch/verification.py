"""`hfpatch verify`: run each patch's probe with the real code in the application's interpreter.

A probe is a script of the catalog entry, run with `python -c` in the application's interpreter, in an empty scratch
directory removed after, with Hugging Face's offline switches on and a Hugging Face home of its own. Its last line on
stdout is one JSON object: `ok` (true: the behaviour is right), `bug` (the failure is the bug the patch fixes),
`error_type`, `error`, `loader_file` (the file of the patched module that the interpreter imports), and `needs` (what
the real code needs that the interpreter lacks, such as torch: nothing is proven). A probe that prints no such line is
broken (exit 2), whatever the code it runs: the README's "Probes" is the protocol.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from hfpatch import reasons
from hfpatch.diagnosis import CHECK_EXIT, Condition
from hfpatch.errors import ExitCode
from hfpatch.plan import Action

if TYPE_CHECKING:
    from hfpatch.engine import Outcome
    from hfpatch.environment import Python
    from hfpatch.reasons import Reason

PROBE_TIMEOUT = 600


def verify(checked: Outcome) -> Outcome:
    """What the probe says of the real code, given what `check` found; the engine calls it for `verify`."""
    patch, facts = checked.patch, checked.facts
    installation = None if facts is None else facts.installation
    if facts is None or installation is None:
        return _with(checked, Action.NOTHING_TO_VERIFY, ExitCode.OK, checked.message)
    if checked.condition in (Condition.NOT_APPLICABLE, Condition.FIXED_UPSTREAM, Condition.NOT_COVERED):
        # The release does not carry the code the patch is for, or is one the entry was not written from: the patch
        # leaves it, so there is nothing of hfpatch's to prove (what a probe says of another form of the code is
        # no advice hfpatch can follow), and a probe of a later release can be slow.
        return _with(checked, Action.NOT_NEEDED, CHECK_EXIT[checked.condition], checked.message)
    if CHECK_EXIT[checked.condition] is ExitCode.ERROR:
        # Edited or unknown code, or hfpatch's own state in doubt: whatever a probe says, that is the news.
        return checked
    if patch.probe is None:
        message: Reason = reasons.DigestsOnly(patch.id, checked.message)
        return _with(checked, Action.NO_PROBE, CHECK_EXIT[checked.condition], message)
    try:
        result = _run_probe(patch.probe, facts.python)
    except ProbeBroken as broken:
        message = reasons.BrokenProbe(patch.probe, str(broken))
        return _with(checked, Action.PROBE_BROKEN, ExitCode.ERROR, message)
    needs = result.get("needs")
    if not result.get("ok") and isinstance(needs, str) and needs:
        # What the real code needs to run is absent here (torch, say): the code cannot run, so nothing is proven.
        message = reasons.ProbeNeeds(needs, facts.python.executable, patch.id, checked.message)
        return _with(checked, Action.NOT_VERIFIED, CHECK_EXIT[checked.condition], message)
    where = str(result.get("loader_file") or "")
    paths = [installation.path_of(file.file) for file in patch.files]
    imported, expected = (Path(where), paths[0]) if where and Path(where) not in paths else (None, None)
    if result.get("ok"):
        context = None if checked.condition is Condition.APPLIED else checked.message
        return _with(checked, Action.VERIFIED, ExitCode.OK, reasons.Works(context, imported, expected))
    failure = _one_line(f"{result.get('error_type', 'failure')}: {result.get('error', 'no detail')}")
    if result.get("bug"):
        live = reasons.BugLive(patch.upstream, failure, checked.advice, imported, expected)
        return _with(checked, Action.VERIFY_FAILED, ExitCode.ACTION_NEEDED, live)
    failed = reasons.ProbeFailed(failure, imported, expected)
    return _with(checked, Action.VERIFY_FAILED, ExitCode.ERROR, failed)


def _one_line(text: str) -> str:
    """A probe's error as one line of the report, however many lines the real code's message has."""
    return " ".join(text.split())


def _with(checked: Outcome, action: Action, code: ExitCode, message: Reason) -> Outcome:
    return checked._replace(action=action, exit_code=code, message=message)


class ProbeBroken(Exception):
    """The probe itself failed: it could not be run, did not finish, or its last line is not the result."""


# What `verify` takes from the environment for the probe: Hugging Face's offline switches on, a Hugging Face home
# of its own in the scratch directory (so that nothing the probe downloads or builds, remote code among it, lands
# in the user's caches), no bytecode written.
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_CACHES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_MODULES_CACHE", "HF_DATASETS_CACHE")


def probe_environment(scratch: Path) -> dict[str, str]:
    """The environment a probe runs in, given its scratch directory."""
    env = {name: value for name, value in os.environ.items() if name not in _CACHES}
    env.update(_OFFLINE, PYTHONDONTWRITEBYTECODE="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(scratch / "hf-home"))
    return env


def _run_probe(probe: Path, python: Python) -> dict[str, object]:
    """The probe's result, run in a scratch directory that is removed after; ProbeBroken if there is none."""
    try:
        source = probe.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProbeBroken(f"it cannot be read ({error})") from None
    with tempfile.TemporaryDirectory(prefix="hfpatch-verify-") as scratch:
        try:
            done = subprocess.run(
                [python.executable, "-c", source],
                capture_output=True,
                text=True,
                errors="replace",
                cwd=scratch,
                env=probe_environment(Path(scratch)),
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ProbeBroken(f"it did not finish within {PROBE_TIMEOUT} s") from None
        except OSError as error:
            raise ProbeBroken(f"{python.executable} could not run it ({error.strerror or error})") from None
    return _result_of(done)


def _result_of(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    lines = done.stdout.strip().splitlines()
    try:
        parsed = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool):
        return parsed
    said = (done.stderr.strip().splitlines() or [""])[-1].strip()
    exited = f"it exited with {done.returncode}"
    if isinstance(parsed, dict):
        what = 'its last line is a JSON object without a true or false "ok"'
    elif lines:
        what = "its last line on stdout is not a JSON object"
    else:
        what = "it printed nothing on stdout"
    raise ProbeBroken(f"{exited} and {what}" + (f" ({said})" if said else ""))
