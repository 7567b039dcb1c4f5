"""How strong is the fast suite? Put each hand-written defect into a copy of hfpatch and run the suite against it.

Every mutant breaks one guarantee the README makes. The suite must fail for each; the script prints which test
caught it and exits 1 if any mutant survives (or no longer applies: the code moved, so the list needs care).
The first twenty guard the engine; the others the parts written later (`hfpatch new`'s judging and assembling,
reading wheels, the entry format and catalogs, the CLI over several environments, and what classify, diagnosis,
rewrite and executor do there), each a plausible refactoring slip that the suite of its day did not catch.

    python scripts/mutants.py [NAME ...]      (nox -s mutants)
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# coverage.py, by name: mypy reads benchmarks/coverage.py as the module `coverage`.
coverage: Any = importlib.import_module("coverage")

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    guarantee: str
    file: str
    old: str
    new: str


MUTANTS = [
    # ------------------------------------------------------------------------------------------------ the engine
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
        "            _roll_back(facts, installation, written, previous)\n",
        "            pass\n",
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
        "        return TargetClassification(target, form.verdict, _form_detail(target, form))\n",
        "        return TargetClassification(target, Verdict.NEEDS_PATCH if form.verdict is Verdict.NOT_APPLICABLE"
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
        "    if hashlib.sha256(original).hexdigest() != saved.original_sha256:\n",
        "    if False:\n",
    ),
    Mutant(
        "record-line-not-updated",
        "the distribution's RECORD describes the patched file",
        "hfpatch/executor.py",
        "            _set_record_line(\n"
        "                installation, plan.facts.file, plan.record_line or "
        "wheelrecord.line_for(plan.facts.file, plan.after)\n"
        "            )\n",
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
        "        if os.path.islink(path) if path == first else _is_link(path):  # noqa: PTH114\n",
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
        "    _check(result, source, patch, file, expected)\n",
        "",
    ),
    Mutant(
        "no-other-entries",
        "reverting one of two patches of a file rebuilds it with the other's fix",
        "hfpatch/cli.py",
        "        lookup=catalog.finder(catalogs),\n",
        "",
    ),
    Mutant(
        "reverting-journal-ignored",
        "a revert killed after its state still knows the file holds the patch (the original is kept)",
        "hfpatch/executor.py",
        "            within = _without(within, patch_id) if applying else _with(within, patch_id)\n",
        "            within = _without(within, patch_id) if applying else within\n",
    ),
    Mutant(
        "others-interrupted-run-ignored",
        "no patch writes a file while another patch's run of it is interrupted",
        "hfpatch/plan.py",
        "    if other is not None and {Step.PATCH, Step.RESTORE} & set(decided.steps):\n",
        "    if False:\n",
    ),
    Mutant(
        "a-class-and-its-method-both-selected",
        "two patches of one statement, or of a class and a statement in it, are refused together",
        "hfpatch/catalog.py",
        "    return one == other or _inside(one, other) or _inside(other, one)\n",
        "    return one == other\n",
    ),
    Mutant(
        "others-0.2-state-unread",
        "a new patch of a file hfpatch 0.2 patched keeps the original",
        "hfpatch/facts.py",
        "        implied |= {file: held for file, held in theirs.items() if file in mine}\n",
        "",
    ),
    # ------------------------------------------------------------------ hfpatch new: judging and assembling the entry
    Mutant(
        "helper-names-unchecked",
        "a patch never raises NameError: the names an inserted helper uses are checked against the old module too",
        "hfpatch/new/judge.py",
        "        if change.shape is Shape.DELETE:\n            continue\n"
        "        unit = statements.find(patched, change.key)\n",
        "        if change.shape is not Shape.REPLACE:\n            continue\n"
        "        unit = statements.find(patched, change.key)\n",
    ),
    Mutant(
        "binding-decorator-by-full-name",
        "a method that became a property, classmethod or cached_property (however spelt) is not applicable",
        "hfpatch/new/judge.py",
        '    last = name.rsplit(".", 1)[-1]\n',
        "    last = name\n",
    ),
    Mutant(
        "kwargs-outside-the-signature",
        "a fix that drops **kwargs would break its callers: not applicable",
        "hfpatch/new/judge.py",
        "    if arguments.kwarg is not None:\n",
        "    if False:\n",
    ),
    Mutant(
        "pre-release-after-the-fix-judged-by-text",
        "a pre-release after --fixed-in has the fix, whatever its text",
        "hfpatch/new/judge.py",
        "    if fixed_in is not None and versions.is_at_least(release, fixed_in):\n        # Upstream kept",
        "    if fixed_in is not None and versions.is_final_at_least(release, fixed_in):\n        # Upstream kept",
    ),
    Mutant(
        "a-moved-caller-taken-out",
        "a target the fix moved is patched where the release has it, its helper inserted after it as upstream has it",
        "hfpatch/new/judge.py",
        "        differing.setdefault(difference.key, difference)\n",
        "        differing[difference.key] = difference\n",
    ),
    # ------------------------------------------------------------------------------- hfpatch new: the command
    Mutant(
        "walk-back-stops-at-a-release-without-a-wheel",
        "the walk back goes on past a release that has no wheel",
        "hfpatch/new/reading.py",
        "            if key in reading.texts and not _defines_any(reading.texts[key], keys, key):\n",
        "            if not _defines_any(reading.texts.get(key, {}), keys, key):\n",
    ),
    # ----------------------------------------------------------------------------------------- reading wheels
    Mutant(
        "find-links-names-lowercased",
        "a distribution's wheels are found by its normalised name (PEP 503), not by lower-casing",
        "hfpatch/new/wheels.py",
        "    wanted = canonicalize_name(distribution)\n",
        "    wanted = distribution.lower()\n",
    ),
    Mutant(
        "dist-info-found-by-plain-name",
        "a wheel's .dist-info is found by the normalised name",
        "hfpatch/new/wheels.py",
        'canonicalize_name(top[: -len(".dist-info")].rsplit("-", 1)[0]) == self.name]',
        'top[: -len(".dist-info")].rsplit("-", 1)[0].lower() == self.name]',
    ),
    Mutant(
        "cache-keyed-by-spelling",
        "the wheel cache is one directory per distribution, however its name is spelt",
        "hfpatch/new/wheels.py",
        "        self.cache = cache / canonicalize_name(distribution)\n",
        "        self.cache = cache / distribution\n",
    ),
    Mutant(
        "platform-wheel-preferred",
        "of a release's wheels, the pure-Python one is read (a compiled one may lack the .py)",
        "hfpatch/new/wheels.py",
        '    return sorted(paths, key=lambda path: (not path.name.endswith("-none-any.whl"), path.name))[0]\n',
        "    return sorted(paths, key=lambda path: path.name)[0]\n",
    ),
    Mutant(
        "deflate-errors-uncaught",
        "a damaged member of a deflated wheel is one line naming the wheel and the member",
        "hfpatch/new/wheels.py",
        "    zipfile.BadZipFile, zlib.error, OSError,",
        "    zipfile.BadZipFile, OSError,",
    ),
    # ------------------------------------------------------------------------------------- entries and catalogs
    Mutant(
        "known-file-keys-unchecked",
        "a misspelt key of a known file is refused, never read as absent",
        "hfpatch/entry.py",
        '    _known_keys(data, "a known file")\n',
        "",
    ),
    Mutant(
        "patched-digest-unchecked",
        "a known file's patched_sha256 is a sha256",
        "hfpatch/entry.py",
        '        patched_sha256=_digest(data, "patched_sha256") if "patched_sha256" in data else None,\n',
        '        patched_sha256=data.get("patched_sha256"),\n',
    ),
    Mutant(
        "fixed-text-crlf-kept",
        "a fixed text checked out with CRLF line endings is the same fixed text",
        "hfpatch/entry.py",
        '    return path.read_text(encoding="utf-8").replace("\\r\\n", "\\n").rstrip("\\n")\n',
        '    return path.read_bytes().decode("utf-8").rstrip("\\n")\n',
    ),
    Mutant(
        "an-entry-given-as-a-catalog-unexplained",
        "--catalog naming an entry says to give the directory that holds it",
        "hfpatch/catalog.py",
        "        if number > 0 and ((catalog / ENTRY).is_file() or (catalog / OLD_ENTRY).is_file()):\n",
        "        if False:\n",
    ),
    # ------------------------------------------------------------------------------ the CLI over environments
    Mutant(
        "a-broken-python-stops-the-rest",
        "one unusable --python does not stop the others",
        "hfpatch/commands.py",
        "        for result in results:\n            _resolve(result)\n",
        "        for result in results:\n            _resolve(result)\n            if result.error:\n"
        "                break\n",
    ),
    Mutant(
        "exit-code-of-the-last-environment",
        "the exit code is the worst of every environment's",
        "hfpatch/commands.py",
        "    return max((result.exit_code for result in results), default=ExitCode.OK)\n",
        "    return results[-1].exit_code if results else ExitCode.OK\n",
    ),
    Mutant(
        "text-stops-at-a-broken-environment",
        "every environment is reported, those after an unusable one too",
        "hfpatch/render.py",
        '            print(f"hfpatch: error: {result.error}", file=sys.stderr)\n            continue\n',
        '            print(f"hfpatch: error: {result.error}", file=sys.stderr)\n            return\n',
    ),
    Mutant(
        "json-error-only-for-usage-errors",
        "--json prints one document on every error, a bad catalog entry too",
        "hfpatch/cli.py",
        '        if args is not None and getattr(args, "as_json", False):',
        '        if isinstance(error, UsageError) and getattr(args, "as_json", False):',
    ),
    Mutant(
        "advice-names-every-python",
        "each environment's advice names its own --python",
        "hfpatch/cli.py",
        "        return commands.suggestion([given] if given else [], args.patch_ids, args.catalogs, chosen)\n",
        "        return commands.suggestion(args.pythons, args.patch_ids, args.catalogs, chosen)\n",
    ),
    Mutant(
        "obsolete-across-environments",
        "--fail-on-obsolete judges each environment on its own",
        "hfpatch/commands.py",
        "    for result in results:\n        conditions = {outcome.condition for outcome in result.outcomes}\n",
        "    conditions = {outcome.condition for result in results for outcome in result.outcomes}\n"
        "    for result in results:\n",
    ),
    Mutant(
        "not-applicable-keeps-apply-alive",
        "a patch not applicable beside one fixed upstream leaves apply nothing to do: obsolete",
        "hfpatch/commands.py",
        "_DEAD = {Condition.FIXED_UPSTREAM, Condition.NOT_APPLICABLE, Condition.NOT_INSTALLED}\n",
        "_DEAD = {Condition.FIXED_UPSTREAM, Condition.NOT_INSTALLED}\n",
    ),
    Mutant(
        "obsolete-without-an-upstream-fix",
        "only an upstream fix makes apply obsolete; code that predates the bug does not",
        "hfpatch/commands.py",
        " and Condition.FIXED_UPSTREAM in conditions:\n",
        ":\n",
    ),
    # -------------------------------------------------------------------------- reading and deciding the code
    Mutant(
        "not-applicable-over-unknown-code",
        "unknown code in any target is a refusal, even beside a target the fix cannot apply to",
        "hfpatch/classify.py",
        "    for verdict in (None, Verdict.NOT_APPLICABLE):\n",
        "    for verdict in (Verdict.NOT_APPLICABLE, None):\n",
    ),
    Mutant(
        "backported-fix-called-otherwise",
        "a release the catalog lists as fixed has the upstream fix, a maintenance release before fixed_in too",
        "hfpatch/diagnosis.py",
        "    upstream = version in found.released_in or (\n",
        "    upstream = (\n",
    ),
    Mutant(
        "installed-names-lowercased",
        "the installed distribution's dist-info is found by its normalised name",
        "hfpatch/environment.py",
        '    return re.sub(r"[-_.]+", "_", name).lower()\n',
        "    return name.lower()\n",
    ),
    Mutant(
        "a-patch-named-twice-runs-twice",
        "a --patch given twice is acted on once",
        "hfpatch/cli.py",
        "    named = list(dict.fromkeys(args.patch_ids))\n",
        "    named = list(args.patch_ids)\n",
    ),
    Mutant(
        "blank-lines-indented",
        "a blank line of a fixed method stays empty where schema 2's dedented text is placed, so the patched file "
        "is upstream's byte for byte",
        "hfpatch/shapes.py",
        '    return tuple(f"{indent}{line}{newline}" if line.strip() else f"{line}{newline}"'
        ' for line in text.split("\\n"))',
        '    return tuple(f"{indent}{line}{newline}" for line in text.split("\\n"))',
    ),
    Mutant(
        "added-file-overwrites-the-user-s",
        "a file in the place of a module the patch adds, with other bytes, is a user's: never overwritten",
        "hfpatch/shapes.py",
        "    if not source:\n        return Verdict.NEEDS_PATCH,",
        "    if True:\n        return Verdict.NEEDS_PATCH,",
    ),
    # ---------------------------------------------------------------------------------------------- writing
    Mutant(
        "stale-backup-patched-over-a-new-install",
        "after an upgrade, apply patches the release installed now, never the old release's backup",
        "hfpatch/executor.py",
        "            facts = facts._replace(state=None, files=tuple(_forgotten(file) for file in facts.files))\n",
        "            facts = facts._replace(state=None)\n",
    ),
    Mutant(
        "revert-refuses-before-it-clears-a-stale-state",
        "revert clears another install's state first, even where that install has no file to judge",
        "hfpatch/plan.py",
        "    if diagnosis.stale_state:\n        stale = reasons.ClearedReinstalled(",
        "    if condition is Condition.ERROR:\n        return _refused(diagnosis.summary)\n"
        "    if diagnosis.stale_state:\n        stale = reasons.ClearedReinstalled(",
    ),
    Mutant(
        "revert-needs-a-backup-of-an-original-file",
        "revert of a file that holds the original again needs no backup",
        "hfpatch/executor.py",
        "        if file.source_sha256 == file.state.original_sha256:"
        "  # a lost backup matters only where the file is not it\n"
        "            return file.source\n",
        "",
    ),
    # --------------------------------------------------------------- probes, advisories, lazy entries, new's judging
    Mutant(
        "probe-runs-in-the-callers-directory",
        "a probe runs in a scratch directory of its own, never in the directory verify was started from",
        "hfpatch/verification.py",
        "                cwd=scratch,\n",
        "                cwd=None,\n",
    ),
    Mutant(
        "probe-online",
        "a probe runs offline",
        "hfpatch/verification.py",
        "    env.update(_OFFLINE, PYTHONDONTWRITEBYTECODE",
        "    env.update(PYTHONDONTWRITEBYTECODE",
    ),
    Mutant(
        "probe-without-a-result-passes",
        "a probe that prints no result is broken, not a pass",
        "hfpatch/verification.py",
        '    raise ProbeBroken(f"{exited} and {what}" + (f" ({said})" if said else ""))',
        '    return {"ok": True}',
    ),
    Mutant(
        "probe-ok-any-value",
        'a probe\'s "ok" is true or false, nothing else',
        "hfpatch/verification.py",
        'if isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool):',
        'if isinstance(parsed, dict) and "ok" in parsed:',
    ),
    Mutant(
        "broken-probe-exits-0",
        "a broken probe is an error (exit 2)",
        "hfpatch/verification.py",
        "return _with(checked, Action.PROBE_BROKEN, ExitCode.ERROR, message)",
        "return _with(checked, Action.PROBE_BROKEN, ExitCode.OK, message)",
    ),
    Mutant(
        "probe-needs-ignored",
        "a probe that needs what the interpreter lacks proves nothing: not verified, never live",
        "hfpatch/verification.py",
        'if not result.get("ok") and isinstance(needs, str) and needs:',
        "if False:",
    ),
    Mutant(
        "force-writes-the-skeleton-over-the-probe",
        "new --force keeps the author's probe",
        "hfpatch/new/draft.py",
        "            return patch._replace(about=(*patch.about, skeleton.ABOUT)), None\n        return patch, None\n",
        "            return patch._replace(about=(*patch.about, skeleton.ABOUT)), None\n"
        "        return patch, skeleton.skeleton(patch)\n",
    ),
    Mutant(
        "a-later-release-is-judged-as-the-old-one",
        "without --fixed-in, a release later than the fix build with other code is left alone",
        "hfpatch/new/assemble.py",
        "    if header.fixed_in is None and fixed.version is not None and not versions.is_at_least(fixed.version, "
        "release):",
        "    if False:",
    ),
    Mutant(
        "callees-not-compared",
        "new refuses a fix that calls its module's function or class whose signature differs here",
        "hfpatch/new/assemble.py",
        "if ours is None or theirs is None or judge.callee_accepts(patched, fix_source, name):",
        "if True:",
    ),
    Mutant(
        "an-open-advisory-counts-as-fixed",
        "an advisory is fixed only where its patch is applied",
        "hfpatch/advisory.py",
        "    Condition.NEEDS_PATCH: _Kind.NOT_APPLIED,",
        "    Condition.NEEDS_PATCH: _Kind.APPLIED,",
    ),
    Mutant(
        "pip-audit-ignores-open-advisories",
        "check --pip-audit never ignores an advisory that is open here",
        "hfpatch/advisory_render.py",
        "    return status.status in (Status.FIXED, Status.NOT_AFFECTED) and status.listed is True",
        "    return status.listed is True",
    ),
    Mutant(
        "entries-sharing-a-file-read-as-headers",
        "two patches of one statement are refused together, though check reads entries as their headers",
        "hfpatch/catalog.py",
        "(changes if changes is not None else _changes(whole_entry(patch)))",
        "(changes if changes is not None else _changes(patch))",
    ),
    Mutant(
        "quiet-prints-everything",
        "check -q prints only what needs action",
        "hfpatch/render.py",
        "shown = [outcome for outcome in result.outcomes if not view.quiet or outcome.exit_code is not ExitCode.OK]",
        "shown = list(result.outcomes)",
    ),
    Mutant(
        "config-unknown-key-read",
        "a key [tool.hfpatch] does not have is one error line",
        "hfpatch/config.py",
        "    unknown = [key for key in table if key not in KEYS]",
        "    unknown = []",
    ),
    # -------------------------------------------------------------------------- the advisory register and OpenVEX
    Mutant(
        "a-partial-mitigation-counts-as-fixed",
        "an entry that carries part of upstream's fix never makes the advisory fixed",
        "hfpatch/advisory.py",
        "        return status(Status.OPEN, Reason.PARTLY_MITIGATED, partial=partial)",
        "        return status(Status.FIXED, Reason.PATCH_APPLIED, partial=partial)",
    ),
    Mutant(
        "an-advisory-no-entry-speaks-for-goes-unsaid",
        "check names an advisory the release is listed for even where no entry covers the release",
        "hfpatch/advisory.py",
        "    if affected:\n        return status(Status.OPEN, unfixed)\n",
        "    if False:\n        return status(Status.OPEN, unfixed)\n",
    ),
    Mutant(
        "vex-about-every-install-of-the-release",
        "an OpenVEX statement is about this environment, not every install of pkg:pypi/NAME@VERSION",
        "hfpatch/advisory_render.py",
        '        "products": [{"@id": product, "subcomponents": [component]} for product in products],',
        '        "products": [component],',
    ),
    Mutant(
        "vex-affected-without-action",
        "an affected OpenVEX statement says what to do",
        "hfpatch/advisory_render.py",
        '        statement["action_statement"] = action(status, audit)',
        "        pass",
    ),
    Mutant(
        "released-with-the-fix-by-version",
        "the installed code decides every condition: a release after fixed_in that carries the bug needs the patch",
        "hfpatch/diagnosis.py",
        "    try:\n        verdicts = [_identify(facts, file) for file in facts.files]\n",
        "    if (\n"
        "        patch.fixed_in is not None\n"
        "        and versions.is_at_least(installation.version, patch.fixed_in)\n"
        "        and _pristine(facts)\n"
        '        and not any(file.patch_file.known_file(file.source_sha256 or "") for file in facts.files)\n'
        "    ):\n"
        "        return _fixed_upstream(facts, notes, stale)\n"
        "    try:\n        verdicts = [_identify(facts, file) for file in facts.files]\n",
    ),
    # ------------------------------------------------- the two the suite missed (issue 25), each with its test now
    Mutant(
        "new-writes-without-reading-the-entry-back",
        "new reads every release with the entry it is about to write and refuses where that differs from its table",
        "hfpatch/new/assemble.py",
        "    _check_entry(patch, judged, releases)\n",
        "",
    ),
    Mutant(
        "a-catalog-through-a-symlink-is-another",
        "a catalog named twice, through a symlink, relative or with a slash, is read once",
        "hfpatch/catalog.py",
        "        if os.path.realpath(directory) not in seen:\n            seen.add(os.path.realpath(directory))\n",
        "        if os.path.abspath(directory) not in seen:\n            seen.add(os.path.abspath(directory))\n",
    ),
    # ------------------------------------------- one line of a statement's code an entry each (the security round)
    Mutant(
        "two-entries-of-one-statement-always-read",
        "two entries of one statement are refused unless the releases they were written from do not meet",
        "hfpatch/catalog.py",
        "    return versions.is_older(last, other_first) or versions.is_older(other_last, first)\n",
        "    return True\n",
    ),
    Mutant(
        "a-form-without-the-bug-is-refused",
        "a statement in a form the entry knows as fixed is left as it is while another target of its file is patched",
        "hfpatch/entry.py",
        "        form = self.form_of(digest)\n        return form is not None and form.verdict is Verdict.FIXED\n",
        "        return False\n",
    ),
    Mutant(
        "every-entry-of-an-open-advisory-has-its-line",
        "an entry beside the one that decides an open advisory folds into the count line",
        "hfpatch/audit.py",
        "found.update(patch_id for patch_id in named if not deciding or patch_id in deciding)",
        "found.update(named)",
    ),
    Mutant(
        "not-covered-hides-another-entrys-patch",
        "a file another entry patched is never called as released",
        "hfpatch/diagnosis.py",
        "    held = sorted({other for file in facts.files if file.state for other in file.state.patches}"
        " - {patch.id})\n",
        "    held: list[str] = []\n",
    ),
    Mutant(
        "check-by-digest-despite-state",
        "an entry is read whole where hfpatch keeps state in the environment, never decided from its index alone",
        "hfpatch/facts.py",
        "    if _keeps_state(installation.root):\n        return None\n    found: dict[str, str] = {}\n",
        "    found: dict[str, str] = {}\n",
    ),
    Mutant(
        "check-by-digest-of-another-entry",
        "known.jsonl's rows are taken only for the patch.json the index's record was written from",
        "hfpatch/index.py",
        "        if sha256 != record.sha256:\n            return None\n",
        "",
    ),
    Mutant(
        "check-by-digest-of-unknown-code",
        "an installed file no known file lists has the entry read whole (its code parsed)",
        "hfpatch/catalog.py",
        "        if row is None or (row.verdict is entry.Verdict.NOT_APPLICABLE and not row.reason):\n",
        "        if row is not None and (row.verdict is entry.Verdict.NOT_APPLICABLE and not row.reason):\n",
    ),
    Mutant(
        "check-by-headers-of-another-entry",
        "headers.jsonl's line is taken only for the patch.json the index's record was written from",
        "hfpatch/index.py",
        "            if sha256 != record.sha256 or not isinstance(rest, dict):\n",
        "            if not isinstance(rest, dict):\n",
    ),
    Mutant(
        "counted-despite-state",
        "an entry of a package no environment imports is acted on, not counted, where hfpatch keeps its state",
        "hfpatch/commands.py",
        "                and not any(facts.holds_state(root, candidate.id, candidate.files) for root in roots)\n",
        "",
    ),
    Mutant(
        "counted-though-installed",
        "an entry is counted as not installed only where no environment imports its package",
        "hfpatch/commands.py",
        "                if candidate.package in absent\n",
        "                if True\n",
    ),
    # ------------------------------------------------------------------ check's shortcuts (speed): each as found
    Mutant(
        "nothing-here-not-unlisted",
        "a patch none of whose files the release has is judged as _file would find each: missing and unlisted",
        "hfpatch/facts.py",
        "FileFacts(file, installation.path_of(file.file), missing=True, unlisted=True)",
        "FileFacts(file, installation.path_of(file.file), missing=True, unlisted=False)",
    ),
    Mutant(
        "a-final-release-before-its-pre-releases",
        "a simply spelt release orders after its pre-releases, as PEP 440 orders it",
        "hfpatch/versions.py",
        "_FINAL = (3, 0)",
        "_FINAL = (-1, 0)",
    ),
    Mutant(
        "record-split-on-crlf-past-a-lone-cr",
        "RECORD's one split is taken only where one line ending ends every line",
        "hfpatch/wheelrecord.py",
        'if text and (not crlf or text.count("\\r") == len(split) - 1 == text.count("\\n")):',
        "if text:",
    ),
]


def _copy_project(where: Path) -> Path:
    # The suite runs hfpatch as another user too (tests/test_ownership.py): the copy must be readable by all.
    where.chmod(0o755)
    copy = where / "project"
    for name in ("hfpatch", "patches", "tests", "benchmarks", "scripts"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    return copy


def _lines(mutant: Mutant, text: str) -> set[int] | None:
    """The lines of the file that the mutant changes, with the whole header of a statement they are part of; None
    where its text is not exactly once in the file."""
    if text.count(mutant.old) != 1:
        return None
    start = text[: text.index(mutant.old)].count("\n") + 1
    end = start + mutant.old.rstrip("\n").count("\n")
    lines = set(range(start, end + 1))
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        body = getattr(node, "body", None)
        last = body[0].lineno - 1 if isinstance(body, list) and body and hasattr(body[0], "lineno") else node.end_lineno
        if node.lineno <= end and start <= last:  # a statement (a compound one's header) the change touches
            lines.update(range(node.lineno, last + 1))
    return lines


def _apply(mutant: Mutant, copy: Path) -> bool:
    path = copy / mutant.file
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        return False
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    _compile(copy)
    return True


def _compile(copy: Path) -> None:
    """Bytecode for the copy of hfpatch, once: where PYTHONDONTWRITEBYTECODE is set, each of the thousands of
    hfpatch processes a run starts would compile it from source again."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(copy / "hfpatch")], check=True, capture_output=True)


