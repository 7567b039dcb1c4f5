"""How strong is the fast suite? Put each hand-written defect into a copy of hfpatch and run the suite against it.

Every mutant breaks one guarantee the README makes. The suite must fail for each; the script prints which test
caught it and exits 1 if any mutant survives (or no longer applies: the code moved, so the list needs care).

    python scripts/mutants.py [NAME ...]      (nox -s mutants)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    guarantee: str
    file: str
    old: str
    new: str


MUTANTS = [
    Mutant(
        "mode-not-kept",
        "the file keeps its mode",
        "hfpatch/files.py",
        "old.st_mode & 0o7777 if old else (0o644 if mode is None else mode)",
        "0o644",
    ),
    Mutant(
        "no-rollback",
        "a failed apply puts the original back",
        "hfpatch/executor.py",
        "        _roll_back(installation, facts, saved, original, fresh)\n",
        "        pass\n",
    ),
    Mutant(
        "no-fsync-before-rename",
        "the new bytes are on disk before the rename",
        "hfpatch/files.py",
        "                os.fsync(handle.fileno())\n",
        "",
    ),
    Mutant(
        "no-directory-fsync",
        "the rename is made durable",
        "hfpatch/files.py",
        "    fsync_directory(path.parent)\n",
        "",
    ),
    Mutant(
        "write-in-place",
        "the new file is a new inode (hard links keep their bytes), replaced atomically",
        "hfpatch/files.py",
        "            os.replace(temporary, path)  # noqa: PTH105",
        "            path.write_bytes(data)  # noqa: PTH105",
    ),
    Mutant(
        "revert-over-edits",
        "revert refuses a file edited since apply",
        "hfpatch/plan.py",
        "    if condition is Condition.EDITED and not options.force:\n",
        "    if False:\n",
    ),
    Mutant(
        "no-lock",
        "writers are serialised by the environment's lock",
        "hfpatch/engine.py",
        "    with files.locked(state.lock_file(installation.root), executor.LOCK_TIMEOUT):\n",
        "    if True:\n",
    ),
    Mutant(
        "four-arguments-need-the-patch",
        "a form the fix must not be applied to is not applicable",
        "hfpatch/classify.py",
        "        return Finding(target, form.verdict, _form_detail(target, form))\n",
        "        return Finding(target, Verdict.NEEDS_PATCH if form.verdict is Verdict.NOT_APPLICABLE"
        " else form.verdict, _form_detail(target, form))\n",
    ),
    Mutant(
        "no-stale-state",
        "a state left by another install is never restored over it",
        "hfpatch/diagnosis.py",
        "    stale = saved is not None and (\n",
        "    stale = False and (\n",
    ),
    Mutant(
        "backup-not-verified",
        "revert restores only a backup that is exactly the original",
        "hfpatch/facts.py",
        "    if hashlib.sha256(backup).hexdigest() != saved.before_sha256:\n",
        "    if False:\n",
    ),
    Mutant(
        "record-line-not-updated",
        "the distribution's RECORD describes the patched file",
        "hfpatch/executor.py",
        "        _set_record_line(installation, patch.file, wheelrecord.line_for(patch.file, new))\n",
        "",
    ),
    Mutant(
        "record-line-endings-lost",
        "RECORD keeps its line endings (pip writes CRLF)",
        "hfpatch/wheelrecord.py",
        "    return start, end if carriage_return < 0 else carriage_return\n",
        "    return start, end\n",
    ),
    Mutant(
        "bytecode-not-refreshed",
        "no cached bytecode runs the old code",
        "hfpatch/executor.py",
        "    cached = bytecode.cached_files(file)\n",
        "    cached = []\n",
    ),
    Mutant(
        "bytecode-mode-lost",
        "bytecode is rebuilt in the invalidation mode it had",
        "hfpatch/bytecode.py",
        '        {"cfile": str(item.path), "optimize": item.optimize, "mode": item.mode}\n',
        '        {"cfile": str(item.path), "optimize": item.optimize, "mode": "TIMESTAMP"}\n',
    ),
    Mutant(
        "stale-bytecode-unseen",
        "check sees an unchecked-hash .pyc that runs other code",
        "hfpatch/facts.py",
        "    if not candidates:\n        return ()\n",
        "    return ()\n",
    ),
    Mutant(
        "links-followed",
        "hfpatch never writes through a symbolic link",
        "hfpatch/facts.py",
        "        if path.is_symlink():\n",
        "        if False:\n",
    ),
    Mutant(
        "root-owns-what-it-creates",
        "files hfpatch creates belong to the directory's owner",
        "hfpatch/files.py",
        "    if os.geteuid() != 0:\n        return  # only root",
        "    if True:\n        return  # only root",
    ),
    Mutant(
        "read-only-unexplained",
        "a read-only filesystem is named as such",
        "hfpatch/files.py",
        "    if error.errno == errno.EROFS:\n",
        "    if False:\n",
    ),
    Mutant(
        "advice-drops-options",
        "suggested commands repeat the user's --python and --patch",
        "hfpatch/commands.py",
        '        for option, values in (("--python", pythons), ("--patch", patch_ids), ("--catalog", catalogs)):\n',
        "        for option, values in ():\n",
    ),
    Mutant(
        "lock-of-a-removed-file",
        "two runs never hold the lock together, although a revert removes the lock file",
        "hfpatch/files.py",
        "            if _still_at(descriptor, lock_file):\n",
        "            if True:\n",
    ),
    Mutant(
        "transform-result-unchecked",
        "nothing is written unless every target comes out exactly fixed",
        "hfpatch/rewrite.py",
        "    _check(result, source, patch)\n",
        "",
    ),
]


def _copy_project(where: Path) -> Path:
    # The suite runs hfpatch as another user too (tests/test_ownership.py): the copy must be readable by all.
    where.chmod(0o755)
    copy = where / "project"
    for name in ("hfpatch", "patches", "tests"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    return copy


def _apply(mutant: Mutant, copy: Path) -> bool:
    path = copy / mutant.file
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        return False
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return True


def _suite(copy: Path) -> tuple[int, str]:
    # PYTHONPATH puts the mutated copy before the installed hfpatch, for the suite and for every hfpatch it starts.
    env = {**os.environ, "PYTHONPATH": str(copy), "HFPATCH_EXPECT_TRANSFORMERS": "none"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        "-m",
        "not transformers and not readme",
        # The packaging tests build and install a wheel of the checkout: no mutant of the code speaks to them.
        "--ignore=tests/test_packaging.py",
    ]
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, check=False)
    failed = re.findall(r"^FAILED (\S+)", done.stdout, flags=re.MULTILINE)
    errors = re.findall(r"^ERROR (\S+)", done.stdout, flags=re.MULTILINE)
    return done.returncode, (failed or errors or [done.stdout.strip().splitlines()[-1] if done.stdout else "?"])[0]


def main(names: list[str]) -> int:
    chosen = [mutant for mutant in MUTANTS if not names or mutant.name in names]
    with tempfile.TemporaryDirectory(prefix="hfpatch-mutant-") as scratch:
        code, first_failure = _suite(_copy_project(Path(scratch)))
    if code != 0:
        print(f"the suite fails without any mutant ({first_failure}); fix that first")
        return 2
    survivors = []
    print(f"{'mutant':32} {'caught by':80} seconds")
    for mutant in chosen:
        with tempfile.TemporaryDirectory(prefix="hfpatch-mutant-") as scratch:
            copy = _copy_project(Path(scratch))
            if not _apply(mutant, copy):
                print(f"{mutant.name:32} {'DOES NOT APPLY: the code it mutates changed':80}")
                survivors.append(mutant.name)
                continue
            started = time.monotonic()
            code, caught_by = _suite(copy)
            seconds = time.monotonic() - started
        if code == 0:
            survivors.append(mutant.name)
            caught_by = "SURVIVED"
        elif "::" not in caught_by:  # an error while collecting: the mutant broke the code, the suite proved nothing
            survivors.append(mutant.name)
            caught_by = f"BROKEN MUTANT (collection failed: {caught_by})"
        print(f"{mutant.name:32} {caught_by:80} {seconds:.0f}", flush=True)
    if survivors:
        print(f"\n{len(survivors)} of {len(chosen)} mutants not caught: {', '.join(survivors)}")
        return 1
    print(f"\nall {len(chosen)} mutants caught")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
