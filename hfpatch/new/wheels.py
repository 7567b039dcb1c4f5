"""The released wheels of a distribution, for `hfpatch new`: one reader of a wheel, and two places wheels come from.

A wheel is read, never installed: its version comes from its file name, a member is read by its path, and a member
the wheel's RECORD lists with a digest must match it (a truncated download or an edited wheel is refused, as
installers refuse it). Wheels come from a directory the user gives (`--find-links`: no network at all) or from the
package index through pip (`pip index versions`, `pip download`), kept in a cache that later runs reuse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from packaging.utils import InvalidWheelFilename, NormalizedName, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from hfpatch import wheelrecord
from hfpatch.errors import HfpatchError

PIP_TIMEOUT = 600
# pip spends most of a download starting up and waiting on the network: a few at once, not one core each.
PARALLEL_DOWNLOADS = 4


class WheelError(HfpatchError):
    """A wheel is missing, unreadable or corrupt, or pip could not list or fetch the releases."""


# What reading a damaged member raises, by how it is stored: a CRC that does not match or a bad header (BadZipFile),
# deflate data that does not decompress (zlib.error: most wheels are deflated), bzip2's (OSError), lzma's
# (LZMAError), data that ends early (EOFError), a method or an encryption zipfile cannot read (NotImplementedError,
# RuntimeError), text that is not UTF-8 (ValueError).
_DAMAGED: tuple[type[Exception], ...] = (
    zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError, ValueError,
)  # fmt: skip
try:
    import lzma
except ImportError:  # a Python built without lzma: zipfile says so with a RuntimeError
    pass
else:
    _DAMAGED += (lzma.LZMAError,)


def module_paths(module: str) -> tuple[str, str]:
    """The two files a module can be inside a wheel: a.b.c is a/b/c.py, or a/b/c/__init__.py for a package."""
    base = module.replace(".", "/")
    return f"{base}.py", f"{base}/__init__.py"


class Wheel:
    """An open wheel file. Use it as a context manager; every fault is a WheelError naming the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            name, version, _, _ = parse_wheel_filename(path.name)
        except InvalidWheelFilename as error:
            raise WheelError(f"{path} is not named as a wheel is ({error}).") from None
        self.name: NormalizedName = name
        self.version: Version = version
        try:
            self._zip = zipfile.ZipFile(path)
        except OSError as error:
            raise WheelError(f"cannot read {path}: {error.strerror or error}.") from None
        except zipfile.BadZipFile as error:
            raise WheelError(f"{path} is not a valid wheel (not a zip archive: {error}).") from None
        self._names = set(self._zip.namelist())
        self._record: dict[str, wheelrecord.Row] | None = None

    def __enter__(self) -> Wheel:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._zip.close()

    def has(self, member: str) -> bool:
        return member in self._names

    def members(self) -> frozenset[str]:
        return frozenset(self._names)

    def read(self, member: str) -> bytes | None:
        """The member's bytes, checked against the zip's CRC and the RECORD's digest; None where it is absent."""
        if member not in self._names:
            return None
        try:
            data = self._zip.read(member)
        except _DAMAGED as error:
            raise WheelError(
                f"{self.path} is corrupt: cannot read {member} ({error}); delete it and fetch it again."
            ) from None
        row = self.record().get(member)
        if row is not None and not row.matches(data):
            raise WheelError(f"{self.path} is corrupt: {member} does not match the digest its RECORD lists.")
        return data

    def record(self) -> dict[str, wheelrecord.Row]:
        """RECORD's row of each member it lists."""
        if self._record is None:
            text = self._read_plain(f"{self._dist_info()}/RECORD")
            self._record = {row.path: row for row in wheelrecord.rows(text)}
        return self._record

    def _dist_info(self) -> str:
        tops = {name.split("/", 1)[0] for name in self._names if name.split("/", 1)[0].endswith(".dist-info")}
        wanted = [top for top in tops if canonicalize_name(top[: -len(".dist-info")].rsplit("-", 1)[0]) == self.name]
        if len(wanted) != 1:
            raise WheelError(f"{self.path} is not a valid wheel: it has no single {self.name} .dist-info directory.")
        return wanted[0]

    def _read_plain(self, member: str) -> str:
        if member not in self._names:
            raise WheelError(f"{self.path} is not a valid wheel: it has no {member}.")
        try:
            return self._zip.read(member).decode("utf-8")
        except _DAMAGED as error:
            raise WheelError(f"{self.path} is corrupt: cannot read {member} ({error}).") from None


