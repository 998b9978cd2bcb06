"""Issue 43 §2: answers that misled a new user on the sample, each now a clear one."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli


def test_history_and_audit_of_an_unknown_view_are_errors(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    for args in (("history", "local.sales.nope"), ("audit", "--view", "local.sales.nope")):
        result = run_cli(sample_repo, *args)
        assert result.code != 0, args
        assert "local.sales.nope: not declared" in result.err
    # A declared view, applied or not, has a history (maybe empty): no error.
    assert run_cli(sample_repo, "history", "local.sales.refunds").code == 0
    assert run_cli(sample_repo, "audit", "--view", "local.sales.refunds").code == 0
