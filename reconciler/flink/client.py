"""Our side of a Flink child process (its side: serve.py, served by reconciler.child.serve): the
child process (reconciler.child.process) started with the Flink venv's interpreter, Flink's
refusals as `FlinkError`. A `FlinkChild` is an `Engine` (reconciler.core.engine).

PyFlink is not a dependency of viewsync (about 850 MB with its JVM jars and Apache Beam): it
lives in its own virtual environment, named by the caller (`python`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from reconciler.child.process import ChildProcess, Names, command
from reconciler.core.engine import Engine
from reconciler.core.errors import UserError

SERVE = Path(__file__).with_name("serve.py")  # the engine module a Flink child serves
APACHE_FLINK = "apache-flink==2.3.0"  # the release viewsync runs and tests (Python 3.9 to 3.12, Java 11 or 17)
INSTALL = f"python3 -m venv VENV && VENV/bin/pip install {APACHE_FLINK} (needs Java 11 or 17)"
# C1 only: a test run's queries are small and many; the JIT's second tier costs more than it wins.
JVM_ARGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx1g"
NAMES = Names(child="the Flink child", failed="Flink failed", start_failed="Flink could not start")


class FlinkUnavailable(UserError):
    """Flink cannot run here (no such interpreter, no PyFlink, no Java), or the child died."""


class FlinkError(UserError):
    """Flink refused a request; `error` says what and where ({"class", "message", "in", "line"?...})."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error
        where = f" at line {error['line']}, column {error['column']}" if "line" in error else ""
        super().__init__(f"[{error.get('class')}]{where} {error.get('message')}")


class FlinkChild(ChildProcess):
    """One PyFlink child process holding one batch TableEnvironment."""

    log_name = "flink.log"
    unavailable = FlinkUnavailable

    def __init__(self, python: str, conf: dict[str, str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "FLINK_HOME")}
        env["JVM_ARGS"] = env.get("VIEWSYNC_FLINK_JVM_ARGS", JVM_ARGS)
        super().__init__(command(python, str(SERVE), by_path=True), conf or {}, env,
                         Path(tempfile.mkdtemp(prefix="viewsync-flink-")), NAMES)
        self.flink_version = str(self.hello.get("flink", ""))

    def refused(self, error: dict[str, Any]) -> UserError:
        return FlinkError(error)

    def start_failure(self, detail: str, spawned: bool) -> str:
        last = super().start_failure(detail, spawned)
        if not spawned or "No module named 'pyflink'" in detail:
            last += f"; install PyFlink: {INSTALL}"
        return last

    def query(self, sql: str, relations: list[dict[str, Any]] | None = None, catalog: str | None = None,
              database: str | None = None) -> dict[str, Any]:
        """Run `sql` with `relations` ({"path": [catalog?, database?, name], "sql"}) registered as
        temporary views for this request only; the SQL's unqualified names resolve in `catalog`.`database`."""
        return self.call({"op": "query", "sql": sql, "relations": relations or [], "catalog": catalog,
                          "database": database})


def _is_an_engine(child: FlinkChild) -> Engine:
    return child  # mypy checks that a Flink child is an Engine (reconciler.core.engine)