def version_of(path: Path) -> Version:
    """The release a wheel holds, from its file name alone."""
    return parse_wheel_filename(path.name)[1]


# ----------------------------------------------------------------------------------------- where wheels come from


@dataclass(frozen=True)
class Fetched:
    """One release's wheel, or why there is none (a release with only a source distribution, a failed download)."""

    version: Version
    path: Path | None
    why_not: str = ""


class Releases:
    """The releases of one distribution and their wheels."""

    distribution: str
    where: str

    def versions(self) -> list[Version]:
        raise NotImplementedError

    def fetch(self, versions: Iterable[Version]) -> dict[Version, Fetched]:
        raise NotImplementedError

    def at_hand(self, versions: Iterable[Version]) -> int:
        """How many of these releases' wheels are here already (no download)."""
        raise NotImplementedError


def _preferred(paths: Sequence[Path]) -> Path:
    """One wheel per release: the pure-Python one where there is one (the module is the same in every build)."""
    return sorted(paths, key=lambda path: (not path.name.endswith("-none-any.whl"), path.name))[0]


def _wheels_by_version(directory: Path, distribution: str) -> dict[Version, Path]:
    wanted = canonicalize_name(distribution)
    found: dict[Version, list[Path]] = {}
    try:
        entries = sorted(directory.iterdir())
    except OSError as error:
        raise WheelError(f"cannot list {directory}: {error.strerror or error}.") from None
    for entry in entries:
        if not entry.name.endswith(".whl"):
            continue
        try:
            name, version, _, _ = parse_wheel_filename(entry.name)
        except InvalidWheelFilename:
            continue  # a find-links directory may hold other files; only wheels named as wheels count
        if name == wanted:
            found.setdefault(version, []).append(entry)
    return {version: _preferred(paths) for version, paths in found.items()}


class FindLinks(Releases):
    """Only the wheels in one directory: no network, no pip."""

    def __init__(self, directory: Path, distribution: str) -> None:
        if not directory.is_dir():
            raise WheelError(f"--find-links {directory} is not a directory of wheels.")
        self.directory = directory
        self.distribution = distribution
        self.where = str(directory)
        self._wheels = _wheels_by_version(directory, distribution)

    def versions(self) -> list[Version]:
        return sorted(self._wheels)

    def fetch(self, versions: Iterable[Version]) -> dict[Version, Fetched]:
        return {
            version: Fetched(version, self._wheels.get(version), "" if version in self._wheels else "no wheel")
            for version in versions
        }

    def at_hand(self, versions: Iterable[Version]) -> int:
        return sum(1 for version in versions if version in self._wheels)


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hfpatch" / "wheels"


