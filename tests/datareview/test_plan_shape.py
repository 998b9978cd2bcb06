"""The shapes of the review's Spark plans, on a real (in-memory) Spark: with unique keys, a keyed
diff is one join and one plain aggregation, no window, and proves the keys unique in that pass
(every kind of duplicate key sends it to the full keyed diff); the full keyed diff joins the
two sides ONCE (its aggregates are observed metrics of the join whose changed rows are
sampled), with one Window operator per side; the observed aggregates equal the plain
aggregation's, with duplicates, NULL keys and nothing to sample; a `unique` check is one Window
operator, as a hand-written uniqueness count is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.datareview import checksql, diffsql, engine
from reconciler.datareview.diffsql import Col, Layout
from reconciler.datareview.session import LiveSpark, live_spark

pytestmark = pytest.mark.slow  # starts a Spark

BEFORE = ("SELECT * FROM VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5), (5, 'e', 5.5), (5, 'e2', 5.5), "
          "(CAST(NULL AS INT), 'n', 0.5) AS t(id, v, x)")
AFTER = ("SELECT * FROM VALUES (1, 'a', 1.5), (2, 'B', 2.5), (5, 'e', 5.5), (7, 'g', 7.5), "
         "(CAST(NULL AS INT), 'n', 0.5) AS t(id, v, x)")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSpark]:
    work: Path = tmp_path_factory.mktemp("live-spark")
    spark = live_spark({"spark.master": "local[1]", "spark.sql.catalogImplementation": "in-memory",
                       "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                       "spark.sql.adaptive.enabled": "true",
                       "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={work}"})
    try:
        yield spark
    finally:
        spark.close()


def registered(live: LiveSpark, name: str, sql: str) -> list[Col]:
    return [Col.of(c) for c in live.register(name, {"kind": "sql", "sql": sql})]


def plan(live: LiveSpark, sql: str) -> str:
    return str(live.query("EXPLAIN " + sql, 1)[0]["plan"])


def one_pass(live: LiveSpark, layout: Layout, where: str | None, sample: int = 5
             ) -> tuple[dict[str, Any] | None, list[Any]]:
    live.observe("j", diffsql.keyed_rows(layout, "b", "a", where), diffsql.keyed_metrics(layout))
    try:
        rows, observed = live.query_observed(diffsql.keyed_samples(layout, "j", sample), 100)
    finally:
        live.drop(["j"])
    return observed.get("j"), [json.loads(r["payload"]) for r in rows]


def test_the_keyed_diff_joins_once_and_its_observed_aggregates_equal_the_plain_ones(live: LiveSpark) -> None:
    layout = Layout.of(registered(live, "b", BEFORE), registered(live, "a", AFTER), ("id",))

    stats = plan(live, diffsql.keyed_stats(layout, "b", "a", None))
    assert stats.count("Window [") == 2 and stats.count("SortMergeJoin") == 1, stats  # one Window per side

    live.observe("j", diffsql.keyed_rows(layout, "b", "a", None), diffsql.keyed_metrics(layout))
    try:
        samples = plan(live, diffsql.keyed_samples(layout, "j", 5))
    finally:
        live.drop(["j"])
    assert samples.count("SortMergeJoin") == 1 and "CollectMetrics" in samples, samples

    for where in (None, "id <> 2"):  # changes; nothing to sample
        plain = live.query(diffsql.keyed_stats(layout, "b", "a", where), 1, exact=True)[0]
        observed, rows = one_pass(live, layout, where)
        assert observed == plain, where
    # sides the optimizer knows to be empty: no observed node is left (the engine then aggregates)
    assert one_pass(live, layout, "id > 100") == (None, [])
    observed, rows = one_pass(live, layout, None)
    assert observed is not None
    assert (observed["n_changed"], observed["n_removed"], observed["n_added"], observed["n_unchanged"],
            observed["n_duplicate"]) == (1, 2, 2, 1, 1)  # removed: 3 and the NULL key; added: 7 and the NULL key
    assert (observed["dup_keys_before"], observed["dup_rows_before"], observed["null_keys_before"]) == (1, 2, 1)
    assert sorted(((r["c"], r["b"]["0"], r["a"]["0"]) for r in rows if r["c"] != "duplicate"), key=repr) == [
        ("added", None, 7), ("added", None, None), ("changed", 2, 2), ("removed", 3, None), ("removed", None, None)]
    assert [r["s"] for r in rows if r["c"] == "duplicate"] == [1, 2]  # both joined rows of key 5


def test_the_diff_engine_reports_the_same_counts_with_and_without_samples(live: LiveSpark) -> None:
    from reconciler.core.model import ViewId

    vid = ViewId("c", "s", "v")
    before, after = {"kind": "sql", "sql": BEFORE}, {"kind": "sql", "sql": AFTER}
    with_samples = engine.diff_view(live, vid, "update", before, after, ("id",), None, 2)
    without = engine.diff_view(live, vid, "update", before, after, ("id",), None, 0)
    assert with_samples.status == without.status == "ok", with_samples.message
    assert with_samples.counts == without.counts
    assert with_samples.duplicates == without.duplicates and with_samples.null_keys == without.null_keys
    assert [(c.name, c.changed) for c in with_samples.columns] == [(c.name, c.changed) for c in without.columns]
    assert with_samples.numeric == without.numeric
    avg = live.query("SELECT AVG(id) AS id, AVG(x) AS x, SUM(x) AS sx FROM VALUES " + BEFORE.split(" VALUES ")[1], 1)[0]
    means = {n.name: n.mean_before for n in with_samples.numeric}
    assert means == {"id": avg["id"], "x": avg["x"]} and avg["x"] == 3.16667  # 19.0 / 6, half up at scale 1 + 4
    assert {n.name: n.sum_before for n in with_samples.numeric}["x"] == avg["sx"] == 19
    assert len(with_samples.samples) == 2 + 2 + 1 + 2  # removed, added, changed, duplicate (at most 2 each)
    empty = engine.diff_view(live, vid, "update", before, after, ("id",), "id > 100", 2)
    assert (empty.status, empty.rows_before, empty.rows_after, empty.samples) == ("ok", 0, 0, [])


def test_means_are_spark_averages_from_the_exact_sum_and_count() -> None:
    assert diffsql.mean("19.0", 6, "decimal(2,1)") == 3.16667
    assert diffsql.mean("0.000005", 3, "decimal(18,6)") == 1.6667e-06  # half up at scale 6 + 4
    assert diffsql.mean("0.000004", 3, "decimal(18,6)") == 1.3333e-06
    assert diffsql.mean("30", 3, "decimal(10,0)") == 10  # integral: an int, as AVG's decimal comes back
    assert diffsql.mean(7, 2, "bigint") == 3.5 and diffsql.mean(1.5, 3, "double") == 0.5
    assert diffsql.mean(None, 0, "int") is None and diffsql.mean(0, 0, "decimal(18,2)") is None


class Unique:
    kind, args, severity, index = "unique", ["id"], "error", 0


def test_a_unique_check_is_one_window_operator(live: LiveSpark) -> None:
    cols = registered(live, "v", BEFORE)
    built = checksql.build("v", cols, [Unique()], {})
    shape = plan(live, built.stats)
    assert shape.count("Window [") == 1, shape
    row = live.query(built.stats, 1)[0]
    assert (row["n_rows"], row["f_0"], row["g_0"]) == (6, 2, 1)
    many = registered(live, "m", "SELECT * FROM VALUES (1), (1), (1), (2), (2), (3), (NULL), (NULL) AS t(id)")
    row = live.query(checksql.build("m", many, [Unique()], {}).stats, 1)[0]
    assert (row["f_0"], row["g_0"]) == (5, 2)  # rows of duplicated values, the values (NULLs pass)


UNIQUE_BEFORE = ("SELECT * FROM VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5), (4, 'd', 4.5), "
                 "(CAST(NULL AS INT), 'n', 0.5), (CAST(NULL AS INT), 'm', 0.25) AS t(id, v, x)")
UNIQUE_AFTER = ("SELECT * FROM VALUES (1, 'a', 1.5), (2, 'B', 2.5), (4, 'd', 4.75), (7, 'g', 7.5), (8, 'h', 8.5), "
                "(CAST(NULL AS INT), 'n', 0.5) AS t(id, v, x)")


def unique_pass(live: LiveSpark, before: str, after: str, sample: int = 5) -> Any:
    layout = Layout.of(registered(live, "b", before), registered(live, "a", after), ("id",))
    return layout, engine._unique_pass(live, layout, "b", "a", None, sample, None)


def test_with_unique_keys_the_diff_is_one_join_and_one_aggregation_equal_to_the_full_keyed_diff(
        live: LiveSpark) -> None:
    layout, found = unique_pass(live, UNIQUE_BEFORE, UNIQUE_AFTER)
    assert found is not None  # two NULL keys on one side are not duplicates: they never match
    stats, samples = found
    full, full_samples = engine._keyed_pass(live, layout, "b", "a", None, 5, None)
    for name, value in full.items():
        assert stats[name] == value, name
    assert (stats["n_removed"], stats["n_added"], stats["n_changed"], stats["n_unchanged"]) == (3, 3, 2, 1)
    def rows(found: list[dict[str, Any]]) -> list[str]:  # rows of equal keys (NULL) come in any order
        return sorted(json.dumps([s["c"], s["b"], s["a"]], sort_keys=True) for s in found)

    assert rows(samples) == rows(full_samples)  # the same rows, first keys first
    assert [(s["c"], s["b"]["0"], s["a"]["0"]) for s in samples] == [
        ("removed", None, None), ("removed", None, None), ("removed", 3, None), ("added", None, None),
        ("added", None, 7), ("added", None, 8), ("changed", 2, 2), ("changed", 4, 4)]
    _, few = unique_pass(live, UNIQUE_BEFORE, UNIQUE_AFTER, sample=1)
    assert [(s["c"], s["b"]["0"], s["a"]["0"]) for s in few[1]] == [
        ("removed", None, None), ("added", None, None), ("changed", 2, 2)]

    live.observe("bs", diffsql.unique_side("b", layout.before, "b", None, [0]), ["COUNT(1) AS n"])
    live.observe("as", diffsql.unique_side("a", layout.after, "a", None, [0]), ["COUNT(1) AS n"])
    live.observe("j", diffsql.unique_rows(layout, "bs", "as"), diffsql.unique_samples(layout, 5))
    try:
        shape = plan(live, diffsql.unique_stats(layout, "j"))
    finally:
        live.drop(["j", "as", "bs"])
    assert "Window" not in shape and shape.count("SortMergeJoin") == 1 and shape.count("CollectMetrics") == 3, shape


@pytest.mark.parametrize("before, after, what", [
    (UNIQUE_BEFORE.replace("(4, 'd', 4.5)", "(4, 'd', 4.5), (4, 'e', 4.5)"), UNIQUE_AFTER, "before, matched"),
    (UNIQUE_BEFORE, UNIQUE_AFTER.replace("(4, 'd', 4.75)", "(4, 'd', 4.75), (4, 'e', 4.5)"), "after, matched"),
    (UNIQUE_BEFORE.replace("(3, 'c', 3.5)", "(3, 'c', 3.5), (3, 'z', 0.0)"), UNIQUE_AFTER, "before only"),
    (UNIQUE_BEFORE, UNIQUE_AFTER.replace("(8, 'h', 8.5)", "(8, 'h', 8.5), (8, 'i', 0.0)"), "after only"),
])
def test_every_kind_of_duplicate_key_sends_the_diff_to_the_full_keyed_diff(live: LiveSpark, before: str, after: str,
                                                                           what: str) -> None:
    assert unique_pass(live, before, after)[1] is None, what
    assert unique_pass(live, before, after, sample=0)[1] is None, what
    from reconciler.core.model import ViewId

    diff = engine.diff_view(live, ViewId("c", "s", "v"), "update", {"kind": "sql", "sql": before},
                            {"kind": "sql", "sql": after}, ("id",), None, 5)
    side = "before" if what.startswith("before") else "after"
    assert diff.duplicates[side] == {"keys": 1, "rows": 2}, (what, diff.duplicates)
