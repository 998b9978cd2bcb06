"""`viewsync diff` and `viewsync check`: data review on live data, by the review's read-only
Spark (reconciler/datareview/). Which views, with which definitions, read through which catalog."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reconciler.core.errors import UserError, ViewsyncError
from reconciler.core.model import ViewId, ViewSpec
from reconciler.core.secrets import redact
from reconciler.datareview.view_sql import NotReadable

if TYPE_CHECKING:
    from reconciler.datareview.catalogs import Reader
    from reconciler.datareview.model import CheckReport, DiffReport
    from reconciler.datareview.session import LiveSpark
    from reconciler.source.declarations import Declarations
    from reconciler.workspace import Workspace

Say = Callable[[str], None]  # a progress line (per view), or Spark's stages


@dataclass(frozen=True)
class DiffRequest:
    select: tuple[str, ...] = ()  # globs over catalog.schema.view
    base: str | None = None  # only views whose declarations changed since this git ref
    where: str | None = None  # a Spark SQL condition over the view's columns, both sides
    sample: int = 5
    dependents: bool = False  # also declared views that read a changed view
    keep_going: bool = False  # a view whose diff fails as a whole (Spark stopped under it) is an error row


@dataclass(frozen=True)
class CheckRequest:
    select: tuple[str, ...] = ()
    definition: str = "declared"  # declared | live
    keep_going: bool = False  # a view whose checks fail as a whole (Spark stopped under them) is an error row


@dataclass(frozen=True)
class ReviewProgress:
    """What a use case reports while Spark works: `view(i, n, view, what)` once per view,
    `stages(info)` for Spark's active stages ({"stages": [{"stage", "done", "total"}]})."""

    view: Callable[[int, int, ViewId, str], None] = lambda i, n, v, what: None
    stages: Callable[[dict[str, Any]], None] = lambda info: None


def _review(decl: Declarations, vid: ViewId) -> Any:
    """The view's review declarations (key, checks), or None before they exist."""
    return (getattr(decl, "expectations", None) or {}).get(vid)


def key_of(decl: Declarations, vid: ViewId) -> tuple[str, ...] | None:
    review = _review(decl, vid)
    key = getattr(review, "key", None)
    return tuple(key) if key else None


def checks_of(decl: Declarations, vid: ViewId) -> tuple[Any, ...]:
    return tuple(getattr(_review(decl, vid), "checks", ()) or ())


def _readers(ws: Workspace) -> dict[str, Reader]:
    """A reader per configured catalog; a managed catalog's tables read from the files `sources/` gives them."""
    from reconciler.datareview import catalogs
    from reconciler.verify import sources as vsources

    return catalogs.readers(ws.config, vsources.read(ws.root), ws.root)


def _file_catalogs_read(readers: Mapping[str, Reader], decl: Declarations, live: Mapping[ViewId, ViewSpec]) -> None:
    """Give each managed catalog read from files the views its views may read: live, else declared."""
    from reconciler.datareview.catalogs import ManagedReader

    declared = {v: d.resolved(v) for v, d in decl.views.items()}
    for r in readers.values():
        if isinstance(r, ManagedReader) and r.files is not None and not r.unsupported:
            r.files.set_views(live, declared)


def _file_catalogs(readers: Mapping[str, Reader]) -> set[str]:
    from reconciler.datareview.catalogs import ManagedReader

    return {n for n, r in readers.items() if isinstance(r, ManagedReader) and not r.unsupported}


def _spark(ws: Workspace, readers: Mapping[str, Reader]) -> LiveSpark:
    from reconciler.datareview import catalogs, session

    work = session.work_dir()
    conf = catalogs.session_conf(ws.config, dict(readers), work)
    spark = session.PROCESS.get(conf, ws.config.spark.live.python)
    spark.fresh()
    return spark


def _spark_info(ws: Workspace, spark: LiveSpark | None) -> dict[str, Any]:
    live = ws.config.spark.live
    return {"master": live.master or ws.config.spark.master, "version": spark.spark_version if spark else None,
            "driver_peak_rss_mb": round(rss) if spark and (rss := spark.peak_rss_mb()) else None}