class PackageIndex(Releases):
    """The package index, through pip (its configuration, index and credentials are the user's); wheels are cached."""

    def __init__(self, distribution: str, cache: Path, *, pre: bool = False) -> None:
        self.distribution = distribution
        self.pre = pre
        self.cache = cache / canonicalize_name(distribution)
        self.where = "the package index"

    def versions(self) -> list[Version]:
        # pip lists every non-yanked release (pre-releases only with --pre), whatever files each has.
        command = ["index", "versions", self.distribution, "--ignore-requires-python"]
        pre = ["--pre"] if self.pre else []
        done = _pip([*command, "--json", *pre])
        if done.returncode != 0 and "no such option: --json" in done.stderr:
            # pip before 25.1 (a stock Python 3.11 venv has 23.2) prints the list as a line of text instead
            return self._from_text(_pip([*command, *pre]))
        if done.returncode != 0:
            raise WheelError(f"pip finds no release of {self.distribution} ({_last_line(done.stderr)}).")
        try:
            listed = json.loads(done.stdout.strip().splitlines()[-1])["versions"]
            return sorted(Version(version) for version in listed)
        except (IndexError, KeyError, TypeError, ValueError):
            raise WheelError(f"`pip index versions {self.distribution}` printed no list of releases.") from None

    def _from_text(self, done: subprocess.CompletedProcess[str]) -> list[Version]:
        if done.returncode != 0:
            raise WheelError(f"pip finds no release of {self.distribution} ({_last_line(done.stderr)}).")
        line = next((line for line in done.stdout.splitlines() if line.startswith("Available versions:")), None)
        if line is None:
            raise WheelError(f"`pip index versions {self.distribution}` printed no list of releases.")
        found = []
        for text in line.partition(":")[2].split(","):
            try:
                found.append(Version(text.strip()))
            except InvalidVersion:
                continue  # a legacy version pip lists, which no wheel of a release hfpatch reads carries
        return sorted(found)

    def at_hand(self, versions: Iterable[Version]) -> int:
        if not self.cache.is_dir():
            return 0
        cached = _wheels_by_version(self.cache, self.distribution)
        return sum(1 for version in versions if version in cached)

    def fetch(self, versions: Iterable[Version]) -> dict[Version, Fetched]:
        try:
            self.cache.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise WheelError(f"cannot create the wheel cache {self.cache}: {error.strerror or error}.") from None
        cached = _wheels_by_version(self.cache, self.distribution)
        wanted = list(dict.fromkeys(versions))
        missing = [version for version in wanted if version not in cached]
        with ThreadPoolExecutor(max_workers=PARALLEL_DOWNLOADS) as pool:
            downloaded = dict(zip(missing, pool.map(self._download, missing), strict=True))
        return {
            version: Fetched(version, cached[version]) if version in cached else downloaded[version]
            for version in wanted
        }

    def _download(self, version: Version) -> Fetched:
        # Into a scratch directory beside the cache, then renamed in: the cache never holds half a wheel.
        scratch = Path(tempfile.mkdtemp(prefix=".download-", dir=self.cache))
        try:
            requirement = f"{self.distribution}=={version}"
            done = _pip(
                ["download", "--no-deps", "--only-binary=:all:", "--ignore-requires-python", "-d", str(scratch),
                 requirement]
            )  # fmt: skip
            wheels = [path for path in scratch.iterdir() if path.name.endswith(".whl")]
            if done.returncode != 0 or not wheels:
                return Fetched(version, None, f"no wheel ({_last_line(done.stderr)})")
            chosen = _preferred(wheels)
            if version_of(chosen) != version:
                return Fetched(version, None, f"pip fetched {chosen.name} for {requirement}")
            with Wheel(chosen) as wheel:
                wheel.record()  # a wheel that cannot be read is not kept
            final = self.cache / chosen.name
            chosen.replace(final)
            return Fetched(version, final)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _pip(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", *arguments, "--disable-pip-version-check", "--no-input"]
    if arguments[0] == "download":
        command += ["--progress-bar", "off", "--quiet"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    except OSError as error:
        raise WheelError(f"cannot run pip ({sys.executable} -m pip): {error.strerror or error}.") from None
    except subprocess.TimeoutExpired:
        raise WheelError(f"pip did not finish `pip {' '.join(arguments[:2])}` within {PIP_TIMEOUT} seconds.") from None
    if "No module named pip" in done.stderr:
        raise WheelError(
            f"{sys.executable} has no pip to fetch wheels with; install pip there, or download the wheels "
            "(pip download --no-deps --only-binary=:all: DIST==VERSION -d DIR) and give --find-links DIR."
        )
    return done


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "pip said nothing"
