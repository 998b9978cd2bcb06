"""Issue 2 acceptance on the sample (managed SQLite catalog), through the real CLI."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import jsonschema
import sqlalchemy as sa
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.managed import _insert_foreign_view
from tests.helpers.paths import ROOT

PLAN_SCHEMA = json.loads((ROOT / "schemas" / "plan.schema.json").read_text())


def _edit(repo: Path, rel: str, fn) -> None:  # type: ignore[no-untyped-def]
    path = repo / rel
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _plan_json(repo: Path, *args: str) -> dict:  # type: ignore[type-arg]
    res = run_cli(repo, "plan", "--format", "json", *args)
    data = json.loads(res.out)
    jsonschema.validate(data, PLAN_SCHEMA)
    return data


def test_plan_apply_replan_is_empty(sample_repo: Path) -> None:
    first = run_cli(sample_repo, "plan", "--detailed-exitcode")
    assert first.code == 2, first.text
    assert "6 to create" in first.out

    applied = run_cli(sample_repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    assert "6 applied, 0 failed" in applied.out

    again = run_cli(sample_repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.text
    assert "No changes" in again.out
    data = _plan_json(sample_repo)
    assert data["actions"] == [] and data["summary"]["unchanged"] == 6


def test_creates_follow_dependencies(sample_repo: Path) -> None:
    order = [a["view"]["name"] for a in _plan_json(sample_repo)["actions"]]
    assert order.index("completed_orders") < order.index("customer_summary") < order.index("top_customers")
    assert order.index("completed_orders") < order.index("daily_revenue")


def test_sql_edit_gives_exactly_one_update_naming_the_field(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0

    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"][2]["representations"][0]["sql"] = "SELECT order_id, SUM(amount) AS refunded " \
            "FROM sales.refund_events WHERE amount > 0 GROUP BY order_id"
        del doc["views"][2]["representations"][1]["generated"]  # its trino SQL is kept by hand from now on

    _edit(sample_repo, "views/local/sales.yaml", edit)
    data = _plan_json(sample_repo)
    assert data["summary"] == {"create": 0, "update": 1, "drop": 0, "adopt": 0, "unchanged": 5}
    (action,) = data["actions"]
    assert action["view"] == {"catalog": "local", "schema": "sales", "name": "refunds"}
    assert [c["field"] for c in action["changes"]] == ["representations.spark.sql"]
    text = run_cli(sample_repo, "plan", "--detailed-exitcode")
    assert text.code == 2
    assert "~ update local.sales.refunds" in text.out and "+   WHERE" not in text.out
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 0
    hist = run_cli(sample_repo, "history", "local.sales.refunds")
    assert hist.code == 0
    assert re.search(r"v1 .* create", hist.out) and re.search(r"v2 .* update .*representations.spark.sql", hist.out)


def test_removed_view_is_dropped_only_with_prune(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    _edit(sample_repo, "views/local/analytics.yaml", lambda d: d["views"].pop(2))  # customer_tags

    plain = _plan_json(sample_repo)
    assert plain["actions"] == []
    assert any("customer_tags" in w and "--prune" in w for w in plain["warnings"])
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0  # nothing dropped

    pruned = _plan_json(sample_repo, "--prune")
    assert [(a["action"], a["view"]["name"]) for a in pruned["actions"]] == [("drop", "customer_tags")]
    assert run_cli(sample_repo, "apply", "--auto-approve", "--prune").code == 0
    assert _plan_json(sample_repo, "--prune")["actions"] == []
    audit = json.loads(run_cli(sample_repo, "audit", "--format", "json", "--view",
                               "local.analytics.customer_tags").out)
    assert [(r["action"], r["outcome"]) for r in audit] == [("create", "applied"), ("drop", "applied")]


def test_mass_drop_guard(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    (sample_repo / "views/local/analytics.yaml").unlink()  # 3 of 6 managed views
    res = run_cli(sample_repo, "plan", "--prune")
    assert res.code == 1 and "mass_drop" in res.out and "--allow-mass-drop" in res.out
    blocked = run_cli(sample_repo, "apply", "--auto-approve", "--prune")
    assert blocked.code == 1
    assert _plan_json(sample_repo)["summary"]["unchanged"] == 3  # nothing was dropped
    ok = run_cli(sample_repo, "apply", "--auto-approve", "--prune", "--allow-mass-drop")
    assert ok.code == 0 and "3 applied" in ok.out


def _catalog_rows(repo: Path) -> list[tuple]:  # type: ignore[type-arg]
    con = sqlite3.connect(repo / ".viewsync" / "catalog.db")
    try:
        return con.execute("SELECT m.view_name, m.current_version, m.deleted_at, v.representations "
                           "FROM view_meta m JOIN view_version_info v ON v.view_id = m.view_id "
                           "ORDER BY m.view_name, v.version").fetchall()
    finally:
        con.close()


def test_unmanaged_view_is_never_touched_whatever_the_flags(sample_repo: Path) -> None:
    _insert_foreign_view(sample_repo, "sales", "legacy_orders", None, "SELECT 1 AS x")
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    before = [r for r in _catalog_rows(sample_repo) if r[0] == "legacy_orders"]

    for flags in ([], ["--prune"], ["--prune", "--allow-mass-drop"], ["--adopt"], ["--adopt", "--prune"]):
        data = _plan_json(sample_repo, *flags)
        assert all(a["view"]["name"] != "legacy_orders" for a in data["actions"]), flags
        assert {"catalog": "local", "schema": "sales", "name": "legacy_orders", "format": "managed",
                "managed_by": None} in data["unmanaged"]
        assert run_cli(sample_repo, "apply", "--auto-approve", *flags).code == 0
    assert [r for r in _catalog_rows(sample_repo) if r[0] == "legacy_orders"] == before


def test_declared_unmanaged_view_needs_adoption(sample_repo: Path) -> None:
    _insert_foreign_view(sample_repo, "sales", "legacy_orders", None, "SELECT 1 AS x")

    def declare(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"].append({"name": "legacy_orders", "representations": [
            {"dialect": "spark", "sql": "SELECT 2 AS x"}]})

    _edit(sample_repo, "views/local/sales.yaml", declare)
    refused = run_cli(sample_repo, "plan")
    assert refused.code == 1 and "unmanaged_declared" in refused.out and "--adopt" in refused.out
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 1
    assert [r[3] for r in _catalog_rows(sample_repo) if r[0] == "legacy_orders"] == [
        '[{"dialect": "spark", "sql": "SELECT 1 AS x"}]']

    adopted = _plan_json(sample_repo, "--adopt")
    (adopt,) = [a for a in adopted["actions"] if a["view"]["name"] == "legacy_orders"]
    assert adopt["action"] == "adopt" and [c["field"] for c in adopt["changes"]] == ["representations.spark.sql"]
    assert run_cli(sample_repo, "apply", "--auto-approve", "--adopt").code == 0
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 0  # now ours, no adoption needed


def test_view_owned_by_another_project_is_an_error(sample_repo: Path) -> None:
    _insert_foreign_view(sample_repo, "sales", "refunds", "finance-views", "SELECT 1 AS x")
    res = run_cli(sample_repo, "plan", "--adopt", "--prune", "--format", "json")
    data = json.loads(res.out)
    assert res.code == 1
    assert [e["code"] for e in data["errors"]] == ["owned_by_other"]
    assert "finance-views" in data["errors"][0]["message"]


def test_apply_refuses_without_tty_or_auto_approve(sample_repo: Path) -> None:
    res = run_cli(sample_repo, "apply")
    assert res.code == 1 and "--auto-approve" in res.err
    assert not (sample_repo / ".viewsync" / "state.db").exists() or _count(sample_repo, "vs_versions") == 0
    assert _catalog_views(sample_repo) == 0


def _count(repo: Path, table: str) -> int:
    eng = sa.create_engine(f"sqlite:///{repo / '.viewsync' / 'state.db'}")
    with eng.connect() as conn:
        n = conn.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar()
    eng.dispose()
    return int(n or 0)


def _catalog_views(repo: Path) -> int:
    path = repo / ".viewsync" / "catalog.db"
    if not path.exists():
        return 0
    return len(_catalog_rows(repo))


def test_apply_records_run_audit_and_versions(sample_repo: Path) -> None:
    res = run_cli(sample_repo, "apply", "--auto-approve", "--actor", "alice")
    assert res.code == 0
    rows = json.loads(run_cli(sample_repo, "audit", "--format", "json").out)
    assert len(rows) == 6 and {r["outcome"] for r in rows} == {"applied"}
    assert {r["actor"] for r in rows} == {"alice"}
    assert all(r["after_digest"].startswith("sha256:") and r["before_spec"] is None for r in rows)
    assert _count(sample_repo, "vs_versions") == 6 and _count(sample_repo, "vs_runs") == 1


def test_dependency_cycle_is_a_plan_error(sample_repo: Path) -> None:
    def cycle(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"][0]["representations"] = [{"dialect": "spark", "sql": "SELECT * FROM daily_revenue"}]

    _edit(sample_repo, "views/local/sales.yaml", cycle)
    res = run_cli(sample_repo, "plan", "--format", "json")
    assert res.code == 1
    (error,) = json.loads(res.out)["errors"]
    assert error["code"] == "dependency_cycle"
    assert "local.sales.completed_orders" in error["message"] and "local.sales.daily_revenue" in error["message"]


def test_select_and_catalog_filters(sample_repo: Path) -> None:
    data = _plan_json(sample_repo, "--select", "local.analytics.*")
    assert {a["view"]["schema"] for a in data["actions"]} == {"analytics"}
    assert run_cli(sample_repo, "plan", "--catalog", "nope").code == 1


def test_markdown_and_saved_plan_show(sample_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert run_cli(sample_repo, "plan", "--out", str(out)).code == 0
    jsonschema.validate(json.loads(out.read_text()), PLAN_SCHEMA)
    md = run_cli(sample_repo, "show", str(out), "--format", "markdown")
    assert md.code == 0 and "| 6 | 0 | 0 | 0 | 0 | 0 |" in md.out and "<details>" in md.out
    applied = run_cli(sample_repo, "apply", str(out), "--auto-approve")
    assert applied.code == 0 and "6 applied" in applied.out


def test_drift_detects_out_of_band_edit(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    assert run_cli(sample_repo, "drift").code == 0
    con = sqlite3.connect(sample_repo / ".viewsync" / "catalog.db")
    con.execute("UPDATE view_version_info SET representations = ? WHERE view_id = "
                "(SELECT view_id FROM view_meta WHERE view_name = 'refunds')",
                ('[{"dialect": "spark", "sql": "SELECT 42 AS order_id"}]',))
    con.commit()
    con.close()
    res = run_cli(sample_repo, "drift", "--format", "json")
    assert res.code == 2
    items = json.loads(res.out)["items"]
    assert [(i["kind"], i["view"]["name"]) for i in items] == [("changed_out_of_band", "refunds")]


def test_fetch_warnings_reach_the_plan() -> None:
    from reconciler.adapters.base import SchemaSnapshot
    from reconciler.adapters.managed.adapter import ManagedAdapter
    from reconciler.plan.planner import PlanOptions, build_plan

    adapter = ManagedAdapter("local", {"url": "sqlite:///:memory:"})
    snap = SchemaSnapshot("local", "s", warnings=["local.s.odd: cannot be read (unknown type 'variant')"])
    plan = build_plan({}, {("local", "s"): snap}, {"local": adapter}, PlanOptions(project="p"), "sha256:" + "0" * 64)
    assert plan.warnings == ["local.s.odd: cannot be read (unknown type 'variant')"]


def test_import_writes_yaml_that_plans_empty(sample_repo: Path, tmp_path: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    _insert_foreign_view(sample_repo, "legacy", "old_orders", None, "SELECT order_id\nFROM sales.orders")
    fresh = tmp_path / "fresh"
    (fresh / "views").mkdir(parents=True)
    (fresh / "viewsync.yaml").write_text((sample_repo / "viewsync.yaml").read_text().replace(
        "sqlite:///.viewsync/catalog.db", f"sqlite:///{sample_repo / '.viewsync' / 'catalog.db'}"))
    res = run_cli(fresh, "import", "--catalog", "local")
    assert res.code == 0 and "Imported 7 view(s)" in res.out
    assert sorted(p.name for p in (fresh / "views" / "local").iterdir()) == ["analytics.yaml", "legacy.yaml",
                                                                             "sales.yaml"]
    assert "old_orders" in (fresh / "views/local/legacy.yaml").read_text()
    assert run_cli(fresh, "validate").code == 0
    data = _plan_json(fresh, "--adopt")
    assert data["errors"] == [] and data["summary"]["create"] == 0 and data["summary"]["update"] == 0
    assert [a["view"]["name"] for a in data["actions"]] == ["old_orders"]  # only adoption stamps the marker
    again = run_cli(fresh, "import", "--catalog", "local")
    assert "exists (use --force to overwrite)" in again.err


def test_case_sensitive_catalog_never_matches_another_case(sample_repo: Path) -> None:
    """`Legacy` is not `legacy` in a case-sensitive catalog: it must not be adopted in its place."""
    _insert_foreign_view(sample_repo, "sales", "legacy", None, "SELECT 1 AS x")

    def declare(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"].append({"name": "Legacy", "representations": [{"dialect": "spark", "sql": "SELECT 2 AS x"}]})

    _edit(sample_repo, "views/local/sales.yaml", declare)
    data = _plan_json(sample_repo, "--adopt")
    assert data["errors"] == []
    assert ("create", "Legacy") in [(a["action"], a["view"]["name"]) for a in data["actions"]]
    assert "legacy" in [u["name"] for u in data["unmanaged"]]
    assert run_cli(sample_repo, "apply", "--auto-approve", "--adopt").code == 0
    assert [r[3] for r in _catalog_rows(sample_repo) if r[0] == "legacy"] == [
        '[{"dialect": "spark", "sql": "SELECT 1 AS x"}]']
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 0


def test_fetch_reports_progress_per_schema(sample_repo: Path) -> None:
    from reconciler.plan.planner import PlanOptions
    from reconciler.workspace import Workspace

    seen: list[tuple[int, int]] = []
    ws = Workspace.open(sample_repo, parallelism=4)
    ws.progress = lambda done, total: seen.append((done, total))
    ws.plan(PlanOptions(project="demo-analytics"), ws.declarations())
    assert sorted(seen) == [(1, 2), (2, 2)]  # two schemas declared, none live yet
    quiet = run_cli(sample_repo, "plan")  # not a terminal: no progress in CI logs
    assert "Reading catalogs" not in quiet.err


def test_backend_failure_mid_apply_loses_nothing_and_rerun_converges(sample_repo: Path) -> None:
    # The catalog starts refusing one write, as a full disk or a broken connection would.
    (sample_repo / ".viewsync").mkdir()
    con = sqlite3.connect(sample_repo / ".viewsync" / "catalog.db")
    from reconciler.adapters.managed.tables import metadata

    engine = sa.create_engine(f"sqlite:///{sample_repo / '.viewsync' / 'catalog.db'}")
    metadata.create_all(engine)
    engine.dispose()
    con.execute("CREATE TRIGGER refuse BEFORE INSERT ON view_meta WHEN NEW.view_name = 'customer_summary' "
                "BEGIN SELECT RAISE(ABORT, 'simulated I/O error'); END")
    con.commit()

    failed = run_cli(sample_repo, "apply", "--auto-approve")
    assert failed.code == 1 and "Traceback" not in failed.text
    assert "customer_summary: failed" in failed.out and "simulated I/O error" in failed.out
    outcomes = {r["view_name"]: r["outcome"] for r in json.loads(run_cli(sample_repo, "audit", "--format",
                                                                          "json").out)}
    assert outcomes["completed_orders"] == "applied" and outcomes["customer_summary"] == "failed"
    assert "skipped" in outcomes.values()  # what came after the failure was not attempted
    applied_before = {n for n, o in outcomes.items() if o == "applied"}
    assert {r[0] for r in _catalog_rows(sample_repo)} == applied_before  # catalog and audit agree

    con.execute("DROP TRIGGER refuse")
    con.commit()
    con.close()
    rerun = run_cli(sample_repo, "apply", "--auto-approve")
    assert rerun.code == 0, rerun.text
    assert f"{6 - len(applied_before)} applied" in rerun.out  # only what was missing
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 0
    hist = json.loads(run_cli(sample_repo, "history", "local.sales.completed_orders", "--format", "json").out)
    assert [v["version"] for v in hist["versions"]] == [1]  # nothing applied twice


def test_dialect_the_catalog_cannot_store_is_a_plan_error() -> None:
    from reconciler.adapters.base import Capabilities, SchemaSnapshot
    from reconciler.adapters.managed.adapter import ManagedAdapter
    from reconciler.core.model import Representation, ViewId, ViewSpec
    from reconciler.plan.planner import PlanOptions, build_plan

    class SparkOnly(ManagedAdapter):  # a managed store restricted to one dialect
        @property
        def capabilities(self) -> Capabilities:
            return Capabilities(strategy="managed", writable=True, writable_dialects=frozenset({"spark"}))

    adapter = SparkOnly("local", {"url": "sqlite:///:memory:"})
    spec = ViewSpec(representations=[Representation(dialect="spark", sql="SELECT 1"),
                                     Representation(dialect="trino", sql="SELECT 1")])
    vid = ViewId("local", "s", "v")
    plan = build_plan({vid: spec}, {("local", "s"): SchemaSnapshot("local", "s")}, {"local": adapter},
                      PlanOptions(project="p"), "sha256:" + "0" * 64)
    assert plan.actions == [] and [e.code for e in plan.errors] == ["dialect_not_storable"]
    assert "'trino'" in plan.errors[0].message
