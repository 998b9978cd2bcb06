"""Redaction of secrets: every password in a URL, and every value the config took
from the environment (`Config.secrets`), is masked wherever text leaves us.

The set of secrets is passed in explicitly: nothing is registered process-wide.
`redact` is the one function all output goes through. It is linear in the text
(one regex pass per pattern; no pattern can backtrack over a long run) and
case-insensitive (a host name comes back lower-cased from a resolver or driver).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# user:password@ after a scheme. The scheme must start a word and every part is
# bounded, so a 1 MB run of letters costs one scan, not one scan per position.
_URL_PASSWORD = re.compile(
    r"(?<![a-zA-Z0-9+.\-])(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]{0,31}://)"
    r"(?P<user>[^:/@\s]{0,256}):(?P<pw>[^@/\s]{1,1024})@")
MASK = "***"
# Very short values would mask ordinary words; they are not credentials anyway.
MIN_SECRET_LENGTH = 4


@lru_cache(maxsize=64)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    # Longest first, so a secret that contains another is masked whole.
    values = sorted((s for s in secrets if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True)
    return re.compile("|".join(re.escape(v) for v in values), re.IGNORECASE) if values else None


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    if "://" in text:  # a C-speed test first: most text holds no URL (apply redacts every event field)
        text = _URL_PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", text)
    pattern = _pattern(secrets if isinstance(secrets, frozenset) else frozenset(secrets))
    return pattern.sub(MASK, text) if pattern is not None else text


@lru_cache(maxsize=64)
def _json_plain(secrets: frozenset[str]) -> bool:
    """Whether every secret reads the same inside JSON text (none holds a character JSON escapes)."""
    return all(not any(c in '"\\' or ord(c) < 0x20 for c in s) for s in secrets)


def may_need_redaction(json_text: str, secrets: frozenset[str]) -> bool:
    """False only when nothing in a structure serialised as `json_text` (json.dumps with
    ensure_ascii=False) can need masking: no URL at all and no secret. Conservative:
    True sends the caller to the exact, per-string redaction."""
    if "://" in json_text or not _json_plain(secrets):
        return True
    pattern = _pattern(secrets)
    return pattern is not None and pattern.search(json_text) is not None
