"""AWS Glue Data Catalog: `adapter` (I/O), `codec` (multi-dialect views and what every
Glue view shares), `legacy_codec` (views in one engine's format, HMS-style)."""

from reconciler.adapters.metastore.glue.adapter import GlueAdapter

__all__ = ["GlueAdapter"]
