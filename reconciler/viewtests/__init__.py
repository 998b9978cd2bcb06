"""View tests: a view's own SQL executed by Spark on fixture rows, offline.

`values` types a fixture value by its column type (and renders it as a Spark literal);
`fixtures` reads a test's inputs (rows, inline CSV, a .csv/.jsonl file); `build` turns one
test into one Spark query (inputs as inline tables, declared views computed from their own
SQL); `compare` sets what Spark returned against what the test expects; `runner` executes
tests in the verifier's scratch Spark child (its `tests` operation: `spark_ops`);
`result` and `render` are the report.

May import `core` and `source`; never `workspace` (the use case, which starts the scratch
child it shares with `verify`, is `services.viewtests`).
"""
