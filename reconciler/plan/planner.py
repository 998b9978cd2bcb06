"""desired vs live -> Plan. Pure: no I/O here, adapters are only asked pure
questions (capabilities, storable, check).

`build_plan` is four steps, each its own function:
1. `decide_view`: for each declared view, an action (create / update / adopt),
   unchanged, or the plan errors that refuse it;
2. `sort_live_views`: live views that are not declared are unmanaged (listed),
   ours and no longer declared (kept, or dropped with prune);
3. `mass_drop_error`: the guard against dropping more than
   `policy.max_drop_fraction` of the managed views;
4. ordering: creates/updates in dependency order, drops in reverse.
The value it returns is described in `reconciler.plan.model`.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reconciler.adapters.base import CatalogAdapter, SchemaSnapshot
from reconciler.core import deps
from reconciler.core import sql as vsql
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import PREVIEW, LiveView, ViewId, ViewSpec
from reconciler.plan import change_kind
from reconciler.plan.model import (
    FORMAT_VERSION,
    Action,
    ActionKind,
    Change,
    Mismatch,
    Plan,
    PlanError,
    PlanErrorCode,
    PlanScope,
    Unmanaged,
    YamlChange,
)

__all__ = ["FORMAT_VERSION", "Action", "ActionKind", "Change", "Mismatch", "Plan", "PlanError", "PlanErrorCode",
           "PlanOptions", "PlanScope", "Unmanaged", "YamlChange", "build_plan", "diff_specs", "selected"]


@dataclass(frozen=True)
class PlanOptions:
    project: str
    prune: bool = False
    adopt: bool = False
    max_drop_fraction: float = 0.25
    allow_mass_drop: bool = False
    select: tuple[str, ...] = ()  # glob patterns over "catalog.schema.view"
    catalogs: tuple[str, ...] = ()  # limit to these catalogs

    def scope(self) -> PlanScope:
        """What a plan records of these options (the rest comes from the config)."""
        return PlanScope(catalogs=self.catalogs, select=self.select, prune=self.prune, adopt=self.adopt,
                         allow_mass_drop=self.allow_mass_drop)


def selected(view: ViewId, opts: PlanOptions) -> bool:
    if opts.catalogs and view.catalog not in opts.catalogs:
        return False
    if opts.select:
        text = str(view)
        return any(fnmatch.fnmatchcase(text, pat) for pat in opts.select)
    return True


# ------------------------------------------------------------------ diffing
def _sql_key(sql: str, dialect: str, rewrites: bool) -> str:
    return vsql.normalize(sql, dialect) if rewrites else sql.strip()


def diff_specs(want: ViewSpec, live: ViewSpec, rewrites_sql: bool = False) -> list[Change]:
    """Field-level changes that turn `live` into `want`, on canonical forms."""
    changes: list[Change] = []
    a, b = want.canonical(), live.canonical()
    for name in ("comment", "default_catalog", "default_namespace", "security", "owner"):
        if a[name] != b[name]:
            changes.append(Change(name, b[name], a[name]))
    if a["columns"] != b["columns"]:
        changes.append(Change("columns", b["columns"], a["columns"]))
    reps_a = {r["dialect"]: r["sql"] for r in a["representations"]}
    reps_b = {r["dialect"]: r["sql"] for r in b["representations"]}
    for dialect in sorted(set(reps_a) | set(reps_b)):
        before, after = reps_b.get(dialect), reps_a.get(dialect)
        if before is None or after is None:
            changes.append(Change(f"representations.{dialect}", before, after))
        elif _sql_key(before, dialect, rewrites_sql) != _sql_key(after, dialect, rewrites_sql):
            changes.append(Change(f"representations.{dialect}.sql", before, after))
    for key in sorted(set(a["properties"]) | set(b["properties"])):
        if a["properties"].get(key) != b["properties"].get(key):
            changes.append(Change(f"properties.{key}", b["properties"].get(key), a["properties"].get(key)))
    return changes


# ------------------------------------------------------------------ planning
@dataclass(frozen=True)
class Decision:
    """What plan does with one declared view. Nothing set: the view is unchanged."""

    action: Action | None = None
    errors: tuple[PlanError, ...] = ()
    mismatch: Mismatch | None = None  # read-only catalog differs (comes with an error)


UNCHANGED = Decision()


def _refuse(code: PlanErrorCode, message: str, view: ViewId) -> Decision:
    return Decision(errors=(PlanError(code, message, view),))


def decide_view(vid: ViewId, spec: ViewSpec, snap: SchemaSnapshot | None, adapter: CatalogAdapter,
                opts: PlanOptions) -> Decision:
    """The decision for one declared view against its schema's snapshot."""
    caps = adapter.capabilities
    if snap is None or not snap.exists:
        return _refuse(PlanErrorCode.SCHEMA_MISSING, f"{vid}: schema {vid.schema!r} does not exist "
                       f"in catalog {vid.catalog!r} ({adapter.kind})", vid)
    live = snap.find(vid.name, caps.fold_names)
    if _unchanged(adapter, vid, spec, live, opts.project):
        return UNCHANGED
    problems = adapter.check(vid, spec, live)
    if caps.writable and caps.writable_dialects is not None:  # read-only catalogs store nothing
        problems += [(PlanErrorCode.DIALECT_NOT_STORABLE,
                      f"{vid}: catalog {vid.catalog!r} ({adapter.kind}) cannot store dialect {d!r} "
                      f"(it stores: {', '.join(sorted(caps.writable_dialects))})")
                     for d in spec.dialects() if d not in caps.writable_dialects]
    if problems:
        return Decision(errors=tuple(PlanError(PlanErrorCode(code), message, vid) for code, message in problems))
    want = adapter.storable(vid, spec, live)
    if not caps.writable:
        return _decide_read_only(vid, spec, want, live, adapter)
    return _decide_writable(vid, want, live, snap, adapter, opts)


