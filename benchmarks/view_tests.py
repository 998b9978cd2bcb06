"""View tests at scale (issue 29), against SQLMesh's test runner as the anchor, reported as a table.

Generates a repository of V views (default 200) in 10 schemas, each reading 2-5 input tables
with joins, GROUP BY, CASE, filters and a LEFT JOIN of an aggregate (seven query shapes, one
of them a top-N checked in order), each with T tests (default 5) that give 3-50 rows per input.
The expected rows are computed here in Python from the generated inputs, so the benchmark also
checks correctness: every test must pass. Then it measures, each in a fresh Python process:

- viewsync, cold: `services.viewtests.test` with a fresh XDG_CACHE_HOME (no class-data-sharing
  archive yet; the JVM writes one as it exits). Wall time from the process's first line to the
  results (imports, reading the declarations, Spark start, every test), the Spark start alone,
  the median per test as the runner reports it (each job's time shared among its tests), and
  the JVM's peak RSS;
- viewsync, warm: the same in a new process with the same cache dir (the archive in use). The
  cold run's JVM writes the archive in the background after its process has answered; a run that
  starts meanwhile gets no archive (one writer per machine) and is neither cold nor warm, so every
  warm run first waits until the archive is published (the first wait is reported);
- SQLMesh (the anchor): the same tests as a SQLMesh project on DuckDB (the same logic, the
  Spark SQL transpiled by sqlglot; external models giving the inputs' columns), run through
  `Context.test()` in a process of the given venv's python: wall from the first line (imports
  and project load included), the test run alone, and the median per test (measured per test).
  Skipped with a clear line when no SQLMesh python is given.

    python benchmarks/view_tests.py --sqlmesh-python /work/venv-sqlmesh/bin/python
    python benchmarks/view_tests.py --views 40 --runs 1            # smaller, no anchor

`--engine trino` also runs the same tests on Trino, in the same run after Spark's: each view gets a
trino representation (its Spark SQL transpiled by sqlglot), a Trino 476 with only its memory catalog
is started (tests/helpers/trino.py: the pinned server, Java 24+), and `viewsync test --engine trino`
runs in a fresh process. Every run ends when all its processes have (a JVM shutting down after
its parent answered would run into the next measurement). As Spark's, Trino's runs are cold and
warm: the cold one, right after Spark's cold run, starts with no ahead-of-time cache and records
none; a training run then records one as its JVM exits (JDK 25+), outside the ratios as Spark's
archive written after its cold run is; each warm one starts with the cache, right after a warm
Spark run (interleaved). Reported: Trino's start, the run, their sum against Spark's wall, cold to
cold and warm to warm (target: at most 1.5x Spark).

    python benchmarks/view_tests.py --engine trino

`--against-jvm-options` measures the same runs, each right after its counterpart, with other
`spark.jvm_options` in a copy of the project: a before-and-after of the JVM's settings in one run.

    python benchmarks/view_tests.py --runs 3 --against-jvm-options=-XX:+UseSerialGC

SQLMesh lives in its own venv, never in viewsync's dependencies:
    python3 -m venv /work/venv-sqlmesh && /work/venv-sqlmesh/bin/pip install sqlmesh duckdb

Targets (issue 44, 2-core machine; issue 29's were 60 s): 1,000 tests over 200 views <= 25 s warm and
<= 35 s cold, Spark's start included, JVM peak RSS <= 1 GB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlglot
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # noqa: E402 - beside this script

Row = dict[str, Any]
Inputs = dict[str, list[Row]]  # family (orders, customers...) -> rows

VIEWSYNC_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from reconciler.services import viewtests
from reconciler.verify import planning, session
from reconciler.workspace import Workspace
root = Path(sys.argv[1])
ws = Workspace.open(root)
run = viewtests.test(ws, viewtests.TestRequest())
wall = time.perf_counter() - t0
worker = session.worker(planning.settings_of(ws.config))
rss = worker.peak_rss_mb()
out = run.to_json()
bad = [t for t in out["tests"] if t["status"] != "passed"]
print(json.dumps({"wall_s": wall, "spark_start_s": run.spark_start_seconds, "run_s": run.seconds,
                  "per_test_s": [t["seconds"] for t in out["tests"]], "summary": out["summary"],
                  "jvm_peak_rss_mb": rss, "not_passed": bad[:5]}))
session.PROCESS.close()  # the JVM exits: a cold run writes the class-data-sharing archive now
"""

TRINO_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from reconciler.services import viewtests
from reconciler.workspace import Workspace
ws = Workspace.open(Path(sys.argv[1]))
run = viewtests.test(ws, viewtests.TestRequest(engine="trino"))
wall = time.perf_counter() - t0
out = run.to_json()
bad = [t for t in out["tests"] if t["status"] != "passed"]
print(json.dumps({"wall_s": wall, "run_s": run.seconds, "connect_s": run.start_seconds.get("trino"),
                  "per_test_s": [t["seconds"] for t in out["tests"]], "summary": out["summary"],
                  "not_passed": bad[:5]}))