# ------------------------------------------------------------------------------------------ running the suite

# The fast suite, as `nox -s fast` runs it, less the packaging tests: they build and install a wheel of the
# checkout, and no mutant of the code speaks to them.
SELECTION = ["-m", "not transformers and not readme", "--ignore=tests/test_packaging.py"]


@dataclass
class Run:
    code: int
    first_failure: str
    seconds: float


def _pytest(copy: Path, tests: list[str], workers: int, env: dict[str, str] | None = None) -> Run:
    # PYTHONPATH puts the mutated copy before the installed hfpatch, for the suite and for every hfpatch it starts.
    env = {**os.environ, "PYTHONPATH": str(copy), "HFPATCH_EXPECT_TRANSFORMERS": "none", **(env or {})}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-n", str(workers), *SELECTION]
    started = time.monotonic()
    with tempfile.NamedTemporaryFile("w", suffix=".args", dir=copy, delete=False) as arguments:
        arguments.write("\n".join(tests))
    # The tests to run go in an argument file (@FILE): a reach can name hundreds of them.
    command += [f"@{arguments.name}"] if tests else []
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, check=False)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, flags=re.MULTILINE)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:] or "?"
    return Run(done.returncode, (failed or [last])[0], time.monotonic() - started)


# --------------------------------------------------------------------------------- recording what tests reach

