"""`viewsync generate --dialect D`: write the representation of dialect D that selected views
lack, transpiled by sqlglot from another of theirs (reconciler.plan.generation), into their view
files (reconciler.source.yamledit: comments and layout kept), marked `generated:`. Generated
representations whose source changed are written again; hand-written ones are never touched,
and one edited by hand only with `force`. Nothing is written unless every changed file still
loads; a second run with nothing changed writes nothing."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.core import deps
from reconciler.core import sql as vsql
from reconciler.core.errors import UserError
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan import dialect_differences, generation
from reconciler.plan.generation import GenerateReport, ViewResult
from reconciler.plan.spark_types import TableColumns
from reconciler.source import generated as vgen
from reconciler.source import yamledit
from reconciler.verify import sources as vsources

if TYPE_CHECKING:
    from reconciler.source.declarations import Declarations
    from reconciler.workspace import Workspace

@dataclass(frozen=True)
class GenerateRequest:
    dialect: str
    select: tuple[str, ...] = ()  # globs over catalog.schema.view; none: every view
    force: bool = False  # also write again generated representations edited by hand


def generate(ws: Workspace, request: GenerateRequest) -> GenerateReport:
    """Generate the missing (or stale) representations of `request.dialect` in the working tree.

    Raises:
        UserError: the dialect is not one sqlglot writes, or a view file cannot be written into
            (a flow mapping).
        ValidationFailed: a file as it would be written no longer loads (nothing is written).
    """
    if not vsql.knows(request.dialect):
        raise UserError(f"cannot generate dialect {request.dialect!r}: sqlglot does not know it")
    decl = ws.declarations_at(None)
    report = GenerateReport(request.dialect)
    known = _declared_columns(ws, decl)
    exact: dict[ViewId, list[int]] = {}  # divisions written with Spark's decimal type: not warned about
    texts = dict(decl.texts)
    for vid in sorted(decl.views, key=lambda v: decl.where[v]):
        if request.select and not any(fnmatch.fnmatchcase(str(vid), p) for p in request.select):
            continue
        columns = _columns_for(vid, decl.views[vid], known)
        result, new_text = _one(decl, vid, texts[decl.where[vid][0]], request, columns)
        texts[decl.where[vid][0]] = new_text
        report.views.append(result)
        exact[vid] = result.exact_at
    changed = {rel: t for rel, t in texts.items() if t != decl.texts.get(rel)}
    if changed:
        after = ws.declarations([(rel, changed.get(rel, t)) for rel, t in decl.texts.items()])
        for result in report.views:
            if result.outcome in ("added", "refreshed"):
                exact_here = exact.get(result.view, [])
                found = [f for f in generation.findings(after.views[result.view], request.dialect)
                         if not (f.code == dialect_differences.INTEGER_DIVISION and f.offset in exact_here)]
                result.warnings[:0] = generation.finding_lines(after, result.view, request.dialect, found)
        for rel, text in sorted(changed.items()):
            (ws.root / rel).write_text(text, encoding="utf-8")
            report.written.append(rel)
    return report


def _one(decl: Declarations, vid: ViewId, text: str, request: GenerateRequest,
         columns: TableColumns | None = None) -> tuple[ViewResult, str]:
    """What to do for one view, and its file's text after it."""
    spec, target = decl.views[vid], request.dialect
    marker = decl.generated.get(vid, {}).get(target)
    own = spec.sql_for(target)
    if own is not None and marker is None:
        return ViewResult(vid, "hand_written"), text
    source = marker.source if marker is not None else generation.source_dialect(spec, target)
    if own is not None and marker is not None:
        status = marker.status(spec.sql_for(marker.source), own)
        if status == "fresh" and _same(spec.sql_for(marker.source), marker.source, target, own, columns):
            return ViewResult(vid, "unchanged", source), text
        if status == "edited" and not request.force:  # "fresh" that differs: the inputs' types changed
            return ViewResult(vid, "edited", source), text
    source_sql = spec.sql_for(source) if source else None
    if source is None or source_sql is None:
        return ViewResult(vid, "no_source", source), text
    try:
        out = generation.transpile(source_sql, source, target, columns)
    except generation.GenerationGap as gap:
        return ViewResult(vid, "gap", source, str(gap)), text
    new = vgen.Generated(source, vgen.digest(source_sql), vgen.digest(out.sql))
    rel, index = decl.where[vid]
    new_text = yamledit.put_representation(text, index, target, out.sql, new.to_yaml(), rel)
    warnings = [f"{rel}: {vid}: sqlglot does not know the function {name}() and copied it as written: check "
                f"that {target} has it with the same meaning" for name in out.untranslated]
    typed = out.typed
    warnings += [f"{rel}: {vid}: the output `{e}` has no alias: Spark names it by its own rules, Trino `_colN`, "
                 f"so the column names differ: give it an alias" for e in (typed.unnamed if typed else [])]
    return ViewResult(vid, "added" if own is None else "refreshed", source, warnings=warnings,
                      exact_at=list(typed.exact_at) if typed else []), new_text


def _same(source_sql: str | None, source: str, target: str, own: str, columns: TableColumns | None) -> bool:
    """Whether generating again writes `own`: the marker's digest covers the source SQL only, and the
    declared types of the view's inputs (which decide the decimal casts) may have changed since."""
    if source_sql is None:
        return True
    try:
        return generation.transpile(source_sql, source, target, columns).sql == own
    except generation.GenerationGap:
        return True  # plan reports it; an up-to-date representation is not rewritten for it


Known = dict[tuple[str, str, str], dict[str, str]]  # (catalog, schema, table) lower-cased -> column -> type


def _declared_columns(ws: Workspace, decl: Declarations) -> Known:
    """The declared column types of the tables views read: the sources/ files, and views that
    declare their columns (a view reading another view)."""
    known: Known = {}
    for key, cols in vsources.read(ws.root).tables.items():
        known[key] = {c.name: c.type for c in cols}
    for vid, spec in decl.views.items():
        if spec.columns:
            known[(vid.catalog.lower(), vid.schema.lower(), vid.name.lower())] = {c.name: c.type for c in spec.columns}
    return known


def _columns_for(vid: ViewId, spec: ViewSpec, known: Known) -> TableColumns | None:
    """A view's table references resolved by the one resolution of references (`core.deps`): its
    default catalog and namespace first, as Spark reads them."""
    if not known:
        return None

    def columns(catalog: str | None, schema: str | None, table: str) -> dict[str, str] | None:
        return deps.lookup([p for p in (catalog, schema, table) if p], vid, spec, known)

    return columns
