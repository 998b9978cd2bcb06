"""Catalogs that keep views as metastore tables: the shared middle class (`base`), the
engine-native view encodings (`formats`: one `EngineFormat` class each for Spark, Trino, Hive, Flink), table columns
(`table_columns`), and the two leaves, Hive Metastore over Thrift (`hms`) and AWS Glue
(`glue`).
"""
