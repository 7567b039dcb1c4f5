"""The project declares its patches: `[tool.hfpatch]` in its pyproject.toml, through the real CLI, in a temporary
project whose catalog holds the toy entry.

    project/pyproject.toml      [tool.hfpatch] catalog = ["hfpatches"], patches = ["toypkg-1"]
    project/hfpatches/          the toy catalog
    project/src/app/            where the commands run: the file is found from there upward

No run names --catalog, --patch or HFPATCH_CATALOG unless the test is about them: the file says it all.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from support import Completed, Site, clean_env, hfpatch, imports_of, python_path
from toy import FIXED_MODULE, PATCH_ID, make_site

from hfpatch import catalog

TABLE = """\
[project]
name = "app"

[tool.hfpatch]
catalog = ["hfpatches"]      # the team's catalog, beside this file
patches = ["toypkg-1"]       # what the app requires
"""


class Project:
    """A project directory with a pyproject.toml, a catalog beside it, and a site its commands act on."""

    def __init__(self, where: Path, pyproject: str = TABLE) -> None:
        self.site: Site = make_site(where / "toy")
        self.root = where / "project"
        self.cwd = self.root / "src" / "app"
        self.cwd.mkdir(parents=True)
        shutil.copytree(self.site.team_catalog, self.root / "hfpatches")
        self.pyproject = self.root / "pyproject.toml"
        self.pyproject.write_text(pyproject, encoding="utf-8")

    def run(self, *args: str, cwd: Path | None = None) -> Completed:
        """hfpatch in the project, on the interpreter whose path starts with the site (and no catalog variable)."""
        env = clean_env(PYTHONPATH=python_path(self.site.root))
        return hfpatch(*args, env=env, cwd=cwd or self.cwd)


def labels(done: Completed) -> dict[str, str]:
    """Each patch's label: `  <id>: <label>: <sentence>`."""
    return {
        line.split(":")[0].strip(): line.split(":")[1].strip()
        for line in done.lines
        if line.startswith("  ") and not line.startswith("    ")
    }


def error_line(done: Completed) -> str:
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert "Traceback" not in done.err, done.err
    (line,) = done.err.splitlines()
    return line


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


# --------------------------------------------------------------------------------------- the file says it all


def test_every_command_acts_on_exactly_the_patches_the_file_requires_from_the_catalog_it_names(
    project: Project,
) -> None:
    check = project.run("check")
    assert (check.code, labels(check)) == (1, {PATCH_ID: "needs-patch"}), check.out + check.err
    assert check.out.startswith(f"[tool.hfpatch] of {project.pyproject}\n"), check.out
    # the suggestion needs no option: the same directory finds the same file
    assert "run `hfpatch apply`" in check.text, check.out

    apply = project.run("apply")
    assert (apply.code, labels(apply)) == (0, {PATCH_ID: "patched"}), apply.out + apply.err
    assert project.site.file.read_bytes() == FIXED_MODULE.encode()
    assert (project.run("check").code, project.run("verify").code) == (0, 0)
    revert = project.run("revert")
    assert (revert.code, labels(revert)) == (0, {PATCH_ID: "reverted"}), revert.out + revert.err

    document = project.run("check", "--json").document()
    assert document["config"] == str(project.pyproject)
    assert [found["id"] for found in document["environments"][0]["patches"]] == [PATCH_ID]


def test_list_shows_every_patch_of_the_catalogs_and_marks_the_required_ones(project: Project) -> None:
    done = project.run("list")
    assert done.code == 0, done.out + done.err
    rows = done.listing()
    assert PATCH_ID in rows and "transformers-46618" in rows, done.out
    assert f"\n{PATCH_ID} * " in done.text
    assert f"\n*: required by [tool.hfpatch] of {project.pyproject}\n" in done.text


