"""Preview environment names, TTLs and the preview schema of a view.

An environment name ends up inside schema (database, namespace) names of every catalog
kind, in property values and in SQL, so it is held to the strictest of them: 1-32 lowercase
ASCII letters, digits and '_' (Hive Metastore and Glue names are lowercase word characters;
the pattern's schema part plus this stays within their 128/255-character limits). Nothing
else gets through: no dots, slashes, quotes, semicolons, spaces or look-alike letters."""

from __future__ import annotations

import re
import string
import unicodedata
from datetime import timedelta

from reconciler.core.errors import UserError

ENV_MAX = 32
SCHEMA_MAX = 128  # the Hive Metastore's database name limit, the strictest of the catalogs
DEFAULT_PATTERN = "{schema}__{env}"
DEFAULT_TTL = "7d"
_ENV = re.compile(r"[a-z0-9][a-z0-9_]*")
_TTL = re.compile(r"([1-9][0-9]{0,4})([mhdw])")
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
TTL_MAX = timedelta(days=365)


def _shown(text: str) -> str:
    """`text` safe to print on one line: escaped, and clipped when long."""
    clipped = text if len(text) <= 40 else text[:40] + "…"
    return repr(clipped)


def check_env(name: str) -> str:
    """The environment name, checked.

    Raises:
        UserError: one line saying what is wrong (nothing of the name is trusted).
    """
    rule = f"use 1-{ENV_MAX} lowercase ASCII letters, digits and '_' (e.g. pr42)"
    if not name:
        raise UserError(f"invalid preview env name: it is empty; {rule}")
    odd = next((ch for ch in name if ord(ch) > 127), None)
    if odd is not None:
        what = unicodedata.name(odd, "unnamed character")
        raise UserError(f"invalid preview env name {_shown(name)}: non-ASCII character U+{ord(odd):04X} "
                        f"({what}); {rule}")
    if len(name) > ENV_MAX:
        raise UserError(f"invalid preview env name {_shown(name)}: {len(name)} characters, at most {ENV_MAX}; "
                        f"{rule}")
    if not _ENV.fullmatch(name):
        bad = next((ch for ch in name if ch not in string.ascii_lowercase + string.digits + "_"), None)
        what = f"character {bad!r} is not allowed" if bad else "it must start with a letter or digit"
        raise UserError(f"invalid preview env name {_shown(name)}: {what}; {rule}")
    return name


def parse_ttl(text: str) -> timedelta:
    """A time to live such as `30m`, `12h`, `7d`, `2w` (at most a year).

    Raises:
        UserError: anything else.
    """
    m = _TTL.fullmatch(text.strip())
    if not m or _UNITS[m.group(2)] * int(m.group(1)) > TTL_MAX:
        raise UserError(f"invalid preview TTL {_shown(text)}: write a number and a unit m, h, d or w "
                        "(e.g. 7d), at most a year")
    return _UNITS[m.group(2)] * int(m.group(1))


def check_pattern(pattern: str) -> str:
    """A schema pattern naming `{schema}` and `{env}` and nothing else in braces.

    Raises:
        UserError: the pattern is unusable (every env would share one schema, or unknown fields).
    """
    fields = set(re.findall(r"\{([^{}]*)\}", pattern))
    if "env" not in fields or not fields <= {"schema", "env"} or pattern.count("{") != pattern.count("}"):
        raise UserError(f"preview.schema_pattern {pattern!r}: it must contain {{env}} and may contain "
                        "{schema}, nothing else in braces")
    return pattern


def preview_schema(schema: str, env: str, pattern: str = DEFAULT_PATTERN) -> str:
    """The schema of `schema`'s copies in environment `env`.

    Raises:
        UserError: the result is longer than every catalog can hold.
    """
    out = check_pattern(pattern).replace("{schema}", schema).replace("{env}", env)
    if len(out) > SCHEMA_MAX:
        raise UserError(f"preview schema {_shown(out)} is {len(out)} characters; catalogs hold at most "
                        f"{SCHEMA_MAX} (use a shorter env name or preview.schema_pattern)")
    return out


def schema_matcher(env: str, pattern: str = DEFAULT_PATTERN) -> re.Pattern[str]:
    """Matches the preview schemas of `env` (to find them when nothing recorded them)."""
    parts = re.split(r"(\{schema\}|\{env\})", check_pattern(pattern))
    regex = "".join(".+" if p == "{schema}" else re.escape(env) if p == "{env}" else re.escape(p) for p in parts)
    return re.compile(f"^{regex}$")
