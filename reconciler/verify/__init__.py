"""Spark as the compiler: the scratch Spark child (`session`) and its operations (`spark_ops`), analysis of
declared views (`analyze`, `columns`, `locate`), a plan verified (`planning`), impact on
dependents (`impact`), table references nothing knows (`references`, offline),
reports (`report`, `result`), sources/ files (`sources`), columns
written back into view files (`writeback`). The `spark:` settings are `source.spark_settings`.

May import `core`, `source`, `plan`, `adapters` and `spark`; never `workspace` (the use cases that
take one are `services.spark`).
"""
