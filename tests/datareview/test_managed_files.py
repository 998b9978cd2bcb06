"""Issue 43, item 1: a managed catalog's tables may declare their data in sources/ (`location`,
`format`); data review then reads them as files, and its views' SQL runs over them. Located
errors for bad declarations; a view reading a table without data is skipped, saying what to
configure; a skip that fails `viewsync check` says so on its own line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import ValidationFailed
from reconciler.core.model import ViewId
from reconciler.datareview import catalogs, render
from reconciler.datareview.model import CheckReport, CheckResult, ViewChecks
from reconciler.datareview.view_sql import NotReadable
from reconciler.source.config import load_config
from reconciler.verify import sources as vsources
from tests.helpers.cli import run_cli
from tests.helpers.repos import managed_config, write_repo

ORDERS = [{"name": "order_id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"},
          {"name": "amount", "type": "decimal(18,2)"}, {"name": "status", "type": "string"},
          {"name": "ordered_at", "type": "timestamp"}]
ORDERS_CSV = "order_id,customer_id,amount,status,ordered_at\n" + "".join(
    f"{i},{i % 3 + 1},{i}.50,{'void' if i % 5 == 0 else 'paid'},2026-01-{i:02d} 10:00:00\n" for i in range(1, 21))
CUSTOMERS_JSON = "".join(json.dumps({"id": i, "name": f"c{i}"}) + "\n" for i in (1, 2, 3))


def sources_file(*tables: dict[str, Any], schema: str = "sales") -> dict[str, Any]:
    return {f"sources/local/{schema}.yaml": {"catalog": "local", "schema": schema, "tables": list(tables)}}


def problems(files: dict[str, Any]) -> list[str]:
    import yaml

    texts = [(rel, yaml.safe_dump(doc, sort_keys=False)) for rel, doc in files.items()]
    with pytest.raises(ValidationFailed) as err:
        vsources.load(texts)
    return [f"{p.file}:{p.line}:{p.column}: {p.field}: {p.message}" for p in err.value.problems]


def test_a_table_declares_where_its_data_is_and_mistakes_are_located() -> None:
    ok = vsources.load([("sources/local/sales.yaml", "catalog: local\nschema: sales\ntables:\n"
                         "  - name: orders\n    location: data/orders.csv\n    format: csv\n"
                         "    options: {delimiter: ';', header: true}\n    columns: [{name: id, type: bigint}]\n"
                         "  - name: remote\n    location: s3a://bucket/remote/\n    format: parquet\n"
                         "    columns: [{name: id, type: bigint}]\n")])
    data = ok.data[("local", "sales", "orders")]
    assert (data.location, data.format, data.options) == ("data/orders.csv", "csv", {"delimiter": ";",
                                                                                   "header": "true"})
    assert data.is_local and data.at == "sources/local/sales.yaml:5:15"
    assert not ok.data[("local", "sales", "remote")].is_local

    def table(**extra: Any) -> dict[str, Any]:
        return sources_file({"name": "orders", **extra, "columns": [{"name": "id", "type": "bigint"}]})

    [one] = problems(table(format="csv"))
    assert one == "sources/local/sales.yaml:5:11: tables[0].format: format needs location (where the data is)"
    [one] = problems(table(location="d/o.csv"))
    assert "tables[0].location: location needs format (parquet, csv, json, orc, delta or iceberg)" in one
    [one] = problems(table(location="d/o.csv", format="xlsx"))
    assert one == ("sources/local/sales.yaml:6:11: tables[0].format: unknown format 'xlsx': parquet, csv, json, "
                   "orc, delta or iceberg")
    for outside in ("/etc/passwd", "../secrets.csv", "file:///etc/passwd"):
        [one] = problems(table(location=outside, format="csv"))
        assert "tables[0].location" in one and ("outside the repository" in one or "leaves the repository" in one)
    [one] = problems(table(options={"header": True}))
    assert "tables[0].options: options are for reading `location`, which is not set" in one


def config_of(tmp: Path) -> Any:
    return load_config(write_repo(tmp / "cfg", managed_config(tmp)))


def test_a_managed_view_over_files_reads_temporary_views_of_its_tables(tmp_path: Path) -> None:
    """The reference `orders` resolves as the view resolves it, to the file's temporary view; a
    view reading another view of the catalog reads that view's SQL over the same files."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "orders.csv").write_text(ORDERS_CSV)
    srcs = vsources.load([("sources/local/sales.yaml", json.dumps({
        "catalog": "local", "schema": "sales",
        "tables": [{"name": "orders", "location": "d/orders.csv", "format": "csv", "columns": ORDERS}]}))])
    config = config_of(tmp_path)
    reader = catalogs.readers(config, srcs, tmp_path)["local"]
    assert not reader.unsupported
    from reconciler.core.model import ViewSpec

    paid = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql":
                                    "SELECT order_id, amount FROM orders WHERE status = 'paid'"}]})
    total = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql":
                                     "SELECT SUM(amount) AS s FROM local.sales.paid p"}]})
    assert isinstance(reader, catalogs.ManagedReader) and reader.files is not None
    reader.files.set_views({ViewId("local", "sales", "paid"): paid}, {})
    source, note = reader.query_source(ViewId("local", "sales", "total"), total)
    assert note is None
    [file_input, view_input] = source["inputs"]
    assert file_input["source"]["kind"] == "file" and file_input["source"]["format"] == "csv"
    assert file_input["source"]["location"] == (tmp_path / "d" / "orders.csv").resolve().as_uri()
    assert file_input["source"]["options"] == {"header": "true", "mode": "FAILFAST"}
    assert [f["name"] for f in file_input["source"]["schema"]["fields"]] == [c["name"] for c in ORDERS]
    assert f"FROM {file_input['name']} AS orders" in view_input["source"]["sql"]
    assert source["sql"] == f"SELECT SUM(amount) AS s FROM {view_input['name']} AS p"

    replaced, _ = reader.query_source(ViewId("local", "sales", "total"), total,
                                      {ViewId("local", "sales", "paid"): "__vs_declared_0"})
    assert replaced["sql"] == "SELECT SUM(amount) AS s FROM __vs_declared_0 AS p" and not replaced["inputs"]

    refunds = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": "SELECT * FROM refunds"}]})
    with pytest.raises(NotReadable) as err:
        reader.query_source(ViewId("local", "sales", "r"), refunds)
    assert str(err.value) == ("local.sales.r reads local.sales.refunds, which has no data declared: give it a "
                              "`location` and a `format` in sources/local/sales.yaml (its table `refunds`)")


