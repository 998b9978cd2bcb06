"""Analysis of declared views by Spark, in a scratch catalog.

Each viewsync catalog gets its own scratch universe (Spark databases = the
catalog's schemas): the tables its views read are stubbed with their real
columns (from the catalog, or sources/ files), declared views are created in
dependency order so a view over another declared view resolves, and every
Spark error becomes a finding located in the YAML. A view that reads a
failed view is "not checked" rather than a second error.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.model import Column, LiveView, ViewId, ViewSpec
from reconciler.source import names
from reconciler.source.config import CatalogConfig
from reconciler.source.spark_settings import SparkSettings
from reconciler.verify import columns as vcols
from reconciler.verify.locate import Locator, Where, offset_of
from reconciler.verify.result import Finding, Verification, ViewResult
from reconciler.verify.session import worker
from reconciler.verify.sources import Sources

# Threads the Spark child analyses views on (spark_ops.Ahead): analysis runs on the JVM thread that
# asks. On 2 cores a second took spark_verify.py's 1,000-view job from 9.1-9.4 s to 6.3-6.6 s; a
# third gained nothing there. One per core beyond that, up to 4.
ANALYSIS_THREADS = max(2, min(4, os.cpu_count() or 1))

DIALECT = "spark"
Key = tuple[str, str, str]
# catalog -> [(schema, table)] -> {(schema, table): columns}; tables it does not know are absent
TableSchemas = Callable[[str, list[tuple[str, str]]], dict[tuple[str, str], list[Column]]]


@dataclass
class World:
    """What verification reads: declarations, live views, and where table schemas come from."""

    declared: Mapping[ViewId, ViewSpec]
    origin: Mapping[ViewId, str]
    texts: Mapping[str, str]
    catalogs: Mapping[str, CatalogConfig]
    sources: Sources = field(default_factory=Sources)
    live: Mapping[ViewId, LiveView] = field(default_factory=dict)
    table_schemas: TableSchemas | None = None
    offline: bool = False  # validate --spark: no catalog is asked (messages say so)


@dataclass
class _Subject:
    """A view Spark analyses: declared, or a live view re-analysed for impact."""

    id: ViewId
    sql: str
    namespace: str
    columns: list[Column] | None  # declared columns (None: infer)
    declared: bool
    deps: list[ViewId] = field(default_factory=list)
    stubs: list[tuple[Key, list[Column]]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (name as written, why)
    blocked: str | None = None


def _k(catalog: str, schema: str, name: str) -> Key:
    return (catalog.lower(), schema.lower(), name.lower())


def spark_format_catalog(cat: CatalogConfig | None) -> bool:
    """The catalog stores Spark's own view format, which Spark reads strictly."""
    if cat is None:
        return False
    o = cat.options
    if cat.type == "hms":
        return str(o.get("engine_format") or o.get("write_format") or "spark") == "spark"
    if cat.type == "glue":
        return str(o.get("engine_format") or o.get("view_format") or "athena") == "spark"
    return False


