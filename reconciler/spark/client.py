"""Our side of a Spark child process (its side: serve.py): start with a handshake, requests and
answers one JSON object per line, Spark's errors mapped to ours, stop; and a pool of children.

A JVM takes seconds to start, so a child lives as long as its pool: the command line keeps one
per process and kind (closed at exit); a caller that runs many commands in one process (the
tests) shares them too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reconciler.core.engine import Engine, OnProgress
from reconciler.core.errors import UserError
from reconciler.spark.conf import INSTALL_JAVA, Archive
from reconciler.spark.errors import SparkError, SparkUnavailable

SERVE = Path(__file__).with_name("serve.py")
__all__ = ["SERVE", "Launch", "Names", "Notice", "OnProgress", "Pool", "SparkChild", "child_env", "notify",
           "starts", "work_dir"]

# What the user is told while a child starts and after it stops: "starting" (first: whether this
# start writes the class-data-sharing archive), "ready", "archive" (its JVM writes the archive in
# the background). The command line listens (on a terminal); nobody else does.
Notice = Callable[[str, bool], None]
_LISTENERS: list[Notice] = []


_STARTS = [0]  # children started by this process (`viewsync review` reports its own)


def starts() -> int:
    """How many Spark children this process has started (each a JVM), whatever their kind."""
    return _STARTS[0]


def notify(listener: Notice | None) -> None:
    """Send the children's notices to `listener` (None: to nobody)."""
    _LISTENERS[:] = [listener] if listener is not None else []


def _tell(event: str, first: bool = False) -> None:
    for listener in list(_LISTENERS):
        with contextlib.suppress(Exception):  # telling the user never fails a command
            listener(event, first)


@dataclass(frozen=True)
class Names:
    """How a kind of child is named in what the user reads."""

    child: str  # "the Spark verifier": "... stopped unexpectedly"
    failed: str  # "Spark verification failed": "...: <fatal error>"
    start_failed: str  # "Spark could not start": "...: <its last line>"


@dataclass(frozen=True)
class Launch:
    """One child to start: its command, its conf (sent on stdin: it may hold credentials), the
    environment, its work directory (removed at stop) and its CDS archive."""

    command: list[str]
    conf: dict[str, str]
    env: dict[str, str]
    work: Path
    names: Names
    archive: Archive | None = None


class SparkChild:
    """One Spark child process and the session it holds."""

    def __init__(self, launch: Launch) -> None:
        self.names = launch.names
        self.dir = launch.work
        self.jvm_pid: int | None = None
        self.spark_version = ""
        self.start_seconds = 0.0
        self._archive = launch.archive
        self._lock = threading.Lock()
        self._log: IO[bytes] = open(self.dir / "spark.log", "wb")  # noqa: SIM115 - closed in close()
        started = time.monotonic()
        writes_archive = self._archive is not None and self._archive.writes
        _tell("starting", writes_archive)
        _STARTS[0] += 1
        try:
            self._proc = subprocess.Popen(launch.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._log, cwd=self.dir, env=launch.env, text=True,
                                          encoding="utf-8")
        except OSError as exc:
            self._log.close()
            _tell("ready")
            raise SparkUnavailable(f"{launch.command[0]!r} cannot run: {exc.strerror or exc}") from None
        if self._archive is not None:
            self._archive.started(self._proc.pid)  # the child publishes the archive (see close)
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(launch.conf) + "\n")
        self._proc.stdin.flush()
        hello = self._read()
        _tell("ready")
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self._log_tail()
            self._archive = None  # nothing worth publishing: a writer that died is tidied by the next start
            self.close()
            if "JAVA_GATEWAY_EXITED" in detail or "Java gateway" in detail:
                detail += f" ({INSTALL_JAVA})"
            last = detail.strip().splitlines()[-1] if detail.strip() else "?"
            raise SparkUnavailable(f"{self.names.start_failed}: {last}")
        self.jvm_pid = hello.get("pid")
        self.spark_version = str(hello.get("spark", ""))
        self.start_seconds = time.monotonic() - started

    def call(self, request: dict[str, Any], progress: OnProgress | None = None) -> dict[str, Any]:
        """Send one request; progress lines go to `progress`; returns the answer. Raises SparkError
        for Spark's own errors, UserError for a handler's failure, SparkUnavailable when the
        process died."""
        with self._lock:
            if self._proc.poll() is not None or self._proc.stdin is None:
                raise SparkUnavailable(f"{self.names.child} stopped unexpectedly")
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            while True:
                answer = self._read()
                if answer is None:
                    raise SparkUnavailable(f"{self.names.child} stopped unexpectedly: "
                                           + (self._log_tail().strip().splitlines() or ["?"])[-1])
                if "progress" not in answer:
                    break
                if progress is not None:
                    progress(answer["progress"])
        if "fatal" in answer:
            raise UserError(f"{self.names.failed}: {answer['fatal']}")
        if "error" in answer:
            raise SparkError(answer["error"])
        return answer

    def alive(self) -> bool:
        return self._proc.poll() is None

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

    def close(self) -> None:
        """Stop the child. One whose JVM writes the CDS archive as it exits is not waited for:
        it publishes the archive and removes its work directory itself, in the background."""
        proc = getattr(self, "_proc", None)
        publish = self._archive.publish() if self._archive is not None else None
        background = False
        if proc is not None and proc.poll() is None:
            stop: dict[str, Any] = {"op": "stop"}
            if publish is not None:
                stop.update(archive=publish, remove=str(self.dir))
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(stop) + "\n")
                proc.stdin.close()
                background = publish is not None
            if not background:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if background:
            _tell("archive")
        with contextlib.suppress(OSError):
            self._log.close()
        if not background:
            shutil.rmtree(self.dir, ignore_errors=True)


