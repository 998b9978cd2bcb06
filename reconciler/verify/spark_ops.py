"""The verifier's operations in its Spark child (reconciler/spark/serve.py): a scratch, in-memory
catalog where every job stubs the tables its views read and creates the views, as apply will.

It runs in a child process because a Python process holds at most one SparkContext, whose
catalog kind is fixed at start: the verifier must never share a session that may point at a live
metastore. Standard library and PySpark only.

    {"op": "check", "stubs": [{"db", "name", "schema"}], "views": [{"key", "db", "name", "use", "sql",
     "columns": [names] | null, "deps": [keys]}]}
    -> {"results": [{"key", "status": "ok"|"error"|"not_checked", "schema", "error", "blocked_by"}],
        "stub_errors": [...]}

Every job starts from an empty catalog. A view no other view of the job reads is created only
where its analysed output cannot show that CREATE VIEW would accept it (see `_creation_needed`):
CREATE VIEW parses and analyses the SQL a second time and was a third of the job's time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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


class Scratch:
    def __init__(self, child: Any) -> None:
        self.spark = child.spark
        self.errors: tuple[type[BaseException], ...] = child.errors
        self._error = child.error
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
        self.taken: set[tuple[str, str]] = set()  # tables and views in the scratch catalog
        # views checked without CREATE VIEW, in order, with their analysed fields
        self.uncreated: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        self.read = {d for v in job.get("views", []) for d in v.get("deps", [])}
        stub_errors = []
        for s in job.get("stubs", []):
            try:
                self.ensure_db(s["db"], made)
                self.stub(s["db"], s["name"], s["schema"])
                self.taken.add((s["db"].lower(), s["name"].lower()))
            except self.errors as exc:
                stub_errors.append({"db": s["db"], "name": s["name"], "error": self._error(exc)})
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
            fields = self.analyse(v, made)
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
        self.use(v["use"])
        try:
            schema = self.spark.sql(v["sql"]).schema
        except self.errors as exc:
            if not self.uncreated or "NOT_FOUND" not in str(self._error(exc).get("class")):
                raise
            pending, self.uncreated = self.uncreated, []
            for u, u_fields in pending:
                self.create(u, u_fields)
            self.use(v["use"])
            schema = self.spark.sql(v["sql"]).schema
        return [f.jsonValue() for f in schema.fields]

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
        names = v.get("columns")
        cols = ""
        if names and len(names) == len(fields):
            cols = " (" + ", ".join(_q(n) for n in names) + ")"
        self.spark.sql(f"CREATE VIEW {_q(v['db'])}.{_q(v['name'])}{cols} AS {v['sql']}")
