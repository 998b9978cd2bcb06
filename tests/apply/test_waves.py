"""Which planned actions apply may run at the same time."""

from __future__ import annotations

from reconciler.apply.waves import waves
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Action


def _action(kind: str, name: str, sql: str) -> Action:
    spec = ViewSpec.model_validate({"columns": [], "representations": [{"dialect": "spark", "sql": sql}]})
    vid = ViewId("c", "s", name)
    if kind == "drop":
        return Action("drop", vid, "managed", before=spec)
    return Action(kind, vid, "managed", desired=spec)  # type: ignore[arg-type]


def _spec(a: Action) -> ViewSpec | None:
    return a.before if a.action == "drop" else a.desired


def names(actions: list[Action], groups: list[list[int]]) -> list[list[str]]:
    return [[actions[i].view.name for i in g] for g in groups]


def test_independent_writes_share_a_wave_and_readers_wait_for_what_they_read() -> None:
    actions = [_action("create", "a", "SELECT 1"), _action("create", "b", "SELECT 2"),
               _action("update", "c", "SELECT * FROM s.a"), _action("create", "d", "SELECT * FROM c JOIN b")]
    assert names(actions, waves(actions, _spec)) == [["a", "b"], ["c"], ["d"]]


def test_drops_come_after_every_write_readers_first() -> None:
    # plan order for drops: readers before what they read
    actions = [_action("create", "n", "SELECT 1"), _action("drop", "top", "SELECT * FROM mid"),
               _action("drop", "mid", "SELECT * FROM base"), _action("drop", "other", "SELECT 3"),
               _action("drop", "base", "SELECT 4")]
    assert names(actions, waves(actions, _spec)) == [["n"], ["top", "other"], ["mid"], ["base"]]


def test_names_that_are_not_planned_views_do_not_order_anything() -> None:
    actions = [_action("create", f"v{i}", f"SELECT * FROM src.t{i} JOIN v{i}x") for i in range(50)]
    assert names(actions, waves(actions, _spec)) == [[f"v{i}" for i in range(50)]]
