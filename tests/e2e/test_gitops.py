"""Issue 3: the GitOps workflow in a real temporary git repository, running the
exact `viewsync` commands of the workflows in .github/workflows."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import modules_loaded, run_cli
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

WORKFLOWS = ROOT / ".github" / "workflows"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def git_repo(sample_repo: Path) -> Path:
    git(sample_repo, "init", "-q", "-b", "main")
    git(sample_repo, "config", "user.name", "Dana Declarer")
    git(sample_repo, "config", "user.email", "dana@example.com")
    (sample_repo / ".gitignore").write_text(".viewsync/\n*.md\nplan.json\n")
    git(sample_repo, "add", "-A")
    git(sample_repo, "commit", "-qm", "sample views")
    return sample_repo


def workflow_commands(name: str) -> list[tuple[str, dict[str, str]]]:
    """The `viewsync` run steps of a workflow, with their env."""
    doc = yaml.safe_load((WORKFLOWS / name).read_text())
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    return [(s["run"], s.get("env", {})) for s in steps if "run" in s and s["run"].lstrip().startswith("viewsync")]


def run_step(repo: Path, command: str, env: dict[str, str], github: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a workflow step as Actions would: ${{ ... }} expressions substituted, bash -e."""
    def expr(value: str) -> str:
        return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: github.get(m.group(1), ""), value)

    full_env = {**os.environ, **{k: expr(str(v)) for k, v in env.items()}, "GITHUB_ACTOR": github.get("actor", "ci")}
    full_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + full_env["PATH"]
    return subprocess.run(["bash", "-e", "-c", command], cwd=repo, env=full_env, capture_output=True, text=True)


