"""How the review's Spark reads each catalog kind, derived from the catalog's own config.

- `hms`: Spark's Hive catalog (`spark.sql.catalogImplementation=hive`) on the catalog's `uri`;
  one metastore is Spark's session catalog, so one `hms` catalog per review session.
- `iceberg-rest`: Iceberg's `SparkCatalog` (`type=rest`, the catalog's uri, warehouse, prefix,
  token or credential) under the catalog's own name, when Iceberg's Spark runtime is among the
  configured jars or packages; without it, one line says what to add. A configured jar may be a
  pinned name (`iceberg-spark-runtime-3.5`): the cached jar of that name (reconciler/jars).
- `jdbc`: Spark's JDBC source with the database's driver jar: `driver_jar` when set, else the
  pinned driver in viewsync's jar cache (`viewsync jars fetch`), else Debian's under /usr/share/java;
  tables as `<catalog>.<schema>.<table>` through Spark's
  JDBCTableCatalog, and a view's own SQL evaluated by the database (the JDBC `query` option)
  in a read-only session.
- `managed`: the store holds view definitions only; the tables its views read are read from
  the files the `sources/` files give them (`location`, `format`: datareview/files.py), each a
  temporary view the view's rewritten SQL reads. Without any, its views are skipped, said why.
- `glue`: not readable by this Spark (`unreadable` says why).

Each kind is one `Reader` subclass in `READERS`; a JDBC database's driver, URL and read-only
session come from its dialect (adapters/jdbc/dialects.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from reconciler.adapters.jdbc.dialects import DATABASES, Database
from reconciler.core.model import ViewId, ViewSpec
from reconciler.core.sql import spark_ident as q
from reconciler.datareview.files import FileCatalog, MissingData
from reconciler.datareview.view_sql import NotReadable, sql_in
from reconciler.jars import maven
from reconciler.source.config import CatalogConfig, Config
from reconciler.source.spark_settings import LiveCatalog, LiveSettings
from reconciler.spark import conf as spark_conf
from reconciler.verify.sources import Sources

ICEBERG_RUNTIME = "iceberg-spark-runtime"
ICEBERG_PACKAGE = maven.artifact("iceberg-spark-runtime-3.5").coordinate
JDBC_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
@dataclass(frozen=True)
class Jdbc:
    url: str  # jdbc:postgresql://host:port/db
    database: Database  # its dialect: driver, read-only session, names
    options: dict[str, str]  # driver, user, password (a secret), sessionInitStatement


@dataclass
class Reader:
    """One catalog as the review's Spark sees it; a catalog kind is a subclass (`READERS`) that
    holds its differences: how it is configured (`configure`) and how a view's query is read."""

    kind: ClassVar[str]
    unreadable: ClassVar[str] = "data review does not read this kind of catalog"
    resolves_references: ClassVar[bool] = False  # query_source itself reads `replaced` views' declared results

    name: str
    spark_name: str | None = None  # the name Spark SQL gives it (None: not addressable in Spark SQL)
    jdbc: Jdbc | None = None
    unsupported: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    jars: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)

    def configure(self, cat: CatalogConfig, live: LiveSettings, others: list[Reader]) -> None:
        """Set the Spark conf, jars and name for `cat` (`others`: the catalogs configured before);
        raises NotReadable when this one cannot be read."""
        raise NotReadable(f"catalog {self.name!r} ({cat.type}): {self.unreadable}")

    def query_source(self, vid: ViewId, spec: ViewSpec, replaced: Mapping[ViewId, str] | None = None
                     ) -> tuple[dict[str, Any], str | None]:
        """The source the worker registers for this view's query, and a note when its SQL was
        transpiled (a generated representation); `replaced`: changed views whose declared results
        (temporary views) the query reads instead, when `resolves_references`. Raises NotReadable."""
        if self.unsupported:
            raise NotReadable(self.unsupported)
        sql, note = sql_in(spec, vid, "spark")
        use = [self.spark_name or "spark_catalog", *(spec.default_namespace or [vid.schema])]
        return {"kind": "sql", "sql": sql, "use": use, "columns": [c.name for c in spec.columns]}, note

    def table_sql(self, schema: str, table: str) -> str:
        """Spark SQL naming a table of this catalog. Raises NotReadable."""
        if self.unsupported:
            raise NotReadable(self.unsupported)
        return f"SELECT * FROM {q(self.spark_name or 'spark_catalog')}.{q(schema)}.{q(table)}"

    def table_source(self, schema: str, table: str) -> dict[str, Any]:
        """The source the worker registers for a table of this catalog (a relationships check's
        `to`). Raises NotReadable."""
        return {"kind": "sql", "sql": self.table_sql(schema, table), "use": []}


