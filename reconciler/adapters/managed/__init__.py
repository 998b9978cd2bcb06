"""The managed catalog: all view metadata in our own SQL store (`adapter`), its tables and
bulk reads (`tables`).
"""
