"""Every text, Markdown and JSON rendering."""
