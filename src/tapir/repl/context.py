"""The text the language service reads before a REPL input: the session's names, as code.

    preamble(interpreter.globals, transcript.defs)
    # 'song = $songs_screen__song_list.match("Lanterns")\\ncount = 0\\ndef label(i):\\n    ...'

Checking and completing an input needs what the session has bound: a variable's type (so that
``song.`` offers an item's methods), a function's signature and docstring. Replaying every
statement that ran would cost time in proportion to the session's length on every keystroke, so
each name is written once, from its value in the interpreter's environment: an element handle as
the expression that makes it, a string, number or container as a literal of its type (a
container's first item kept, so loops over it are typed), a function as its ``def`` as typed (or
a stub with its parameters). Names a statement stopped half-way bound are in the environment,
so they are here too.

Only the names the input can reach are written: those it mentions and what the ``def``s among
them mention, so that the work per keystroke follows the input, not the number of names a long
session has made (completion adds the other names from the environment directly).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tapir.core.secrets import Secret
from tapir.dsl.values import Child, ElementHandle, Index, Match, ScriptFunction

__all__ = ["DEF_NAME", "handle_source", "preamble"]

#: The name a top-level ``def`` statement defines.
DEF_NAME = re.compile(r"def\s+([A-Za-z_]\w*)\s*\(")
_DEPTH = 2


_WORD = re.compile(r"[A-Za-z_]\w*")


def preamble(env: Mapping[str, Any], defs: Mapping[str, str], text: str | None = None) -> str:
    """One binding per name of ``env`` (see the module docstring) that ``text`` reaches (every
    name when ``text`` is None); ``defs`` maps a function's name to the text of the ``def``
    statement that made it."""
    wanted = set(env) if text is None else _reached(env, defs, text)
    lines: list[str] = []
    for name, value in env.items():
        if name not in wanted:
            continue
        if type(value) is ScriptFunction:
            lines.append(defs.get(name) or _stub(value))
        else:
            lines.append(f"{name} = {_literal(value, 0)}")
    return "\n".join(lines) + "\n" if lines else ""


def _reached(env: Mapping[str, Any], defs: Mapping[str, str], text: str) -> set[str]:
    todo = [w for w in set(_WORD.findall(text)) if w in env]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        body = defs.get(name)
        if body is not None:
            todo += [w for w in set(_WORD.findall(body)) if w in env and w not in seen]
    return seen


def _stub(fn: ScriptFunction) -> str:
    n = len(fn.params) - len(fn.defaults)
    params = [p if i < n else f"{p}=None" for i, p in enumerate(fn.params)]
    return f"def {fn.name}({', '.join(params)}):\n    pass"


def handle_source(handle: ElementHandle) -> str:
    """The expression that makes ``handle``: ``$list.match('Rock')``, ``$list[2]``."""
    out = f"${handle.name}"
    for sel in handle.path:
        if type(sel) is Index:
            out += f"[{sel.position}]"
        elif type(sel) is Match:
            out += f".match({sel.as_query()!r})"
        elif type(sel) is Child:
            out = f"${sel.name}"  # a child element inside an item: typed as the child element
    return out


def _literal(value: Any, depth: int) -> str:
    t = type(value)
    if value is None or t is bool:
        return repr(value)
    if t is int:
        return "0"
    if t is float:
        return "0.0"
    if t is str:
        return '""'
    if t is ElementHandle:
        return handle_source(value)
    if t is range:
        return "range(0)"
    if t is Secret:
        return f"secret({value.name!r})"  # typed as a secret; its value never enters the text
    deeper = depth < _DEPTH
    if t is list:
        return f"[{_literal(value[0], depth + 1)}]" if value and deeper else "[]"
    if t is tuple:
        if not value or not deeper:
            return "()"
        items = [_literal(v, depth + 1) for v in value[:8]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if t is dict:
        if not value or not deeper:
            return "{}"
        key, item = next(iter(value.items()))
        return "{" + _literal(key, depth + 1) + ": " + _literal(item, depth + 1) + "}"
    return "None"
