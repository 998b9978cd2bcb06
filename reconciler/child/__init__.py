"""A child process that runs an engine's requests: the one layer Spark and Flink share.

- `process`: our side: start a child with a command, environment and conf (sent on stdin: it may
  hold credentials), wait for its hello, one JSON request and answer per line (progress lines
  before an answer), the child's refusals and failures mapped to the engine's errors with the
  tail of its log, stop, peak memory, start time. An engine subclasses `ChildProcess`.
- `serve`: the child's side, standard library only (another interpreter runs it by path): fd
  set-up, the conf, the engine module's `open`/`hello`/`close`, the op -> handler table, the
  request loop, fatal-error wrapping.

Imports only `core`.
"""