def work_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def child_env(python: str, foreign: bool) -> dict[str, str]:
    """The child's environment: this one, without a parent's Spark submit arguments; for
    `foreign` (another interpreter) nothing of ours may leak into its PySpark."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_SUBMIT", "SPARK_HOME"))}
    if foreign:
        env = {k: v for k, v in env.items() if not k.startswith(("SPARK_", "PYSPARK_", "_PYSPARK"))
               and k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({"PYSPARK_PYTHON": python, "SPARK_LOCAL_IP": env.get("SPARK_LOCAL_IP", "127.0.0.1")})
    return env


class Pool:
    """Children by key, started ahead (`prestart`) or on first use (`get`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the three maps below
        self._children: dict[str, SparkChild] = {}
        self._starting: dict[str, threading.Thread] = {}
        self._failed: dict[str, BaseException] = {}

    def _start(self, key: str, start: Callable[[], SparkChild]) -> None:
        try:
            child = start()
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that needs the child
            with self._lock:
                self._failed[key] = exc
            return
        with self._lock:
            self._children[key] = child

    def prestart(self, key: str, start: Callable[[], SparkChild]) -> None:
        """Start the child in the background: Spark's start-up overlaps the caller's other work."""
        with self._lock:
            if key in self._children or key in self._starting:
                return
            self._failed.pop(key, None)
            thread = threading.Thread(target=self._start, args=(key, start), name="viewsync-spark-start",
                                      daemon=True)
            self._starting[key] = thread
        thread.start()

    def get(self, key: str, start: Callable[[], SparkChild]) -> SparkChild:
        """The child for `key`, started now unless started ahead; raises what its start raised
        (no Java, no PySpark...)."""
        with self._lock:
            thread = self._starting.pop(key, None)
        if thread is not None:
            thread.join()
        with self._lock:
            failed = self._failed.pop(key, None)
            if failed is not None:
                raise failed
            child = self._children.get(key)
            if child is None or not child.alive():
                child = start()
                self._children[key] = child
            return child

    def close(self) -> None:
        """Stop every child of the pool."""
        with self._lock:
            children, self._children = list(self._children.values()), {}
        for child in children:
            child.close()


def _is_an_engine(child: SparkChild) -> Engine:
    return child  # mypy checks that a Spark child is an Engine (reconciler.core.engine)
