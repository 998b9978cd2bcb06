"""Table-parameter helpers shared by every format.

* Long values are split into `<key>.numParts` + `<key>.part.N`, the way Spark
  stores its schema, so every stored value stays under the metastore's column
  width (Derby: VARCHAR(4000)).
* Engine-internal keys are told apart from user properties.
* "Extras": whatever of a ViewSpec an engine format cannot hold (other dialects,
  security, column comments...) is kept in `viewsync.extra`, so reading back
  through viewsync is exact while the engine still sees its own format.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from reconciler.adapters import catalog_json
from reconciler.core.model import MANAGED_BY_FILTERABLE

# Derby backs TABLE_PARAMS.PARAM_VALUE with VARCHAR(4000); stay clearly below it.
PARAM_VALUE_LIMIT = 4000
PART_SIZE = 3500
PARAM_KEY_LIMIT = 256
COLUMN_COMMENT_LIMIT = 256  # COLUMNS_V2.COMMENT
TYPE_NAME_LIMIT = 4000
VIEW_TEXT_LIMIT = 32700  # Derby LONG VARCHAR for TBLS.VIEW_ORIGINAL_TEXT / VIEW_EXPANDED_TEXT

EXTRA_KEY = "viewsync.extra"
VIEWSYNC_PREFIX = "viewsync."

_INTERNAL_EXACT = frozenset({
    "transient_lastDdlTime", "comment", "presto_view", "presto_version", "presto_query_id",
    "is_generic", "last_modified_by", "last_modified_time", "numFiles", "numRows", "rawDataSize",
    "totalSize", "numFilesErasureCoded", "COLUMN_STATS_ACCURATE", "STATS_GENERATED_VIA_STATS_TASK",
    "DO_NOT_UPDATE_STATS", "bucketing_version", MANAGED_BY_FILTERABLE,
})
_INTERNAL_PREFIXES = ("spark.sql.", "view.", "presto_", "trino_", "flink.", "impala_", VIEWSYNC_PREFIX)


def is_engine_parameter(key: str) -> bool:
    """A table parameter an engine or the metastore sets for its own use, never a user property."""
    return key in _INTERNAL_EXACT or key.startswith(_INTERNAL_PREFIXES)


def user_properties(params: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if not is_engine_parameter(k)}


def plain_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """User properties an engine format stores as plain parameters (the rest go to the extras)."""
    return {k: v for k, v in properties.items() if not is_engine_parameter(k) and storable_param(k, v)}


def storable_param(key: str, value: str) -> bool:
    """A single parameter the metastore can hold as it is."""
    return len(key) <= PARAM_KEY_LIMIT and len(value) <= PARAM_VALUE_LIMIT


# ------------------------------------------------------------------ splitting
def split_value(key: str, value: str, size: int = PART_SIZE) -> dict[str, str]:
    """`{key: value}`, or numParts + part.N entries when the value is long."""
    if len(value) <= size:
        return {key: value}
    parts = [value[i:i + size] for i in range(0, len(value), size)]
    out = {f"{key}.numParts": str(len(parts))}
    out.update({f"{key}.part.{i}": part for i, part in enumerate(parts)})
    return out


def join_value(params: Mapping[str, str], key: str) -> str | None:
    """Inverse of split_value; None when absent or when a part is missing."""
    count = params.get(f"{key}.numParts")
    if count is None:
        return params.get(key)
    try:
        n = int(count)
    except ValueError:
        return None
    parts = [params.get(f"{key}.part.{i}") for i in range(n)]
    if any(p is None for p in parts):
        return None
    return "".join(p for p in parts if p is not None)


def is_family(key: str, base: str) -> bool:
    """True for `base`, `base.numParts` and `base.part.N`."""
    if key in (base, f"{base}.numParts"):
        return True
    return bool(re.fullmatch(re.escape(base) + r"\.part\.\d+", key))


def numbered(params: Mapping[str, str], prefix: str) -> list[str] | None:
    """Values of `<prefix>.numParts` + `<prefix>.part.N` (Spark's list encoding)."""
    count = params.get(f"{prefix}.numParts")
    if count is None:
        return None
    try:
        n = int(count)
    except ValueError:
        return None
    out: list[str] = []
    for i in range(n):
        v = params.get(f"{prefix}.part.{i}")
        if v is None:
            return None
        out.append(v)
    return out


# --------------------------------------------------------------------- extras
SPEC_FIELDS = ("comment", "columns", "representations", "default_catalog", "default_namespace",
               "security", "owner", "properties")


def _hash(value: Any) -> str:
    payload = catalog_json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def extras_params(desired: Mapping[str, Any], engine: Mapping[str, Any]) -> dict[str, str]:
    """Parameters holding every canonical field the engine encoding lost.

    Each entry remembers (as a hash) what the engine encoding held for that
    field; on read it is applied only while the engine still holds that, so an
    out-of-band change made by an engine wins over stale extras.
    """
    fields = {
        name: {"was": _hash(engine[name]), "is": desired[name]}
        for name in SPEC_FIELDS
        if desired[name] != engine[name]
    }
    if not fields:
        return {}
    doc = catalog_json.dumps({"v": 1, "fields": fields}, sort_keys=True, separators=(",", ":"))
    return split_value(EXTRA_KEY, doc)


def apply_extras(engine: dict[str, Any], params: Mapping[str, str]) -> dict[str, Any]:
    """The canonical spec with the stored extras laid over what the engine holds."""
    raw = join_value(params, EXTRA_KEY)
    if raw is None:
        return engine
    try:
        doc = catalog_json.loads(raw)
        fields = doc["fields"]
        if not isinstance(fields, dict):
            return engine
    except (ValueError, KeyError, TypeError):
        return engine  # a damaged extras document must not hide the engine's view
    out = dict(engine)
    for name, entry in fields.items():
        if name not in SPEC_FIELDS or not isinstance(entry, dict) or "is" not in entry:
            continue
        if entry.get("was") == _hash(engine[name]):
            out[name] = entry["is"]
        elif name == "representations" and isinstance(entry["is"], list):
            # The engine's own SQL changed: keep it, plus the dialects it cannot hold.
            held = {r["dialect"] for r in engine[name]}
            kept = [r for r in entry["is"] if isinstance(r, dict) and r.get("dialect") not in held]
            out[name] = sorted(engine[name] + kept, key=lambda r: str(r["dialect"]))
    return out
