"""The Lark grammar of the Tapir language, shipped as package data."""

from pathlib import Path

GRAMMAR_DIR = Path(__file__).resolve().parent
