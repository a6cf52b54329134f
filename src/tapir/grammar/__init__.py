"""The Lark grammar of the Tapir language, shipped as package data."""

from pathlib import Path

__all__ = ["GRAMMAR_DIR"]

#: The folder of ``tapir.lark``.
GRAMMAR_DIR = Path(__file__).resolve().parent
