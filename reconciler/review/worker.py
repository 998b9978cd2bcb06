"""The Spark side of data review: a child process that owns one Spark session pointed at the
LIVE catalogs (the Hive Metastore as Spark's session catalog, Iceberg's SparkCatalog, JDBC
databases through Spark's JDBC source) and answers read-only jobs.

It is not the verifier's worker (reconciler/verify/worker.py), whose session has a throwaway
in-memory catalog: the verifier must never share a session that points at a live metastore.
This file imports only the standard library and PySpark, and is run by its path: `spark.live.
python` may be another interpreter (a venv whose PySpark matches the configured jars).

Read-only by construction: every relation is registered as a temporary view of this session
only, and every SQL text is wrapped as a subquery (`SELECT * FROM (<sql>)`), so a statement
that is not a query cannot parse; JDBC sessions start with a read-only transaction setting.

Protocol: one JSON object per line on stdin, one answer per line on the protocol fd; while a
job runs, progress lines {"progress": {...}} may come before its answer. Requests:
    {"op": "register", "name", "source": {"kind": "sql", "sql", "use": [part, ...]} |
                                         {"kind": "jdbc", "url", "query", "options": {...}}
                                         (either with "columns": [names] to rename the result)}
        -> {"schema": [{"name", "type", "numeric"}]} | {"error": {"class", "message"}}
    {"op": "observe", "name", "sql", "metrics": ["<aggregate> AS <name>", ...]}
        -> {"schema": [...]} | {"error": ...}   (`name`: a temporary view of the query whose
        aggregates are observed metrics, computed while a later query reads it)
    {"op": "query", "sql", "limit", "exact"?} -> {"columns": [...], "rows": [[...]],
                                        "observed": {name: {metric: value}}} | {"error": ...}
        (decimals as text in "observed", and in "rows" with "exact": true)
    {"op": "drop", "names": [...]} -> {"dropped": n}
    {"op": "fresh"} -> {"fresh": true}   (forget cached relations and file listings)
    {"op": "stop"}
"""

from __future__ import annotations

import datetime
import decimal
import json
import logging
import os
import sys
import threading
import warnings
from typing import Any

_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "byte", "short", "long",
            "integer")


