"""Desired vs live -> the Plan value: the planner (`planner`, pure), the plan itself and its
JSON form (`model`), the options a plan records (`scope`), saved plans read back (`saved`;
whether one still matches the repository is `services.apply`'s check), the offline SQL
checks and error locations (`validity`), drift reports (`drift`), declared views an engine
replaced without viewsync's marker that the state shows are ours (`replaced`), the
declaration changes since a git ref (`yaml_changes`), the kind of each update (`change_kind`:
cosmetic, additive, logic, unknown or breaking, from the SQL's syntax trees), the Spark
constructs whose meaning differs on Trino (`dialect_differences`), and generated
representations (`generation`: what `viewsync generate` writes, and plan's errors and warnings
about it).

May import `core`, `source` and `adapters` (pure questions only: capabilities, storable,
check). Writes nothing.
"""
