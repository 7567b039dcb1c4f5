"""The release table `hfpatch new` prints: release, the form of each target, verdict, reason."""

from __future__ import annotations

from hfpatch.new.assemble import Authoring


def render_table(authoring: Authoring) -> str:
    form_header = "form" if len(authoring.targets) == 1 else f"form ({'/'.join(authoring.targets)})"
    lines = [("release", form_header, "verdict", "reason")]
    lines += [(row.release, "/".join(row.forms), row.verdict.value, row.reason) for row in authoring.rows]
    widths = [max(len(line[column]) for line in lines) for column in range(3)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True)), line[3]]).rstrip()
        for line in lines
    )
