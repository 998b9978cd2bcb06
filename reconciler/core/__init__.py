"""The vocabulary every layer speaks: the view model and its digest (`model`), the one
column-type grammar (`coltypes`), SQL helpers on sqlglot (`sql`), dependency order (`deps`),
errors (`errors`), secrets and their masking (`secrets`), the git commit a plan was read at
(`gitinfo`), the output formats of commands (`output`), how an action ended (`outcome`) and
what a feature needs of an engine that runs its SQL (`engine`).

Pure values and functions. Imports nothing of viewsync outside `core`.
"""
