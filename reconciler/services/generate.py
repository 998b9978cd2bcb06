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

from reconciler.core import sql as vsql
from reconciler.core.errors import UserError
from reconciler.core.model import ViewId
from reconciler.plan import generation
from reconciler.plan.generation import GenerateReport, ViewResult
from reconciler.source import generated as vgen
from reconciler.source import yamledit

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
    texts = dict(decl.texts)
    for vid in sorted(decl.views, key=lambda v: decl.where[v]):
        if request.select and not any(fnmatch.fnmatchcase(str(vid), p) for p in request.select):
            continue
        result, new_text = _one(decl, vid, texts[decl.where[vid][0]], request)
        texts[decl.where[vid][0]] = new_text
        report.views.append(result)
    changed = {rel: t for rel, t in texts.items() if t != decl.texts.get(rel)}
    if changed:
        after = ws.declarations([(rel, changed.get(rel, t)) for rel, t in decl.texts.items()])
        for result in report.views:
            if result.outcome in ("added", "refreshed"):
                found = generation.findings(after.views[result.view], request.dialect)
                result.warnings[:0] = generation.finding_lines(after, result.view, request.dialect, found)
        for rel, text in sorted(changed.items()):
            (ws.root / rel).write_text(text, encoding="utf-8")
            report.written.append(rel)
    return report


def _one(decl: Declarations, vid: ViewId, text: str, request: GenerateRequest) -> tuple[ViewResult, str]:
    """What to do for one view, and its file's text after it."""
    spec, target = decl.views[vid], request.dialect
    marker = decl.generated.get(vid, {}).get(target)
    own = spec.sql_for(target)
    if own is not None and marker is None:
        return ViewResult(vid, "hand_written"), text
    source = marker.source if marker is not None else generation.source_dialect(spec, target)
    if own is not None and marker is not None:
        status = marker.status(spec.sql_for(marker.source), own)
        if status == "fresh":
            return ViewResult(vid, "unchanged", source), text
        if status == "edited" and not request.force:
            return ViewResult(vid, "edited", source), text
    source_sql = spec.sql_for(source) if source else None
    if source is None or source_sql is None:
        return ViewResult(vid, "no_source", source), text
    try:
        out = generation.transpile(source_sql, source, target)
    except generation.GenerationGap as gap:
        return ViewResult(vid, "gap", source, str(gap)), text
    new = vgen.Generated(source, vgen.digest(source_sql), vgen.digest(out.sql))
    rel, index = decl.where[vid]
    new_text = yamledit.put_representation(text, index, target, out.sql, new.to_yaml(), rel)
    warnings = [f"{rel}: {vid}: sqlglot does not know the function {name}() and copied it as written: check "
                f"that {target} has it with the same meaning" for name in out.untranslated]
    return ViewResult(vid, "added" if own is None else "refreshed", source, warnings=warnings), new_text