"""

SQLMESH_CHILD = r"""
import io, json, sys, time
t0 = time.perf_counter()
from sqlmesh import Context
from sqlmesh.core.test import runner as test_runner
durations = []

class Timed(test_runner.ModelTextTestRunner):
    def run(self, test):
        started = time.perf_counter()
        try:
            return super().run(test)
        finally:
            durations.append(time.perf_counter() - started)

test_runner.ModelTextTestRunner = Timed
ctx = Context(paths=[sys.argv[1]])
loaded = time.perf_counter()
result = ctx.test(stream=io.StringIO())
done = time.perf_counter()
problems = [str(t) + ": " + str(e).splitlines()[-1] if str(e) else str(t)
            for t, e in [*result.failures, *result.errors]]
print(json.dumps({"wall_s": done - t0, "load_s": loaded - t0, "run_s": done - loaded,
                  "per_test_s": durations, "tests": result.testsRun,
                  "passed": result.testsRun - len(result.failures) - len(result.errors),
                  "not_passed": problems[:5]}))
"""

# ---------------------------------------------------------------- the input tables

FAMILIES: dict[str, list[tuple[str, str]]] = {  # columns as (name, viewsync type)
    "orders": [("order_id", "bigint"), ("customer_id", "bigint"), ("product_id", "bigint"),
               ("amount", "decimal(18,2)"), ("quantity", "int"), ("status", "string"), ("ordered_at", "timestamp")],
    "customers": [("customer_id", "bigint"), ("region", "string"), ("tier", "string")],
    "products": [("product_id", "bigint"), ("category", "string"), ("price", "decimal(18,2)")],
    "refunds": [("refund_id", "bigint"), ("order_id", "bigint"), ("amount", "decimal(18,2)")],
    "regions": [("region", "string"), ("country", "string")],
}
DUCKDB_TYPES = {"bigint": "BIGINT", "int": "INT", "string": "TEXT", "timestamp": "TIMESTAMP",
                "decimal(18,2)": "DECIMAL(18,2)"}
TABLE_SETS = 10  # src.orders_00 .. src.orders_09 and so on: view i reads set i % 10
STATUSES = ["completed", "completed", "shipped", "cancelled", "pending"]
TIERS = ["gold", "silver", "bronze"]
CATEGORIES = ["books", "games", "tools", "garden", "gift"]
COUNTRIES = ["FR", "DE", "US", "JP"]
REGIONS = [f"r{i:02d}" for i in range(12)]


def _n(rng: random.Random) -> int:
    return rng.randint(3, 50)


def make_inputs(rng: random.Random, nothing_qualifies: bool) -> Inputs:
    """One test's rows for every family (a view's template uses 2-5 of them): 3-50 rows each,
    keys that mostly match, a few that do not."""
    customers = rng.sample(range(1, 60), _n(rng))
    products = rng.sample(range(1, 60), _n(rng))
    orders = []
    for oid in rng.sample(range(1, 1000), _n(rng)):
        orders.append({
            "order_id": oid, "customer_id": rng.choice([*customers, 99]),
            "product_id": rng.choice([*products, 98]),
            "amount": Decimal(rng.randint(100, 25000)) / 100, "quantity": rng.randint(1, 5),
            "status": "cancelled" if nothing_qualifies else rng.choice(STATUSES),
            "ordered_at": dt.datetime(2026, 1, 1) + dt.timedelta(minutes=rng.randint(0, 5 * 24 * 60))})
    refunded = [o["order_id"] for o in orders]
    regions = rng.sample(REGIONS, rng.randint(3, len(REGIONS)))
    return {
        "orders": orders,
        "customers": [{"customer_id": c, "region": rng.choice(REGIONS), "tier": rng.choice(TIERS)}
                      for c in customers],
        "products": [{"product_id": p, "category": rng.choice(CATEGORIES),
                      "price": Decimal(rng.randint(100, 9999)) / 100} for p in products],
        "refunds": [{"refund_id": i + 1, "order_id": rng.choice([*refunded, 5000]),
                     "amount": Decimal(rng.randint(1, 3000)) / 100} for i in range(_n(rng))],
        "regions": [{"region": r, "country": rng.choice(COUNTRIES)} for r in regions],
    }


# ---------------------------------------------------------------- the views: SQL and its meaning in Python


def _index(rows: list[Row], key: str) -> dict[Any, list[Row]]:
    out: dict[Any, list[Row]] = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return out


def _joined(i: Inputs, *, products: bool = False, regions: bool = False) -> list[Row]:
    """orders JOIN customers [JOIN products] [JOIN regions] (inner joins, every match)."""
    cust, prod, reg = _index(i["customers"], "customer_id"), _index(i["products"], "product_id"), \
        _index(i["regions"], "region")
    out = []
    for o in i["orders"]:
        for c in cust.get(o["customer_id"], []):
            for p in (prod.get(o["product_id"], []) if products else [{}]):
                for g in (reg.get(c["region"], []) if regions else [{}]):
                    out.append({**{f"o.{k}": v for k, v in o.items()}, **{f"c.{k}": v for k, v in c.items()},
                                **{f"p.{k}": v for k, v in p.items()}, **{f"g.{k}": v for k, v in g.items()}})
    return out


def _refunded(i: Inputs) -> dict[int, Decimal]:
    out: dict[int, Decimal] = {}
    for r in i["refunds"]:
        out[r["order_id"]] = out.get(r["order_id"], Decimal(0)) + r["amount"]
    return out


def _groups(rows: list[Row], key: Callable[[Row], tuple[Any, ...]]) -> dict[tuple[Any, ...], list[Row]]:
    out: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def revenue_by_region(i: Inputs) -> list[Row]:
    rows = [r for r in _joined(i) if r["o.status"] == "completed"]
    return [{"region": k[0], "revenue": sum(r["o.amount"] for r in g), "orders": len(g)}
            for k, g in _groups(rows, lambda r: (r["c.region"],)).items()]


def top_customers(i: Inputs) -> list[Row]:
    rows = [r for r in _joined(i) if r["o.status"] != "cancelled"]
    out = [{"customer_id": k[0], "tier": k[1], "spend": sum(r["o.amount"] for r in g)}
           for k, g in _groups(rows, lambda r: (r["o.customer_id"], r["c.tier"])).items()]
    return sorted(out, key=lambda r: (-r["spend"], r["customer_id"]))[:3]


def _size(amount: Decimal) -> str:
    return "large" if amount >= 100 else "medium" if amount >= 20 else "small"


def order_sizes(i: Inputs) -> list[Row]:
    rows = [r for r in _joined(i) if r["o.status"] != "cancelled"]
    return [{"size": k[0], "tier": k[1], "orders": len(g), "units": sum(r["o.quantity"] for r in g)}
            for k, g in _groups(rows, lambda r: (_size(r["o.amount"]), r["c.tier"])).items()]


def category_tiers(i: Inputs) -> list[Row]:
    rows = [r for r in _joined(i, products=True) if r["o.status"] in ("completed", "shipped")]
    return [{"category": k[0], "tier": k[1],
             "completed_amount": sum((r["o.amount"] if r["o.status"] == "completed" else Decimal(0)) for r in g),
             "buyers": len({r["o.customer_id"] for r in g}), "units": sum(r["o.quantity"] for r in g)}
            for k, g in _groups(rows, lambda r: (r["p.category"], r["c.tier"])).items()]


def daily_revenue(i: Inputs) -> list[Row]:
    rows = [r for r in _joined(i, products=True) if r["o.status"] == "completed" and r["p.category"] != "gift"]
    return [{"order_date": k[0], "tier": k[1], "revenue": sum(r["o.amount"] for r in g), "orders": len(g)}
            for k, g in _groups(rows, lambda r: (r["o.ordered_at"].date(), r["c.tier"])).items()]


def net_revenue(i: Inputs) -> list[Row]:
    refunded = _refunded(i)
    rows = [r for r in _joined(i, products=True) if r["o.status"] == "completed" and r["p.category"] != "gift"]
    return [{"region": k[0], "gross": sum(r["o.amount"] for r in g),
             "net": sum(r["o.amount"] - refunded.get(r["o.order_id"], Decimal(0)) for r in g),
             "refunded_orders": sum(1 for r in g if r["o.order_id"] in refunded)}
            for k, g in _groups(rows, lambda r: (r["c.region"],)).items()]


def country_categories(i: Inputs) -> list[Row]:
    refunded = _refunded(i)
    rows = [r for r in _joined(i, products=True, regions=True)
            if r["o.status"] == "completed" and refunded.get(r["o.order_id"], Decimal(0)) < r["o.amount"]]
    out = [{"country": k[0], "category": k[1], "orders": len(g), "revenue": sum(r["o.amount"] for r in g),
            "largest": max(r["o.amount"] for r in g)}
           for k, g in _groups(rows, lambda r: (r["g.country"], r["p.category"])).items()]
    return [r for r in out if r["orders"] >= 1]


@dataclass(frozen=True)
class Template:
    name: str
    families: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    sql: str  # Spark SQL; {s} is the table set's suffix
    compute: Callable[[Inputs], list[Row]]
    ordered: bool = False


_OC = "FROM src.orders_{s} o\nJOIN src.customers_{s} c ON o.customer_id = c.customer_id\n"
_P = "JOIN src.products_{s} p ON o.product_id = p.product_id\n"
_R = ("LEFT JOIN (SELECT order_id, SUM(amount) AS refunded FROM src.refunds_{s} GROUP BY order_id) r\n"
      "  ON o.order_id = r.order_id\n")
TEMPLATES = [
    Template("revenue_by_region", ("orders", "customers"),
             (("region", "string"), ("revenue", "decimal(28,2)"), ("orders", "bigint")),
             "SELECT c.region, SUM(o.amount) AS revenue, COUNT(*) AS orders\n" + _OC
             + "WHERE o.status = 'completed'\nGROUP BY c.region", revenue_by_region),
    Template("top_customers", ("orders", "customers"),
             (("customer_id", "bigint"), ("tier", "string"), ("spend", "decimal(28,2)")),
             "SELECT o.customer_id, c.tier, SUM(o.amount) AS spend\n" + _OC
             + "WHERE o.status <> 'cancelled'\nGROUP BY o.customer_id, c.tier\n"
               "ORDER BY spend DESC, o.customer_id\nLIMIT 3", top_customers, ordered=True),
    Template("order_sizes", ("orders", "customers"),
             (("size", "string"), ("tier", "string"), ("orders", "bigint"), ("units", "bigint")),
             "SELECT CASE WHEN o.amount >= 100 THEN 'large' WHEN o.amount >= 20 THEN 'medium' ELSE 'small' END"
             " AS size,\n  c.tier, COUNT(*) AS orders, SUM(o.quantity) AS units\n" + _OC
             + "WHERE o.status <> 'cancelled'\nGROUP BY CASE WHEN o.amount >= 100 THEN 'large' "
               "WHEN o.amount >= 20 THEN 'medium' ELSE 'small' END, c.tier", order_sizes),
    Template("category_tiers", ("orders", "customers", "products"),
             (("category", "string"), ("tier", "string"), ("completed_amount", "decimal(28,2)"),
              ("buyers", "bigint"), ("units", "bigint")),
             "SELECT p.category, c.tier,\n"
             "  SUM(CASE WHEN o.status = 'completed' THEN o.amount ELSE 0 END) AS completed_amount,\n"
             "  COUNT(DISTINCT o.customer_id) AS buyers, SUM(o.quantity) AS units\n" + _OC + _P
             + "WHERE o.status IN ('completed', 'shipped')\nGROUP BY p.category, c.tier", category_tiers),
    Template("daily_revenue", ("orders", "customers", "products"),
             (("order_date", "date"), ("tier", "string"), ("revenue", "decimal(28,2)"), ("orders", "bigint")),
             "SELECT CAST(o.ordered_at AS DATE) AS order_date, c.tier, SUM(o.amount) AS revenue, "
             "COUNT(*) AS orders\n" + _OC + _P
             + "WHERE o.status = 'completed' AND p.category <> 'gift'\n"
               "GROUP BY CAST(o.ordered_at AS DATE), c.tier", daily_revenue),
    Template("net_revenue", ("orders", "customers", "products", "refunds"),
             (("region", "string"), ("gross", "decimal(28,2)"), ("net", "decimal(38,2)"),
              ("refunded_orders", "bigint")),
             "SELECT c.region, SUM(o.amount) AS gross,\n"
             "  SUM(o.amount - COALESCE(r.refunded, 0)) AS net,\n"
             "  SUM(CASE WHEN r.refunded IS NOT NULL THEN 1 ELSE 0 END) AS refunded_orders\n" + _OC + _P + _R
             + "WHERE o.status = 'completed' AND p.category <> 'gift'\nGROUP BY c.region", net_revenue),
    Template("country_categories", ("orders", "customers", "products", "refunds", "regions"),
             (("country", "string"), ("category", "string"), ("orders", "bigint"), ("revenue", "decimal(28,2)"),
              ("largest", "decimal(18,2)")),
             "SELECT g.country, p.category, COUNT(*) AS orders, SUM(o.amount) AS revenue, "
             "MAX(o.amount) AS largest\n" + _OC + _P + "JOIN src.regions_{s} g ON c.region = g.region\n" + _R
             + "WHERE o.status = 'completed' AND COALESCE(r.refunded, 0) < o.amount\n"
               "GROUP BY g.country, p.category\nHAVING COUNT(*) >= 1", country_categories),
]


# ---------------------------------------------------------------- the generated suite


def _dump(doc: Any) -> str:
    """YAML text, through libyaml when present (76,000 rows are slow in pure Python)."""
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, width=200)


def _plain(v: Any) -> Any:
    """A value as YAML writes it for both tools: decimals as numbers (exact through repr), times as text."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


