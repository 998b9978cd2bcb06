"""Spark as a child process: the one layer every feature that runs Spark goes through.

- `client`: one child (a `reconciler.child.process.ChildProcess`: start with handshake,
  `call(request, progress)`, stop) with Spark's errors, notices and archive, and one pool of
  children by key, started ahead or on first use;
- `serve`: the child's side, the engine module `reconciler/child/serve.py` serves, standard
  library and PySpark only (loaded by path by another interpreter too): the session, the hello,
  Spark's error mapping, the archive at stop;
- `conf`: what every child shares: which java and PySpark, local defaults, JVM flags and the
  class-data-sharing archive;
- `errors`: `SparkUnavailable`, `SparkError`.

A feature brings only its handlers (`verify/spark_ops.py`, `viewtests/spark_ops.py`,
`datareview/spark_ops.py`) and its conf. Imports only `core` and `child`.
"""