def _edit(repo: Path, rel: str, fn) -> None:  # type: ignore[no-untyped-def]
    path = repo / rel
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _audit(repo: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(run_cli(repo, "audit", "--format", "json").out)


def test_workflows_are_valid_and_wired() -> None:
    plan = yaml.safe_load((WORKFLOWS / "viewsync-plan.yml").read_text())
    assert plan[True]["pull_request"]["paths"] == ["views/**", "sources/**", "viewsync.yaml", "access.yaml"]
    assert any("review --base" in c for c, _ in workflow_commands("viewsync-plan.yml"))
    assert "<!-- viewsync-plan -->" in (WORKFLOWS / "viewsync-plan.yml").read_text()
    apply = yaml.safe_load((WORKFLOWS / "viewsync-apply.yml").read_text())
    assert apply["concurrency"] == {"group": "viewsync-apply", "cancel-in-progress": False}
    drift = yaml.safe_load((WORKFLOWS / "viewsync-drift.yml").read_text())
    assert "schedule" in drift[True]
    assert [c for c, _ in workflow_commands("viewsync-drift.yml")][0].startswith("viewsync --no-color drift")
    ci = yaml.safe_load((WORKFLOWS / "ci.yml").read_text())
    assert any(s.get("run") == ".ci/run" for s in ci["jobs"]["test"]["steps"])


def test_pull_request_plan_then_merge_and_apply(git_repo: Path) -> None:
    (apply_cmd, apply_env), = workflow_commands("viewsync-apply.yml")
    first = run_step(git_repo, apply_cmd, apply_env, {"actor": "ci-bot"})
    assert first.returncode == 0, first.stdout + first.stderr

    git(git_repo, "checkout", "-q", "-b", "feature")
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"][2]["representations"][0].update(
        sql="SELECT order_id, SUM(amount) AS refunded FROM sales.refund_events WHERE amount > 0 GROUP BY order_id"))
    _edit(git_repo, "views/local/analytics.yaml", lambda d: d["views"].pop(2))  # customer_tags
    assert run_cli(git_repo, "generate", "--dialect", "trino").code == 0  # the trino SQL follows the spark SQL
    git(git_repo, "commit", "-qam", "refunds: only positive amounts; retire customer_tags")

    validate, review = workflow_commands("viewsync-plan.yml")
    github = {"github.base_ref": "main", "secrets.ICEBERG_TOKEN": "", "actor": "pr-author"}
    assert run_step(git_repo, *validate, github).returncode == 0
    env = dict(review[1], BASE_REF="main")  # a local repo has no origin/ remote
    res = run_step(git_repo, review[0], env, github)
    assert res.returncode == 0, res.stdout + res.stderr
    md = (git_repo / "plan.md").read_text()
    assert md.startswith("<!-- viewsync-plan -->")
    assert "**changed** `local.sales.refunds` (representations.spark.sql, representations.trino.sql)" in md
    assert "**removed** `local.analytics.customer_tags`" in md
    assert "#### Spark verification" in md and "0 with errors" in md  # the workflow plans with --spark
    assert "<code>~ update</code> <b>local.sales.refunds</b>" in md and "+SELECT order_id" in md.replace(
        "```diff\n--- live", "")
    assert "customer_tags is managed by this project but no longer declared" in md
    assert "View tests: 1 passed, 0 failed" in md  # the changed view's test (nothing declared reads refunds)
    assert "All view tests: 7 passed, 0 failed" in md  # and every test (customer_tags is gone), same run
    assert "### Data diff" in md and "`local.sales.refunds` (update, key `order_id`)" in md
    assert "### Data checks" in md
    assert "<testsuites" in (git_repo / "junit" / "viewsync-tests.xml").read_text()
    assert "<testsuite" in (git_repo / "junit" / "checks.xml").read_text()
    saved = json.loads((git_repo / "review.json").read_text())
    assert saved["plan"]["declarations"]["git"]["commit"] == git(git_repo, "rev-parse", "HEAD")
    assert saved["spark"]["starts"] <= 2 and not saved["failed"]

    git(git_repo, "checkout", "-q", "main")
    git(git_repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #7 from feature")
    merge_sha = git(git_repo, "rev-parse", "HEAD")
    done = run_step(git_repo, apply_cmd, apply_env, {"actor": "merger"})
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [r for r in _audit(git_repo) if r["actor"] == "merger"]
    assert [(r["action"], r["view_name"]) for r in rows] == [("update", "refunds")]
    assert rows[0]["git_commit"] == merge_sha and rows[0]["git_ref"] == "main"
    assert rows[0]["git_author"] == "Dana Declarer <dana@example.com>"
    hist = run_cli(git_repo, "history", "local.sales.refunds")
    assert merge_sha[:12] in hist.out and "merger" in hist.out


def test_apply_refuses_a_dirty_tree(git_repo: Path) -> None:
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"].pop())
    res = run_cli(git_repo, "apply", "--auto-approve")
    assert res.code == 1 and "uncommitted changes" in res.err and "views/local/sales.yaml" in res.err
    assert not (git_repo / ".viewsync" / "catalog.db").exists()
    assert run_cli(git_repo, "apply", "--auto-approve", "--allow-dirty").code == 0


def test_dirty_paths_names_every_kind_of_uncommitted_declaration(git_repo: Path) -> None:
    from reconciler.source.gitsrc import dirty_paths

    assert dirty_paths(git_repo) == []
    (git_repo / "notes.txt").write_text("not a declaration\n")  # outside views/ and the config: ignored
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"].pop())  # modified, unstaged
    git(git_repo, "mv", "views/local/analytics.yaml", "views/local/analytics2.yaml")  # renamed, staged
    (git_repo / "views" / "local" / "odd \"name\".yaml").write_text("views: []\n")  # untracked, odd name
    (git_repo / "access.yaml").write_text("rules: []\n")  # untracked policy
    assert dirty_paths(git_repo) == sorted([
        "access.yaml", "views/local/analytics.yaml", "views/local/analytics2.yaml",
        'views/local/odd "name".yaml', "views/local/sales.yaml"])
    assert dirty_paths(git_repo.parent) == []  # not a git checkout


def test_dirty_paths_in_a_subdirectory_and_before_the_first_commit(tmp_path: Path) -> None:
    from reconciler.source.gitsrc import dirty_paths

    root = tmp_path / "repo" / "warehouse"
    (root / "views" / "c").mkdir(parents=True)
    git(tmp_path / "repo", "init", "-q")
    (root / "viewsync.yaml").write_text("version: 1\n")
    (root / "views" / "c" / "s.yaml").write_text("views: []\n")
    # No commit yet: what is staged is not compared with a HEAD; an untracked config is not a change.
    git(root, "add", "views")
    assert dirty_paths(root) == []
    (root / "views" / "c" / "s.yaml").write_text("views: [] # edited\n")
    assert dirty_paths(root) == ["warehouse/views/c/s.yaml"]


def test_apply_asks_git_directly_and_loads_no_gitpython(git_repo: Path) -> None:
    assert modules_loaded(git_repo, "apply", "--auto-approve", modules=["git"],
                          env={"GITHUB_ACTOR": ""}) == ([], 0)
    rows = _audit(git_repo)
    assert rows and {r["actor"] for r in rows} == {"Dana Declarer"}  # from `git config user.name`


def test_plan_from_a_ref_without_checkout(git_repo: Path) -> None:
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"].pop())
    git(git_repo, "commit", "-qam", "drop refunds")
    head = json.loads(run_cli(git_repo, "plan", "--format", "json").out)
    old = json.loads(run_cli(git_repo, "plan", "--format", "json", "--ref", "HEAD~1").out)
    assert head["summary"]["create"] == 5 and old["summary"]["create"] == 6
    assert old["declarations"]["git"]["commit"] == git(git_repo, "rev-parse", "HEAD~1")
    assert git(git_repo, "status", "--porcelain") == ""  # nothing checked out


def _oob_sql(repo: Path, view: str, sql: str) -> None:
    con = sqlite3.connect(repo / ".viewsync" / "catalog.db")
    con.execute("UPDATE view_version_info SET representations = ? WHERE view_id = "
                "(SELECT view_id FROM view_meta WHERE view_name = ? AND deleted_at = 0)",
                (json.dumps([{"dialect": "spark", "sql": sql}]), view))
    con.execute("UPDATE view_meta SET current_version = current_version WHERE view_name = ?", (view,))
    con.commit()
    con.close()


def test_saved_plan_is_refused_when_stale(git_repo: Path, tmp_path: Path) -> None:
    assert run_cli(git_repo, "apply", "--auto-approve").code == 0
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"][2].update(comment="refund totals"))
    _edit(git_repo, "views/local/analytics.yaml", lambda d: d["views"][2].update(comment="tags"))
    git(git_repo, "commit", "-qam", "comments")
    saved = tmp_path / "plan.json"
    assert run_cli(git_repo, "plan", "--out", str(saved)).code == 0
    assert json.loads(saved.read_text())["summary"]["update"] == 2
    before = _audit(git_repo)

    _oob_sql(git_repo, "refunds", "SELECT 1 AS order_id, 2 AS refunded")  # someone else edits one planned view
    res = run_cli(git_repo, "apply", str(saved), "--auto-approve")
    assert res.code == 1 and "stale plan" in res.err and "local.sales.refunds" in res.err
    assert _audit(git_repo) == before  # nothing applied, not even the other, untouched view
    versions = json.loads(run_cli(git_repo, "history", "local.analytics.customer_tags", "--format", "json").out)
    assert len(versions["versions"]) == 1

    fresh = tmp_path / "fresh.json"
    assert run_cli(git_repo, "plan", "--out", str(fresh)).code == 0
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"][0].update(comment="changed again"))
    stale = run_cli(git_repo, "apply", str(fresh), "--auto-approve", "--allow-dirty")
    assert stale.code == 1 and "declarations changed" in stale.err
    git(git_repo, "checkout", "--", ".")
    ok = run_cli(git_repo, "apply", str(fresh), "--auto-approve")
    assert ok.code == 0 and "2 applied" in ok.out


def test_drift_classifies_every_kind(git_repo: Path) -> None:
    assert run_cli(git_repo, "apply", "--auto-approve").code == 0
    assert run_cli(git_repo, "drift").code == 0
    _oob_sql(git_repo, "refunds", "SELECT 1 AS order_id, 2 AS refunded")
    con = sqlite3.connect(git_repo / ".viewsync" / "catalog.db")
    con.execute("UPDATE view_meta SET deleted_at = 1 WHERE view_name = 'customer_tags'")  # deleted out of band
    con.commit()
    con.close()
    _edit(git_repo, "views/local/sales.yaml", lambda d: d["views"][1].update(comment="pending change"))
    _edit(git_repo, "views/local/analytics.yaml", lambda d: d["views"].pop(1))  # top_customers undeclared
    from tests.helpers.managed import _insert_foreign_view

    _insert_foreign_view(git_repo, "sales", "legacy", None, "SELECT 1 AS x")
    res = run_cli(git_repo, "drift", "--format", "json")
    assert res.code == 2
    kinds = {(i["kind"], i["view"]["name"]) for i in json.loads(res.out)["items"]}
    assert kinds == {("pending", "daily_revenue"), ("changed_out_of_band", "refunds"),
                     ("deleted_out_of_band", "customer_tags"), ("undeclared", "top_customers"),
                     ("unmanaged", "legacy")}
    md = run_cli(git_repo, "drift", "--format", "markdown")
    assert md.code == 2 and "**changed_out_of_band** `local.sales.refunds`" in md.out


def test_audit_filters(git_repo: Path) -> None:
    assert run_cli(git_repo, "apply", "--auto-approve", "--actor", "alice").code == 0
    rows = _audit(git_repo)
    run_id = rows[0]["run_id"]
    by_run = json.loads(run_cli(git_repo, "audit", "--run", run_id[:8], "--format", "json").out)
    assert len(by_run) == 6
    one = json.loads(run_cli(git_repo, "audit", "--view", "local.sales.refunds", "--format", "json").out)
    assert [r["view_name"] for r in one] == ["refunds"]
    assert json.loads(run_cli(git_repo, "audit", "--since", "1h", "--format", "json").out) == by_run
    assert json.loads(run_cli(git_repo, "audit", "--since", "2999-01-01", "--format", "json").out) == []
    text = run_cli(git_repo, "audit")
    assert "alice" in text.out and git(git_repo, "rev-parse", "HEAD")[:12] in text.out
    assert run_cli(git_repo, "audit", "--since", "yesterday").code == 1


def _many_views(repo: Path, n: int) -> None:
    views = [{"name": f"v{i:04d}", "representations": [{"dialect": "spark", "sql": f"SELECT {i} AS x"}]}
             for i in range(n)]
    (repo / "views" / "local" / "bulk.yaml").write_text(
        yaml.safe_dump({"catalog": "local", "schema": "bulk", "views": views}))


def _two_applies(repo: Path, tmp_path: Path) -> list[tuple[int, str, str]]:
    """Two `viewsync apply` processes started at once on 400 new views: (code, stdout, stderr) of each."""
    _many_views(repo, 400)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bulk views")
    exe = shutil.which("viewsync") or "viewsync"
    logs = {who: (tmp_path / f"{who}.out", tmp_path / f"{who}.err") for who in ("p1", "p2")}
    procs = []
    for who, (out, err) in logs.items():  # files, not pipes: a full pipe would block the apply
        with out.open("w") as o, err.open("w") as e:
            procs.append(subprocess.Popen([exe, "--repo", str(repo), "apply", "--auto-approve", "--actor", who],
                                          stdout=o, stderr=e, text=True))
    codes = [p.wait(timeout=300) for p in procs]
    return [(code, out.read_text(), err.read_text()) for code, (out, err) in zip(codes, logs.values(), strict=True)]


def _use_state(repo: Path, backend: str, request: pytest.FixtureRequest) -> None:
    """Point the repo's state store at PostgreSQL for backend 'postgres' (SQLite is the sample's)."""
    if backend == "postgres":
        cfg = (repo / "viewsync.yaml").read_text().replace("sqlite:///.viewsync/state.db",
                                                            request.getfixturevalue("pg_url"))
        (repo / "viewsync.yaml").write_text(cfg)


@pytest.mark.parametrize("state_backend", ["sqlite", "postgres"])
def test_two_concurrent_applies_never_interleave(git_repo: Path, state_backend: str, tmp_path: Path,
                                                  request: pytest.FixtureRequest) -> None:
    _use_state(git_repo, state_backend, request)
    results = _two_applies(git_repo, tmp_path)
    winners = [r for r in results if r[0] == 0]
    losers = [r for r in results if r[0] != 0]
    assert len(winners) == 1 and len(losers) == 1, results
    assert "406 applied" in winners[0][1]
    assert "another apply is running" in losers[0][2] and "held by" in losers[0][2]
    assert re.search(r"held by p[12]@", losers[0][2])
    rows = _audit(git_repo)
    assert len({r["run_id"] for r in rows}) == 1 and len(rows) == 406  # one run wrote everything
    assert run_cli(git_repo, "plan", "--detailed-exitcode").code == 0
    hist = json.loads(run_cli(git_repo, "history", "local.bulk.v0007", "--format", "json").out)
    assert [v["version"] for v in hist["versions"]] == [1]


def _dead_holder(repo: Path, host: str | None = None) -> tuple[str, str]:
    """A lock and a `running` run left by a process of `host` (default: this one) that is gone:
    (run id, holder)."""
    from reconciler.source.config import load_config
    from reconciler.state.lockholder import process_start
    from reconciler.state.store import GitInfo, StateStore

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    start = None
    while start is None:
        start = process_start(child.pid)
    child.kill()
    child.wait()
    holder = f"ghost@{host or socket.gethostname()}:{child.pid}/{start}"
    state = StateStore(load_config(repo).state_url)
    dead = state.start_run("demo-analytics", "apply", "ghost", GitInfo(), None, None)
    state.acquire_lock("apply:demo-analytics", holder, dead)
    state.close()
    return dead, holder


def test_force_unlock(git_repo: Path) -> None:
    # A holder on another host can never be proven dead from here: it takes force-unlock.
    dead, holder = _dead_holder(git_repo, f"not-{socket.gethostname()}.invalid")
    blocked = run_cli(git_repo, "apply", "--auto-approve")
    assert blocked.code == 1 and holder in blocked.err and f"force-unlock {dead}" in blocked.err
    assert "Took over" not in blocked.out
    assert run_cli(git_repo, "force-unlock", dead).code == 0
    assert run_cli(git_repo, "apply", "--auto-approve").code == 0


def test_dead_local_lock_is_taken_over(git_repo: Path) -> None:
    dead, holder = _dead_holder(git_repo)
    res = run_cli(git_repo, "apply", "--auto-approve")
    assert res.code == 0, res.text
    pid = holder.split(":")[-1].split("/")[0]
    lines = res.out.splitlines()
    took = [i for i, line in enumerate(lines) if line.startswith("Took over")]
    assert [lines[i] for i in took] == [
        f"Took over the apply lock of dead run {dead} (pid {pid} on {socket.gethostname()})"]
    assert lines[took[0] + 1].startswith(f"Repaired: run {dead} ") and "died mid-apply" in lines[took[0] + 1]
    assert "6 applied" in res.out


@pytest.mark.parametrize("state_backend", ["sqlite", "postgres"])
def test_two_applies_racing_for_a_dead_lock(git_repo: Path, state_backend: str, tmp_path: Path,
                                            request: pytest.FixtureRequest) -> None:
    _use_state(git_repo, state_backend, request)
    dead, _ = _dead_holder(git_repo)
    results = _two_applies(git_repo, tmp_path)
    winners = [r for r in results if r[0] == 0]
    assert len(winners) == 1, results
    took = [line for r in results for line in r[1].splitlines() if line.startswith("Took over")]
    assert len(took) == 1 and dead in took[0], results  # one taker deleted the dead row; the other saw ours
    assert "another apply is running" in [r for r in results if r[0] != 0][0][2]
    assert sum(f"Repaired: run {dead} " in r[1] for r in results) == 1
    assert run_cli(git_repo, "plan", "--detailed-exitcode").code == 0


def test_lock_timeout_waits_for_the_holder(git_repo: Path) -> None:
    import threading
    import time

    from reconciler.source.config import load_config
    from reconciler.state.store import GitInfo, StateStore

    state = StateStore(load_config(git_repo).state_url)
    other = state.start_run("demo-analytics", "apply", "other", GitInfo(), None, None)
    other_host = f"other@not-{socket.gethostname()}.invalid:9"  # never taken over: not this host
    state.acquire_lock("apply:demo-analytics", other_host, other)

    short = time.monotonic()
    refused = run_cli(git_repo, "apply", "--auto-approve", "--lock-timeout", "0.6")
    assert refused.code == 1 and other_host in refused.err
    assert time.monotonic() - short >= 0.6  # it did wait before giving up

    threading.Timer(1.0, state.release_lock, ("apply:demo-analytics", other)).start()
    start = time.monotonic()
    waited = run_cli(git_repo, "apply", "--auto-approve", "--lock-timeout", "30")
    assert waited.code == 0 and "6 applied" in waited.out
    assert 0.9 <= time.monotonic() - start < 30