_COVERAGE_CONFIG = """\
[run]
source_pkgs = hfpatch
parallel = True
data_file = {data}
context = ${{PYTEST_CURRENT_TEST-}}
"""
_PHASE = re.compile(r" \((setup|call|teardown)\)$")


@dataclass
class Reach:
    """What the recording run found: each test's duration, and the tests that ran each line of hfpatch."""

    durations: dict[str, float]
    by_line: dict[str, dict[int, list[str]]]  # hfpatch/FILE.py -> line -> tests
    at_import: dict[str, list[int]]  # lines run outside any test (module level, while collecting)

    def at_import_of(self, file: str, lines: set[int]) -> bool:
        """Whether one of the lines runs at import (in a worker collecting, or in tests/warm.py's server): every
        test may meet it."""
        return bool(lines & set(self.at_import.get(file, [])))

    def tests_for(self, file: str, lines: set[int]) -> list[str]:
        """The tests that ran any of the lines in a test, fastest first."""
        found = {test for line in lines for test in self.by_line.get(file, {}).get(line, [])}
        return sorted(found, key=lambda test: (self.durations.get(test, 0.0), test))


def _digest() -> str:
    """What the recording depends on: the code, the tests, the catalog, this script and its plugin."""
    digest = hashlib.sha256()
    for name in ("hfpatch", "tests", "patches", "scripts", "benchmarks"):
        for path in sorted((ROOT / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _record(copy: Path) -> tuple[Run, Reach]:
    """Run the whole fast suite once under coverage, following every Python process it starts."""
    scratch = copy.parent / "coverage"
    scratch.mkdir(mode=0o1777)
    scratch.chmod(0o1777)  # hfpatch runs as another user too (tests/test_ownership.py)
    _compile(copy)
    config = scratch / "coveragerc"
    config.write_text(_COVERAGE_CONFIG.format(data=scratch / "data"), encoding="utf-8")
    durations = scratch / "durations.jsonl"
    env = {
        "COVERAGE_PROCESS_START": str(config),
        "HFPATCH_MUTANT_DURATIONS": str(durations),
        "PYTHONPATH": os.pathsep.join([str(copy), str(copy / "scripts")]),
    }
    command_env = {**os.environ, "HFPATCH_EXPECT_TRANSFORMERS": "none", **env}
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "coverage_contexts", "-n", "2"]
    done = subprocess.run([*command, *SELECTION], cwd=copy, env=command_env, capture_output=True, text=True)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, flags=re.MULTILINE)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:]
    if failed and all("::" in test for test in failed):
        # Under coverage, on a loaded machine, a test may fail for its time alone: it counts as failing only if it
        # fails again on its own, without coverage.
        again = _pytest(copy, failed, workers=0)
        if again.code == 0:
            print(f"failed under coverage only, passed alone: {', '.join(failed)}")
            done.returncode, failed = 0, []
    run = Run(done.returncode, (failed or [last])[0], time.monotonic() - started)
    phases: dict[str, dict[str, float]] = {}
    for row in durations.read_text(encoding="utf-8").splitlines() if durations.exists() else []:
        report = json.loads(row)
        phases.setdefault(report["test"], {})[report["when"]] = report["seconds"]
    data = coverage.CoverageData(basename=str(scratch / "data"))
    coverage.Coverage(data_file=str(scratch / "data"), config_file=str(config)).combine([str(scratch)])
    data.read()
    by_line: dict[str, dict[int, list[str]]] = {}
    at_import: dict[str, list[int]] = {}
    package = str(copy / "hfpatch")
    for measured in data.measured_files():
        if not measured.startswith(package + os.sep):
            continue
        relative = "hfpatch/" + Path(measured).relative_to(package).as_posix()
        for line, contexts in data.contexts_by_lineno(measured).items():
            tests = sorted({_PHASE.sub("", context) for context in contexts if context})
            if tests:
                by_line.setdefault(relative, {})[line] = tests
            if "" in contexts:
                at_import.setdefault(relative, []).append(line)
    return run, Reach({test: sum(each.values()) for test, each in phases.items()}, by_line, at_import)


