"""A managed catalog's tables as files Spark reads: data review of its views.

A managed store holds view definitions only. When the `sources/` files give a table of the
catalog its data (`location`, `format`), the review's Spark reads those files as temporary views
of its session, and a view's SQL runs over them: every table reference is resolved as the view
resolves it (core.deps.candidates) and rewritten to the temporary view of that table, or of the
catalog's view it names (whose own SQL is rewritten the same way). Read-only: files are only read.

A reference to a table without data is why the view is skipped (NotReadable), said with what to
configure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.core import coltypes, deps
from reconciler.core import sql as vsql
from reconciler.core.model import Column, ViewId, ViewSpec
from reconciler.datareview.view_sql import sql_in
from reconciler.verify.sources import Sources, TableData

Key = tuple[str, str, str]  # (catalog, schema, name), lower case
TEXT_FORMATS = ("csv", "json")  # read with the declared columns as their schema
DEFAULT_OPTIONS = {"csv": {"header": "true", "mode": "FAILFAST"}, "json": {"mode": "FAILFAST"}}
PACKAGES = {"delta": ("delta-spark", "io.delta:delta-spark_2.13:<version>"),
            "iceberg": ("iceberg-spark-runtime", "org.apache.iceberg:iceberg-spark-runtime-<spark>_2.13:<version>")}


class MissingData(Exception):
    """A view reads something this catalog's files do not hold; the message says what and how to declare it."""


