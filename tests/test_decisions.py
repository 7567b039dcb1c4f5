"""Every condition, read off real files, and what each command plans about it: in process, no subprocess.

Each scenario builds toypkg in tmp_path (tests/toy.py), brings it to a condition the way it happens (the real
engine applies; then a reinstall, an edit, a crash or a lost file alters what is on disk), and reads it with
hfpatch's own facts -> diagnosis -> plan. Only a corrupt state is written by hand.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import py_compile
import shutil
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import Site, record_line, record_with_line
from toy import (
    A_ID,
    B_ID,
    BUGGY_GREET,
    BUGGY_MODULE,
    BUGGY_WORDS,
    FIXED_MODULE,
    GREET,
    MODULE,
    PAIR_ID,
    PATCH_ID,
    WORDS,
    make_composed_site,
    make_pair_site,
    make_site,
    with_changes,
    write_entry,
)

from hfpatch import catalog, engine, entry, reasons, state
from hfpatch.diagnosis import Condition, Diagnosis, diagnose
from hfpatch.entry import Patch
from hfpatch.environment import Environment, Installation, Python, locate, resolve_python
from hfpatch.errors import ExitCode
from hfpatch.facts import Facts, gather
from hfpatch.plan import Action, Command, Options, Step, plan
from hfpatch.render import words
from hfpatch.state import Phase

OK, ACTION_NEEDED, ERROR = ExitCode.OK, ExitCode.ACTION_NEEDED, ExitCode.ERROR


def suggest(command: str) -> str:
    """The spelling the CLI would give; whatever it returns must reach the advice verbatim."""
    return f"hfpatch {command} --python /x"


@dataclass(frozen=True)
class World:
    """What the diagnosis is asked about: a patch, an interpreter, and the copy of toypkg it imports (if any)."""

    site: Site
    patch: Patch
    python: Python
    installation: Installation | None

    def facts(self) -> Facts:
        return gather(self.patch, self.python, self.installation)

    @property
    def environment(self) -> Environment:
        return Environment(self.python, {self.patch.package: self.installation})


def installation_of(site: Site, python: Python, version: str | None = None) -> Installation:
    version = version or site.version
    dist_info = site.root / f"toypkg-{version}.dist-info"
    return Installation(python, "toypkg", site.root / "toypkg", site.root, version, dist_info)


def fresh(where: Path, *, version: str = "1.0", module: str | None = None) -> World:
    site = make_site(where, version=version, module=module)
    python = resolve_python(None)
    return World(site, entry.load(site.team_catalog / PATCH_ID), python, installation_of(site, python))


def applied(where: Path) -> World:
    """toypkg 1.0 patched by the real engine."""
    world = fresh(where)
    apply_with_the_engine(world, world.patch)
    return world


def apply_with_the_engine(world: World, patch: Patch) -> None:
    """The real engine applies one patch of the world's catalog (the world's own, or another of its files)."""
    outcome = engine.run(Command.APPLY, patch, world.environment, Options())
    assert (outcome.action, outcome.exit_code) == (Action.PATCHED, OK), outcome.message


def of_the_catalog(site: Site, patch_id: str) -> World:
    """toypkg 1.0 as `site` holds it, and the patch of its catalog named."""
    python = resolve_python(None)
    return World(site, entry.load(site.team_catalog / patch_id), python, installation_of(site, python))


def original_record(world: World) -> bytes:
    """RECORD as the installer wrote it, before hfpatch changed the file's line."""
    return make_site(world.site.root.parent / "pristine").record.read_bytes()


def put_back_the_original(world: World, *, record: bool = True) -> None:
    """What a reinstall of the same release (or a crash before the write) leaves: the original file (and RECORD)."""
    world.site.file.write_text(BUGGY_MODULE, encoding="utf-8")
    if record:
        world.site.record.write_bytes(original_record(world))


def set_phase(world: World, phase: Phase) -> None:
    """Where a killed run stops: the state's phase says what it was doing, and its journal what it found and what
    it leaves (written as the executor writes it: a revert of the applied patch goes from the patched file back)."""
    saved, _ = state.load(world.site.root, world.patch.id)
    assert saved is not None
    changes = saved.files
    if phase is Phase.REVERTING:
        changes = tuple(
            change._replace(before_sha256=change.after_sha256, after_sha256=change.before_sha256) for change in changes
        )
    state.save(world.site.root, saved._replace(phase=phase, files=changes))


def reinstall(world: World, version: str, module: str) -> World:
    """pip install toypkg==<version>: the package and its dist-info replaced, hfpatch's state left where it was."""
    shutil.rmtree(world.site.root / "toypkg")
    shutil.rmtree(world.site.dist_info)
    other = make_site(world.site.root.parent / f"release-{version}", version=version, module=module)
    shutil.copytree(other.root / "toypkg", world.site.root / "toypkg")
    shutil.copytree(other.dist_info, world.site.root / other.dist_info.name)
    return dataclasses.replace(world, installation=installation_of(world.site, world.python, version))


