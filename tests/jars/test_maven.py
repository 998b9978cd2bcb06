"""The one way viewsync and its tests get JVM jars: pinned coordinates with a SHA-256, fetched over
HTTP from a repository in Maven's layout (here a real HTTP server on loopback serving one), verified,
and kept in the cache; and `viewsync jars` on the command line."""

from __future__ import annotations

import hashlib
import http.server
import re
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from reconciler.jars import maven
from tests.helpers.cli import run_cli
from tests.helpers.servers import free_port

JAR = b"PK\x03\x04 not really a jar, but bytes with a digest"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Maven repository layout served over HTTP on loopback: (its URL, its root directory)."""
    root = tmp_path / "repo"
    root.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maven2", root
    finally:
        server.shutdown()
        server.server_close()


def artifact(content: bytes = JAR) -> maven.Artifact:
    return maven.Artifact("demo", "org.example.demo", "demo-driver", "1.2.3", hashlib.sha256(content).hexdigest(),
                          len(content), "review")


def publish(root: Path, art: maven.Artifact, content: bytes) -> None:
    path = root / "maven2" / "org" / "example" / "demo" / "demo-driver" / "1.2.3" / "demo-driver-1.2.3.jar"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)


def test_a_jar_is_downloaded_from_the_repository_layout_verified_and_then_found_in_the_cache(
        cache: Path, repository: tuple[str, Path]) -> None:
    url, root = repository
    art = artifact()
    publish(root, art, JAR)
    assert maven.cached(art) is None
    path = maven.fetch(art, repository=url)
    assert path == cache / "demo-driver-1.2.3.jar" and path.read_bytes() == JAR
    assert maven.cached(art) == path and maven.require(art) == path
    (root / "maven2").rename(root / "gone")  # no second download: the cache answers
    assert maven.fetch(art, repository=url) == path


def test_a_jar_whose_digest_is_not_the_pinned_one_is_refused_and_nothing_is_cached(
        cache: Path, repository: tuple[str, Path]) -> None:
    url, root = repository
    art = artifact()
    publish(root, art, JAR[:-1] + b"!")  # same size, other bytes: a tampered or corrupted download
    with pytest.raises(maven.FetchError, match="SHA-256 .* is not the pinned"):
        maven.fetch(art, repository=url)
    assert maven.cached(art) is None
    assert list(cache.iterdir()) == []  # no partial file left behind either


def test_an_unreachable_repository_gives_one_line_naming_the_artifact_and_how_to_fetch_it(cache: Path) -> None:
    art = artifact()
    with pytest.raises(maven.FetchError) as caught:
        maven.fetch(art, repository=f"http://127.0.0.1:{free_port()}/maven2", timeout=5)
    message = str(caught.value)
    assert "\n" not in message
    assert "org.example.demo:demo-driver:1.2.3" in message
    assert "viewsync jars fetch demo" in message and "mvn dependency:copy -Dartifact=org.example.demo:" in message
    with pytest.raises(maven.FetchError, match="is not in .*viewsync jars fetch demo"):
        maven.require(art)


def test_every_pin_is_a_full_coordinate_with_a_sha256_and_a_user() -> None:
    pins = maven.pinned()
    assert {"postgresql", "mariadb-java-client", "iceberg-spark-runtime-3.5"} <= {
        n for n, a in pins.items() if a.used_by == "review"}
    for art in pins.values():
        assert re.fullmatch(r"[0-9a-f]{64}", art.sha256), art
        assert art.group and art.artifact and re.match(r"\d", art.version), art
        assert art.used_by in ("review", "tests") and art.size > 0


def test_viewsync_jars_fetch_and_list(tmp_path: Path, cache: Path, repository: tuple[str, Path],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The command downloads only what it is asked for, from the configured mirror."""
    url, root = repository
    monkeypatch.setenv(maven.REPOSITORY_ENV, url)
    art = maven.artifact("postgresql")
    res = run_cli(tmp_path, "jars", "fetch", "postgresql")
    assert res.code == 1 and "cannot download org.postgresql:postgresql:" in res.err, res.text  # not published here
    assert maven.cached(art) is None
    listing = run_cli(tmp_path, "jars", "list")
    assert listing.code == 0 and re.search(r"postgresql\s+org\.postgresql:postgresql:\S+.*not fetched", listing.out)
    res = run_cli(tmp_path, "jars", "fetch", "no-such-jar")
    assert res.code == 1 and "no pinned artifact 'no-such-jar'" in res.err
