"""`python -m hfpatch` and the `hfpatch` console script."""

import sys


def console() -> None:
    try:
        from hfpatch.cli import main
    except KeyboardInterrupt:  # Ctrl-C while Python was still loading hfpatch
        print("hfpatch: interrupted, before anything was changed.", file=sys.stderr)
        sys.exit(130)
    code = main()
    # The work is done and said: a Ctrl-C while the interpreter shuts down must not turn that into a death by signal.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


if __name__ == "__main__":
    console()