def _session(conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(conf.pop("spark.master", "local[1]")).appName("viewsync-review")
    for key, value in conf.items():
        builder = builder.config(key, value)
    # Spark rewrites ${env:NAME}, ${system:NAME} and ${conf} in every SQL text by default: a view,
    # fixture value or check of a pull request could print CI secrets. Forced, whatever the conf says.
    builder = builder.config("spark.sql.variable.substitute", "false")
    if conf.get("spark.sql.catalogImplementation") == "hive":
        builder = builder.enableHiveSupport()
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    return session


def _error(exc: BaseException) -> dict[str, Any]:
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        condition = get() if get is not None else None
    except Exception:  # noqa: BLE001 - older PySpark
        condition = None
    text = str(exc).strip()
    message = text.split("\n== SQL")[0].split("\nJVM stacktrace")[0].split("\n\tat ")[0].strip()
    if message.startswith("An error occurred while calling") and "\n: " in message:  # py4j's wrapper
        message = message.split("\n: ", 1)[1]
        message = message.split(": ", 1)[1] if message.startswith("org.apache.spark.SparkException") else message
    return {"class": condition or type(exc).__name__, "message": message[:1500]}


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if hasattr(value, "asDict"):
            return {k: _plain(v) for k, v in value.asDict().items()}
        return [_plain(v) for v in value]
    return str(value)


def _exact(value: Any) -> Any:
    """As `_plain`, but a decimal as its exact text (sums the client divides exactly)."""
    return str(value) if isinstance(value, decimal.Decimal) else _plain(value)


def _schema(df: Any) -> list[dict[str, Any]]:
    out = []
    for f in df.schema.fields:
        t = f.dataType.simpleString()
        out.append({"name": f.name, "type": t, "numeric": t.split("(")[0] in _NUMERIC})
    return out


class Progress:
    """Spark's active stages, reported on the protocol fd every half second while a job runs."""

    def __init__(self, spark: Any, write: Any) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.write = write
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        last = None
        while not self._stop.wait(0.5):
            try:
                stages = []
                for sid in self.tracker.getActiveStageIds():
                    info = self.tracker.getStageInfo(sid)
                    if info is not None:
                        stages.append({"stage": sid, "done": info.numCompletedTasks, "total": info.numTasks})
            except Exception:  # noqa: BLE001 - progress is best effort
                continue
            if stages and stages != last:
                last = stages
                self.write({"progress": {"stages": stages}})


class Live:
    def __init__(self, spark: Any, write: Any) -> None:
        self.spark = spark
        self.write = write
        self.observed: set[str] = set()  # temporary views with observed metrics
        from pyspark.errors import PySparkException

        self.errors: tuple[type[BaseException], ...] = (PySparkException,)
        try:
            from py4j.protocol import Py4JJavaError

            self.errors += (Py4JJavaError,)
        except ImportError:
            pass

    def _use(self, parts: list[str]) -> None:
        if parts:
            self.spark.sql("USE " + ".".join("`" + p.replace("`", "``") + "`" for p in parts))

    def register(self, name: str, source: dict[str, Any]) -> dict[str, Any]:
        try:
            if source["kind"] == "jdbc":
                reader = self.spark.read.format("jdbc").option("url", source["url"])
                for key, value in (source.get("options") or {}).items():
                    reader = reader.option(key, value)
                df = reader.option("query", source["query"]).load()
            else:
                self._use(source.get("use") or [])
                sql = source["sql"].strip().rstrip(";")
                df = self.spark.sql(f"SELECT * FROM (\n{sql}\n) AS `__vs_q`")
            names = source.get("columns")
            if names and len(names) == len(df.columns):  # the view's declared names, as the view shows them
                df = df.toDF(*names)
            df.createOrReplaceTempView(name)
            return {"schema": _schema(df)}
        except self.errors as exc:
            return {"error": _error(exc)}

    def observe(self, name: str, sql: str, metrics: list[str]) -> dict[str, Any]:
        """Register `name` as `sql` with `metrics` observed (Dataset.observe, Spark >= 3.3): the
        query that reads it computes them in the same pass, on a cluster too (accumulators)."""
        from pyspark.sql import functions

        try:
            df = self.spark.sql(sql)
            df.observe(name, *[functions.expr(m) for m in metrics]).createOrReplaceTempView(name)
            self.observed.add(name)
            return {"schema": _schema(df)}
        except self.errors as exc:
            return {"error": _error(exc)}

    def query(self, sql: str, limit: int, exact: bool = False) -> dict[str, Any]:
        value = _exact if exact else _plain
        try:
            with Progress(self.spark, self.write):
                df = self.spark.sql(sql)
                run = df.limit(limit) if limit >= 0 else df
                rows = run.collect()
            return {"columns": df.columns, "rows": [[value(v) for v in r] for r in rows],
                    "observed": self._observed(run)}
        except self.errors as exc:
            return {"error": _error(exc)}

    def _observed(self, df: Any) -> dict[str, dict[str, Any]]:
        """The metrics of the observed relations the query `df` ran read, from its executed plan
        (Spark's QueryExecution.observedMetrics: no listener, nothing to wait for)."""
        if not self.observed:
            return {}
        metrics = df._jdf.queryExecution().observedMetrics()
        out: dict[str, dict[str, Any]] = {}
        for name in self.observed:
            found = metrics.get(name)
            if found.isDefined():
                row = found.get()
                out[name] = {f: _exact(row.get(i)) for i, f in enumerate(row.schema().fieldNames())}
        return out

    def fresh(self) -> dict[str, Any]:
        """Forget what earlier reviews cached (table relations, file listings): live data moves."""
        self.spark.catalog.clearCache()
        self.spark._jsparkSession.sessionState().catalog().invalidateAllCachedTables()
        return {"fresh": True}

    def drop(self, names: list[str]) -> dict[str, Any]:
        for n in names:
            self.spark.catalog.dropTempView(n)
            self.observed.discard(n)
        return {"dropped": len(names)}


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    warnings.filterwarnings("ignore")
    logging.getLogger("SQLQueryContextLogger").disabled = True
    lock = threading.Lock()

    def write(obj: dict[str, Any]) -> None:
        with lock:
            proto.write(json.dumps(obj, default=str) + "\n")

    conf = json.loads(sys.stdin.readline())  # on stdin, not argv: it may hold credentials
    try:
        spark = _session(conf)
        live = Live(spark, write)
    except Exception as exc:  # noqa: BLE001 - any start failure is one line for the client
        write({"ready": False, "error": f"{type(exc).__name__}: {exc}"[:2000]})
        return
    write({"ready": True, "pid": _jvm_pid(spark), "spark": spark.version})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "stop":
            break
        try:
            if op == "register":
                answer = live.register(req["name"], req["source"])
            elif op == "observe":
                answer = live.observe(req["name"], req["sql"], list(req["metrics"]))
            elif op == "query":
                answer = live.query(req["sql"], int(req.get("limit", 1000)), bool(req.get("exact")))
            elif op == "fresh":
                answer = live.fresh()
            elif op == "drop":
                answer = live.drop(req["names"])
            else:
                answer = {"fatal": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - the client turns this into one error line
            answer = {"fatal": f"{type(exc).__name__}: {exc}"[:2000]}
        write(answer)
    spark.stop()


def _jvm_pid(session: Any) -> int | None:
    try:
        return int(session._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - only used for memory figures
        return None


if __name__ == "__main__":
    main()
