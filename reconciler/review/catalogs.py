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
- `glue`, `managed`: not readable by this Spark (see `UNSUPPORTED`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.core.model import ViewId, ViewSpec
from reconciler.jars import maven
from reconciler.source.config import CatalogConfig, Config
from reconciler.verify.settings import LiveCatalog, LiveSettings

ICEBERG_RUNTIME = "iceberg-spark-runtime"
ICEBERG_PACKAGE = maven.artifact("iceberg-spark-runtime-3.5").coordinate
JDBC_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
DEBIAN_JARS = {"postgresql": "/usr/share/java/postgresql.jar",
               "mysql": "/usr/share/java/mariadb-java-client.jar",
               "mariadb": "/usr/share/java/mariadb-java-client.jar"}
# the pinned driver of each backend (reconciler/jars/pinned.toml)
PINNED_DRIVERS = {"postgresql": "postgresql", "mysql": "mariadb-java-client", "mariadb": "mariadb-java-client"}
DRIVERS = {"postgresql": "org.postgresql.Driver", "mysql": "org.mariadb.jdbc.Driver",
           "mariadb": "org.mariadb.jdbc.Driver", "sqlite": "org.sqlite.JDBC"}
READ_ONLY = {"postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
             "mysql": "SET SESSION TRANSACTION READ ONLY", "mariadb": "SET SESSION TRANSACTION READ ONLY"}
UNSUPPORTED = {
    "glue": "Spark reads Glue tables only with the AWS Glue Data Catalog client of EMR or Glue jobs; "
            "data review does not read glue catalogs (their views are skipped with this note)",
    "managed": "a managed store holds view definitions only: its views are SQL over tables this Spark "
               "cannot see, so data review skips them",
}
# the dialect a catalog kind's views are evaluated in (jdbc: the database's own)
SPARK_DIALECTS = ("spark", "databricks", "hive")


class NotReadable(Exception):
    """This catalog (or this view of it) cannot be read by the review's Spark; the message says why."""


@dataclass(frozen=True)
class Jdbc:
    url: str  # jdbc:postgresql://host:port/db
    backend: str  # postgresql | mysql | mariadb | sqlite
    options: dict[str, str]  # driver, user, password (a secret), sessionInitStatement


@dataclass
class Reader:
    """One catalog as the review's Spark sees it."""

    name: str
    kind: str
    spark_name: str | None = None  # the name Spark SQL gives it (None: not addressable in Spark SQL)
    jdbc: Jdbc | None = None
    unsupported: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    jars: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)

    def query_source(self, vid: ViewId, spec: ViewSpec) -> tuple[dict[str, Any], str | None]:
        """The source the worker registers for this view's query, and a note when its SQL was
        transpiled (a generated representation). Raises NotReadable."""
        if self.unsupported:
            raise NotReadable(self.unsupported)
        if self.kind == "jdbc":
            assert self.jdbc is not None
            dialect = {"postgresql": "postgres", "mariadb": "mysql"}.get(self.jdbc.backend, self.jdbc.backend)
            sql, note = _sql_in(spec, vid, dialect)
            options = dict(self.jdbc.options)
            ns = (spec.default_namespace or [vid.schema])[0]
            if self.jdbc.backend == "postgresql":  # the view's own schema first, as the database resolves it
                options["sessionInitStatement"] = (f"SET search_path TO {_pg_ident(ns)}, public; "
                                                   + options.get("sessionInitStatement", READ_ONLY["postgresql"]))
            return {"kind": "jdbc", "url": _with_database(self.jdbc, ns), "query": sql.strip().rstrip(";"),
                    "options": options, "columns": [c.name for c in spec.columns]}, note
        sql, note = _sql_in(spec, vid, "spark")
        use = [self.spark_name or "spark_catalog", *(spec.default_namespace or [vid.schema])]
        return {"kind": "sql", "sql": sql, "use": use, "columns": [c.name for c in spec.columns]}, note

    def table_sql(self, schema: str, table: str) -> str:
        """Spark SQL naming a table of this catalog. Raises NotReadable."""
        if self.unsupported:
            raise NotReadable(self.unsupported)
        return f"SELECT * FROM {q(self.spark_name or 'spark_catalog')}.{q(schema)}.{q(table)}"


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _with_database(jdbc: Jdbc, schema: str) -> str:
    """MySQL/MariaDB: a schema is a database, named in the URL (unqualified names resolve there)."""
    if jdbc.backend in ("mysql", "mariadb"):
        head = jdbc.url.split("?")[0].rsplit("/", 1)[0]
        return f"{head}/{schema}"
    return jdbc.url