def unchecked_pyc(world: World, code: str) -> Path:
    """An unchecked-hash .pyc of `code` where the interpreter looks for the file's bytecode: it runs unchecked."""
    source = world.site.root.parent / "compiled-from.py"
    source.write_text(code, encoding="utf-8")
    cfile = world.site.file.parent / "__pycache__" / f"core.{world.python.cache_tag}.pyc"
    py_compile.compile(
        str(source), cfile=str(cfile), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    return cfile


# ------------------------------------------------------------------------------------------------ the scenarios


def not_installed(where: Path) -> World:
    world = fresh(where)
    assert locate(world.python, "toypkg", "toypkg", MODULE) is None  # the test process imports no toypkg
    return dataclasses.replace(world, installation=None)


def not_installed_with_orphans(where: Path) -> World:
    world = applied(where)
    shutil.rmtree(world.site.root / "toypkg")  # pip uninstall: hfpatch's state stays behind
    shutil.rmtree(world.site.dist_info)
    python = world.python._replace(search_path=(*world.python.search_path, str(world.site.root)))
    return dataclasses.replace(world, python=python, installation=None)


def predates_the_file(where: Path) -> World:
    world = fresh(where, version="0.4", module=BUGGY_MODULE)
    world.site.file.unlink()
    return world


def predates_the_target(where: Path) -> World:
    return fresh(where, version="0.4", module=BUGGY_MODULE.replace(BUGGY_GREET, ""))


def needs_patch(where: Path) -> World:
    return fresh(where)


def needs_patch_in_a_rebuilt_file(where: Path) -> World:
    """Not the released file (a comment added elsewhere): known by the code of its target."""
    return fresh(where, module=BUGGY_MODULE + "# rebuilt by a vendor\n")


def needs_patch_after_an_apply_killed_after_the_backup(where: Path) -> World:
    world = applied(where)
    put_back_the_original(world)
    state.state_path(world.site.root, PATCH_ID).unlink()  # the backup alone: no state was written yet
    state.file_state_path(world.site.root, MODULE).unlink()
    return world


def needs_patch_through_a_link(where: Path) -> World:
    world = fresh(where)
    real = where / "elsewhere" / "core.py"
    real.parent.mkdir()
    world.site.file.rename(real)
    world.site.file.symlink_to(real)
    return world


def needs_patch_after_a_reinstall_of_another_version(where: Path) -> World:
    return reinstall(applied(where), "1.1", BUGGY_MODULE)


def dropped(where: Path) -> World:
    world = applied(where)
    put_back_the_original(world)
    return world


def apply_killed_before_the_write(where: Path) -> World:
    world = applied(where)
    put_back_the_original(world)
    set_phase(world, Phase.APPLYING)
    return world


def apply_killed_after_the_write(where: Path) -> World:
    world = applied(where)
    world.site.record.write_bytes(original_record(world))
    set_phase(world, Phase.APPLYING)
    return world


def apply_killed_after_the_record(where: Path) -> World:
    world = applied(where)
    set_phase(world, Phase.APPLYING)
    return world


def revert_killed_before_the_write(where: Path) -> World:
    world = applied(where)
    set_phase(world, Phase.REVERTING)
    return world


def revert_killed_after_the_write(where: Path) -> World:
    world = applied(where)
    put_back_the_original(world, record=False)
    set_phase(world, Phase.REVERTING)
    return world


def record_lagging(where: Path) -> World:
    world = applied(where)
    world.site.record.write_bytes(original_record(world))
    return world


def needs_patch_without_metadata(where: Path) -> World:
    """The entry names a distribution whose metadata is not beside the package (a misspelt name, a copied tree)."""
    world = fresh(where)
    assert world.installation is not None
    return dataclasses.replace(world, installation=world.installation._replace(version=None, dist_info=None))


def applied_without_metadata_then_with(where: Path) -> World:
    """Applied while the entry misspelt the distribution (no metadata found), read again with the right one: the
    state says no version, the installation 1.0. That is no reinstall: the file is what hfpatch wrote."""
    world = needs_patch_without_metadata(where)
    outcome = engine.run(Command.APPLY, world.patch, world.environment, Options())
    assert (outcome.action, outcome.exit_code) == (Action.PATCHED, OK), outcome.message
    return dataclasses.replace(world, installation=installation_of(world.site, world.python))


def stale_bytecode_after_apply(where: Path) -> World:
    world = applied(where)
    unchecked_pyc(world, BUGGY_MODULE)
    return world


def stale_bytecode_over_fixed_source(where: Path) -> World:
    world = fresh(where, module=FIXED_MODULE)
    unchecked_pyc(world, BUGGY_MODULE)
    return world


def stale_bytecode_over_fixed_release(where: Path) -> World:
    world = fresh(where, version="2.0")
    unchecked_pyc(world, BUGGY_MODULE)
    return world


def applied_over_unchecked_bytecode(where: Path) -> World:
    """An unchecked-hash .pyc of the original before apply: the engine rebuilds it, in its mode, from the fix."""
    world = fresh(where)
    unchecked_pyc(world, BUGGY_MODULE)
    outcome = engine.run(Command.APPLY, world.patch, world.environment, Options())
    assert outcome.action is Action.PATCHED, outcome.message
    return world


def fixed_upstream(where: Path) -> World:
    return fresh(where, version="2.0")


def fixed_upstream_with_its_own_unchecked_bytecode(where: Path) -> World:
    world = fresh(where, version="2.0")
    unchecked_pyc(world, FIXED_MODULE)
    return world


def fixed_upstream_after_an_upgrade(where: Path) -> World:
    return reinstall(applied(where), "2.0", FIXED_MODULE)


def fixed_otherwise(where: Path) -> World:
    return fresh(where, module=FIXED_MODULE)


def edited(where: Path) -> World:
    world = applied(where)
    world.site.file.write_text(FIXED_MODULE + "# a local edit\n", encoding="utf-8")
    return world


def edited_and_the_backup_gone(where: Path) -> World:
    world = edited(where)
    state.original_path(world.site.root, MODULE).unlink()
    return world


def edited_and_the_backup_altered(where: Path) -> World:
    world = edited(where)
    state.original_path(world.site.root, MODULE).write_text(FIXED_MODULE, encoding="utf-8")
    return world


def unrecognised(where: Path) -> World:
    return fresh(where, module=BUGGY_MODULE.replace('", " + name', '", " + str(name)'))


OLDER_GREET = BUGGY_MODULE.replace('", " + name', '", " + str(name)')


def not_covered(where: Path) -> World:
    """A release older than those the entry was written from, as it was released: nothing edited, only not read."""
    world = fresh(where, version="0.6", module=OLDER_GREET)
    return dataclasses.replace(world, patch=world.patch._replace(releases_read=("1.0", "2.0")))


def not_covered_built_in(where: Path) -> World:
    """The same, of a built-in entry: not the user's to write again (an entry of their own would clash with it)."""
    world = not_covered(where)
    return dataclasses.replace(world, patch=world.patch._replace(directory=catalog.builtin_catalog() / "toypkg-1"))


def not_covered_newer_before_the_fix(where: Path) -> World:
    """A release newer than those the entry was written from and older than its fix (one another entry covers, or
    one released after the entry was written), as it was released: not read either."""
    world = fresh(where, version="1.5", module=OLDER_GREET)
    return dataclasses.replace(world, patch=world.patch._replace(releases_read=("1.0", "1.2")))


def unrecognised_older_and_edited(where: Path) -> World:
    """The same release with its file edited after install (RECORD disagrees): that is code nobody knows."""
    world = not_covered(where)
    world.site.file.write_text(OLDER_GREET + "# edited\n", encoding="utf-8")
    return world


def not_python(where: Path) -> World:
    return fresh(where, module="def greet(:\n")


def corrupt_state(where: Path) -> World:
    world = applied(where)
    state.state_path(world.site.root, PATCH_ID).write_text("{", encoding="utf-8")
    return world


def state_naming_another_file(where: Path) -> World:
    """The entry moved its target since apply: the state names the file it patched, not the entry's."""
    world = applied(where)
    moved = world.patch.files[0]._replace(file="toypkg/other.py")
    return dataclasses.replace(world, patch=world.patch._replace(files=(moved,)))


def pair_killed_between_its_files(where: Path) -> World:
    """toypkg-pair's apply killed after it wrote core.py (its RECORD line and bytecode too), before words.py: the
    originals of both saved, the journal saying what each becomes, no state of either file yet."""
    world = of_the_catalog(make_pair_site(where), PAIR_ID)
    installed = world.site.record.read_bytes()
    apply_with_the_engine(world, world.patch)
    root = world.site.root
    (root / WORDS).write_text(BUGGY_WORDS, encoding="utf-8")
    patched_core = with_changes(BUGGY_MODULE, GREET).encode()
    world.site.record.write_bytes(
        record_with_line(installed, record_line(MODULE, BUGGY_MODULE.encode()), record_line(MODULE, patched_core))
    )
    for file in (MODULE, WORDS):
        state.file_state_path(root, file).unlink()
    set_phase(world, Phase.APPLYING)
    assert state.original_path(root, WORDS).read_text(encoding="utf-8") == BUGGY_WORDS
    return world


def composed(where: Path) -> World:
    """core.py holds toypkg-a and toypkg-b, applied in that order by the real engine; the world's patch is
    toypkg-a."""
    world = of_the_catalog(make_composed_site(where), A_ID)
    apply_with_the_engine(world, world.patch)
    apply_with_the_engine(world, entry.load(world.site.team_catalog / B_ID))
    return world


def composed_while_the_others_apply_is_interrupted(where: Path) -> World:
    """toypkg-a applied, then toypkg-b's apply killed after its write (and RECORD and bytecode): core.py holds
    both fixes, hfpatch's state of the file still says toypkg-a alone, toypkg-b's journal says what it wrote."""
    world = of_the_catalog(make_composed_site(where), A_ID)
    apply_with_the_engine(world, world.patch)
    held = state.load_file(world.site.root, MODULE)
    other = dataclasses.replace(world, patch=entry.load(world.site.team_catalog / B_ID))
    apply_with_the_engine(other, other.patch)
    assert held is not None
    state.save_file(world.site.root, held)
    set_phase(other, Phase.APPLYING)
    return world


def buggy_again_after_the_fix(where: Path) -> World:
    """A release after fixed_in that carries the bug again (an upstream revert), in a file no digest knows: the code
    decides, never the version."""
    return fresh(where, version="3.0", module=BUGGY_MODULE + "# 3.0 reverted the fix\n")


def unknown_code_in_a_pre_release_of_the_fix(where: Path) -> World:
    """A pre-release after fixed_in whose greet no digest knows: a pre-release is not the fix released."""
    return fresh(where, version="2.1rc1", module=FIXED_MODULE.replace('name = "world"', 'name = "everyone"'))


def without_in_record(world: World, relative_file: str) -> World:
    """A release that never had the file: not installed, and its RECORD has no line for it."""
    (world.site.root / relative_file).unlink()
    lines = world.site.record.read_text(encoding="utf-8").splitlines(keepends=True)
    world.site.record.write_text("".join(line for line in lines if not line.startswith(f"{relative_file},")))
    return world


def release_without_the_file(where: Path) -> World:
    """A release after the fix that never had core.py: whatever range the entry was written from, not its concern."""
    return without_in_record(fresh(where, version="3.0", module=FIXED_MODULE), MODULE)


def release_without_one_of_the_files(where: Path) -> World:
    """toypkg-pair on a release that has core.py (with the bug) and never had words.py: a fix of two files cannot be
    carried in part, and nothing is wrong with the install."""
    site = make_site(where, words=BUGGY_WORDS)
    site = Site(site.root, "toypkg", "1.0", MODULE, PAIR_ID, catalog=write_entry(where / "pair-catalog", PAIR_ID))
    return without_in_record(of_the_catalog(site, PAIR_ID), WORDS)


def missing_file(where: Path) -> World:
    world = fresh(where)
    world.site.file.unlink()
    return world


def missing_file_after_apply(where: Path) -> World:
    world = applied(where)
    world.site.file.unlink()
    return world


# ------------------------------------------------------------------------------------------- what they come to

Planned = tuple[Action, ExitCode, tuple[Step, ...]]
NOTHING: Planned = (Action.NOTHING, OK, ())
REFUSED: Planned = (Action.REFUSED, ERROR, ())
PATCH: Planned = (Action.PATCHED, OK, (Step.PATCH,))
COMPLETE: Planned = (Action.COMPLETED, OK, (Step.PATCH,))
RESTORE: Planned = (Action.REVERTED, OK, (Step.RESTORE,))
CLEAR: Planned = (Action.CLEARED, OK, (Step.CLEAR_STATE,))

APPLY_ADVICE = "run `hfpatch apply --python /x`"
FINISH_APPLY = "run `hfpatch apply --python /x` to finish it, or `hfpatch revert --python /x`"
FINISH_REVERT = "run `hfpatch revert --python /x` to finish it, or `hfpatch apply --python /x`"
LINKS = "hfpatch does not write through links"

# What `check` exits with: 0 nothing to do, 1 apply would act, 2 hfpatch refuses or cannot tell.
CHECK_CODE = {
    Condition.NOT_INSTALLED: OK,
    Condition.NOT_APPLICABLE: OK,
    Condition.APPLIED: OK,
    Condition.FIXED_UPSTREAM: OK,
    Condition.FIXED_OTHERWISE: OK,
    Condition.NOT_COVERED: OK,
    Condition.NEEDS_PATCH: ACTION_NEEDED,
    Condition.DROPPED: ACTION_NEEDED,
    Condition.INCOMPLETE: ACTION_NEEDED,
    Condition.EDITED: ERROR,
    Condition.UNRECOGNISED: ERROR,
    Condition.ERROR: ERROR,
}


@dataclass(frozen=True)
class Expected:
    condition: Condition
    finding: str  # a part of the one sentence
    advice: str | None
    apply: Planned
    revert: Planned
    forced: Planned  # revert --force
    check: ExitCode
    notes: str | None = None  # a part of the only note, if any


def expect(
    condition: Condition,
    finding: str,
    advice: str | None,
    apply: Planned,
    revert: Planned,
    *,
    forced: Planned | None = None,
    notes: str | None = None,
) -> Expected:
    check = CHECK_CODE[condition]
    return Expected(condition, finding, advice, apply, revert, forced or revert, check, notes)


STALE_NOTE = "the next `hfpatch apply --python /x` or `hfpatch revert --python /x` clears it"

# The patched file in place, RECORD still describing the original: apply finishes, revert restores.
RECORD_LAGS = expect(
    Condition.INCOMPLETE,
    "the patched file is in place, but",
    "run `hfpatch apply --python /x` to finish",
    COMPLETE,
    RESTORE,
)

SCENARIOS = [
    pytest.param(
        not_installed,
        expect(Condition.NOT_INSTALLED, f"{sys.executable} imports no toypkg", None, NOTHING, NOTHING),
        id="not-installed",
    ),
    pytest.param(
        not_installed_with_orphans,
        expect(
            Condition.NOT_INSTALLED,
            f"{sys.executable} imports no toypkg",
            None,
            NOTHING,
            (Action.CLEARED, OK, (Step.CLEAR_ORPHANS,)),
            notes="of an uninstalled toypkg; `hfpatch revert --python /x` clears them",
        ),
        id="not-installed-with-orphans",
    ),
    pytest.param(
        predates_the_file,
        expect(Condition.NOT_APPLICABLE, "toypkg 0.4 predates greet", None, NOTHING, NOTHING),
        id="not-applicable-file-missing-before-first-defined",
    ),
    pytest.param(
        predates_the_target,
        expect(Condition.NOT_APPLICABLE, "greet is absent, as in every release before 0.5", None, NOTHING, NOTHING),
        id="not-applicable-target-absent-before-first-defined",
    ),
    pytest.param(
        needs_patch,
        expect(
            Condition.NEEDS_PATCH,
            "the released 1.0 file, which has the bug example/toypkg#1 fixed in 2.0",
            APPLY_ADVICE,
            PATCH,
            NOTHING,
        ),
        id="needs-patch-released-file",
    ),
    pytest.param(
        needs_patch_in_a_rebuilt_file,
        expect(Condition.NEEDS_PATCH, "greet is the 1.0 code, which has the bug", APPLY_ADVICE, PATCH, NOTHING),
        id="needs-patch-known-code",
    ),
    pytest.param(
        needs_patch_after_an_apply_killed_after_the_backup,
        expect(
            Condition.NEEDS_PATCH,
            "the released 1.0 file, which has the bug",
            APPLY_ADVICE,
            PATCH,
            (Action.NOTHING, OK, (Step.CLEAR_STATE,)),
        ),
        id="needs-patch-backup-left-by-a-killed-apply",
    ),
    pytest.param(
        needs_patch_through_a_link,
        expect(Condition.NEEDS_PATCH, "which has the bug", LINKS, REFUSED, NOTHING),
        id="needs-patch-through-a-link",
    ),
    pytest.param(
        needs_patch_after_a_reinstall_of_another_version,
        expect(
            Condition.NEEDS_PATCH,
            "which has the bug",
            APPLY_ADVICE,
            (Action.PATCHED, OK, (Step.CLEAR_STATE, Step.PATCH)),
            CLEAR,
            notes=STALE_NOTE,
        ),
        id="needs-patch-stale-state-of-another-version",
    ),
    pytest.param(
        needs_patch_without_metadata,
        expect(
            Condition.NEEDS_PATCH,
            "the released 1.0 file, which has the bug",
            APPLY_ADVICE,
            PATCH,
            NOTHING,
            notes="has no toypkg-*.dist-info: the release is unknown and RECORD is not kept",
        ),
        id="needs-patch-without-metadata",
    ),
    pytest.param(
        applied_without_metadata_then_with,
        RECORD_LAGS,
        id="incomplete-applied-without-metadata-read-with-it",
    ),
    pytest.param(
        dropped,
        expect(Condition.DROPPED, "holds the original code again", APPLY_ADVICE, PATCH, RESTORE),
        id="dropped",
    ),
    pytest.param(
        apply_killed_before_the_write,
        expect(Condition.INCOMPLETE, "an apply was interrupted", FINISH_APPLY, PATCH, RESTORE),
        id="incomplete-applying-original-file",
    ),
    pytest.param(
        apply_killed_after_the_write,
        expect(Condition.INCOMPLETE, "an apply was interrupted", FINISH_APPLY, COMPLETE, RESTORE),
        id="incomplete-applying-record-behind",
    ),
    pytest.param(
        apply_killed_after_the_record,
        expect(Condition.INCOMPLETE, "an apply was interrupted", FINISH_APPLY, COMPLETE, RESTORE),
        id="incomplete-applying-patched-file",
    ),
    pytest.param(
        revert_killed_before_the_write,
        expect(Condition.INCOMPLETE, "a revert was interrupted", FINISH_REVERT, COMPLETE, RESTORE),
        id="incomplete-reverting-patched-file",
    ),
    pytest.param(
        revert_killed_after_the_write,
        expect(Condition.INCOMPLETE, "a revert was interrupted", FINISH_REVERT, PATCH, RESTORE),
        id="incomplete-reverting-original-file",
    ),
    pytest.param(
        record_lagging,
        RECORD_LAGS,
        id="incomplete-record-lagging",
    ),
    pytest.param(
        stale_bytecode_after_apply,
        expect(
            Condition.INCOMPLETE,
            "the patched file is in place, but stale bytecode",
            "run `hfpatch apply --python /x` to finish",
            COMPLETE,
            RESTORE,
        ),
        id="incomplete-stale-bytecode-after-apply",
    ),
    pytest.param(
        stale_bytecode_over_fixed_source,
        expect(
            Condition.INCOMPLETE,
            "the source has the fix, but cached bytecode still runs other code",
            "run `hfpatch apply --python /x` to rebuild it",
            (Action.REFRESHED, OK, (Step.REFRESH_BYTECODE,)),
            NOTHING,
        ),
        id="incomplete-stale-bytecode-over-fixed-source",
    ),
    pytest.param(
        stale_bytecode_over_fixed_release,
        expect(
            Condition.INCOMPLETE,
            "the source has the fix, but cached bytecode still runs other code",
            "run `hfpatch apply --python /x` to rebuild it",
            (Action.REFRESHED, OK, (Step.REFRESH_BYTECODE,)),
            NOTHING,
        ),
        id="incomplete-stale-bytecode-over-fixed-release",
    ),
    pytest.param(
        applied,
        expect(Condition.APPLIED, "patched", None, (Action.ALREADY_APPLIED, OK, ()), RESTORE),
        id="applied",
    ),
    pytest.param(
        applied_over_unchecked_bytecode,
        expect(Condition.APPLIED, "patched", None, (Action.ALREADY_APPLIED, OK, ()), RESTORE),
        id="applied-unchecked-bytecode-rebuilt",
    ),
    pytest.param(
        fixed_upstream,
        expect(
            Condition.FIXED_UPSTREAM,
            "toypkg 2.0 has the upstream fix (example/toypkg#1, in 2.0): this patch is obsolete here",
            None,
            NOTHING,
            NOTHING,
        ),
        id="fixed-upstream",
    ),
    pytest.param(
        fixed_upstream_with_its_own_unchecked_bytecode,
        expect(
            Condition.FIXED_UPSTREAM,
            "toypkg 2.0 has the upstream fix",
            None,
            NOTHING,
            NOTHING,
        ),
        id="fixed-upstream-fresh-unchecked-bytecode",
    ),
    pytest.param(
        fixed_upstream_after_an_upgrade,
        expect(
            Condition.FIXED_UPSTREAM,
            "toypkg 2.0 has the upstream fix",
            None,
            (Action.NOTHING, OK, (Step.CLEAR_STATE,)),
            CLEAR,
            notes=f"stale state: hfpatch patched toypkg 1.0, and 2.0 is installed now; {STALE_NOTE}",
        ),
        id="fixed-upstream-stale-state-of-1.0",
    ),
    pytest.param(
        fixed_otherwise,
        expect(Condition.FIXED_OTHERWISE, "the code is already fixed (greet is the 2.0 code)", None, NOTHING, NOTHING),
        id="fixed-otherwise",
    ),
    pytest.param(
        edited,
        expect(
            Condition.EDITED,
            "was changed since hfpatch applied toypkg-1",
            "`hfpatch revert --python /x --force` puts the original back",
            REFUSED,
            REFUSED,
            forced=RESTORE,
        ),
        id="edited",
    ),
    pytest.param(
        edited_and_the_backup_gone,
        expect(
            Condition.EDITED,
            "was changed since hfpatch applied toypkg-1",
            "`hfpatch revert --python /x --force` puts the original back",
            REFUSED,
            REFUSED,
            notes="backup",
        ),
        id="edited-backup-gone",
    ),
    pytest.param(
        edited_and_the_backup_altered,
        expect(
            Condition.EDITED,
            "was changed since hfpatch applied toypkg-1",
            "`hfpatch revert --python /x --force` puts the original back",
            REFUSED,
            REFUSED,
            notes="is not the original any more",
        ),
        id="edited-backup-altered",
    ),
    pytest.param(
        not_covered,
        expect(
            Condition.NOT_COVERED,
            "toypkg 0.6 is older than 1.0, the releases toypkg-1 was written from (1.0 to 2.0); its file is as "
            "released (RECORD agrees), so hfpatch leaves it",
            "to cover it, write the entry again with `hfpatch new toypkg-1 --target toypkg:toypkg.core:greet "
            "--fixed-in 2.0 --since 0.6 --force`",
            NOTHING,
            NOTHING,
        ),
        id="not-covered-older-release",
    ),
    pytest.param(
        not_covered_newer_before_the_fix,
        expect(
            Condition.NOT_COVERED,
            "toypkg 1.5 is newer than 1.2, the releases toypkg-1 was written from (1.0 to 1.2); its file is as "
            "released (RECORD agrees), so hfpatch leaves it",
            "to cover it, write the entry again with `hfpatch new toypkg-1 --target toypkg:toypkg.core:greet "
            "--fixed-in 2.0 --force`",
            NOTHING,
            NOTHING,
        ),
        id="not-covered-newer-release-before-the-fix",
    ),
    pytest.param(
        not_covered_built_in,
        expect(
            Condition.NOT_COVERED,
            "toypkg 0.6 is older than 1.0, the releases toypkg-1 was written from (1.0 to 2.0)",
            "the built-in toypkg-1 does not cover this release",
            NOTHING,
            NOTHING,
        ),
        id="not-covered-built-in",
    ),
    pytest.param(
        unrecognised_older_and_edited,
        expect(Condition.UNRECOGNISED, "greet matches no known form (in ", None, REFUSED, NOTHING),
        id="unrecognised-older-release-edited",
    ),
    pytest.param(
        unrecognised,
        expect(Condition.UNRECOGNISED, "greet matches no known form (in ", None, REFUSED, NOTHING),
        id="unrecognised",
    ),
    pytest.param(
        not_python,
        expect(
            Condition.UNRECOGNISED, "toypkg/core.py is not valid Python (line 1); reinstall", None, REFUSED, NOTHING
        ),
        id="unrecognised-not-python",
    ),
    pytest.param(
        corrupt_state,
        expect(Condition.ERROR, "is corrupt; nothing was changed", None, REFUSED, REFUSED),
        id="error-corrupt-state",
    ),
    pytest.param(
        state_naming_another_file,
        expect(Condition.ERROR, "names toypkg/core.py, not toypkg/other.py", None, REFUSED, REFUSED),
        id="error-state-names-another-file",
    ),
    pytest.param(
        pair_killed_between_its_files,
        expect(Condition.INCOMPLETE, "an apply was interrupted", FINISH_APPLY, PATCH, RESTORE),
        id="incomplete-two-files-one-patched-one-original",
    ),
    pytest.param(
        composed,
        expect(Condition.APPLIED, "patched", None, (Action.ALREADY_APPLIED, OK, ()), RESTORE),
        id="applied-composed-with-another-patch",
    ),
    pytest.param(
        composed_while_the_others_apply_is_interrupted,
        expect(
            Condition.INCOMPLETE,
            "is as the interrupted apply of toypkg-b left it",
            "with toypkg-b among the patches to finish it",
            REFUSED,
            REFUSED,
        ),
        id="incomplete-composed-the-others-apply-interrupted",
    ),
    pytest.param(
        buggy_again_after_the_fix,
        expect(
            Condition.NEEDS_PATCH,
            "greet is the 1.0 code, which has the bug example/toypkg#1 fixed in 2.0",
            APPLY_ADVICE,
            PATCH,
            NOTHING,
        ),
        id="needs-patch-in-a-release-after-the-fix",
    ),
    pytest.param(
        unknown_code_in_a_pre_release_of_the_fix,
        expect(Condition.UNRECOGNISED, "greet matches no known form", None, REFUSED, NOTHING),
        id="unrecognised-in-a-pre-release-after-the-fix",
    ),
    pytest.param(
        release_without_the_file,
        expect(
            Condition.NOT_APPLICABLE,
            "toypkg 3.0 has no toypkg/core.py (its RECORD does not list it)",
            None,
            NOTHING,
            NOTHING,
        ),
        id="not-applicable-release-never-had-the-file",
    ),
    pytest.param(
        release_without_one_of_the_files,
        expect(
            Condition.NOT_COVERED,
            "has no toypkg/text/words.py (its RECORD does not list it), which toypkg-pair changes with toypkg/core.py",
            None,
            NOTHING,
            NOTHING,
        ),
        id="not-covered-release-never-had-one-of-the-files",
    ),
    pytest.param(
        missing_file,
        expect(Condition.ERROR, "core.py is missing; reinstall toypkg", None, REFUSED, REFUSED),
        id="error-file-missing",
    ),
    pytest.param(
        missing_file_after_apply,
        expect(Condition.ERROR, "core.py is missing; reinstall toypkg", None, REFUSED, REFUSED),
        id="error-file-missing-after-apply",
    ),
]


Scenario = Callable[[Path], World]


@pytest.fixture(scope="module")
def read(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Scenario], Facts]:
    """Each scenario built and read once: Facts is a snapshot, and diagnosis and plan are pure functions of it."""
    cache: dict[str, Facts] = {}

    def facts_of(scenario: Scenario) -> Facts:
        if scenario.__name__ not in cache:
            cache[scenario.__name__] = scenario(tmp_path_factory.mktemp(scenario.__name__)).facts()
        return cache[scenario.__name__]

    return facts_of


