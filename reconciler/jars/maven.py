"""Pinned Maven artifacts: where each lives in the cache, and fetching it from a Maven repository.

The cache holds only verified files: a download goes to a temporary name, and is renamed into
place only when its SHA-256 matches the pin, so a jar found in the cache needs no second check.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from reconciler.core.cache import cache_dir as viewsync_cache

CENTRAL = "https://repo1.maven.org/maven2"
REPOSITORY_ENV = "VIEWSYNC_MAVEN_REPOSITORY"  # a mirror (Artifactory, Nexus) in the repository layout
CACHE_ENV = "VIEWSYNC_JARS_DIR"  # the cache directory itself (default ~/.cache/viewsync/jars)
CHUNK = 1 << 20


class FetchError(Exception):
    """A pinned artifact could not be fetched or is not cached; the message is one line saying
    which artifact and how to get it."""


@dataclass(frozen=True)
class Artifact:
    """One pinned jar."""

    name: str  # the key in pinned.toml, and what `viewsync jars fetch` takes
    group: str
    artifact: str
    version: str
    sha256: str
    size: int
    used_by: str  # review | tests
    about: str = ""
    packaging: str = "jar"  # the file's extension
    classifier: str | None = None  # e.g. runner: part of the file's name

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def file_name(self) -> str:
        tail = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{tail}.{self.packaging}"

    def url(self, repository: str) -> str:
        path = f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"
        return f"{repository.rstrip('/')}/{path}"


@functools.cache
def pinned() -> dict[str, Artifact]:
    """Every pinned artifact by name (pinned.toml, shipped in the wheel)."""
    data = tomllib.loads(resources.files(__package__).joinpath("pinned.toml").read_text(encoding="utf-8"))
    out: dict[str, Artifact] = {}
    for name, entry in data.items():
        group, artifact, version = str(entry["coordinate"]).split(":")
        out[name] = Artifact(name, group, artifact, version, str(entry["sha256"]), int(entry["size"]),
                             str(entry["for"]), str(entry.get("about", "")), str(entry.get("packaging", "jar")),
                             str(entry["classifier"]) if entry.get("classifier") else None)
    return out


def artifact(name: str) -> Artifact:
    """The pinned artifact `name`. Raises KeyError with the names there are."""
    try:
        return pinned()[name]
    except KeyError:
        raise KeyError(f"no pinned artifact {name!r} (pinned: {', '.join(sorted(pinned()))})") from None


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return viewsync_cache() / "jars"


def cached(art: Artifact) -> Path | None:
    """The verified jar in the cache, or None."""
    path = cache_dir() / art.file_name
    return path if path.is_file() and path.stat().st_size == art.size else None


def fetch_hint(art: Artifact) -> str:
    """How to get `art` into the cache: viewsync's own command, or by hand where the registry is reachable."""
    return (f"run `viewsync jars fetch {art.name}`, or where Maven Central is reachable "
            f"`mvn dependency:copy -Dartifact={art.coordinate}:{art.packaging}"
            f"{':' + art.classifier if art.classifier else ''} "
            f"-DoutputDirectory=<dir>` and copy "
            f"{art.file_name} into {cache_dir()}")


def require(art: Artifact) -> Path:
    """The cached jar. Raises FetchError (one line: what is missing and how to fetch it)."""
    path = cached(art)
    if path is None:
        raise FetchError(f"{art.coordinate} is not in {cache_dir()}: {fetch_hint(art)}")
    return path


def fetch(art: Artifact, *, repository: str | None = None, timeout: float = 60) -> Path:
    """The cached jar, downloading and verifying it first if needed. Raises FetchError."""
    path = cached(art)
    if path is not None:
        return path
    repo = repository or os.environ.get(REPOSITORY_ENV) or CENTRAL
    url = art.url(repo)
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target, prefix=f".{art.file_name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310
            while chunk := resp.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != art.sha256:
            raise FetchError(f"{art.coordinate} from {url}: SHA-256 {digest.hexdigest()} is not the pinned "
                             f"{art.sha256} (refused; nothing cached)")
        tmp.chmod(0o644)  # a jar on a classpath: readable by whoever runs Spark's workers
        tmp.replace(target / art.file_name)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise FetchError(f"cannot download {art.coordinate} from {repo} ({reason}): on a machine that reaches it, "
                         f"{fetch_hint(art)}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return target / art.file_name
