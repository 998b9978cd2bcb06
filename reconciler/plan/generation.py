"""Generated representations (issue 41): the SQL `viewsync generate` writes for a dialect a view
lacks, and what plan says about representations generated earlier. Pure: no engine, no I/O.

- `source_dialect`: the representation a new one is generated from. Deterministic: `spark` when
  the view has it (the pair whose differences are known), else the first other dialect sqlglot
  knows, in name order.
- `transpile`: sqlglot, its unsupported constructs raised (never written silently), the result
  read back as exactly one query in the target dialect. Functions sqlglot does not know are
  copied as written: each is named (`Transpiled.untranslated`) so the caller warns.
- `check`: plan's errors for stale (`stale_generated`) and hand-edited (`edited_generated`)
  generated representations; `difference_warnings`: the Spark constructs whose meaning differs
  on Trino (`dialect_differences`), at file:line:col of the spark SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler.core import sql as vsql
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan import dialect_differences, spark_types
from reconciler.plan.model import PlanError, PlanErrorCode
from reconciler.source.declarations import Declarations

Outcome = Literal["added", "refreshed", "unchanged", "hand_written", "edited", "gap", "no_source"]
# What each outcome means, for the report.
OUTCOMES: dict[str, str] = {
    "added": "generated",
    "refreshed": "generated again (its source SQL, or its inputs' declared types, changed)",
    "unchanged": "up to date",
    "hand_written": "written by hand (no `generated:` marker): left alone",
    "edited": "edited by hand since generated: left alone (--force writes it again; deleting the marker keeps it)",
    "gap": "not generated",
    "no_source": "no representation in a dialect sqlglot knows to generate from",
}


@dataclass
class ViewResult:
    view: ViewId
    outcome: Outcome
    source: str | None = None
    detail: str = ""  # a gap's cause
    warnings: list[str] = field(default_factory=list)  # file:line:col dialect differences, untranslated functions
    exact_at: list[int] = field(default_factory=list)  # divisions written with Spark's decimal type (offsets)

    def to_json(self) -> dict[str, Any]:
        return {"view": str(self.view), "outcome": self.outcome, "source": self.source, "detail": self.detail,
                "warnings": list(self.warnings)}


@dataclass
class GenerateReport:
    dialect: str
    views: list[ViewResult] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # files changed

    @property
    def ok(self) -> bool:
        return not any(v.outcome in ("gap", "no_source") for v in self.views)

    def to_json(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "ok": self.ok, "written": list(self.written),
                "views": [v.to_json() for v in self.views]}


class GenerationGap(Exception):
    """sqlglot cannot write this SQL in the target dialect; the message says why."""


@dataclass(frozen=True)
class Transpiled:
    sql: str
    untranslated: tuple[str, ...] = field(default=())  # functions sqlglot copied as written
    typed: spark_types.Rewritten | None = None  # what was written for Spark's types and names (spark -> trino)


def source_dialect(spec: ViewSpec, target: str) -> str | None:
    """The dialect to generate `target` from, or None when the view has no other one sqlglot knows."""
    others = [d for d in spec.dialects() if d != target and vsql.knows(d)]
    if "spark" in others:
        return "spark"
    return sorted(others)[0] if others else None


def transpile(sql: str, source: str, target: str, columns: spark_types.TableColumns | None = None) -> Transpiled:
    """`sql` (in `source`'s dialect) written in `target`'s, pretty-printed.

    From spark to trino, unaliased outputs get Spark's name where it is certain, and with `columns`
    (the declared columns of the tables the query reads) an avg of a decimal and a division of two
    decimals return Spark's type and value (`spark_types`); without, sqlglot's translation stands.

    Raises:
        GenerationGap: sqlglot cannot read it, cannot write one of its constructs in `target`,
            or what it wrote is not exactly one query there.
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError

    read, write = vsql.sqlglot_dialect(source), vsql.sqlglot_dialect(target)
    problem = vsql.query_problem(sql, source)
    if problem:
        raise GenerationGap(problem)
    try:
        tree = sqlglot.parse_one(vsql.query_text(sql), read=read)
        typed = None
        if (source, target) == ("spark", "trino"):
            typed = spark_types.name_outputs(tree)
            if columns is not None:
                done = spark_types.rewrite(tree, columns)
                typed.avg, typed.divisions, typed.exact_at = done.avg, done.divisions, done.exact_at
        out = tree.sql(dialect=write, pretty=True, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as err:
        raise GenerationGap(f"sqlglot cannot write it in {target}: {_first_line(err)}") from None
    problem = vsql.query_problem(out, target)
    if problem:
        raise GenerationGap(f"sqlglot wrote SQL that {target} does not read as one query: {problem}")
    unknown = sorted({n.name.lower() for n in tree.find_all(exp.Anonymous)})
    return Transpiled(out, tuple(unknown), typed)


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def check(decl: Declarations, views: Iterable[ViewId]) -> list[PlanError]:
    """A plan error for each generated representation of `views` whose source SQL changed
    since it was generated, or whose own SQL was edited by hand."""
    errors: list[PlanError] = []
    for vid in sorted(views, key=ViewId.key):
        spec = decl.views[vid]
        for dialect, marker in sorted(decl.generated.get(vid, {}).items()):
            own = spec.sql_for(dialect)
            if own is None:
                continue
            status = marker.status(spec.sql_for(marker.source), own)
            path = ("representations", decl.rep_index[vid][dialect], "generated")
            if status == "stale":
                errors.append(PlanError(PlanErrorCode.STALE_GENERATED, (
                    f"{vid}: the {dialect} SQL was generated from the {marker.source} SQL, which changed "
                    f"since: run `viewsync generate --dialect {dialect}`, or delete its `generated:` "
                    f"marker to keep it by hand"), vid, path))
            elif status == "edited":
                errors.append(PlanError(PlanErrorCode.EDITED_GENERATED, (
                    f"{vid}: the {dialect} SQL is not what `viewsync generate` wrote: delete its "
                    f"`generated:` marker to keep the edit by hand, or run `viewsync generate --dialect "
                    f"{dialect} --force` to write it again"), vid, path))
    return errors


def findings(spec: ViewSpec, target: str) -> list[dialect_differences.Finding]:
    """The differences of the source SQL `target` is (or would be) generated from; none when
    the pair is not one whose differences are known or the SQL cannot be read."""
    source = source_dialect(spec, target)
    sql = spec.sql_for(source) if source else None
    if source is None or sql is None or (source, target) not in dialect_differences.SUPPORTED:
        return []
    try:
        return dialect_differences.differences(sql, source, target)
    except ValueError:
        return []  # unreadable SQL is not_a_query's to report


def difference_warnings(decl: Declarations, views: Iterable[ViewId]) -> list[str]:
    """`file:line:col: [code] view (spark SQL, trino): message` for each construct of a view's spark SQL whose
    meaning differs on Trino, for views that have both a spark and a trino representation."""
    out: list[str] = []
    for vid in sorted(views, key=ViewId.key):
        spec = decl.views.get(vid)
        if spec is None or spec.sql_for("trino") is None:
            continue
        out += finding_lines(decl, vid, "trino", findings(spec, "trino"))
    return out


def finding_lines(decl: Declarations, vid: ViewId, target: str,
                  found: Iterable[dialect_differences.Finding]) -> list[str]:
    spec = decl.views[vid]
    source = source_dialect(spec, target)
    if source is None:
        return []
    j = decl.rep_index[vid][source]
    out = []
    for f in found:
        at = decl.sql_problem(vid, j, f.offset, "")  # the construct's line and column in the file
        out.append(f"{at.file}:{at.line}:{at.column}: [{f.code}] {vid} ({source} SQL, {target}): {f.message}")
    return out


def report_text(report: GenerateReport) -> str:
    """One line per view, its warnings under it, then the files written."""
    lines = []
    for v in report.views:
        source = f" from {v.source}" if v.source and v.outcome in ("added", "refreshed", "gap") else ""
        detail = f": {v.detail}" if v.detail else ""
        lines.append(f"{v.view}: {report.dialect} {OUTCOMES[v.outcome]}{source}{detail}")
        lines += [f"  Warning: {w}" for w in v.warnings]
    lines += [f"Wrote {rel}" for rel in report.written] or ["No file changed."]
    return "\n".join(lines) + "\n"