def test_every_condition_has_a_scenario() -> None:
    covered = {param.values[1].condition for param in SCENARIOS if isinstance(param.values[1], Expected)}
    assert covered == set(Condition)


@pytest.mark.parametrize(("scenario", "expected"), SCENARIOS)
def test_the_condition_is_diagnosed_from_the_disk(
    read: Callable[[Scenario], Facts], scenario: Scenario, expected: Expected
) -> None:
    diagnosis = diagnose(read(scenario))
    assert diagnosis.condition is expected.condition, diagnosis.summary
    assert expected.finding in words(diagnosis.reason)
    if expected.advice is None:
        assert diagnosis.advice is None
    else:
        assert diagnosis.advice is not None and expected.advice in words(diagnosis.advice, suggest=suggest)
    if expected.notes is None:
        assert diagnosis.notes == ()
    else:
        (note,) = diagnosis.notes
        assert expected.notes in words(note, suggest=suggest)
    # Sentences are render's: the diagnosis holds values, but for an error's own sentence (hfpatch.reasons).
    said = [diagnosis.reason, diagnosis.advice, *diagnosis.notes]
    sentences = [reason for reason in said if isinstance(reason, str)]
    assert not sentences or expected.condition is Condition.ERROR, sentences


@pytest.mark.parametrize(("scenario", "expected"), SCENARIOS)
def test_each_command_plans_for_the_condition(
    read: Callable[[Scenario], Facts], scenario: Scenario, expected: Expected
) -> None:
    facts = read(scenario)
    diagnosis = diagnose(facts)

    def planned(command: Command, *, force: bool = False) -> Planned:
        decided = plan(command, diagnosis, facts, Options(force=force))
        return decided.action, decided.exit_code, decided.steps

    assert planned(Command.APPLY) == expected.apply
    assert planned(Command.REVERT) == expected.revert
    assert planned(Command.REVERT, force=True) == expected.forced
    assert planned(Command.CHECK) == (Action.CHECKED, expected.check, ())


