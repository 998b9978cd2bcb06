"""Events and lineage: every view change announced (CloudEvents), stored in a
transactional outbox next to its audit row, delivered at least once to the
sinks configured under `events:` (webhook, OpenLineage, command), with the
column lineage of each view read from its SQL.

Modules: `model` (event shape, filters), `outbox` (state-store tables),
`sinks` (delivery), `dispatch` (what apply calls), `lineage` (sqlglot),
`openlineage` (RunEvents), `config` (sinks from viewsync.yaml), `commands` (the emitter of a
config, and what `viewsync events` prints). May import `core`, `db` and `source` (the config).
"""