def diff(ws: Workspace, request: DiffRequest, progress: ReviewProgress = ReviewProgress()) -> DiffReport:
    """The diff of every view the plan would create, update or drop (and, with `dependents`,
    every declared view reading one of them): live definition vs declared one over the same
    live tables, evaluated by the review's Spark, read-only. Its `view.diffed` events are
    announced (`announce`).

    Args:
        ws: the repository, opened.
        request: which views (select, base), the row filter, the sample size, dependents.
        progress: per-view and Spark stage progress.

    Returns:
        The report: one ViewDiff per view (status `error` when a side fails in Spark,
        `skipped` when its catalog cannot be read by Spark, with the reason).

    Raises:
        ValidationFailed: the declarations are bad.
        UserError: `base` is not a git ref; Spark cannot start.
        ViewsyncError: a catalog or, with event sinks, the state store cannot be read.
    """
    from reconciler.datareview import engine
    from reconciler.datareview.model import DiffReport, ViewDiff
    from reconciler.plan.planner import PlanScope
    from reconciler.plan.scope import plan_options
    from reconciler.source import gitsrc

    if request.sample < 0:
        raise UserError("--sample must be 0 or more")
    decl = ws.declarations()
    opts = plan_options(ws.config, PlanScope(select=request.select))
    plan, snapshots = ws.plan(opts, decl, None)
    actions = [a for a in plan.actions if a.action in ("create", "update", "drop", "adopt")]
    if request.base:
        from reconciler.plan.yaml_changes import declaration_changes

        changed = {c.view for c in declaration_changes(ws.declarations(gitsrc.files_at(ws.root, request.base)), decl)}
        actions = [a for a in actions if a.view in changed]
    readers = _readers(ws)
    from reconciler.verify import planning

    live_now = planning.live_views(snapshots)
    files = _file_catalogs(readers)
    unread = {(v.catalog, v.schema) for v in decl.views if v.catalog in files} - set(snapshots)
    if unread:  # views a managed view reads, outside the plan's scope (--select): their live definitions
        live_now.update(planning.live_views(ws.fetch(sorted({c for c, _ in unread}), unread, all_schemas=False)))
    _file_catalogs_read(readers, decl, {v: lv.spec for v, lv in live_now.items()})
    report = DiffReport(where=request.where, sample=request.sample)
    todo: list[tuple[ViewId, str, ViewSpec | None, ViewSpec | None]] = []
    for act in actions:
        kind: str = "update" if act.action == "adopt" else act.action
        todo.append((act.view, kind, act.before if kind != "create" else None,
                     act.desired if kind != "drop" else None))
    if request.dependents and todo:
        from reconciler.verify import impact

        live = live_now
        changed_ids = [v for v, kind, _, _ in todo if kind != "drop"]
        deps: set[ViewId] = set().union(*impact.dependents(changed_ids, decl.views, live).values()) \
            if changed_ids else set()
        planned = {v for v, *_ in todo}
        for d in sorted(deps - planned, key=ViewId.key):
            if d in decl.views and d in live:
                todo.append((d, "dependent", live[d].spec, decl.views[d].resolved(d)))
    spark: LiveSpark | None = None
    after_names: dict[ViewId, str] = {}  # changed views' declared results, read by dependents
    try:
        for n, (vid, kind, before, after) in enumerate(todo, 1):
            reader = readers.get(vid.catalog)
            if reader is None or reader.unsupported:
                why = reader.unsupported if reader else f"catalog {vid.catalog!r} is not configured"
                report.views.append(ViewDiff(vid, kind, status="skipped", message=why))
                continue
            progress.view(n, len(todo), vid, "diff")
            started = time.monotonic()
            notes: list[str] = []
            try:
                b = _source(reader, vid, before, notes) if before is not None else None
                a = _source(reader, vid, after, notes, after_names) if after is not None else None
            except NotReadable as exc:
                report.views.append(ViewDiff(vid, kind, status="skipped", message=str(exc)))
                continue
            if spark is None:  # a Spark that cannot start fails the whole diff
                spark = _spark(ws, readers)
            try:
                result = engine.diff_view(spark, vid, kind, b, a, key_of(decl, vid), request.where,
                                          request.sample, progress.stages)
            except ViewsyncError as exc:  # this view's failure (Spark stopped, a handler failed): the rest go on
                if not request.keep_going:
                    raise
                report.views.append(ViewDiff(vid, kind, status="error", message=redact(str(exc))))
                spark = spark if spark.alive() else None
                continue
            result.notes = notes + result.notes
            result.seconds = time.monotonic() - started
            if result.status == "error" and (result.message or "").startswith("key column"):
                p = decl.problem(vid, ("key",), "")  # the declaration is at fault: say where
                result.message = f"{p.file}:{p.line}:{p.column}: {result.message}"
            report.views.append(result)
            if request.dependents and a is not None and kind != "dependent" and result.status == "ok":
                name = f"__vs_declared_{len(after_names)}"
                spark.register(name, a)
                after_names[vid] = name
    finally:
        if spark is not None and after_names and spark.alive():
            spark.drop(list(after_names.values()))
    report.spark = _spark_info(ws, spark)
    announce(ws, report)
    return report


