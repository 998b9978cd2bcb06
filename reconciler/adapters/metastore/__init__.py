"""Hive Metastore and Glue."""
