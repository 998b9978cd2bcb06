"""`viewsync generate --dialect trino` and what plan says about the representations it wrote:
written into the view file with its comments kept, idempotent, refused by plan once its source
changes (`stale_generated`) or it is edited by hand (`edited_generated`), until it is generated
again or its marker is deleted (kept by hand)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from reconciler.source import yamlsrc
from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT

VIEWS = """\
# yaml-language-server: $schema=../../schemas/view-file.schema.json
catalog: local
schema: shop
views:
  - name: first_tags   # the first tag of each profile
    columns:
      - {name: id, type: bigint}
      - {name: first_tag, type: string}
    representations:
      - dialect: spark
        sql: |
          SELECT id, tags[0] AS first_tag
          FROM crm.profile
    owner: data-platform  # kept as written

  - name: hand
    representations:
      - dialect: spark
        sql: SELECT 1 AS one
      - dialect: trino
        sql: SELECT 1 AS one
"""
FILE = "views/local/shop.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "views" / "local").mkdir(parents=True)
    shutil.copy(ROOT / "viewsync.yaml", root / "viewsync.yaml")
    (root / FILE).write_text(VIEWS)
    return root


def _trino(root: Path) -> dict[str, object]:
    reps = yamlsrc.load((root / FILE).read_text())["views"][0]["representations"]
    return next(r for r in reps if r["dialect"] == "trino")


def test_generate_writes_the_missing_dialect_marked_and_a_second_run_changes_nothing(repo: Path) -> None:
    res = run_cli(repo, "generate", "--dialect", "trino")
    assert res.code == 0, res.text
    assert "local.shop.first_tags: trino generated from spark" in res.out
    assert "local.shop.hand: trino written by hand" in res.out  # never touched
    text = (repo / FILE).read_text()
    assert "# the first tag of each profile" in text and "owner: data-platform  # kept as written" in text
    rep = _trino(repo)
    assert "tags[1] AS first_tag" in str(rep["sql"])  # Trino's arrays are 1-based
    marker = rep["generated"]
    assert isinstance(marker, dict) and marker["from"] == "spark"
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", marker["source_digest"])
    # the array index is flagged at the file's own line and column of the construct
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "tags[0]" in ln)
    col = text.splitlines()[line - 1].index("tags[0]") + 1
    assert f"{FILE}:{line}:{col}: " in res.out and "[dialect_array_index]" in res.out

    again = run_cli(repo, "generate", "--dialect", "trino")
    assert again.code == 0 and "trino up to date" in again.out and "No file changed." in again.out
    assert (repo / FILE).read_text() == text


def test_plan_refuses_a_stale_generated_representation_until_generated_again(repo: Path) -> None:
    assert run_cli(repo, "generate", "--dialect", "trino").code == 0
    first = run_cli(repo, "plan", "--detailed-exitcode")
    assert first.code == 2  # changes, no error; the dialect difference is a warning at its place
    assert re.search(rf"Warning: {FILE}:12:\d+: \[dialect_array_index\] local.shop.first_tags", first.text), first.text
    path = repo / FILE
    path.write_text(path.read_text().replace("tags[0] AS first_tag", "tags[1] AS first_tag"))

    res = run_cli(repo, "plan", "--detailed-exitcode")
    assert res.code == 1
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "from: spark" in ln)
    assert re.search(rf"\[stale_generated\] {FILE}:{line}:\d+: local.shop.first_tags: the trino SQL was "
                     r"generated from the spark SQL, which changed", res.text), res.text

    refused = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")
    assert refused.code == 1 and "[stale_generated]" in refused.text, refused.text

    assert run_cli(repo, "generate", "--dialect", "trino").code == 0  # refreshes the stale one
    assert "tags[2] AS first_tag" in str(_trino(repo)["sql"])
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 2


def test_a_hand_edit_of_generated_sql_is_refused_kept_by_generate_and_kept_by_hand_without_marker(
        repo: Path) -> None:
    assert run_cli(repo, "generate", "--dialect", "trino").code == 0
    path = repo / FILE
    path.write_text(path.read_text().replace("tags[1] AS first_tag", "element_at(tags, 1) AS first_tag"))

    res = run_cli(repo, "plan", "--detailed-exitcode")
    assert res.code == 1 and "[edited_generated]" in res.text, res.text
    kept = run_cli(repo, "generate", "--dialect", "trino")
    assert "edited by hand since generated: left alone" in kept.out
    assert "element_at(tags, 1)" in str(_trino(repo)["sql"])

    text = path.read_text()
    start = text.index("        generated:\n")
    end = text.index("        sql: |\n", start)
    path.write_text(text[:start] + text[end:])  # delete the marker: the SQL is now kept by hand
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 2

    after = run_cli(repo, "generate", "--dialect", "trino")
    assert "written by hand" in after.out and "element_at(tags, 1)" in str(_trino(repo)["sql"])


def test_force_writes_an_edited_generated_representation_again(repo: Path) -> None:
    assert run_cli(repo, "generate", "--dialect", "trino").code == 0
    path = repo / FILE
    path.write_text(path.read_text().replace("tags[1] AS first_tag", "tags[9] AS first_tag"))
    res = run_cli(repo, "generate", "--dialect", "trino", "--force")
    assert res.code == 0 and "generated again" in res.out
    assert "tags[1] AS first_tag" in str(_trino(repo)["sql"])
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 2


def test_select_limits_the_views_and_an_unknown_dialect_is_an_error(repo: Path) -> None:
    res = run_cli(repo, "generate", "--dialect", "trino", "--select", "local.shop.hand")
    assert "first_tags" not in res.out and "No file changed." in res.out
    bad = run_cli(repo, "generate", "--dialect", "trinoo")
    assert bad.code == 1 and "cannot generate dialect 'trinoo'" in bad.text


def test_a_gap_is_reported_with_its_cause_and_nothing_is_written(repo: Path) -> None:
    path = repo / FILE
    path.write_text(path.read_text().replace("SELECT 1 AS one\n      - dialect: trino\n        sql: SELECT 1 AS one",
                                             "SELECT * FROM t PIVOT (sum(b) FOR c IN (1, 2))"))
    before = path.read_text()
    res = run_cli(repo, "generate", "--dialect", "trino", "--select", "local.shop.hand")
    assert res.code == 1
    assert "local.shop.hand: trino not generated from spark: sqlglot cannot write it in trino: PIVOT" in res.out
    assert path.read_text() == before