@dataclass
class Case:
    name: str
    given: dict[str, list[Row]]  # table name (src.orders_03) -> rows
    expected: list[Row]


@dataclass
class View:
    schema: str
    name: str
    template: Template
    suffix: str
    cases: list[Case]

    @property
    def sql(self) -> str:
        return self.template.sql.format(s=self.suffix)


def make_suite(views: int, tests: int, seed: int) -> list[View]:
    out = []
    for v in range(views):
        tpl = TEMPLATES[v % len(TEMPLATES)]
        suffix = f"{v % TABLE_SETS:02d}"
        cases = []
        for k in range(tests):
            rng = random.Random(f"{seed}:{v}:{k}")
            inputs = make_inputs(rng, nothing_qualifies=k == tests - 1)
            given = {f"src.{f}_{suffix}": [{c: _plain(x) for c, x in r.items()} for r in inputs[f]]
                     for f in tpl.families}
            expected = [{c: _plain(x) for c, x in r.items()} for r in tpl.compute(inputs)]
            name = "nothing_qualifies_no_rows" if k == tests - 1 else f"{tpl.name}_case_{k}"
            cases.append(Case(name, given, expected))
        out.append(View(f"marts_{v // 20:02d}", f"v_{v:04d}_{tpl.name}", tpl, suffix, cases))
    return out


