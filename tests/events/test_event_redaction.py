"""Events are masked as a whole value: the quick whole-value scan never lets a secret
or a URL password through, including secrets JSON would escape."""

from __future__ import annotations

import json

import pytest

from reconciler.events.model import redacted

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
