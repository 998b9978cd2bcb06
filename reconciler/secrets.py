"""Redaction of secrets: every password in a URL, and every value the config took
from the environment (`Config.secrets`), is masked wherever text leaves us.

The set of secrets is passed in explicitly: nothing is registered process-wide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_URL_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@")
MASK = "***"
# Very short values would mask ordinary words; they are not credentials anyway.
MIN_SECRET_LENGTH = 4


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{MASK}@", text)
    for value in sorted((s for s in set(secrets) if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return text
