"""Our side of a Flink child process (its side: serve.py): start it with the Flink venv's
interpreter, send requests and read answers one JSON object per line, map Flink's refusals to
`FlinkError`, stop. A `FlinkChild` is an `Engine` (reconciler.core.engine).

PyFlink is not a dependency of viewsync (about 850 MB with its JVM jars and Apache Beam): it
lives in its own virtual environment, named by the caller (`python`).
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
from pathlib import Path
from typing import IO, Any

from reconciler.core.engine import Engine, OnProgress
from reconciler.core.errors import UserError

SERVE = Path(__file__).with_name("serve.py")
INSTALL = "python3 -m venv VENV && VENV/bin/pip install apache-flink==2.3.0 (needs Java 11 or 17)"
# C1 only: a test run's queries are small and many; the JIT's second tier costs more than it wins.
JVM_ARGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx1g"


class FlinkUnavailable(UserError):
    """Flink cannot run here (no such interpreter, no PyFlink, no Java), or the child died."""


class FlinkError(UserError):
    """Flink refused a request; `error` says what and where ({"class", "message", "in", "line"?...})."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error
        where = f" at line {error['line']}, column {error['column']}" if "line" in error else ""
        super().__init__(f"[{error.get('class')}]{where} {error.get('message')}")


class FlinkChild:
    """One PyFlink child process holding one batch TableEnvironment."""

    def __init__(self, python: str, conf: dict[str, str] | None = None) -> None:
        self.jvm_pid: int | None = None
        self.flink_version = ""
        self._lock = threading.Lock()
        self.dir = Path(tempfile.mkdtemp(prefix="viewsync-flink-"))
        self._log: IO[bytes] = open(self.dir / "flink.log", "wb")  # noqa: SIM115 - closed in close()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "FLINK_HOME")}
        env["JVM_ARGS"] = env.get("VIEWSYNC_FLINK_JVM_ARGS", JVM_ARGS)
        started = time.monotonic()
        try:
            self._proc = subprocess.Popen([python, str(SERVE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._log, cwd=self.dir, env=env, text=True, encoding="utf-8")
        except OSError as exc:
            self._log.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise FlinkUnavailable(f"{python!r} cannot run: {exc.strerror or exc}; install PyFlink: {INSTALL}") \
                from None
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(conf or {}) + "\n")
        self._proc.stdin.flush()
        hello = self._read()
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self._log_tail()
            self.close()
            last = detail.strip().splitlines()[-1] if detail.strip() else "?"
            if "No module named 'pyflink'" in detail:
                last += f"; install PyFlink: {INSTALL}"
            raise FlinkUnavailable(f"Flink could not start: {last}")
        self.jvm_pid = hello.get("pid")
        self.flink_version = str(hello.get("flink", ""))
        self.start_seconds = time.monotonic() - started

    def call(self, request: dict[str, Any], progress: OnProgress | None = None) -> dict[str, Any]:
        """One request's answer. Raises FlinkError for Flink's refusal (with its place),
        UserError for a malformed request, FlinkUnavailable when the child died."""
        with self._lock:
            if self._proc.poll() is not None or self._proc.stdin is None:
                raise FlinkUnavailable("the Flink child stopped unexpectedly")
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            answer = self._read()
        if answer is None:
            raise FlinkUnavailable("the Flink child stopped unexpectedly: "
                                   + (self._log_tail().strip().splitlines() or ["?"])[-1])
        if "fatal" in answer:
            raise UserError(f"Flink failed: {answer['fatal']}")
        if "error" in answer:
            raise FlinkError(answer["error"])
        return answer

    def query(self, sql: str, relations: list[dict[str, Any]] | None = None, catalog: str | None = None,
              database: str | None = None) -> dict[str, Any]:
        """Run `sql` with `relations` ({"path": [catalog?, database?, name], "sql"}) registered as
        temporary views for this request only; the SQL's unqualified names resolve in `catalog`.`database`."""
        return self.call({"op": "query", "sql": sql, "relations": relations or [], "catalog": catalog,
                          "database": database})

    def peak_rss_mb(self) -> float | None:
        """The JVM's peak resident memory (Linux), for the benchmarks."""
        if self.jvm_pid is None:
            return None
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.jvm_pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
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
            return (self.dir / "flink.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

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
        with contextlib.suppress(OSError):
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _is_an_engine(child: FlinkChild) -> Engine:
    return child  # mypy checks that a Flink child is an Engine (reconciler.core.engine)
