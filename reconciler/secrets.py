"""Redaction of secrets: every value that came from an environment variable in
the config, and every password in a URL, is masked wherever text leaves us.

`redact` is the one function all output goes through. It is linear in the text
(one regex pass; no pattern can backtrack over a long run) and case-insensitive
(a host name comes back lower-cased from a resolver or a driver)."""

from __future__ import annotations

import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
# user:password@ after a scheme. The scheme must start a word, and every part is
# bounded, so a 1 MB run of letters costs one scan, not one scan per position.
_URL_PASSWORD = re.compile(
    r"(?<![a-zA-Z0-9+.\-])(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]{0,31}://)"
    r"(?P<user>[^:/@\s]{0,256}):(?P<pw>[^@/\s]{1,1024})@")
MASK = "***"


def register(value: str) -> None:
    # Very short values would mask ordinary words; they are not credentials anyway.
    global _pattern
    if len(value) >= 4:
        with _lock:
            if value not in _secrets:
                _secrets.add(value)
                _pattern = None


def _secrets_pattern() -> re.Pattern[str] | None:
    global _pattern
    with _lock:
        if _pattern is None and _secrets:
            # Longest first, so a secret that contains another is masked whole.
            alternatives = sorted(_secrets, key=len, reverse=True)
            _pattern = re.compile("|".join(re.escape(s) for s in alternatives), re.IGNORECASE)
        return _pattern


def redact(text: str) -> str:
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", text)
    pattern = _secrets_pattern()
    return pattern.sub(MASK, text) if pattern is not None else text


def reset() -> None:
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None
