"""The vocabulary every layer speaks."""
