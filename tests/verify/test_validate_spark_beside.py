"""Issue 43: `validate --spark` stopped at the static errors (test fixtures that cannot name a
missing table), so Spark's clear TABLE_OR_VIEW_NOT_FOUND was never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]


def test_spark_analysis_runs_beside_the_static_errors(sample_repo: Path) -> None:
    path = sample_repo / "views" / "local" / "sales.yaml"
    path.write_text(path.read_text().replace("FROM sales.refund_events", "FROM sales.refund_eventz"))
    result = run_cli(sample_repo, "validate", "--spark")
    assert result.code != 0
    assert "Warning: views/local/sales.yaml:124:60:" in result.err  # the offline warning at the reference
    assert "[TABLE_OR_VIEW_NOT_FOUND] `sales.refund_eventz`" in result.err, result.text  # Spark's own
    assert "input sales.refund_eventz (read by refunds) is not given" in result.err  # the static error