@pytest.mark.parametrize(("scenario", "expected"), SCENARIOS)
def test_check_says_the_diagnosis(read: Callable[[Scenario], Facts], scenario: Scenario, expected: Expected) -> None:
    facts = read(scenario)
    diagnosis = diagnose(facts)
    decided = plan(Command.CHECK, diagnosis, facts, Options())
    assert decided.message == diagnosis.summary
    if diagnosis.advice is not None:
        said = words(decided.message, suggest=suggest)
        assert said == f"{words(diagnosis.reason)}; {words(diagnosis.advice, suggest=suggest)}"


def test_the_suggest_function_is_what_the_advice_spells(tmp_path: Path) -> None:
    """The diagnosis names the command to run by what it does; render spells it with the options given."""
    world = edited(tmp_path)
    advice = diagnose(world.facts()).advice
    assert advice == reasons.Advice(reasons.Next.FORCE_REVERT)
    spelt = words(advice, suggest=lambda command: f"hfpatch {command} --python /x")
    assert spelt == "`hfpatch revert --python /x --force` puts the original back"
    assert words(advice) == "`hfpatch revert --force` puts the original back"


def test_a_refusal_to_apply_says_the_finding(tmp_path: Path) -> None:
    world = unrecognised(tmp_path)
    facts = world.facts()
    diagnosis: Diagnosis = diagnose(facts)
    refused = plan(Command.APPLY, diagnosis, facts, Options())
    assert refused.message == diagnosis.summary
    assert "hfpatch will not touch code it does not know" in words(refused.message)


