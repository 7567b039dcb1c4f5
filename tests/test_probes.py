"""The probe protocol, from the side of a probe's author: what `verify` makes of what a probe prints, and the place
it runs in (an empty scratch directory removed after, offline switches on, a Hugging Face home of its own)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import Completed, Site
from toy import BUGGY_MODULE, PATCH_ID, make_site

# The start of every probe below: the toy patch's module, imported as the application imports it.
_IMPORT = "import json, os, sys\nimport toypkg.core as core\n"


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return make_site(tmp_path)


def _probe(site: Site, body: str) -> None:
    (site.team_catalog / PATCH_ID / "probe.py").write_text(_IMPORT + body, encoding="utf-8")


def _verify(site: Site, scratch: Path) -> tuple[Completed, dict[str, object]]:
    done = site.run("verify", "--json", TMPDIR=str(scratch))
    (environment,) = json.loads(done.out)["environments"]
    (found,) = environment["patches"]
    return done, found


WORKS = (
    "try:\n"
    "    result = {'ok': core.greet(None) == 'Hello, world!'}\n"
    "except TypeError as error:\n"
    "    result = {'ok': False, 'bug': True, 'error_type': 'TypeError', 'error': str(error)}\n"
    "print(json.dumps({**result, 'loader_file': core.__file__}))\n"
)
BUG = "print(json.dumps({'ok': False, 'bug': True, 'error_type': 'TypeError', 'error': 'greet(None)'}))\n"
OTHER = "print(json.dumps({'ok': False, 'error_type': 'OSError', 'error': 'disk full'}))\n"


@pytest.mark.parametrize(
    ("body", "action", "code", "said"),
    [
        pytest.param(BUG, "verify-failed", 1, "is live here: TypeError: greet(None)", id="the-bug"),
        pytest.param(OTHER, "verify-failed", 2, "the real code failed: OSError: disk full", id="another-failure"),
        pytest.param("print('warming up')\n" + BUG, "verify-failed", 1, "is live here", id="last-line-counts"),
        pytest.param(
            "raise ModuleNotFoundError(\"No module named 'torch'\")\n",
            "broken-probe",
            2,
            "it exited with 1 and it printed nothing on stdout (ModuleNotFoundError: No module named 'torch')",
            id="crashes",
        ),
        pytest.param(
            "print('all good')\n",
            "broken-probe",
            2,
            "it exited with 0 and its last line on stdout is not a JSON object",
            id="no-json",
        ),
        pytest.param(
            "print(json.dumps([True]))\n",
            "broken-probe",
            2,
            "its last line on stdout is not a JSON object",
            id="json-not-an-object",
        ),
        pytest.param(
            "print(json.dumps({'bug': True}))\n",
            "broken-probe",
            2,
            'a JSON object without a true or false "ok"',
            id="no-ok",
        ),
        pytest.param(
            "print(json.dumps({'ok': 'yes'}))\n",
            "broken-probe",
            2,
            'a JSON object without a true or false "ok"',
            id="ok-not-a-boolean",
        ),
        pytest.param(BUG + "sys.exit(3)\n", "verify-failed", 1, "is live here", id="exit-status-not-read"),
    ],
)
def test_what_verify_makes_of_what_a_probe_prints(
    site: Site, tmp_path: Path, body: str, action: str, code: int, said: str
) -> None:
    _probe(site, body)
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (code, action), found["message"]
    assert said in str(found["message"])
    if action == "broken-probe":
        assert f"the probe {site.team_catalog / PATCH_ID / 'probe.py'} is broken" in str(found["message"])


def test_a_probe_that_says_ok_is_verified_only_once_the_patch_is_applied(site: Site, tmp_path: Path) -> None:
    _probe(site, WORKS)
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (1, "verify-failed"), found["message"]
    assert "the bug of example/toypkg#1 is live here: TypeError" in str(found["message"])
    assert site.run("apply").code == 0
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (0, "verified"), found["message"]


def test_a_probe_runs_in_an_empty_scratch_directory_offline_with_a_hugging_face_home_of_its_own(
    site: Site, tmp_path: Path
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    user_cache = tmp_path / "user-cache"
    _probe(
        site,
        "here = os.getcwd()\n"
        "open('left-behind.txt', 'w').close()\n"
        "seen = {\n"
        "    'cwd': here, 'listing': sorted(os.listdir(here)), 'has_file': '__file__' in globals(),\n"
        "    'path0': sys.path[0], 'dont_write_bytecode': sys.dont_write_bytecode,\n"
        "    'env': {name: os.environ.get(name) for name in (\n"
        "        'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE', 'HF_DATASETS_OFFLINE', 'HF_HOME', 'HF_HUB_CACHE',\n"
        "        'HF_MODULES_CACHE', 'HF_HUB_DISABLE_TELEMETRY', 'KEPT')},\n"
        "}\n"
        "print(json.dumps({'ok': False, 'error_type': 'Seen', 'error': json.dumps(seen)}))\n",
    )
    done = site.run(
        "verify",
        "--json",
        TMPDIR=str(scratch),
        HF_HUB_CACHE=str(user_cache),
        HF_MODULES_CACHE=str(user_cache),
        HF_HUB_OFFLINE="0",
        KEPT="yes",
    )
    (environment,) = json.loads(done.out)["environments"]
    (found,) = environment["patches"]
    message = str(found["message"])
    seen = json.loads(message[message.index("Seen: ") + len("Seen: ") :])
    cwd = Path(seen["cwd"])
    assert cwd.parent == scratch and cwd.name.startswith("hfpatch-verify-")
    assert seen["listing"] == ["left-behind.txt"], "the probe starts in an empty directory"
    assert not seen["has_file"], "run with python -c: no __file__"
    assert seen["path0"] == "", "python -c: the scratch directory is the first entry of sys.path"
    assert seen["dont_write_bytecode"] is True
    assert seen["env"] == {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(cwd / "hf-home"),
        "HF_HUB_CACHE": None,
        "HF_MODULES_CACHE": None,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "KEPT": "yes",
    }
    assert list(scratch.iterdir()) == [], "the scratch directory and what the probe left in it are gone"
    assert not user_cache.exists()


def test_a_probe_whose_code_needs_what_the_interpreter_lacks_proves_nothing(site: Site, tmp_path: Path) -> None:
    """Where torch (say) is absent, verify says so and counts as check does: never as verified."""
    _probe(site, "print(json.dumps({'ok': False, 'needs': 'torch', 'error': 'No module named torch'}))\n")
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (1, "not-verified"), found["message"]
    assert str(found["message"]).startswith(f"the probe needs torch, which {sys.executable} lacks: toypkg-1 is checked")
    assert site.run("apply").code == 0
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (0, "not-verified"), found["message"]
    assert "verified" not in done.out.replace("not-verified", "")


def test_a_release_the_entry_was_not_written_from_is_left_alone_and_no_probe_runs(tmp_path: Path) -> None:
    """What a probe says of another form of the code is no advice hfpatch could follow: the patch leaves it."""
    older = make_site(tmp_path, version="0.6", module=BUGGY_MODULE.replace('", " + name', '", " + str(name)'))
    path = older.team_catalog / PATCH_ID / "patch.json"
    data = json.loads(path.read_text())
    file = {key: data.pop(key) for key in ("module", "file", "targets", "known_files")}
    data.update(schema=3, files=[file], releases_read=["1.0", "2.0"])
    path.write_text(json.dumps(data))
    _probe(older, "raise SystemExit('the probe ran')\n")
    done, found = _verify(older, tmp_path)
    assert (done.code, found["condition"], found["action"]) == (0, "not-covered", "not-needed"), found["message"]
    assert "the probe ran" not in done.out + done.err


def test_a_probe_s_error_of_several_lines_is_one_line_of_the_report(site: Site, tmp_path: Path) -> None:
    _probe(site, "print(json.dumps({'ok': False, 'bug': True, 'error_type': 'E', 'error': 'first\\n  second'}))\n")
    done = site.run("verify", TMPDIR=str(tmp_path))
    (line,) = [line for line in done.lines if PATCH_ID in line]
    assert "is live here: E: first second" in line
    assert "second" not in done.text.replace(line, "")


def test_a_probe_that_cannot_be_read_is_broken(site: Site, tmp_path: Path) -> None:
    (site.team_catalog / PATCH_ID / "probe.py").write_bytes(b"\xff\xfe not utf-8")
    done, found = _verify(site, tmp_path)
    assert (done.code, found["action"]) == (2, "broken-probe")
    assert "it cannot be read" in str(found["message"])
