"""The child's side of a Flink child process (our side: client.py): the engine module that
reconciler/child/serve.py serves. Standard library and PyFlink only: the Flink venv's
interpreter loads this file by its path.

    python reconciler/child/serve.py reconciler/flink/serve.py

The conf is Flink options; the hello adds {"pid", "flink"}. Its operations:

    {"op": "query", "catalog", "database", "relations": [{"path": [..], "sql"}], "sql"}
      -> {"columns": [{"name", "type"}], "rows": [[value, ...]]}
       | {"error": {"class", "message", "in": "query" | relation index, "line"?, "column"?, ...}}
    {"op": "tests", "queries": [{"id", "sql"}]}     (view tests: reconciler.viewtests.flink_engine)
      -> {"answers": [{"id", "schema": [{"name", "type"}], "rows"} | {"id", "error"}]}

Each relation becomes a temporary view at its path (one to three parts; missing parts are the
request's catalog and database): a catalog Flink does not know is created in memory, so the
query's SQL reads `sales.orders` as written and nothing is written to any real catalog. The
relations are dropped after the request. Values come back as JSON: decimals as text,
timestamps "YYYY-MM-DD HH:MM:SS[.ffffff]", binary {"$binary": base64}, maps [[k, v], ...].
"""

from __future__ import annotations

import contextlib
import decimal
import json
import re
from collections.abc import Callable
from typing import Any

# "From line 1, column 8 to line 1, column 11: ..." (validation), "at line 1, column 1." (parsing)
_RANGE = re.compile(r"From line (\d+), column (\d+) to line (\d+), column (\d+)")
_AT = re.compile(r"at line (\d+), column (\d+)")
_BORING = ("SQL validation failed. ", "SQL parse failed. ")


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class _Fields(dict):  # type: ignore[type-arg]
    """A row's fields read from JSON (a plain dict is a map): a struct, as a PyFlink Row."""

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        return dict(self)


def flink_error(exc: BaseException) -> dict[str, Any]:
    """Flink's exception class and its message (the innermost cause that says something, without
    stacks), and where in the SQL it points: 1-based `line`/`column` (and `end_line`/`end_column`)."""
    java = getattr(exc, "java_exception", None)
    chain: list[tuple[str, str]] = []
    while java is not None and len(chain) < 20:
        try:
            chain.append((str(java.getClass().getSimpleName()), str(java.getMessage() or "")))
            java = java.getCause()
        except Exception:  # noqa: BLE001 - a broken py4j link ends the chain
            break
    if not chain:
        chain = [(type(exc).__name__, str(exc))]
    klass, message = chain[0]
    # The outer message of a validation or job failure says little; its cause says what failed.
    for _cls, msg in chain:
        if _RANGE.search(msg) or _AT.search(msg):
            message = msg
            break
    else:
        useful = [m for _, m in chain if m and not m.startswith(("Job execution failed", "org.apache.flink"))]
        if useful:
            message = useful[-1] if klass not in ("ValidationException", "SqlParserException") else useful[0]
    for prefix in _BORING:
        message = message.replace(prefix, "")
    out: dict[str, Any] = {"class": klass}
    m = _RANGE.search(message)
    if m:
        out.update(line=int(m.group(1)), column=int(m.group(2)), end_line=int(m.group(3)), end_column=int(m.group(4)))
    else:
        m = _AT.search(message)
        if m:
            out.update(line=int(m.group(1)), column=int(m.group(2)))
    first = message.split("\nWas expecting")[0].strip()
    out["message"] = _RANGE.sub("", first).lstrip(": ").strip()[:2000]
    return out


