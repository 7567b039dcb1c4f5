"""A pytest plugin for scripts/mutants.py's recording run: what each test reaches, by line, and how long it took.

Coverage starts in every Python process that COVERAGE_PROCESS_START names a configuration to (coverage's own .pth
file does it), the pytest workers and every hfpatch a test runs alike. In a worker this plugin names the coverage
context after the test that runs; a subprocess takes its context from PYTEST_CURRENT_TEST, which it inherits (the
configuration says `context = ${PYTEST_CURRENT_TEST-}`). Each test's duration goes to the file
HFPATCH_MUTANT_DURATIONS names, one JSON line per test, so that the tests that reach a mutant run fastest first.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

# coverage.py, by name: mypy reads benchmarks/coverage.py as the module `coverage`.
coverage: Any = importlib.import_module("coverage")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    current = coverage.Coverage.current()
    if current is not None:
        current.switch_context(item.nodeid)
    try:
        return (yield)
    finally:
        if current is not None:
            current.switch_context("")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    durations = os.environ.get("HFPATCH_MUTANT_DURATIONS")
    if durations is None:
        return
    line = {"test": report.nodeid, "when": report.when, "seconds": report.duration, "outcome": report.outcome}
    with open(durations, "a", encoding="utf-8") as handle:  # noqa: PTH123
        handle.write(json.dumps(line) + "\n")


def pytest_sessionfinish(session: pytest.Session) -> None:
    current = coverage.Coverage.current()
    if current is not None:  # an xdist worker may not get to coverage's own atexit save
        current.stop()
        current.save()
