"""The README's snippets that users copy run as written: the first command, the Dockerfile, the CI lines.

These install transformers from the package index into fresh venvs, so they run in their own nox session
(`nox -s readme`), marked `readme`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

pytestmark = pytest.mark.readme


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _checkout(where: Path) -> Path:
    """The repository as a clone has it: the files git tracks (and new ones it does not ignore)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for relative in listed:
        source = ROOT / relative
        if source.is_file():
            (where / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / relative)
    return where


def _clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV", "PYTHON", "HFPATCH"))}
    env.update(extra)
    return env


def test_the_first_command_installs_applies_and_proves_the_fix(tmp_path: Path) -> None:
    (first, _tests) = _blocks("sh")[0].strip().splitlines()[:2]
    assert first.startswith("python3 -m venv /tmp/hfpatch-demo") and first.endswith("verify"), first
    command = first.replace("/tmp/hfpatch-demo", str(tmp_path / "demo"))
    done = _run(command, _checkout(tmp_path / "clone"), _clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "transformers-46618: patched:" in done.stdout
    assert "transformers-46618: verified:" in done.stdout


def test_the_developer_lines_install_and_run_the_fast_suite(tmp_path: Path) -> None:
    """In a fresh clone, with whatever pip `python3 -m venv` brings (older than 25.1 on Python 3.11)."""
    (lines,) = [block for block in _blocks("sh") if ".dev/bin/python -m pytest" in block]
    done = _run(" && ".join(lines.strip().splitlines()), _checkout(tmp_path / "clone"), _clean_env())
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout), done.stdout[-2000:]