class HmsReader(Reader):
    """Spark's Hive catalog on the metastore: one metastore is Spark's session catalog."""

    kind = "hms"

    def configure(self, cat: CatalogConfig, live: LiveSettings, others: list[Reader]) -> None:
        first = next((r for r in others if isinstance(r, HmsReader) and not r.unsupported), None)
        if first is not None:
            raise NotReadable(f"catalog {self.name!r} (hms): the review's Spark has one Hive catalog, and it "
                              f"reads {first.name!r}")
        self.spark_name = "spark_catalog"
        self.conf.update({"spark.sql.catalogImplementation": "hive",
                          "spark.hadoop.hive.metastore.uris": str(cat.options["uri"])})


class IcebergRestReader(Reader):
    """Iceberg's SparkCatalog (type rest) under the catalog's own name."""

    kind = "iceberg-rest"

    def configure(self, cat: CatalogConfig, live: LiveSettings, others: list[Reader]) -> None:
        self.spark_name = self.name
        configured = [*self.jars, *self.packages, live.conf.get("spark.jars", ""),
                      live.conf.get("spark.jars.packages", "")]
        if not any(ICEBERG_RUNTIME in j for j in configured):
            raise NotReadable(f"catalog {self.name!r} (iceberg-rest): Iceberg's Spark runtime is not configured; add "
                              f"its jar to spark.live.catalogs.{self.name}.jars (`viewsync jars fetch "
                              f"iceberg-spark-runtime-3.5`, then jars: [iceberg-spark-runtime-3.5]), or "
                              f"spark.live.catalogs.{self.name}.packages: [{ICEBERG_PACKAGE}]")
        self.conf.update(_iceberg_conf(self.name, cat.options))


class JdbcReader(Reader):
    """Spark's JDBC source: tables through JDBCTableCatalog, a view's own SQL evaluated by the
    database (the `query` option) in a read-only session."""

    kind = "jdbc"

    def configure(self, cat: CatalogConfig, live: LiveSettings, others: list[Reader]) -> None:
        jdbc, jar = _jdbc(cat, live.catalogs.get(self.name, LiveCatalog()))
        self.jdbc, self.spark_name = jdbc, self.name
        self.jars.append(jar)
        prefix = f"spark.sql.catalog.{self.name}"
        self.conf.update({prefix: JDBC_CATALOG, f"{prefix}.url": jdbc.url})
        for key in ("driver", "user", "password"):
            if key in jdbc.options:
                self.conf[f"{prefix}.{key}"] = jdbc.options[key]

    def query_source(self, vid: ViewId, spec: ViewSpec, replaced: Mapping[ViewId, str] | None = None
                     ) -> tuple[dict[str, Any], str | None]:
        if self.unsupported:
            raise NotReadable(self.unsupported)
        assert self.jdbc is not None
        db = self.jdbc.database
        sql, note = sql_in(spec, vid, db.name)
        ns = (spec.default_namespace or [vid.schema])[0]
        options = {**self.jdbc.options, "sessionInitStatement": db.session_init(ns)}
        url = self.jdbc.url
        if db.schema_is_database:  # unqualified names resolve in the URL's database
            url = f"{url.split('?')[0].rsplit('/', 1)[0]}/{ns}"
        return {"kind": "jdbc", "url": url, "query": sql.strip().rstrip(";"),
                "options": options, "columns": [c.name for c in spec.columns]}, note


