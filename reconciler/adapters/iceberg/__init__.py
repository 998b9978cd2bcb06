"""Iceberg REST catalogs: `adapter` (I/O over pyiceberg), `codec` (view metadata <-> ViewSpec)."""

from reconciler.adapters.iceberg.adapter import IcebergRestAdapter

__all__ = ["IcebergRestAdapter"]
