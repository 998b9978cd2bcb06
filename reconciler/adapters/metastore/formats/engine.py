"""The base of the engine formats: what every engine's view encoding has, as class data.

sqlglot-dialect style: `EngineFormat` holds the defaults and the shared behaviour, each
leaf (spark, trino, hive, flink) holds only its differences as class attributes plus its
`encode` / `decode`. Leaves are stateless; `codec.FORMATS` holds one instance of each.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

from reconciler.adapters.metastore.formats.common import sql_for
from reconciler.adapters.metastore.formats.table import HiveColumn, TableDesc
from reconciler.core import coltypes
from reconciler.core.model import ViewSpec


class Storage(NamedTuple):
    """The storage hints of a view table (StorageDescriptor / SerDeInfo)."""

    input_format: str
    output_format: str
    serde_lib: str


# What Hive and Spark write for a view: SequenceFile formats and the lazy SerDe.
SEQUENCE_FILE = Storage("org.apache.hadoop.mapred.SequenceFileInputFormat",
                        "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
                        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")


class EngineFormat(ABC):
    """One engine's encoding of a view as a metastore table."""

    FORMAT: ClassVar[str]  # its name (LiveView.format, the engine_format option)
    DIALECT: ClassVar[str]  # the dialect of the SQL it holds
    TYPES: ClassVar[str]  # the coltypes target its column types are written in
    WRITABLE: ClassVar[bool] = True  # False: decoded for reporting, never written
    # The table parameters it writes (an update in the same format replaces them all;
    # other engine parameters of the live table are kept).
    OWNED_KEYS: ClassVar[frozenset[str]] = frozenset()
    OWNED_PREFIXES: ClassVar[tuple[str, ...]] = ()
    STORAGE: ClassVar[Storage | None] = None  # None: left unset (or as the live table has them)
    # The engine's usual name for the metastore, written when a view declares no
    # default_catalog and the catalog names none; None: the format stores no catalog.
    DEFAULT_CATALOG: ClassVar[str | None] = None
    # The engine records the user who created a view as the table owner (Hive, Spark, and Flink
    # through Hive's Table.getEmptyTable); Trino's Hive view translation runs such a view as that
    # owner and refuses one without ("Run-as identity must be set for a run-as definer view").
    OWNER_IS_CREATOR: ClassVar[bool] = True

    def owns(self, key: str) -> bool:
        """Returns: whether table parameter `key` is one this format writes."""
        return key in self.OWNED_KEYS or key.startswith(self.OWNED_PREFIXES)

    def same_type(self, native: object, canonical: str) -> bool:
        """Returns: whether `native` (a type as this engine spelt it) means the canonical type,
        so a rewrite may keep the engine's own spelling."""
        try:
            return isinstance(native, str) and coltypes.parse_from(native, self.TYPES) == canonical
        except coltypes.ColumnTypeError:
            return False

    def sql(self, spec: ViewSpec) -> str:
        """Returns: the spec's SQL in this format's dialect.

        Raises:
            FormatError: the spec has none.
        """
        return sql_for(spec, self.DIALECT)

    def qualifier(self, spec: ViewSpec, database: str, engine_catalog: str | None = None) -> list[str]:
        """Returns: what an unqualified table name of the view's SQL means, as the prefix its
        viewExpandedText gives it: the default namespace (the view's database unless declared),
        after the default catalog when that is not this metastore's own name; [] when the
        namespace is not one database (the text then stays as written)."""
        ns = spec.default_namespace if spec.default_namespace is not None else [database]
        if len(ns) != 1:
            return []
        own = engine_catalog or self.DEFAULT_CATALOG
        catalog = spec.default_catalog
        return [ns[0]] if catalog is None or catalog == own else [catalog, ns[0]]

    def table(self, database: str, name: str, *, original: str | None, expanded: str | None,
              parameters: dict[str, str], columns: list[HiveColumn], owner: str | None) -> TableDesc:
        """Returns: a view table in this format, with its storage hints."""
        storage = self.STORAGE
        return TableDesc(database=database, name=name, view_original_text=original, view_expanded_text=expanded,
                         parameters=parameters, columns=columns, owner=owner,
                         input_format=storage.input_format if storage else None,
                         output_format=storage.output_format if storage else None,
                         serde_lib=storage.serde_lib if storage else None)

    @abstractmethod
    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        """The table storing `spec` in this format, without extras or marker.

        Args:
            database, name: where the view lives.
            spec: the view.
            engine_catalog: the engine's name for this metastore (None: DEFAULT_CATALOG).
            base: the live table of an update in this format: what the engine wrote and
                the spec does not model is kept from it.
            default_owner: the user a definer view runs as when it declares no owner.

        Returns:
            The table.

        Raises:
            FormatError: the spec cannot be stored in this format.
            ColumnTypeError: a column type has no spelling in this engine.
        """

    @abstractmethod
    def decode(self, table: TableDesc) -> ViewSpec:
        """The view a table in this format holds, as the engine sees it (without extras).

        Raises:
            FormatError: the table does not decode in this format.
        """
