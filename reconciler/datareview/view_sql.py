"""A view's SQL in the dialect a reader evaluates it in, and the error for what cannot be read.

Shared by the catalog readers (catalogs.py) and the file-backed managed tables (files.py), so
neither imports the other for it."""

from __future__ import annotations

from reconciler.core.model import ViewId, ViewSpec
from reconciler.core.sql import sqlglot_dialect

# the dialects Spark evaluates as its own (jdbc: the database's own dialect instead)
SPARK_DIALECTS = ("spark", "databricks", "hive")


class NotReadable(Exception):
    """This catalog (or this view of it) cannot be read by the review's Spark; the message says why."""


def sql_in(spec: ViewSpec, vid: ViewId, dialect: str) -> tuple[str, str | None]:
    """The view's SQL in `dialect`: its own representation, else one transpiled by sqlglot (said)."""
    wanted = SPARK_DIALECTS if dialect == "spark" else (dialect,)
    for d in wanted:
        sql = spec.sql_for(d)
        if sql is not None:
            return sql, None
    rep = spec.representations[0]
    import sqlglot  # only when a representation is missing: sqlglot is slow to import

    try:
        out = sqlglot.transpile(rep.sql, read=sqlglot_dialect(rep.dialect), write=sqlglot_dialect(dialect))[0]
    except sqlglot.errors.SqlglotError as exc:
        raise NotReadable(f"{vid}: no {dialect} SQL, and its {rep.dialect} SQL does not transpile: "
                          f"{str(exc).splitlines()[0]}") from None
    return out, f"{vid}: {dialect} SQL generated from its {rep.dialect} representation by sqlglot"
