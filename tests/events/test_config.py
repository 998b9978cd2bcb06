"""`events:` in viewsync.yaml: bad sinks are located errors, nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.events import set_events


@pytest.mark.parametrize(("sink", "message"), [
    ({"type": "pager"}, "events.x.type: 'pager' is not one of"),
    ({"type": "webhook"}, "events.x: 'url' is required"),
    ({"type": "webhook", "url": "ftp://host/x"}, "events.x.url:"),
    ({"type": "command", "command": []}, "events.x.command:"),
    ({"type": "command", "command": "x", "blocking": "yes"}, "events.x.blocking: 'yes' is not of type 'boolean'"),
    ({"type": "openlineage", "transport": {"type": "http"}, "retries": 0}, "events.x.retries:"),
])
def test_bad_sink_is_a_located_error(sample_repo: Path, sink: dict, message: str) -> None:  # type: ignore[type-arg]
    set_events(sample_repo, {"x": sink})
    res = run_cli(sample_repo, "apply", "--auto-approve")
    assert res.code == 1
    assert "viewsync.yaml:" in res.err and message in res.err, res.err
    assert not (sample_repo / ".viewsync" / "catalog.db").exists()
