"""The verifier's hooks into validate and plan: which views to analyse, where
table schemas come from, and how findings, inferred columns and impact land
in the plan."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from reconciler.adapters.base import AdapterError, CatalogAdapter, SchemaSnapshot
from reconciler.core.errors import UserError
from reconciler.core.model import Column, LiveView, ViewId, ViewSpec
from reconciler.core.secrets import redact
from reconciler.plan.planner import Plan, PlanError, PlanErrorCode
from reconciler.source.config import Config
from reconciler.source.declarations import Declarations
from reconciler.source.spark_settings import SparkSettings
from reconciler.verify import impact as vimpact
from reconciler.verify import sources as vsources
from reconciler.verify.analyze import Analysis, World
from reconciler.verify.result import Verification, ViewResult


def settings_of(config: Config) -> SparkSettings:
    got = getattr(config, "spark", None)
    return got if isinstance(got, SparkSettings) else SparkSettings()


def file_texts(root: Path, decl: Declarations, files: list[tuple[str, str]] | None) -> dict[str, str]:
    if files is not None:
        return dict(files)
    out: dict[str, str] = {}
    for rel in decl.files:
        try:
            out[rel] = (root / rel).read_text(encoding="utf-8")
        except OSError:
            continue
    return out


def validate(root: Path, config: Config, decl: Declarations,
             files: list[tuple[str, str]] | None = None) -> Verification:
    """Offline: every declared view with Spark SQL, tables from sources/ only."""
    world = World(decl.views, decl.origin, file_texts(root, decl, files), config.catalogs,
                  vsources.read(root), offline=True)
    return Analysis(world, settings_of(config)).run()


def table_schemas_from(adapters: Callable[[str], CatalogAdapter]) -> Callable[
        [str, list[tuple[str, str]]], dict[tuple[str, str], list[Column]]]:
    def fetch(catalog: str, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        adapter = adapters(catalog)
        method = getattr(adapter, "table_schemas", None)
        if method is None:
            return {}
        try:
            got: dict[tuple[str, str], list[Column]] = method(tables)
        except AdapterError as err:
            raise UserError(redact(str(err))) from None
        return got
    return fetch


def live_views(snapshots: Mapping[tuple[str, str], SchemaSnapshot]) -> dict[ViewId, LiveView]:
    return {v.id: v for snap in snapshots.values() for v in snap.views.values()}


COLUMN_CODES = ("column_type", "column_count", "CANNOT_UP_CAST_DATATYPE")


def column_findings(result: Verification) -> set[ViewId]:
    """Views whose declared columns do not match Spark's output."""
    return {f.view for f in result.findings if f.code in COLUMN_CODES}


def with_old_input(world: World, settings: SparkSettings, view: ViewId, old: LiveView | None,
                   deps: Iterable[ViewId]) -> tuple[dict[ViewId, ViewResult], set[ViewId]]:
    """Results of `deps` in `world` with `view` as it is live (absent when it is not): their own
    SQL held fixed, so a difference from `world` is caused by `view` alone."""
    declared = {v: s for v, s in world.declared.items() if v != view}
    if old is not None:
        declared[view] = old.spec
    analysis = Analysis(dataclasses.replace(world, declared=declared), settings)
    wanted = set(deps)
    result = analysis.run({d for d in wanted if d in declared},
                          {d for d in wanted if d not in declared and d in world.live})
    return {**analysis.live_results, **result.results}, column_findings(result)


