"""Carrying a plan out."""
