"""Data review (issue 30): viewsync diff and viewsync check on real live catalogs."""