def test_a_managed_catalog_without_data_says_what_to_configure(tmp_path: Path) -> None:
    reader = catalogs.readers(config_of(tmp_path), vsources.Sources(), tmp_path)["local"]
    assert reader.unsupported and "a `location`" in reader.unsupported and "sources/local/<schema>.yaml" \
        in reader.unsupported


def test_a_skipped_view_that_fails_the_check_says_so_on_its_own_line() -> None:
    skipped = ViewChecks(ViewId("local", "sales", "v"), "declared", status="skipped",
                         message="catalog 'local' (managed): ... give the tables its views read a `location`",
                         checks=[CheckResult(0, "not_null", ["id"], "error", status="error", detail="not run")])
    report = CheckReport("declared", [skipped])
    assert report.failed
    text = render.checks_text(report).splitlines()
    assert text[-2].startswith("Checks (declared definitions): 0 passed, 0 failed")
    assert text[-2].endswith("1 view(s) skipped.")
    assert text[-1] == ("Failed: local.sales.v was skipped, so 1 check(s) did not run, and a check that did not "
                        "run fails `viewsync check`: configure what the SKIPPED line names, or leave it out "
                        "with --select.")
    assert "❌ Failed: local.sales.v was skipped" in render.checks_markdown(report)


def files_repo(tmp_path: Path, sql: str, tables: list[dict[str, Any]] | None = None) -> Path:
    view = {"name": "paid_orders", "key": ["order_id"],
            "representations": [{"dialect": "spark", "sql": sql}],
            "checks": [{"not_null": ["order_id", "amount"]}, {"unique": ["order_id"]},
                       {"relationships": {"column": "customer_id", "to": "local.crm.customers", "field": "id"}}]}
    reader = {"name": "customer_count", "representations": [{"dialect": "spark", "sql":
              "SELECT COUNT(DISTINCT customer_id) AS n FROM paid_orders"}], "checks": [{"row_count": {"min": 1}}]}
    orders = {"name": "orders", "location": "data/orders.csv", "format": "csv", "columns": ORDERS}
    customers = {"name": "customers", "location": "data/customers.jsonl", "format": "json",
                 "columns": [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}]}
    repo = write_repo(tmp_path / "repo", managed_config(tmp_path), {
        "views/local/sales.yaml": {"catalog": "local", "schema": "sales", "views": [view, reader]},
        **sources_file(*(tables if tables is not None else [orders])),
        **sources_file(customers, schema="crm"),
        "data/orders.csv": ORDERS_CSV, "data/customers.jsonl": CUSTOMERS_JSON})
    return repo


