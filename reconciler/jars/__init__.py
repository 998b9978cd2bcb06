"""JVM artifacts, pinned and fetched on request.

`pinned.toml` names every jar viewsync or its tests put on a JVM's classpath (Maven coordinates and
a SHA-256 each); `maven` fetches one from Maven Central (or the mirror in
`VIEWSYNC_MAVEN_REPOSITORY`) into `~/.cache/viewsync/jars`, checks its digest, and finds it there
later. viewsync itself downloads only when asked (`viewsync jars fetch`).

Imports only `core`: any layer may use it.
"""
