"""A real Trino for the tests: one single-node server per test session, with a `hive` catalog on the
test Hive Metastore (and `hive_views`, the same with Hive view translation on) and an Iceberg
catalog on the test Iceberg REST server (plus `memory`), named `lake` as Spark 3.5 names it in the
tests: Trino resolves an Iceberg view's default namespace only under its default catalog, which it
takes as one of its own catalogs' names. Catalogs are dynamic: a test that needs one more (Nessie's,
tests/engines/test_nessie_engines.py) adds it with CREATE CATALOG, so the others do not start its
server.

The server is Apache-licensed Trino as published on Maven Central (`io.trino:trino-server`, pinned
in reconciler/jars/pinned.toml and fetched by the product's own fetcher), unpacked once under
~/.cache/viewsync-tests/trino-<version> with only the hive, iceberg and memory plugins kept. Trino
476 needs Java 24 or later: `VIEWSYNC_TRINO_JAVA` names the java binary, else the newest JDK 24+
under /usr/lib/jvm is used. Queries go through the `trino` client from PyPI.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.jars import maven
from tests.helpers.jars import fetched
from tests.helpers.paths import tests_cache_dir
from tests.helpers.servers import backend_unavailable, free_port, serve

PLUGINS = ("hive", "iceberg", "memory")
START_TIMEOUT = 180.0  # seconds; ~10 s on an idle 2-core machine
# For view tests (hundreds of short queries on a fresh server, 2 cores; benchmarks/view_tests.py
# --engine trino): Parallel GC, not G1, whose concurrent work cost ~15% of a run's CPU; and C1
# alone, which with the ahead-of-time cache (aot_cache_flags) starts ~1.5 s sooner and plans as
# fast as C1 and C2 together (without the cache C1 alone planned ~1.5x slower).
JVM = ["-Xmx1G", "-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1",
       "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow", "-XX:ReservedCodeCacheSize=256M",
       "-XX:PerMethodRecompilationCutoff=10000", "-XX:PerBytecodeRecompilationCutoff=10000",
       "-Djdk.attach.allowAttachSelf=true", "-Djdk.nio.maxCachedBufferSize=2000000",
       "-XX:+EnableDynamicAgentLoading", "-XX:+UnlockDiagnosticVMOptions",
       "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
       "-Xlog:aot=error", "-Xlog:cds=error"]  # the AOT cache's per-class notes, not the server's log


def java() -> str | None:
    """A java of release 24 or later: VIEWSYNC_TRINO_JAVA, else the newest JDK under /usr/lib/jvm."""
    named = os.environ.get("VIEWSYNC_TRINO_JAVA")
    if named:
        return named
    found = [(release, exe) for exe, release in _jdks() if release >= 24]
    return max(found)[1] if found else None


def _jdks() -> Iterator[tuple[str, int]]:
    for home in Path("/usr/lib/jvm").glob("*"):
        exe = home / "bin" / "java"
        release = _release(exe)
        if exe.is_file() and release is not None:
            yield str(exe), release


def _release(exe: str | Path) -> int | None:
    """The feature release of a JDK's java, from its `release` file (None when there is none)."""
    release = Path(exe).resolve().parent.parent / "release"
    if not release.is_file():
        return None
    m = re.search(r'JAVA_VERSION="(\d+)', release.read_text(errors="replace"))
    return int(m.group(1)) if m else None


def aot_cache_flags(exe: str, home: Path, cache: Path | None) -> tuple[list[str], Path | None]:
    """JDK 25's ahead-of-time cache for the server (JEP 483, 514, 515): classes loaded and linked,
    and method profiles, from an earlier run of the same server. With it a fresh server starts ~2 s
    sooner and plans its first hundreds of queries with less JIT work (view tests on Trino: ~10%
    of a run). The first run with no cache records one as its JVM exits, into a file of its own
    that `start` publishes afterwards, so servers started side by side never share a half-written
    cache. Returns the flags and that file (None when the cache is used, or not supported)."""
    if cache is None or (_release(exe) or 0) < 25:
        return [], None
    if cache.is_file():  # a cache from another JDK or server is refused by the JVM, which then runs without
        return [f"-XX:AOTCache={cache}"], None
    cache.parent.mkdir(parents=True, exist_ok=True)
    recording = cache.with_name(f"{cache.name}.{os.getpid()}.{home.name}.tmp")
    return [f"-XX:AOTCacheOutput={recording}"], recording