class GlueReader(Reader):
    kind = "glue"
    unreadable = ("Spark reads Glue tables only with the AWS Glue Data Catalog client of EMR or Glue jobs; "
                  "data review does not read glue catalogs (their views are skipped with this note)")


@dataclass
class ManagedReader(Reader):
    """The store holds definitions only: the tables its views read are files the `sources/`
    files locate (`files`), temporary views of the session; a view's SQL is rewritten to read them."""

    kind = "managed"
    resolves_references = True
    files: FileCatalog | None = None

    def configure(self, cat: CatalogConfig, live: LiveSettings, others: list[Reader]) -> None:
        if self.files is None or not self.files.data:
            raise NotReadable(no_data(self.name))

    def query_source(self, vid: ViewId, spec: ViewSpec, replaced: Mapping[ViewId, str] | None = None
                     ) -> tuple[dict[str, Any], str | None]:
        if self.unsupported:
            raise NotReadable(self.unsupported)
        assert self.files is not None
        sql, note = sql_in(spec, vid, "spark")
        try:
            source, notes = self.files.query(vid, spec, sql, replaced)
        except MissingData as exc:
            raise NotReadable(str(exc)) from None
        said = [n for n in [note, *notes] if n]
        return source, "; ".join(dict.fromkeys(said)) or None

    def table_source(self, schema: str, table: str) -> dict[str, Any]:
        if self.unsupported:
            raise NotReadable(self.unsupported)
        assert self.files is not None
        try:
            return self.files.table(schema, table)
        except MissingData as exc:
            raise NotReadable(str(exc)) from None

    def table_sql(self, schema: str, table: str) -> str:
        raise NotReadable(f"catalog {self.name!r} (managed): its tables are read as files (table_source)")


def no_data(catalog: str) -> str:
    """Why a managed catalog's views are skipped, and what to configure."""
    return (f"catalog {catalog!r} (managed): a managed store holds view definitions only, and no table "
            f"in sources/{catalog}/ declares its data; give the tables its views read a `location` (a path "
            f"in the repository or a URI Spark reads) and a `format` (parquet, csv, json, orc...) in "
            f"sources/{catalog}/<schema>.yaml, and data review reads them")


READERS: dict[str, type[Reader]] = {r.kind: r for r in (HmsReader, IcebergRestReader, JdbcReader, GlueReader,
                                                         ManagedReader)}


def _jdbc(cat: CatalogConfig, live: LiveCatalog) -> tuple[Jdbc, str]:
    from sqlalchemy.engine import make_url

    url = make_url(str(cat.options["url"]))
    backend = url.get_backend_name()
    db = DATABASES.get(backend)
    if db is None:
        raise NotReadable(f"catalog {cat.name!r}: Spark's JDBC source does not know {backend!r} databases")
    jar = live.driver_jar or _driver_jar(cat.name, backend, db)
    options = {"driver": db.spark_driver}
    if url.username:
        options["user"] = url.username
    if url.password:
        options["password"] = str(url.password)
    options["sessionInitStatement"] = db.read_only_statement
    return Jdbc(db.jdbc_url(url.host, url.port, url.database), db, options), jar


def _driver_jar(catalog: str, backend: str, db: Database) -> str:
    """The pinned driver from viewsync's jar cache, else Debian's. Raises NotReadable (one line:
    what to fetch, or what to set)."""
    if db.pinned_driver is None:
        raise NotReadable(f"catalog {catalog!r}: set spark.live.catalogs.{catalog}.driver_jar to the "
                          f"{backend} JDBC driver's jar")
    art = maven.artifact(db.pinned_driver)
    found = maven.cached(art)
    if found is not None:
        return str(found)
    if db.debian_driver_jar and Path(db.debian_driver_jar).is_file():
        return db.debian_driver_jar
    raise NotReadable(f"catalog {catalog!r}: no {backend} JDBC driver ({art.coordinate}): "
                      f"run `viewsync jars fetch {art.name}`, or set spark.live.catalogs.{catalog}.driver_jar")


