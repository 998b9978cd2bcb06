"""Desired vs live."""
