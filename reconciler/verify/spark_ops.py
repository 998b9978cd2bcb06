"""The verifier's operations in its Spark child (reconciler/spark/serve.py): a scratch, in-memory
catalog where every job stubs the tables its views read and creates the views, as apply will.

It runs in a child process because a Python process holds at most one SparkContext, whose
catalog kind is fixed at start: the verifier must never share a session that may point at a live
metastore. Standard library and PySpark only.

    {"op": "check", "stubs": [{"db", "name", "schema"}], "views": [{"key", "db", "name", "use", "sql",
     "columns": [names] | null, "deps": [keys]}], "threads": N (default 1)}
    -> {"results": [{"key", "status": "ok"|"error"|"not_checked", "schema", "error", "blocked_by"}],
        "stub_errors": [...]}

A view's SQL is analysed only once Spark's parser reads it as a query (`analysed`): spark.sql
would run any other statement.

Every job starts from an empty catalog. A view no other view of the job reads is created only
where its analysed output cannot show that CREATE VIEW would accept it (see `_creation_needed`):
CREATE VIEW parses and analyses the SQL a second time and was a third of the job's time.

With "threads": N > 1 in the job, views are analysed ahead on N other threads, each with a session
of its own over the same catalog (see `Ahead`), while this thread takes the views in the job's
order as before, so every result is what the views taken one by one give.
"""

from __future__ import annotations

import json
import queue
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


def handlers(child: Any) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    return {"check": Scratch(child).job}


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
# Output types whose views Spark may refuse (or store differently) at CREATE VIEW: created as before.
_UNSURE_TYPES = ("void", "interval", "collat", "variant", "char", "null")


def _creation_needed(v: dict[str, Any], fields: list[dict[str, Any]], taken: set[tuple[str, str]]) -> bool:
    """Whether only CREATE VIEW can tell if Spark accepts this view. What it checks beyond analysis
    and can be read off the analysed output: no two output (or declared) names equal ignoring
    case (COLUMN_ALREADY_EXISTS), every expression aliased (checked before this), a name Spark
    stores as it is, and no table or view of that name yet. Anything less plain is created."""
    if (v["db"].lower(), v["name"].lower()) in taken:
        return True
    if not (_PLAIN_NAME.fullmatch(v["db"]) and _PLAIN_NAME.fullmatch(v["name"])):
        return True
    for names in ([str(f["name"]) for f in fields], v.get("columns") or []):
        if len({n.lower() for n in names}) != len(names):
            return True
    types = json.dumps([f.get("type") for f in fields]).lower()
    return any(t in types for t in _UNSURE_TYPES)


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class NotAQuery(Exception):
    """A view's SQL that Spark reads as another statement: never run."""

    def __init__(self, statement: str) -> None:
        super().__init__(statement)
        self.error = {"class": "NOT_A_QUERY", "message": (
            f"[NOT_A_QUERY] Spark reads this SQL as another statement ({statement}), not a query (a view is "
            "one SELECT, WITH or VALUES query): not analysed, since Spark would run it")}


def analysed(spark: Any, sql: str) -> list[dict[str, Any]]:
    """The output fields of the query `sql`, analysed in `spark`'s current database.

    spark.sql runs any statement as it reads it: a view file's INSERT OVERWRITE DIRECTORY, ADD JAR
    or CREATE TABLE ... LOCATION would write files or load code on the machine that verifies a pull
    request. So Spark's own parser first reads the text as one query (or, for a final semicolon,
    as the body of a CREATE VIEW, as apply will store it); only then is it analysed.

    Raises:
        NotAQuery: Spark reads the text as another statement.
        pyspark's ParseException: Spark cannot read it at all (its error, as spark.sql gives it).
    """
    parser = spark._jsparkSession.sessionState().sqlParser()
    if not (_parses(parser.parseQuery, sql) or _parses(parser.parsePlan, f"CREATE VIEW `__viewsync_query` AS\n{sql}")):
        statement = parser.parsePlan(sql)  # raises Spark's own error for SQL that is no statement
        raise NotAQuery(str(statement.nodeName()))
    return [f.jsonValue() for f in spark.sql(sql).schema.fields]


