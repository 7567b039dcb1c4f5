#!/usr/bin/env python
"""A module with one statement of each kind hfpatch keys."""

import os
import numpy as np
from .utils import (
    first,
    second,
)
from .utils import third

LIMIT = 3  # the limit
LIMIT = 4
MAPPING: dict[str, int] = {"a": 1}
__all__ += ["extra"]
a = 1; b = 2


# a comment above f
@decorate
def f(x, y=1):
    return x


class Config:
    """Config."""

    size: int = 3
    """The size."""

    @property
    def window(self):
        return self._window

    @window.setter
    def window(self, value):
        self._window = value


if TYPE_CHECKING:
    import typing

try:
    import json
except ImportError:
    json = None

register(Config)
