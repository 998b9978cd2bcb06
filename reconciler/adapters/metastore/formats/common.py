"""Small pieces shared by the codecs."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from reconciler.adapters.metastore.formats.params import COLUMN_COMMENT_LIMIT
from reconciler.adapters.metastore.formats.table import HiveColumn
from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.errors import DecodeError
from reconciler.core.model import Column, ViewSpec


class FormatError(DecodeError, ValueError):
    """A table that does not decode in its format, or a spec a format cannot encode.
    (Still a ValueError: the codecs' own parsing catches rely on it.)"""


def invalid_spec(exc: ValidationError) -> str:
    """pydantic's error on a spec in one line: the located messages only."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: " * bool(e["loc"]) + str(e["msg"]).removeprefix("Value error, ")
                     for e in exc.errors())


def too_deep(columns: Iterable[Column], store: str) -> FormatError:
    """The error for columns whose encoding was too deep to serialise (catalog_json.TooDeep)
    to `store` ("the spark format", "an Iceberg view"...): it names the most deeply nested
    column, the one that cannot be written if any cannot."""
    col = max(columns, key=lambda c: coltypes.depth(coltypes.parse(c.type)), default=None)
    which = f"column {col.name!r}: type" if col is not None else "a column type"
    return FormatError(f"{which} nested too deeply to store in {store}")


def sql_for(spec: ViewSpec, dialect: str) -> str:
    sql = spec.sql_for(dialect)
    if sql is None:
        raise FormatError(f"the view has no {dialect!r} representation")
    return sql


def hive_columns(columns: Iterable[Column], comment_limit: int = COLUMN_COMMENT_LIMIT) -> list[HiveColumn]:
    """The one column codec of metastore catalogs: Hive types, and comments only up to the
    catalog's limit (HMS COLUMNS_V2.COMMENT holds 256 characters, Glue's CommentString 255);
    longer ones are left to the extras."""
    out = []
    for c in columns:
        comment = c.comment if c.comment is not None and len(c.comment) <= comment_limit else None
        out.append(HiveColumn(c.name, coltypes.hive_text(c.type), comment))
    return out


def to_hive_columns(spec: ViewSpec) -> list[HiveColumn]:
    """StorageDescriptor columns for the metastore; see hive_columns."""
    return hive_columns(spec.columns)


def fit_comments(columns: list[HiveColumn], comment_limit: int) -> list[HiveColumn]:
    """`columns` without the comments a catalog with a smaller limit cannot hold."""
    return [c if c.comment is None or len(c.comment) <= comment_limit else HiveColumn(c.name, c.type, None)
            for c in columns]


def from_hive_columns(cols: Iterable[HiveColumn]) -> list[Column]:
    """The metastore lowercases column names, so we do too (what a read returns)."""
    out = []
    for c in cols:
        try:
            ctype = coltypes.parse_from(c.type, "hive")
        except coltypes.ColumnTypeError as exc:
            raise FormatError(f"column {c.name!r}: {exc}") from None
        out.append(Column(name=c.name.lower(), type=ctype, comment=c.comment or None))
    return out


def text_of(original: str | None, expanded: str | None) -> str:
    """The SQL a user wrote (original text), else what the engine runs."""
    for text in (original, expanded):
        if text is not None and text.strip():
            return text
    raise FormatError("the view has no SQL text")


def alias_outputs(sql: str, dialect: str, names: list[str]) -> str:
    """`sql` with every unnamed output expression aliased to the matching name."""
    from sqlglot import exp

    tree = vsql.tree(sql, dialect)
    first = vsql.first_select(tree) if isinstance(tree, exp.Query) else None
    if tree is None or first is None:
        return sql
    for sel, name in zip(list(first.selects), names, strict=False):
        if not isinstance(sel, (exp.Alias, exp.Column)):
            sel.replace(exp.alias_(sel.copy(), name, quoted=True))
    return str(tree.sql(dialect=dialect))


def qualify_tables(sql: str, dialect: str, qualifier: list[str]) -> str:
    """`sql` with every unqualified table name qualified by `qualifier` (a database, or a
    catalog and a database) and backquoted, the way Hive writes viewExpandedText: engines that
    run the expanded text without the view's default namespace (Trino's Hive view translation,
    Coral) then find the tables. Only the references change; the rest of the text stays as
    written. Unchanged when sqlglot cannot place every reference."""
    refs = vsql.table_references(sql, vsql.sqlglot_dialect(dialect))
    bare = [r for r in refs or () if len(r.parts) == 1]
    if not bare or not qualifier:
        return sql
    lead = len(sql) - len(sql.lstrip())  # the references' offsets are into the trimmed query text
    out, at = [], 0
    for ref in bare:
        out += [sql[at:lead + ref.start], ".".join(map(backquote, [*qualifier, ref.parts[0]]))]
        at = lead + ref.end + 1
    return "".join(out) + sql[at:]


def backquote(name: str) -> str:
    """A Hive, Spark or Flink identifier in backquotes (a backquote in it doubled)."""
    return "`" + name.replace("`", "``") + "`"
