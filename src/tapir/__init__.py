"""Tapir: scripts that drive Android apps, written against an app document.

Each subpackage is a layer, and layers depend one way only (``tests/test_layers.py``)::

    sim -> core -> grammar, hierarchy -> dsl -> docgen -> service -> runtime -> run
        -> codegen, lsp, repl, runner, inspector -> eval -> synth -> cli

``tapir.run.Runner`` is the one way to run a script; ``python -m tapir`` is the ``tapir`` command.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