ROOT = Path("/venv/lib/python3.11/site-packages")


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        pytest.param(
            reasons.Missing(ROOT / "toypkg" / "core.py", "toypkg"),
            "{root}toypkg/core.py is missing; reinstall toypkg",
            id="missing",
        ),
        pytest.param(
            reasons.Unreadable(ROOT / "toypkg" / "core.py"), "cannot read {root}toypkg/core.py", id="unreadable"
        ),
        pytest.param(
            reasons.EmptyInTheWay(ROOT / "toypkg" / "extra.py", "toypkg-1"),
            "{root}toypkg/extra.py is there, empty, where toypkg-1 adds a module; hfpatch will not overwrite it",
            id="empty-in-the-way",
        ),
        pytest.param(
            reasons.UnknownCode("greet has another text", ROOT / "toypkg" / "core.py"),
            "greet has another text (in {root}toypkg/core.py); hfpatch will not touch code it does not know",
            id="unknown-code",
        ),
        pytest.param(
            reasons.StaleBytecode(ROOT / "toypkg" / "__pycache__" / "core.cpython-311.pyc"),
            "the source has the fix, but cached bytecode still runs other code: "
            "{root}toypkg/__pycache__/core.cpython-311.pyc",
            id="stale-bytecode",
        ),
        pytest.param(
            reasons.NotInstalled("/venv/bin/python", "toypkg"), "/venv/bin/python imports no toypkg", id="not-installed"
        ),
    ],
)
def test_a_reason_names_an_installed_path_within_its_environment_and_whole_without_one(
    reason: reasons.Reason, said: str
) -> None:
    """render alone words a reason: relative to the environment's directory in the text, whole in --json."""
    assert words(reason, (ROOT,)) == said.format(root="")
    assert words(reason) == said.format(root=f"{ROOT}/")


