"""The SQL state store."""
