"""Reading intent: `viewsync.yaml` (`config`), the view files (`declarations`, with YAML
positions from `yamlsrc` and name rules from `names`), files at a git ref (`gitsrc`), what a
view expects of its data beside its spec (`expectations`: key, checks, tests) and the `spark:`
section (`spark_settings`).
(`viewsync import`, which writes view files from a catalog, is `services.importer`.)

May import `core`, and `adapters` for catalog options. Every problem is located
(file:line:col, field); nothing here writes to a catalog or the state store.
"""
