"""Issue 28 item 6: the JSON Schemas live once, in the top-level schemas/ that editors'
`$schema` comments point at; the package's loader reads that copy from a source checkout
(.ci/wheel-smoke proves the built wheel carries them inside the package)."""

from __future__ import annotations

import json
import re

from reconciler.source.config import schema_document
from tests.helpers.paths import ROOT

NAMES = ["access.schema.json", "config.schema.json", "plan.schema.json", "pr-review.schema.json", "review.schema.json",
         "sources-file.schema.json", "tests.schema.json", "view-file.schema.json"]


def test_the_schemas_are_one_copy_at_the_top_level() -> None:
    assert sorted(p.name for p in (ROOT / "schemas").glob("*.json")) == NAMES
    assert not list((ROOT / "reconciler").rglob("*.schema.json"))  # no second copy in the package


def test_the_loader_reads_the_top_level_copy_from_a_source_checkout() -> None:
    for name in NAMES:
        assert schema_document(name) == json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))


def test_editors_schema_comments_point_at_existing_schemas() -> None:
    files = [ROOT / "viewsync.yaml", *(ROOT / "views").rglob("*.yaml"), *(ROOT / "sources").rglob("*.yaml")]
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        m = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert m, f"{path}: no $schema comment"
        target = (path.parent / m.group(1)).resolve()
        assert target.parent == ROOT / "schemas" and target.is_file(), f"{path}: {m.group(1)}"