def _sample(annotation: Any) -> object:
    """A value of a reason's field, by its type: every path inside the environment's directory."""
    inside = ROOT / "toypkg" / "core.py"
    samples: dict[Any, object] = {
        Path: inside,
        str: "toypkg-1",
        bool: True,
        int: 2,
        tuple[Path, ...]: (inside, ROOT / "toypkg" / "extra.py"),
        tuple[str, ...]: ("toypkg/core.py",),
        tuple[str, str]: ("1.0", "2.0"),
        tuple[reasons.Reason, ...]: (reasons.Unreadable(inside), reasons.Missing(inside, "toypkg")),
        reasons.Next: reasons.Next.FINISH_OTHER,
    }
    for kind, value in samples.items():
        if annotation == kind or annotation == kind | None:
            return value
    if annotation in _every_reason():  # a reason of one kind within a reason
        return _reason(annotation)
    return reasons.Unreadable(inside)  # any reason within a reason


def _reason(kind: Any) -> reasons.Reason:
    hints = typing.get_type_hints(kind)
    fields = {name: _sample(hints[name]) for name in kind._fields}
    if kind is reasons.WouldDo:
        fields["action"] = "patched"
    return typing.cast(reasons.Reason, kind(**fields))


def _every_reason() -> list[type]:
    return [kind for kind in typing.get_args(reasons.Reason) if kind is not str]