class Analysis:
    def __init__(self, world: World, settings: SparkSettings) -> None:
        self.world = world
        self.settings = settings
        self.locator = Locator(dict(world.texts))
        self.declared_by_key = {_k(v.catalog, v.schema, v.name): v for v in world.declared}
        self.live_by_key = {_k(v.catalog, v.schema, v.name): v for v in world.live}
        self.result = Verification(engine="spark")
        self.live_results: dict[ViewId, ViewResult] = {}
        self._schemas: dict[Key, list[Column] | None] = {}
        self._order: list[tuple[str, int, int]] = []  # file position of each finding

    # ----------------------------------------------------------- subjects
    def _subject(self, vid: ViewId, spec: ViewSpec, declared: bool) -> _Subject | None:
        sql = spec.sql_for(DIALECT)
        if sql is None:
            return None
        ns = ".".join(spec.default_namespace) if spec.default_namespace else vid.schema
        return _Subject(vid, sql, ns, list(spec.columns) or None, declared)

    def _resolve(self, s: _Subject, subjects: dict[ViewId, _Subject], queue: list[_Subject]) -> None:
        spec = self.world.declared.get(s.id) or self.world.live[s.id].spec
        home = spec.default_catalog if spec.default_catalog and spec.default_catalog in self.world.catalogs \
            else s.id.catalog
        for parts in vsql.referenced_tables(s.sql, DIALECT):
            if len(parts) == 1:
                key = _k(home, s.namespace, parts[0])
            elif len(parts) == 2:
                key = _k(home, parts[0], parts[1])
            else:
                cat = parts[0] if parts[0] in self.world.catalogs else s.id.catalog
                key = _k(cat, ".".join(parts[1:-1]), parts[-1])
            shown = ".".join(parts)
            if "." in key[1]:
                s.missing.append((shown, "nested namespaces cannot be verified by Spark's session catalog"))
                continue
            target = self.declared_by_key.get(key)
            if target is not None and target != s.id:
                tspec = self.world.declared[target]
                # A view outside this run with declared columns is stubbed by them (what the catalog
                # will hold); one without is analysed too, to learn its columns.
                analysed = target in subjects or not tspec.columns
                if target.catalog == s.id.catalog and tspec.sql_for(DIALECT) is not None and analysed:
                    if target not in subjects:
                        sub = self._subject(target, tspec, True)
                        if sub is not None:
                            subjects[target] = sub
                            queue.append(sub)
                    s.deps.append(target)
                elif tspec.columns:
                    s.stubs.append((key, list(tspec.columns)))
                else:
                    s.missing.append((shown, f"declared view {target} has neither Spark SQL nor columns"))
                continue
            live = self.live_by_key.get(key)
            if live is not None and live != s.id and live not in self.world.declared:
                lspec = self.world.live[live].spec
                if live in subjects:
                    s.deps.append(live)
                elif lspec.columns:
                    s.stubs.append((key, list(lspec.columns)))
                else:
                    s.missing.append((shown, f"live view {live} has no known columns"))
                continue
            s.stubs.append((key, []))  # a table: columns looked up in bulk below

    def _fill_tables(self, subjects: list[_Subject]) -> None:
        wanted: dict[str, set[tuple[str, str]]] = {}
        for s in subjects:
            for key, cols in s.stubs:
                if not cols and key not in self._schemas:
                    wanted.setdefault(key[0], set()).add((key[1], key[2]))
        for cat, refs in sorted(wanted.items()):
            found: dict[tuple[str, str], list[Column]] = {}
            if self.world.table_schemas is not None and cat in self.world.catalogs:
                got = self.world.table_schemas(cat, sorted(refs))
                found = {(a.lower(), b.lower()): c for (a, b), c in got.items()}
            for schema, table in refs:
                self._schemas[(cat, schema, table)] = (found.get((schema, table))
                                                       or self.world.sources.get(cat, schema, table))
        for s in subjects:
            resolved: list[tuple[Key, list[Column]]] = []
            for key, cols in s.stubs:
                if cols:
                    resolved.append((key, cols))
                    continue
                known = self._schemas.get(key)
                if known:
                    resolved.append((key, known))
                else:
                    s.missing.append((".".join(key[1:]) if key[0] == s.id.catalog.lower() else ".".join(key),
                                      self._nowhere(key)))
            s.stubs = resolved

    def _nowhere(self, key: Key) -> str:
        file = f"sources/{key[0]}/{key[1]}.yaml"
        if self.world.offline:
            return f"not declared, not in {file}; validate --spark reads no catalog, plan --spark does"
        return f"not declared, not a table in catalog {key[0]!r}, not in {file}"

    # ------------------------------------------------------------- run
    def run(self, targets: set[ViewId] | None = None, live_subjects: set[ViewId] | None = None) -> Verification:
        started = time.monotonic()
        subjects: dict[ViewId, _Subject] = {}
        queue: list[_Subject] = []
        for vid in sorted(self.world.declared, key=ViewId.key):
            if targets is not None and vid not in targets:
                continue
            spec = self.world.declared[vid]
            sub = self._subject(vid, spec, True)
            if sub is None:
                self.result.results[vid] = ViewResult(vid, "skipped", reason="no spark representation")
                continue
            subjects[vid] = sub
            queue.append(sub)
        for vid in sorted(live_subjects or (), key=ViewId.key):
            sub = self._subject(vid, self.world.live[vid].spec, False)
            if sub is not None:
                subjects[vid] = sub
                queue.append(sub)
        while queue:
            self._resolve(queue.pop(), subjects, queue)
        self._fill_tables(list(subjects.values()))
        by_catalog: dict[str, list[_Subject]] = {}
        for s in subjects.values():
            by_catalog.setdefault(s.id.catalog, []).append(s)
        for cat in sorted(by_catalog):
            self._universe(cat, by_catalog[cat], subjects)
        ranked = sorted(zip(self._order, self.result.findings, strict=True), key=lambda p: p[0])
        self.result.findings = [f for _, f in ranked]
        self.result.seconds = time.monotonic() - started
        return self.result

    def _universe(self, catalog: str, group: list[_Subject], subjects: dict[ViewId, _Subject]) -> None:
        order = _topological(group, subjects)
        stubs: dict[tuple[str, str], dict[str, Any]] = {}
        views: list[dict[str, Any]] = []
        failed: dict[ViewId, str] = {}
        for s in order:
            if "." in s.id.schema or "." in s.namespace:
                self._record(s, ViewResult(s.id, "skipped", reason="nested namespaces cannot be verified by "
                                           "Spark's session catalog"))
                failed[s.id] = str(s.id)
                continue
            if s.missing:
                for shown, why in s.missing:
                    self._missing(s, shown, why)
                failed[s.id] = str(s.id)
                continue
            blocked = next((d for d in s.deps if d in failed), None)
            if blocked is not None:
                self._record(s, ViewResult(s.id, "not_checked", reason=f"reads {failed[blocked]}, which has errors"))
                failed[s.id] = failed[blocked]
                continue
            for key, cols in s.stubs:
                stubs.setdefault((key[1], key[2]), {"db": key[1], "name": key[2], "schema": _struct(cols)})
            views.append({"key": str(s.id), "db": s.id.schema, "name": s.id.name, "use": s.namespace,
                          "sql": _local_sql(s.sql, catalog, self.world.catalogs),
                          "columns": [c.name for c in s.columns] if s.columns else None,
                          "deps": [str(d) for d in s.deps]})
        if not views:
            return
        answer = worker(self.settings).call({"op": "check", "stubs": list(stubs.values()), "views": views,
                                             "threads": ANALYSIS_THREADS})
        by_key = {str(s.id): s for s in order}
        for r in answer["results"]:
            self._answer(by_key[r["key"]], r)

    # ---------------------------------------------------------- results
    def _record(self, s: _Subject, r: ViewResult) -> None:
        if s.declared:
            self.result.results[s.id] = r
        else:
            self.live_results[s.id] = r

    def _find(self, s: _Subject, severity: str, code: str, where: Where | None, message: str) -> None:
        if not s.declared:
            return
        prefix = f"{where.prefix()}: " if where is not None else f"{self.world.origin.get(s.id, s.id)}: "
        self._order.append((where.file, where.line, where.column) if where is not None else (str(s.id), 0, 0))
        self.result.findings.append(Finding(s.id, "error" if severity == "error" else "warning", code,
                                            f"{prefix}{s.id}: {message}"))

    def _missing(self, s: _Subject, shown: str, why: str) -> None:
        m = re.search(r"(?i)(?<![\w`])" + re.escape(shown.split(".")[-1]) + r"(?![\w`])", s.sql)
        where = self.locator.sql(self.world.origin.get(s.id, ""), DIALECT, m.start() if m else 0)
        self._find(s, "error", "TABLE_OR_VIEW_NOT_FOUND", where, f"[TABLE_OR_VIEW_NOT_FOUND] `{shown}` resolves "
                   f"nowhere ({why})")
        self._record(s, ViewResult(s.id, "error", reason=f"`{shown}` resolves nowhere"))

    def _answer(self, s: _Subject, r: dict[str, Any]) -> None:
        origin = self.world.origin.get(s.id, "")
        if r["status"] == "not_checked":
            self._record(s, ViewResult(s.id, "not_checked", reason=f"reads {r['blocked_by']}, which has errors"))
            return
        if r["status"] == "error":
            e = r["error"]
            offset = e.get("start")
            if offset is None and "line" in e:
                offset = offset_of(s.sql, e["line"], e["pos"])
            if offset is None and e["class"] == "COLUMN_ALREADY_EXISTS":
                offset = _duplicate_offset(s.sql, r.get("schema") or [])
            if offset is None:
                m = re.search(r'expression "([^"]+)"', e["message"])
                at = s.sql.lower().find(m.group(1).lower()) if m else -1
                offset = max(at, 0)
            self._find(s, "error", e["class"], self.locator.sql(origin, DIALECT, offset), e["message"])
            self._record(s, ViewResult(s.id, "error", _columns(r.get("schema"))))
            return
        fields: list[dict[str, Any]] = r["schema"]
        status = "ok"
        if s.columns:
            strict = spark_format_catalog(self.world.catalogs.get(s.id.catalog))
            issues = vcols.check(s.columns, fields, strict)
            where = self.locator.columns(origin) if issues else None  # parses the file: only to point at one
            for issue in issues:
                self._find(s, issue.severity, issue.code, where, issue.message)
                status = "error" if issue.severity == "error" or status == "error" else "warning"
            self._record(s, ViewResult(s.id, status, _columns(fields)))  # type: ignore[arg-type]
            return
        try:
            inferred = [vcols.from_spark_field(f) for f in fields]
        except vcols.UnknownSparkType as err:
            self._find(s, "error", "column_type", self.locator.view(origin), str(err))
            self._record(s, ViewResult(s.id, "error"))
            return
        # What is inferred gets declared (plan, --write-columns): it must be a valid declaration.
        unusable = _unusable(inferred)
        if unusable is not None:
            offset = _duplicate_offset(s.sql, fields)
            where = self.locator.sql(origin, DIALECT, offset) if offset is not None else self.locator.view(origin)
            self._find(s, "error", "column_name", where, unusable)
            self._record(s, ViewResult(s.id, "error", inferred))
            return
        self._record(s, ViewResult(s.id, "ok", inferred, inferred=s.declared))


