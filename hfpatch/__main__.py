"""`python -m hfpatch` and the `hfpatch` console script."""

import gc
import sys


def console() -> None:
    # No cyclic garbage collection in a command that reads and decides in well under a second: the parsed files and
    # entries are hundreds of thousands of objects, freed by their counts, and the collector's passes over them (at
    # exit too) were a fifth of `check`'s time. `new`, which reads many wheels, turns it back on (hfpatch.cli).
    gc.disable()
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