def _jars(catalog: str, configured: list[str]) -> list[str]:
    """Configured jars, a pinned name replaced by its cached jar. Raises NotReadable."""
    out: list[str] = []
    for jar in configured:
        if jar not in maven.pinned():  # a path (or a URL) as Spark takes it
            out.append(jar)
            continue
        try:
            out.append(str(maven.require(maven.artifact(jar))))
        except maven.FetchError as exc:
            raise NotReadable(f"catalog {catalog!r}: jar {jar!r}: {exc}") from None
    return out


def readers(config: Config, sources: Sources | None = None, root: Path | None = None) -> dict[str, Reader]:
    """A reader per configured catalog; those Spark cannot read carry `unsupported`. `sources`
    (the repository's sources/ files, under `root`) locate the data of managed catalogs' tables."""
    live = config.spark.live
    out: dict[str, Reader] = {}
    for name, cat in sorted(config.catalogs.items()):
        extra = live.catalogs.get(name, LiveCatalog())
        r = READERS.get(cat.type, Reader)(name, conf=dict(extra.conf), packages=list(extra.packages))
        try:
            r.jars = _jars(name, list(extra.jars))
            if isinstance(r, ManagedReader) and sources is not None and root is not None:
                configured = (*r.jars, *r.packages, live.conf.get("spark.jars", ""),
                              live.conf.get("spark.jars.packages", ""))
                r.files = FileCatalog.of(name, sources, root, tuple(config.catalogs), configured)
            r.configure(cat, live, list(out.values()))
        except NotReadable as exc:
            r.unsupported = str(exc)
        out[name] = r
    return out


def _iceberg_conf(name: str, options: dict[str, Any]) -> dict[str, str]:
    prefix = f"spark.sql.catalog.{name}"
    conf = {prefix: "org.apache.iceberg.spark.SparkCatalog", f"{prefix}.type": "rest",
            f"{prefix}.uri": str(options["uri"]), f"{prefix}.cache-enabled": "false",
            "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"}
    for key in ("warehouse", "prefix", "token", "credential", "oauth2-server-uri", "scope"):
        if options.get(key):
            conf[f"{prefix}.{key}"] = str(options[key])
    for key, value in (options.get("headers") or {}).items():
        conf[f"{prefix}.header.{key}"] = str(value)
    return conf


def session_conf(config: Config, readers_: dict[str, Reader], work: Path) -> dict[str, str]:
    """The review session's Spark conf: the master, the catalogs' conf, jars and packages."""
    live: LiveSettings = config.spark.live
    jvm = [*spark_conf.collector(live.jvm_options, spark_conf.REVIEW_COLLECTOR), f"-Djava.io.tmpdir={work}",
           *live.jvm_options]
    conf: dict[str, str] = {
        "spark.master": live.master or config.spark.master,
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": (work / "warehouse").as_uri(),
        "spark.hadoop.hive.downloaded.resources.dir": str(work / "resources"),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": live.driver_memory,
        "spark.driver.extraJavaOptions": " ".join(jvm),
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
    }
    jars: list[str] = [j for j in live.conf.get("spark.jars", "").split(",") if j]
    packages: list[str] = [p for p in live.conf.get("spark.jars.packages", "").split(",") if p]
    for r in readers_.values():
        if r.unsupported:
            continue
        for key, value in r.conf.items():
            if key == "spark.sql.extensions" and conf.get(key) and value not in conf[key]:
                value = f"{conf[key]},{value}"
            conf[key] = value
        jars += [j for j in r.jars if j not in jars]
        packages += [p for p in r.packages if p not in packages]
    conf.update({k: v for k, v in live.conf.items() if k not in ("spark.jars", "spark.jars.packages")})
    if jars:
        conf["spark.jars"] = ",".join(jars)
        conf["spark.driver.extraClassPath"] = ":".join(jars)  # JDBC drivers must be on the driver's loader
    if packages:
        conf["spark.jars.packages"] = ",".join(packages)
    if conf["spark.master"].startswith(("spark://127.0.0.1:", "spark://localhost:")):
        conf.setdefault("spark.driver.host", "127.0.0.1")  # executors on this machine reach the driver here
    return conf