def _unusable(columns: list[Column]) -> str | None:
    """Why Spark's output columns cannot be declared as they are, or None."""
    seen: set[str] = set()
    for c in columns:
        problem = names.problem(c.name, column=True)
        if problem is not None:
            return f"Spark's output column: {problem}; alias it"
        if c.name.lower() in seen:
            return (f"two output columns are named `{c.name}` (column names are compared ignoring case); "
                    "alias one of them")
        seen.add(c.name.lower())
    return None


def _duplicate_offset(sql: str, fields: list[dict[str, Any]]) -> int | None:
    """Where the query's second output column of an already used name starts (Spark's
    COLUMN_ALREADY_EXISTS has no position; its name lookup ignores case)."""
    seen: set[str] = set()
    for i, f in enumerate(fields):
        name = str(f["name"]).lower()
        if name in seen:
            return vsql.output_offset(sql, "spark", i, len(fields))
        seen.add(name)
    return None


def _columns(fields: list[dict[str, Any]] | None) -> list[Column] | None:
    if fields is None:
        return None
    try:
        return [vcols.from_spark_field(f) for f in fields]
    except vcols.UnknownSparkType:
        return None


def _struct(cols: list[Column]) -> dict[str, Any]:
    return {"type": "struct", "fields": [
        {"name": c.name, "type": coltypes.to_spark(coltypes.parse(c.type)), "nullable": True, "metadata": {}}
        for c in cols]}


