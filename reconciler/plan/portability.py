"""What an engine will make of a view the plan writes, known before anything is written.

Trino reads an Iceberg view's default namespace only together with its default catalog, which it
takes as the name of one of its own catalogs (TrinoRestCatalog.getView; measured with Trino 476 in
tests/engines/). A view on an Iceberg REST catalog whose trino SQL names a table by one or two
parts, with no default catalog declared, is one Trino cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.core import sql as vsql
from reconciler.plan.model import Plan


def trino_notes(plan: Plan, kinds: Mapping[str, str]) -> list[str]:
    """One warning per created or updated Iceberg REST view that Trino cannot resolve."""
    notes = []
    for action in plan.actions:
        spec = action.desired
        if spec is None or kinds.get(action.view.catalog) != "iceberg-rest" or spec.default_catalog:
            continue
        sql = spec.sql_for("trino")
        if sql is None:
            continue
        short = [".".join(p) for p in vsql.referenced_tables(sql, "trino") if len(p) < 3]
        if short:
            notes.append(f"{action.view}: Trino resolves {', '.join(sorted(set(short)))} only under a default "
                         f"catalog: declare default_catalog (the name Trino and the other engines give this "
                         f"catalog) or name the tables catalog.schema.table in the trino SQL")
    return notes
