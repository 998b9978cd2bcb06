"""Starting, reusing and stopping the Spark worker process (see worker.py).

The worker is started once per process and settings, and reused by every
verification in it (tests run many plans in one process). Spark's start-up
dominates a small verification; a class-data-sharing archive of the JDK and
Spark classes, made on first use under ~/.cache/viewsync, halves it.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from reconciler.core.cache import cache_dir
from reconciler.core.errors import UserError
from reconciler.verify.settings import SparkSettings

INSTALL_PYSPARK = "install the Spark extra: pip install 'viewsync[spark]'"
INSTALL_JAVA = "install Java 17+ (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


class SparkUnavailable(UserError):
    """Spark cannot run here (no PySpark, no Java, or the JVM did not start)."""


def _java() -> str:
    """The java Spark's launcher will run: $JAVA_HOME/bin/java when JAVA_HOME is set (it
    never falls back to PATH then), else `java` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not java.is_file():
            raise SparkUnavailable(f"Spark verification needs Java (JAVA_HOME={home} has no bin/java): {INSTALL_JAVA}")
        return str(java)
    found = shutil.which("java")
    if found is None:
        raise SparkUnavailable(f"Spark verification needs Java (`java` not found): {INSTALL_JAVA}")
    return found


def _pyspark_dir() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def archive_path(java: str, pyspark: Path) -> Path:
    """The CDS archive for this JDK and these jars: a JDK or Spark upgrade gets a new one."""
    jars = sorted((pyspark / "jars").glob("*.jar"))
    key = hashlib.sha256("\n".join([os.path.realpath(java), *(f"{j}:{j.stat().st_mtime_ns}" for j in jars)])
                         .encode()).hexdigest()[:16]
    return cache_dir() / f"spark-cds-{key}.jsa"


