"""hfpatch: backport upstream fixes into an installed transformers, on disk, safely and reversibly."""

__version__ = "0.3.0"