def test_the_dockerfile_builds(tmp_path: Path) -> None:
    """Each RUN step in a fresh venv standing for the image's Python, the COPY emulated from a clone."""
    (dockerfile,) = [block for block in _blocks("dockerfile") if block.startswith("FROM ")]
    image = tmp_path / "image"
    subprocess.run([sys.executable, "-m", "venv", str(image / "python")], check=True, timeout=300)
    env = _clean_env(PATH=f"{image / 'python' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    context = _checkout(tmp_path / "context")
    runs = 0
    for line in dockerfile.splitlines():
        instruction, _, argument = line.partition(" ")
        argument = argument.replace("/opt/", f"{image}/opt/")
        if instruction == "COPY":
            source, destination = argument.split()
            shutil.copytree(context / source, Path(destination), dirs_exist_ok=True)
        elif instruction == "RUN":
            done = _run(argument, image, env)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            runs += 1
        else:
            assert instruction in ("FROM", "") or instruction.startswith("#"), line
    assert runs >= 2
    check = _run("hfpatch check", image, env)
    assert check.returncode == 0 and "transformers-46618: applied:" in check.stdout, check.stdout + check.stderr


class _Applied(NamedTuple):
    env: dict[str, str]  # PATH leads to the venv's bin
    out: str  # what `hfpatch apply` printed


def _applied_venv(tmp_path: Path, requirement: str) -> _Applied:
    """A fresh venv with a clone of the checkout and `requirement` installed by its pip, then `hfpatch apply`."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = _clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    context = _checkout(tmp_path / "clone")
    done = _run(f"pip install -q '{context}' {requirement} && hfpatch apply", tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return _Applied(env, done.stdout)


def test_the_ci_lines_run_and_say_what_they_promise(tmp_path: Path) -> None:
    """The CI block: every line runs; its comments promise an exit code, which is what it gives after an apply."""
    (ci,) = [block for block in _blocks("sh") if "hfpatch check --json" in block]
    env = _applied_venv(tmp_path, "transformers==5.12.1").env
    for line in ci.strip().splitlines():
        command = line.split("#")[0].strip()
        done = _run(command, tmp_path, env)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def test_the_pip_audit_lines_ignore_exactly_what_check_says_pip_audit_may(tmp_path: Path) -> None:
    """The pip-audit block on transformers 4.57.6 once hfpatch applied transformers-43140: `check --pip-audit`
    expands to the ids of every advisory check --json says pip-audit may ignore here (CVE-2026-1839's among them,
    no open or unknown one), and pip-audit takes them. The audit itself asks a vulnerability service, which this
    machine cannot reach, so pip-audit runs with --dry-run (it reads its options and the environment's
    distributions, and audits nothing); every other word of the block is as written."""
    (block,) = [block for block in _blocks("sh") if "pip-audit" in block]
    applied = _applied_venv(tmp_path, "transformers==4.57.6")
    env = applied.env
    assert "transformers-43140: patched:" in applied.out, applied.out
    (environment,) = json.loads(_run("hfpatch check --json", tmp_path, env).stdout)["environments"]
    statuses = environment["advisory_statuses"]
    ignorable = [advisory for status in statuses if status["pip_audit_ignores"] for advisory in status["ids"]]
    assert {"CVE-2026-1839", "GHSA-69w3-r845-3855"} <= set(ignorable)
    never = {advisory for status in statuses if status["status"] in ("open", "unknown") for advisory in status["ids"]}
    assert never and not never & set(ignorable)  # CVE-2026-75104 has no fix: open
    options = _run("hfpatch check --pip-audit", tmp_path, env)
    assert options.stdout.split() == [word for advisory in ignorable for word in ("--ignore-vuln", advisory)]
    for line in block.strip().splitlines():
        command = line.split("#")[0].strip().replace("pip-audit $(", "pip-audit --dry-run $(")
        done = _run(f"set -x; {command}", tmp_path, env)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    assert "--ignore-vuln CVE-2026-1839 --ignore-vuln GHSA-69w3-r845-3855" in done.stderr, done.stderr


def test_the_vex_line_writes_an_openvex_document_of_the_environment(tmp_path: Path) -> None:
    """The OpenVEX line on 5.12.1 once applied: a valid document, whose statements are about this environment."""
    from openvex import openvex_faults

    (line,) = [block for block in _blocks("sh") if block.startswith("hfpatch check --vex >")]
    env = _applied_venv(tmp_path, "transformers==5.12.1").env
    done = _run(line.split("#")[0].strip(), tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "hfpatch.vex.json").read_text(encoding="utf-8"))
    assert openvex_faults(document) == [] and document["statements"], document
    for statement in document["statements"]:
        (product,) = statement["products"]
        assert product["@id"].startswith("file://") and product["subcomponents"] == [
            {"@id": "pkg:pypi/transformers@5.12.1"}
        ]


def test_the_own_catalog_lines_run(tmp_path: Path) -> None:
    """The lines a team adds for its own catalog: a made-up distribution with a bug, and an entry for it."""
    from toy import make_site

    (lines,) = [block for block in _blocks("dockerfile") if "--catalog" in block]
    toy = make_site(tmp_path / "toy")
    context = tmp_path / "context"
    shutil.copytree(toy.team_catalog, context / "hfpatches")
    image = tmp_path / "image"
    env = _clean_env(PYTHONPATH=str(toy.root), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for line in lines.strip().splitlines():
        instruction, _, argument = line.partition(" ")
        argument = argument.replace("/opt/", f"{image}/opt/").replace("hfpatch ", f"{sys.executable} -m hfpatch ")
        if instruction == "COPY":
            source, destination = argument.split()
            shutil.copytree(context / source, Path(destination), dirs_exist_ok=True)
        else:
            assert instruction == "RUN", line
            done = _run(argument, image, env)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            assert "toypkg-1: patched:" in done.stdout and "toypkg-1: verified:" in done.stdout


def test_the_project_lines_run(tmp_path: Path) -> None:
    """The [tool.hfpatch] table as the README writes it, its Dockerfile lines, and the plain check in the project:
    its team patch is the toy entry under the README's id, and transformers is not installed here."""
    import importlib.util

    from toy import PATCH_ID, make_site

    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is installed here: the project's transformers-46618 would act on it")
    (table,) = _blocks("toml")
    (lines,) = [block for block in _blocks("dockerfile") if "WORKDIR" in block]
    team = re.search(r'"(mylib-\d+)"', table)
    assert team is not None, table
    toy = make_site(tmp_path / "toy")
    context = tmp_path / "context"
    entry = context / "hfpatches" / team[1]
    shutil.copytree(toy.team_catalog / PATCH_ID, entry)
    data = (entry / "patch.json").read_text(encoding="utf-8")
    (entry / "patch.json").write_text(data.replace(f'"id": "{PATCH_ID}"', f'"id": "{team[1]}"'), encoding="utf-8")
    (context / "pyproject.toml").write_text(f'[project]\nname = "app"\n\n{table}', encoding="utf-8")
    image = tmp_path / "image"
    env = _clean_env(PYTHONPATH=str(toy.root), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    workdir = image
    for line in lines.strip().splitlines():
        instruction, _, argument = line.partition(" ")
        argument = argument.replace("/app", f"{image}/app").replace("hfpatch ", f"{sys.executable} -m hfpatch ")
        if instruction == "COPY":
            source, destination = argument.split()
            if (context / source).is_dir():
                shutil.copytree(context / source, Path(destination), dirs_exist_ok=True)
            else:
                Path(destination).mkdir(parents=True, exist_ok=True)
                shutil.copy2(context / source, Path(destination) / source)
        elif instruction == "WORKDIR":
            workdir = Path(argument)
        else:
            assert instruction == "RUN", line
            done = _run(argument, workdir, env)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            assert f"{team[1]}: patched:" in done.stdout and f"{team[1]}: verified:" in done.stdout, done.stdout
            assert "transformers-46618: not-installed:" in done.stdout, done.stdout
    assert workdir == image / "app"
    check = _run(f"{sys.executable} -m hfpatch check", workdir, env)
    assert check.returncode == 0 and f"{team[1]}: applied:" in check.stdout, check.stdout + check.stderr
    quiet = _run(f"{sys.executable} -m hfpatch check -q", workdir, env)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_the_dockerignore_lines_keep_out_what_the_clones_own_keeps_out() -> None:
    (lines,) = _blocks("dockerignore")
    own = [line for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines() if line[:1] not in "#"]
    assert sorted(lines.split()) == sorted(f"hfpatch/{pattern}" for pattern in own)
