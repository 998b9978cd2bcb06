"""Legacy Glue views (VIRTUAL_VIEW in one engine's format) through the shared codecs.

PROVISIONAL: waits for reconciler/formats (issue 4).
"""

from __future__ import annotations

from typing import Any

from reconciler.adapters import glue_codec as codec
from reconciler.model import ViewSpec


def decode_envelope_sql(text: str) -> str | None:
    return None


def is_format_param(key: str) -> bool:
    return key == "comment" or key == "is_generic" or key.startswith(
        ("presto_", "trino_", "spark.sql.", "view.", "flink."))


def decode(table: dict[str, Any], schema: str) -> codec.Decoded:
    raise codec.DecodeError("legacy Glue views need reconciler.formats")


def storable(view_format: str, schema: str, spec: ViewSpec) -> ViewSpec:
    return spec


def check(view_format: str, where: str, spec: ViewSpec) -> list[tuple[str, str]]:
    return []


def encode(view_format: str, name: str, schema: str, spec: ViewSpec,
           marker_params: dict[str, str]) -> dict[str, Any]:
    raise NotImplementedError
