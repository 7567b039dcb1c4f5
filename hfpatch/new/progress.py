"""How far `hfpatch new` got, while it reads releases: a line rewritten in place on a terminal, a line now and then
in a log (CI keeps every line; a silent minute there reads as a hang)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

# A log gets a line at most this often: enough to show the run is alive, not a line per wheel.
LOG_INTERVAL = 10.0


class Progress:
    """Counts the releases read. `most` is the bound said up front; the walk back usually stops well before it, so
    the line says how many were read, never "N of M" as if all M were to come."""

    def __init__(self, stream: TextIO | None, *, terminal: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.terminal = terminal
        self.clock = clock
        self.read = 0
        self._last = clock()
        self._shown = False

    def one_more(self, release: str) -> None:
        self.read += 1
        if self.stream is None:
            return
        line = f"read {self.read} release{'' if self.read == 1 else 's'} so far (the last: {release})"
        if self.terminal:
            self.stream.write(f"\r{line}\033[K")
            self._shown = True
        elif self.clock() - self._last >= LOG_INTERVAL:
            self.stream.write(line + "\n")
            self._last = self.clock()
        else:
            return
        self.stream.flush()

    def done(self) -> None:
        if self.stream is not None and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False
