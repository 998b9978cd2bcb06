"""Redaction of secrets: every value that came from an environment variable in
the config, and every password in a URL, is masked wherever text leaves us."""

from __future__ import annotations

import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@")
MASK = "***"


def register(value: str) -> None:
    # Very short values would mask ordinary words; they are not credentials anyway.
    if len(value) >= 4:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", text)
    with _lock:
        values = sorted(_secrets, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def reset() -> None:
    with _lock:
        _secrets.clear()
