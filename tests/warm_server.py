"""The server of tests/warm.py, one per test process: `python tests/warm_server.py FD` imports every module of
hfpatch, then forks a child for each run the test process asks for over the socket FD, and sends back its wait status.

The child is made what a fresh `python -m hfpatch ARGS` started in that directory with that environment would be: its
stdout and stderr the files sent with the request, sys.path the working directory, then PYTHONPATH, then the
interpreter's own; hfpatch's __main__ run by runpy as -m runs it; the exit code as the interpreter makes it (an
uncaught KeyboardInterrupt kills the process with SIGINT, as Python does)."""

from __future__ import annotations

import array
import importlib
import json
import os
import pkgutil
import runpy
import signal
import socket
import sys
import traceback
from pathlib import Path
from typing import Any

del sys.path[0]  # this script's directory: a process started with -m has its working directory there instead


def _path_of(variable: str) -> list[str]:
    """The entries of a PYTHONPATH as the interpreter puts them on sys.path (site.py: os.path.abspath of each)."""
    return [os.path.abspath(part) for part in variable.split(os.pathsep) if part]  # noqa: PTH100 - site.py's own


_OWN_PATH = _path_of(os.environ.get("PYTHONPATH", ""))
_REST_OF_PATH = [entry for entry in sys.path if entry not in _OWN_PATH]


def _import_hfpatch() -> dict[str, Any]:
    import hfpatch

    for module in pkgutil.walk_packages(hfpatch.__path__, "hfpatch."):
        importlib.import_module(module.name)
    return {"hfpatch": hfpatch.__file__, "imported": sorted({name.split(".")[0] for name in sys.modules})}


def _coverage() -> Any:
    """The coverage.py measurement this server runs under (COVERAGE_PROCESS_START), or None. A child goes on
    measuring after the fork; coverage gives it a data file of its own when it saves (its pid differs)."""
    measured = sys.modules.get("coverage")
    return None if measured is None else measured.Coverage.current()


def _save_coverage() -> None:
    # os._exit skips the atexit hook coverage saves its data in, as a process a signal kills does.
    measuring = _coverage()
    if measuring is not None:
        measuring.stop()
        measuring.save()


def _exit_code(exit: SystemExit) -> int:
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def _run(request: dict[str, Any]) -> int:
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[:] = [str(Path.cwd()), *_path_of(request["env"].get("PYTHONPATH", "")), *_REST_OF_PATH]
    importlib.invalidate_caches()
    measuring = _coverage()
    if measuring is not None:  # scripts/mutants.py's recording: the lines this run reaches are the test's
        measuring.switch_context(os.environ.get("PYTEST_CURRENT_TEST", ""))
    if request["sigint"]:  # support.default_sigint: SIGINT as at a terminal, which Python turns into an exception
        signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = ["-m", *request["args"]]
    sys.modules.pop("hfpatch.__main__", None)  # as -m finds it: not imported yet
    try:
        runpy.run_module("hfpatch", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        return _exit_code(exit)
    except KeyboardInterrupt:
        traceback.print_exc()
        _save_coverage()
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _child(channel: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    code = 1
    try:
        channel.close()
        for target, fd in zip((1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        code = _run(request)
    finally:
        try:
            _save_coverage()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)


def _serve(channel: socket.socket) -> None:
    while True:
        fds = array.array("i")
        message, ancillary, _, _ = channel.recvmsg(1 << 20, socket.CMSG_LEN(2 * fds.itemsize))
        if not message:
            return
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(channel, json.loads(message), list(fds))
        for fd in fds:
            os.close(fd)
        channel.sendall(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        channel.sendall(json.dumps({"status": status}).encode())


if __name__ == "__main__":
    with socket.socket(fileno=int(sys.argv[1])) as channel:
        channel.sendall(json.dumps(_import_hfpatch()).encode())
        _serve(channel)