class JsonLineChild:
    """What a Spark child process speaking one JSON object per line needs on our side:
    reading an answer, its log's tail, its JVM's peak memory, and stopping it. The verifier's
    worker and the data review's live-read worker both are one."""

    _proc: subprocess.Popen[str]
    _log: IO[bytes]
    dir: Path
    jvm_pid: int | None = None

    def _read(self) -> dict[str, Any] | None:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            return None
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _log_tail(self) -> str:
        try:
            return (self.dir / "spark.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def peak_rss_mb(self) -> float | None:
        """The JVM's peak resident memory (Linux), for the benchmarks."""
        if self.jvm_pid is None:
            return None
        try:
            for line in Path(f"/proc/{self.jvm_pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def _stopped(self) -> None:
        """Called once the process has ended, before its directory goes."""

    def close(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._stopped()
        with contextlib.suppress(OSError):
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class SparkWorker(JsonLineChild):
    """One worker process holding one scratch Spark session."""

    def __init__(self, settings: SparkSettings) -> None:
        if _pyspark_dir() is None:
            raise SparkUnavailable(f"Spark verification needs PySpark: {INSTALL_PYSPARK}")
        java = _java()
        self.settings = settings
        self.dir = Path(tempfile.mkdtemp(prefix="viewsync-spark-"))
        self._archive_tmp: Path | None = None
        self._archive: Path | None = None
        self.jvm_pid: int | None = None
        self.start_seconds = 0.0
        self._lock = threading.Lock()
        conf = self._conf(java)
        self._log: IO[bytes] = open(self.dir / "spark.log", "wb")  # noqa: SIM115 - closed in close()
        # TZ=UTC: PySpark hands timestamps back in the Python process's local time zone; view tests
        # type timestamp_ltz values in UTC, so a laptop in Los Angeles compares what CI compares.
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1", "TZ": "UTC"}
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        started = time.monotonic()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "reconciler.verify.worker", json.dumps(conf)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=self.dir, env=env,
            text=True, encoding="utf-8")
        hello = self._read()
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self._log_tail()
            self.close()
            if "JAVA_GATEWAY_EXITED" in detail or "Java gateway" in detail:
                detail += f" ({INSTALL_JAVA})"
            raise SparkUnavailable(f"Spark could not start: {detail.strip().splitlines()[-1] if detail else '?'}")
        self.jvm_pid = hello.get("pid")
        if self._archive_tmp is not None and self.jvm_pid is not None:
            with contextlib.suppress(OSError):
                self._archive_tmp.with_name(self._archive_tmp.name + ".pid").write_text(str(self.jvm_pid))
        self.start_seconds = time.monotonic() - started

    def _conf(self, java: str) -> dict[str, str]:
        s = self.settings
        jvm = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", f"-Djava.io.tmpdir={self.dir}"]
        pyspark = _pyspark_dir()
        if s.class_data_sharing and pyspark is not None:
            archive = archive_path(java, pyspark)
            with contextlib.suppress(OSError):
                _adopt_archives(archive)
            if archive.exists():
                jvm += [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto"]
            else:
                with contextlib.suppress(OSError):
                    archive.parent.mkdir(parents=True, exist_ok=True)
                    self._archive = archive
                    self._archive_tmp = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
                    jvm.append(f"-XX:ArchiveClassesAtExit={self._archive_tmp}")
        jvm += list(s.jvm_options)
        # Tests type timestamps with a local time zone in UTC (viewtests.values); a conf may say otherwise.
        # Tests' jobs are tiny: waiting for a task's preferred locality only adds delay (one executor).
        conf = {"spark.sql.session.timeZone": "UTC", "spark.locality.wait": "0", **s.conf}
        conf.update({
            "spark.master": s.master,
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.warehouse.dir": (self.dir / "warehouse").as_uri(),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "1",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": s.driver_memory,
            "spark.driver.extraJavaOptions": " ".join(jvm),
        })
        return conf

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._proc.poll() is not None or self._proc.stdin is None:
                raise SparkUnavailable("the Spark verifier stopped unexpectedly")
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
            answer = self._read()
        if answer is None:
            raise SparkUnavailable("the Spark verifier stopped unexpectedly: "
                                   + (self._log_tail().strip().splitlines() or ["?"])[-1])
        if "fatal" in answer:
            raise UserError(f"Spark verification failed: {answer['fatal']}")
        return answer

    def _stopped(self) -> None:
        self._finish_archive()

    def _finish_archive(self) -> None:
        """The JVM writes the archive as it exits; publish it when complete, or leave that
        to the next start (see _adopt_archives) rather than keep the user waiting."""
        if self._archive_tmp is None or self._archive is None:
            return
        deadline = time.monotonic() + 20
        while self.jvm_pid is not None and _alive(self.jvm_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        _adopt_archives(self._archive)


def _adopt_archives(archive: Path) -> None:
    """Publish an archive a finished JVM left under a temporary name; drop abandoned ones."""
    for tmp in archive.parent.glob(f"{archive.name}.*.tmp"):
        pid_file = tmp.with_name(tmp.name + ".pid")
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            continue
        if _alive(pid):
            continue
        with contextlib.suppress(OSError):
            if not archive.exists() and tmp.stat().st_size > 0:
                os.replace(tmp, archive)
            else:
                tmp.unlink()
        with contextlib.suppress(OSError):
            pid_file.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not reaped by its parent) is finished for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _key(settings: SparkSettings) -> str:
    return json.dumps({**dataclasses.asdict(settings), "verify": None}, sort_keys=True)


class WorkerPool:
    """Spark workers by settings, started ahead (`prestart`) or on first use (`worker`).

    A JVM takes seconds to start, so a pool lives as long as its owner wants its workers:
    the command line uses one pool for its process (`PROCESS`), closed at exit; a caller
    that runs many commands in one process (the tests) shares it too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the three maps below
        self._workers: dict[str, SparkWorker] = {}
        self._starting: dict[str, threading.Thread] = {}
        self._failed: dict[str, BaseException] = {}

    def _start(self, key: str, settings: SparkSettings) -> None:
        try:
            w = SparkWorker(settings)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that needs the worker
            with self._lock:
                self._failed[key] = exc
            return
        with self._lock:
            self._workers[key] = w

    def prestart(self, settings: SparkSettings) -> None:
        """Start the worker in the background: Spark's start-up overlaps reading the catalogs."""
        key = _key(settings)
        with self._lock:
            if key in self._workers or key in self._starting:
                return
            self._failed.pop(key, None)
            thread = threading.Thread(target=self._start, args=(key, settings), name="viewsync-spark-start",
                                      daemon=True)
            self._starting[key] = thread
        thread.start()

    def worker(self, settings: SparkSettings) -> SparkWorker:
        """The worker for these settings, started now unless started ahead; raises what its
        start raised (no Java, no PySpark...)."""
        key = _key(settings)
        with self._lock:
            thread = self._starting.pop(key, None)
        if thread is not None:
            thread.join()
        with self._lock:
            failed = self._failed.pop(key, None)
            if failed is not None:
                raise failed
            w = self._workers.get(key)
            if w is None or w._proc.poll() is not None:
                w = SparkWorker(settings)
                self._workers[key] = w
            return w

    def close(self) -> None:
        """Stop every worker of the pool."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.close()


PROCESS = WorkerPool()  # the command line's: one per process, its JVMs stopped at exit
atexit.register(PROCESS.close)


def prestart(settings: SparkSettings) -> None:
    PROCESS.prestart(settings)


def worker(settings: SparkSettings) -> SparkWorker:
    return PROCESS.worker(settings)