def _cache_refused(log: Path) -> bool:
    """Whether the JVM refused its AOT cache (another JDK or server, truncated...): it says so in
    its output and runs without."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    return "Unable to map shared spaces" in text or "Loading static archive failed" in text


def default_aot_cache(exe: str, home: Path) -> Path:
    """One cache per server version and java, beside the unpacked server."""
    tag = re.sub(r"[^A-Za-z0-9.]+", "-", str(Path(exe).resolve().parent.parent.name))
    return home.parent / f"{home.name}-{tag}.aot"


def install() -> Path:
    """The unpacked server (cached), with only PLUGINS kept. Skips (fails in CI) when it cannot be had."""
    art = maven.artifact("trino-server")
    home = tests_cache_dir() / f"trino-{art.version}"
    if (home / "lib").is_dir() and all((home / "plugin" / p).is_dir() for p in PLUGINS):
        return home
    [tarball] = fetched("trino-server")
    home.parent.mkdir(parents=True, exist_ok=True)
    with (home.parent / ".trino.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (home / "lib").is_dir():
            return home
        tmp = home.with_name(home.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        # Everything first: the plugins' jars are hard links to each other's, so one plugin alone
        # does not extract.
        done = subprocess.run(["tar", "xzf", str(tarball), "-C", str(tmp), "--strip-components=1"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            backend_unavailable(f"unpacking {tarball.name} failed: {done.stderr.strip()[:500]}")
        for plugin in (tmp / "plugin").iterdir():
            if plugin.name not in PLUGINS:
                shutil.rmtree(plugin)
        shutil.rmtree(tmp / "secrets-plugin", ignore_errors=True)
        tmp.rename(home)
    return home


@dataclass
class Trino:
    """A running server and a way to query it."""

    port: int
    dir: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def connect(self, user: str = "test", catalog: str | None = None, schema: str | None = None) -> Any:
        import trino

        return trino.dbapi.connect(host="127.0.0.1", port=self.port, user=user, catalog=catalog, schema=schema,
                                   http_scheme="http")

    def rows(self, sql: str, user: str = "test") -> list[list[Any]]:
        """All rows of one statement, as lists."""
        with contextlib.closing(self.connect(user)) as conn:
            cur = conn.cursor()
            cur.execute(sql)
            return [list(r) for r in cur.fetchall()]

    def create_catalog(self, name: str, connector: str, properties: dict[str, str]) -> None:
        """Add catalog `name` to the running server, with these connector properties."""
        quoted = {k: v.replace("'", "''") for k, v in properties.items()}  # SQL string literals
        props = ", ".join(f"\"{k}\" = '{v}'" for k, v in quoted.items())
        self.rows(f"CREATE CATALOG {name} USING {connector} WITH ({props})")

    def error(self, sql: str, user: str = "test") -> str:
        """The error message of a statement expected to fail (AssertionError when it succeeds)."""
        import trino

        try:
            self.rows(sql, user)
        except trino.exceptions.TrinoQueryError as exc:
            return f"{exc.error_name}: {exc.message}"
        raise AssertionError(f"Trino accepted {sql!r}")


def _properties(path: Path, values: dict[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))


def _ready(port: int) -> None:
    """Raises OSError until the server says it has started and reads a connector's table (its
    worker takes a few seconds more than /v1/info to accept splits: NO_NODES_AVAILABLE)."""
    import trino

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/info", timeout=2) as resp:
        if json.load(resp).get("starting", True):
            raise OSError("starting")
    try:
        with contextlib.closing(trino.dbapi.connect(host="127.0.0.1", port=port, user="test")) as conn:
            cur = conn.cursor()
            cur.execute("CREATE TABLE IF NOT EXISTS memory.default.ready AS SELECT 1 AS x")
            cur.fetchall()
            cur.execute("SELECT x FROM memory.default.ready")
            cur.fetchall()
    except trino.exceptions.TrinoQueryError as exc:
        if exc.error_name == "NO_NODES_AVAILABLE":
            raise OSError(exc.error_name) from None
        raise


ICEBERG_CATALOG = "lake"


def start(work: Path, metastore_uri: str | None, iceberg_uri: str | None,
          aot_cache: Path | bool = True) -> Iterator[Trino]:
    """Start Trino with catalogs hive (on `metastore_uri`) and lake (Iceberg, on `iceberg_uri`), each only
    when given, and memory; stop it after. (benchmarks/view_tests.py starts one with memory alone.)
    `aot_cache`: True for the shared one under the tests' cache, a path for another, False for none."""
    exe = java()
    if exe is None:
        backend_unavailable("Trino needs Java 24 or later: set VIEWSYNC_TRINO_JAVA, or install one under /usr/lib/jvm")
    home = install()
    port = free_port()
    etc = work / "etc"
    (etc / "catalog").mkdir(parents=True)
    (work / "tmp").mkdir()
    _properties(etc / "config.properties", {
        "node.environment": "test", "node.id": "viewsync-tests", "coordinator": "true",
        "node-scheduler.include-coordinator": "true", "http-server.http.port": str(port),
        "discovery.uri": f"http://127.0.0.1:{port}", "query.max-memory": "512MB",
        "query.max-memory-per-node": "512MB", "plugin.dir": str(home / "plugin"), "http-server.log.enabled": "false",
        # CREATE CATALOG: a test adds the catalog only it needs (Trino.create_catalog)
        "catalog.management": "dynamic", "catalog.store": "file"})
    # the file store's own configuration, which Trino reads from etc/ under its working directory
    _properties(etc / "catalog-store.properties", {"catalog.config-dir": str(etc / "catalog")})
    (etc / "log.properties").write_text("io.trino=WARN\n")
    # Hive: Hadoop's file system reads the metastore's file: locations (Trino's native local one
    # lists them back as local:/// and skips them, silently: no rows).
    if metastore_uri is not None:
        _properties(etc / "catalog" / "hive.properties", {
            "connector.name": "hive", "hive.metastore.uri": metastore_uri, "fs.hadoop.enabled": "true",
            "hive.non-managed-table-writes-enabled": "true"})
        # The same metastore, with Trino's translation of Hive (and Spark) views on: what Trino makes
        # of the views it did not write.
        _properties(etc / "catalog" / "hive_views.properties", {
            "connector.name": "hive", "hive.metastore.uri": metastore_uri, "fs.hadoop.enabled": "true",
            "hive.hive-views.enabled": "true"})
    if iceberg_uri is not None:
        _properties(etc / "catalog" / f"{ICEBERG_CATALOG}.properties", {
            "connector.name": "iceberg", "iceberg.catalog.type": "rest", "iceberg.rest-catalog.uri": iceberg_uri,
            "fs.native-local.enabled": "true", "local.location": "/"})
    _properties(etc / "catalog" / "memory.properties", {"connector.name": "memory"})
    cache = default_aot_cache(exe, home) if aot_cache is True else aot_cache if isinstance(aot_cache, Path) else None
    aot, recording = aot_cache_flags(exe, home, cache)
    cmd = [exe, *JVM, *aot, f"-Djava.io.tmpdir={work / 'tmp'}", f"-Dconfig={etc / 'config.properties'}",
           f"-Dlog.levels-file={etc / 'log.properties'}", "-cp", f"{home / 'lib'}/*", "io.trino.server.TrinoServer"]
    with serve(cmd, work, "Trino", lambda: _ready(port), timeout=START_TIMEOUT, interval=0.3,
               stop_timeout=20) as proc:
        if cache is not None and recording is None and _cache_refused(work / "trino.log"):
            cache.unlink(missing_ok=True)  # so the next start records a good one
        try:
            yield Trino(port, work, proc)
        finally:
            if recording is not None:  # written as the JVM exits, which `serve` waits for
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=60)
    if recording is not None and cache is not None:
        if recording.is_file() and proc.returncode not in (None, -signal.SIGKILL):  # killed: maybe half-written
            recording.replace(cache)  # atomic: a server starting now sees the whole cache or none
        recording.unlink(missing_ok=True)
