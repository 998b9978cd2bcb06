"""Generated representations, pure parts: which dialect a new one comes from, what sqlglot writes
(and refuses), the `generated:` marker's digests, and the YAML text `generate` writes."""

from __future__ import annotations

import pytest

from reconciler.core.errors import UserError
from reconciler.core.model import Representation, ViewSpec
from reconciler.plan import generation
from reconciler.source import generated as vgen
from reconciler.source import yamledit, yamlsrc


def _spec(**reps: str) -> ViewSpec:
    return ViewSpec(representations=[Representation(dialect=d, sql=s) for d, s in reps.items()])


def test_the_source_is_spark_when_the_view_has_it_else_the_first_known_dialect_by_name() -> None:
    assert generation.source_dialect(_spec(hive="SELECT 1", spark="SELECT 1"), "trino") == "spark"
    assert generation.source_dialect(_spec(postgres="SELECT 1", hive="SELECT 1"), "trino") == "hive"
    assert generation.source_dialect(_spec(trino="SELECT 1"), "trino") is None


def test_a_literal_array_index_is_shifted_to_trinos_base() -> None:
    out = generation.transpile("SELECT tags[0] AS first_tag FROM crm.profile", "spark", "trino")
    assert "tags[1]" in out.sql and "tags[0]" not in out.sql
    assert out.untranslated == ()


def test_ascending_keys_get_nulls_first_so_both_engines_sort_alike() -> None:
    out = generation.transpile("SELECT a FROM t ORDER BY a", "spark", "trino")
    assert out.sql.endswith("a NULLS FIRST")


def test_a_construct_sqlglot_cannot_write_is_a_gap_with_its_cause() -> None:
    with pytest.raises(generation.GenerationGap, match="PIVOT unsupported"):
        generation.transpile("SELECT * FROM t PIVOT (sum(b) FOR c IN (1, 2))", "spark", "trino")
    with pytest.raises(generation.GenerationGap, match="does not parse"):
        generation.transpile("SELECT FROM WHERE", "spark", "trino")


def test_functions_sqlglot_does_not_know_are_named_not_silently_copied() -> None:
    out = generation.transpile("SELECT my_udf(a), get(a, 1) FROM t", "spark", "trino")
    assert out.untranslated == ("get", "my_udf")


def test_the_digest_ignores_layout_only() -> None:
    assert vgen.digest("SELECT a\nFROM t\n") == vgen.digest("  SELECT a   \r\nFROM t")
    assert vgen.digest("SELECT a FROM t") != vgen.digest("SELECT b FROM t")


def test_the_marker_tells_fresh_stale_and_edited_apart() -> None:
    mark = vgen.Generated("spark", vgen.digest("SELECT 1"), vgen.digest("SELECT\n  1"))
    assert mark.status("SELECT 1", "SELECT\n  1") == "fresh"
    assert mark.status("SELECT 2", "SELECT\n  1") == "stale"
    assert mark.status(None, "SELECT\n  1") == "stale"
    assert mark.status("SELECT 2", "SELECT 3") == "edited"  # a hand edit wins: generate must not overwrite it


FILE = """\
# the shop's views
catalog: local
schema: shop
views:
  - name: v  # the first view
    representations:
      - dialect: spark   # written by hand
        sql: |
          SELECT a
          FROM t

    # who answers for it
    owner: me   # kept
  - name: w
    representations:
      - {dialect: spark, sql: SELECT 1}
"""
MARK = {"from": "spark", "source_digest": "sha256:" + "a" * 64, "sql_digest": "sha256:" + "b" * 64}


def test_a_new_representation_is_appended_and_everything_else_is_kept_byte_for_byte() -> None:
    out = yamledit.put_representation(FILE, 0, "trino", "SELECT\n  a\nFROM t", MARK, "f.yaml")
    block = ("      - dialect: trino\n        generated:\n          from: spark\n"
             f'          source_digest: "{MARK["source_digest"]}"\n'
             f'          sql_digest: "{MARK["sql_digest"]}"\n'
             "        sql: |\n          SELECT\n            a\n          FROM t\n")
    assert out == FILE.replace("          FROM t\n\n", "          FROM t\n" + block + "\n", 1)
    data = yamlsrc.load(out)
    rep = data["views"][0]["representations"][1]
    assert rep["sql"] == "SELECT\n  a\nFROM t\n" and rep["generated"] == MARK


def test_a_generated_representation_is_refreshed_in_place() -> None:
    once = yamledit.put_representation(FILE, 0, "trino", "SELECT a FROM t", MARK, "f.yaml")
    newer = {**MARK, "source_digest": "sha256:" + "c" * 64}
    twice = yamledit.put_representation(once, 0, "trino", "SELECT\n  b\nFROM t", newer, "f.yaml")
    rep = yamlsrc.load(twice)["views"][0]["representations"][1]
    assert rep["sql"] == "SELECT\n  b\nFROM t\n" and rep["generated"] == newer
    assert twice.count("dialect: trino") == 1 and "# kept" in twice and "# written by hand" in twice


def test_a_flow_representation_list_is_refused_with_its_line() -> None:
    with pytest.raises(UserError, match=r"f.yaml:16: views\[1\].representations\[0\]: cannot write into a flow"):
        yamledit.put_representation(FILE, 1, "trino", "SELECT 1", MARK, "f.yaml")