def _local_sql(sql: str, catalog: str, catalogs: Mapping[str, CatalogConfig]) -> str:
    """Blank out catalog qualifiers (`cat.schema.t` -> `    schema.t`): the scratch catalog
    has one level of databases, and blanks keep Spark's error offsets valid."""
    names = set(catalogs) | {"spark_catalog"}
    alternatives = "|".join(re.escape(n) + "|`" + re.escape(n) + "`" for n in sorted(names, key=len, reverse=True))
    pattern = r"(?i)(?<![\w`.])(" + alternatives + r")\s*\.(?=\s*`?\w+`?\s*\.)"
    return re.sub(pattern, lambda m: " " * len(m.group(0)), sql)


def _topological(group: list[_Subject], subjects: Mapping[ViewId, _Subject]) -> list[_Subject]:
    """Views after the views they read (iterative; a cycle is left to Spark to report)."""
    members = {s.id for s in group}
    order: list[_Subject] = []
    state: dict[ViewId, int] = {}
    for root in sorted(members, key=ViewId.key):
        if root in state:
            continue
        stack: list[tuple[ViewId, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            vid, i = stack.pop()
            deps = [d for d in subjects[vid].deps if d in members]
            if i < len(deps):
                stack.append((vid, i + 1))
                d = deps[i]
                if d not in state:
                    state[d] = 1
                    stack.append((d, 0))
                continue
            state[vid] = 2
            order.append(subjects[vid])
    return order


def verify(world: World, settings: SparkSettings, targets: set[ViewId] | None = None) -> Verification:
    return Analysis(world, settings).run(targets)