def _source(reader: Reader, vid: ViewId, spec: ViewSpec, notes: list[str],
            replaced: Mapping[ViewId, str] | None = None) -> dict[str, Any]:
    source, note = reader.query_source(vid, spec, replaced)
    if note:
        notes.append(note)
    if replaced and source["kind"] == "sql" and not reader.resolves_references:
        source = {**source, "sql": _read_declared(source["sql"], vid, spec, replaced)}
    return source


def _read_declared(sql: str, vid: ViewId, spec: ViewSpec, replaced: Mapping[ViewId, str]) -> str:
    """`sql` with every reference to a changed view replaced by its declared result (a
    temporary view of the session): a dependent's declared definition over declared inputs."""
    import sqlglot
    from sqlglot import exp

    from reconciler.core import deps
    from reconciler.core import sql as vsql

    tree = sqlglot.parse_one(sql, read="spark")
    by_key = {(v.catalog.lower(), v.schema.lower(), v.name.lower()): name for v, name in replaced.items()}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for table in list(tree.find_all(exp.Table)):
        if not table.db and table.name.lower() in ctes:
            continue
        temp = deps.lookup(vsql.table_parts(table), vid, spec, by_key)
        if temp is not None:
            alias = table.alias or table.name
            table.replace(exp.Table(this=exp.to_identifier(temp), alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return tree.sql(dialect="spark")


def check(ws: Workspace, request: CheckRequest, progress: ReviewProgress = ReviewProgress()) -> CheckReport:
    """Every declared view's `checks:` on live data, all checks of a view in one scan; its
    `checks.finished` events are announced (`announce`).

    Args:
        ws: the repository, opened.
        request: which views, and whether the declared (pending) SQL or the live one is checked.
        progress: per-view and Spark stage progress.

    Returns:
        The report (`failed` when an `error` check fails, cannot run, or a view cannot be read).

    Raises:
        ValidationFailed: the declarations are bad.
        UserError: unknown `definition`; Spark cannot start.
        ViewsyncError: a catalog cannot be read (`live`); with event sinks, the state store.
    """
    import fnmatch

    from reconciler.datareview import engine
    from reconciler.datareview.model import CheckReport

    if request.definition not in ("declared", "live"):
        raise UserError(f"--definition must be declared or live, not {request.definition!r}")
    decl = ws.declarations()
    views = [v for v in sorted(decl.views, key=ViewId.key) if checks_of(decl, v)
             and (not request.select or any(fnmatch.fnmatchcase(str(v), p) for p in request.select))]
    report = CheckReport(definition=request.definition)
    if not views:
        report.notes.append("no declared view has checks" + (" in the selection" if request.select else ""))
        announce(ws, report)
        return report
    live: dict[ViewId, Any] = {}
    readers = _readers(ws)
    files = _file_catalogs(readers) & {v.catalog for v in views}
    if request.definition == "live" or files:
        from reconciler.verify import planning

        fetched = {v.catalog for v in views} if request.definition == "live" else files
        schemas = {(c, s) for c in files for (c2, s) in ((v.catalog, v.schema) for v in decl.views) if c2 == c}
        snapshots = ws.fetch(sorted(fetched), {(v.catalog, v.schema) for v in views if v.catalog in fetched} | schemas,
                             all_schemas=False)
        live = planning.live_views(snapshots)
        _file_catalogs_read(readers, decl, {v: lv.spec for v, lv in live.items()})
    spark: LiveSpark | None = None
    for n, vid in enumerate(views, 1):
        reader = readers.get(vid.catalog)
        checks = checks_of(decl, vid)
        locate = _locator(decl, vid)
        if reader is None or reader.unsupported:
            why = reader.unsupported if reader and reader.unsupported else "catalog not configured"
            report.views.append(engine.not_run(vid, request.definition, checks, "skipped", why, locate))
            continue
        if request.definition == "live" and vid not in live:
            report.views.append(engine.not_run(vid, "live", checks, "error",
                                               "the view is not live (not applied yet)", locate))
            continue
        spec = live[vid].spec if request.definition == "live" else decl.views[vid].resolved(vid)
        notes: list[str] = []
        try:
            source = _source(reader, vid, spec, notes)
        except NotReadable as exc:
            report.views.append(engine.not_run(vid, request.definition, checks, "skipped", str(exc), locate))
            continue
        targets, unrunnable = _targets(readers, checks)
        progress.view(n, len(views), vid, "check")
        if spark is None:  # a Spark that cannot start fails the whole check
            spark = _spark(ws, readers)
        try:
            result = engine.check_view(spark, vid, request.definition, source, checks, targets,
                                       locate, progress.stages, unrunnable)
        except ViewsyncError as exc:  # this view's checks cannot run: the rest go on
            if not request.keep_going:
                raise
            report.views.append(engine.not_run(vid, request.definition, checks, "error", redact(str(exc)), locate))
            spark = spark if spark.alive() else None
            continue
        result.notes = notes + result.notes
        report.views.append(result)
    report.spark = _spark_info(ws, spark)
    announce(ws, report)
    return report


def _targets(readers: Mapping[str, Reader], checks: tuple[Any, ...]
             ) -> tuple[dict[int, dict[str, Any]], dict[int, str]]:
    """(the source of each relationships check's `to` table (catalog.schema.table), why each
    relationships check whose table cannot be read cannot run)."""

    out: dict[int, dict[str, Any]] = {}
    unrunnable: dict[int, str] = {}
    for c in checks:
        if c.kind != "relationships":
            continue
        to = str(c.args["to"])
        try:
            target = ViewId.parse(to)
        except ValueError:
            unrunnable[c.index] = f"`to` must be catalog.schema.table, not {to!r}"
            continue
        reader = readers.get(target.catalog)
        if reader is None:
            unrunnable[c.index] = f"unknown catalog {target.catalog!r} in {to!r}"
            continue
        try:
            out[c.index] = reader.table_source(target.schema, target.name)
        except NotReadable as exc:
            unrunnable[c.index] = f"{to} cannot be read: {exc}"
    return out, unrunnable


def _locator(decl: Declarations, vid: ViewId) -> Callable[[Any], str | None]:
    def locate(check: Any) -> str | None:
        problem = getattr(decl, "problem", None)
        if problem is None:
            return None
        try:
            p = problem(vid, ("checks", check.index), "")
        except Exception:  # noqa: BLE001 - a location is a convenience
            return None
        return f"{p.file}:{p.line}:{p.column}"
    return locate


def announce(ws: Workspace, report: DiffReport | CheckReport) -> int:
    """Put the report's events (`view.diffed` / `checks.finished`) in the outbox and deliver
    them once, when the config has event sinks; a sink that is down keeps them pending for
    `viewsync events deliver`.

    Args:
        ws: the repository, opened.
        report: a diff or check report.

    Returns:
        How many events were enqueued (0 without sinks).

    Raises:
        ViewsyncError: the state store cannot be opened.
    """
    if not ws.config.events:
        return 0
    import uuid

    from reconciler.datareview import events as review_events
    from reconciler.datareview.model import DiffReport
    from reconciler.events import commands as event_cmds
    from reconciler.source import gitsrc

    git = gitsrc.info(ws.root, None).to_json() or {}
    items = (review_events.diff_events(report, git) if isinstance(report, DiffReport)
             else review_events.check_events(report, git))
    if not items:
        return 0
    engine = ws.state().engine
    emitter = event_cmds.open_emitter(ws.config, ws.root, engine)
    run_id = str(uuid.uuid4())
    events = [emitter.event(run_id, seq, kind, subject, data) for seq, (kind, subject, data) in enumerate(items)]
    with engine.begin() as conn:
        emitter.enqueue_new(conn, events)
    emitter.flush()
    return len(events)
