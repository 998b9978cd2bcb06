"""Spark as a child process: the one layer every feature that runs Spark goes through.

- `client`: one child (start with handshake, `call(request, progress)`, error mapping, stop) and
  one pool of children by key, started ahead or on first use;
- `serve`: the child's side, standard library only (it is run by path by another interpreter
  too): fd set-up, the hello, an op -> handler table, fatal-error wrapping, Spark's error mapping;
- `conf`: what every child shares: which java and PySpark, local defaults, JVM flags and the
  class-data-sharing archive;
- `errors`: `SparkUnavailable`, `SparkError`.

A feature brings only its handlers (`verify/spark_ops.py`, `viewtests/spark_ops.py`,
`datareview/spark_ops.py`) and its conf. Imports only `core`.
"""
