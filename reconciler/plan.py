"""desired vs live -> Plan. Pure: no I/O here, adapters are only asked pure
questions (capabilities, storable, check).

A Plan holds ordered actions (create / update / drop / adopt) with field-level
changes and the live fingerprint each was planned against, plan errors (which
make it unappliable), the unmanaged views seen, and warnings.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler import deps
from reconciler import sql as vsql
from reconciler.adapters.base import CatalogAdapter, SchemaSnapshot
from reconciler.model import ViewId, ViewSpec, digest_of

ActionKind = Literal["create", "update", "drop", "adopt"]
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Change:
    field: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}


@dataclass
class Action:
    action: ActionKind
    view: ViewId
    strategy: str
    changes: list[Change] = field(default_factory=list)
    live_fingerprint: str | None = None
    desired: dict[str, Any] | None = None  # canonical ViewSpec after the action (None for drop)
    before: dict[str, Any] | None = None  # canonical live ViewSpec (None for create)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action, "view": self.view.to_json(), "strategy": self.strategy,
            "changes": [c.to_json() for c in self.changes], "live_fingerprint": self.live_fingerprint,
            "desired": self.desired, "before": self.before,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Action:
        return cls(action=d["action"], view=ViewId(**d["view"]), strategy=d["strategy"],
                   changes=[Change(c["field"], c["before"], c["after"]) for c in d["changes"]],
                   live_fingerprint=d.get("live_fingerprint"), desired=d.get("desired"),
                   before=d.get("before"))


@dataclass(frozen=True)
class PlanError:
    code: str
    message: str
    view: ViewId | None = None

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json() if self.view else None, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class Unmanaged:
    view: ViewId
    format: str
    managed_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.view.to_json(), "format": self.format, "managed_by": self.managed_by}


@dataclass
class Plan:
    project: str
    declarations_digest: str
    git: dict[str, Any] | None = None
    actions: list[Action] = field(default_factory=list)
    errors: list[PlanError] = field(default_factory=list)
    unmanaged: list[Unmanaged] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unchanged: int = 0
    undeclared: list[ViewId] = field(default_factory=list)  # ours, no longer declared, kept
    drift: list[dict[str, Any]] = field(default_factory=list)  # read-only catalogs: expectation mismatches
    yaml_changes: list[dict[str, Any]] | None = None  # filled by `plan --base`
    scope: dict[str, Any] = field(default_factory=dict)  # options the plan was made with
    access: dict[str, Any] | None = None  # which access policy was checked, for whom (reconciler.access)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions)

    def summary(self) -> dict[str, int]:
        counts = {"create": 0, "update": 0, "drop": 0, "adopt": 0}
        for a in self.actions:
            counts[a.action] += 1
        return {**counts, "unchanged": self.unchanged}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "project": self.project,
            "declarations": {"digest": self.declarations_digest, "git": self.git, "scope": self.scope},
            "summary": self.summary(),
            "actions": [a.to_json() for a in self.actions],
            "errors": [e.to_json() for e in self.errors],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "warnings": list(self.warnings),
        }
        if self.yaml_changes is not None:
            out["yaml_changes"] = self.yaml_changes
        if self.access is not None:
            out["access"] = self.access
        return out

    def digest(self) -> str:
        return digest_of({"actions": [a.to_json() for a in self.actions],
                          "declarations": self.declarations_digest})

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        if d.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"unsupported plan format_version {d.get('format_version')!r}")
        plan = cls(project=d["project"], declarations_digest=d["declarations"]["digest"],
                   git=d["declarations"].get("git"))
        plan.actions = [Action.from_json(a) for a in d["actions"]]
        plan.errors = [PlanError(e["code"], e["message"], ViewId(**e["view"]) if e.get("view") else None)
                       for e in d["errors"]]
        plan.unmanaged = [Unmanaged(ViewId(u["catalog"], u["schema"], u["name"]), u["format"],
                                    u.get("managed_by")) for u in d["unmanaged"]]
        plan.warnings = list(d.get("warnings", []))
        plan.unchanged = int(d["summary"].get("unchanged", 0))
        plan.yaml_changes = d.get("yaml_changes")
        plan.scope = dict(d["declarations"].get("scope") or {})
        plan.access = d.get("access")
        return plan


@dataclass(frozen=True)
class PlanOptions:
    project: str
    prune: bool = False
    adopt: bool = False
    max_drop_fraction: float = 0.25
    allow_mass_drop: bool = False
    select: tuple[str, ...] = ()  # glob patterns over "catalog.schema.view"
    catalogs: tuple[str, ...] = ()  # limit to these catalogs


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
def build_plan(
    desired: Mapping[ViewId, ViewSpec],
    snapshots: Mapping[tuple[str, str], SchemaSnapshot],
    adapters: Mapping[str, CatalogAdapter],
    opts: PlanOptions,
    declarations_digest: str,
    git: dict[str, Any] | None = None,
) -> Plan:
    plan = Plan(project=opts.project, declarations_digest=declarations_digest, git=git,
                scope={"catalogs": list(opts.catalogs), "select": list(opts.select), "prune": opts.prune,
                       "adopt": opts.adopt, "allow_mass_drop": opts.allow_mass_drop})
    actions: list[Action] = []
    managed_total = 0
    declared = {v for v in desired if selected(v, opts)}

    for vid in sorted(declared, key=ViewId.key):
        spec = desired[vid]
        adapter = adapters[vid.catalog]
        caps = adapter.capabilities
        snap = snapshots.get((vid.catalog, vid.schema))
        if snap is None or not snap.exists:
            plan.errors.append(PlanError("schema_missing", f"{vid}: schema {vid.schema!r} does not exist "
                                         f"in catalog {vid.catalog!r} ({adapter.kind})", vid))
            continue
        live = snap.find(vid.name, caps.fold_names)
        problems = adapter.check(vid, spec, live)
        if caps.writable and caps.writable_dialects is not None:  # read-only catalogs store nothing
            problems += [("dialect_not_storable", f"{vid}: catalog {vid.catalog!r} ({adapter.kind}) cannot store "
                          f"dialect {d!r} (it stores: {', '.join(sorted(caps.writable_dialects))})")
                         for d in spec.dialects() if d not in caps.writable_dialects]
        for code, message in problems:
            plan.errors.append(PlanError(code, message, vid))
        if problems:
            continue
        want = adapter.storable(vid, spec, live)

        if not caps.writable:
            # Read-only catalogs: declarations are expectations, any difference is an error.
            if live is None:
                msg = f"{vid}: declared but not present in read-only catalog {vid.catalog!r}"
                plan.errors.append(PlanError("read_only_catalog", _read_only(msg, adapter), vid))
                continue
            changes = diff_specs(want, live.spec, caps.rewrites_sql)
            if not spec.columns:  # an expectation that names no columns does not constrain them
                changes = [c for c in changes if c.field != "columns"]
            if changes:
                fields = ", ".join(c.field for c in changes)
                msg = f"{vid}: live view differs from the declaration ({fields})"
                plan.errors.append(PlanError("read_only_catalog", _read_only(msg, adapter), vid))
                plan.drift.append({"view": vid, "kind": "changed", "changes": changes})
            else:
                plan.unchanged += 1
            continue

        if live is None:
            if snap.has_table(vid.name, caps.fold_names):
                plan.errors.append(PlanError("name_is_table", f"{vid}: the name is taken by a table in "
                                             f"catalog {vid.catalog!r}; views and tables share one namespace",
                                             vid))
                continue
            actions.append(Action("create", vid, caps.strategy, _creation_changes(want),
                                  None, want.canonical(), None))
            continue
        if not live.writable:
            plan.errors.append(PlanError("not_a_view", f"{vid}: the name is taken by an object viewsync must "
                                         f"not touch (format {live.format})", vid))
            continue
        if live.managed_by is None:
            if opts.adopt:
                actions.append(Action("adopt", vid, caps.strategy, diff_specs(want, live.spec, caps.rewrites_sql),
                                      live.fingerprint, want.canonical(), live.spec.canonical()))
            else:
                plan.errors.append(PlanError("unmanaged_declared", f"{vid}: a view with this name exists and "
                                             "is not managed by viewsync; declare adoption (--adopt or "
                                             "policy.adopt) to take it over", vid))
            continue
        if live.managed_by != opts.project:
            plan.errors.append(PlanError("owned_by_other", f"{vid}: managed by project "
                                         f"{live.managed_by!r}, not {opts.project!r}", vid))
            continue
        # Fast path: stored marker, declared spec and live spec all agree.
        want_digest = want.digest()
        if live.spec_digest == want_digest and live.spec.digest() == want_digest:
            plan.unchanged += 1
            continue
        changes = diff_specs(want, live.spec, caps.rewrites_sql)
        if changes:
            actions.append(Action("update", vid, caps.strategy, changes, live.fingerprint,
                                  want.canonical(), live.spec.canonical()))
        else:
            plan.unchanged += 1

    for (_catalog, _schema), snap in sorted(snapshots.items()):
        plan.warnings.extend(snap.warnings)

    # Live views: unmanaged ones are listed; ours that are no longer declared may be pruned.
    drops: list[Action] = []
    for (catalog, _schema), snap in sorted(snapshots.items()):
        adapter = adapters[catalog]
        for name, live in sorted(snap.views.items()):
            if not selected(live.id, opts):
                continue
            if not live.writable:  # unreadable or not a logical view: listed, never dropped
                if live.id not in declared:
                    plan.unmanaged.append(Unmanaged(live.id, live.format, live.managed_by))
                    if live.managed_by == opts.project:
                        plan.warnings.append(f"{live.id} carries this project's marker but viewsync cannot "
                                             f"manage it ({live.format}); it is kept")
                continue
            if live.managed_by != opts.project or not adapter.capabilities.writable:
                if live.id not in declared:
                    plan.unmanaged.append(Unmanaged(live.id, live.format, live.managed_by))
                continue
            managed_total += 1
            if live.id in declared or (adapter.capabilities.fold_names and any(
                    v.catalog == catalog and v.schema == live.id.schema and v.name.lower() == name.lower()
                    for v in declared)):
                continue
            if opts.prune:
                drops.append(Action("drop", live.id, adapter.capabilities.strategy,
                                    _drop_changes(live.spec), live.fingerprint, None, live.spec.canonical()))
            else:
                plan.undeclared.append(live.id)
                plan.warnings.append(f"{live.id} is managed by this project but no longer declared; "
                                     "it is kept (use --prune or policy.prune to drop it)")

    if drops and not opts.allow_mass_drop and managed_total:
        fraction = len(drops) / managed_total
        if fraction > opts.max_drop_fraction:
            plan.errors.append(PlanError(
                "mass_drop", f"the plan drops {len(drops)} of {managed_total} managed views "
                f"({fraction:.0%}), more than policy.max_drop_fraction ({opts.max_drop_fraction:.0%}); "
                "re-run with --allow-mass-drop if this is intended"))

    actions = _only_queries(actions, desired, plan)
    ordered, cycle = order_actions(actions, desired)
    if cycle:
        plan.errors.append(PlanError("dependency_cycle", "views depend on each other in a cycle: "
                                     + " -> ".join(str(v) for v in cycle), cycle[0]))
    drop_order, _ = order_actions(drops, {a.view: ViewSpec.model_validate(a.before) for a in drops
                                          if a.before is not None})
    plan.actions = ordered + list(reversed(drop_order))
    return plan


def _only_queries(actions: list[Action], desired: Mapping[ViewId, ViewSpec], plan: Plan) -> list[Action]:
    """A view's SQL must be exactly one query in each dialect: `DROP TABLE t` or
    `SELECT 1; DROP TABLE t` would run as DDL in some engines. Checked for the
    actions only (a no-op plan parses nothing)."""
    kept = []
    for a in actions:
        spec = desired.get(a.view)
        bad = [] if spec is None else [(r.dialect, p) for r in spec.representations
                                       if (p := vsql.query_problem(r.sql, r.dialect))]
        for dialect, problem in bad:
            plan.errors.append(PlanError("not_a_query", f"{a.view}: representations.{dialect}.sql: {problem}",
                                         a.view))
        if not bad:
            kept.append(a)
    return kept


def _read_only(message: str, adapter: CatalogAdapter) -> str:
    detail = getattr(adapter, "READ_ONLY_MESSAGE", None) or (
        f"catalog {adapter.name!r} is a read-only {adapter.kind} catalog; views can be managed in catalogs "
        "of type managed, iceberg-rest, hms or glue")
    return f"{message}; {detail}"


def _creation_changes(spec: ViewSpec) -> list[Change]:
    return diff_specs(spec, ViewSpec.model_construct(
        comment=None, columns=[], representations=[], default_catalog=None, default_namespace=None,
        security=spec.security, owner=None, properties={}))


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
