"""Tapir: scripts that drive Android apps, written against an app document.

The package is laid out in layers that depend one way only:
grammar -> dsl -> docgen -> runtime -> codegen, lsp, cli.
"""

__version__ = "0.1.0"
