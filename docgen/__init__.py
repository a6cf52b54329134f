"""App documents: format, loader, upstream import, compilation to stubs, symbols and prompts."""
