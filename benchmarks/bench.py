"""What hfpatch costs, next to what a runtime monkeypatch costs every process.

Run it with the interpreter of an environment that has hfpatch and an affected transformers installed:

    python benchmarks/bench.py [--runs N]

It prints, over N rounds in one go, the median wall time of each, and the median of its ratio to the import in
the same round: a bare interpreter start; `hfpatch check` of the built-in catalog, and of it with a team catalog of
`--team` entries (default 50) beside it, before and after apply, and of it with `--absent` entries (default 500) of
distributions that are not installed; `hfpatch apply` of one patch on a fresh copy of the
target each time, the team catalog beside it; and `python -c "import transformers.dynamic_module_utils"`, the
import a runtime monkeypatch must pay in every process. The team catalog's entries are the built-in
transformers-40669's, each for a distribution of its own that is not installed: a team's fixes of the other
libraries it uses, which an environment without them should barely pay for. Each team catalog has its index
(hfpatch.index), as `hfpatch new` leaves it; an hfpatch that knows no index reads every entry.
The environment's own transformers is never written: apply runs on a private copy that is imported first through
PYTHONPATH.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hfpatch import catalog
from hfpatch.entry import ENTRY

TARGET = Path("transformers") / "dynamic_module_utils.py"


def timed(command: list[str], env: dict[str, str], expect: set[int]) -> float:
    start = time.perf_counter()
    # Never from the repository: `-m hfpatch` there would run the source tree instead of the installed wheel.
    done = subprocess.run(command, env=env, capture_output=True, check=False, cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def private_copy(scratch: Path, files: list[Path]) -> Path:
    """The installed transformers, hard-linked, except `files` and RECORD, which apply writes: those are copies."""
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("transformers is not installed in this environment")
    root = Path(next(iter(spec.submodule_search_locations))).parent
    site = scratch / "site"
    shutil.copytree(root / "transformers", site / "transformers", copy_function=os.link)
    for dist_info in root.glob("transformers-*.dist-info"):
        shutil.copytree(dist_info, site / dist_info.name)
    for private in files:
        data = (site / private).read_bytes()
        (site / private).unlink()
        (site / private).write_bytes(data)
    return site


# A fix of three files: transformers 5.5.1 reshapes the attention of every model by the input's shape (one change,
# cherry-picked onto 5.5.0); three of those files make a patch of three files, written by `hfpatch new`.
THREE_FILES = {
    "transformers.models.bart.modeling_bart": "BartAttention.forward",
    "transformers.models.bert.modeling_bert": "BertCrossAttention.forward",
    "transformers.models.clip.modeling_clip": "CLIPAttention.forward",
}
THREE_FILES_ON = "5.5.0"


def three_file_entry(where: Path) -> str:
    """The entry `hfpatch new` writes for THREE_FILES from the wheels of 5.5.0 and 5.5.1 (the package index)."""
    targets = [word for module, name in THREE_FILES.items() for word in ("--target", f"transformers:{module}:{name}")]
    command = [sys.executable, "-m", "hfpatch", "new", "attention-5.5.1", *targets, "--fixed-in", "5.5.1"]
    command += ["--since", THREE_FILES_ON, "--catalog", str(where), "--cache", str(where.parent / "wheels")]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"hfpatch new exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return "attention-5.5.1"


def team_catalog(where: Path, count: int, prefix: str = "teamlib") -> Path:
    """`count` entries as big as a real one, each for a made-up distribution that is not installed."""
    import json

    template = catalog.builtin_catalog() / "transformers-40669"
    data = json.loads((template / "patch.json").read_text(encoding="utf-8"))
    for number in range(count):
        name = f"{prefix}{number:03d}"
        directory = where / f"{name}-1"
        shutil.copytree(template / "fixed", directory / "fixed")
        entry = {**data, "id": directory.name, "distribution": name, "probe": None}
        del entry["probe"]
        entry["files"] = [
            {
                **file,
                "module": file["module"].replace("transformers", name),
                "file": file["file"].replace("transformers", name),
            }
            for file in data["files"]
        ]
        (directory / "patch.json").write_text(json.dumps(entry, indent=2), encoding="utf-8")
    try:
        from hfpatch import index
    except ImportError:  # an hfpatch before the index: its entries are all it reads
        return where
    index.write(where)
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--team", type=int, default=50, help="entries in the team catalog beside the built-in one")
    parser.add_argument(
        "--absent", type=int, default=500, help="entries of distributions not installed, in a catalog of their own"
    )
    parser.add_argument(
        "--three-files",
        action="store_true",
        help=f"instead: check and apply of a patch of three files (in an environment of transformers {THREE_FILES_ON})",
    )
    options = parser.parse_args()
    runs = options.runs
    hfpatch = [sys.executable, "-m", "hfpatch"]
    python = [sys.executable, "-c"]
    with tempfile.TemporaryDirectory(prefix="hfpatch-bench-") as scratch_name:
        scratch = Path(scratch_name)
        if options.three_files:
            patch_id = three_file_entry(scratch / "team")
            written = [Path(*module.split(".")).with_suffix(".py") for module in THREE_FILES]
        else:
            patch_id, written = "transformers-46618", [TARGET]
        site = private_copy(scratch, written)
        env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
        originals = {path: (site / path).read_bytes() for path in written}
        (record,) = site.glob("transformers-*.dist-info/RECORD")
        original_record = record.read_bytes()

        def reset() -> None:
            for path, data in originals.items():
                (site / path).unlink()
                (site / path).write_bytes(data)
            record.write_bytes(original_record)
            shutil.rmtree(site / ".hfpatch", ignore_errors=True)
            for cache in site.glob("transformers/**/__pycache__"):
                shutil.rmtree(cache, ignore_errors=True)

        bare = ("bare interpreter start (python -c pass)", lambda: timed([*python, "pass"], env, {0}))
        yardstick = (
            "python -c 'import transformers.dynamic_module_utils'",
            lambda: timed([*python, "import transformers.dynamic_module_utils"], env, {0}),
        )
        # One measurement of each per round, in rotation, so that every row sees the same machine conditions.
        measures: list[tuple[str, Callable[[], float]]]
        if options.three_files:
            own = {**env, "HFPATCH_CATALOG": str(scratch / "team")}
            only = ["--patch", patch_id]
            measures = [
                bare,
                (
                    "hfpatch check, a patch of three files (exit 1)",
                    lambda: timed([*hfpatch, "check", *only], own, {1}),
                ),
                ("hfpatch apply, a patch of three files", lambda: timed([*hfpatch, "apply", *only], own, {0})),
                (
                    "hfpatch check, a patch of three files, patched",
                    lambda: timed([*hfpatch, "check", *only], own, {0}),
                ),
                yardstick,
            ]
        else:
            team = team_catalog(scratch / "team", options.team)
            with_team = {**env, "HFPATCH_CATALOG": str(team)}
            absent = team_catalog(scratch / "absent", options.absent, prefix="absentlib")
            with_absent = {**env, "HFPATCH_CATALOG": str(absent)}
            built_in = len(list(catalog.builtin_catalog().glob(f"*/{ENTRY}")))
            measures = [
                bare,
                (f"hfpatch check, {built_in} built-in entries (exit 1)", lambda: timed([*hfpatch, "check"], env, {1})),
                (
                    f"hfpatch check, {built_in} + {options.team} team entries (exit 1)",
                    lambda: timed([*hfpatch, "check"], with_team, {1}),
                ),
                (
                    f"hfpatch check, {built_in} + {options.absent} entries not installed (exit 1)",
                    lambda: timed([*hfpatch, "check"], with_absent, {1}),
                ),
                (
                    f"hfpatch apply --patch {patch_id} (team catalog too)",
                    lambda: timed([*hfpatch, "apply", "--patch", patch_id], with_team, {0}),
                ),
                (
                    f"hfpatch check, {built_in} + {options.team} team entries, patched",
                    lambda: timed([*hfpatch, "check"], with_team, {0, 1}),
                ),
                yardstick,
            ]
        samples: dict[str, list[float]] = {name: [] for name, _ in measures}
        for round_number in range(runs + 1):
            reset()
            for name, measure in measures:
                elapsed = measure()
                if round_number:  # the first round only warms the page cache
                    samples[name].append(elapsed)
    baseline = samples[measures[-1][0]]
    # The ratio is taken in each round (both sides measured within seconds of each other) and its median printed:
    # the machine's load drifts over a run more than either figure does within a round.
    rows = [
        (name, statistics.median(values), statistics.median(v / b for v, b in zip(values, baseline, strict=True)))
        for name, values in samples.items()
    ]
    version = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print(m.version('transformers'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"Python {sys.version.split()[0]}, transformers {version}, {runs} runs each, median wall time")
    print(f"{'what':<64} {'median':>10} {'vs import':>10}")
    for name, seconds, ratio in rows:
        print(f"{name:<64} {seconds * 1000:>8.1f} ms {ratio:>9.3f}x")


if __name__ == "__main__":
    main()
