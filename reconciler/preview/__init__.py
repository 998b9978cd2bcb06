"""Preview environments: the pure parts of `viewsync preview`.

`names` (environment names, the TTL, the preview schema of a view), `select` (the preview
set: views a branch creates or changes since its base, plus the declared views that read
them), `rewrite` (a copy's SQL, its references pointed at copies or fully qualified live
objects, with sqlglot), `copies` (the copy of each view of the set) and `report` (text,
Markdown and JSON of what `preview up/down/list` did). No I/O here: the use cases are in
`reconciler.services.preview`. Imports `core` only."""
