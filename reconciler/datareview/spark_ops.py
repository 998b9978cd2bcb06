"""Data review's operations in its Spark child (reconciler/spark/serve.py), a session pointed at the
LIVE catalogs (the Hive Metastore as Spark's session catalog, Iceberg's SparkCatalog, JDBC
databases through Spark's JDBC source, a managed catalog's tables as the files sources/ locates)
and answers read-only jobs.

It is never the verifier's child (verify/spark_ops.py), whose session has a throwaway in-memory
catalog: the verifier must never share a session that points at a live metastore. This file
imports only the standard library and PySpark, and is loaded by its path: `spark.live.python`
may be another interpreter (a venv whose PySpark matches the configured jars).

Read-only by construction: every relation is registered as a temporary view of this session
only, and every SQL text is wrapped as a subquery (`SELECT * FROM (<sql>)`), so a statement
that is not a query cannot parse; JDBC sessions start with a read-only transaction setting.

Requests (while a query runs, progress lines come before its answer):
    {"op": "register", "name", "source": {"kind": "sql", "sql", "use": [part, ...]} |
                                         {"kind": "jdbc", "url", "query", "options": {...}} |
                                         {"kind": "file", "location", "format", "options": {...},
                                          "schema": StructType JSON | null}
                                         (any with "columns": [names] to rename the result, and
                                         "inputs": [{"name", "source"}, ...], temporary views
                                         registered first, in order, for its SQL to read)}
        -> {"schema": [{"name", "type", "numeric"}]} | {"error": {"class", "message"}}
    {"op": "observe", "name", "sql", "metrics": ["<aggregate> AS <name>", ...]}
        -> {"schema": [...]} | {"error": ...}   (`name`: a temporary view of the query whose
        aggregates are observed metrics, computed while a later query reads it)
    {"op": "query", "sql", "limit", "exact"?} -> {"columns": [...], "rows": [[...]],
                                        "observed": {name: {metric: value}}} | {"error": ...}
        (decimals as text in "observed", and in "rows" with "exact": true)
    {"op": "drop", "names": [...]} -> {"dropped": n}
    {"op": "fresh"} -> {"fresh": true}   (forget cached relations and file listings)
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from typing import Any

_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "byte", "short", "long",
            "integer")



def handlers(child: Any) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    live = Live(child)
    return {"register": lambda r: live.register(r["name"], r["source"]),
            "observe": lambda r: live.observe(r["name"], r["sql"], list(r["metrics"])),
            "query": lambda r: live.query(r["sql"], int(r.get("limit", 1000)), bool(r.get("exact"))),
            "fresh": lambda r: live.fresh(),
            "drop": lambda r: live.drop(r["names"])}


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


class Live:
    def __init__(self, child: Any) -> None:
        self.child = child
        self.spark = child.spark
        self.observed: set[str] = set()  # temporary views with observed metrics
        self.errors: tuple[type[BaseException], ...] = child.errors + child.java_errors

    def _use(self, parts: list[str]) -> None:
        if parts:
            self.spark.sql("USE " + ".".join("`" + p.replace("`", "``") + "`" for p in parts))

    def register(self, name: str, source: dict[str, Any]) -> dict[str, Any]:
        try:
            for item in source.get("inputs") or []:
                self._frame(item["source"]).createOrReplaceTempView(item["name"])
            df = self._frame(source)
            df.createOrReplaceTempView(name)
            return {"schema": _schema(df)}
        except self.errors as exc:
            return {"error": self.child.error(exc)}

    def _frame(self, source: dict[str, Any]) -> Any:
        if source["kind"] == "jdbc":
            reader = self.spark.read.format("jdbc").option("url", source["url"])
            for key, value in (source.get("options") or {}).items():
                reader = reader.option(key, value)
            df = reader.option("query", source["query"]).load()
        elif source["kind"] == "file":  # reading files writes nothing
            from pyspark.sql.types import StructType

            reader = self.spark.read.format(source["format"])
            for key, value in (source.get("options") or {}).items():
                reader = reader.option(key, value)
            if source.get("schema"):
                reader = reader.schema(StructType.fromJson(source["schema"]))
            df = reader.load(source["location"])
        else:
            self._use(source.get("use") or [])
            sql = source["sql"].strip().rstrip(";")
            df = self.spark.sql(f"SELECT * FROM (\n{sql}\n) AS `__vs_q`")
        names = source.get("columns")
        if names and len(names) == len(df.columns):  # the view's declared names, as the view shows them
            df = df.toDF(*names)
        return df

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
            return {"error": self.child.error(exc)}

    def query(self, sql: str, limit: int, exact: bool = False) -> dict[str, Any]:
        value = _exact if exact else _plain
        try:
            with self.child.stage_progress():
                df = self.spark.sql(sql)
                run = df.limit(limit) if limit >= 0 else df
                rows = run.collect()
            return {"columns": df.columns, "rows": [[value(v) for v in r] for r in rows],
                    "observed": self._observed(run)}
        except self.errors as exc:
            return {"error": self.child.error(exc)}

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