class Child:
    """One batch TableEnvironment and the in-memory catalogs it made for relations."""

    def __init__(self, conf: dict[str, str], to_wire: Callable[[Any], Any]) -> None:
        from pyflink.table import EnvironmentSettings, TableEnvironment

        self.to_wire = to_wire  # the protocol's value encoding (reconciler/child/serve.py)
        self.env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        config = self.env.get_config()
        config.set("parallelism.default", "1")  # tiny inputs: one task, no exchanges
        config.set("table.local-time-zone", "UTC")  # timestamps with local time zone, as the fixtures write them
        for key, value in conf.items():
            config.set(key, value)
        self.default = (self.env.get_current_catalog(), self.env.get_current_database())
        self._databases: set[tuple[str, str]] = set()

    def _where(self, catalog: str, database: str) -> None:
        if (catalog, database) in self._databases:
            return
        if catalog not in self.env.list_catalogs():
            self.env.execute_sql(f"CREATE CATALOG {_ident(catalog)} WITH ('type' = 'generic_in_memory')")
        self.env.execute_sql(f"CREATE DATABASE IF NOT EXISTS {_ident(catalog)}.{_ident(database)}")
        self._databases.add((catalog, database))

    def query(self, request: dict[str, Any], errors: tuple[type[BaseException], ...]) -> dict[str, Any]:
        catalog = str(request.get("catalog") or self.default[0])
        database = str(request.get("database") or self.default[1])
        created: list[str] = []
        try:
            self._where(catalog, database)
            for i, rel in enumerate(request.get("relations", [])):
                parts = [str(p) for p in rel["path"]]
                if not 1 <= len(parts) <= 3:
                    return {"fatal": f"relation {i}: a path has one to three parts, not {parts!r}"}
                full = [catalog, database][: 3 - len(parts)] + parts
                self._where(full[0], full[1])
                name = ".".join(map(_ident, full))
                try:
                    self.env.execute_sql(f"CREATE TEMPORARY VIEW {name} AS {rel['sql']}")
                except errors as exc:
                    return {"error": {**flink_error(exc), "in": i}}
                created.append(name)
            self.env.use_catalog(catalog)
            self.env.use_database(database)
            try:
                columns, rows = self.rows(str(request["sql"]))
            except errors as exc:
                return {"error": {**flink_error(exc), "in": "query"}}
            return {"columns": columns, "rows": rows}
        finally:
            for name in created:
                with contextlib.suppress(Exception):
                    self.env.execute_sql(f"DROP TEMPORARY VIEW IF EXISTS {name}")
            with contextlib.suppress(Exception):
                self.env.use_catalog(self.default[0])
                self.env.use_database(self.default[1])

    def rows(self, sql: str) -> tuple[list[dict[str, str]], list[list[Any]]]:
        """The columns ({"name", "type"}) and rows (as JSON) of `sql`."""
        table = self.env.sql_query(sql)
        cols = list(table._j_table.getResolvedSchema().getColumns())
        columns = [{"name": str(c.getName()), "type": str(c.getDataType())} for c in cols]
        shown, as_json = _collectable(cols)
        if shown is not None:
            table = self.env.sql_query(f"SELECT {shown} FROM {table}")
        with table.execute().collect() as got:
            data = [[_json(v) if as_json[i] and v is not None else v for i, v in enumerate(row)] for row in got]
        return columns, [[self.to_wire(v) for v in row] for row in data]

    def tests(self, request: dict[str, Any], errors: tuple[type[BaseException], ...]) -> dict[str, Any]:
        """View tests' queries, one after another (one TableEnvironment): each reads only inline tables."""
        answers: list[dict[str, Any]] = []
        for item in request.get("queries", []):
            try:
                schema, rows = self.rows(str(item["sql"]))
                answers.append({"id": item["id"], "schema": schema, "rows": rows})
            except errors as exc:
                answers.append({"id": item["id"], "error": flink_error(exc)})
            except Exception as exc:  # noqa: BLE001 - a conversion failure is that query's
                answers.append({"id": item["id"], "error": {"class": type(exc).__name__,
                                                            "message": str(exc).splitlines()[0][:2000]}})
        return {"answers": answers}


def _json(text: str) -> Any:
    return json.loads(text, parse_float=decimal.Decimal, object_pairs_hook=_Fields)


def _collectable(cols: list[Any]) -> tuple[str | None, list[bool]]:
    """A select list that PyFlink 2.3 can hand to Python exactly, and which of its columns are
    JSON text; None when every column already is. Its own conversion cuts timestamps to
    milliseconds, fails on TIMESTAMP_LTZ (PickleException) and arrays (EOFError), and names no
    fields of a row: timestamps come back as Flink's text, arrays and rows as JSON."""
    parts: list[str] = []
    as_json: list[bool] = []
    for c in cols:
        name = _ident(str(c.getName()))
        root = str(c.getDataType().getLogicalType().getTypeRoot())
        if root.startswith("TIMESTAMP"):
            parts.append(f"CAST({name} AS STRING) AS {name}")
        elif root in ("ARRAY", "ROW", "MULTISET", "STRUCTURED_TYPE"):
            parts.append(f"JSON_STRING({name}) AS {name}")
        else:
            parts.append(name)
        as_json.append(root in ("ARRAY", "ROW", "MULTISET", "STRUCTURED_TYPE"))
    changed = any(p != _ident(str(c.getName())) for p, c in zip(parts, cols, strict=True))
    return (", ".join(parts) if changed else None), as_json


def _jvm_pid() -> int | None:
    try:
        from pyflink.java_gateway import get_gateway

        return int(get_gateway().jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - only used for memory figures
        return None


def start(conf: dict[str, Any], channel: Any) -> Child:
    return Child({str(k): str(v) for k, v in conf.items()}, channel.to_wire)


def hello(child: Child) -> dict[str, Any]:
    from pyflink.version import __version__

    return {"pid": _jvm_pid(), "flink": __version__}


def handlers(child: Child) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    from py4j.protocol import Py4JError

    errors: tuple[type[BaseException], ...] = (Py4JError,)
    return {"query": lambda r: child.query(r, errors), "tests": lambda r: child.tests(r, errors)}


def stop(child: Child, request: dict[str, Any]) -> None:
    """Nothing to publish: the JVM ends with this process."""