def _decide_read_only(vid: ViewId, spec: ViewSpec, want: ViewSpec, live: LiveView | None,
                      adapter: CatalogAdapter) -> Decision:
    """Read-only catalogs: declarations are expectations, any difference is an error."""
    if live is None:
        msg = f"{vid}: declared but not present in read-only catalog {vid.catalog!r}"
        return _refuse(PlanErrorCode.READ_ONLY_CATALOG, _read_only(msg, adapter), vid)
    changes = diff_specs(want, live.spec, adapter.capabilities.rewrites_sql)
    if not spec.columns:  # an expectation that names no columns does not constrain them
        changes = [c for c in changes if c.field != "columns"]
    if not changes:
        return UNCHANGED
    msg = f"{vid}: live view differs from the declaration ({', '.join(c.field for c in changes)})"
    return Decision(errors=(PlanError(PlanErrorCode.READ_ONLY_CATALOG, _read_only(msg, adapter), vid),),
                    mismatch=Mismatch(vid, tuple(changes)))


def _decide_writable(vid: ViewId, want: ViewSpec, live: LiveView | None, snap: SchemaSnapshot,
                     adapter: CatalogAdapter, opts: PlanOptions) -> Decision:
    caps = adapter.capabilities
    if live is None:
        if snap.has_table(vid.name, caps.fold_names):
            return _refuse(PlanErrorCode.NAME_IS_TABLE, f"{vid}: the name is taken by a table in catalog "
                           f"{vid.catalog!r}; views and tables share one namespace", vid)
        return Decision(Action("create", vid, caps.strategy, _creation_changes(want), None, want, None))
    if not live.writable:
        return _refuse(PlanErrorCode.NOT_A_VIEW, f"{vid}: the name is taken by an object viewsync must "
                       f"not touch (format {live.format})", vid)
    if live.managed_by is None:
        if not opts.adopt:
            return _refuse(PlanErrorCode.UNMANAGED_DECLARED, f"{vid}: a view with this name exists and is not "
                           "managed by viewsync; declare adoption (--adopt or policy.adopt) to take it over", vid)
        return Decision(Action("adopt", vid, caps.strategy, diff_specs(want, live.spec, caps.rewrites_sql),
                               live.fingerprint, want, live.spec, change_kind.classify(live.spec.canonical(),
                                                                                        want.canonical())))
    if live.managed_by != opts.project:
        return _refuse(PlanErrorCode.OWNED_BY_OTHER, f"{vid}: managed by project {live.managed_by!r}, "
                       f"not {opts.project!r}", vid)
    changes = diff_specs(want, live.spec, caps.rewrites_sql)
    if not changes:
        return UNCHANGED
    return Decision(Action("update", vid, caps.strategy, changes, live.fingerprint, want, live.spec,
                           change_kind.classify(live.spec.canonical(), want.canonical())))


