"""Use cases: one module per command that does more than read and render. A service
takes a `Workspace` and a request, owns the steps and checks of its command, and
returns a value the CLI renders; prompts and printing reach it as callbacks.

`plan` (the plan, YAML changes since a base, access check, security notes, error
locations), `apply` (dirty check, repair, saved plans, planning, access re-check, the run),
`validate`, `drift`, `history`, `importer` (`viewsync import`), `codeowners`, and `spark`
(`validate --spark`, `plan --spark`, `impact`, `import --sources`).

May import everything below it (`core` to `verify`) and `workspace`; only `cli.py` imports it.
Heavy modules are imported inside the functions, after the catalogs' prefetch has started.
"""
