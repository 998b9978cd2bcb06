"""The managed store."""
