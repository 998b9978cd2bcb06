"""Reading and writing whole views: engine format + extras + ownership marker.

This is the API adapters use (HMS, Glue): they convert their client's table
objects to `TableDesc` and call `read_view`, `write_view` and `check_view`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from reconciler.adapters import catalog_json
from reconciler.adapters.metastore.formats import flink, hive, spark, trino
from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats.common import FormatError, fit_comments, invalid_spec, too_deep
from reconciler.adapters.metastore.formats.detect import detect
from reconciler.adapters.metastore.formats.engine import EngineFormat
from reconciler.adapters.metastore.formats.table import TableDesc
from reconciler.core import coltypes
from reconciler.core.model import MANAGED_BY, SPEC_DIGEST, ViewSpec, spec_from_canonical

# Every format read, by name; those viewsync writes (WRITABLE) are the engine_format choices.
FORMATS: dict[str, EngineFormat] = {f.FORMAT: f for f in (spark.SPARK, trino.TRINO, hive.HIVE, flink.FLINK,
                                                          trino.TRINO_MATERIALIZED)}
CODECS: dict[str, EngineFormat] = {name: f for name, f in FORMATS.items() if f.WRITABLE}
WRITE_FORMATS = tuple(CODECS)  # formats viewsync can write
DIALECT_OF = {name: f.DIALECT for name, f in CODECS.items()}


@dataclass
class ReadView:
    format: str
    spec: ViewSpec
    managed_by: str | None
    spec_digest: str | None
    writable: bool


def read_view(table: TableDesc) -> ReadView:
    """Decode a view table in whatever format it is; raises FormatError when it cannot."""
    fmt = detect(table)
    if fmt is None:
        raise FormatError(f"{table.database}.{table.name} is a {table.table_type}, not a view")
    codec = FORMATS[fmt]
    if codec.WRITABLE:
        engine = codec.decode(table).canonical()
        spec = spec_from_canonical(P.apply_extras(engine, table.parameters))
    else:  # read as the engine holds it: viewsync wrote no extras
        spec = codec.decode(table)
    return ReadView(format=fmt, spec=spec, managed_by=table.parameters.get(MANAGED_BY),
                    spec_digest=table.parameters.get(SPEC_DIGEST), writable=codec.WRITABLE)


def write_view(
    fmt: str,
    database: str,
    name: str,
    spec: ViewSpec,
    marker: dict[str, str],
    *,
    base: TableDesc | None = None,
    engine_catalog: str | None = None,
    default_owner: str | None = None,
    writer: str | None = None,
    column_comment_limit: int = P.COLUMN_COMMENT_LIMIT,
) -> TableDesc:
    """The table to store for `spec` in format `fmt`, stamped with `marker`.

    With `base` (the live table of an update in the same format) engine
    bookkeeping we did not write (Spark's view.sqlConfig.*, Trino's version
    keys, transient_lastDdlTime...) is kept; user properties come only from
    `spec`. Column comments longer than `column_comment_limit` (the catalog's
    own limit, Glue's is lower than the metastore's) go to the extras.

    The table owner of a format whose engine records the view's creator is the declared
    owner, else the creator the live table records (an update by another user changes no
    owner), else `writer`: the user writing, as Hive and Spark record it. The extras record
    that the declaration names no owner, so the view reads back as declared.
    """
    codec = CODECS.get(fmt)
    if codec is None:
        raise FormatError(f"cannot write views in format {fmt!r} (known: {', '.join(WRITE_FORMATS)})")
    same = base is not None and detect(base) == fmt
    try:
        table: TableDesc = codec.encode(database, name, spec, engine_catalog=engine_catalog,
                                        base=base if same else None, default_owner=default_owner)
        if table.owner is None and codec.OWNER_IS_CREATOR:
            table.owner = _creator(base) or writer
        table.columns = fit_comments(table.columns, column_comment_limit)
        engine = codec.decode(table).canonical()
        table.parameters.update(P.extras_params(spec.canonical(), engine))
    except coltypes.ColumnTypeError as exc:
        raise FormatError(str(exc)) from None
    except ValidationError as exc:
        # What the engine would read back is no valid spec (e.g. two columns of one name):
        # a plan error through check_view, never an unexpected crash.
        raise FormatError(invalid_spec(exc)) from None
    except catalog_json.TooDeep:
        # A type CPython's JSON encoder cannot write (Spark's own reader, Jackson, stops at
        # 1,000 levels anyway): a plan error through check_view, never a RecursionError.
        raise too_deep(spec.columns, f"the {fmt} format") from None
    if base is not None:
        for key, value in base.parameters.items():
            if key in table.parameters or not P.is_engine_parameter(key) or key.startswith(P.VIEWSYNC_PREFIX):
                continue
            if key == "transient_lastDdlTime" or (same and not codec.owns(key)):
                table.parameters[key] = value
    table.parameters.update(marker)
    return table


def _creator(base: TableDesc | None) -> str | None:
    """The owner of the live table `base` when it records who created the view, not a declared
    owner (viewsync reads it without one); None otherwise."""
    if base is None or not base.owner:
        return None
    try:
        declared = read_view(base).spec.owner
    except ValueError:  # FormatError, or a spec that does not validate: no creator to keep
        return None
    return base.owner if declared is None else None


def check_view(fmt: str, spec: ViewSpec, where: str, *, default_owner: str | None = None,
               writer: str | None = None, owner_option: str = "trino_owner", database: str = "db", name: str = "v",
               engine_catalog: str | None = None,
               keep: Callable[[TableDesc], None] | None = None) -> list[tuple[str, str]]:
    """Plan errors for storing `spec` in format `fmt`; `where` names the catalog and view.
    The check encodes the view: given the real `database`, `name` and `engine_catalog`,
    `keep` receives the table (without a marker) when it is storable, so a create
    can reuse it instead of encoding again."""
    codec = CODECS.get(fmt)
    if codec is None:
        return [("dialect_not_storable", f"{where}: unknown write format {fmt!r}")]
    dialect = codec.DIALECT
    if spec.sql_for(dialect) is None:
        return [("dialect_not_storable",
                 f"{where}: the catalog writes views in the {fmt!r} format, which needs a "
                 f"{dialect!r} representation; the view has only {', '.join(spec.dialects())}")]
    if not spec.columns:
        return [("columns_required", f"{where}: views in the {fmt!r} format need their columns declared")]
    if fmt == trino.FORMAT and spec.security == "definer" and trino.definer(spec, default_owner) is None:
        # Trino runs a definer view as its owner and refuses one without (system security).
        return [("owner_required",
                 f"{where}: a definer view in the Trino format runs as its owner, and it has none: "
                 f"declare `owner`, declare `security: invoker`, or set the catalog's `{owner_option}`")]
    try:
        table = write_view(fmt, database, name, spec, {}, engine_catalog=engine_catalog, default_owner=default_owner,
                           writer=writer)
    except FormatError as exc:
        return [("not_storable", f"{where}: {exc}")]
    errors: list[tuple[str, str]] = []
    texts = (("view text", table.view_original_text), ("expanded view text", table.view_expanded_text))
    for label, text in texts:
        if text is not None and len(text) > P.VIEW_TEXT_LIMIT:
            errors.append(("value_too_long",
                           f"{where}: the {label} is {len(text)} characters in the {fmt!r} format; "
                           f"the metastore holds at most {P.VIEW_TEXT_LIMIT}"))
            break
    for col in table.columns:
        if len(col.type) > P.TYPE_NAME_LIMIT:
            errors.append(("value_too_long", f"{where}: the type of column {col.name!r} is {len(col.type)} "
                                             f"characters; the metastore holds at most {P.TYPE_NAME_LIMIT}"))
    if keep is not None and not errors:
        keep(table)
    return errors
