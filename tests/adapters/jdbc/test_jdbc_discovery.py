"""Discovery of views made with raw DDL on real PostgreSQL, MariaDB and SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from reconciler.adapters import open_adapter
from reconciler.adapters.base import AdapterError, Marker, SchemaSnapshot, WriteContext
from reconciler.adapters.jdbc import READ_ONLY_MESSAGE, JdbcAdapter
from reconciler.core.model import Column, Representation, ViewId, ViewSpec
from tests.helpers.jdbc import Db, unique

TIMESTAMP = {"postgres": "TIMESTAMP", "mysql": "DATETIME", "sqlite": "TIMESTAMP"}


def make_sales(db: Db) -> None:
    db.run(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL, region CHAR(2))",
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INTEGER, amount DECIMAL(18,2), "
        f"placed_at {TIMESTAMP[db.kind]}, note TEXT, paid BOOLEAN)",
        "CREATE VIEW v_join AS SELECT o.id AS order_id, c.name AS customer_name, o.amount "
        "FROM orders o JOIN customers c ON c.id = o.customer_id",
        "CREATE VIEW v_agg AS SELECT customer_id, COUNT(*) AS order_count, SUM(amount) AS total, "
        "MAX(placed_at) AS last_order FROM orders GROUP BY customer_id",
        "CREATE VIEW v_calc AS SELECT id, amount * 2 AS double_amount, UPPER(note) AS shout, "
        "id + 1 AS next_id, paid FROM orders",
        "CREATE VIEW v_top AS SELECT customer_id, total FROM v_agg WHERE order_count > 1",
    )


def adapter(db: Db) -> JdbcAdapter:
    a = open_adapter("db", {"type": "jdbc", "url": db.url})
    assert isinstance(a, JdbcAdapter)
    return a


def columns(snap: SchemaSnapshot, view: str) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in snap.views[view].spec.columns]


# Sums of DECIMAL(18,2): PostgreSQL returns unconstrained numeric (read as decimal(38,18)),
# MariaDB widens the precision by 22, SQLite keeps what sqlglot infers from the column.
TOTAL = {"postgres": "decimal(38,18)", "mysql": "decimal(38,2)", "sqlite": "decimal(18,2)"}
DOUBLED = {"postgres": "decimal(38,18)", "mysql": "decimal(19,2)", "sqlite": "decimal(18,2)"}


def test_views_are_discovered_with_columns_and_types(db: Db) -> None:
    make_sales(db)
    a = adapter(db)
    snap = a.fetch(db.schema)

    assert snap.exists
    assert sorted(snap.views) == ["v_agg", "v_calc", "v_join", "v_top"]
    assert {"customers", "orders"} <= snap.tables
    assert not snap.tables & set(snap.views)
    assert snap.warnings == []
    assert columns(snap, "v_join") == [
        ("order_id", "bigint"), ("customer_name", "varchar(50)"), ("amount", "decimal(18,2)")]
    assert columns(snap, "v_agg") == [
        ("customer_id", "int"), ("order_count", "bigint"), ("total", TOTAL[db.kind]),
        ("last_order", "timestamp")]
    assert columns(snap, "v_calc") == [
        ("id", "bigint"), ("double_amount", DOUBLED[db.kind]), ("shout", "string"),
        ("next_id", "bigint"), ("paid", "boolean")]
    assert columns(snap, "v_top") == [("customer_id", "int"), ("total", TOTAL[db.kind])]

    for live in snap.views.values():
        spec = live.spec
        assert live.format == db.kind
        assert live.managed_by is None and live.spec_digest is None
        assert live.writable is False
        assert spec.dialects() == [db.kind]
        sql = spec.representations[0].sql
        assert not sql.lstrip().upper().startswith("CREATE")
        assert not sql.rstrip().endswith(";")
        assert spec.default_namespace == [db.schema]
        assert spec.owner is None and spec.properties == {} and spec.default_catalog is None
    assert "v_agg" in snap.views["v_top"].spec.representations[0].sql


def test_view_bodies_are_clean_sql_in_the_catalog_dialect(db: Db) -> None:
    import sqlglot

    make_sales(db)
    snap = adapter(db).fetch(db.schema)
    for live in snap.views.values():
        rep = live.spec.representations[0]
        tree = sqlglot.parse_one(rep.sql, read=rep.dialect)
        assert isinstance(tree, sqlglot.exp.Query), rep.sql


ODD_VIEWS = ["my view", "it's \"quoted\"", "MixedCase", "select"]


def make_odd(db: Db, schema_prefix: str = "") -> None:
    q = db.q
    table = schema_prefix + q("Odd Table")
    quoted_col = q('a "b" c')
    db.run(
        f"CREATE TABLE {table} ({q('order id')} INTEGER, {q('Select')} VARCHAR(10), {q('MiXed')} BIGINT)",
        f"CREATE VIEW {schema_prefix}{q('my view')} AS SELECT {q('order id')}, {q('Select')} AS {q('from')}, "
        f"{q('MiXed')} FROM {table}",
        f"CREATE VIEW {schema_prefix}{q(ODD_VIEWS[1])} AS SELECT {q('order id')} AS {quoted_col} "
        f"FROM {table}",
        f"CREATE VIEW {schema_prefix}{q('MixedCase')} AS SELECT {q('MiXed')} + 1 AS {q('CamelCol')} "
        f"FROM {table}",
        f"CREATE VIEW {schema_prefix}{q('select')} AS SELECT * FROM {schema_prefix}{q('my view')}",
    )


ODD_COLUMNS = {
    "my view": [("order id", "int"), ("from", "varchar(10)"), ("MiXed", "bigint")],
    "it's \"quoted\"": [('a "b" c', "int")],
    "MixedCase": [("CamelCol", "bigint")],
    "select": [("order id", "int"), ("from", "varchar(10)"), ("MiXed", "bigint")],
}


def test_odd_names_are_discovered_and_their_columns_read(db: Db) -> None:
    make_odd(db)
    snap = adapter(db).fetch(db.schema)
    assert sorted(snap.views) == sorted(ODD_VIEWS)
    assert "Odd Table" in snap.tables
    assert snap.warnings == []
    for name, expected in ODD_COLUMNS.items():
        assert columns(snap, name) == expected, name


@pytest.mark.parametrize("kind", ["postgres", "mysql"])
def test_odd_schema_names(kind: str, request: pytest.FixtureRequest) -> None:
    db: Db = request.getfixturevalue({"postgres": "pg_db", "mysql": "mysql_db"}[kind])
    schema = unique("Odd Schema")
    db.create_schema(schema)
    make_odd(db, schema_prefix=db.q(schema) + ".")
    a = adapter(db)
    assert schema in a.list_schemas()
    snap = a.fetch(schema)
    assert sorted(snap.views) == sorted(ODD_VIEWS)
    assert columns(snap, "select") == ODD_COLUMNS["select"]
    assert snap.views["my view"].spec.default_namespace == [schema]


def test_fetch_is_stable_and_storable_round_trips(db: Db) -> None:
    make_sales(db)
    make_odd(db)
    a = adapter(db)
    first = a.fetch(db.schema)
    second = adapter(db).fetch(db.schema)
    assert sorted(first.views) == sorted(second.views)
    for name, live in first.views.items():
        again = second.views[name]
        assert live.spec.digest() == again.spec.digest(), name
        assert live.fingerprint == again.fingerprint, name
        # import writes live.spec as the declaration; plan compares storable(it) with live.spec
        assert a.storable(live.id, live.spec).digest() == live.spec.digest(), name


def test_raw_ddl_change_changes_the_live_spec(db: Db) -> None:
    make_sales(db)
    a = adapter(db)
    before = a.fetch(db.schema)
    if db.kind == "sqlite":
        db.run("DROP VIEW v_join")
        replace = "CREATE VIEW"
    else:
        replace = "CREATE OR REPLACE VIEW"
    db.run(f"{replace} v_join AS SELECT o.id AS order_id, c.name AS customer_name, o.amount, "
           "o.note FROM orders o JOIN customers c ON c.id = o.customer_id")
    after = a.fetch(db.schema)  # same adapter: nothing may be cached between fetches
    old, new = before.views["v_join"], after.views["v_join"]
    assert old.spec.digest() != new.spec.digest()
    assert old.fingerprint != new.fingerprint
    assert old.spec.representations[0].sql != new.spec.representations[0].sql
    assert [c.name for c in new.spec.columns][-1] == "note"
    for name in ("v_agg", "v_calc", "v_top"):
        assert before.views[name].spec.digest() == after.views[name].spec.digest()


def test_a_dropped_view_disappears(db: Db) -> None:
    make_sales(db)
    a = adapter(db)
    assert "v_top" in a.fetch(db.schema).views
    db.run("DROP VIEW v_top")
    assert "v_top" not in a.fetch(db.schema).views


def test_missing_schema_is_reported_as_missing(db: Db) -> None:
    snap = adapter(db).fetch("no_such_schema_" + unique())
    assert snap.exists is False
    assert snap.views == {} and snap.tables == set()


def test_empty_schema(db: Db) -> None:
    snap = adapter(db).fetch(db.schema)
    assert snap.exists and snap.views == {}


def test_list_schemas_hides_system_schemas(db: Db) -> None:
    schemas = adapter(db).list_schemas()
    assert db.schema in schemas
    assert not {"information_schema", "pg_catalog", "mysql", "performance_schema", "sys"} & set(schemas)


def test_fetch_counts_round_trips_and_reads_in_bulk(db: Db) -> None:
    make_sales(db)
    a = adapter(db)
    a.fetch(db.schema)
    # schema check + objects + columns (+ SQLite table types) + one probe per view
    assert a.calls <= 4 + 4


def test_parallel_fetches_of_different_schemas(pg_db: Db) -> None:
    schemas = [unique("par") for _ in range(4)]
    for s in schemas:
        pg_db.create_schema(s)
        pg_db.run(f"CREATE TABLE {s}.t (x INTEGER)", f"CREATE VIEW {s}.v AS SELECT x, x * 2 AS y FROM {s}.t")
    a = adapter(pg_db)
    results: dict[str, SchemaSnapshot] = {}
    errors: list[BaseException] = []

    def work(schema: str) -> None:
        try:
            results[schema] = a.fetch(schema)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in schemas * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for s in schemas:
        assert columns(results[s], "v") == [("x", "int"), ("y", "int")]


# ------------------------------------------------------------ per-database facts
def test_postgres_comments_and_security_invoker(pg_db: Db) -> None:
    pg_db.run(
        "CREATE TABLE t (id INTEGER, name TEXT)",
        "CREATE VIEW v WITH (security_invoker = true) AS SELECT id, name FROM t",
        "CREATE VIEW w AS SELECT id FROM t",
        "COMMENT ON VIEW v IS 'People, by id'",
        "COMMENT ON COLUMN v.name IS 'Full name'",
    )
    a = adapter(pg_db)
    snap = a.fetch("public")
    v = snap.views["v"].spec
    assert v.comment == "People, by id"
    assert v.security == "invoker"
    assert v.columns == [Column(name="id", type="int"), Column(name="name", type="string", comment="Full name")]
    assert snap.views["w"].spec.security == "definer"
    assert snap.views["w"].spec.comment is None
    assert a.storable(snap.views["v"].id, v).digest() == v.digest()


def test_postgres_bodies_do_not_depend_on_the_session_search_path(pg_db: Db) -> None:
    """pg_get_viewdef qualifies what the search_path cannot see; two users with different
    search paths must read the same spec (else one of them sees a perpetual diff)."""
    pg_db.create_schema("sales")
    pg_db.run("CREATE TABLE sales.orders (id INTEGER)", "CREATE TABLE public.rates (id INTEGER)",
              "CREATE VIEW sales.v AS SELECT o.id FROM sales.orders o JOIN public.rates r ON r.id = o.id")
    url = sa.engine.make_url(pg_db.url)
    specs = []
    for path in ("public", "sales", "sales,public"):
        a = JdbcAdapter("pg", {"url": str(url.update_query_dict({"options": f"-csearch_path={path}"}))})
        specs.append(a.fetch("sales").views["v"].spec)
        a.close()
    assert specs[0].digest() == specs[1].digest() == specs[2].digest()
    sql = specs[0].representations[0].sql
    assert "(orders o" in sql and "JOIN public.rates r" in sql  # own schema unqualified


def test_mysql_bodies_do_not_depend_on_the_default_database(mysql_db: Db) -> None:
    make_sales(mysql_db)
    url = sa.engine.make_url(mysql_db.url)
    digests = []
    for default_db in (mysql_db.schema, "test", None):
        a = JdbcAdapter("my", {"url": str(url.set(database=default_db))})
        snap = a.fetch(mysql_db.schema)
        digests.append({name: live.spec.digest() for name, live in snap.views.items()})
        a.close()
    assert digests[0] == digests[1] == digests[2]
    assert len(digests[0]) == 4


def test_mysql_sql_security_invoker(mysql_db: Db) -> None:
    mysql_db.run(
        "CREATE TABLE t (id INT)",
        "CREATE SQL SECURITY INVOKER VIEW v AS SELECT id FROM t",
        "CREATE SQL SECURITY DEFINER VIEW w AS SELECT id FROM t",
    )
    snap = adapter(mysql_db).fetch(mysql_db.schema)
    assert snap.views["v"].spec.security == "invoker"
    assert snap.views["w"].spec.security == "definer"


def test_postgres_type_mapping(pg_db: Db) -> None:
    pg_db.run(
        "CREATE TABLE t (a SMALLINT, b INTEGER, c BIGINT, d REAL, e DOUBLE PRECISION, f NUMERIC(10,3), "
        "g NUMERIC, h VARCHAR(12), i VARCHAR, j CHAR(3), k TEXT, l DATE, m TIMESTAMP, "
        "n TIMESTAMPTZ, o BOOLEAN, p BYTEA, q INTEGER[], r JSONB, s UUID, u TIME, w INTERVAL)",
        "CREATE VIEW v AS SELECT * FROM t",
    )
    snap = adapter(pg_db).fetch("public")
    assert dict(columns(snap, "v")) == {
        "a": "smallint", "b": "int", "c": "bigint", "d": "float", "e": "double",
        "f": "decimal(10,3)", "g": "decimal(38,18)", "h": "varchar(12)", "i": "string",
        "j": "char(3)", "k": "string", "l": "date", "m": "timestamp", "n": "timestamp_ltz",
        "o": "boolean", "p": "binary", "q": "array<int>", "r": "string", "s": "string",
        "u": "string", "w": "string",
    }
    assert snap.warnings == []


@pytest.mark.filterwarnings("ignore:Did not recognize type")
def test_postgres_user_types_and_unknown_types(pg_db: Db) -> None:
    pg_db.run(
        "CREATE TYPE mood AS ENUM ('happy', 'sad')",
        "CREATE DOMAIN positive AS INTEGER CHECK (VALUE > 0)",
        "CREATE TABLE t (m mood, p positive, pt POINT, ts TIMESTAMPTZ(3), a2 TEXT[][])",
        "CREATE VIEW v AS SELECT * FROM t",
    )
    snap = adapter(pg_db).fetch("public")
    assert columns(snap, "v") == [("m", "string"), ("p", "int"), ("pt", "string"), ("ts", "timestamp_ltz"),
                                  ("a2", "array<string>")]
    # an unknown type is read as string, and said so
    assert len(snap.warnings) == 1 and "'pt'" in snap.warnings[0] and "read as string" in snap.warnings[0]


def test_postgres_view_the_user_cannot_select_is_still_discovered(pg_db: Db, pg_admin: sa.Engine) -> None:
    role = unique("vsro")
    pg_db.run("CREATE TABLE t (id INTEGER, name TEXT)",
              "CREATE VIEW open_v AS SELECT id FROM t",
              "CREATE VIEW secret_v AS SELECT id, name FROM t",
              f'CREATE ROLE "{role}" LOGIN',
              f'GRANT SELECT ON open_v TO "{role}"')
    a = JdbcAdapter("pg", {"url": str(sa.engine.make_url(pg_db.url).set(username=role))})
    try:
        snap = a.fetch("public")
        assert columns(snap, "open_v") == [("id", "int")]
        assert columns(snap, "secret_v") == [("id", "int"), ("name", "string")]
        assert [w for w in snap.warnings if "secret_v" in w and "permission denied" in w]
        assert not [w for w in snap.warnings if "open_v" in w]
    finally:
        a.close()
        pg_db.run(f'DROP OWNED BY "{role}"')
        with pg_admin.connect() as conn:
            conn.exec_driver_sql(f'DROP ROLE "{role}"')


def test_mysql_type_mapping(mysql_db: Db) -> None:
    mysql_db.run(
        "CREATE TABLE t (a TINYINT, b SMALLINT, c MEDIUMINT, d INT, e BIGINT, f INT UNSIGNED, "
        "g BIGINT UNSIGNED, h TINYINT(1), i FLOAT, j DOUBLE, k DECIMAL(10,3), l DECIMAL(65,30), "
        "m VARCHAR(12), n CHAR(3), o TEXT, p LONGTEXT, q DATE, r DATETIME, s TIMESTAMP NULL, "
        "u BLOB, w ENUM('x','y'), x JSON, y BOOLEAN, z TIME)",
        "CREATE VIEW v AS SELECT * FROM t",
    )
    snap = adapter(mysql_db).fetch(mysql_db.schema)
    assert dict(columns(snap, "v")) == {
        "a": "tinyint", "b": "smallint", "c": "int", "d": "int", "e": "bigint", "f": "bigint",
        "g": "decimal(20,0)", "h": "boolean", "i": "float", "j": "double", "k": "decimal(10,3)",
        "l": "decimal(38,30)", "m": "varchar(12)", "n": "char(3)", "o": "string", "p": "string",
        "q": "date", "r": "timestamp", "s": "timestamp_ltz", "u": "binary", "w": "string",
        "x": "string", "y": "boolean", "z": "string",
    }


def test_sqlite_declared_and_inferred_types(sqlite_db: Db) -> None:
    sqlite_db.run(
        "CREATE TABLE t (a INTEGER, b BIGINT, c REAL, d DECIMAL(10,2), e VARCHAR(5), f TEXT, "
        "g DATE, h DATETIME, i BOOLEAN, j BLOB)",
        "CREATE VIEW v AS SELECT *, a + b AS ab, c * 2 AS c2, e || f AS ef, COUNT(*) OVER () AS n, "
        "CAST(a AS TEXT) AS at, 1.5 AS lit FROM t",
        # a view on a view whose columns had to be inferred
        "CREATE VIEW w AS SELECT ab + 1 AS ab1, ef FROM v",
    )
    snap = adapter(sqlite_db).fetch("main")
    assert dict(columns(snap, "v")) == {
        "a": "int", "b": "bigint", "c": "double", "d": "decimal(10,2)", "e": "varchar(5)",
        "f": "string", "g": "date", "h": "timestamp", "i": "boolean", "j": "binary",
        "ab": "bigint", "c2": "double", "ef": "string", "n": "bigint", "at": "string", "lit": "double",
    }
    assert columns(snap, "w") == [("ab1", "bigint"), ("ef", "string")]


def test_sqlite_create_view_variants_keep_only_the_body(sqlite_db: Db) -> None:
    sqlite_db.run(
        "CREATE TABLE t (x INTEGER)",
        'CREATE VIEW IF NOT EXISTS "as as"(renamed, twice) AS   SELECT x, x * 2 FROM t  ',
        "create view [br acket] as select x as y from t",
    )
    snap = adapter(sqlite_db).fetch("main")
    assert snap.views["as as"].spec.representations[0].sql == "SELECT x, x * 2 FROM t"
    # the column list renames outputs by position; inferred types follow the position
    assert columns(snap, "as as") == [("renamed", "int"), ("twice", "int")]
    assert snap.views["br acket"].spec.representations[0].sql == "select x as y from t"


@pytest.mark.parametrize("kind", ["mysql", "sqlite"])
def test_a_broken_view_is_reported_not_fatal(kind: str, request: pytest.FixtureRequest) -> None:
    db: Db = request.getfixturevalue({"mysql": "mysql_db", "sqlite": "sqlite_db"}[kind])
    db.run("CREATE TABLE gone (x INTEGER)", "CREATE TABLE kept (y INTEGER)",
           "CREATE VIEW broken AS SELECT x FROM gone", "CREATE VIEW fine AS SELECT y FROM kept",
           "DROP TABLE gone")
    snap = adapter(db).fetch(db.schema)
    assert columns(snap, "fine") == [("y", "int")]
    assert snap.views["broken"].spec.columns == []
    assert any("broken" in w and "cannot be queried" in w for w in snap.warnings)


# ------------------------------------------------------------ read-only contract
def test_capabilities_say_read_only() -> None:
    a = JdbcAdapter("pg", {"url": "postgresql+psycopg://u@127.0.0.1/db"})
    caps = a.capabilities
    assert caps.strategy == "read-only"
    assert caps.writable is False
    assert caps.rewrites_sql is True
    assert JdbcAdapter.READ_ONLY_MESSAGE == READ_ONLY_MESSAGE
    assert "managed, iceberg-rest, hms or glue" in READ_ONLY_MESSAGE


def test_writes_raise_the_read_only_message(sqlite_db: Db) -> None:
    sqlite_db.run("CREATE TABLE t (x INTEGER)", "CREATE VIEW v AS SELECT x FROM t")
    a = adapter(sqlite_db)
    live = a.fetch("main").views["v"]
    spec = ViewSpec(representations=[Representation(dialect="sqlite", sql="SELECT 1 AS x")])
    marker, ctx = Marker("p", spec.digest()), WriteContext()
    for attempt in (lambda: a.create(ViewId("db", "main", "new"), spec, marker, ctx),
                    lambda: a.update(live, spec, marker, ctx),
                    lambda: a.drop(live, ctx)):
        with pytest.raises(AdapterError, match="read-only") as err:
            attempt()
        assert READ_ONLY_MESSAGE in str(err.value)
        assert "'db'" in str(err.value)
    # and nothing changed
    assert sorted(a.fetch("main").views) == ["v"]


def test_sessions_are_read_only_at_the_database(db: Db) -> None:
    """Defence in depth: even a bug could not make discovery write."""
    a = adapter(db)
    a.fetch(db.schema)
    with a.engine.connect() as conn, pytest.raises(sa.exc.DBAPIError):
        conn.exec_driver_sql("CREATE TABLE must_not_exist (x INTEGER)")
        conn.commit()
    a.close()
    with db.engine.connect() as conn:
        assert "must_not_exist" not in sa.inspect(conn).get_table_names()


def test_a_missing_sqlite_file_is_an_error_not_a_new_database(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "views.db"
    a = JdbcAdapter("lite", {"url": f"sqlite:///{missing}"})
    with pytest.raises(AdapterError, match="unable to open database file"):
        a.fetch("main")
    assert not missing.exists() and not missing.parent.exists()


def test_storable_fills_what_the_database_decides() -> None:
    a = JdbcAdapter("my", {"url": "mysql+pymysql://root@127.0.0.1/x"})
    view = ViewId("my", "sales", "v")
    declared = ViewSpec(
        comment="c", columns=[Column(name="id", type="int", comment="k")],
        representations=[Representation(dialect="spark", sql="SELECT 1"),
                         Representation(dialect="mysql", sql="select 1 AS `id`")],
        default_catalog="lake", default_namespace=["other"], security="invoker", owner="bob",
        properties={"tier": "gold"},
    )
    s = a.storable(view, declared)
    assert s.comment is None and s.columns == [Column(name="id", type="int")]
    assert s.dialects() == ["mysql"]
    assert (s.default_catalog, s.default_namespace, s.owner, s.properties) == (None, ["sales"], None, {})
    assert s.security == "invoker"
    assert a.check(view, declared) == []
    spark_only = [r for r in declared.representations if r.dialect == "spark"]
    assert a.check(view, declared.model_copy(update={"representations": spark_only}))[0][0] \
        == "dialect_not_storable"
    pg = JdbcAdapter("pg", {"url": "postgresql+psycopg://u@h/db"}).storable(
        view, declared.model_copy(update={"representations": [Representation(dialect="postgres", sql="x")]}))
    assert pg.comment == "c" and pg.columns[0].comment == "k"
    lite = JdbcAdapter("l", {"url": "sqlite:///x.db"}).storable(view, declared)
    assert lite.security == "definer"


# ------------------------------------------------------------ secrets and errors
def test_passwords_never_appear() -> None:
    a = JdbcAdapter("pg", {"url": "postgresql+psycopg://user:s3cr3t-pw@127.0.0.1:1/db"})
    assert "s3cr3t-pw" not in a.describe()
    assert "127.0.0.1:1/db" in a.describe()
    with pytest.raises(AdapterError) as err:
        a.fetch("public")
    assert "s3cr3t-pw" not in str(err.value)
    assert "'pg'" in str(err.value)
    with pytest.raises(AdapterError) as err2:
        a.list_schemas()
    assert "s3cr3t-pw" not in str(err2.value)


def test_password_rejected_by_server_is_not_echoed(mysql_admin: sa.Engine) -> None:
    a = JdbcAdapter("my", {"url": "mysql+pymysql://nobody_vs:hunter2-secret@127.0.0.1:3306/test"})
    with pytest.raises(AdapterError) as err:
        a.fetch("test")
    assert "hunter2-secret" not in str(err.value)
    assert "***" in str(err.value) or "nobody_vs" in str(err.value)


@pytest.mark.parametrize("options, needle", [
    ({}, "option 'url' is required"),
    ({"url": "oracle://u@h/db"}, "unsupported database 'oracle'"),
    ({"url": "not a url"}, "not a SQLAlchemy URL"),
])
def test_bad_options_are_clear(options: dict[str, str], needle: str) -> None:
    with pytest.raises(AdapterError, match=needle):
        JdbcAdapter("c", options)
