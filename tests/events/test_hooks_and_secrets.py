"""Issue 15 acceptance: a blocking hook vetoes exactly one drop; no secret in
any event, log line or outbox row."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers.cli import run_cli
from tests.helpers.events import Receiver, edit_views, set_events
from tests.helpers.servers import free_port

HOOK = """
import json, os, sys
event = json.load(sys.stdin)
if event["subject"] == "local.analytics.customer_tags":
    sys.stderr.write("customer_tags is still read by finance; token=" + os.environ.get("VS_TEST_TOKEN", "") + "\\n")
    sys.exit(1)
"""


def _plan_actions(repo: Path) -> list[tuple[str, str]]:
    res = run_cli(repo, "plan", "--format", "json", "--prune", "--allow-mass-drop")
    return [(a["action"], a["view"]["name"]) for a in json.loads(res.out)["actions"]]


def _prepare(repo: Path, sinks: dict[str, object]) -> None:
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    set_events(repo, sinks)
    edit_views(repo, "views/local/analytics.yaml", lambda d: d["views"].pop(2))  # customer_tags
    edit_views(repo, "views/local/sales.yaml", lambda d: d["views"].pop(2))  # refunds


def test_blocking_hook_vetoes_exactly_one_drop(sample_repo: Path, tmp_path: Path) -> None:
    hook = tmp_path / "guard.py"
    hook.write_text(HOOK)
    _prepare(sample_repo, {"guard": {"type": "command", "blocking": True, "types": ["view.drop.pre"],
                                     "command": [sys.executable, str(hook)]}})
    assert sorted(_plan_actions(sample_repo)) == [("drop", "customer_tags"), ("drop", "refunds")]

    res = run_cli(sample_repo, "apply", "--auto-approve", "--prune", "--allow-mass-drop")
    assert res.code == 1, res.text
    assert "1 applied, 0 failed, 1 refused by hooks" in res.out
    assert "refused by hook 'guard' (exit 1): customer_tags is still read by finance" in res.out
    assert _plan_actions(sample_repo) == [("drop", "customer_tags")]  # only that drop was prevented

    audit = json.loads(run_cli(sample_repo, "audit", "--format", "json", "--view",
                               "local.analytics.customer_tags").out)
    assert [(r["action"], r["outcome"]) for r in audit] == [("create", "applied"), ("drop", "refused")]
    assert audit[-1]["error"].startswith("refused by hook 'guard' (exit 1): customer_tags is still read")
    events = json.loads(run_cli(sample_repo, "events", "--format", "json").out)
    failed = [e["event"] for e in events if e["type"] == "view.apply_failed"]
    assert [(e["subject"], e["data"]["outcome"]) for e in failed] == [("local.analytics.customer_tags", "refused")]
    assert [e["subject"] for e in events if e["type"] == "view.dropped"] == ["local.sales.refunds"]


def test_a_hook_that_cannot_run_refuses(sample_repo: Path) -> None:
    _prepare(sample_repo, {"guard": {"type": "command", "blocking": True, "types": ["view.drop.pre"],
                                     "command": "/nonexistent/guard --strict"}})
    res = run_cli(sample_repo, "apply", "--auto-approve", "--prune", "--allow-mass-drop")
    assert res.code == 1 and "2 refused by hooks" in res.out and "command not found" in res.out
    assert sorted(_plan_actions(sample_repo)) == [("drop", "customer_tags"), ("drop", "refunds")]


TOKEN = "tok-9f8e7d6c5b4a"
PASSWORD = "pw-1a2b3c4d5e"
SIGNING = "sign-0a9b8c7d6e"


def test_no_secret_in_any_event_log_line_or_outbox_row(sample_repo: Path, tmp_path: Path, receiver: Receiver,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("VS_TEST_TOKEN", TOKEN)
    monkeypatch.setenv("VS_TEST_PW", PASSWORD)
    monkeypatch.setenv("VS_TEST_SIGNING", SIGNING)
    caplog.set_level(logging.DEBUG)
    hook = tmp_path / "guard.py"
    hook.write_text(HOOK)
    dead = free_port()
    ol_file = tmp_path / "ol.jsonl"
    _prepare(sample_repo, {
        "hook": {"type": "webhook", "url": receiver.url, "secret": "${VS_TEST_SIGNING}",
                 "headers": {"Authorization": "Bearer ${VS_TEST_TOKEN}"}},
        "down": {"type": "webhook", "url": f"http://viewsync:${{VS_TEST_PW}}@127.0.0.1:{dead}/x?t=${{VS_TEST_TOKEN}}",
                 "retries": 1},
        "marquez": {"type": "openlineage", "retries": 1, "transport": {
            "type": "http", "url": f"http://127.0.0.1:{dead}", "timeout": 1,
            "auth": {"type": "api_key", "apiKey": "${VS_TEST_TOKEN}"}}},
        "file": {"type": "openlineage", "transport": {"type": "file", "log_file_path": str(ol_file), "append": True}},
        "guard": {"type": "command", "blocking": True, "types": ["view.drop.pre"],
                  "command": [sys.executable, str(hook)]},
    })
    texts: list[str] = []
    for args in (["apply", "--auto-approve", "--prune", "--allow-mass-drop"], ["events", "deliver"],
                 ["events"], ["events", "--format", "json"], ["events", "--pending"], ["audit", "--format", "json"]):
        res = run_cli(sample_repo, *args)
        texts += [res.out, res.err]
    assert any("refused by hook 'guard'" in t and "token=***" in t for t in texts)  # the hook's stderr, masked
    assert any("cannot reach http://viewsync:***@" in t for t in texts)  # the dead sink's error, masked
    texts += [r["body"] + json.dumps(r["headers"]) for r in receiver.received() if "Authorization" not in r["headers"]]
    texts += [r["body"] for r in receiver.received()]
    assert receiver.events() and all(r["headers"]["Authorization"] == f"Bearer {TOKEN}"
                                     for r in receiver.received())  # sent to the sink, as configured
    texts.append(ol_file.read_text())
    texts.append(caplog.text)
    eng = sa.create_engine(f"sqlite:///{sample_repo / '.viewsync' / 'state.db'}")
    with eng.connect() as conn:
        for table in ("vs_events", "vs_event_deliveries", "vs_audit", "vs_runs"):
            texts += [json.dumps([str(v) for v in row]) for row in conn.execute(sa.text(f"SELECT * FROM {table}"))]
    eng.dispose()
    leaks = [t for t in texts if TOKEN in t or PASSWORD in t or SIGNING in t]
    assert leaks == []
