"""Running viewsync leaves nothing behind in the process: no connections held after a
command, no secrets remembered across configs, PyYAML's dumpers untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml

from reconciler.core.secrets import redact
from reconciler.source.config import load_config
from tests.helpers.cli import run_cli
from tests.helpers.dbs import PG_ADMIN_URL


def _connections(db: str) -> int:
    admin = sa.create_engine(PG_ADMIN_URL)
    try:
        with admin.connect() as conn:
            return int(conn.execute(sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = :d"),
                                    {"d": db}).scalar_one())
    finally:
        admin.dispose()


def test_a_command_closes_every_connection_it_opened(sample_repo: Path, pg_url: str) -> None:
    cfg = (sample_repo / "viewsync.yaml").read_text()
    cfg = cfg.replace("state: sqlite:///.viewsync/state.db", f"state: {pg_url}")
    cfg = cfg.replace("url: sqlite:///.viewsync/catalog.db", f"url: {pg_url}")
    (sample_repo / "viewsync.yaml").write_text(cfg)
    db = sa.engine.make_url(pg_url).database
    assert db is not None
    for command in (["apply", "--auto-approve"], ["plan"], ["drift"], ["audit"]):
        assert run_cli(sample_repo, *command).code == 0
        assert _connections(db) == 0, command


def test_secrets_belong_to_their_config(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = sample_repo / "viewsync.yaml"
    text = cfg.read_text()
    monkeypatch.setenv("VS_DB_NAME", "s3cr3t-db")
    cfg.write_text(text.replace("sqlite:///.viewsync/catalog.db", "sqlite:///.viewsync/${VS_DB_NAME}.db"))
    with_secret = load_config(sample_repo)
    assert with_secret.secrets == frozenset({"s3cr3t-db"})
    assert redact("opened s3cr3t-db", with_secret.secrets) == "opened ***"
    cfg.write_text(text)
    assert load_config(sample_repo).secrets == frozenset()
    assert redact("opened s3cr3t-db") == "opened s3cr3t-db"  # nothing remembered process-wide


def test_import_leaves_pyyaml_dumpers_alone(sample_repo: Path, tmp_path: Path) -> None:
    representers = dict(yaml.SafeDumper.yaml_representers)
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    fresh = tmp_path / "fresh"
    (fresh / "views").mkdir(parents=True)
    (fresh / "viewsync.yaml").write_text((sample_repo / "viewsync.yaml").read_text().replace(
        "sqlite:///.viewsync/catalog.db", f"sqlite:///{sample_repo}/.viewsync/catalog.db"))
    assert run_cli(fresh, "import", "--catalog", "local").code == 0
    assert "|" in (fresh / "views" / "local" / "sales.yaml").read_text()  # multi-line SQL as a block
    assert dict(yaml.SafeDumper.yaml_representers) == representers


def test_the_configs_secrets_are_masked_in_a_commands_output(sample_repo: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = sample_repo / "viewsync.yaml"
    cfg.write_text(cfg.read_text().replace("sqlite:///.viewsync/catalog.db", "sqlite:///.viewsync/${VS_DB_NAME}.db"))
    sales = sample_repo / "views" / "local" / "sales.yaml"
    sales.write_text(sales.read_text().replace("Orders that reached the completed state", "kept in s3cr3t-db"))
    res = run_cli(sample_repo, "plan", env={"VS_DB_NAME": "s3cr3t-db"})
    assert res.code == 0, res.text
    assert '"kept in ***"' in res.out and "s3cr3t-db" not in res.text


def test_a_bad_option_value_is_a_usage_error(sample_repo: Path) -> None:
    res = run_cli(sample_repo, "plan", "--format", "yaml")
    assert res.code == 1 and "'yaml' is not one of 'text', 'markdown', 'json'" in res.err
    assert "unexpected" not in res.err
