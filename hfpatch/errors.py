"""The one error model: every failure a user can cause or meet is an HfpatchError with a complete sentence."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    ACTION_NEEDED = 1
    ERROR = 2


class HfpatchError(Exception):
    """A failure hfpatch understands; str() is a complete sentence for the user, with what to do next."""

    exit_code = ExitCode.ERROR


class UsageError(HfpatchError):
    pass


class TargetError(HfpatchError):
    """The target interpreter or its transformers could not be inspected."""


class UnexpectedCode(HfpatchError):
    """The installed code is not any form the patch knows; nothing is touched."""


class ReadOnlyTarget(HfpatchError):
    """The environment cannot be written (read-only mount or missing permissions)."""


class StateError(HfpatchError):
    """hfpatch's own record or backup is missing, corrupt, or from a newer hfpatch."""


class EditedTarget(HfpatchError):
    """The patched file was changed by someone else since apply."""


class LockTimeout(HfpatchError):
    pass


class TransformMismatch(UnexpectedCode):
    """A transform did not find exactly the nodes it was written for."""
