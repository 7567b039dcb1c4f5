"""The output a person reads, on the toy distribution: each environment named once, quiet when all is well, the
obsolete built-in patches folded, one summary line for several environments, the exit codes in --help.

Several environments are wrappers that set PYTHONPATH to their own site and exec this interpreter (`--python`
takes a wrapper script, as an activation would be).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support import Completed, Site, clean_env, hfpatch, in_process
from toy import PATCH_ID, make_site

from hfpatch import catalog


def wrapper(site: Site, where: Path) -> str:
    """An interpreter whose path starts with the site."""
    where.mkdir(parents=True)
    path = where / "python"
    path.write_text(f'#!/bin/sh\nPYTHONPATH={site.root} exec {sys.executable} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def environments(tmp_path: Path) -> tuple[list[Site], list[str]]:
    """Three environments: toypkg 1.0 (needs the patch), 2.0 (fixed upstream), and 1.0 again."""
    sites = [
        make_site(tmp_path / name, version=version) for name, version in (("a", "1.0"), ("b", "2.0"), ("c", "1.0"))
    ]
    return sites, [wrapper(site, tmp_path / f"python-{index}") for index, site in enumerate(sites)]


def run(site: Site, *args: str) -> Completed:
    """hfpatch on the given --python only, with the site's catalog."""
    return hfpatch(*args, "--patch", PATCH_ID, env=clean_env(HFPATCH_CATALOG=str(site.team_catalog)))


def pythons(paths: list[str]) -> list[str]:
    return [word for path in paths for word in ("--python", path)]


def test_each_environment_is_named_once_and_each_line_names_its_file_inside_it(tmp_path: Path) -> None:
    sites, paths = environments(tmp_path)
    done = run(sites[0], "apply", *pythons(paths[:1]))
    assert done.code == 0, done.out + done.err
    heading, line, *rest = done.lines
    assert heading == f"{paths[0]} [Python {sys.version.split()[0]}]: toypkg 1.0 in {sites[0].root}"
    assert line == f"  {PATCH_ID}: patched: toypkg/core.py now has the fix (example/toypkg#1, upstream in 2.0)"
    assert rest == []
    assert done.out.count(str(sites[0].root)) == 1


def test_several_environments_end_with_one_summary_line(tmp_path: Path) -> None:
    sites, paths = environments(tmp_path)
    assert run(sites[2], "apply", *pythons(paths[2:])).code == 0
    done = run(sites[0], "check", *pythons(paths))
    assert done.code == 1, done.out + done.err
    assert done.lines[-1] == "3 environments: 1 needs action, 2 as they must be"
    one = run(sites[0], "check", *pythons(paths[:1]))  # one environment: no summary
    assert not one.lines[-1].endswith(" as it must be"), one.out
    assert len(one.lines) == 2, one.out


def test_quiet_prints_only_what_needs_action_and_nothing_at_all_when_all_is_well(tmp_path: Path) -> None:
    sites, paths = environments(tmp_path)
    done = run(sites[0], "check", "-q", *pythons(paths))
    assert (done.code, done.err) == (1, ""), done.out + done.err
    assert done.lines == [
        f"{paths[0]} [Python {sys.version.split()[0]}]: toypkg 1.0 in {sites[0].root}",
        f"  {PATCH_ID}: needs-patch: the released 1.0 file, which has the bug example/toypkg#1 fixed in 2.0; "
        f"run `hfpatch apply --python {paths[0]} --patch {PATCH_ID}`",
        f"{paths[2]} [Python {sys.version.split()[0]}]: toypkg 1.0 in {sites[2].root}",
        f"  {PATCH_ID}: needs-patch: the released 1.0 file, which has the bug example/toypkg#1 fixed in 2.0; "
        f"run `hfpatch apply --python {paths[2]} --patch {PATCH_ID}`",
        "3 environments: 2 need action, 1 as it must be",
    ]
    assert run(sites[0], "apply", "--quiet", *pythons(paths)) == Completed(0, "", "")
    assert run(sites[0], "check", "-q", *pythons(paths)) == Completed(0, "", "")
    missing = run(sites[0], "check", "-q", "--python", str(tmp_path / "nowhere"))
    assert (missing.code, missing.out) == (2, ""), missing.out + missing.err
    assert missing.err.startswith("hfpatch: error: no Python interpreter at "), missing.err


