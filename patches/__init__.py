"""The hfpatch catalog: one sub-package per patch, each with PATCH data, a libcst transform and a probe."""
