"""A second Spark (3.5, the line Iceberg's Spark runtime targets) with Iceberg's SparkCatalog on
the test REST server: real Spark reading and writing Iceberg views.

pyspark 3.5 is installed at fixture time into its own venv, cached outside the repo
(~/.cache/viewsync-tests/spark35-iceberg, VIEWSYNC_TEST_CACHE overrides the root); Iceberg's
runtime is `org.apache.iceberg:iceberg-spark-runtime-3.5_2.12` as Apache publishes it on Maven
Central, pinned and fetched by the product's own fetcher (reconciler/jars). Spark 3.5 runs in a
child process (the project's own venv has pyspark 4), driven over a pipe.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from reconciler.jars import maven
from tests.helpers.paths import tests_cache_dir
from tests.helpers.servers import backend_unavailable

HERE = Path(__file__).parent / "spark35"
PYSPARK = "pyspark==3.5.*"
RUNTIME = "iceberg-spark-runtime-3.5"  # pinned name; the jar holds the SQL extensions too


class BuildError(RuntimeError):
    """The Spark 3.5 + Iceberg environment cannot be built here (message says why)."""


def cache_root() -> Path:
    return tests_cache_dir() / "spark35-iceberg"


def _run(cmd: list[str], what: str, *, cwd: Path | None = None, timeout: float = 900) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        raise BuildError(f"{what} failed ({proc.returncode}): {(proc.stderr or proc.stdout)[-1500:]}")


def _venv(root: Path) -> Path:
    python = root / "venv" / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(root / "venv")], "creating the Spark 3.5 venv")
    probe = subprocess.run([str(python), "-c", "import pyspark; assert pyspark.__version__.startswith('3.5')"],
                           capture_output=True)
    if probe.returncode != 0:
        _run([str(python), "-m", "pip", "install", "-q", PYSPARK], f"pip install {PYSPARK}")
    return python


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(*more: str) -> tuple[Path, list[Path]]:
    """(the Spark 3.5 venv's python, the jars to put on Spark's classpath: Iceberg's runtime and the
    pinned names `more`); raises BuildError."""
    root = cache_root()
    if shutil.which("java") is None:
        raise BuildError("java not found (Spark 3.5 needs Java 17)")
    with _locked(root):
        python = _venv(root)
        try:
            jars = [maven.fetch(maven.artifact(name)) for name in (RUNTIME, *more)]
        except maven.FetchError as exc:
            raise BuildError(str(exc)) from None
    return python, jars


def started(uri: str, catalog: str, work: Path, *jars: str) -> Spark35:
    """A Spark35 session (catalog `catalog` on `uri`, with the pinned `jars` on its classpath too);
    skips (fails in CI) when it cannot be built or started here."""
    try:
        python, paths = build(*jars)
        return Spark35(python, paths, uri, catalog, work)
    except BuildError as exc:
        backend_unavailable(f"Spark 3.5 + Iceberg SparkCatalog: {exc}")


class Spark35:
    """One Spark 3.5 session in a child process; `sql()` runs a statement there."""

    def __init__(self, python: Path, jars: list[Path], uri: str, catalog: str, work: Path) -> None:
        self.catalog = catalog
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SPARK_", "PYSPARK_", "_PYSPARK")) and k not in ("PYTHONPATH", "PYTHONHOME")}
        self.log: IO[bytes] = (work / "spark35.log").open("wb")
        self.proc = subprocess.Popen(
            [str(python), str(HERE / "sql_server.py"), uri, catalog, ",".join(map(str, jars)), str(work)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env, cwd=work)
        self.log_path = work / "spark35.log"
        first = self._reply()
        if "ready" not in first:
            raise BuildError(f"Spark 3.5 did not start: {first}")
        self.version = str(first["ready"])

    def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            tail = self.log_path.read_text(errors="replace")[-3000:]
            return {"error": f"Spark 3.5 exited with {self.proc.returncode}:\n{tail}"}
        return dict(json.loads(line))

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def sql(self, statement: str) -> dict[str, Any]:
        return self._request({"sql": statement})

    def rows(self, statement: str) -> list[list[Any]]:
        reply = self.sql(statement)
        if "error" in reply:
            raise AssertionError(f"Spark 3.5 failed on {statement!r}: {reply['error']}")
        return list(reply["rows"])

    def set_catalog(self, name: str, properties: Mapping[str, str]) -> None:
        """An Iceberg REST SparkCatalog `name` with these properties, in the running session: one
        more, or the properties of one not used yet (Spark loads a catalog from the session's conf
        on first use)."""
        conf = {f"spark.sql.catalog.{name}": "org.apache.iceberg.spark.SparkCatalog"}
        for key, value in {"type": "rest", "cache-enabled": "false", **properties}.items():
            conf[f"spark.sql.catalog.{name}.{key}"] = value
        reply = self._request({"conf": conf})
        if "error" in reply:
            raise AssertionError(f"Spark 3.5 did not take catalog {name}: {reply['error']}")

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
