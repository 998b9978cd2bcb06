"""Spark's use cases: `validate --spark`, `plan --spark`, `impact` and `import --sources`.
The verifier itself (scratch catalog, analysis, reports) is `verify/`; these functions
take the `Workspace` it must not know about."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import yaml

from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Plan, PlanOptions, build_plan
from reconciler.render.impact import ImpactReport
from reconciler.source import declarations as decl_mod
from reconciler.source import gitsrc
from reconciler.source.declarations import Declarations
from reconciler.verify import impact as vimpact
from reconciler.verify import planning, report, session, writeback
from reconciler.verify import sources as vsources
from reconciler.verify.analyze import Analysis, World
from reconciler.workspace import Workspace

Printer = Callable[[str], None]


def _files(ws: Workspace, ref: str | None) -> list[tuple[str, str]] | None:
    if not ref:
        return None
    # files_at gives bytes (decoding is the loader's job); these were loaded already
    return [(path, data.decode("utf-8", "replace")) for path, data in gitsrc.files_at(ws.root, ref)]


def validate(ws: Workspace, decl: Declarations, ref: str | None, write_columns: bool, out: Printer,
             err: Printer) -> None:
    """Analyse every declared view with Spark (tables from sources/).

    Args:
        ws: the repository, opened.
        decl: the declarations, valid offline.
        ref: the git ref they were read at (None: the working tree).
        write_columns: write Spark's columns into views that omit them.
        out: the report lines and the files written.
        err: warning lines.

    Raises:
        UserError: Spark found problems, or `write_columns` with `ref`.
        ValidationFailed: the files with columns written would no longer load (nothing is written).
    """
    files = _files(ws, ref)
    result = planning.validate(ws.root, ws.config, decl, files)
    for f in result.warnings():
        err(f"Warning: {f.message}")
    for line in report.text_lines(result.to_json()):
        out(line + "\n")
    errors = result.errors()
    if errors:
        raise UserError(f"{len(errors)} problem(s) found by Spark:\n" + "\n".join(f"  {f.message}" for f in errors))
    if write_columns:
        if ref:
            raise UserError("--write-columns writes the working tree; it cannot be used with --ref")
        texts = planning.file_texts(ws.root, decl, None)
        changed = writeback.write_columns(texts, decl.origin, result.inferred())  # type: ignore[arg-type]
        # The new files must still validate before anything is written.
        decl_mod.load([(f, changed.get(f, t)) for f, t in texts.items()], ws.config)
        for rel, text in changed.items():
            (ws.root / rel).write_text(text, encoding="utf-8")
            out(f"Wrote columns into {rel}\n")


def prestart(ws: Workspace) -> None:
    """Start Spark in the background (the config's `spark:` settings) while the caller loads."""
    session.prestart(planning.settings_of(ws.config))


def plan(ws: Workspace, opts: PlanOptions, decl: Declarations, git: GitInfo | None,
         ref: str | None, allow_breaking: bool) -> Plan:
    """The planner's plan, verified by Spark: columns inferred, breaking changes to dependents found.

    Args:
        ws: the repository, opened.
        opts: the plan's options.
        decl: the declarations.
        git: the commit they were read at, recorded in the plan.
        ref: the git ref they were read at (None: the working tree).
        allow_breaking: a change that breaks dependent views is a warning, not an error.

    Returns:
        The plan with Spark's findings among its errors and warnings.

    Raises:
        ViewsyncError: a catalog cannot be read or Spark cannot start.
    """
    prestart(ws)
    first, snapshots = ws.plan(opts, decl, git)
    catalogs = ws.catalogs_in_scope(opts)
    desired = {v: s for v, s in decl.views.items() if v.catalog in catalogs}
    adapters = ws.adapters(catalogs)
    digest = ws.declarations_digest(decl, opts)

    def rebuild(filled: Mapping[ViewId, ViewSpec]) -> Plan:
        return build_plan(filled, snapshots, adapters, opts, digest, git)

    return planning.verify_plan(first, rebuild, ws.root, ws.config, decl, desired, snapshots, ws.adapter,
                                _files(ws, ref), allow_breaking)


def impact(ws: Workspace, vid: ViewId) -> ImpactReport:
    """Dependents of `vid` and what its declared change (or, when unchanged, a drop) does to them.

    Args:
        ws: the repository, opened.
        vid: the view.

    Returns:
        The report: the scenario, Spark's analysis, each dependent's status.

    Raises:
        UserError: `vid` is neither declared nor live.
        ViewsyncError: a catalog cannot be read or Spark cannot start.
    """
    decl = ws.declarations()
    catalogs = sorted(ws.config.catalogs)
    snapshots = ws.fetch(catalogs, {(v.catalog, v.schema) for v in decl.views})
    live = planning.live_views(snapshots)
    desired = dict(decl.views)
    if vid not in desired and vid not in live:
        raise UserError(f"{vid} is neither declared nor a live view in the configured catalogs")
    lv = live.get(vid)
    dropped = vid not in desired
    scenario = "declared change"
    if not dropped and lv is not None and desired[vid].resolved(vid).canonical() == lv.spec.canonical():
        scenario, dropped = "if dropped", True
    elif not dropped and lv is None:
        scenario = "not yet applied"
    deps = vimpact.dependents([vid], desired, live).get(vid, set())
    after = {v: s for v, s in desired.items() if not (dropped and v == vid)}
    world = World(after, decl.origin, planning.file_texts(ws.root, decl, None), ws.config.catalogs,
                  vsources.read(ws.root), {v: x for v, x in live.items() if v != vid or not dropped},
                  planning.table_schemas_from(ws.adapter))
    analysis = Analysis(world, planning.settings_of(ws.config))
    targets = {d for d in deps if d in after} | ({vid} if not dropped else set())
    result = analysis.run(targets, {d for d in deps if d not in after})
    off = planning.column_findings(result)
    now = {**analysis.live_results, **result.results}
    if lv is not None and deps:
        # Other declared changes may reach the dependents too (or be their own): compare each with
        # this view as it is live, everything else as declared.
        before, before_off = planning.with_old_input(world, analysis.settings, vid, lv, deps)
        statuses = [vimpact.attributed_status(d, d in after, now.get(d), d in off, before.get(d), d in before_off)
                    for d in sorted(deps, key=ViewId.key)]
    else:
        statuses = [vimpact.dependent_status(d, d in after, now.get(d), live.get(d), d in off)
                    for d in sorted(deps, key=ViewId.key)]
    new_cols = None
    if not dropped:
        r = result.results.get(vid)
        new_cols = list(desired[vid].columns) or (r.columns if r else None)
    imp = vimpact.impact_of(vid, list(lv.spec.columns) if lv else None, new_cols, dropped, statuses)
    return ImpactReport(vid, scenario, len(deps), result.counts(), imp.to_json())


def import_sources(ws: Workspace, catalog: str, schemas: list[str] | None, force: bool, out: Printer,
                   err: Printer) -> None:
    """Write sources/<catalog>/<schema>.yaml with the columns of every table of each schema.

    Args:
        ws: the repository, opened.
        catalog: the configured catalog to read.
        schemas: only these schemas (all when None or empty).
        force: overwrite files that exist (else they are skipped, said on `err`).
        out: a line per file written, then the total.
        err: a line per file skipped.

    Raises:
        UserError: the catalog cannot report table schemas, or a named schema does not exist.
    """
    adapter = ws.adapter(catalog)
    method = getattr(adapter, "table_schemas", None)
    if method is None:
        raise UserError(f"catalog {catalog!r} ({adapter.kind}) cannot report table schemas")
    names = schemas or adapter.list_schemas()
    snapshots = ws.fetch([catalog], {(catalog, s) for s in names}, all_schemas=False)
    written = 0
    for (_, name), snap in sorted(snapshots.items()):
        if not snap.exists:
            raise UserError(f"schema {name!r} does not exist in catalog {catalog!r}")
        if not snap.tables:
            continue
        tables = method([(name, t) for t in sorted(snap.tables)])
        if not tables:
            continue
        path = ws.root / vsources.SOURCES_DIR / catalog / f"{name}.yaml"
        if path.exists() and not force:
            err(f"Skipped {path.relative_to(ws.root)}: exists (use --force to overwrite)")
            continue
        doc = vsources.document(catalog, name, {t: cols for (_, t), cols in tables.items()})
        path.parent.mkdir(parents=True, exist_ok=True)
        header = "# yaml-language-server: $schema=../../schemas/sources-file.schema.json\n"
        path.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100),
                        encoding="utf-8")
        written += len(tables)
        out(f"Wrote {path.relative_to(ws.root)} ({len(tables)} table(s))\n")
    out(f"Imported the columns of {written} table(s) from catalog {catalog!r}.\n")