def test_the_command_line_adds_catalogs_and_its_patches_override_the_files(project: Project, tmp_path: Path) -> None:
    other = tmp_path / "other-catalog"
    shutil.copytree(project.root / "hfpatches" / PATCH_ID, other / "toypkg-2")
    entry = other / "toypkg-2" / "patch.json"
    entry.write_text(entry.read_text().replace(f'"id": "{PATCH_ID}"', '"id": "toypkg-2"'), encoding="utf-8")
    # toypkg-1 and toypkg-2 change one statement: only one can be selected at a time
    only = project.run("check", "--catalog", str(other), "--patch", "toypkg-2")
    assert (only.code, labels(only)) == (1, {"toypkg-2": "needs-patch"}), only.out + only.err
    assert f"run `hfpatch apply --patch toypkg-2 --catalog {other}`" in only.text, only.out
    # --catalog adds to the file's catalogs: the file's patch is still found in its own
    both = project.run("check", "--catalog", str(other))
    assert (both.code, labels(both)) == (1, {PATCH_ID: "needs-patch"}), both.out + both.err


def test_no_config_ignores_the_file_and_config_names_one(project: Project, tmp_path: Path) -> None:
    ignored = project.run("check", "--no-config", "--patch", PATCH_ID)
    said = error_line(ignored)
    assert said.startswith(f"hfpatch: error: no patch named '{PATCH_ID}' in the catalog (`hfpatch list` lists its ")
    assert len(said) <= 120, "however many entries the catalogs hold"
    near = project.run("check", "--no-config", "--patch", "transformers-46619")
    # the nearest id only: the line grows with the ids' lengths, never with the catalog's
    assert error_line(near) == (
        "hfpatch: error: no patch named 'transformers-46619' in the catalog (did you mean transformers-46618? "
        f"`hfpatch list` lists its {len(catalog.entry_dirs([catalog.builtin_catalog()]))} entries)."
    )

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    named = project.run("check", "--config", str(project.pyproject), cwd=elsewhere)
    assert (named.code, labels(named)) == (1, {PATCH_ID: "needs-patch"}), named.out + named.err
    assert f"run `hfpatch apply --config {project.pyproject}`" in named.text, named.out

    both = project.run("check", "--config", str(project.pyproject), "--no-config")
    assert "not allowed with argument" in error_line(both)


def test_a_pyproject_without_the_table_stops_the_search(project: Project) -> None:
    """As ruff and pytest: the nearest pyproject.toml is the project's; the outer one belongs to another."""
    inner = project.cwd / "pyproject.toml"
    inner.write_text('[project]\nname = "inner"\n\n[project.scripts]\nhfpatch = "x:y"\n', encoding="utf-8")
    done = project.run("check", "--catalog", str(project.root / "hfpatches"), "--patch", PATCH_ID)
    assert (done.code, labels(done)) == (1, {PATCH_ID: "needs-patch"}), done.out + done.err
    assert "[tool.hfpatch]" not in done.text


@pytest.mark.parametrize(
    "pyproject",
    [
        pytest.param('[tool]\nhfpatch.catalog = ["hfpatches"]\nhfpatch.patches = ["toypkg-1"]\n', id="dotted-keys"),
        pytest.param('tool.hfpatch = { catalog = ["hfpatches"], patches = ["toypkg-1"] }\n', id="inline-table"),
        pytest.param('[ "tool" . hfpatch ]\ncatalog = [\n  "hfpatches",\n]\npatches = ["toypkg-1"]\n', id="spaced"),
    ],
)
def test_the_table_is_found_however_toml_spells_it(tmp_path: Path, pyproject: str) -> None:
    done = Project(tmp_path, pyproject).run("check")
    assert (done.code, labels(done)) == (1, {PATCH_ID: "needs-patch"}), done.out + done.err


# ------------------------------------------------------------------------------- mistakes: one line, exit 2


