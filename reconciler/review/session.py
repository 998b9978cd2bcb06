"""Starting, speaking to and stopping the review's Spark process (see worker.py).

One process per distinct Spark conf, reused by every review of the process (the tests run
many commands in one process); stopped at exit. It is never the verifier's process: that one
holds a scratch catalog, this one the live catalogs.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from reconciler.core.errors import UserError
from reconciler.verify.session import (
    INSTALL_JAVA,
    INSTALL_PYSPARK,
    JsonLineChild,
    SparkUnavailable,
    _java,
    _pyspark_dir,
)

WORKER = Path(__file__).with_name("worker.py")
Progress = Callable[[dict[str, Any]], None]


class SparkError(UserError):
    """Spark refused a review query (analysis or runtime error); the message is Spark's."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error
        super().__init__(f"[{error.get('class')}] {error.get('message')}")


class LiveSpark(JsonLineChild):
    """One worker process holding one Spark session on the live catalogs."""

    def __init__(self, conf: dict[str, str], python: str | None = None, work: Path | None = None) -> None:
        if python is None and _pyspark_dir() is None:
            raise SparkUnavailable(f"data review needs PySpark: {INSTALL_PYSPARK}")
        _java()
        self.dir = work or Path(tempfile.mkdtemp(prefix="viewsync-review-"))
        self.jvm_pid: int | None = None
        self.spark_version = ""
        self._lock = threading.Lock()
        self._log: IO[bytes] = open(self.dir / "spark.log", "wb")  # noqa: SIM115 - closed in close()
        exe = python or sys.executable
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_SUBMIT", "SPARK_HOME"))}
        if python is not None:  # another interpreter: nothing of ours may leak into its PySpark
            env = {k: v for k, v in env.items() if not k.startswith(("SPARK_", "PYSPARK_", "_PYSPARK"))
                   and k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update({"PYSPARK_PYTHON": exe, "SPARK_LOCAL_IP": env.get("SPARK_LOCAL_IP", "127.0.0.1")})
        started = time.monotonic()
        try:
            self._proc = subprocess.Popen([exe, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._log, cwd=self.dir, env=env, text=True, encoding="utf-8")
        except OSError as exc:
            self._log.close()
            raise SparkUnavailable(f"spark.live.python {exe!r} cannot run: {exc.strerror or exc}") from None
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(conf) + "\n")
        self._proc.stdin.flush()
        hello = self._read()
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self._log_tail()
            self.close()
            if "JAVA_GATEWAY_EXITED" in detail or "Java gateway" in detail:
                detail += f" ({INSTALL_JAVA})"
            last = detail.strip().splitlines()[-1] if detail.strip() else "?"
            raise SparkUnavailable(f"the review's Spark could not start: {last}")
        self.jvm_pid = hello.get("pid")
        self.spark_version = str(hello.get("spark", ""))
        self.start_seconds = time.monotonic() - started

    def call(self, request: dict[str, Any], progress: Progress | None = None) -> dict[str, Any]:
        """Send one request; progress lines go to `progress`; returns the answer.
        Raises SparkError for Spark's own errors, SparkUnavailable when the process died."""
        with self._lock:
            if self._proc.poll() is not None or self._proc.stdin is None:
                raise SparkUnavailable("the review's Spark stopped unexpectedly")
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            while True:
                answer = self._read()
                if answer is None:
                    raise SparkUnavailable("the review's Spark stopped unexpectedly: "
                                           + (self._log_tail().strip().splitlines() or ["?"])[-1])
                if "progress" in answer:
                    if progress is not None:
                        progress(answer["progress"])
                    continue
                break
        if "fatal" in answer:
            raise UserError(f"the review's Spark failed: {answer['fatal']}")
        if "error" in answer:
            raise SparkError(answer["error"])
        return answer

    def register(self, name: str, source: dict[str, Any]) -> list[dict[str, Any]]:
        """Register a temporary view of the session; returns its schema."""
        schema: list[dict[str, Any]] = self.call({"op": "register", "name": name, "source": source})["schema"]
        return schema

    def observe(self, name: str, sql: str, metrics: list[str]) -> list[dict[str, Any]]:
        """Register `name` as the rows of `sql` with `metrics` (aggregates, `<expr> AS <name>`)
        observed: a later `query_observed` reading it gets them from the same pass."""
        schema: list[dict[str, Any]] = self.call({"op": "observe", "name": name, "sql": sql,
                                                  "metrics": metrics})["schema"]
        return schema

    def query(self, sql: str, limit: int = 10000, progress: Progress | None = None,
              exact: bool = False) -> list[dict[str, Any]]:
        """Rows of `sql` (at most `limit`) as dicts by column name (`exact`: decimals as text)."""
        return self.query_observed(sql, limit, progress, exact)[0]

    def query_observed(self, sql: str, limit: int = 10000, progress: Progress | None = None, exact: bool = False
                       ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """Rows of `sql` (at most `limit`) as dicts by column name, and the metrics of every
        observed relation (see `observe`) it read, by the relation's name (decimals in the
        metrics, and in the rows when `exact`, as text: exact)."""
        answer = self.call({"op": "query", "sql": sql, "limit": limit, **({"exact": True} if exact else {})},
                           progress)
        cols = answer["columns"]
        return [dict(zip(cols, row, strict=True)) for row in answer["rows"]], dict(answer.get("observed") or {})

    def fresh(self) -> None:
        """Start a review on current data: nothing an earlier review cached is reused."""
        self.call({"op": "fresh"})

    def drop(self, names: list[str]) -> None:
        if names:
            self.call({"op": "drop", "names": names})

    def alive(self) -> bool:
        return self._proc.poll() is None


class Pool:
    """Review sessions by conf, kept for the process (a JVM takes seconds to start)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, LiveSpark] = {}

    def get(self, conf: dict[str, str], python: str | None = None, work: Path | None = None) -> LiveSpark:
        key = hashlib.sha256(json.dumps([conf, python], sort_keys=True).encode()).hexdigest()
        with self._lock:
            s = self._sessions.get(key)
            if s is None or not s.alive():
                s = LiveSpark(conf, python, work)
                self._sessions[key] = s
            return s

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.close()


_WORK: list[Path] = []


def work_dir() -> Path:
    """The process's scratch directory for the review's Spark (temp files, resources); the
    same for every review of the process, so its conf (and its Spark) can be reused."""
    if not _WORK:
        _WORK.append(Path(tempfile.mkdtemp(prefix="viewsync-review-work-")))
    return _WORK[0]


PROCESS = Pool()


def _shutdown() -> None:
    PROCESS.close()
    for d in _WORK:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_shutdown)
