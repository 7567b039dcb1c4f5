"""PR #46618 as a user meets it: AutoConfig.from_pretrained(<hub-cache snapshot>, trust_remote_code=True).

Every load runs the release under test (a private copy of it, see conftest.make_site) in a fresh interpreter,
offline, with a fresh module cache; hfpatch runs as a real process too. This process never imports transformers.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PATCH_ID, TARGET, Release
from hubcache import (
    CHAINED_IMPORTS,
    DIRECT_IMPORT,
    HIDDEN_SIZE,
    RemoteCodeModel,
    expected_cache_key,
    through_symlinked_ancestor,
    write_plain_copy,
    write_snapshot,
)
from releases import ABSENT, BUGGY, FIXED, FOUR_ARGUMENT, UPSTREAM_FIXED_FILE_SHA256
from support import Completed, Site, line_in_record, record_line, record_with_line

pytestmark = pytest.mark.transformers

REPO_ID = "hfpatch-tests/remote-code"

MODELS = [
    pytest.param(CHAINED_IMPORTS, id="sibling-imports-sibling"),
    pytest.param(DIRECT_IMPORT, id="direct-import"),
]

CONDITION_BY_FORM = {
    BUGGY: "needs-patch",
    FIXED: "fixed-upstream",
    FOUR_ARGUMENT: "not-applicable",
    ABSENT: "not-applicable",
}

LOAD_CONFIG = """
import json, sys
from transformers import AutoConfig
try:
    config = AutoConfig.from_pretrained(sys.argv[1], trust_remote_code=True)
except Exception as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
else:
    print(json.dumps({"module": type(config).__module__, "hidden_size": config.hidden_size}))
"""


@dataclass(frozen=True)
class Loaded:
    """What one from_pretrained did: the config class's module, or the exception it raised."""

    modules_cache: Path
    # transformers_modules.<directory name>.<cache key>.configuration_custom
    module: str | None = None
    hidden_size: int | None = None
    error: str | None = None
    message: str | None = None

    @property
    def ok(self) -> bool:
        # hidden_size comes from constants.py by way of helpers.py: every sibling module was imported.
        return self.error is None and self.hidden_size == HIDDEN_SIZE

    @property
    def name_and_key(self) -> tuple[str, str]:
        assert self.module is not None, f"{self.error}: {self.message}"
        package, name, key, module = self.module.split(".")
        assert (package, module) == ("transformers_modules", "configuration_custom")
        return name, key

    @property
    def key(self) -> str:
        return self.name_and_key[1]


Loader = Callable[[Path], Loaded]


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the loads keep their bytecode (PYTHONPYCACHEPREFIX): importing transformers costs half as much once its
    dependencies are compiled, and nothing is written into the test environment. Bytecode is checked against each
    source's mtime and size, so a load always runs the file on disk."""
    return tmp_path_factory.mktemp("bytecode")


