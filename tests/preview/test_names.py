"""Environment names, TTLs and preview schema names: hostile input is refused with one line."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.preview.names import check_env, parse_ttl, preview_schema, schema_matcher
from tests.helpers.cli import run_cli

HOSTILE = {
    "../x": "character '.' is not allowed",
    "a;drop": "character ';' is not allowed",
    "x" * 300: "300 characters, at most 32",
    "pr\u0430": "non-ASCII character U+0430 (CYRILLIC SMALL LETTER A)",  # looks like 'pra'
    "PR1": "character 'P' is not allowed",
    "a b": "character ' ' is not allowed",
    "pr1\n": "character '\\n' is not allowed",
    "": "it is empty",
    "_x": "it must start with a letter or digit",
}


@pytest.mark.parametrize("name", list(HOSTILE), ids=lambda n: repr(n)[:20])
def test_hostile_env_names_are_refused_with_one_line(name: str) -> None:
    with pytest.raises(UserError) as err:
        check_env(name)
    text = str(err.value)
    assert HOSTILE[name] in text and "\n" not in text and len(text) < 200


@pytest.mark.parametrize("name", ["../x", "a;drop", "x" * 300, "pr\u0430"])
def test_the_cli_refuses_them_before_touching_anything(tmp_path: Path, name: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "viewsync.yaml").write_text("version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
                                        "catalogs: {local: {type: managed, url: 'sqlite:///.viewsync/c.db'}}\n")
    for cmd in ("up", "down"):
        res = run_cli(repo, "preview", cmd, "--env", name)
        assert res.code == 1 and res.out == ""
        assert res.err.startswith("Error: invalid preview env name") and res.err.count("\n") == 1
    assert not (repo / ".viewsync").exists()  # no store, no catalog was created


def test_good_names_ttls_and_schemas() -> None:
    assert check_env("pr42") == "pr42" and check_env("x" * 32) == "x" * 32
    assert parse_ttl("7d") == timedelta(days=7) and parse_ttl("30m") == timedelta(minutes=30)
    for bad in ("0d", "7", "7y", "-1d", "9999w"):
        with pytest.raises(UserError):
            parse_ttl(bad)
    assert preview_schema("sales", "pr1") == "sales__pr1"
    assert preview_schema("a.b", "pr1", "pv_{env}_{schema}") == "pv_pr1_a.b"
    with pytest.raises(UserError, match="at most 128"):
        preview_schema("s" * 125, "pr1")
    with pytest.raises(UserError, match=r"must contain \{env\}"):
        preview_schema("s", "pr1", "{schema}_preview")
    assert schema_matcher("pr1").match("sales__pr1") and not schema_matcher("pr1").match("sales__pr10")