def _parses(parse: Callable[[str], Any], text: str) -> bool:
    try:
        parse(text)
        return True
    except Exception:  # noqa: BLE001 - any refusal: the caller asks Spark what the text is
        return False


class Scratch:
    def __init__(self, child: Any) -> None:
        self.spark = child.spark
        self.errors: tuple[type[BaseException], ...] = child.errors
        self._error = child.error
        self.main = _Session(self.spark, "default")  # this thread's session
        self.idle: queue.SimpleQueue[_Session] = queue.SimpleQueue()  # the pools' sessions, between tasks

    def reset(self) -> None:
        for db in self.spark.catalog.listDatabases():
            if db.name != "default":
                self.spark.sql(f"DROP DATABASE {_q(db.name)} CASCADE")
        self.spark.sql("USE default")

    def ensure_db(self, db: str, made: set[str]) -> None:
        if db.lower() not in made:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {_q(db)}")
            made.add(db.lower())

    def stub(self, db: str, name: str, schema: dict[str, Any], spark: Any = None) -> None:
        from pyspark.sql.types import StructType

        spark = spark or self.spark
        ddl = StructType.fromJson(schema)
        jvm_type = spark._jvm.org.apache.spark.sql.types.DataType.fromJson(json.dumps(ddl.jsonValue()))
        cols = jvm_type.toDDL()
        # An external table at a path that does not exist: Spark writes nothing for it.
        spark.sql(f"CREATE TABLE {_q(db)}.{_q(name)} ({cols}) USING parquet "
                  f"LOCATION 'file:/nonexistent/viewsync-stub/{db}/{name}'")

    def job(self, job: dict[str, Any]) -> dict[str, Any]:
        self.reset()
        self.main.current = "default"
        made: set[str] = {"default"}
        self.taken: set[tuple[str, str]] = set()  # tables and views in the scratch catalog
        # views checked without CREATE VIEW, in order, with their analysed fields
        self.uncreated: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        views = job.get("views", [])
        self.read = {d for v in views for d in v.get("deps", [])}
        threads = int(job.get("threads", 1))
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="viewsync-verify") if threads > 1 else None
        try:
            stub_errors = self.stubs(job.get("stubs", []), made, pool)
            failed: dict[str, str] = {}
            ahead = Ahead(self, views, made, failed, pool) if pool is not None else None
            results = []
            for i, v in enumerate(views):
                blocked = [d for d in v.get("deps", []) if d in failed]
                if blocked:
                    failed[v["key"]] = failed[blocked[0]]
                    results.append({"key": v["key"], "status": "not_checked", "blocked_by": failed[blocked[0]]})
                    continue
                res = self.view(v, made, ahead.fields(i) if ahead is not None else None)
                if res["status"] != "ok":
                    failed[v["key"]] = v["key"]
                results.append(res)
            return {"results": results, "stub_errors": stub_errors}
        finally:
            if pool is not None:
                pool.shutdown(wait=True)  # nothing of this job still reads the catalog the next one resets

    def stubs(self, stubs: list[dict[str, Any]], made: set[str], pool: ThreadPoolExecutor | None
              ) -> list[dict[str, Any]]:
        """Create the job's tables (on the pool's threads when there is one); their errors in order.
        Their names differ ignoring case (the verifier's keys are lower-cased), so the order they
        are created in changes nothing."""
        errors: dict[int, dict[str, Any]] = {}
        creating: dict[int, Future[None] | None] = {}
        for i, s in enumerate(stubs):
            try:
                self.ensure_db(s["db"], made)
            except self.errors as exc:
                errors[i] = {"db": s["db"], "name": s["name"], "error": self._error(exc)}
                continue
            creating[i] = pool.submit(self._stub_on_helper, s) if pool is not None else None
        for i, done in creating.items():
            s = stubs[i]
            try:
                if done is not None:
                    try:
                        done.result()
                    except self.errors:
                        raise
                    except Exception:  # noqa: BLE001 - not Spark's answer (no helper session): made here
                        done = None
                if done is None:
                    self.stub(s["db"], s["name"], s["schema"])
                self.taken.add((s["db"].lower(), s["name"].lower()))
            except self.errors as exc:
                errors[i] = {"db": s["db"], "name": s["name"], "error": self._error(exc)}
        return [errors[i] for i in sorted(errors)]

    def _stub_on_helper(self, s: dict[str, Any]) -> None:
        with self.helper() as helper:
            self.stub(s["db"], s["name"], s["schema"], helper.spark)

    def helper(self) -> _Lease:
        """A session of the pool's, for one task: the catalog is this one's, the current database
        its own. Made once per pool thread (kept for the next jobs)."""
        return _Lease(self)

    def view(self, v: dict[str, Any], made: set[str], ahead: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Check one view, after every view before it in the job; `ahead`: its output fields as
        analysed on another thread (None: analysed here, as the views before it left the catalog)."""
        key = v["key"]
        try:
            fields = ahead if ahead is not None else self.analyse(v, made)
        except NotAQuery as exc:
            return {"key": key, "status": "error", "error": exc.error, "phase": "analysis"}
        except self.errors as exc:
            return {"key": key, "status": "error", "error": self._error(exc), "phase": "analysis"}
        unaliased = [f["name"] for f in fields if (f.get("metadata") or {}).get("__autoGeneratedAlias") == "true"]
        if unaliased:
            # What CREATE VIEW says, with the output's schema (which CREATE VIEW would not give).
            return {"key": key, "status": "error", "phase": "create", "schema": fields, "error": {
                "class": "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS",
                "message": f"[CREATE_PERMANENT_VIEW_WITHOUT_ALIAS] Not allowed to create the permanent view "
                           f"`{v['db']}`.`{v['name']}` without explicitly assigning an alias for the expression "
                           f"\"{unaliased[0]}\"."}}
        try:
            self.ensure_db(v["db"], made)
            if key in self.read or _creation_needed(v, fields, self.taken):
                self.create_uncreated_named(v)
                self.create(v, fields)
            else:
                self.uncreated.append((v, fields))
        except self.errors as exc:
            return {"key": key, "status": "error", "error": self._error(exc), "phase": "create", "schema": fields}
        self.taken.add((v["db"].lower(), v["name"].lower()))
        return {"key": key, "status": "ok", "schema": fields}

    def analyse(self, v: dict[str, Any], made: set[str]) -> list[dict[str, Any]]:
        """The view's output fields. Should its SQL name a view checked without CREATE VIEW (a
        reference viewsync did not see), those views are created and it is analysed again."""
        self.ensure_db(v["use"], made)
        self.main.use(v["use"])
        try:
            return analysed(self.spark, v["sql"])
        except self.errors as exc:
            if not self.uncreated or "NOT_FOUND" not in str(self._error(exc).get("class")):
                raise
            pending, self.uncreated = self.uncreated, []
            for u, u_fields in pending:
                self.create(u, u_fields)
            self.main.use(v["use"])
            return analysed(self.spark, v["sql"])

    def create_uncreated_named(self, v: dict[str, Any]) -> None:
        """An earlier view of the same name, checked without CREATE VIEW, is created first: this
        one then meets it in the catalog as before."""
        name = (v["db"].lower(), v["name"].lower())
        same = [p for p in self.uncreated if (p[0]["db"].lower(), p[0]["name"].lower()) == name]
        for p in same:
            self.uncreated.remove(p)
            self.create(*p)

    def create(self, v: dict[str, Any], fields: list[dict[str, Any]]) -> None:
        """CREATE VIEW, as apply will: it runs checks analysis does not (COLUMN_ALREADY_EXISTS,
        the column count...), and views over it resolve."""
        self.main.use(v["use"])  # its unqualified names are its own database's, whatever was analysed last
        names = v.get("columns")
        cols = ""
        if names and len(names) == len(fields):
            cols = " (" + ", ".join(_q(n) for n in names) + ")"
        self.spark.sql(f"CREATE VIEW {_q(v['db'])}.{_q(v['name'])}{cols} AS {v['sql']}")


class _Session:
    """A session over the scratch catalog (the job thread's, or one of the pool's) and its current
    database."""

    def __init__(self, spark: Any, current: str | None = None) -> None:
        self.spark = spark
        self.current = current

    def use(self, db: str) -> None:
        if db.lower() != self.current:  # USE costs a round trip like any statement: skip repeats
            self.spark.sql(f"USE {_q(db)}")
            self.current = db.lower()


class _Lease:
    """`with scratch.helper() as h:` a helper session no other task holds meanwhile."""

    def __init__(self, scratch: Scratch) -> None:
        self.scratch = scratch
        self.helper: _Session | None = None

    def __enter__(self) -> _Session:
        idle: queue.SimpleQueue[_Session] = self.scratch.idle
        try:
            self.helper = idle.get_nowait()
        except queue.Empty:
            from pyspark.sql import SparkSession

            # A clone keeps the session's conf (Spark's variable substitution stays off).
            self.helper = _Session(SparkSession(self.scratch.spark.sparkContext,
                                               self.scratch.spark._jsparkSession.cloneSession()))
        return self.helper

    def __exit__(self, *exc: object) -> None:
        if self.helper is not None:
            self.scratch.idle.put(self.helper)


class Ahead:
    """Views of a job analysed ahead of the job's thread, on a pool's threads.

    The job's thread still takes every view in order; a view analysed ahead brings its output
    fields, a view analysed ahead that failed (or was never sent) is analysed again on the job's
    thread, as before. That gives what the views taken one by one give: a view is sent ahead
    only once the views it reads have been checked, its database made, and the catalog then holds
    part of what it holds when its turn comes (views are only added meanwhile), and analysis that
    succeeds with part of the catalog gives the same output with the whole."""

    WINDOW = 16  # views ahead of the job's thread that may be sent

    def __init__(self, scratch: Scratch, views: list[dict[str, Any]], made: set[str], failed: dict[str, str],
                 pool: ThreadPoolExecutor) -> None:
        self.scratch, self.views, self.made, self.failed, self.pool = scratch, views, made, failed, pool
        position = {v["key"]: i for i, v in enumerate(views)}
        # the positions of the views each view reads (those of this job)
        self.reads = [[position[d] for d in v.get("deps", []) if d in position] for v in views]
        self.sent: dict[int, Future[list[dict[str, Any]] | None]] = {}
        self.waiting: list[int] = []  # in the window, not sent yet
        self.seen = 0  # views that entered the window

    def fields(self, i: int) -> list[dict[str, Any]] | None:
        """View i's output fields if analysed ahead; None: the job's thread analyses it. Called in
        order, when every view before i has been taken; sends the views that became ready."""
        while self.seen < len(self.views) and self.seen <= i + self.WINDOW:
            self.waiting.append(self.seen)
            self.seen += 1
        still = []
        for j in self.waiting:
            if j <= i:
                continue  # its turn came before it was ready: the job's thread analyses it
            if self._ready(j, i):
                self.sent[j] = self.pool.submit(self._analyse, self.views[j])
            else:
                still.append(j)
        self.waiting = still
        future = self.sent.pop(i, None)
        return future.result() if future is not None else None

    def _ready(self, j: int, taken: int) -> bool:
        """Whether view j can be analysed now that the views before position `taken` are checked."""
        v = self.views[j]
        return v["use"].lower() in self.made and all(
            d < taken and self.views[d]["key"] not in self.failed for d in self.reads[j])

    def _analyse(self, v: dict[str, Any]) -> list[dict[str, Any]] | None:
        try:
            with self.scratch.helper() as helper:
                helper.use(v["use"])
                return analysed(helper.spark, v["sql"])
        except Exception:  # noqa: BLE001 - whatever failed ahead is analysed again in order, as before
            return None