def _sql_in(spec: ViewSpec, vid: ViewId, dialect: str) -> tuple[str, str | None]:
    """The view's SQL in `dialect`: its own representation, else one transpiled by sqlglot (said)."""
    wanted = SPARK_DIALECTS if dialect == "spark" else (dialect,)
    for d in wanted:
        sql = spec.sql_for(d)
        if sql is not None:
            return sql, None
    rep = spec.representations[0]
    import sqlglot

    from reconciler.core.sql import sqlglot_dialect

    try:
        out = sqlglot.transpile(rep.sql, read=sqlglot_dialect(rep.dialect), write=sqlglot_dialect(dialect))[0]
    except sqlglot.errors.SqlglotError as exc:
        raise NotReadable(f"{vid}: no {dialect} SQL, and its {rep.dialect} SQL does not transpile: "
                          f"{str(exc).splitlines()[0]}") from None
    return out, f"{vid}: {dialect} SQL generated from its {rep.dialect} representation by sqlglot"


def _jdbc(cat: CatalogConfig, live: LiveCatalog) -> tuple[Jdbc, list[str]]:
    from sqlalchemy.engine import make_url

    url = make_url(str(cat.options["url"]))
    backend = url.get_backend_name()
    if backend not in DRIVERS:
        raise NotReadable(f"catalog {cat.name!r}: Spark's JDBC source does not know {backend!r} databases")
    if backend == "sqlite":
        jdbc_url = f"jdbc:sqlite:{url.database}"
    else:
        prefix = "jdbc:postgresql" if backend == "postgresql" else "jdbc:mariadb"
        jdbc_url = f"{prefix}://{url.host or '127.0.0.1'}:{url.port or (5432 if backend == 'postgresql' else 3306)}/" \
                   f"{url.database or ''}"
    jar = live.driver_jar or _driver_jar(cat.name, backend)
    options = {"driver": DRIVERS[backend]}
    if url.username:
        options["user"] = url.username
    if url.password:
        options["password"] = str(url.password)
    if backend in READ_ONLY:
        options["sessionInitStatement"] = READ_ONLY[backend]
    return Jdbc(jdbc_url, backend, options), [jar]


def _driver_jar(catalog: str, backend: str) -> str:
    """The pinned driver from viewsync's jar cache, else Debian's. Raises NotReadable (one line:
    what to fetch, or what to set)."""
    if backend not in PINNED_DRIVERS:
        raise NotReadable(f"catalog {catalog!r}: set spark.live.catalogs.{catalog}.driver_jar to the "
                          f"{backend} JDBC driver's jar")
    art = maven.artifact(PINNED_DRIVERS[backend])
    found = maven.cached(art)
    if found is not None:
        return str(found)
    if Path(DEBIAN_JARS[backend]).is_file():
        return DEBIAN_JARS[backend]
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


def readers(config: Config) -> dict[str, Reader]:
    """A reader per configured catalog; those Spark cannot read carry `unsupported`."""
    live = config.spark.live
    out: dict[str, Reader] = {}
    hms_seen: str | None = None
    for name, cat in sorted(config.catalogs.items()):
        extra = live.catalogs.get(name, LiveCatalog())
        r = Reader(name, cat.type, conf=dict(extra.conf), packages=list(extra.packages))
        try:
            r.jars = _jars(name, list(extra.jars))
        except NotReadable as exc:
            r.unsupported = str(exc)
            out[name] = r
            continue
        if cat.type in UNSUPPORTED:
            r.unsupported = f"catalog {name!r} ({cat.type}): {UNSUPPORTED[cat.type]}"
        elif cat.type == "hms":
            if hms_seen is not None:
                r.unsupported = (f"catalog {name!r} (hms): the review's Spark has one Hive catalog, and it "
                                 f"reads {hms_seen!r}")
            else:
                hms_seen = name
                r.spark_name = "spark_catalog"
                r.conf.update({"spark.sql.catalogImplementation": "hive",
                               "spark.hadoop.hive.metastore.uris": str(cat.options["uri"])})
        elif cat.type == "iceberg-rest":
            r.spark_name = name
            configured = [*r.jars, *r.packages, live.conf.get("spark.jars", ""),
                          live.conf.get("spark.jars.packages", "")]
            if not any(ICEBERG_RUNTIME in j for j in configured):
                r.unsupported = (f"catalog {name!r} (iceberg-rest): Iceberg's Spark runtime is not configured; add "
                                 f"its jar to spark.live.catalogs.{name}.jars (`viewsync jars fetch "
                                 f"iceberg-spark-runtime-3.5`, then jars: [iceberg-spark-runtime-3.5]), or "
                                 f"spark.live.catalogs.{name}.packages: [{ICEBERG_PACKAGE}]")
            else:
                r.conf.update(_iceberg_conf(name, cat.options))
        elif cat.type == "jdbc":
            try:
                jdbc, jars = _jdbc(cat, extra)
            except NotReadable as exc:
                r.unsupported = str(exc)
            else:
                r.jdbc, r.spark_name = jdbc, name
                r.jars += jars
                prefix = f"spark.sql.catalog.{name}"
                r.conf.update({prefix: JDBC_CATALOG, f"{prefix}.url": jdbc.url})
                for key in ("driver", "user", "password"):
                    if key in jdbc.options:
                        r.conf[f"{prefix}.{key}"] = jdbc.options[key]
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
    jvm = ["-XX:+UseSerialGC", f"-Djava.io.tmpdir={work}", *live.jvm_options]
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