@pytest.mark.parametrize("kind", _every_reason(), ids=lambda kind: kind.__name__)
def test_every_reason_is_worded_by_render_with_its_paths_within_the_environment(kind: type) -> None:
    """Each value the core returns has its words in render alone: a template filled from its fields (none left
    unfilled), each installed path relative to the environment's directory in the text and whole in --json, and
    each command it advises spelt with the options given."""
    reason = _reason(kind)
    text = words(reason, (ROOT,), suggest=suggest)
    assert text, kind
    assert f"{ROOT}/" not in text, text
    if any(isinstance(value, Path) or (isinstance(value, tuple) and value[:1] == (ROOT,)) for value in reason):
        assert f"{ROOT}/" in words(reason, suggest=suggest)
    assert "hfpatch apply`" not in text and "hfpatch revert`" not in text, "a command spelt without its options"


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        pytest.param(
            reasons.Edited(ROOT / "toypkg" / "core.py", "toypkg-1"),
            "toypkg/core.py was changed since hfpatch applied toypkg-1; hfpatch will not overwrite it",
            id="edited",
        ),
        pytest.param(
            reasons.WithAdvice(
                reasons.Dropped(ROOT / "toypkg" / "core.py", "toypkg"), reasons.Advice(reasons.Next.APPLY)
            ),
            "toypkg/core.py holds the original code again (was toypkg reinstalled?); run `hfpatch apply --python /x`",
            id="dropped",
        ),
        pytest.param(
            reasons.OtherInterrupted("apply", "toypkg-2", (ROOT / "toypkg" / "core.py",)),
            "the apply of toypkg-2 was interrupted in toypkg/core.py: finish it first, with toypkg-2 among the "
            "patches (`hfpatch apply --python /x` or `hfpatch revert --python /x`); nothing was changed",
            id="other-interrupted",
        ),
        pytest.param(
            reasons.NotCovered("toypkg", "3.0", False, ("1.0", "2.0"), "toypkg-1", 2, ("toypkg-2",)),
            "toypkg 3.0 is newer than 2.0, the releases toypkg-1 was written from (1.0 to 2.0); its files are as "
            "released but for toypkg-2, which hfpatch applied (RECORD agrees), so hfpatch leaves it",
            id="not-covered",
        ),
        pytest.param(
            reasons.WriteAgain("toypkg-1", ("toypkg:toypkg.core:greet",), None, until="3.0"),
            "to cover it, write the entry again with `hfpatch new toypkg-1 --target toypkg:toypkg.core:greet "
            "--fixed-from PATH --until 3.0 --force`",
            id="write-again",
        ),
        pytest.param(
            reasons.StaleState("toypkg", "1.0", None),
            "stale state: hfpatch patched toypkg 1.0, and an unknown version is installed now; the next "
            "`hfpatch apply --python /x` or `hfpatch revert --python /x` clears it",
            id="stale-state",
        ),
        pytest.param(
            reasons.Together(
                (
                    reasons.Dropped(ROOT / "toypkg" / "a.py", "toypkg"),
                    reasons.Dropped(ROOT / "toypkg" / "b.py", "toypkg"),
                )
            ),
            "toypkg/a.py holds the original code again (was toypkg reinstalled?); toypkg/b.py holds the original "
            "code again (was toypkg reinstalled?)",
            id="together",
        ),
        pytest.param(
            reasons.Works(None, ROOT / "elsewhere" / "core.py", ROOT / "toypkg" / "core.py"),
            "the real code works here (the interpreter imports elsewhere/core.py, not toypkg/core.py): the patch is "
            "applied and in effect",
            id="works-shadowed",
        ),
        pytest.param(
            reasons.ClearedOrphans("toypkg", (ROOT,)),
            f"toypkg is not installed any more; cleared hfpatch's state and backup in {ROOT}",
            id="cleared-orphans",
        ),
        pytest.param(
            reasons.NotCompiled(ROOT / "toypkg" / "core.py", f"[Errno 13] Permission denied: '{ROOT}/toypkg/x.pyc'"),
            "could not compile toypkg/core.py ([Errno 13] Permission denied: 'toypkg/x.pyc'); Python compiles it on "
            "import",
            id="not-compiled-an-os-error-s-path-within",
        ),
        pytest.param(
            reasons.NotRebuilt("no space"),
            "removed the old bytecode but could not rebuild it (no space); Python rebuilds it on import",
            id="not-rebuilt",
        ),
        pytest.param(
            reasons.NoLongerChanges("toypkg-2", "toypkg/core.py"),
            "toypkg-2 in the catalog no longer changes toypkg/core.py; reinstall the package",
            id="no-longer-changes",
        ),
        pytest.param(
            reasons.BackupNotOriginal(ROOT / ".hfpatch" / "files" / "toypkg" / "core.py"),
            "hfpatch's backup .hfpatch/files/toypkg/core.py is missing or not the original; reinstall the package",
            id="backup-not-original",
        ),
        pytest.param(
            reasons.AlreadyHeld("toypkg-1", ROOT),
            f"hfpatch already holds a state of toypkg-1 or its files in {ROOT}",
            id="already-held",
        ),
        pytest.param(
            reasons.DigestsOnly("toypkg-1", reasons.Applied(ROOT / "toypkg" / "core.py", "0.3.0", "2026-12-03")),
            "toypkg-1 is checked by its digests only (hfpatch 0.3.0 patched toypkg/core.py on 2026-12-03)",
            id="digests-only",
        ),
        pytest.param(
            reasons.ClearedReinstalled("toypkg", "1.0", None),
            "toypkg was reinstalled or upgraded since apply (1.0 -> unknown): its files were left as they are, the old "
            "backup was not restored over them, and the stale state was cleared",
            id="cleared-reinstalled",
        ),
        pytest.param(
            reasons.ClearedStale("toypkg", "1.0"), "cleared hfpatch's stale state of toypkg 1.0", id="cleared-stale"
        ),
        pytest.param(
            reasons.OriginalLost(f"cannot read {ROOT}/.hfpatch/files/toypkg/core.py: Permission denied", "toypkg"),
            "cannot read .hfpatch/files/toypkg/core.py: Permission denied: `hfpatch revert --python /x` cannot "
            "restore the original; reinstall toypkg",
            id="original-lost",
        ),
        pytest.param(
            reasons.StrangeState("toypkg-1", "toypkg/other.py", "toypkg/core.py"),
            "hfpatch's state for toypkg-1 names toypkg/other.py, not toypkg/core.py; nothing was changed",
            id="strange-state",
        ),
        pytest.param(
            reasons.ProbeFailed(f"OSError: cannot open {ROOT}/toypkg/data.bin"),
            "the real code failed: OSError: cannot open toypkg/data.bin",
            id="probe-failed-its-path-within",
        ),
    ],
)
def test_a_reason_is_one_sentence_of_render(reason: reasons.Reason, said: str) -> None:
    assert words(reason, (ROOT,), suggest=suggest) == said


