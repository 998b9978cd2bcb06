"""A second Spark (3.5, the line Iceberg's Spark runtime on the package index targets) with
Iceberg's SparkCatalog on the test REST server: real Spark reading and writing Iceberg views.

Built at fixture time and cached outside the repo (~/.cache/viewsync-tests/spark35-iceberg,
VIEWSYNC_TEST_CACHE overrides the root): pyspark 3.5 in its own venv; the
iceberg-spark-runtime-3.5_2.12 jar from the snowpark-connect-deps-iceberg wheel, whose shaded
Jackson and httpclient5 were stripped, so Debian's Jackson 2.14 and httpclient5/httpcore5 5.2
(apt-get download) are relocated under org.apache.iceberg.shaded by Relocate.java (ASM), with an
empty TlsSocketStrategy stub (httpclient5 5.2 lacks it, the runtime loads it at start).
Spark 3.5 runs in a child process (the project's own venv has pyspark 4), driven over a pipe.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).parent / "spark35"
PYSPARK = "pyspark==3.5.*"
ICEBERG_WHEEL = "snowpark-connect-deps-iceberg==1.0.3"
RUNTIME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
DEBS = ("libjackson2-core-java", "libjackson2-databind-java", "libjackson2-annotations-java",
        "libhttpclient5-java", "libhttpcore5-java", "libasm-java")
DEP_JARS = ("jackson-core.jar", "jackson-databind.jar", "jackson-annotations.jar", "httpclient5.jar",
            "httpcore5.jar", "httpcore5-h2.jar")
VERSION = "1"  # bump to rebuild every cache


class BuildError(RuntimeError):
    """The Spark 3.5 + Iceberg environment cannot be built here (message says why)."""


def cache_root() -> Path:
    root = os.environ.get("VIEWSYNC_TEST_CACHE") or str(Path.home() / ".cache" / "viewsync-tests")
    return Path(root) / "spark35-iceberg"


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


def _iceberg_jars(root: Path) -> list[Path]:
    out = root / "jars"
    jars = [out / RUNTIME]  # it holds the SQL extensions too
    if all(j.exists() for j in jars):
        return jars
    dl = root / "download"
    dl.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", ICEBERG_WHEEL, "-d", str(dl)],
         f"pip download {ICEBERG_WHEEL}")
    wheel = next(dl.glob("snowpark_connect_deps_iceberg-*.whl"), None)
    if wheel is None:
        raise BuildError(f"{ICEBERG_WHEEL}: no wheel downloaded")
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        for jar in jars:
            tmp = jar.with_suffix(".tmp")
            tmp.write_bytes(z.read(f"snowpark_connect_deps_iceberg/jars/{jar.name}"))
            tmp.rename(jar)
    return jars


def _debian_jars(root: Path) -> Path:
    """Debian's jars (Jackson, httpclient5/httpcore5, ASM), unpacked; returns usr/share/java."""
    debs = root / "debs"
    java = debs / "root" / "usr" / "share" / "java"
    if all((java / j).exists() for j in (*DEP_JARS, "asm.jar", "asm-commons.jar")):
        return java
    debs.mkdir(parents=True, exist_ok=True)
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise BuildError("apt-get/dpkg-deb not found (Debian's Jackson and httpclient5 jars are needed)")
    try:
        _run(["apt-get", "download", *DEBS], "apt-get download", cwd=debs, timeout=300)
    except BuildError:
        _run(["apt-get", "update", "-qq"], "apt-get update", timeout=300)
        _run(["apt-get", "download", *DEBS], "apt-get download", cwd=debs, timeout=300)
    for deb in debs.glob("*.deb"):
        _run(["dpkg-deb", "-x", str(deb), str(debs / "root")], f"unpacking {deb.name}")
    return java


def _shaded_deps(root: Path, java: Path) -> Path:
    out = root / "jars" / "iceberg-shaded-deps.jar"
    if out.exists():
        return out
    if shutil.which("javac") is None:
        raise BuildError("javac not found (a JDK 17 is needed to relocate the dependencies)")
    build = root / "relocator"
    build.mkdir(parents=True, exist_ok=True)
    cp = os.pathsep.join([str(java / "asm.jar"), str(java / "asm-commons.jar")])
    _run(["javac", "-nowarn", "-d", str(build), "-cp", cp, str(HERE / "Relocate.java")], "compiling Relocate.java")
    tmp = out.with_suffix(".tmp")
    _run(["java", "-cp", os.pathsep.join([cp, str(build)]), "Relocate", str(tmp), *(str(java / j) for j in DEP_JARS)],
         "relocating Jackson and httpclient5")
    tmp.rename(out)
    return out


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build() -> tuple[Path, list[Path]]:
    """(the Spark 3.5 venv's python, the jars to put on Spark's classpath); raises BuildError."""
    root = cache_root()
    if shutil.which("java") is None:
        raise BuildError("java not found (Spark 3.5 needs Java 17)")
    with _locked(root):
        python = _venv(root)
        jars = _iceberg_jars(root)
        deps = _shaded_deps(root, _debian_jars(root))
        (root / "ready").write_text(VERSION)
    return python, [*jars, deps]


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

    def sql(self, statement: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"sql": statement}) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def rows(self, statement: str) -> list[list[Any]]:
        reply = self.sql(statement)
        if "error" in reply:
            raise AssertionError(f"Spark 3.5 failed on {statement!r}: {reply['error']}")
        return list(reply["rows"])

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
