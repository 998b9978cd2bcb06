"""Data review on live data: what a change does to a view's rows (`viewsync diff`) and whether
its checks hold (`viewsync check`), computed by a read-only Spark session on the live catalogs.

Modules: `catalogs` (the Spark conf and readers per catalog kind), `files` (a managed catalog's
tables as the files sources/ locates, and its views' SQL rewritten to read them), `session` + `spark_ops` (the
review's own Spark child and its operations, never the verifier's), `diffsql` and `checksql` (pure SQL
builders), `engine` (one view's diff or checks on that Spark), `model` (results), `render`
(text, Markdown, JSON, JUnit), `events` (CloudEvents and OpenLineage facets of the results).
Imports `core`, `source` (config, Spark settings), `verify.sources` (the sources/ files),
`adapters` (JDBC dialects), `jars` and `spark` (the child-process layer); used by `services/datareview.py`.
"""
