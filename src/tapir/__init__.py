"""Tapir: scripts that drive Android apps, written against an app document.

The package is laid out in layers that depend one way only:
grammar -> dsl -> runtime.hierarchy -> docgen -> service -> runtime -> codegen, lsp -> eval -> cli
(`tests/test_layers.py` enforces it).
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