@dataclass
class FileCatalog:
    """The file-backed tables of one managed catalog, and its views a view's SQL may read."""

    catalog: str
    root: Path
    data: dict[Key, TableData]
    columns: dict[Key, list[Column]]
    catalogs: tuple[str, ...] = ()  # every configured catalog: how references resolve
    configured: tuple[str, ...] = ()  # the review's jars and packages: delta and iceberg need theirs
    views: dict[Key, tuple[ViewId, ViewSpec]] = field(default_factory=dict)
    declared_only: set[Key] = field(default_factory=set)  # views read through their declared definition
    _names: dict[tuple[str, Key], str] = field(default_factory=dict)

    @classmethod
    def of(cls, catalog: str, sources: Sources, root: Path, catalogs: tuple[str, ...],
           configured: tuple[str, ...]) -> FileCatalog:
        low = catalog.lower()
        return cls(catalog, root, {k: d for k, d in sources.data.items() if k[0] == low},
                   {k: c for k, c in sources.tables.items() if k[0] == low}, catalogs, configured)

    def set_views(self, live: Mapping[ViewId, ViewSpec], declared: Mapping[ViewId, ViewSpec]) -> None:
        """The views of this catalog a query may read: the live definition, else the declared one."""
        self.views.clear()
        self.declared_only.clear()
        for vid, spec in declared.items():
            if vid.catalog.lower() == self.catalog.lower():
                key = _key(vid)
                self.views[key] = (vid, spec)
                self.declared_only.add(key)
        for vid, spec in live.items():
            if vid.catalog.lower() == self.catalog.lower():
                self.views[_key(vid)] = (vid, spec)
                self.declared_only.discard(_key(vid))

    def query(self, vid: ViewId, spec: ViewSpec, sql: str, replaced: Mapping[ViewId, str] | None = None
              ) -> tuple[dict[str, Any], list[str]]:
        """The source the worker registers for a view's Spark SQL `sql`: the SQL over temporary
        views, with the inputs to register first; and notes (a view read by its declared
        definition). Raises MissingData."""
        inputs: dict[str, dict[str, Any]] = {}
        notes: list[str] = []
        swapped = {_key(v): name for v, name in (replaced or {}).items()}
        text = self._rewrite(sql, vid, spec, swapped, inputs, notes, (_key(vid),))
        return {"kind": "sql", "sql": text, "use": [], "columns": [c.name for c in spec.columns],
                "inputs": [{"name": n, "source": s} for n, s in inputs.items()]}, notes

    def table(self, schema: str, table: str) -> dict[str, Any]:
        """The source of one table (or view) of this catalog, for a relationships check. Raises MissingData."""
        key = (self.catalog.lower(), schema.lower(), table.lower())
        inputs: dict[str, dict[str, Any]] = {}
        if key in self.data:
            name = self._table_input(key, inputs)
        elif key in self.views:
            name = self._view_input(key, {}, inputs, [], ())
        else:
            raise MissingData(f"{self.catalog}.{schema}.{table} has no data declared: {self._how(key)}")
        return {"kind": "sql", "sql": f"SELECT * FROM {vsql.spark_ident(name)}", "use": [],
                "inputs": [{"name": n, "source": s} for n, s in inputs.items()]}

    def _how(self, key: Key) -> str:
        return (f"give it a `location` and a `format` in sources/{self.catalog}/{key[1]}.yaml "
                f"(its table `{key[2]}`)")

    def _rewrite(self, sql: str, vid: ViewId, spec: ViewSpec, swapped: Mapping[Key, str],
                 inputs: dict[str, dict[str, Any]], notes: list[str], stack: tuple[Key, ...]) -> str:
        import sqlglot
        from sqlglot import exp

        tree = sqlglot.parse_one(sql, read="spark")
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        missing: list[Key] = []
        for table in list(tree.find_all(exp.Table)):
            if not table.name or not isinstance(table.this, exp.Identifier):
                continue
            parts = vsql.table_parts(table)
            if len(parts) == 1 and parts[0].lower() in ctes:
                continue
            keys = deps.candidates(parts, vid, spec, self.catalogs)
            name = None
            for k in keys:
                if k in swapped:
                    name = swapped[k]
                elif k in self.data:
                    name = self._table_input(k, inputs)
                elif k in self.views and k not in stack:
                    name = self._view_input(k, swapped, inputs, notes, stack)
                if name is not None:
                    break
            if name is None:
                missing.append(keys[0])
                continue
            alias = table.alias or table.name
            table.replace(exp.Table(this=exp.to_identifier(name), alias=exp.TableAlias(this=exp.to_identifier(alias))))
        if missing:
            raise MissingData(self._missing(vid, missing))
        return tree.sql(dialect="spark")

    def _missing(self, vid: ViewId, keys: list[Key]) -> str:
        own = [k for k in keys if k[0] == self.catalog.lower()]
        other = [k for k in keys if k[0] != self.catalog.lower()]
        parts: list[str] = []
        if own:
            tables = ", ".join(".".join(k) for k in own)
            hows = "; ".join(self._how(k) for k in own)
            parts.append(f"{vid} reads {tables}, which has no data declared: {hows}")
        if other:
            parts.append(f"{vid} reads {', '.join('.'.join(k) for k in other)}: a managed catalog's views are "
                         f"reviewed over the files its own tables declare, and this is none of them")
        return "; ".join(parts)

    def _table_input(self, key: Key, inputs: dict[str, dict[str, Any]]) -> str:
        name = self._names.setdefault(("table", key), f"__vs_file_{len(self._names)}")
        if name not in inputs:
            inputs[name] = self.file_source(key)
        return name

    def _view_input(self, key: Key, swapped: Mapping[Key, str], inputs: dict[str, dict[str, Any]],
                    notes: list[str], stack: tuple[Key, ...]) -> str:
        name = self._names.setdefault(("view", key), f"__vs_read_{len(self._names)}")
        if name in inputs:
            return name
        vid, spec = self.views[key]
        sql, note = sql_in(spec, vid, "spark")
        if note:
            notes.append(note)
        if key in self.declared_only:
            notes.append(f"{vid} is not live: read through its declared definition")
        text = self._rewrite(sql, vid, spec, swapped, inputs, notes, (*stack, key))
        inputs[name] = {"kind": "sql", "sql": text, "use": [], "columns": [c.name for c in spec.columns]}
        return name

    def file_source(self, key: Key) -> dict[str, Any]:
        """How Spark reads one table's files. Raises MissingData (a local path that is not there,
        or leaves the repository through a link; a format whose package is not configured)."""
        data = self.data[key]
        table = ".".join(key)
        need = PACKAGES.get(data.format)
        if need and not any(need[0] in c for c in self.configured):
            raise MissingData(f"{data.at}: {table} is a {data.format} table: add {need[1]} to "
                              f"spark.live.catalogs.{self.catalog}.packages (or its jar to .jars)")
        location = data.location
        if data.is_local:
            root = self.root.resolve()
            path = (root / data.location).resolve()
            if not path.is_relative_to(root):
                raise MissingData(f"{data.at}: location {data.location!r} leads outside the repository "
                                  f"(through a link): a local location stays inside it")
            if not path.exists():
                raise MissingData(f"{data.at}: location {data.location!r}: no such file or directory "
                                  f"(relative to the repository's root, {root})")
            location = path.as_uri()
        schema = None
        if data.format in TEXT_FORMATS and self.columns.get(key):
            schema = {"type": "struct", "fields": [
                {"name": c.name, "type": coltypes.to_spark(_read_type(c.type)), "nullable": True, "metadata": {}}
                for c in self.columns[key]]}
        return {"kind": "file", "location": location, "format": data.format, "schema": schema,
                "options": {**DEFAULT_OPTIONS.get(data.format, {}), **data.options}}


def _read_type(text: str) -> coltypes.Type:
    """The declared type as a reader's schema takes it: char/varchar read as string."""
    def plain(p: coltypes.Prim) -> coltypes.Type:
        return coltypes.Prim("string") if p.name in ("char", "varchar") else p

    return coltypes.map_prims(coltypes.parse(text), plain)


def _key(vid: ViewId) -> Key:
    return (vid.catalog.lower(), vid.schema.lower(), vid.name.lower())