def test_a_reason_is_equal_only_to_one_of_its_kind_with_the_same_fields() -> None:
    path = ROOT / "toypkg" / "core.py"
    dropped = reasons.Dropped(path, "toypkg")
    assert dropped == reasons.Dropped(path=path, distribution="toypkg")
    assert dropped != reasons.Edited(path, "toypkg")  # the same fields, another kind
    assert len({dropped, reasons.Dropped(path, "toypkg"), reasons.Edited(path, "toypkg")}) == 2
    assert (dropped.path, dropped.distribution) == (path, "toypkg")
    assert reasons.Advice(reasons.Next.APPLY).patch == ""  # a default
    assert repr(reasons.Unreadable(path)) == f"Unreadable(path={path!r})"
    assert copy.deepcopy(dropped) == dropped and pickle.loads(pickle.dumps(dropped)) == dropped
    with pytest.raises(AttributeError):
        dropped.path = path  # type: ignore[misc]
    match dropped:
        case reasons.Dropped(where, name):
            assert (where, name) == (path, "toypkg")
    with pytest.raises(TypeError, match="'path' twice"):
        reasons.Dropped(path, path=path)  # type: ignore[call-arg,misc]
    for wrong in ((path,), (path, "toypkg", "more")):
        with pytest.raises(TypeError):
            reasons.Dropped(*wrong)
    with pytest.raises(TypeError, match="no field 'where'"):
        reasons.Dropped(path, "toypkg", where=path)  # type: ignore[call-arg]
