"""The catalog option models are the one description of catalog options: the config
JSON Schema and the README table are generated from them (and fail here when stale),
the adapters accept exactly them, and renamed options still work with a warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.adapters import REGISTRY, adapter_class
from reconciler.adapters.options import deprecated_options
from reconciler.source.config import schema_document
from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT
from tests.helpers.repos import write_repo


def test_schema_and_readme_are_generated_from_the_models() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "regen_options.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_registered_kind_has_an_option_model_in_the_schema() -> None:
    kinds = schema_document("config.schema.json")["$defs"]["catalog"]["properties"]["type"]["enum"]
    assert kinds == list(REGISTRY)
    for kind in REGISTRY:
        assert adapter_class(kind).Options.model_fields, kind


@pytest.mark.parametrize(("kind", "old"), [("hms", "write_format"), ("glue", "view_format")])
def test_the_engine_format_option_has_one_name(kind: str, old: str) -> None:
    assert deprecated_options(schema_document("config.schema.json"), kind) == {old: "engine_format"}
    assert "engine_format" in adapter_class(kind).Options.names()


def _repo(tmp_path: Path, catalog: str) -> Path:
    return write_repo(tmp_path / "repo", f"version: 1\nproject: p\ncatalogs:\n  lake: {catalog}\n")


@pytest.mark.parametrize(("catalog", "option"), [
    ("{type: hms, uri: 'thrift://127.0.0.1:9083', write_format: trino}", "write_format"),
    ("{type: glue, region: us-east-1, view_format: spark}", "view_format"),
])
def test_old_option_names_are_accepted_with_a_warning(tmp_path: Path, catalog: str, option: str) -> None:
    repo = _repo(tmp_path, catalog)
    res = run_cli(repo, "validate")
    assert res.code == 0, res.text
    assert res.err.strip() == (f"Warning: viewsync.yaml:4:{catalog.index(option) + 9}: catalogs.lake.{option}: "
                               "deprecated, use 'engine_format' instead")


def test_old_and_new_names_mean_the_same() -> None:
    hms = adapter_class("hms")
    assert hms("h", {"uri": "thrift://h:1", "write_format": "trino"}).engine_format == "trino"
    assert hms("h", {"uri": "thrift://h:1", "engine_format": "hive"}).engine_format == "hive"
    glue = adapter_class("glue")
    assert glue("g", {"region": "us-east-1", "view_format": "spark"}).engine_format == "spark"
    assert glue("g", {"region": "us-east-1", "engine_format": "multi-dialect"}).engine_format == "multi-dialect"


def test_new_name_without_warning_and_unknown_options_located(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "{type: hms, uri: 'thrift://127.0.0.1:9083', engine_format: trino, colour: red}")
    res = run_cli(repo, "validate")
    assert res.code == 1 and "Warning" not in res.err
    assert "viewsync.yaml:4:" in res.err and "catalogs.lake.colour: unknown key 'colour'" in res.err
