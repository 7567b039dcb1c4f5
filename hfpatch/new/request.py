"""What `hfpatch new` is asked to do: the options as the parser gives them (`Request`), and the same checked
(`Asked`: versions parsed, targets split, the catalog's place sound), each fault a UsageError."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from hfpatch import catalog, entry
from hfpatch.errors import UsageError


@dataclass(frozen=True)
class Request:
    """What `hfpatch new` is asked to do, as given on its command line (see `hfpatch new --help`)."""

    patch_id: str
    targets: tuple[str, ...]
    fixed_in: str | None
    catalog: str
    # Where the fixed text comes from besides a release: a wheel or source tree (--fixed-from), or the edits made to
    # the distribution installed in an interpreter (--from-edits DIST, of --python or hfpatch's own).
    fixed_from: str | None = None
    from_edits: str | None = None
    python: str | None = None
    find_links: str | None = None
    cache: str | None = None
    upstream: str | None = None
    title: str | None = None
    since: str | None = None
    until: str | None = None
    all_releases: bool = False
    releases: tuple[str, ...] = ()
    pre: bool = False
    force: bool = False
    # DIST:PATTERN: the files the release --fixed-in no longer ships, whose code the entry takes out.
    remove: str | None = None


def version_option(text: str, option: str) -> Version:
    """The version an option names; a UsageError where it is none."""
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{option} {text!r} is not a version (PEP 440), such as 5.13.0.") from None


def check_id(patch_id: str) -> str:
    if not entry.ID.fullmatch(patch_id):
        raise UsageError(f"{patch_id!r} cannot be an id: lowercase letters, digits, '.', '_' and '-' only.")
    return patch_id


@dataclass(frozen=True)
class Targets:
    """The --target options: one distribution; per module, the names given (None: the whole module's fix)."""

    distribution: str
    modules: dict[str, tuple[str, ...] | None]


def parse_targets(values: Sequence[str]) -> Targets:
    """DIST:MODULE:NAME (a function, class, method, constant or import a module or class binds) or DIST:MODULE (every
    statement the fix changes in the module); several modules of one distribution make one patch of several files."""
    distributions: dict[str, str] = {}
    modules: dict[str, list[str] | None] = {}
    for value in values:
        parts = value.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise UsageError(
                f"--target {value!r} is not DIST:MODULE:NAME or DIST:MODULE (e.g. transformers:transformers.x:f)."
            )
        distribution, module = parts[0], parts[1]
        if not entry.DISTRIBUTION.fullmatch(distribution):
            raise UsageError(f"--target {value!r}: {distribution!r} is not a distribution name.")
        if not entry.DOTTED.fullmatch(module):
            raise UsageError(f"--target {value!r}: {module!r} is not a module name (dotted, like a.b.c).")
        distributions.setdefault(_normalised(distribution), distribution)
        if len(parts) == 2:
            if module in modules and modules[module] is not None:
                raise UsageError(
                    f"--target {value!r} carries the whole module, and another --target names one of its statements."
                )
            if module in modules:
                raise UsageError("a --target is given twice.")
            modules[module] = None
            continue
        name = parts[2]
        if not entry.DOTTED.fullmatch(name):
            raise UsageError(
                f"--target {value!r}: {name!r} is not a name (a function, a class, a constant, Class.method)."
            )
        named = modules.setdefault(module, [])
        if named is None:
            raise UsageError(
                f"--target {value!r} names a statement of {module}, whose whole fix another --target carries."
            )
        if name in named:
            raise UsageError("a --target is given twice.")
        named.append(name)
    if len(distributions) != 1:
        raise UsageError("every --target must name the same distribution: a patch changes one distribution.")
    return Targets(
        next(iter(distributions.values())),
        {module: None if names is None else tuple(names) for module, names in modules.items()},
    )


def _normalised(name: str) -> str:
    return canonicalize_name(name)


@dataclass(frozen=True)
class Asked:
    """A Request checked: what every later step of `new` reads, and nothing of the parser's."""

    patch_id: str
    distribution: str
    targets: Targets | None  # None: every file the user edited (--from-edits)
    fixed_in: Version | None
    since: Version | None
    until: Version | None
    named: tuple[Version, ...]
    catalog: Path
    fixed_from: Path | None = None
    from_edits: str | None = None
    python: str | None = None
    find_links: Path | None = None
    cache: Path | None = None
    upstream: str | None = None
    title: str | None = None
    all_releases: bool = False
    pre: bool = False
    force: bool = False
    remove: str | None = None  # the pattern of the files removed (--remove), inside the wheel

    @property
    def destination(self) -> Path:
        return self.catalog / self.patch_id

    @property
    def package(self) -> str:
        """The top-level package of the targets (a tree's version is read from its __init__)."""
        assert self.targets is not None
        return next(iter(self.targets.modules)).split(".")[0]


def ask(request: Request) -> Asked:
    """What was asked, checked: one UsageError for the first fault, before anything is read."""
    patch_id = check_id(request.patch_id)
    if request.remove is not None:
        return _removal(request, patch_id)
    _one_source(request)
    targets = parse_targets(request.targets) if request.targets else None
    if targets is None and request.from_edits is None:
        raise UsageError("give --target DIST:MODULE[:NAME]: what the fix changes (the edits say it for --from-edits).")
    distribution = targets.distribution if targets is not None else str(request.from_edits)
    if request.from_edits and canonicalize_name(request.from_edits) != canonicalize_name(distribution):
        raise UsageError(f"--from-edits {request.from_edits} and --target {distribution}: one distribution, please.")
    fixed_in, since, until = (
        None if text is None else version_option(text, option)
        for text, option in ((request.fixed_in, "--fixed-in"), (request.since, "--since"), (request.until, "--until"))
    )
    if since is not None and fixed_in is not None and since > fixed_in:
        raise UsageError(f"--since {since} is after --fixed-in {fixed_in}.")
    asked = Asked(
        patch_id, distribution, targets, fixed_in, since, until,
        tuple(version_option(release, "--release") for release in request.releases),
        Path(request.catalog),
        fixed_from=None if request.fixed_from is None else Path(request.fixed_from),
        from_edits=request.from_edits, python=request.python,
        find_links=None if request.find_links is None else Path(request.find_links),
        cache=None if request.cache is None else Path(request.cache),
        upstream=request.upstream, title=request.title,
        all_releases=request.all_releases, pre=request.pre, force=request.force,
    )  # fmt: skip
    _place_free(asked)
    return asked


def _removal(request: Request, patch_id: str) -> Asked:
    """--remove DIST:PATTERN --fixed-in V: the files V no longer ships; nothing else says where a fix is."""
    assert request.remove is not None
    distribution, _, pattern = request.remove.partition(":")
    if not entry.DISTRIBUTION.fullmatch(distribution) or not pattern or pattern.startswith("/") or ".." in pattern:
        raise UsageError(
            f"--remove {request.remove!r} is not DIST:PATTERN (e.g. transformers:transformers/models/*/convert_*.py)."
        )
    others = [option for option, given in (("--target", request.targets), ("--fixed-from", request.fixed_from),
              ("--from-edits", request.from_edits)) if given]  # fmt: skip
    if others:
        raise UsageError(f"--remove and {others[0]}: an entry that removes files has no other fix.")
    if request.fixed_in is None:
        raise UsageError("--remove needs --fixed-in VERSION: the first release that no longer ships the files.")
    asked = Asked(
        patch_id, distribution, None, version_option(request.fixed_in, "--fixed-in"),
        None if request.since is None else version_option(request.since, "--since"), None, (),
        Path(request.catalog),
        find_links=None if request.find_links is None else Path(request.find_links),
        cache=None if request.cache is None else Path(request.cache),
        upstream=request.upstream, title=request.title, force=request.force, remove=pattern,
    )  # fmt: skip
    _place_free(asked)
    return asked


def _one_source(request: Request) -> None:
    """The fixed text comes from one place: a release, a build, or the user's edit."""
    sources = (("--fixed-from", request.fixed_from), ("--from-edits", request.from_edits))
    given = [option for option, value in sources if value]
    if len(given) > 1:
        raise UsageError("give one of --fixed-from PATH and --from-edits DIST: the fixed text comes from one place.")
    if request.from_edits and request.fixed_in is not None:
        raise UsageError(
            "--fixed-in and --from-edits: the fixed text is your edit, made on the release installed; give one."
        )
    if not given and request.fixed_in is None:
        raise UsageError(
            "say where the fixed text is: --fixed-in VERSION (a release), --fixed-from PATH (a wheel or a source tree "
            "of a build) or --from-edits DIST (what you edited in the installed distribution)."
        )
    if request.python is not None and request.from_edits is None:
        raise UsageError("--python says whose edits --from-edits reads; give it with --from-edits DIST.")


def _place_free(asked: Asked) -> None:
    """The entry's place: in a directory, not taken (unless --force), and not an id the built-in catalog has."""
    if asked.catalog.exists() and not asked.catalog.is_dir():
        raise UsageError(f"the catalog {asked.catalog} is not a directory; give --catalog a directory.")
    destination = asked.destination
    if (destination.exists() or destination.is_symlink()) and not asked.force:
        raise UsageError(f"{destination} exists; give --force to replace it, or choose another PATCH_ID.")
    builtin = catalog.builtin_catalog() / asked.patch_id
    if (builtin / entry.ENTRY).is_file() and builtin.resolve() != destination.resolve():
        raise UsageError(
            f"{asked.patch_id} is the id of a built-in entry, and hfpatch refuses two entries with one id: choose "
            "another PATCH_ID."
        )
