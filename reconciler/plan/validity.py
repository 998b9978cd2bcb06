"""Offline checks on loaded declarations that need the SQL: each view is exactly
one query, and views do not read each other in a cycle. `validate` runs them on
every view; plan runs the same checks on the views it would change, and `locate`
gives its errors the file:line:col of the declaration they are about."""

from __future__ import annotations

import dataclasses

from reconciler.core import deps
from reconciler.core import sql as vsql
from reconciler.core.errors import Problem
from reconciler.core.model import ViewId
from reconciler.plan.model import Location, Plan, PlanErrorCode
from reconciler.source import names
from reconciler.source.declarations import Declarations

# Spark's findings are located in their message already (reconciler.verify.result.Finding).
_LOCATED_IN_MESSAGE = {PlanErrorCode.SPARK_VERIFICATION}


def check(decl: Declarations) -> tuple[list[Problem], list[str]]:
    """(errors, warnings) for every declared view."""
    errors: list[Problem] = []
    warnings: list[str] = []
    for vid in sorted(decl.views, key=ViewId.key):
        for j, rep in enumerate(decl.views[vid].representations):
            not_query = vsql.query_problem(rep.sql, rep.dialect)  # SQL that does not parse included
            if not_query:
                offset = vsql.parse_error_offset(rep.sql, vsql.sqlglot_dialect(rep.dialect))
                errors.append(decl.sql_problem(vid, j, offset, not_query))
            elif not vsql.knows(rep.dialect):  # a custom dialect: sqlglot's generic reading is only a hint
                error = vsql.facts(rep.sql, None).error
                if error is not None:
                    warnings.append(str(decl.sql_problem(vid, j, vsql.parse_error_offset(rep.sql, None), (
                        f"sqlglot does not know the custom dialect {rep.dialect!r} and cannot read this SQL "
                        f"in its generic dialect ({error}); nothing checks it before the catalog does"))))
        for k, col in enumerate(decl.views[vid].columns):
            if names.surrounding_spaces(col.name):
                warnings.append(str(decl.problem(vid, ("columns", k, "name"), (
                    f"column name {col.name!r} begins or ends with a space; every query must quote it "
                    f"with its spaces (`{col.name}`)"))))
    cycle = deps.find_cycle(decl.views)
    if cycle:
        message = "views depend on each other in a cycle: " + " -> ".join(str(v) for v in cycle)
        errors.append(decl.problem(cycle[0], ("representations",), message))
    return errors, warnings


def locate(plan: Plan, decl: Declarations) -> None:
    """Every plan error about a declared view gets the location of that view's declaration
    (of the field at fault where the error names one), as `validate` reports it."""
    located = []
    for error in plan.errors:
        if error.location is None and error.view in decl.where and error.code not in _LOCATED_IN_MESSAGE:
            p = decl.problem(error.view, error.path, "")
            error = dataclasses.replace(error, location=Location(p.file, p.line, p.column, p.field))
        located.append(error)
    plan.errors = located
