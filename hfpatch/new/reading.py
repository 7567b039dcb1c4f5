"""The releases' texts, as `hfpatch new` reads them: each file the fix changes (and those it calls into), release by
release, with the walk back that stops at the first release without the statements the fix changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from hfpatch import statements
from hfpatch.errors import AuthoringError, UnexpectedCode
from hfpatch.new import sources, wheels
from hfpatch.new.judge import FileFix
from hfpatch.new.progress import Progress
from hfpatch.new.request import Asked
from hfpatch.new.selection import Selection


@dataclass
class Reading:
    """The releases read so far: each one's files (path -> bytes, None where absent), or why it could not be read."""

    source: wheels.Releases
    paths: set[str] = field(default_factory=set)
    texts: dict[str, dict[str, bytes | None]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    progress: Progress = field(default_factory=lambda: Progress(None, terminal=False))

    def done(self) -> None:
        self.progress.done()

    def read(self, versions: Iterable[Version]) -> None:
        todo = [
            version
            for version in dict.fromkeys(versions)
            if str(version) not in self.unavailable
            and (str(version) not in self.texts or not self.paths <= set(self.texts[str(version)]))
        ]
        for version, fetched in self.source.fetch(todo).items():
            if fetched.path is None:
                self.unavailable[str(version)] = fetched.why_not
                self.progress.one_more(str(version))
                continue
            with wheels.Wheel(fetched.path) as wheel:
                if wheel.version != version:
                    raise AuthoringError(f"{fetched.path} holds {wheel.version}, not {version}.")
                known = self.texts.setdefault(str(version), {})
                for path in sorted(self.paths - set(known)):
                    known[path] = wheel.read(path)
            self.progress.one_more(str(version))

    def more(self, paths: Iterable[str]) -> None:
        """Read these files too, in every release read so far."""
        self.paths |= set(paths)
        self.read(Version(release) for release in list(self.texts))

    def forget_before(self, version: Version) -> None:
        self.texts = {release: text for release, text in self.texts.items() if Version(release) >= version}
        self.unavailable = {release: why for release, why in self.unavailable.items() if Version(release) >= version}


def _defines_any(texts: dict[str, bytes | None], keys: dict[str, list[str]], release: str) -> bool:
    """Whether a release has any statement the fix changes: the walk back to the first release stops where none is."""
    for path, wanted in keys.items():
        text = texts.get(path)
        if text is None:
            continue
        try:
            parsed = statements.parse(text, f"{path} of {release}")
        except UnexpectedCode:
            continue
        if any(statements.find(parsed, key) is not None for key in wanted):
            return True
    return False


def _walk_back(reading: Reading, older: Sequence[Version], keys: dict[str, list[str]]) -> None:
    """Read releases from the newest of `older` down, until one has none of the statements the fix changes."""
    batch_size = wheels.PARALLEL_DOWNLOADS
    for start in range(0, len(older), batch_size):
        batch = older[start : start + batch_size]
        reading.read(batch)
        for version in batch:
            key = str(version)
            if key in reading.texts and not _defines_any(reading.texts[key], keys, key):
                reading.forget_before(version)
                return


def made_on(reading: Reading, fix_source: sources.FixSource, selection: Selection) -> Selection:
    """A build that says it is release V was made on V where it changes V's files (a checkout of V with the fix);
    where it is V as released (the released wheel, given by path), its fix is read against the release before V."""
    older = selection.older
    if not older or older[-1] != fix_source.version:
        return selection
    released = reading.texts.get(str(older[-1]), {})
    if any(released.get(path) != text for path, text in fix_source.read(reading.paths).items()):
        return selection
    reading.read(older[-2:-1])
    return dataclasses.replace(selection, older=older[:-1])


def read_the_rest(reading: Reading, selection: Selection, asked: Asked, fixes: Sequence[FileFix]) -> None:
    """Every release the table shows, once the fix is understood: the newest (or those up to --until, or all
    after the fix), back from the fix to --since or to the first release without its statements, and those named."""
    newer, older = selection.newer, selection.older
    if asked.all_releases:
        reading.read(newer)
    elif asked.until is not None:
        reading.read([version for version in newer if version <= asked.until])
    elif newer:
        reading.read([newer[-1]])
    if asked.since is not None:
        reading.read([version for version in older if version >= asked.since])
    else:
        keys = {fix_file.file: [change.key for change in fix_file.changes] for fix_file in fixes}
        _walk_back(reading, older[::-1], keys)
    reading.read([version for version in asked.named if str(version) not in reading.texts])
    reading.done()
