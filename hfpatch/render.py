"""What a person reads and what a program reads: the results of a command as text, or as one JSON document.

Conditions and actions are rendered by their enum values here and nowhere else.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import hfpatch
from hfpatch import state
from hfpatch.commands import EnvironmentResult, exit_code
from hfpatch.engine import Outcome
from hfpatch.entry import Patch
from hfpatch.errors import ExitCode
from hfpatch.facts import FileFacts

JSON_SCHEMA = 3


def text(results: Sequence[EnvironmentResult], show_diff: bool, out: TextIO) -> None:
    for result in results:
        if result.environment is None:
            if result.error:
                print(f"hfpatch: error: {result.error}", file=sys.stderr)
            continue
        print(_heading(result), file=out)
        for outcome in result.outcomes:
            print(f"  {outcome.patch.id}: {label(outcome)}: {outcome.message}", file=out)
            for note in outcome.notes:
                print(f"    note: {note}", file=out)
            if show_diff and outcome.diff:
                out.write(outcome.diff)
        if result.obsolete:
            print(f"  obsolete: {result.obsolete}", file=out)
        if result.error:
            print(f"hfpatch: error: {result.error}", file=sys.stderr)


def interruption(command: str, results: Sequence[EnvironmentResult], err: TextIO) -> None:
    """Ctrl-C: where the run stopped and what that environment holds now, in one sentence on stderr."""
    stopped = next((result for result in results if result.interrupted), None)
    if stopped is None:
        return
    later = sum(result.not_reached for result in results)
    rest = f"; {later} more {'environment was' if later == 1 else 'environments were'} not reached" if later else ""
    print(f"hfpatch: {command} interrupted {stopped.interrupted}{rest}.", file=err)


def label(outcome: Outcome) -> str:
    """The condition where nothing was done, else what was done: one word that the sentence does not repeat."""
    return outcome.condition.value if outcome.action.changed_nothing else outcome.action.value


def _heading(result: EnvironmentResult) -> str:
    assert result.environment is not None
    python = result.environment.python
    found = [
        f"{found.distribution} {found.version or '(no version metadata)'} at {found.package_dir}"
        for found in result.environment.installations
    ]
    suffix = f" ({'; '.join(found)})" if found else ""
    return f"{python.executable} [Python {python.version}]{suffix}"


def catalog_listing(patches: Sequence[Patch], out: TextIO) -> None:
    for patch in patches:
        print(f"{patch.id}: {patch.title}", file=out)
        fixed = f"fixed in {patch.distribution} {patch.fixed_in}" if patch.fixed_in else "fixed in no release yet"
        print(f"  upstream {patch.upstream} ({patch.url}), {fixed}", file=out)
        for file in patch.files:
            print(f"  changes {file.target_names} in {file.file} ({patch.directory})", file=out)
    print("", file=out)


def json_document(command: str, results: Sequence[EnvironmentResult], out: TextIO) -> None:
    print(json.dumps(_document(command, results), indent=2), file=out)


def json_error(command: str, error: str, out: TextIO) -> None:
    """The one document a --json caller reads when the command could not run at all."""
    print(json.dumps(_document(command, [], error=error), indent=2), file=out)


def _document(command: str, results: Sequence[EnvironmentResult], error: str | None = None) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "hfpatch_version": hfpatch.__version__,
        "command": command,
        "exit_code": int(ExitCode.ERROR if error else exit_code(results)),
        "error": error,
        "environments": [_environment(result) for result in results],
    }


def _environment(result: EnvironmentResult) -> dict[str, Any]:
    python = None if result.environment is None else result.environment.python
    return {
        "python": python.executable if python else result.requested,
        "python_version": python.version if python else None,
        "error": result.error,
        "obsolete": result.obsolete,
        "exit_code": int(result.exit_code),
        "interrupted": result.interrupted,
        "not_reached": result.not_reached,
        "patches": [_outcome(outcome) for outcome in result.outcomes],
    }


def _file(file: FileFacts) -> dict[str, Any]:
    return {"file": str(file.path), "sha256": file.source_sha256}


def _outcome(outcome: Outcome) -> dict[str, Any]:
    patch, facts = outcome.patch, outcome.facts
    installation = None if facts is None else facts.installation
    return {
        "id": patch.id,
        "upstream": patch.upstream,
        "url": patch.url,
        "fixed_in": patch.fixed_in,
        "distribution": patch.distribution,
        "condition": outcome.condition.value,
        "action": outcome.action.value,
        "exit_code": int(outcome.exit_code),
        "message": outcome.message,
        "notes": list(outcome.notes),
        "version": None if installation is None else installation.version,
        # The patch's first file (all a patch of schema 2 had), then every file.
        "file": None if facts is None or not facts.files else str(facts.first.path),
        "file_sha256": None if facts is None or not facts.files else facts.first.source_sha256,
        "files": [] if facts is None else [_file(file) for file in facts.files],
        "state": None if facts is None or facts.state is None else state.as_json(facts.state),
        "diff": outcome.diff,
    }
