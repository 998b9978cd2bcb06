"""The Glue (moto) fixtures, shared with tests/adapters/metastore/glue/."""

from tests.adapters.metastore.glue.conftest import glue_url, moto_url, raw_glue  # noqa: F401 - fixtures
