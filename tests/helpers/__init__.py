"""Helpers shared by the tests: import them from here, never from a conftest."""
