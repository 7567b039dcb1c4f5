"""The one error model: every failure a user can cause or meet is an HfpatchError whose str() is a sentence."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hfpatch.reasons import Reason


class ExitCode(enum.IntEnum):
    OK = 0
    ACTION_NEEDED = 1
    ERROR = 2
    # Ctrl-C (SIGINT): 128 + the signal's number, as a shell reports a process the signal ended.
    INTERRUPTED = 130


class HfpatchError(Exception):
    """A failure hfpatch understands; str() says what is wrong and what to do. Always exit 2, nothing touched.

    Raised with a reason (`refusal`), it carries what went wrong as a value (hfpatch.reasons), which the engine
    gives render to word; str() is then those words, every path whole."""

    exit_code = ExitCode.ERROR
    reason: Reason | None = None

    def __str__(self) -> str:
        if self.reason is None:
            return super().__str__()
        from hfpatch.render import words

        return f"{words(self.reason)}."  # a sentence, as every error's


_E = TypeVar("_E", bound=HfpatchError)


def refusal(kind: type[_E], reason: Reason) -> _E:
    """An error of `kind` (one whose only argument is its sentence) whose reason is a value of hfpatch.reasons."""
    error = kind()
    error.reason = reason
    return error


class UsageError(HfpatchError):
    """The command line asks for something that cannot be (an unknown patch, a bad option value)."""


class UnknownPatch(UsageError):
    """An id that no catalog given has."""

    def __init__(self, patch_id: str, sentence: str) -> None:
        super().__init__(sentence)
        self.patch_id = patch_id


class ConfigError(HfpatchError):
    """The project's `[tool.hfpatch]` table cannot be read or asks for what does not exist; names the file and line."""


class CatalogError(HfpatchError):
    """A catalog or one of its entries cannot be read, or two entries share an id."""


class InterpreterError(HfpatchError):
    """The interpreter hfpatch acts on (--python), or the package it imports, could not be inspected."""


class UnexpectedCode(HfpatchError):
    """The installed code is not a form the patch knows; nothing is touched."""


class NotWritable(HfpatchError):
    """The environment cannot be written: a read-only filesystem, or missing permissions."""


class StateError(HfpatchError):
    """hfpatch's state or backup is missing, corrupt, or from a newer hfpatch."""


class LockTimeout(HfpatchError):
    """Another hfpatch run held the environment's lock for too long."""


class AuthoringError(HfpatchError):
    """`hfpatch new` cannot write the entry as asked: a target that is not a function, a release that cannot be read,
    a fix that would not be safe; nothing is written."""