@dataclass
class LiveOutcome:
    """What plan does with live views that are not declared."""

    unmanaged: list[Unmanaged] = field(default_factory=list)
    undeclared: list[ViewId] = field(default_factory=list)  # ours, kept (no prune)
    drops: list[Action] = field(default_factory=list)  # ours, dropped (prune)
    warnings: list[str] = field(default_factory=list)
    managed_total: int = 0  # views of this project in scope, declared or not


def sort_live_views(snapshots: Mapping[tuple[str, str], SchemaSnapshot], adapters: Mapping[str, CatalogAdapter],
                    declared: set[ViewId], opts: PlanOptions) -> LiveOutcome:
    """Unmanaged live views are listed; ours that are no longer declared are kept or pruned."""
    out = LiveOutcome()
    for (catalog, _schema), snap in sorted(snapshots.items()):
        adapter = adapters[catalog]
        caps = adapter.capabilities
        for name, live in sorted(snap.views.items()):
            if not selected(live.id, opts):
                continue
            if live.marks.get(PREVIEW) and live.managed_by == opts.project:
                continue  # a copy of a preview environment: `viewsync preview` owns it, never a plan
            if not live.writable:  # unreadable or not a logical view: listed, never dropped
                if live.id not in declared:
                    out.unmanaged.append(Unmanaged(live.id, live.format, live.managed_by))
                    if live.managed_by == opts.project:
                        out.warnings.append(f"{live.id} carries this project's marker but viewsync cannot "
                                            f"manage it ({live.format}); it is kept")
                continue
            if live.managed_by != opts.project or not caps.writable:
                if live.id not in declared:
                    out.unmanaged.append(Unmanaged(live.id, live.format, live.managed_by))
                continue
            out.managed_total += 1
            if live.id in declared or (caps.fold_names and any(
                    v.catalog == catalog and v.schema == live.id.schema and v.name.lower() == name.lower()
                    for v in declared)):
                continue
            if opts.prune:
                out.drops.append(Action("drop", live.id, caps.strategy, _drop_changes(live.spec),
                                        live.fingerprint, None, live.spec))
            else:
                out.undeclared.append(live.id)
                out.warnings.append(f"{live.id} is managed by this project but no longer declared; "
                                    "it is kept (use --prune or policy.prune to drop it)")
    return out


def mass_drop_error(drops: int, managed_total: int, opts: PlanOptions) -> PlanError | None:
    """Refuse a plan that drops more than policy.max_drop_fraction of the managed views."""
    if not drops or opts.allow_mass_drop or not managed_total:
        return None
    fraction = drops / managed_total
    if fraction <= opts.max_drop_fraction:
        return None
    return PlanError(
        PlanErrorCode.MASS_DROP, f"the plan drops {drops} of {managed_total} managed views "
        f"({fraction:.0%}), more than policy.max_drop_fraction ({opts.max_drop_fraction:.0%}); "
        "re-run with --allow-mass-drop if this is intended")