def verify_plan(
    plan: Plan,
    rebuild: Callable[[Mapping[ViewId, ViewSpec]], Plan],
    root: Path,
    config: Config,
    decl: Declarations,
    desired: Mapping[ViewId, ViewSpec],
    snapshots: Mapping[tuple[str, str], SchemaSnapshot],
    adapters: Callable[[str], CatalogAdapter],
    files: list[tuple[str, str]] | None = None,
    allow_breaking: bool = False,
    everything: bool = False,
) -> Plan:
    """Verify the views `plan` touches (all of them with `everything`), fill omitted
    columns from Spark, re-plan with them (`rebuild`), and add findings and impact."""
    live = live_views(snapshots)
    dropped = {a.view for a in plan.actions if a.action == "drop"}
    still = {v: lv for v, lv in live.items() if v not in dropped}  # what the catalogs hold after apply
    texts = file_texts(root, decl, files)
    srcs = vsources.read(root)
    schemas = table_schemas_from(adapters)
    targets = None
    if not everything:
        targets = {a.view for a in plan.actions if a.action != "drop"}
        targets |= {v for v, s in desired.items() if not s.columns}
        targets |= {e.view for e in plan.errors if e.view is not None and e.view in desired}
    analysis = Analysis(World(desired, decl.origin, texts, config.catalogs, srcs, still, schemas),
                        settings_of(config))
    result = analysis.run(targets)
    filled = dict(desired)
    for vid, cols in result.inferred().items():
        filled[vid] = desired[vid].model_copy(update={"columns": cols})
    if len(result.inferred()):
        plan = rebuild(filled)

    # Impact: dependents of what the (final) plan changes or drops, re-analysed against the new state.
    changed = [a.view for a in plan.actions if a.action in ("update", "drop")]
    deps = vimpact.dependents(changed, filled, live)
    pending = {d for ds in deps.values() for d in ds if d in filled and d not in result.results}
    live_subjects = {d for ds in deps.values() for d in ds if d not in filled and d not in dropped}
    live_results = dict(analysis.live_results)
    planned = World(filled, decl.origin, texts, config.catalogs, srcs, still, schemas)
    if pending or live_subjects:
        second = Analysis(planned, settings_of(config))
        more = second.run(pending, live_subjects)
        for vid, r in more.results.items():
            if vid not in result.results:
                result.results[vid] = r
                result.findings += [f for f in more.findings if f.view == vid]
        live_results.update(second.live_results)
    off = column_findings(result)
    # A dependent that changes itself, or reads another changed view, cannot be compared with what
    # it is live: it is analysed once more with only this view as it is live.
    themselves = {a.view for a in plan.actions if a.action in ("create", "update")}
    reached = Counter(d for ds in deps.values() for d in ds)
    for vid in changed:
        lv = live.get(vid)
        after_result = result.results.get(vid)
        after = None
        if vid not in dropped and vid in filled:
            after = list(filled[vid].columns) or (after_result.columns if after_result else None)
        mine = deps.get(vid, set()) - dropped  # a view this plan drops no longer reads anything
        unclear = {d for d in mine if d in themselves or reached[d] > 1}
        before: dict[ViewId, ViewResult] = {}
        before_off: set[ViewId] = set()
        if unclear:
            before, before_off = with_old_input(planned, settings_of(config), vid, lv, mine)
        ds = []
        for d in sorted(mine, key=ViewId.key):
            now = result.results.get(d) or live_results.get(d)
            if d in unclear:
                ds.append(vimpact.attributed_status(d, d in filled, now, d in off, before.get(d), d in before_off))
            else:
                ds.append(vimpact.dependent_status(d, d in filled, now, live.get(d), d in off))
        imp = vimpact.impact_of(vid, list(lv.spec.columns) if lv else None, after, vid in dropped, ds)
        result.impact.append(imp)
        if imp.breaking and not allow_breaking:
            names = ", ".join(f"{d.view} ({d.status.replace('_', '-').upper()})" for d in imp.dependents)
            message = (f"{vid}: breaking change ({imp.detail}); it is read by {names}; re-run with "
                       "--allow-breaking if this is intended")
            plan.errors.append(PlanError(PlanErrorCode.BREAKING_CHANGE, message, vid))
    # A view Spark cannot analyse gets Spark's error, not also "declare its columns".
    failed = {f.view for f in result.findings if f.severity == "error"}
    plan.errors = [e for e in plan.errors if not (e.code is PlanErrorCode.COLUMNS_REQUIRED and e.view in failed)]
    for f in result.findings:
        if f.severity == "error":
            plan.errors.append(PlanError(PlanErrorCode.SPARK_VERIFICATION, f.message, f.view))
        else:
            plan.warnings.append(f.message)
    plan.verification = result.to_json()
    return plan
