"""A view's SQL in the dialect a reader evaluates it in, and the error for what cannot be read.

Shared by the catalog readers (catalogs.py) and the file-backed managed tables (files.py), so
neither imports the other for it."""

from __future__ import annotations

from reconciler.core.model import ViewId, ViewSpec

# the dialects Spark evaluates as its own (jdbc: the database's own dialect instead)
SPARK_DIALECTS = ("spark", "databricks", "hive")


class NotReadable(Exception):
    """This catalog (or this view of it) cannot be read by the review's Spark; the message says why."""


def sql_in(spec: ViewSpec, vid: ViewId, dialect: str) -> tuple[str, str | None]:
    """The view's SQL in `dialect`: its own representation, else one generated the way `viewsync
    generate` does it (plan.generation), with a note saying so."""
    wanted = SPARK_DIALECTS if dialect == "spark" else (dialect,)
    for d in wanted:
        sql = spec.sql_for(d)
        if sql is not None:
            return sql, None
    from reconciler.plan import generation  # only when a representation is missing: sqlglot is slow to import

    source = generation.source_dialect(spec, dialect)
    if source is None:
        raise NotReadable(f"{vid}: no {dialect} SQL, and no representation sqlglot can generate it from")
    try:
        made = generation.transpile(spec.sql_for(source) or "", source, dialect)
    except generation.GenerationGap as gap:
        raise NotReadable(f"{vid}: no {dialect} SQL, and its {source} SQL does not transpile: {gap}") from None
    copied = f" (functions copied as written: {', '.join(made.untranslated)})" if made.untranslated else ""
    return made.sql, f"{vid}: {dialect} SQL generated from its {source} representation by sqlglot{copied}"
