"""Preview environments on the managed catalog, end to end through the CLI: the preview set,
the rewrite, convergence, a revert, `down`, `gc`, and the live views never touched."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from reconciler.core.model import PREVIEW, PREVIEW_COMMIT
from tests.helpers.access import git
from tests.helpers.cli import run_cli
from tests.helpers.preview import A_LIVE, chain_repo, change

TABLE = "sales.orders"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    config = {"version": 1, "project": "p", "state": "sqlite:///.viewsync/state.db",
              "catalogs": {"local": {"type": "managed", "url": "sqlite:///.viewsync/catalog.db"}}}
    root = chain_repo(tmp_path / "repo", config, "local", "shop", TABLE)
    assert run_cli(root, "apply", "--auto-approve").code == 0  # the live views, as on main
    return root


def _live(root: Path) -> dict[str, str]:
    """Every live row of the managed store outside preview schemas (the before/after comparison)."""
    con = sqlite3.connect(root / ".viewsync" / "catalog.db")
    rows = con.execute("SELECT m.schema_name, m.view_name, m.spec_digest, m.current_version, v.representations "
                       "FROM view_meta m JOIN view_version_info v ON v.view_id = m.view_id "
                       "AND v.version = m.current_version WHERE m.deleted_at = 0").fetchall()
    con.close()
    return {f"{s}.{n}": f"{d} v{ver} {reps}" for s, n, d, ver, reps in rows if "__" not in s}


def _copies(root: Path) -> dict[str, object]:
    from reconciler.adapters.managed.adapter import ManagedAdapter

    adapter = ManagedAdapter("local", {"url": f"sqlite:///{root / '.viewsync' / 'catalog.db'}"})
    try:
        return {str(v.id): v for s in adapter.list_schemas() if "__" in s for v in adapter.fetch(s).views.values()}
    finally:
        adapter.close()


def test_up_copies_the_changed_view_and_its_readers_with_references_to_the_copies(repo: Path) -> None:
    before = _live(repo)
    change(repo, "local", "shop", TABLE)
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "-f", "json")
    assert res.code == 0, res.text
    out = json.loads(res.out)
    assert [(c["view"], c["copy"], c["reason"]) for c in out["copies"]] == [
        ("local.shop.a", "local.shop__pr1.a", "changed"),
        ("local.shop.b", "local.shop__pr1.b", "reads local.shop.a"),
        ("local.shop.c", "local.shop__pr1.c", "reads local.shop.b")]  # d reads no changed view
    copies = _copies(repo)
    assert sorted(copies) == ["local.shop__pr1.a", "local.shop__pr1.b", "local.shop__pr1.c"]
    a, b, c = (copies[f"local.shop__pr1.{n}"] for n in "abc")
    assert a.spec.sql_for("spark") == "SELECT id, amount FROM sales.orders WHERE amount > 100"  # live table as is
    assert b.spec.sql_for("spark") == "SELECT id, amount * 2 AS doubled FROM shop__pr1.a"
    assert c.spec.sql_for("spark") == "SELECT COUNT(*) AS n, SUM(doubled) AS total FROM shop__pr1.b"
    head = git(repo, "rev-parse", "HEAD")
    assert a.marks[PREVIEW] == "pr1" and a.marks[PREVIEW_COMMIT] == head and a.managed_by == "p"
    assert _live(repo) == before  # the live views are untouched


def test_up_twice_converges_and_a_revert_of_b_keeps_references_right(repo: Path) -> None:
    change(repo, "local", "shop", TABLE, b_factor=3)
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main").code == 0
    again = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "-f", "json")
    assert again.code == 0 and json.loads(again.out)["steps"] == []  # nothing to write
    # revert b only: a still changed, so b and c stay (they read a), b's copy back to factor 2
    change(repo, "local", "shop", TABLE, b_factor=2, message="revert b")
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "-f", "json")
    assert res.code == 0, res.text
    assert {s["view"] for s in json.loads(res.out)["steps"]} >= {"local.shop__pr1.b"}
    copies = _copies(repo)
    assert copies["local.shop__pr1.b"].spec.sql_for("spark") == "SELECT id, amount * 2 AS doubled FROM shop__pr1.a"
    assert copies["local.shop__pr1.c"].spec.sql_for("spark").endswith("FROM shop__pr1.b")
    # revert a too: nothing changed any more, every copy goes
    change(repo, "local", "shop", TABLE, a_sql=A_LIVE, b_factor=2, message="revert a")
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "-f", "json")
    assert res.code == 0, res.text
    assert _copies(repo) == {}


def test_down_leaves_no_trace_and_list_shows_envs(repo: Path) -> None:
    before = _live(repo)
    change(repo, "local", "shop", TABLE)
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main").code == 0
    listed = json.loads(run_cli(repo, "preview", "list", "-f", "json").out)
    assert [(e["env"], len(e["views"]), e["expired"]) for e in listed] == [("pr1", 3, False)]
    res = run_cli(repo, "preview", "down", "--env", "pr1")
    assert res.code == 0, res.text
    assert _copies(repo) == {}
    assert _live(repo) == before
    assert run_cli(repo, "preview", "list").out == "No preview environments.\n"
    assert "nothing to remove" in run_cli(repo, "preview", "down", "--env", "pr1").out


def test_gc_removes_only_expired_envs(repo: Path) -> None:
    change(repo, "local", "shop", TABLE)
    assert run_cli(repo, "preview", "up", "--env", "old", "--base", "main", "--ttl", "1m").code == 0
    assert run_cli(repo, "preview", "up", "--env", "fresh", "--base", "main", "--ttl", "7d").code == 0
    from reconciler.services import preview as preview_service
    from reconciler.workspace import Workspace

    ws = Workspace.open(repo)
    try:
        envs = {e.env: e for e in preview_service.list_envs(ws)}
        results = preview_service.gc(ws, now=envs["old"].expires_at)  # the moment "old" expires
    finally:
        ws.close()
    assert [r.env for r in results] == ["old"]
    assert sorted(_copies(repo)) == ["local.shop__fresh.a", "local.shop__fresh.b", "local.shop__fresh.c"]


def test_a_view_without_the_env_mark_is_never_touched(repo: Path) -> None:
    from tests.helpers.managed import _insert_foreign_view

    _insert_foreign_view(repo, "shop__pr1", "b", None, "SELECT 1 AS x")  # someone's own view in the way
    change(repo, "local", "shop", TABLE)
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main")
    assert res.code == 1
    assert "local.shop__pr1.b: the name is taken by a view that is not a copy of preview env 'pr1'" in res.err
    assert sorted(_copies(repo)) == ["local.shop__pr1.b"]  # nothing was written
    assert run_cli(repo, "preview", "down", "--env", "pr1").code == 0
    assert sorted(_copies(repo)) == ["local.shop__pr1.b"]  # and down leaves it alone


def test_runs_are_audited_with_their_own_kind(repo: Path) -> None:
    change(repo, "local", "shop", TABLE)
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main").code == 0
    con = sqlite3.connect(repo / ".viewsync" / "state.db")
    kinds = [r[0] for r in con.execute("SELECT command FROM vs_runs ORDER BY started_at")]
    audited = {r[0] for r in con.execute("SELECT schema_name FROM vs_audit WHERE outcome = 'applied'")}
    con.close()
    assert kinds == ["apply", "preview"] and "shop__pr1" in audited


def test_plans_and_drift_leave_preview_copies_to_preview(repo: Path) -> None:
    change(repo, "local", "shop", TABLE)
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main").code == 0
    git(repo, "checkout", "-q", "main")  # the declarations as merged: the copies are declared nowhere
    plan = run_cli(repo, "plan", "--prune", "-f", "json")
    assert plan.code == 0, plan.text
    doc = json.loads(plan.out)
    assert doc["actions"] == [] and not any("__pr1" in w for w in doc["warnings"])
    drift = run_cli(repo, "drift")
    assert drift.code == 0 and "__pr1" not in drift.out
    assert sorted(_copies(repo)) == ["local.shop__pr1.a", "local.shop__pr1.b", "local.shop__pr1.c"]


def test_read_only_catalogs_get_no_copy_and_say_so_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    sqlite3.connect(db).execute("CREATE VIEW v AS SELECT 1 AS x").connection.close()
    config = {"version": 1, "project": "p", "state": "sqlite:///.viewsync/state.db",
              "catalogs": {"local": {"type": "managed", "url": "sqlite:///.viewsync/catalog.db"},
                           "ro": {"type": "jdbc", "url": f"sqlite:///{db}"}}}
    root = chain_repo(tmp_path / "repo", config, "local", "shop", TABLE)
    from tests.helpers.preview import write_views

    write_views(root, "ro", "main", [{"name": "v", "representations": [{"dialect": "sqlite", "sql": "SELECT 2 AS x"}]}])
    git(root, "add", "-A")
    git(root, "commit", "-qm", "jdbc view changed")
    res = run_cli(root, "preview", "up", "--env", "pr1", "--base", "main", "-f", "json")
    assert res.code == 0, res.text
    out = json.loads(res.out)
    assert out["copies"] == [] and out["notes"] == [
        "catalog 'ro' (jdbc) is read-only: its changed views get no preview copy"]


def test_previewing_needs_create_view_on_the_base_schema(repo: Path) -> None:
    from tests.helpers.access import commit_all

    (repo / "access.yaml").write_text("owners: [platform@example.com]\ngrants:\n"
                                      "  - {to: [bob-gh], privileges: [USE_CATALOG], catalog: local}\n"
                                      "  - {to: [bob-gh], privileges: [USE_SCHEMA, SELECT_VIEW], schema: local.shop}\n")
    git(repo, "checkout", "-q", "main")
    commit_all(repo, "policy", "platform")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    change(repo, "local", "shop", TABLE)
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "--actor", "bob-gh")
    assert res.code == 1
    assert res.err.startswith("Error: not permitted: actor bob-gh lacks CREATE_VIEW on schema local.shop "
                              "(needed to preview local.shop.a)")
    assert _copies(repo) == {}
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "--actor", "platform@example.com").code == 0


def test_the_base_defaults_to_the_merge_base_with_the_upstream(repo: Path) -> None:
    change(repo, "local", "shop", TABLE)
    res = run_cli(repo, "preview", "up", "--env", "pr1")
    assert res.code == 1 and res.err == ("Error: no --base given and the branch has no upstream to take the merge "
                                         "base with; pass --base REF (e.g. --base origin/main)\n")
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "nope").err == \
        "Error: --base nope: unknown git ref\n"
    git(repo, "branch", "-q", "--set-upstream-to=main")
    res = run_cli(repo, "preview", "up", "--env", "pr1", "-f", "json")
    assert res.code == 0, res.text
    assert json.loads(res.out)["base"] == git(repo, "rev-parse", "main")
    assert len(json.loads(res.out)["copies"]) == 3


@pytest.mark.slow
@pytest.mark.usefixtures("spark_verifier")
def test_up_with_spark_verifies_the_preview_set_and_runs_its_tests_before_writing(repo: Path) -> None:
    """A branch whose change breaks a test of a copied view writes no copy; --skip-tests does."""
    path = repo / "views" / "local" / "shop.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["views"][1]["tests"] = [{"name": "doubles", "given": {"a": {"rows": [{"id": 1, "amount": 200}]}},
                                 "expect": {"rows": [{"id": 1, "doubled": 400}]}}]
    doc["views"][2]["tests"] = [{"name": "counts_big_orders_only",  # computes a and b from the raw table
                                 "given": {"sales.orders": {"rows": [{"id": 1, "amount": 50},
                                                                     {"id": 2, "amount": 200}]}},
                                 "expect": {"rows": [{"n": 1, "total": 400}]}}]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    (repo / "sources" / "local").mkdir(parents=True)
    (repo / "sources" / "local" / "sales.yaml").write_text(yaml.safe_dump({"catalog": "local", "schema": "sales",
        "tables": [{"name": "orders", "columns": [{"name": "id", "type": "bigint"},
                                                  {"name": "amount", "type": "bigint"}]}]}))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    change_keeping_tests = yaml.safe_load(path.read_text())
    change_keeping_tests["views"][0]["representations"][0]["sql"] = "SELECT id, amount FROM sales.orders"  # no filter
    path.write_text(yaml.safe_dump(change_keeping_tests, sort_keys=False))
    git(repo, "commit", "-qam", "a without its filter")

    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "--spark")
    assert res.code == 1, res.text
    assert "preview env 'pr1': the preview set does not pass Spark, nothing was written" in res.err
    assert "test 'counts_big_orders_only' of local.shop.c failed at views/local/shop.yaml:" in res.err
    assert "doubles" not in res.err  # b's own test gives a's rows: it still passes
    assert _copies(repo) == {}
    skipped = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "--spark", "--skip-tests")
    assert skipped.code == 0, skipped.text
    assert sorted(_copies(repo)) == ["local.shop__pr1.a", "local.shop__pr1.b", "local.shop__pr1.c"]
