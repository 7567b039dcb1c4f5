"""`hfpatch new --from-edits`: what the user edited must be what the entry carries, byte for byte; then the edited
environment is adopted, as if the entry had been applied to the release it was made on."""

from __future__ import annotations

from typing import TextIO

from hfpatch import statements
from hfpatch.entry import Patch
from hfpatch.errors import AuthoringError
from hfpatch.new import sources
from hfpatch.new.assemble import Fixed


def edits_carried(fix: Fixed, released: dict[str, bytes | None]) -> None:
    """An edited file whose statements are all as released (the edit is a comment between them, say) has nothing
    hfpatch can carry: refused, naming the file and the line."""
    for path, edited in fix.texts.items():
        original = released.get(path)
        if original is None:
            raise AuthoringError(f"{path} is not in the release the edit was made on: a new file is not carried.")
        if original == edited:
            raise AuthoringError(
                f"{path} is unedited: it is as the release installed has it, so there is nothing to carry (edit it, "
                "or leave its --target out); nothing written."
            )
        old, new = statements.parse(original, path), statements.parse(edited, path)
        if [unit.text for unit in statements.units(old)] == [unit.text for unit in statements.units(new)]:
            line = _first_difference(original, edited)
            raise AuthoringError(
                f"the edit of {path} at line {line} is outside any statement hfpatch can carry (a comment or a "
                "blank line between statements, say); nothing written."
            )


def carries_the_edit(patch: Patch, fix: Fixed, released: dict[str, bytes | None]) -> None:
    """The entry applied to the release the edit was made on must give the edited files byte for byte; what it
    cannot carry (a comment between statements, say) is refused, naming the file and the line."""
    from hfpatch import rewrite

    for file in patch.files:
        original = released.get(file.file)
        if original is None:
            raise AuthoringError(f"{file.file} is not in the release the edit was made on: a new file is not carried.")
        result = rewrite.patched(original, patch, file)
        edited = fix.texts[file.file]
        if result != edited:
            line = _first_difference(result, edited)
            raise AuthoringError(
                f"the edit of {file.file} at line {line} is outside any statement hfpatch can carry (a comment or a "
                "blank line between statements, say); nothing written."
            )


def _first_difference(one: bytes, other: bytes) -> int:
    for number, (left, right) in enumerate(zip(one.splitlines(), other.splitlines(), strict=False), start=1):
        if left != right:
            return number
    return min(len(one.splitlines()), len(other.splitlines())) + 1


def adopt(patch: Patch, edits: sources.EditsSource, released: dict[str, bytes | None], out: TextIO) -> None:
    """The edited environment, as if the entry had been applied to the release: the released files become hfpatch's
    originals, so that check reports the patch applied and revert puts the release back."""
    from hfpatch import executor
    from hfpatch.environment import Environment

    environment = Environment(edits.python)
    installation = environment.installation_of(patch)
    if installation is None:
        raise AuthoringError(f"{edits.python.executable} imports no {patch.package}; the edit cannot be adopted.")
    originals = {file.file: released[file.file] or b"" for file in patch.files}
    notes = executor.adopt(patch, edits.python, installation, originals)
    print(
        f"adopted the edit in {installation.root}: `hfpatch check --python {edits.python.executable} --catalog "
        f"{patch.directory.parent}` reports {patch.id} applied, `hfpatch revert` puts {patch.distribution} "
        f"{installation.version}'s files back",
        file=out,
    )
    from hfpatch.render import words

    for note in notes:
        print(f"note: {words(note)}", file=out)
