"""Events are masked as a whole value: the quick whole-value scan never lets a secret
or a URL password through, including secrets JSON would escape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from reconciler.events.dispatch import Emitter
from reconciler.events.model import event_id, redacted

DATA = {"view": {"catalog": "c", "schema": "s", "name": "v"}, "changes": [{"field": "sql", "after": "SELECT 1"}],
        "lineage": {"tables": ["c.s.t"]}, "n": 3, "none": None}


def test_a_value_with_nothing_to_mask_is_unchanged() -> None:
    assert redacted(DATA, {"hunter2-secret"}) == DATA


@pytest.mark.parametrize("secret", ["hunter2-secret", 'quo"te-secret', "back\\slash-secret", "tab\tsecret",
                                    "ünïcode-sécret"])
def test_every_secret_is_masked_wherever_it_stands(secret: str) -> None:
    value = {**DATA, "error": f"login failed for {secret.upper() if secret.isascii() else secret}",
             "deep": [{"k": ("x", f"a{secret}b")}], f"key-{secret}": 1}
    text = json.dumps(redacted(value, {secret}), ensure_ascii=False)
    assert secret.lower() not in text.lower() and json.dumps(secret)[1:-1] not in text
    assert "***" in text


def test_url_passwords_are_masked_even_after_a_newline() -> None:
    value = {**DATA, "sql": "SELECT 1 -- copied from\npostgresql://admin:pa55word@db/x"}
    text = json.dumps(redacted(value, set()))
    assert "pa55word" not in text and "admin:***@" in text


def test_a_post_event_repeats_the_pre_events_masked_data_and_masks_its_own_error(tmp_path: Path) -> None:
    """An action's post-event is made from its pre-event (apply never builds the data twice):
    same data, lineage included, plus the outcome; only the new error is masked again."""
    secret = "hunter2-secret"
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.db'}")
    emitter = Emitter(engine, "proj", [], secrets=frozenset({secret}))
    data = {**DATA, "sql": f"SELECT 1 -- postgresql://admin:pa55word@db/x {secret}"}
    pre = emitter.event("run-1", 4, "view.create.pre", "c.s.v", data)
    assert "pa55word" not in json.dumps(pre) and secret not in json.dumps(pre)

    post = emitter.outcome_event(pre, "view.apply_failed", "run-1", 4, "failed",
                                 f"HTTP 500 from thrift://ops:s3cret@hms:9083 token {secret}")
    assert post["id"] == event_id("run-1", 4, "view.apply_failed") != pre["id"]
    assert (post["type"], post["subject"], post["source"]) == ("view.apply_failed", "c.s.v", pre["source"])
    assert post["data"] == {**pre["data"], "outcome": "failed", "error": "HTTP 500 from thrift://ops:***@hms:9083 "
                                                                         "token ***"}
    assert "outcome" not in pre["data"]  # the pre-event is left as it was stored
    engine.dispose()
