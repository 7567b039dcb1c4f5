"""`python -m hfpatch` and the `hfpatch` console script."""

import sys

from hfpatch.cli import main


def console() -> None:
    sys.exit(main())


if __name__ == "__main__":
    console()
