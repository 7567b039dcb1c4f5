"""hfpatch run as a real process that starts warm: a child forked from a process that imported hfpatch once.

A run of hfpatch started with `python -m hfpatch` spends most of its CPU time starting the interpreter and importing
hfpatch and libcst (half a second, loaded: more than the work of most runs the tests make). Each test process starts
one server (tests/warm_server.py) that imports every module of hfpatch and then, for each run asked of it, forks:
the child takes the run's streams, working directory, umask, environment and arguments, and runs hfpatch as `-m`
would; the server sends back the child's wait status. The run is a real process still: its own pid, exit code, death
by signal (HFPATCH_FAULT's SIGKILL), Ctrl-C, files and locks, and nothing of it is left in the test process.

What a fork cannot give is a fresh interpreter. A run is started the ordinary way instead (`run_hfpatch` returns
None) where that could differ: a variable Python reads only when it starts (PYTHON*, LANG, LC_*, HOME) set otherwise
than in the server, a path entry or working directory that holds a module the server has imported (a fresh run
would import that copy), COVERAGE_PROCESS_START other than the server's (under coverage, scripts/mutants.py's
recording, each child records what it reaches as the test's), a subprocess option beyond a timeout and
support.default_sigint, or HFPATCH_TEST_COLD set. Tests of what a process imports or how it starts use
support.run, always a fresh interpreter.
"""

from __future__ import annotations

import array
import atexit
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# What the interpreter reads when it starts: a run given other values than the server's gets its own process.
_AT_START = ("PYTHON", "LANG", "LC_", "HOME")
_COLD = "HFPATCH_TEST_COLD"
_COVERAGE = "COVERAGE_PROCESS_START"
_SERVER = Path(__file__).with_name("warm_server.py")


class _Server:
    """The server of one test process, and what it imported."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Coverage (scripts/mutants.py's recording) measures the server too, each child as the test it runs for.
        self.env = {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}
        self.process = subprocess.Popen(
            [sys.executable, str(_SERVER), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=self.env,
            cwd=tempfile.gettempdir(),
        )
        theirs.close()
        self.channel = mine
        # Closed, the channel ends the server, which is waited for: its CPU time counts in the test process's.
        atexit.register(self.stop)
        hello = self.channel.recv(1 << 20)
        if not hello:
            raise RuntimeError(f"{_SERVER} did not start (its error is on the test process's stderr)")
        self.imported = set(json.loads(hello)["imported"])
        self.own_path = self.env.get("PYTHONPATH", "")

    def stop(self) -> None:
        self.channel.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def serves(self, env: Mapping[str, str], cwd: str) -> bool:
        """Whether a fork of the server is what a fresh `python -m hfpatch` in `env` and `cwd` would be."""
        if env.get(_COVERAGE) != self.env.get(_COVERAGE):
            return False
        started = {key for key in {*env, *self.env} if key.startswith(_AT_START) and key != "PYTHONPATH"}
        if any(env.get(key) != self.env.get(key) for key in started):
            return False
        given = env.get("PYTHONPATH", "")
        if self.own_path and given != self.own_path and not given.endswith(os.pathsep + self.own_path):
            return False
        extra = given[: len(given) - len(self.own_path)] if self.own_path else given
        return not any(self._shadows(entry) for entry in [cwd, *filter(None, extra.split(os.pathsep))])

    def _shadows(self, entry: str) -> bool:
        """Whether a path entry holds a top-level module the server has imported."""
        try:
            names = [path.name for path in Path(entry).iterdir()]
        except OSError:
            return False
        return any(name.split(".")[0] in self.imported for name in names if name.isidentifier() or ".py" in name)

    def run(self, request: dict[str, Any], timeout: float) -> tuple[int, str, str]:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            fds = array.array("i", [out.fileno(), err.fileno()])
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())]
            self.channel.sendmsg([json.dumps(request).encode()], rights)
            pid = json.loads(self.channel.recv(1 << 16))["pid"]
            self.channel.settimeout(timeout)
            try:
                status = json.loads(self.channel.recv(1 << 16))["status"]
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self.channel.settimeout(None)
                self.channel.recv(1 << 16)
                raise subprocess.TimeoutExpired(["hfpatch", *request["args"]], timeout) from None
            finally:
                self.channel.settimeout(None)
            return os.waitstatus_to_exitcode(status), _text(out), _text(err)


def _text(stream: Any) -> str:
    """What subprocess.run(text=True) makes of a stream: the locale's encoding, universal newlines."""
    stream.seek(0)
    return io.TextIOWrapper(io.BytesIO(stream.read())).read()


_SERVERS: dict[int, _Server] = {}


def _server() -> _Server:
    server = _SERVERS.get(os.getpid())
    if server is None or server.process.poll() is not None:
        server = _SERVERS[os.getpid()] = _Server()
    return server


def run_hfpatch(
    args: list[str], *, env: Mapping[str, str], cwd: str, how: Mapping[str, Any], sigint: Callable[[], None]
) -> tuple[int, str, str] | None:
    """`python -m hfpatch ARGS` as a warm child (exit code, stdout, stderr), or None where it must start cold."""
    options = dict(how)
    timeout = options.pop("timeout", 300)
    preexec = options.pop("preexec_fn", None)
    if options or (preexec is not None and preexec is not sigint) or os.environ.get(_COLD):
        return None
    where = str(Path(cwd).absolute())
    server = _server()
    if not server.serves(env, where):
        return None
    umask = os.umask(0o22)
    os.umask(umask)
    request = {"args": args, "env": dict(env), "cwd": where, "umask": umask, "sigint": preexec is not None}
    return server.run(request, timeout)
