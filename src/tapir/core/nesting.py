"""The one guarded way Tapir reads nested YAML and JSON it did not write itself.

App documents, compiled symbol tables, eval suites, recordings and simulator states are files a
`# doc:` line, a `--doc` flag or the inspector's page can name. Their nesting must be bounded
before anything walks them: CPython's ``json`` raises ``RecursionError`` past the interpreter's
limit, PyYAML's composer recurses once per level (libyaml's C composer overflows the C stack at
about 200,000 levels: a segmentation fault), and every walker after them recurses too. Real
documents are under a dozen levels deep; anything past ``MAX_DEPTH`` is refused with a
``DocumentError`` that names the file and the line, before it is composed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from tapir.core.diagnostics import Diagnostic
from tapir.core.errors import DocumentError

__all__ = ["MAX_DEPTH", "check_yaml_depth", "compose_yaml", "load_json", "too_deep"]

#: The deepest nesting of mappings and lists read (an app document needs about ten).
MAX_DEPTH = 100

_FLOW = re.compile(r"[\[\]{}]")


def too_deep(limit: int, line: int | None, filename: str | None = None) -> DocumentError:
    """The error for text nested past ``limit`` (``line`` where it first went past)."""
    message = f"nested more than {limit} levels deep (mappings and lists; at most {limit})"
    return DocumentError(f"{filename or 'the text'} is {message}",
                         [Diagnostic.at_line(f"the document is {message}", line, code="too-deep")],
                         filename=filename)


def _depth_bound(text: str) -> int:
    """A cheap upper bound of the YAML/JSON nesting of ``text``.

    A block collection nested in another is indented further, or at the same indentation as a
    mapping's sequence value, or opened on the same line by ``-``, ``?`` or ``:``; flow
    collections add their open brackets (counted in strings too: that only overestimates).
    """
    flow = deepest_flow = 0
    for m in _FLOW.finditer(text):
        if m.group() in "[{":
            flow += 1
            deepest_flow = max(deepest_flow, flow)
        elif flow:
            flow -= 1
    block = 0
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        block = max(block, 2 * (indent + 1) + line.count("-") + line.count("?") + line.count(":"))
    return block + deepest_flow


def check_yaml_depth(text: str, limit: int = MAX_DEPTH, filename: str | None = None) -> None:
    """Raise ``too_deep`` when the YAML (or JSON) ``text`` nests past ``limit``.

    Exact where it matters: only when the cheap bound is over the limit are the parser's events
    counted (libyaml's parser keeps its own stack; it is the composer that recurses), and the count
    stops at the first level past the limit. Syntax errors are left for the composer to report.
    """
    if _depth_bound(text) <= limit:
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    mark = event.start_mark
                    raise too_deep(limit, mark.line + 1 if mark is not None else None, filename)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except (yaml.YAMLError, UnicodeEncodeError):
        return


def compose_yaml(text: str, loader: type, limit: int = MAX_DEPTH, filename: str | None = None) -> yaml.Node | None:
    """``yaml.compose`` after ``check_yaml_depth``; a ``RecursionError`` is refused the same way."""
    check_yaml_depth(text, limit, filename)
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=loader)
    except RecursionError:
        raise too_deep(limit, None, filename) from None
    return node


def load_json(text: str | bytes, limit: int = MAX_DEPTH, filename: str | None = None) -> Any:
    """``json.loads`` that refuses nesting past ``limit`` with ``too_deep`` (a ``DocumentError``);
    malformed JSON still raises ``json.JSONDecodeError``."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep(limit, None, filename) from None
    # The decoder stops near the interpreter's recursion limit; hold every caller to `limit`.
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            raise too_deep(limit, None, filename)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return data
