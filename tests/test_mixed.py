"""One run over several environments, and over several patches in mixed conditions: what a CI line or an image
build with `--python a --python b ...` and a catalog of several entries meets.

Every environment is a wrapper script given to --python (tests/support.py), each with its own site: one unusable
interpreter among them must not stop the others, each is reported, and the exit code is the worst. The patches in
mixed conditions are entries `hfpatch new` wrote from the wheels of Made_Up.Hub (tests/wheelfactory.py), installed
from those wheels: first() is fixed in 2.0 (and backported to 1.0.1), strip() is fixed in 3.0 and not applicable
to 2.0, which gave it another signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import wheelfactory as factory
from support import Completed, Site, clean_env, hfpatch, wrapper_python
from toy import FIXED_MODULE, PATCH_ID, make_site, write_catalog

FIXED = FIXED_MODULE.encode()

# ------------------------------------------------------------------------- several environments, one broken


@dataclass(frozen=True)
class Environments:
    """Two toy sites, each behind its own interpreter, and an interpreter that is not there, given in between."""

    first: Site
    second: Site
    pythons: tuple[str, str, str]

    @property
    def broken(self) -> str:
        return self.pythons[1]

    def run(self, *args: str, pythons: tuple[str, ...] | None = None) -> Completed:
        given = [word for python in (pythons or self.pythons) for word in ("--python", python)]
        env = clean_env(HFPATCH_CATALOG=str(self.first.team_catalog))
        return hfpatch(*args, *given, patch=PATCH_ID, env=env)


@pytest.fixture
def environments(tmp_path: Path) -> Environments:
    first, second = make_site(tmp_path / "first"), make_site(tmp_path / "second")
    pythons = (
        wrapper_python(tmp_path / "first" / "bin" / "python", first.root),
        str(tmp_path / "gone" / "bin" / "python"),
        wrapper_python(tmp_path / "second" / "bin" / "python", second.root),
    )
    return Environments(first, second, pythons)


def headings(done: Completed) -> list[str]:
    """The interpreters the text output reports on, in order."""
    return [line.split(" [Python ")[0] for line in done.lines if " [Python " in line]


def test_apply_acts_on_every_usable_environment_and_exits_with_the_worst_code(environments: Environments) -> None:
    done = environments.run("apply")
    assert done.code == 2
    assert environments.first.file.read_bytes() == environments.second.file.read_bytes() == FIXED
    assert headings(done) == [environments.pythons[0], environments.pythons[2]]
    assert done.out.count(f"  {PATCH_ID}: patched: ") == 2
    (line,) = done.err.splitlines()
    assert line == f"hfpatch: error: no Python interpreter at '{environments.broken}'; give --python the path of one."


def test_check_reports_every_environment_in_order_with_its_own_exit_code_and_the_worst(
    environments: Environments,
) -> None:
    assert environments.second.run("apply").code == 0
    document = environments.run("check", "--json")
    assert document.code == 2
    found = document.document()
    assert found["exit_code"] == 2
    assert [(each["python"], each["exit_code"]) for each in found["environments"]] == list(
        zip(environments.pythons, [1, 2, 0], strict=True)
    )
    assert [[entry["condition"] for entry in each["patches"]] for each in found["environments"]] == [
        ["needs-patch"],
        [],
        ["applied"],
    ]
    usable = (environments.pythons[0], environments.pythons[2])
    assert environments.run("check", pythons=usable).code == 1, "needs-patch in the first, applied in the last"
    assert environments.run("check", pythons=usable[::-1]).code == 1


def test_each_environment_s_advice_names_its_own_python(environments: Environments) -> None:
    done = environments.run("check")
    lines = [line for line in done.lines if line.startswith(f"  {PATCH_ID}: needs-patch: ")]
    assert [line.rsplit("; ", 1)[1] for line in lines] == [
        f"run `hfpatch apply --python {python} --patch {PATCH_ID}`"
        for python in (environments.pythons[0], environments.pythons[2])
    ]


def test_list_reports_every_usable_environment_and_fails_for_the_unusable_one(environments: Environments) -> None:
    done = environments.run("list")
    assert done.code == 2
    first, broken, second = environments.pythons
    # One column an environment, numbered in the order given; the legend heads each usable one as check does.
    assert headings(done) == [f"1: {first}", f"3: {second}"]
    assert f"\n2: {broken}\n" in done.text
    assert {column: done.listing()[PATCH_ID][column] for column in "123"} == {
        "1": "needs-patch",
        "2": "error",
        "3": "needs-patch",
    }
    (line,) = done.err.splitlines()
    assert line == f"hfpatch: error: no Python interpreter at '{broken}'; give --python the path of one."


# --------------------------------------------------------------------------- several patches, mixed conditions

FIRST, STRIP = "hub-first", "hub-strip"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Made_Up.Hub's wheels, and a catalog with an entry for each fix, written by `hfpatch new` from them."""
    wheels, catalog = tmp_path_factory.mktemp("hub-wheels"), tmp_path_factory.mktemp("hub-catalog")
    factory.build_hub(wheels)
    for patch_id, module, name, fixed_in in ((FIRST, "core", "first", "2.0"), (STRIP, "extra", "strip", "3.0")):
        target = f"{factory.HUB}:made_up_hub.{module}:{name}"
        done = hfpatch("new", patch_id, "--target", target, "--fixed-in", fixed_in, "--catalog", str(catalog),
                       "--find-links", str(wheels))  # fmt: skip
        assert done.code == 0, done.out + done.err
    return wheels, catalog