def _reach(copy: Path, fresh: bool) -> tuple[Run | None, Reach]:
    """The recorded reach, from the cache while nothing it depends on changed (--fresh records it anew)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hfpatch-mutants" / f"{_digest()}.json"
    if cache.exists() and not fresh:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        by_line = {file: {int(line): tests for line, tests in rows.items()} for file, rows in saved["by_line"].items()}
        return None, Reach(saved["durations"], by_line, saved["at_import"])
    run, reach = _record(copy)
    if run.code == 0:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(reach.__dict__), encoding="utf-8")
    return run, reach


# ------------------------------------------------------------------------------------------------- a mutant


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str  # caught, SURVIVED, DOES NOT APPLY, BROKEN
    caught_by: str
    reached: int | None  # tests that reach the change in a test (None: it also runs at import, so every test may)
    phase: str  # where it was decided: the tests that reach it, or the whole suite
    seconds: float


def _try(mutant: Mutant, reach: Reach, scratch: Path) -> Outcome:
    copy = _copy_project(scratch)
    text = (copy / mutant.file).read_text(encoding="utf-8")
    lines = _lines(mutant, text)
    if lines is None or not _apply(mutant, copy):
        return Outcome(mutant, "DOES NOT APPLY", "the code it mutates changed: re-anchor it", 0, "-", 0.0)
    tests = reach.tests_for(mutant.file, lines)
    started = time.monotonic()
    runs = []
    if tests:  # first the tests that reach the change, one worker (two mutants run side by side)
        runs.append(("reach", _pytest(copy, tests, workers=0)))
    if not runs or runs[-1][1].code == 0:  # then the whole suite
        runs.append(("whole", _pytest(copy, [], workers=2)))
    phase, run = runs[-1]
    seconds = time.monotonic() - started
    reached = None if reach.at_import_of(mutant.file, lines) else len(tests)
    if run.code == 0:
        return Outcome(mutant, "SURVIVED", "", reached, phase, seconds)
    if "::" not in run.first_failure:  # an error while collecting: the mutant broke the code, the suite proved nothing
        return Outcome(mutant, "BROKEN", f"collection failed: {run.first_failure}", reached, phase, seconds)
    return Outcome(mutant, "caught", run.first_failure, reached, phase, seconds)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="the mutants to run (default: every one)")
    parser.add_argument("--fresh", action="store_true", help="record what each test reaches anew (no cache)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tried side by side (default 2: two cores)")
    options = parser.parse_args(argv)
    unknown = sorted(set(options.names) - {mutant.name for mutant in MUTANTS})
    if unknown:
        print(f"no mutant is named {', '.join(unknown)}")
        return 2
    chosen = [mutant for mutant in MUTANTS if not options.names or mutant.name in options.names]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hfpatch-mutant-") as scratch:
        baseline, reach = _reach(_copy_project(Path(scratch)), options.fresh)
    if baseline is None:
        print("what each test reaches: recorded earlier for this very code and tests (--fresh records it anew)")
    elif baseline.code != 0:
        print(f"the suite fails without any mutant ({baseline.first_failure}); fix that first")
        return 2
    else:
        print(f"what each test reaches: recorded in {baseline.seconds:.0f} s (the whole suite under coverage)")
    print(f"{'mutant':46} {'verdict':9} {'reach':>5} {'decided':7} {'seconds':>7}  caught by")
    outcomes = []

    def attempt(mutant: Mutant) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="hfpatch-mutant-") as scratch:
            return _try(mutant, reach, Path(scratch))

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for outcome in pool.map(attempt, chosen):
            outcomes.append(outcome)
            reached = "all" if outcome.reached is None else str(outcome.reached)
            print(
                f"{outcome.mutant.name:46} {outcome.verdict:9} {reached:>5} {outcome.phase:7} "
                f"{outcome.seconds:7.0f}  {outcome.caught_by}",
                flush=True,
            )
    missed = [outcome.mutant.name for outcome in outcomes if outcome.verdict != "caught"]
    minutes = (time.monotonic() - started) / 60
    caught = len(outcomes) - len(missed)
    print(f"\n{caught} of {len(outcomes)} mutants caught, in {minutes:.1f} min")
    if missed:
        print(f"not caught: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