def build_plan(
    desired: Mapping[ViewId, ViewSpec],
    snapshots: Mapping[tuple[str, str], SchemaSnapshot],
    adapters: Mapping[str, CatalogAdapter],
    opts: PlanOptions,
    declarations_digest: str,
    git: GitInfo | None = None,
) -> Plan:
    plan = Plan(project=opts.project, declarations_digest=declarations_digest, git=git, scope=opts.scope())
    actions: list[Action] = []
    declared = {v for v in desired if selected(v, opts)}
    for vid in sorted(declared, key=ViewId.key):
        decision = decide_view(vid, desired[vid], snapshots.get((vid.catalog, vid.schema)),
                               adapters[vid.catalog], opts)
        plan.errors.extend(decision.errors)
        if decision.mismatch is not None:
            plan.drift.append(decision.mismatch)
        if decision.action is not None:
            actions.append(decision.action)
        elif not decision.errors:
            plan.unchanged += 1

    for (_catalog, _schema), snap in sorted(snapshots.items()):
        plan.warnings.extend(snap.warnings)
    live = sort_live_views(snapshots, adapters, declared, opts)
    plan.unmanaged, plan.undeclared = live.unmanaged, live.undeclared
    plan.warnings.extend(live.warnings)
    guard = mass_drop_error(len(live.drops), live.managed_total, opts)
    if guard is not None:
        plan.errors.append(guard)

    actions = _only_queries(actions, desired, plan)
    ordered, cycle = order_actions(actions, desired)
    if cycle:
        plan.errors.append(PlanError(PlanErrorCode.DEPENDENCY_CYCLE, "views depend on each other in a cycle: "
                                     + " -> ".join(str(v) for v in cycle), cycle[0], ("representations",)))
    drop_order, _ = order_actions(live.drops, {a.view: a.before for a in live.drops if a.before is not None})
    plan.actions = ordered + list(reversed(drop_order))
    return plan


def _unchanged(adapter: CatalogAdapter, vid: ViewId, spec: ViewSpec, live: LiveView | None, project: str) -> bool:
    """The no-op fast path, before any check (so before any SQL is parsed): the live view
    is ours, decodes to exactly the spec its marker names, and that is the spec we would
    store now. The stored encoding then is what we wrote for this very spec, so there
    is nothing to check or compare."""
    if (live is None or not live.writable or live.managed_by != project or live.spec_digest is None
            or not adapter.capabilities.writable):
        return False
    return live.spec_digest == live.spec.digest() == adapter.storable(vid, spec, live).digest()


def _only_queries(actions: list[Action], desired: Mapping[ViewId, ViewSpec], plan: Plan) -> list[Action]:
    """A view's SQL must be exactly one query in each dialect: `DROP TABLE t` or
    `SELECT 1; DROP TABLE t` would run as DDL in some engines. Checked for the
    actions only (a no-op plan parses nothing)."""
    kept = []
    for a in actions:
        spec = desired.get(a.view)
        bad = [] if spec is None else [(j, r.dialect, p) for j, r in enumerate(spec.representations)
                                       if (p := vsql.query_problem(r.sql, r.dialect))]
        for j, dialect, problem in bad:
            plan.errors.append(PlanError(PlanErrorCode.NOT_A_QUERY,
                                         f"{a.view}: representations.{dialect}.sql: {problem}", a.view,
                                         ("representations", j, "sql")))
        if not bad:
            kept.append(a)
    return kept


def _read_only(message: str, adapter: CatalogAdapter) -> str:
    return f"{message}; {adapter.READ_ONLY_MESSAGE}"


def _creation_changes(spec: ViewSpec) -> list[Change]:
    return diff_specs(spec, _nothing(spec.security))


@functools.lru_cache(maxsize=8)
def _nothing(security: str | None) -> ViewSpec:
    """What a create changes from (one per security mode: a create does not list it as a change).
    Shared: diff_specs only reads it."""
    return ViewSpec.model_construct(
        comment=None, columns=[], representations=[], default_catalog=None, default_namespace=None,
        security=security, owner=None, properties={})


def _drop_changes(spec: ViewSpec) -> list[Change]:
    return [Change(f"representations.{r.dialect}", r.sql, None) for r in spec.representations]


# -------------------------------------------------------------- dependencies
def dependencies(view: ViewId, spec: ViewSpec, universe: Iterable[ViewId]) -> set[ViewId]:
    """Views in `universe` that `spec`'s SQL reads (any representation)."""
    return deps.dependencies(view, spec, deps.index(universe))


def order_actions(
    actions: list[Action], specs: Mapping[ViewId, ViewSpec]
) -> tuple[list[Action], list[ViewId] | None]:
    """Actions in dependency order (a view after the views it reads), and a cycle
    through any of them (also via declared views without an action, and a view
    reading itself). Only the SQL of views reachable from an action is parsed, so
    a no-op plan parses nothing; linear in the views visited."""
    by_view = {a.view: a for a in actions}
    order, cycle = deps.order_views(by_view, specs)
    if cycle:
        return list(actions), cycle
    return [by_view[v] for v in order if v in by_view], None
