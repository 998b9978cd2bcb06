"""A real Iceberg REST catalog for the iceberg-rest adapter tests.

tests/adapters/iceberg/server/IcebergRestServer.java routes the REST paths to Iceberg's own
CatalogHandlers over an InMemoryCatalog. It is compiled here with javac against Apache Iceberg's
jars as published on Maven Central (pinned in reconciler/jars/pinned.toml, fetched into
~/.cache/viewsync/jars on first use), cached by source hash under
tests/adapters/iceberg/server/build/ (gitignored), and started per session on a free port.
Nothing is pre-built: a checkout, the installed deps and a JDK 17 suffice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.iceberg import PAGE_SIZE, IcebergServer
from tests.helpers.jars import fetched
from tests.helpers.rest_proxy import RestProxy, rest_proxy
from tests.helpers.servers import backend_unavailable, free_port, stop, wait_ready

SERVER_DIR = Path(__file__).parent / "server"
SOURCE = SERVER_DIR / "IcebergRestServer.java"
MAIN_CLASS = "org.apache.iceberg.rest.IcebergRestServer"
# Iceberg's catalog code and what its REST handlers load (pinned names)
SERVER_JARS = ("iceberg-core", "iceberg-api", "iceberg-common", "iceberg-bundled-guava", "jackson-databind",
               "jackson-core", "jackson-annotations", "caffeine", "slf4j-api")
START_TIMEOUT = 120.0  # seconds: a JVM start on a loaded 2-core CI machine can take a while


def _jars() -> list[Path]:
    return fetched(*SERVER_JARS)


def _compile(jars: list[Path]) -> Path:
    """javac the server once per source/jar set; the build dir is keyed by their hash."""
    if not shutil.which("javac") or not shutil.which("java"):
        backend_unavailable("a JDK (java and javac, 17+) is needed for the Iceberg REST test server")
    key = hashlib.sha256(SOURCE.read_bytes() + "\n".join(j.name for j in jars).encode()).hexdigest()[:16]
    out = SERVER_DIR / "build" / key
    if (out / "org" / "apache" / "iceberg" / "rest" / "IcebergRestServer.class").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix="tmp-"))
    proc = subprocess.run(["javac", "-nowarn", "-d", str(tmp), "-cp", os.pathsep.join(map(str, jars)), str(SOURCE)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"javac failed:\n{proc.stderr}")
    try:
        tmp.rename(out)
    except OSError:  # another session built it first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _start(tmp: Path, *, token: str | None = None, client: str | None = None,
           prefix: str | None = None) -> Iterator[IcebergServer]:
    jars = _jars()
    build = _compile(jars)
    port = free_port()
    cmd = ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
           "-Dsun.net.httpserver.nodelay=true", f"-Dviewsync.maxPageSize={PAGE_SIZE}"]
    if token:
        cmd.append(f"-Dviewsync.token={token}")
    if client:
        cmd.append(f"-Dviewsync.client={client}")
    if prefix:
        cmd.append(f"-Dviewsync.prefix={prefix}")
    cmd += ["-cp", os.pathsep.join([str(build), *map(str, jars)]), MAIN_CLASS, str(port),
            (tmp / "warehouse").as_uri()]
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    server = IcebergServer(port=port, token=token, client=client, prefix=prefix, process=proc)
    why = wait_ready(proc, lambda: server.admin("health", method="GET"), what="Iceberg REST server",
                     timeout=START_TIMEOUT, log=tmp / "server.log")
    if why:
        stop(proc, log)
        backend_unavailable(why)  # skips on a dev machine, fails in CI (VIEWSYNC_REQUIRE_BACKENDS=1)
    try:
        yield server
    finally:
        stop(proc, log)


@pytest.fixture(scope="session")
def iceberg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IcebergServer]:
    """An open server (no auth)."""
    yield from _start(tmp_path_factory.mktemp("iceberg-rest"))


@pytest.fixture(scope="session")
def iceberg_auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IcebergServer]:
    """A server that wants a bearer token, issues it for OAuth2 client credentials, and serves
    the catalog under a prefix (as multi-warehouse servers do)."""
    yield from _start(tmp_path_factory.mktemp("iceberg-rest-auth"), token="tok-s3cr3t-0451",
                      client="viewsync-ci:cl13nt-s3cr3t", prefix="wh1")


@pytest.fixture
def namespace(request: pytest.FixtureRequest, iceberg_server: IcebergServer) -> str:
    """A fresh namespace per test (created), named after the test."""
    name = "t_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]
    iceberg_server.client_catalog().create_namespace(name)
    return name


@pytest.fixture
def proxied(iceberg_server: IcebergServer) -> Iterator[RestProxy]:
    """The reference server behind a recording proxy (tests/helpers/rest_proxy.py)."""
    with rest_proxy(iceberg_server.uri) as proxy:
        yield proxy
