"""Reading intent."""
