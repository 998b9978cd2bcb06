"""The Spark side of the verifier: a child process that owns one local Spark
session with a throwaway in-memory catalog and answers analysis jobs.

It runs in its own process because a Python process holds at most one
SparkContext, whose catalog kind is fixed at start: the verifier must never
share a session that may point at a live metastore.

Protocol: one JSON object per line on stdin, one answer per line on the
protocol fd. A job is
    {"stubs": [{"db", "name", "schema"}], "views": [{"key", "db", "name", "use", "sql",
     "columns": [names] | null, "deps": [keys]}]}
and its answer {"results": [{"key", "status": "ok"|"error"|"not_checked", "schema",
"error", "blocked_by"}]}. Every job starts from an empty catalog. A view tests' job is {"op": "tests", "queries":
[{"id", "sql"}]} (see Scratch.tests).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import warnings
from typing import Any

_PARSE_POS = re.compile(r"\(line (\d+), pos (\d+)\)")
_ANALYSIS_POS = re.compile(r"; line (\d+) pos (\d+)")


def _session(conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(conf.pop("spark.master", "local[1]")).appName("viewsync-verify")
    for key, value in conf.items():
        builder = builder.config(key, value)
    # Spark rewrites ${env:NAME}, ${system:NAME} and ${conf} in every SQL text by default: a view,
    # fixture value or check of a pull request could print CI secrets. Forced, whatever the conf says.
    builder = builder.config("spark.sql.variable.substitute", "false")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("OFF")
    return session


def _error(exc: BaseException) -> dict[str, Any]:
    """Spark's error class, message and position (0-based offsets, or line/pos)."""
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    condition = get() if get is not None else None
    text = str(exc).strip()
    message = text.split("\n== SQL ==")[0].split(";\n")[0].strip()
    message = _PARSE_POS.sub("", message)
    message = _ANALYSIS_POS.sub("", message).strip()
    out: dict[str, Any] = {"class": condition or type(exc).__name__, "message": message}
    contexts = []
    try:
        contexts = list(exc.getQueryContext())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not every error carries a context
        contexts = []
    for ctx in contexts:
        try:
            out["start"], out["stop"] = int(ctx.startIndex()), int(ctx.stopIndex())
            out["fragment"] = ctx.fragment()
            break
        except Exception:  # noqa: BLE001 - DataFrame contexts have no SQL offsets
            continue
    if "start" not in out:
        m = _PARSE_POS.search(text) or _ANALYSIS_POS.search(text)
        if m:
            out["line"], out["pos"] = int(m.group(1)), int(m.group(2))
    return out


# Tests run tiny inline tables: Spark's machinery for big data costs more than the data. Each
# broadcast join is a job of its own, adaptive execution re-plans every stage, and generated
# code is compiled for every query (on a JVM that only uses its first compiler). Set for the
# tests' queries only, and restored; the literals' escaping relies on the last one.
_TEST_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.parser.escapedStringLiterals": "false",
    "spark.sql.shuffle.partitions": "1",  # one partition per union branch: row positions are the order
    # Every input is one partition, so no join or aggregate needs an exchange: a test's query is
    # one stage. Two things would still shuffle a single partition: an inner join's output is a
    # collection of its sides' partitionings, which the next join does not take as single (one
    # candidate keeps it plain), and joins' size estimates multiply past the single-partition cap.
    "spark.sql.optimizer.expressionProjectionCandidateLimit": "1",
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
    # A CHAR(n) column stays CHAR(n) in the test's result (not a plain string), so the expected
    # values are read as CHAR(n), padded as Spark pads what it reads ("a" is "a  " in CHAR(3)).
    "spark.sql.preserveCharVarcharTypeInfo": "true",
}