@pytest.mark.parametrize(
    ("pyproject", "says"),
    [
        pytest.param(
            TABLE.replace('"toypkg-1"]', '"toypkg-1", "mylib-123"]'),
            "{file}:6: [tool.hfpatch] patches: no patch named 'mylib-123' in the catalog (`hfpatch list` lists its ",
            id="a-required-id-no-catalog-has",
        ),
        pytest.param(
            TABLE.replace("catalog = ", "catalogs = "),
            "{file}:5: [tool.hfpatch] has no key 'catalogs' (it has catalog, patches); did you mean 'catalog'?",
            id="an-unknown-key",
        ),
        pytest.param(
            TABLE.replace('["hfpatches"]', '["hfpatches", "teams/missing"]'),
            "{file}:5: [tool.hfpatch] catalog: teams/missing ({root}/teams/missing) does not exist; name a "
            "directory of patch entries, relative to {root}.",
            id="a-catalog-that-does-not-exist",
        ),
        pytest.param(
            TABLE.replace('patches = ["toypkg-1"]', "patches = toypkg-1"),
            "{file}:6: not valid TOML: Invalid value (column 11).",
            id="malformed-toml",
        ),
        pytest.param(
            TABLE.replace('patches = ["toypkg-1"]', "patches = [1]"),
            "{file}:6: [tool.hfpatch] patches must be a list of patch ids (strings), not [1].",
            id="a-value-of-the-wrong-type",
        ),
        pytest.param(
            TABLE.replace('patches = ["toypkg-1"]', 'patches = "toypkg-1"'),
            "{file}:6: [tool.hfpatch] patches must be a list of patch ids (strings), not 'toypkg-1'; write "
            "patches = ['toypkg-1'].",
            id="a-string-for-a-list",
        ),
        pytest.param(
            TABLE.replace("[tool.hfpatch]", "[tool.hfpatchs]"),
            "{file}:4: [tool.hfpatchs] is no table hfpatch reads; did you mean [tool.hfpatch]?",
            id="a-misspelt-table",
        ),
        pytest.param(
            TABLE.replace("[tool.hfpatch]", "[tool.hf-patch]"),
            "{file}:4: [tool.hf-patch] is no table hfpatch reads; did you mean [tool.hfpatch]?",
            id="a-misspelt-table-with-a-hyphen",
        ),
        pytest.param(
            TABLE.replace('patches = ["toypkg-1"]', "patches = []"),
            "{file}:6: [tool.hfpatch] patches is empty; list the patches the project requires, or leave the key "
            "out for every patch of the catalogs.",
            id="no-patch-at-all",
        ),
    ],
)
def test_a_mistake_in_the_table_is_one_line_naming_the_file_the_line_and_the_key(
    tmp_path: Path, pyproject: str, says: str
) -> None:
    project = Project(tmp_path, pyproject)
    for command in ("check", "apply", "revert", "verify", "list"):
        line = error_line(project.run(command))
        expected = says.format(file=project.pyproject, root=project.root)
        assert line.startswith(f"hfpatch: error: {expected}"), line
    assert not project.site.state_dir.exists()


def test_config_naming_a_file_without_the_table_is_an_error(project: Project) -> None:
    other = project.root / "other.toml"
    other.write_text("[tool.ruff]\nline-length = 120\n", encoding="utf-8")
    line = error_line(project.run("check", "--config", str(other)))
    assert (
        line == f"hfpatch: error: {other} (--config) has no [tool.hfpatch] table; name a pyproject.toml that has one."
    )


# -------------------------------------------------------------------------------------------- what it costs


def test_a_pyproject_without_the_table_costs_check_no_toml_parser(project: Project) -> None:
    parser = "tomllib" if sys.version_info >= (3, 11) else "tomli"
    env = clean_env(PYTHONPATH=python_path(project.site.root))
    done, imported = imports_of(["hfpatch", "check"], env=env, cwd=project.cwd)
    assert done.code == 1 and parser in imported, done.err[-2000:]

    project.pyproject.write_text('[project]\nname = "app"\n\n[project.scripts]\nhfpatch = "x:y"\n', encoding="utf-8")
    args = ["hfpatch", "check", "--catalog", str(project.root / "hfpatches"), "--patch", PATCH_ID]
    done, imported = imports_of(args, env=env, cwd=project.cwd)
    assert done.code == 1, done.err[-2000:]
    assert "hfpatch.config" in imported, "the measurement saw hfpatch's own imports"
    assert parser not in imported
