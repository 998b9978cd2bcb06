"""View tests: a view's own SQL executed on fixture rows by each engine (Spark built in, the
user's Trino), each on the view's representation in its dialect; nothing is written anywhere.

`values` types a fixture value by its column type (and renders it as a Spark literal);
`fixtures` reads a test's inputs (rows, inline CSV, a .csv/.jsonl file); `build` turns one
test into one Spark query (inputs as inline tables, declared views computed from their own
SQL); `compare` sets what Spark returned against what the test expects; `runner` executes
tests in the verifier's scratch Spark child (its `tests` operation: `spark_ops`);
`result` and `render` are the report. `engines` names the engines (one `TestEngine` per
module: a `build.Flavor`, a `runner.Profile`, and how to reach it); Trino is `trino_sql`
(literals, answers) and `trino_engine` (its HTTP client); `proof` says which representation is
proven on which engine and where two disagree.

May import `core`, `source` and `verify` (whose scratch Spark child runs Spark's tests); never
`workspace` (the use case is `services.viewtests`).
"""
