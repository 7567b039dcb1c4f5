"""Whose files: root (sudo) patching a user's site leaves everything it creates to that user, and a user who may
not write is told why (the directory is read-only for its owner, or it belongs to someone else).

Root only: the runs change owners and switch users. The user is uid and gid 4242, which no account has.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import Completed, Site, run
from toy import BUGGY_MODULE, FIXED_MODULE, PATCH_ID, make_site

import hfpatch
from hfpatch import catalog

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="ownership needs root: it chowns files and switches users"
)

USER = 4242

# hfpatch as USER where USER cannot reach the interpreter (it lives under root's 0700 home): root starts it and
# imports every module that any file of hfpatch imports (at the top or inside a function), then gives up root for
# good (real, effective and saved ids; no supplementary groups) before hfpatch runs. Every file hfpatch touches, it
# touches as USER; only the interpreter's own files were read as root.
_AS_USER = """
import ast, contextlib, importlib, os, sys
from pathlib import Path
import gettext, locale  # argparse looks up translations while it builds the parser (Python 3.10 imports locale then)
import hfpatch
package = Path(hfpatch.__file__).parent
for source in sorted(package.glob("*.py")):
    if source.stem != "__main__":
        importlib.import_module(f"hfpatch.{source.stem}")
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
uid, gid = int(sys.argv[1]), int(sys.argv[2])
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
from hfpatch.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A scratch directory USER can enter: pytest's tmp_path lies below a directory only root may search."""
    base = Path(tempfile.mkdtemp(prefix="hfpatch-ownership-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def readable_hfpatch() -> Iterator[Path]:
    """A copy of hfpatch (and its catalog) that USER can read: an editable install in root's home, or below pytest's
    tmp_path, is not, and hfpatch reads its built-in catalog as USER once it runs as USER."""
    base = Path(tempfile.mkdtemp(prefix="hfpatch-ownership-code-"))
    package = Path(hfpatch.__file__).parent
    try:
        shutil.copytree(package, base / "hfpatch", ignore=shutil.ignore_patterns("__pycache__"))
        if not (package / "patches").is_dir():  # a checkout: the catalog is patches/ beside the package
            shutil.copytree(catalog.builtin_catalog(), base / "patches", ignore=shutil.ignore_patterns("__pycache__"))
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def user_runs_python() -> bool:
    """Whether USER may run this interpreter with hfpatch itself."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import hfpatch.cli"],
            user=USER,
            group=USER,
            extra_groups=[],
            capture_output=True,
            cwd="/",
            timeout=120,
            check=False,
        )
    except PermissionError:
        return False
    return done.returncode == 0


def run_as_user(site: Site, code: Path, *args: str) -> Completed:
    if user_runs_python():
        return run(site.command(*args), env=site.env(), cwd="/", user=USER, group=USER, extra_groups=[])
    command = [sys.executable, "-c", _AS_USER, str(USER), str(USER), *site.command(*args)[3:]]
    env = site.env()
    env["PYTHONPATH"] = os.pathsep.join([str(code), env["PYTHONPATH"]])
    return run(command, env=env, cwd="/")


def chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for path in root.rglob("*"):
        os.chown(path, uid, gid, follow_symlinks=False)


def owners(root: Path) -> dict[str, tuple[int, int]]:
    return {str(path.relative_to(root)): (path.lstat().st_uid, path.lstat().st_gid) for path in root.rglob("*")}


def sentence(done: Completed) -> str:
    lines = [line for line in done.lines if line.startswith(f"  {PATCH_ID}: ")]
    assert len(lines) == 1, done.out + done.err
    return lines[0].split(": ", 2)[2]


def test_what_root_creates_in_a_users_site_belongs_to_the_user_who_can_revert_and_remove_it(
    reachable: Path, readable_hfpatch: Path
) -> None:
    site = make_site(reachable / "work")
    pyc = Path(importlib.util.cache_from_source(str(site.file)))
    py_compile.compile(str(site.file), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    chown_tree(reachable, USER, USER)
    file_before = site.file.stat().st_ino

    done = site.run("apply")  # as root, as `sudo hfpatch apply` runs it
    assert done.code == 0, done.out + done.err
    assert site.file.read_bytes() == FIXED_MODULE.encode()
    for made in (site.state_dir, site.state_dir / "lock", site.state.parent, site.state, site.backup):
        assert made.exists(), f"apply did not create {made}"
    # Written anew by root: the patched file (a new inode that keeps the owner) and the .pyc, rebuilt from it.
    assert site.file.stat().st_ino != file_before
    assert pyc.read_bytes()[8:16] == importlib.util.source_hash(FIXED_MODULE.encode())
    not_users = {path: owner for path, owner in owners(reachable).items() if owner != (USER, USER)}
    assert not not_users, f"files root left to itself in uid {USER}'s site: {not_users}"
    assert not [path for path in reachable.rglob("*") if ".hfpatch-" in path.name], "temporary files left"

    revert = run_as_user(site, readable_hfpatch, "revert")
    assert revert.code == 0, revert.out + revert.err
    assert site.file.read_bytes() == BUGGY_MODULE.encode()
    assert not site.holds_state
    removed = subprocess.run(
        ["rm", "-rf", str(reachable / "work")],
        user=USER,
        group=USER,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert removed.returncode == 0, f"uid {USER} cannot remove its own site after root's apply: {removed.stderr}"
    assert not (reachable / "work").exists()


def test_a_site_read_only_for_its_owner_is_called_that_not_someone_elses(
    reachable: Path, readable_hfpatch: Path
) -> None:
    site = make_site(reachable / "work")
    chown_tree(reachable, USER, USER)
    for directory in [site.root, *(path for path in site.root.rglob("*") if path.is_dir())]:
        directory.chmod(0o555)
    done = run_as_user(site, readable_hfpatch, "apply")
    assert done.code == 2, done.out + done.err
    said = sentence(done)
    assert f"is read-only for its owner (uid {USER})" in said, said
    assert "Run hfpatch as" not in said and "belongs to" not in said, said
    assert not site.state_dir.exists()


def test_a_site_owned_by_root_tells_another_user_that_it_belongs_to_root(
    reachable: Path, readable_hfpatch: Path
) -> None:
    site = make_site(reachable / "work")
    done = run_as_user(site, readable_hfpatch, "apply")
    assert done.code == 2, done.out + done.err
    said = sentence(done)
    assert f"belongs to root, not uid {USER}" in said and "Run hfpatch as root" in said, said
    assert "read-only for its owner" not in said, said
    assert not site.state_dir.exists()


def test_a_catalog_another_user_may_not_read_is_one_error_line(reachable: Path, readable_hfpatch: Path) -> None:
    site = make_site(reachable / "work")
    private = reachable / "private"
    (private / "hfpatches").mkdir(parents=True)
    private.chmod(0o700)  # root's: USER may not look inside
    done = run_as_user(site, readable_hfpatch, "check", "--catalog", str(private / "hfpatches"))
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"hfpatch: error: cannot read the catalog {private / 'hfpatches'}: permission denied.\n"


def test_a_python_that_leads_into_a_directory_the_user_may_not_enter_is_one_error_line(
    reachable: Path, readable_hfpatch: Path
) -> None:
    """--python is a link (a venv's bin/python) into a directory only root may enter: the user is told which."""
    site = make_site(reachable / "work")
    closed = reachable / "closed"
    closed.mkdir()
    (closed / "python3").symlink_to(sys.executable)
    closed.chmod(0o700)  # root's: USER may not look inside
    link = reachable / "venv" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(closed / "python3")
    done = run_as_user(site, readable_hfpatch, "check", "--python", str(link))
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"hfpatch: error: cannot read {link} (it leads to {closed / 'python3'}): uid {USER} may not enter {closed}; "
        f"run hfpatch as a user who may, or give --python an interpreter uid {USER} can run.\n"
    )
