"""Natural language to script with a local model."""