@pytest.fixture
def load_config(site: Site, tmp_path: Path, bytecode_cache: Path) -> Loader:
    def load(model_dir: Path) -> Loaded:
        modules_cache = Path(tempfile.mkdtemp(prefix="modules-", dir=tmp_path))
        env = site.env(
            HF_HUB_OFFLINE="1",
            HF_MODULES_CACHE=str(modules_cache),
            HF_HOME=str(tmp_path / "hf-home"),
            PYTHONPYCACHEPREFIX=str(bytecode_cache),
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run(
            [sys.executable, "-c", LOAD_CONFIG, str(model_dir)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return Loaded(modules_cache, **json.loads(done.stdout.splitlines()[-1]))

    return load


def succeeded(command: str, site: Site) -> Completed:
    done = site.run(command)
    assert done.code == 0, done.out + done.err
    return done


@dataclass(frozen=True)
class Layouts:
    """One model three ways: its hub-cache snapshot, that snapshot reached through a symlinked ancestor
    (link/hub/... with link -> real), and a plain copy in a directory named like the snapshot."""

    snapshot: Path
    snapshot_through_symlinked_ancestor: Path
    plain_copy: Path


def lay_out(model: RemoteCodeModel, tmp_path: Path) -> Layouts:
    real = tmp_path / "real"
    snapshot = write_snapshot(real / "hub", REPO_ID, model)
    return Layouts(
        snapshot=snapshot.path,
        snapshot_through_symlinked_ancestor=through_symlinked_ancestor(snapshot.path, real, link=tmp_path / "link"),
        plain_copy=write_plain_copy(tmp_path / "plain", snapshot),
    )


# ---------------------------------------------------------------------------------------------------- what hfpatch sees


def test_hfpatch_sees_the_form_the_release_carries(release: Release, site: Site) -> None:
    done = site.run("check", "--json")
    (environment,) = json.loads(done.out)["environments"]
    (patch,) = environment["patches"]
    assert patch["condition"] == CONDITION_BY_FORM[release.form], patch["message"]
    assert done.code == (1 if release.form == BUGGY else 0)


# ----------------------------------------------------------------------------------------------- the bug, and the patch


@pytest.mark.parametrize("model", MODELS)
def test_a_buggy_release_loads_a_snapshot_only_while_patched(
    release: Release, site: Site, load_config: Loader, tmp_path: Path, model: RemoteCodeModel
) -> None:
    if release.form != BUGGY:
        pytest.skip(f"{release.version} does not carry the buggy form")
    snapshot = write_snapshot(tmp_path / "hub", REPO_ID, model).path

    original, record = site.file.read_bytes(), site.record.read_bytes()

    before = load_config(snapshot)  # the test proves itself: the bug is there
    assert before.error == "FileNotFoundError"
    assert "/blobs/helpers.py" in str(before.message)

    assert succeeded("apply", site).label(PATCH_ID) == "patched"
    assert hashlib.sha256(site.file.read_bytes()).hexdigest() == UPSTREAM_FIXED_FILE_SHA256
    line = record_line(TARGET, site.file.read_bytes())
    assert site.record.read_bytes() == record_with_line(record, line_in_record(record, TARGET), line)
    assert load_config(snapshot).ok

    assert succeeded("revert", site).label(PATCH_ID) == "reverted"
    assert (site.file.read_bytes(), site.record.read_bytes()) == (original, record)
    after_revert = load_config(snapshot)
    assert after_revert.error == "FileNotFoundError"
    assert "/blobs/helpers.py" in str(after_revert.message)


@pytest.mark.parametrize("model", MODELS)
def test_apply_changes_nothing_where_the_release_needs_no_patch(
    release: Release, site: Site, load_config: Loader, tmp_path: Path, model: RemoteCodeModel
) -> None:
    form = release.form
    if form == BUGGY:
        pytest.skip(f"{release.version} carries the buggy form")
    if form in (FOUR_ARGUMENT, ABSENT) and model is CHAINED_IMPORTS:
        pytest.skip(f"{release.version} cannot load this model from any directory (see the four-argument tests)")
    snapshot = write_snapshot(tmp_path / "hub", REPO_ID, model).path
    source = site.file.read_bytes()

    before = load_config(snapshot)
    assert before.ok

    record = site.record.read_bytes()
    succeeded("apply", site)
    assert (site.file.read_bytes(), site.record.read_bytes()) == (source, record)
    assert not site.state_dir.exists()

    after = load_config(snapshot)
    assert after.ok
    assert after.module == before.module


# --------------------------------------------------------------------------------- the cache key, with the fix in place


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("through_symlinked_ancestor", [False, True], ids=["direct", "via-symlinked-ancestor"])
def test_with_the_fix_a_snapshot_has_the_cache_key_of_a_plain_copy(
    release: Release,
    site: Site,
    load_config: Loader,
    tmp_path: Path,
    model: RemoteCodeModel,
    through_symlinked_ancestor: bool,
) -> None:
    form = release.form
    if form in (FOUR_ARGUMENT, ABSENT):
        pytest.skip(f"{release.version} predates the code PR #46618 fixes")
    if form == BUGGY:
        succeeded("apply", site)
    layouts = lay_out(model, tmp_path)
    snapshot = layouts.snapshot_through_symlinked_ancestor if through_symlinked_ancestor else layouts.snapshot

    from_snapshot, from_copy = load_config(snapshot), load_config(layouts.plain_copy)

    assert from_snapshot.ok and from_copy.ok
    assert from_snapshot.name_and_key == from_copy.name_and_key
    assert from_snapshot.key == expected_cache_key(model)


# ---------------------------------------------------------------------------------- 5.8.x-5.9.0: older code, left alone


def test_four_argument_releases_load_a_snapshot_with_other_key_than_a_plain_copy(
    release: Release, load_config: Loader, tmp_path: Path
) -> None:
    """They resolve the snapshot's links and hash the blob paths they reach: the key is not the plain copy's."""
    if release.form != FOUR_ARGUMENT:
        pytest.skip(f"{release.version} does not carry the four-argument form")
    layouts = lay_out(DIRECT_IMPORT, tmp_path)

    from_snapshot = load_config(layouts.snapshot)
    from_linked = load_config(layouts.snapshot_through_symlinked_ancestor)
    from_copy = load_config(layouts.plain_copy)

    assert from_snapshot.ok and from_linked.ok and from_copy.ok
    assert from_copy.key == expected_cache_key(DIRECT_IMPORT)
    assert from_snapshot.key != from_copy.key
    assert from_linked.key == from_snapshot.key


def test_four_argument_releases_cannot_load_a_sibling_importing_a_sibling_from_any_directory(
    release: Release, load_config: Loader, tmp_path: Path
) -> None:
    """They copy only the config module's direct imports into the module cache: helpers.py gets there, constants.py
    does not. The plain copy fails as the snapshot does: an older limitation, not the bug of PR #46618."""
    if release.form != FOUR_ARGUMENT:
        pytest.skip(f"{release.version} does not carry the four-argument form")
    layouts = lay_out(CHAINED_IMPORTS, tmp_path)

    for model_dir in (layouts.snapshot, layouts.plain_copy):
        loaded = load_config(model_dir)
        assert loaded.error == "FileNotFoundError"
        assert f"{loaded.modules_cache}/transformers_modules/" in str(loaded.message)
        assert str(loaded.message).endswith("/constants.py'")