@pytest.mark.slow  # starts Spark
def test_diff_and_check_of_a_managed_catalog_read_its_files(tmp_path: Path) -> None:
    base = "SELECT order_id, customer_id, amount, status FROM sales.orders"
    repo = files_repo(tmp_path, base + " WHERE status = 'paid'")
    first = run_cli(repo, "check")  # nothing applied yet: a view another reads is its declared definition
    assert first.code == 0, first.text
    assert "Checks (declared definitions): 4 passed, 0 failed" in first.out
    assert "note: local.sales.paid_orders is not live: read through its declared definition" in first.out
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    before = (repo / "data" / "orders.csv").read_bytes()
    files_repo(tmp_path, base)  # the filter dropped: the 4 void orders come back

    res = run_cli(repo, "diff", "--format", "json", "--dependents")
    assert res.code == 0, res.text
    views = {v["view"]["name"]: v for v in json.loads(res.out)["views"]}
    paid = views["paid_orders"]
    assert paid["status"] == "ok" and (paid["rows_before"], paid["rows_after"]) == (16, 20)
    assert paid["counts"]["added"] == 4 and paid["counts"]["unchanged"] == 16
    assert sorted(s["after"]["order_id"] for s in paid["samples"]) == [5, 10, 15, 20]
    assert views["customer_count"]["status"] == "ok" and views["customer_count"]["action"] == "dependent"

    check = run_cli(repo, "check")
    assert check.code == 0, check.text
    assert "Checks (declared definitions): 4 passed, 0 failed" in check.out and "not live" not in check.out
    assert (repo / "data" / "orders.csv").read_bytes() == before  # read-only


@pytest.mark.slow  # starts Spark
def test_a_view_reading_a_table_without_data_is_skipped_and_fails_the_check(tmp_path: Path) -> None:
    repo = files_repo(tmp_path, "SELECT order_id, customer_id, amount FROM sales.orders",
                      tables=[{"name": "orders", "columns": ORDERS}])
    res = run_cli(repo, "check")
    assert res.code == 1, res.text
    line = next(ln for ln in res.out.splitlines() if ln.startswith("local.sales.paid_orders"))
    assert "SKIPPED: local.sales.paid_orders reads local.sales.orders, which has no data declared: give it a " \
           "`location` and a `format` in sources/local/sales.yaml" in line
    assert res.out.splitlines()[-1].startswith("Failed: local.sales.customer_count, local.sales.paid_orders were "
                                               "skipped, so 4 check(s) did not run")


@pytest.mark.slow  # starts Spark
def test_a_missing_local_file_is_located(tmp_path: Path) -> None:
    repo = files_repo(tmp_path, "SELECT order_id, customer_id, amount FROM sales.orders")
    (repo / "data" / "orders.csv").unlink()
    res = run_cli(repo, "check")
    assert res.code == 1
    assert re.search(r"SKIPPED: sources/local/sales\.yaml:\d+:\d+: location 'data/orders\.csv': no such file or "
                     r"directory", res.out), res.out


def test_validate_reports_a_bad_location_even_without_tests(tmp_path: Path) -> None:
    repo = files_repo(tmp_path, "SELECT order_id FROM sales.orders",
                      tables=[{"name": "orders", "location": "../orders.csv", "format": "csv", "columns": ORDERS}])
    res = run_cli(repo, "validate")
    assert res.code == 1
    assert re.search(r"sources/local/sales\.yaml:\d+:\d+: tables\[0\]\.location: location '\.\./orders\.csv' "
                     r"leaves the repository", res.text), res.text