def hub_site(hub: tuple[Path, Path], where: Path, version: str, patch_id: str = FIRST) -> Site:
    """Made_Up.Hub `version` installed from its wheel into a site of its own, with both entries' catalog."""
    wheels, catalog = hub
    root = factory.install(wheels / f"made_up_hub-{version}-py3-none-any.whl", where / "site")
    return Site(root, factory.HUB_WHEEL_NAME, version, factory.HUB_CORE, patch_id, catalog=catalog)


def check(site: Site, *patch_ids: str, catalog: Path | None = None) -> Completed:
    """check --fail-on-obsolete of the patches named (the site's own --patch is the first of them)."""
    selection = [word for patch_id in patch_ids if patch_id != site.patch_id for word in ("--patch", patch_id)]
    extra = ["--catalog", str(catalog)] if catalog is not None else []
    return site.run("check", "--fail-on-obsolete", *selection, *extra)


OBSOLETE = "obsolete: every patch is fixed upstream or not applicable here"


@pytest.mark.parametrize(
    ("version", "apply_first", "patch_ids", "labels", "code", "obsolete"),
    [
        pytest.param("2.0", False, [FIRST, STRIP], ["fixed-upstream", "not-applicable"], 1, True, id="fixed-beside-na"),
        pytest.param("2.0", False, [STRIP], ["not-applicable"], 0, False, id="only-not-applicable"),
        pytest.param("3.0", False, [FIRST, STRIP], ["fixed-upstream", "fixed-upstream"], 1, True, id="both-fixed"),
        pytest.param("1.0.1", False, [FIRST], ["fixed-upstream"], 1, True, id="a-backported-fix"),
        pytest.param(
            "1.0.1", False, [FIRST, STRIP], ["fixed-upstream", "needs-patch"], 1, False, id="one-still-needed"
        ),
        pytest.param("1.0", True, [FIRST, STRIP], ["applied", "applied"], 0, False, id="both-applied"),
        pytest.param("0.9", False, [FIRST, STRIP], ["not-applicable", "not-applicable"], 0, False, id="predates-both"),
    ],
)
def test_fail_on_obsolete_over_mixed_conditions(
    hub: tuple[Path, Path],
    tmp_path: Path,
    version: str,
    apply_first: bool,
    patch_ids: list[str],
    labels: list[str],
    code: int,
    obsolete: bool,
) -> None:
    site = hub_site(hub, tmp_path, version, patch_ids[0])
    if apply_first:
        assert check(site, *patch_ids).code == 1
        applied = site.run("apply", *[word for patch_id in patch_ids[1:] for word in ("--patch", patch_id)])
        assert applied.code == 0, applied.out + applied.err
    done = check(site, *patch_ids)
    assert [done.label(patch_id) for patch_id in patch_ids] == labels, done.out + done.err
    assert (done.code, OBSOLETE in done.text) == (code, obsolete), done.out + done.err


def test_a_patch_whose_distribution_is_not_installed_leaves_apply_obsolete(
    hub: tuple[Path, Path], tmp_path: Path
) -> None:
    """The image has Made_Up.Hub 2.0, which has the fix, and no toypkg at all: the apply step does nothing."""
    write_catalog(tmp_path / "toy-catalog")
    site = hub_site(hub, tmp_path, "2.0")
    done = check(site, FIRST, PATCH_ID, catalog=tmp_path / "toy-catalog")
    assert [done.label(patch_id) for patch_id in (FIRST, PATCH_ID)] == ["fixed-upstream", "not-installed"]
    assert (done.code, OBSOLETE in done.text) == (1, True), done.out + done.err


def test_a_release_with_the_fix_backported_has_the_upstream_fix(hub: tuple[Path, Path], tmp_path: Path) -> None:
    """1.0.1 is older than --fixed-in 2.0, and `hfpatch new` read its first() as the fix: it is fixed upstream."""
    site = hub_site(hub, tmp_path, "1.0.1")
    done = site.run("check")
    assert (done.code, done.label(FIRST)) == (0, "fixed-upstream"), done.out + done.err
    assert f"{factory.HUB} 1.0.1 has the upstream fix ({FIRST}, in 2.0): this patch is obsolete here" in done.text


def test_fail_on_obsolete_judges_each_environment_on_its_own(hub: tuple[Path, Path], tmp_path: Path) -> None:
    """A worker image on 2.0 (its apply step is dead) and an app image on 1.0 (patched), checked in one run."""
    worker = hub_site(hub, tmp_path / "worker", "2.0")
    app = hub_site(hub, tmp_path / "app", "1.0")
    assert app.run("apply").code == 0
    pythons = [
        wrapper_python(tmp_path / name / "python", site.root) for name, site in (("worker", worker), ("app", app))
    ]
    env = clean_env(HFPATCH_CATALOG=str(hub[1]))
    args = ["check", "--fail-on-obsolete", "--json", "--patch", FIRST]
    done = hfpatch(*args, *[word for python in pythons for word in ("--python", python)], env=env)
    assert done.code == 1, done.out + done.err
    found = done.document()["environments"]
    assert [(each["exit_code"], each["obsolete"] is not None) for each in found] == [(1, True), (0, False)]
