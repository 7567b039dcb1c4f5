"""`hfpatch verify` for huggingface_hub#3579, run as a script in the target interpreter (standard library only, and
httpx, which huggingface_hub 1.x requires).

A Hub error has to survive pickling to leave a worker process. In 1.1.0 to 1.1.5 HfHubHTTPError.__reduce_ex__ hands
the message alone to a constructor whose `response` is keyword-only and required, so that unpickling raises TypeError
(1.0.0 and 1.0.1 have no __reduce_ex__, and Exception's own drops `response` the same way); 1.1.6 rebuilds the error
with a classmethod it adds. The probe makes the real hf_raise_for_status raise a RepositoryNotFoundError from a 404
response built in memory (no network), in a worker of a ProcessPoolExecutor (fork, where the platform has it): in
1.0.0 to 1.1.5 the parent cannot read the error back and the pool breaks (BrokenProcessPool). It also round-trips an
HfHubHTTPError with a server message through pickle in this process. It prints one JSON line: ok, bug (the failure is
the one the patch fixes), error_type, error, loader_file (huggingface_hub.errors as imported) and version.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import multiprocessing
import pickle
import sys
from concurrent.futures.process import BrokenProcessPool
from typing import Any

URL = "https://huggingface.co/api/models/hfpatch/probe-missing"
# What unpickling an HfHubHTTPError raises in 1.0.0 to 1.1.5.
UNPICKLING_FAILS = "missing 1 required keyword-only argument: 'response'"


def response(status: int, headers: dict[str, str]) -> Any:
    httpx: Any = importlib.import_module("httpx")
    return httpx.Response(status, request=httpx.Request("GET", URL), headers=headers)


def raise_repository_not_found() -> None:
    """In the worker: the real hf_raise_for_status on the 404 the Hub answers for a repository it does not have."""
    utils: Any = importlib.import_module("huggingface_hub.utils")
    utils.hf_raise_for_status(response(404, {"X-Error-Code": "RepoNotFound", "X-Request-Id": "hfpatch-probe"}))


def in_a_worker(errors: Any) -> str:
    """The error a worker process raised, as the caller gets it; raises where it does not come back."""
    if "fork" not in multiprocessing.get_all_start_methods():  # `python -c` has no module a spawned worker imports
        return "no worker process here (no fork): the pickle round trip alone is checked"
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        try:
            pool.submit(raise_repository_not_found).result(timeout=120)
        except errors.RepositoryNotFoundError as error:
            if error.response.status_code != 404 or error.response.headers.get("X-Request-Id") != "hfpatch-probe":
                raise ValueError(
                    f"the worker's RepositoryNotFoundError came back without its response: {error!r}"
                ) from None
            return "the worker's RepositoryNotFoundError came back"
    raise ValueError("hf_raise_for_status raised nothing in the worker")


def round_trip(errors: Any) -> None:
    sent = errors.HfHubHTTPError("500 Server Error", response=response(500, {}), server_message="hfpatch probe")
    back = pickle.loads(pickle.dumps(sent))
    kept = (type(back), str(back), back.server_message, back.response.status_code)
    if kept != (type(sent), str(sent), sent.server_message, 500):
        raise ValueError(f"an HfHubHTTPError came back from pickle as {kept}")


def is_the_bug(error: BaseException) -> bool:
    """TypeError unpickling the error, here or (BrokenProcessPool) in the caller of a worker process."""
    if isinstance(error, TypeError):
        return UNPICKLING_FAILS in str(error)
    return isinstance(error, BrokenProcessPool) and UNPICKLING_FAILS in str(error.__cause__)


def describe(error: BaseException, named: bool) -> str:
    """The error in a line (named: after its type); a broken pool with the last line of the traceback that broke it."""
    said = f"{type(error).__name__}: {error}" if named else str(error)
    if isinstance(error, BrokenProcessPool) and error.__cause__ is not None:
        lines = [line.strip() for line in str(error.__cause__).splitlines() if line.strip().strip("'\"")]
        said += f" (the pool read back: {lines[-1]})" if lines else ""
    return " ".join(said.split())


def run() -> dict[str, Any]:
    huggingface_hub: Any = importlib.import_module("huggingface_hub")
    errors: Any = importlib.import_module("huggingface_hub.errors")
    result: dict[str, Any] = {"ok": True, "bug": False, "error_type": "", "error": ""}
    result.update(loader_file=errors.__file__, version=huggingface_hub.__version__)
    failures: list[tuple[str, Exception]] = []
    for way, check in (("in a worker process", in_a_worker), ("pickle round trip", round_trip)):
        try:
            said = check(errors)
        except Exception as error:  # the probe reports every failure of the real code, whatever it is
            failures.append((way, error))
        else:
            if said:
                result["worker"] = said
    if failures:  # a failure that is not the bug goes first: the patch would not cure it
        failures.sort(key=lambda failure: is_the_bug(failure[1]))
        # error_type names the first failure's kind of error; the others name their own
        said = "; ".join(f"[{way}] {describe(error, index > 0)}" for index, (way, error) in enumerate(failures))
        result.update(ok=False, bug=all(is_the_bug(error) for _, error in failures))
        result.update(error_type=type(failures[0][1]).__name__, error=said[:400])
    return result


def main() -> None:
    if sys.path and sys.path[0] == "":
        del sys.path[0]
    sys.dont_write_bytecode = True
    try:
        result = run()
    except Exception as error:  # importing huggingface_hub or httpx failed: not the bug
        result = {"ok": False, "bug": False, "error_type": type(error).__name__, "error": str(error)[:400]}
        result.update(loader_file=None, version=None)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