def write_config(root: Path, spark_conf: dict[str, str] | None = None, trino_url: str | None = None,
                 jvm_options: list[str] | None = None) -> None:
    config: dict[str, Any] = {"version": 1, "project": "bench", "state": "sqlite:///.viewsync/state.db",
                              "catalogs": {"local": {"type": "managed", "url": "sqlite:///.viewsync/catalog.db"}}}
    if spark_conf or jvm_options:
        config["spark"] = {**({"conf": spark_conf} if spark_conf else {}),
                           **({"jvm_options": jvm_options} if jvm_options else {})}
    if trino_url:
        config["engines"] = {"trino": {"url": trino_url, "user": "bench"}}
    (root / "viewsync.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def write_viewsync(root: Path, suite: list[View], trino: bool = False) -> None:
    write_config(root)
    (root / "sources" / "local").mkdir(parents=True, exist_ok=True)
    (root / "sources" / "local" / "src.yaml").write_text(yaml.safe_dump({
        "catalog": "local", "schema": "src",
        "tables": [{"name": f"{f}_{s:02d}", "columns": [{"name": n, "type": t} for n, t in cols]}
                   for s in range(TABLE_SETS) for f, cols in FAMILIES.items()]}, sort_keys=False))
    (root / "views" / "local").mkdir(parents=True, exist_ok=True)
    by_schema: dict[str, list[dict[str, Any]]] = {}
    for v in suite:
        tests = []
        for c in v.cases:
            expect: dict[str, Any] = {"rows": c.expected} if c.expected else {"empty": True}
            if v.template.ordered and c.expected:
                expect["ordered"] = True
            tests.append({"name": c.name, "given": {t: {"rows": rows} for t, rows in c.given.items()},
                          "expect": expect})
        by_schema.setdefault(v.schema, []).append({
            "name": v.name, "columns": [{"name": n, "type": t} for n, t in v.template.columns],
            "representations": [{"dialect": "spark", "sql": v.sql},
                                *([{"dialect": "trino", "sql": _trino_sql(v.sql)}] if trino else [])],
            "tests": tests})
    for schema, docs in by_schema.items():
        (root / "views" / "local" / f"{schema}.yaml").write_text(
            _dump({"catalog": "local", "schema": schema, "views": docs}))


def _trino_sql(spark_sql: str) -> str:
    return str(sqlglot.transpile(spark_sql, read="spark", write="trino", pretty=True)[0])


def trino_run(root: Path, work: Path, aot_cache: Path | None) -> dict[str, Any]:
    """Start a Trino (memory catalog only), run the tests on it in a fresh process, stop it. Its JVM
    uses `aot_cache` (JDK 25's ahead-of-time cache), or records it as it exits when there is none
    (a training run: the JVM runs slower while it records), or runs without any when None (cold)."""
    import contextlib

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.helpers import trino as trino_server

    load = os.getloadavg()[0]
    cached = aot_cache is not None and aot_cache.is_file()
    started = time.perf_counter()
    with contextlib.contextmanager(trino_server.start)(work, None, None, aot_cache or False) as server:
        start_s = time.perf_counter() - started
        write_config(root, trino_url=f"http://127.0.0.1:{server.port}")
        try:
            result = _child([sys.executable, "-c", TRINO_CHILD, str(root)], {**os.environ, "PYTHONWARNINGS": "ignore"},
                            "viewsync test --engine trino")
        finally:
            write_config(root)
    result.update(trino_start_s=start_s, total_s=start_s + result["wall_s"], load=load, aot_cache=cached)
    return result


def write_sqlmesh(root: Path, suite: list[View]) -> None:
    (root / "config.yaml").write_text(
        "gateways:\n  local:\n    connection: {type: duckdb}\ndefault_gateway: local\n"
        "model_defaults: {dialect: duckdb}\n")
    (root / "external_models.yaml").write_text(yaml.safe_dump([
        {"name": f"src.{f}_{s:02d}", "columns": {n: DUCKDB_TYPES[t] for n, t in cols}}
        for s in range(TABLE_SETS) for f, cols in FAMILIES.items()], sort_keys=False))
    (root / "tests").mkdir(parents=True, exist_ok=True)
    by_schema: dict[str, dict[str, Any]] = {}
    for v in suite:
        (root / "models" / v.schema).mkdir(parents=True, exist_ok=True)
        duck = sqlglot.transpile(v.sql, read="spark", write="duckdb", pretty=True)[0]
        (root / "models" / v.schema / f"{v.name}.sql").write_text(
            f"MODEL (name {v.schema}.{v.name}, kind VIEW);\n\n{duck}\n")
        for c in v.cases:
            by_schema.setdefault(v.schema, {})[f"test_{v.name}__{c.name}"] = {
                "model": f"{v.schema}.{v.name}", "inputs": {t: {"rows": rows} for t, rows in c.given.items()},
                "outputs": {"query": {"rows": c.expected}}}
    for schema, doc in by_schema.items():
        (root / "tests" / f"test_{schema}.yaml").write_text(_dump(doc))


# ---------------------------------------------------------------- measuring


def _child(cmd: list[str], env: dict[str, str], what: str) -> dict[str, Any]:
    """One measured run in a process group of its own; returns once every process of the group has
    exited. A JVM still shutting down after its parent answered (Spark's: ~1.5 s on both cores, or
    writing its CDS archive) would otherwise run into the next measurement, another engine's.
    `settle_s`: that wait, outside the run's wall."""
    load = os.getloadavg()[0]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          start_new_session=True) as proc:
        out, err = proc.communicate(timeout=1800)
    settle_s = wait_for_group(proc.pid)
    if proc.returncode != 0 or not out.strip():
        raise SystemExit(f"{what} failed (exit {proc.returncode}):\n{err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result.update(load=load, settle_s=settle_s)
    return result


def wait_for_group(pgid: int, timeout: float = 120.0) -> float:
    """Wait until no process of the group `pgid` is left; returns the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    return time.perf_counter() - started


def _pid_alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def archive_ready(cache: Path) -> bool:
    """Whether a Spark child started now with this XDG_CACHE_HOME uses a CDS archive: one is
    published (reconciler/spark/conf.py names it spark-cds-KEY.jsa) and no writer of one still runs
    (its pid beside its temporary file)."""
    found = list((cache / "viewsync").glob("spark-cds-*.jsa"))
    writers = [p for p in (cache / "viewsync").glob("spark-cds-*.jsa.*.tmp.pid") if _pid_alive(p)]
    return bool(found) and not writers


def wait_for_archive(cache: Path, timeout: float = 300.0) -> float:
    """Wait until the cold run's JVM has published its CDS archive; returns the seconds waited."""
    started = time.perf_counter()
    while not archive_ready(cache):
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"no CDS archive published in {cache / 'viewsync'} within {timeout:.0f} s")
        time.sleep(0.1)
    return time.perf_counter() - started