TEST_THREADS = 3  # test queries in flight at once (the driver-side work of some overlaps the job of another)


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Scratch:
    def __init__(self, session: Any) -> None:
        self.spark = session
        from pyspark.errors import PySparkException

        self.errors: tuple[type[BaseException], ...] = (PySparkException,)
        self.current = "default"

    def reset(self) -> None:
        for db in self.spark.catalog.listDatabases():
            if db.name != "default":
                self.spark.sql(f"DROP DATABASE {_q(db.name)} CASCADE")
        self.spark.sql("USE default")

    def ensure_db(self, db: str, made: set[str]) -> None:
        if db.lower() not in made:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {_q(db)}")
            made.add(db.lower())

    def stub(self, db: str, name: str, schema: dict[str, Any]) -> None:
        from pyspark.sql.types import StructType

        ddl = StructType.fromJson(schema)
        jvm_type = self.spark._jvm.org.apache.spark.sql.types.DataType.fromJson(json.dumps(ddl.jsonValue()))
        cols = jvm_type.toDDL()
        # An external table at a path that does not exist: Spark writes nothing for it.
        self.spark.sql(f"CREATE TABLE {_q(db)}.{_q(name)} ({cols}) USING parquet "
                       f"LOCATION 'file:/nonexistent/viewsync-stub/{db}/{name}'")

    def use(self, db: str) -> None:
        if db.lower() != self.current:  # USE costs a round trip like any statement: skip repeats
            self.spark.sql(f"USE {_q(db)}")
            self.current = db.lower()

    def job(self, job: dict[str, Any]) -> dict[str, Any]:
        self.reset()
        self.current = "default"
        made: set[str] = {"default"}
        stub_errors = []
        for s in job.get("stubs", []):
            try:
                self.ensure_db(s["db"], made)
                self.stub(s["db"], s["name"], s["schema"])
            except self.errors as exc:
                stub_errors.append({"db": s["db"], "name": s["name"], "error": _error(exc)})
        failed: dict[str, str] = {}
        results = []
        for v in job.get("views", []):
            blocked = [d for d in v.get("deps", []) if d in failed]
            if blocked:
                failed[v["key"]] = failed[blocked[0]]
                results.append({"key": v["key"], "status": "not_checked", "blocked_by": failed[blocked[0]]})
                continue
            res = self.view(v, made)
            if res["status"] != "ok":
                failed[v["key"]] = v["key"]
            results.append(res)
        return {"results": results, "stub_errors": stub_errors}

    def view(self, v: dict[str, Any], made: set[str]) -> dict[str, Any]:
        key = v["key"]
        try:
            self.ensure_db(v["use"], made)
            self.use(v["use"])
            schema = self.spark.sql(v["sql"]).schema
        except self.errors as exc:
            return {"key": key, "status": "error", "error": _error(exc), "phase": "analysis"}
        fields = [f.jsonValue() for f in schema.fields]
        unaliased = [f["name"] for f in fields if (f.get("metadata") or {}).get("__autoGeneratedAlias") == "true"]
        if unaliased:
            # What CREATE VIEW says, with the output's schema (which CREATE VIEW would not give).
            return {"key": key, "status": "error", "phase": "create", "schema": fields, "error": {
                "class": "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS",
                "message": f"[CREATE_PERMANENT_VIEW_WITHOUT_ALIAS] Not allowed to create the permanent view "
                           f"`{v['db']}`.`{v['name']}` without explicitly assigning an alias for the expression "
                           f"\"{unaliased[0]}\"."}}
        # Every view is created, as apply will: CREATE VIEW runs checks analysis does not
        # (COLUMN_ALREADY_EXISTS, the column count...), and views over it resolve.
        names = v.get("columns")
        cols = ""
        if names and len(names) == len(fields):
            cols = " (" + ", ".join(_q(n) for n in names) + ")"
        try:
            self.ensure_db(v["db"], made)
            self.spark.sql(f"CREATE VIEW {_q(v['db'])}.{_q(v['name'])}{cols} AS {v['sql']}")
        except self.errors as exc:
            return {"key": key, "status": "error", "error": _error(exc), "phase": "create", "schema": fields}
        return {"key": key, "status": "ok", "schema": fields}


    def tests(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run view tests' queries (reconciler.viewtests): each {"id", "sql"} answers
        {"id", "schema", "rows"} or {"id", "error"}. The queries read only inline tables."""
        from reconciler.viewtests.values import to_wire

        answers: list[dict[str, Any]] = []
        saved = {k: self.spark.conf.get(k, None) for k in _TEST_CONF}
        for k, v in _TEST_CONF.items():
            self.spark.conf.set(k, v)
        try:
            self._run_tests(request.get("queries", []), answers, to_wire)
        finally:
            for k, old in saved.items():
                if old is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, old)
        return {"answers": answers}

    def _run_tests(self, queries: list[dict[str, Any]], answers: list[dict[str, Any]], to_wire: Any) -> None:
        """TEST_THREADS queries in flight: some are parsed and analysed on the driver while
        another's job runs (each thread its own JVM thread); answers keep the queries' order."""
        from concurrent.futures import ThreadPoolExecutor

        def one(item: dict[str, Any]) -> dict[str, Any]:
            try:
                df = self.spark.sql(item["sql"])
                rows = _collect(df)
                return {"id": item["id"], "schema": [f.jsonValue() for f in df.schema.fields],
                        "rows": [[to_wire(v) for v in r] for r in rows]}
            except self.errors as exc:
                return {"id": item["id"], "error": _error(exc)}
            except Exception as exc:  # noqa: BLE001 - a Py4J or conversion failure is that query's
                return {"id": item["id"], "error": {"class": type(exc).__name__,
                                                    "message": str(exc).splitlines()[0][:2000]}}

        if len(queries) < 2:
            answers.extend(one(q) for q in queries)
            return
        with ThreadPoolExecutor(max_workers=TEST_THREADS, thread_name_prefix="viewsync-tests") as pool:
            answers.extend(pool.map(one, queries))


def _collect(df: Any) -> list[Any]:
    """The rows, with top-level timestamps formatted by Spark in the session's time zone: PySpark's
    own conversion goes through the Python process's local time and fails on year 1."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampNTZType, TimestampType

    stamps = [isinstance(f.dataType, (TimestampType, TimestampNTZType)) for f in df.schema.fields]
    if not any(stamps):
        return list(df.collect())
    cols = [F.date_format(df[i], "yyyy-MM-dd HH:mm:ss.SSSSSS") if stamp else df[i] for i, stamp in enumerate(stamps)]
    return list(df.select(*cols).collect())


def main() -> None:
    # The protocol gets its own fd; anything else printing to stdout (the JVM, py4j) goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    warnings.filterwarnings("ignore")
    # Otherwise every analysis error is logged with a JVM stack trace.
    logging.getLogger("SQLQueryContextLogger").disabled = True
    conf = json.loads(sys.argv[1])
    try:
        scratch = Scratch(_session(conf))
    except Exception as exc:  # noqa: BLE001 - report any start failure as one line
        proto.write(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}) + "\n")
        return
    proto.write(json.dumps({"ready": True, "pid": _jvm_pid(scratch.spark)}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "stop":
            break
        try:
            answer = scratch.tests(request) if request.get("op") == "tests" else scratch.job(request)
        except Exception as exc:  # noqa: BLE001 - the client turns this into one error line
            answer = {"fatal": f"{type(exc).__name__}: {exc}"[:2000]}
        proto.write(json.dumps(answer) + "\n")
    scratch.spark.stop()


def _jvm_pid(session: Any) -> int | None:
    try:
        return int(session._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - only used for memory figures
        return None


if __name__ == "__main__":
    main()
