"""The review's Spark child: one per distinct Spark conf, reused by every review of the process
(the tests run many commands in one process), stopped at exit. It serves review/spark_ops.py in
a session on the live catalogs, never the verifier's child (which holds a scratch catalog).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from reconciler.child.process import command
from reconciler.spark import client
from reconciler.spark import conf as spark_conf
from reconciler.spark.client import SERVE, Launch, Names, OnProgress, Pool, SparkChild, child_env
from reconciler.spark.conf import Archive, install_pyspark
from reconciler.spark.errors import SparkError, SparkUnavailable

__all__ = ["PROCESS", "LiveSpark", "OnProgress", "SparkError", "SparkUnavailable", "live_spark", "work_dir"]

OPS = Path(__file__).with_name("spark_ops.py")
NAMES = Names(child="the review's Spark", failed="the review's Spark failed",
              start_failed="the review's Spark could not start")


class LiveSpark(SparkChild):
    """The review's child, with its requests as methods."""

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

    def query(self, sql: str, limit: int = 10000, progress: OnProgress | None = None,
              exact: bool = False) -> list[dict[str, Any]]:
        """Rows of `sql` (at most `limit`) as dicts by column name (`exact`: decimals as text)."""
        return self.query_observed(sql, limit, progress, exact)[0]

    def query_observed(self, sql: str, limit: int = 10000, progress: OnProgress | None = None, exact: bool = False
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


def live_spark(conf: dict[str, str], python: str | None = None) -> LiveSpark:
    """A new review child on `conf`; `python`: another interpreter to run it (its own PySpark).
    Raises SparkUnavailable."""
    pyspark = spark_conf.pyspark_dir()
    if python is None and pyspark is None:
        raise SparkUnavailable(f"data review needs PySpark: {install_pyspark()}")
    java = spark_conf.java()
    conf = {"spark.app.name": "viewsync-review", **conf}
    archive = None
    if python is None and pyspark is not None:  # another interpreter's Spark jars are not ours to key
        archive = Archive.for_child(java, pyspark, conf.get("spark.driver.extraClassPath", ""))
        if archive is not None:
            flags = conf.get("spark.driver.extraJavaOptions", "")
            conf["spark.driver.extraJavaOptions"] = " ".join([flags, *archive.jvm_flags()]).strip()
    exe = python or sys.executable
    return LiveSpark(Launch(command(exe, str(SERVE), [str(OPS)], by_path=True), conf,
                            child_env(exe, python is not None), client.work_dir("viewsync-review-"), NAMES, archive))


class Sessions:
    """Review children by conf and interpreter, kept for the process."""

    def __init__(self) -> None:
        self._pool = Pool()

    def get(self, conf: dict[str, str], python: str | None = None) -> LiveSpark:
        key = hashlib.sha256(json.dumps([conf, python], sort_keys=True).encode()).hexdigest()
        child = self._pool.get(key, lambda: live_spark(conf, python))
        assert isinstance(child, LiveSpark)
        return child

    def close(self) -> None:
        self._pool.close()


PROCESS = Sessions()
_WORK: list[Path] = []


def work_dir() -> Path:
    """The process's scratch directory for the review's Spark (temp files, resources); the
    same for every review of the process, so its conf (and its Spark) can be reused."""
    if not _WORK:
        _WORK.append(client.work_dir("viewsync-review-work-"))
    return _WORK[0]


def _shutdown() -> None:
    PROCESS.close()
    for d in _WORK:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_shutdown)
