"""The release table `hfpatch new` prints: release, the form of each file the fix changes, verdict, reason."""

from __future__ import annotations

from hfpatch.new.assemble import Authoring


def render_table(authoring: Authoring) -> str:
    """One line a release. A form is a letter for each distinct text of a file's targets (`fix`: the fixed text,
    `-`: none of them there); a patch of several files shows one form a file, in the order of the header."""
    files = [fix.file for fix in authoring.fixes]
    form_header = "form" if len(files) == 1 else f"form ({' / '.join(files)})"
    lines = [("release", form_header, "verdict", "reason")]
    lines += [(row.release, " / ".join(row.forms), row.verdict.value, row.reason) for row in authoring.rows]
    widths = [max(len(line[column]) for line in lines) for column in range(3)]
    if len(files) > 1:  # the header names the files; the forms column need be no wider than the forms
        widths[1] = max(len(line[1]) for line in lines[1:]) if len(lines) > 1 else widths[1]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True)), line[3]]).rstrip()
        for line in lines
    )
