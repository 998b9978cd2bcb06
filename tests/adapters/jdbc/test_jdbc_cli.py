"""End to end through the CLI: import a JDBC catalog, validate, plan, drift, expectations.

Each test builds a temp repository pointing at its own throw-away database and
runs `python -m reconciler.cli` as a user would run `viewsync`.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
import yaml

from reconciler.adapters.jdbc import READ_ONLY_MESSAGE
from tests.adapters.jdbc.test_jdbc_discovery import ODD_VIEWS, TOTAL, make_odd, make_sales
from tests.helpers.cli import CliResult, run_cli
from tests.helpers.jdbc import Db

CATALOG = {"postgres": "pg", "mysql": "my", "sqlite": "lite"}
PASSWORD = "pw-should-never-show-9f3a"


def viewsync(repo: Path, *args: str) -> CliResult:
    result = run_cli(repo, *args, env={"VS_TEST_DB_PASSWORD": PASSWORD, "NO_COLOR": "1"}, process=True)
    assert PASSWORD not in result.out + result.err
    return result


def make_repo(tmp_path: Path, db: Db) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    url = db.url
    if db.kind == "postgres":
        # trust auth ignores the password; it is there to prove it never leaks
        url = str(sa.engine.make_url(url).set(password="PLACEHOLDER")).replace(
            "PLACEHOLDER", "${VS_TEST_DB_PASSWORD}")
    name = CATALOG[db.kind]
    (repo / "viewsync.yaml").write_text(
        "version: 1\n"
        "project: t\n"
        f"state: sqlite:///{tmp_path / 'state.db'}\n"
        f"catalogs:\n  {name}: {{type: jdbc, url: '{url}'}}\n",
        encoding="utf-8")
    return repo, name


def import_args(db: Db, catalog: str) -> list[str]:
    # A MariaDB catalog is the whole server (schema = database): import only this test's one.
    return ["import", "--catalog", catalog] + (["--schema", db.schema] if db.kind == "mysql" else [])


def replace_view(db: Db, name: str, body: str) -> None:
    # not CREATE OR REPLACE: PostgreSQL refuses it when columns go away
    db.run(f"DROP VIEW {db.q(name)}", f"CREATE VIEW {db.q(name)} AS {body}")


def test_import_validate_plan_then_drift_and_expectations(db: Db, tmp_path: Path) -> None:
    make_sales(db)
    make_odd(db)
    repo, catalog = make_repo(tmp_path, db)

    imported = viewsync(repo, *import_args(db, catalog))
    assert imported.code == 0, imported.err
    view_file = repo / "views" / catalog / f"{db.schema}.yaml"
    doc = yaml.safe_load(view_file.read_text(encoding="utf-8"))
    assert doc["catalog"] == catalog and doc["schema"] == db.schema
    by_name = {v["name"]: v for v in doc["views"]}
    assert set(by_name) == {"v_agg", "v_calc", "v_join", "v_top", *ODD_VIEWS}
    assert [(c["name"], c["type"]) for c in by_name["v_top"]["columns"]] == [
        ("customer_id", "int"), ("total", TOTAL[db.kind])]
    assert [r["dialect"] for r in by_name["select"]["representations"]] == [db.kind]
    assert PASSWORD not in view_file.read_text(encoding="utf-8")

    validated = viewsync(repo, "validate")
    assert validated.code == 0, validated.out + validated.err

    planned = viewsync(repo, "plan", "--detailed-exitcode")
    assert planned.code == 0, planned.out + planned.err
    assert "No changes" in planned.out

    if db.kind != "mysql":  # other databases on the shared MariaDB server may hold unmanaged views
        clean = viewsync(repo, "drift")
        assert clean.code == 0, clean.out + clean.err

    # Someone changes a view with raw DDL: drift names it, plan refuses with the read-only message.
    replace_view(db, "v_calc", "SELECT id, amount * 3 AS double_amount FROM orders")
    drifted = viewsync(repo, "drift")
    assert drifted.code == 2, drifted.out + drifted.err
    line = next(ln for ln in drifted.out.splitlines() if f"{catalog}.{db.schema}.v_calc" in ln)
    assert "columns" in line and f"representations.{db.kind}.sql" in line
    assert "v_join" not in drifted.out

    refused = viewsync(repo, "plan", "--detailed-exitcode")
    assert refused.code == 1
    assert f"{catalog}.{db.schema}.v_calc" in refused.out + refused.err
    assert READ_ONLY_MESSAGE in refused.out + refused.err


def test_declaring_a_new_view_is_a_read_only_error(db: Db, tmp_path: Path) -> None:
    make_sales(db)
    repo, catalog = make_repo(tmp_path, db)
    assert viewsync(repo, *import_args(db, catalog)).code == 0
    view_file = repo / "views" / catalog / f"{db.schema}.yaml"
    doc = yaml.safe_load(view_file.read_text(encoding="utf-8"))
    doc["views"].append({"name": "brand_new", "columns": [{"name": "x", "type": "int"}],
                         "representations": [{"dialect": db.kind, "sql": "SELECT 1 AS x"}]})
    view_file.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")

    assert viewsync(repo, "validate").code == 0
    refused = viewsync(repo, "plan", "--detailed-exitcode")
    assert refused.code == 1
    output = refused.out + refused.err
    assert f"{catalog}.{db.schema}.brand_new" in output
    assert READ_ONLY_MESSAGE in output
    # nothing was created behind the user's back
    with db.engine.connect() as conn:
        assert "brand_new" not in sa.inspect(conn).get_view_names(
            schema=None if db.kind == "sqlite" else db.schema)


def test_unchanged_expectation_written_by_hand_matches(db: Db, tmp_path: Path) -> None:
    """A declaration a user writes (not imported) for a view whose SQL the database keeps
    as written plans clean; with PostgreSQL this needs PostgreSQL's own rewrite of the body."""
    db.run("CREATE TABLE t (id INTEGER, name VARCHAR(20))")
    snap_body = {"postgres": "SELECT t.id,\n    t.name\n   FROM t",
                 "mysql": f"select `{db.schema}`.`t`.`id` AS `id`,`{db.schema}`.`t`.`name` AS `name` "
                          f"from `{db.schema}`.`t`",
                 "sqlite": "SELECT id, name FROM t"}[db.kind]
    db.run("CREATE VIEW people AS SELECT id, name FROM t")
    repo, catalog = make_repo(tmp_path, db)
    view_dir = repo / "views" / catalog
    view_dir.mkdir(parents=True)
    (view_dir / f"{db.schema}.yaml").write_text(yaml.safe_dump({
        "catalog": catalog, "schema": db.schema, "views": [{
            "name": "people",
            "columns": [{"name": "id", "type": "int"}, {"name": "name", "type": "varchar(20)"}],
            "representations": [{"dialect": db.kind, "sql": snap_body}],
        }]}, sort_keys=False), encoding="utf-8")
    planned = viewsync(repo, "plan", "--detailed-exitcode", "--catalog", catalog)
    assert planned.code == 0, planned.out + planned.err
