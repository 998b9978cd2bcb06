"""`yamlsrc.Marks`: positions from libyaml's events, which view tests use to name every test's
file:line without composing big fixture files. It must say exactly what composing says."""

from __future__ import annotations

import pytest

from reconciler.source import yamlsrc

FILE = """catalog: local
schema: s
views:
- name: a
  representations:
  - {dialect: spark, sql: "SELECT 1"}
  tests:
  - name: first
    given:
      t:
        rows:
        - {x: 1, y: [1, 2, {z: 3}]}
        - x: 2
    expect: {rows: [{x: 1}]}
  - name: "second"
    expect:
      empty: true
- name: b
  tests: &shared
  - name: again
- name: c
  tests: *shared
  1: numeric key
"""

PATHS = [(), ("views",), ("views", 0), ("views", 0, "name"), ("views", 0, "tests", 1, "name"),
         ("views", 0, "tests", 0, "given", "t", "rows", 1, "x"),  # deeper than the index
         ("views", 0, "representations", 0, "sql"), ("views", 0, "nope"), ("views", 0, "tests", 7),
         ("views", 2, "tests", 0, "name"), ("views", 2, 1), ("views", 9)]


@pytest.mark.parametrize("text", [FILE, FILE.split("- name: b")[0], "views: []\n", "", "? [x]\n: 1\n",
                                  "\ufeffviews:\n- name: a\n"])
def test_marks_locate_as_composing_does(text: str) -> None:
    marks = yamlsrc.Marks(text)
    node = yamlsrc.compose(text)
    for path in PATHS:
        assert marks.locate(path) == yamlsrc.locate(node, path), path


def test_a_file_without_aliases_near_the_top_is_never_composed_for_shallow_paths() -> None:
    marks = yamlsrc.Marks(FILE.split("- name: b")[0])
    assert marks.shallow
    assert marks.locate(("views", 0, "tests", 1, "name")) == (15, 11)
    assert marks._node is None, "a test's name is found from the events alone"