@pytest.fixture
def toy_is_built_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    """toypkg 2.0 (fixed upstream), whose catalog stands for the built-in one: run in process."""
    site = make_site(tmp_path, version="2.0")
    monkeypatch.setattr(catalog, "builtin_catalog", lambda: site.team_catalog)
    monkeypatch.delenv("HFPATCH_CATALOG", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(site.root))
    return site


def test_a_patch_nobody_asked_for_that_does_not_concern_the_environment_is_counted_unless_asked_for(
    toy_is_built_in: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    here = ["--python", sys.executable]
    folded = in_process(["check", *here], capsys)
    assert folded.code == 0, folded.out + folded.err
    assert folded.lines[1:] == ["  not concerned here: 1 fixed-upstream (-v lists them)"]
    for asked in (["--patch", PATCH_ID], ["--fail-on-obsolete"], ["-v"]):
        done = in_process(["check", *here, *asked], capsys)
        assert f"  {PATCH_ID}: fixed-upstream: toypkg 2.0 has the upstream fix" in done.text, done.out
    assert in_process(["check", "--json", *here], capsys).document()["environments"][0]["patches"][0]["id"] == PATCH_ID
    assert in_process(["list", *here], capsys).listing()[PATCH_ID]["here"] == "fixed-upstream"


def test_help_lists_every_exit_code_and_each_command_names_its_own_in_one_line() -> None:
    done = hfpatch("--help")
    assert done.code == 0, done.err
    codes = [line.split()[0] for line in done.out.split("exit codes:\n")[1].splitlines() if line[:3].strip()]
    assert codes == ["0", "1", "2", "130"], done.out
    for command in ("check", "apply", "revert", "verify"):
        done = hfpatch(command, "--help")
        assert done.out.rstrip().endswith("\n\nexit codes: 0, 1, 2 or 130, as `hfpatch --help` says"), done.out
    listed = hfpatch("list", "--help").out
    said = "exit codes: 0 the catalog is shown (whatever its patches' conditions), 2 bad input"
    assert listed.rstrip().endswith(f"\n{said}")


def test_new_s_help_fits_80_columns_and_keeps_names_whole() -> None:
    done = hfpatch("new", "--help", env=clean_env(COLUMNS="80"))
    assert done.code == 0, done.err
    assert max(len(line) for line in done.out.splitlines()) <= 80, done.out
    assert "transformers:transformers.utils.hub:cached_file," in done.text


def test_list_shows_one_column_per_environment_and_says_which(tmp_path: Path) -> None:
    sites, paths = environments(tmp_path)
    done = run(sites[0], "list", *pythons(paths))
    assert done.code == 0, done.out + done.err
    assert {column: done.listing()[PATCH_ID][column] for column in "123"} == {
        "1": "needs-patch",
        "2": "fixed-upstream",
        "3": "needs-patch",
    }
    for number, (site, path) in enumerate(zip(sites, paths, strict=True), start=1):
        assert f"\n{number}: {path} [Python " in done.text and f": toypkg {site.version} in {site.root}\n" in done.text
    assert os.sep in done.lines[-1]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "one",
        "  lead kept, then words that run past the width of the line and go on",
        "a " * 40,
        "double  spaces  between\twords\nand a newline\rand\x0bvertical\x0cfeeds",
        "averyveryverylongwordthatdoesnotfitanywhereatallinthiswidth and after",
        "short averyveryverylongwordthatdoesnotfitanywhereatallinthiswidth",
        "trailing spaces at the end      ",
        "non\xa0breaking\xa0spaces stay inside one word\u2003and em spaces too",
        "x" * 19 + " " + "y" * 20 + " " + "z",
        "`a command in backticks` with\0protected\0spaces and more words to wrap here",
    ],
)
@pytest.mark.parametrize("width", [20, 33, 120])
def test_the_wrap_is_textwraps(text: str, width: int) -> None:
    """render.wrap breaks lines as textwrap.wrap does with the options hfpatch gave it (words kept whole)."""
    import textwrap

    from hfpatch import render

    expected = textwrap.wrap(text, width, subsequent_indent="      ", break_long_words=False, break_on_hyphens=False)
    assert render.wrap(text, width, "      ") == expected
