"""The static checker: every diagnostic of a script against its app document, before it runs.

    diagnostics = check(module, symbols)          # the analysis' diagnostics of a parsed module
    diagnostics = check_source(text, symbols)     # parses tolerantly too: every syntax error,
                                                  # and the checks on everything that was read

The checks are made by the one analysis (``tapir.dsl.analysis``); the language service
(``tapir.service``) adds what needs the project: the document lookup and ``no-document``. Codes,
each with span, severity and message (and fixes where there is a likely replacement):

* ``syntax`` / ``unsupported``: the text is not a Tapir script, or uses what Tapir refuses;
* ``unknown-element``: ``$name`` is not in the document (with "did you mean" fixes);
* ``illegal-action``: a method the element's kind does not allow (``set_text`` on a button);
  ``not-a-list``: ``match``, iterating, indexing or ``len`` of a non-list; ``wrong-child``: a
  child element used with a list it does not belong to;
* ``unknown-method``, ``arg-count``, ``arg-type``: calls that do not fit the registry
  (``tapir.dsl.registry``: element methods, API functions, builtins, str/list/dict methods) or a
  script function's parameters;
* ``operand-type``: an operator on operand types it refuses, both known (``1 + "a"``);
* ``flow-path`` / ``flow-error``: ``run_flow``'s file may not be run, or has problems of its own
  (``tapir.dsl.flow_calls``); its arguments against its ``param()`` names are ``arg-count``;
* ``unknown-name`` / ``unknown-function``: names bound nowhere (Appium's and Maestro's words get
  the Tapir call they mean, ``tapir.dsl.vocabulary``);
* ``use-before-assignment``: a name read where no path can have assigned it yet;
* ``too-deep``: a statement nested deeper than the checker's walk can follow;
* warnings: ``unreachable`` (a statement after return/break/continue), ``shadows-builtin`` (a
  script variable hiding a builtin or API function).

Anything not known is never reported, so the checker gives no false alarms on valid scripts.
"""

from __future__ import annotations

import re

from tapir.core.diagnostics import ERROR, WARNING, Diagnostic
from tapir.dsl import ast as A
from tapir.dsl.analysis import analyze
from tapir.dsl.symbols import SymbolTable

__all__ = ["DOC_COMMENT", "ERROR", "WARNING", "Diagnostic", "check", "check_source", "doc_comment"]

#: The first-line comment naming a script's document: ``# doc: path/app.yaml``.
DOC_COMMENT = re.compile(r"^\s*#\s*doc:\s*(?P<path>\S.*?)\s*$")


def doc_comment(source: str) -> str | None:
    """The document path a script names in its first line (``# doc: app.yaml``), if any."""
    first = source.split("\n", 1)[0].lstrip("\ufeff")  # a byte-order mark is not part of the comment
    m = DOC_COMMENT.match(first.rstrip("\r"))
    return m.group("path") if m else None


def check(module: A.Module, symbols: SymbolTable | None) -> list[Diagnostic]:
    """Every diagnostic of ``module``, sorted by position. Without symbols, element checks are skipped."""
    return analyze(module, symbols).diagnostics


def check_source(source: str, symbols: SymbolTable | None, filename: str = "<script>") -> list[Diagnostic]:
    """Parse (tolerantly) and check ``source``: syntax errors and checks together, by position."""
    from tapir.dsl.parser import parse_tolerant

    result = parse_tolerant(source, filename)
    path = None if filename.startswith("<") else filename
    found = list(result.errors) + analyze(result.module, symbols, path).diagnostics
    return sorted(found, key=lambda d: (d.span or result.module.span, d.code))