def viewsync_run(root: Path, cache: Path, warm: bool = False) -> dict[str, Any]:
    """One run in a fresh process; `warm`: only once the CDS archive is there (see wait_for_archive)."""
    waited = wait_for_archive(cache) if warm else 0.0
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONWARNINGS": "ignore"}
    result = _child([sys.executable, "-c", VIEWSYNC_CHILD, str(root)], env, "viewsync test")
    result["archive_wait_s"] = waited
    return result


def sqlmesh_run(python: str, root: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "SQLMESH__DISABLE_ANONYMIZED_ANALYTICS": "1"}
    return _child([python, "-c", SQLMESH_CHILD, str(root)], env, "sqlmesh test")


def _fmt(values: list[float], digits: int = 1) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def _loads(runs: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['load']:.2f}" for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--views", type=int, default=200)
    ap.add_argument("--tests-per-view", type=int, default=5)
    ap.add_argument("--runs", type=int, default=1, help="warm viewsync runs and SQLMesh runs (the cold run is one)")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--engine", choices=("spark", "trino"), default="spark",
                    help="trino: also run the same tests on a Trino started here, after Spark's")
    ap.add_argument("--sqlmesh-python", help="the python of a venv with sqlmesh and duckdb (the anchor)")
    ap.add_argument("--keep", type=Path, help="write the generated projects here and keep them")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="also measure one more warm viewsync run with this Spark conf (viewsync.yaml spark.conf)")
    ap.add_argument("--against-jvm-options", metavar="OPTIONS",
                    help="also measure, interleaved with each run (cold and warm), the same project with these "
                         "spark.jvm_options (e.g. '-XX:+UseSerialGC', the collector before issue 44), in its own "
                         "copy and cache directory")
    args = ap.parse_args()
    against_opts = args.against_jvm_options.split() if args.against_jvm_options else []
    extra_conf = dict(kv.split("=", 1) for kv in args.spark_conf)

    print(machine.describe())
    started = time.perf_counter()
    suite = make_suite(args.views, args.tests_per_view, args.seed)
    n_tests = sum(len(v.cases) for v in suite)
    rows_per_input = [len(r) for v in suite for c in v.cases for r in c.given.values()]
    inputs_per_view = [len(v.template.families) for v in suite]
    with tempfile.TemporaryDirectory(prefix="viewsync-tests-bench-") as tmp:
        base = args.keep or Path(tmp)
        vs_root, sm_root, cache = base / "viewsync", base / "sqlmesh", base / "xdg-cache"
        for d in (vs_root, sm_root, cache):
            d.mkdir(parents=True, exist_ok=True)
        write_viewsync(vs_root, suite, trino=args.engine == "trino")
        write_sqlmesh(sm_root, suite)
        print(f"generated {n_tests} tests over {len(suite)} views ({min(inputs_per_view)}-{max(inputs_per_view)} "
              f"inputs per view, {statistics.mean(inputs_per_view):.1f} on average; {min(rows_per_input)}-"
              f"{max(rows_per_input)} rows per input, {sum(rows_per_input)} rows given in all; "
              f"{sum(len(v.cases) for v in suite if v.template.ordered)} tests ordered) "
              f"in {time.perf_counter() - started:.1f} s")

        cold = viewsync_run(vs_root, cache)
        against_root, against_cache = base / "viewsync-against", base / "xdg-cache-against"
        against_cold: list[dict[str, Any]] = []
        against_warm: list[dict[str, Any]] = []
        if against_opts:
            shutil.copytree(vs_root, against_root, ignore=shutil.ignore_patterns(".viewsync"))
            write_config(against_root, jvm_options=against_opts)
            against_cold.append(viewsync_run(against_root, against_cache))
        aot_cache = base / "trino.aot"
        aot_cache.unlink(missing_ok=True)
        # Cold as Spark's: no cache, and the cache's recording outside the measured wall (Spark writes
        # its archive after answering; Trino's JVM records as it runs, so in a run of its own).
        trino_cold = trino_run(vs_root, base / "trino-cold", None) if args.engine == "trino" else None
        training = trino_run(vs_root, base / "trino-training", aot_cache) if args.engine == "trino" else None
        warm: list[dict[str, Any]] = []
        on_trino: list[dict[str, Any]] = []
        for i in range(args.runs):  # with --engine trino, interleaved: Spark's and Trino's runs see the same machine
            warm.append(viewsync_run(vs_root, cache, warm=True))
            if against_opts:
                against_warm.append(viewsync_run(against_root, against_cache, warm=True))
            if args.engine == "trino":
                on_trino.append(trino_run(vs_root, base / f"trino-{i}", aot_cache))
        tuned: list[dict[str, Any]] = []
        if extra_conf:
            write_config(vs_root, extra_conf)
            tuned = [viewsync_run(vs_root, cache, warm=True)]
        anchor: list[dict[str, Any]] = []
        skipped = None
        if not args.sqlmesh_python:
            skipped = "SQLMesh anchor skipped: no --sqlmesh-python given"
        elif not Path(args.sqlmesh_python).exists():
            skipped = f"SQLMesh anchor skipped: {args.sqlmesh_python} does not exist"
        else:
            anchor = [sqlmesh_run(args.sqlmesh_python, sm_root) for _ in range(args.runs)]

    print()
    print("| measurement | runs | median (min-max) | target | load (1 min) at start |")
    print("|---|---:|---:|---:|---|")
    table: list[tuple[str, list[dict[str, Any]], str, int, str]] = [
        ("viewsync cold CDS: wall incl. Spark start (s)", [cold], "wall_s", 1, "≤ 35"),
        ("  of which Spark start (s)", [cold], "spark_start_s", 1, ""),
        ("  of which running the tests (s)", [cold], "run_s", 1, ""),
        ("  JVM peak RSS (MB)", [cold], "jvm_peak_rss_mb", 0, "≤ 1024"),
        ("  then its processes' exit, the archive written (s, not in the wall)", [cold], "settle_s", 1, ""),
        ("viewsync warm CDS: wall incl. Spark start (s)", warm, "wall_s", 1, "≤ 25"),
        ("  of which Spark start (s)", warm, "spark_start_s", 1, ""),
        ("  of which running the tests (s)", warm, "run_s", 1, ""),
        ("  JVM peak RSS (MB)", warm, "jvm_peak_rss_mb", 0, "≤ 1024"),
        ("  then its processes' exit (s, not in the wall)", warm, "settle_s", 1, ""),
    ]
    if against_opts:  # the same rows for the runs with --against-jvm-options, each after its counterpart
        label = f"with jvm_options {' '.join(against_opts)}: "
        table += [(("viewsync " + label + name.removeprefix("viewsync ")) if not name.startswith(" ") else name,
                   against_cold if runs is not warm else against_warm, key, digits, target)
                  for name, runs, key, digits, target in table]
    for name, runs, key, digits, target in table:
        print(f"| {name} | {len(runs)} | {_fmt([float(r[key] or 0) for r in runs], digits)} | {target} | "
              f"{_loads(runs)} |")
    if against_opts:
        ratio = statistics.median(r["wall_s"] for r in warm) / statistics.median(r["wall_s"] for r in against_warm)
        print(f"| ratio this ÷ with jvm_options {' '.join(against_opts)}, wall: cold, warm | | "
              f"{cold['wall_s'] / against_cold[0]['wall_s']:.2f}, {ratio:.2f} | | |")
    if tuned:
        for name, key, digits in (("wall incl. Spark start (s)", "wall_s", 1),
                                  ("  of which running the tests (s)", "run_s", 1),
                                  ("  JVM peak RSS (MB)", "jvm_peak_rss_mb", 0)):
            label = "viewsync warm, with --spark-conf: " if not name.startswith(" ") else ""
            print(f"| {label}{name} | 1 | {_fmt([float(r[key] or 0) for r in tuned], digits)} | | "
                  f"{_loads(tuned)} |")
    for label, runs in (("cold", [cold]), ("warm", warm)):
        med = [statistics.median(r["per_test_s"]) * 1000 for r in runs]
        mean = [r["wall_s"] / n_tests * 1000 for r in runs]
        print(f"| viewsync {label}: median per test, runner's share (ms) | {len(runs)} | {_fmt(med)} | | "
              f"{_loads(runs)} |")
        print(f"| viewsync {label}: wall / tests (ms) | {len(runs)} | {_fmt(mean)} | | {_loads(runs)} |")
    if trino_cold is not None:
        assert training is not None
        for label, runs in (("Trino cold, no AOT cache", [trino_cold]),
                            ("Trino recording the AOT cache (not in the ratios)", [training]),
                            ("Trino warm AOT", on_trino)):
            print(f"| {label}: start + wall of `test --engine trino` (s) | {len(runs)} | "
                  f"{_fmt([r['total_s'] for r in runs])} | ≤ 1.5x Spark | {_loads(runs)} |")
            for name, key in (("  of which Trino's start (s)", "trino_start_s"),
                              ("  of which the test process, wall (s)", "wall_s"),
                              ("  of which running the tests (s)", "run_s")):
                print(f"| {name} | {len(runs)} | {_fmt([float(r[key]) for r in runs])} | | {_loads(runs)} |")
        if not all(r["aot_cache"] for r in on_trino):
            print("| (the Trino training run recorded no ahead-of-time cache: JDK 25 or later is needed) | | | | |")
        tr = statistics.median(r["total_s"] for r in on_trino)
        print(f"| ratio Trino / Spark, wall incl. start: cold ÷ cold, warm ÷ warm | | "
              f"{trino_cold['total_s'] / cold['wall_s']:.2f}, "
              f"{tr / statistics.median(r['wall_s'] for r in warm):.2f} | ≤ 1.5 | |")
    if anchor:
        print(f"| SQLMesh on DuckDB: wall incl. import and project load (s) | {len(anchor)} | "
              f"{_fmt([r['wall_s'] for r in anchor])} | | {_loads(anchor)} |")
        print(f"|  of which loading the project (s) | {len(anchor)} | {_fmt([r['load_s'] for r in anchor])} | | "
              f"{_loads(anchor)} |")
        print(f"|  of which running the tests (s) | {len(anchor)} | {_fmt([r['run_s'] for r in anchor])} | | "
              f"{_loads(anchor)} |")
        print(f"| SQLMesh: median per test, measured per test (ms) | {len(anchor)} | "
              f"{_fmt([statistics.median(r['per_test_s']) * 1000 for r in anchor])} | | {_loads(anchor)} |")
        print(f"| SQLMesh: wall / tests (ms) | {len(anchor)} | "
              f"{_fmt([r['wall_s'] / n_tests * 1000 for r in anchor])} | | {_loads(anchor)} |")
        sm = statistics.median(r["wall_s"] for r in anchor)
        sm_run = statistics.median(r["run_s"] for r in anchor)
        vs_warm = statistics.median(r["wall_s"] for r in warm)
        vs_run = statistics.median(r["run_s"] for r in warm)
        print(f"| ratio viewsync / SQLMesh, wall: cold, warm | | {cold['wall_s'] / sm:.2f}, {vs_warm / sm:.2f} | | |")
        print(f"| ratio viewsync / SQLMesh, running the tests only (warm) | | {vs_run / sm_run:.2f} | | |")
    print()
    if skipped:
        print(skipped)

    ok = True
    if tuned:
        print("--spark-conf: " + ", ".join(f"{k}={v}" for k, v in extra_conf.items()))
    for label, runs in (("viewsync cold", [cold]), ("viewsync warm", warm), ("viewsync with --spark-conf", tuned),
                        ("viewsync with --against-jvm-options", [*against_cold, *against_warm]),
                        ("viewsync on Trino, cold", [trino_cold] if trino_cold else []),
                        ("viewsync on Trino, warm", on_trino)):
        for r in runs:
            s = r["summary"]
            print(f"{label}: {s['tests']} tests, {s['passed']} passed, {s['failed']} failed, {s['error']} errors")
            if s["tests"] != n_tests or s["passed"] != n_tests:
                ok = False
                for t in r["not_passed"]:
                    print(f"  {t['location']['file']}:{t['location']['line']} {t['name']}: "
                          f"{t.get('error') or t.get('difference', {}).get('message')}")
    for r in anchor:
        print(f"SQLMesh: {r['tests']} tests, {r['passed']} passed")
        if r["tests"] != n_tests or r["passed"] != n_tests:
            ok = False
            for p in r["not_passed"]:
                print(f"  {p}")
    print(f"{machine.describe()}; benchmark took {time.perf_counter() - started:.0f} s")
    if not ok:
        raise SystemExit("CORRECTNESS: not every test passed in every run (see above)")


if __name__ == "__main__":
    main()
