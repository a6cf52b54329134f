"""Text from a script, made safe to show on a terminal, and bounded for a message.

A script's output and the data its errors quote reach the user's terminal. Control characters
there are commands, not text: ``\\x1b[2J`` clears the screen, ``\\r`` and ``\\x1b[1A`` move the
cursor back over what was written, a right-to-left override reverses what follows, so a script
could rewrite what the user sees (a passed test, a different file name). ``terminal_safe``
writes every such character as a Python escape (``\\x1b``, ``\\r``, ``\\u202e``); newlines and
tabs stay as they are. ``bounded`` cuts a text quoted into a message (a megabyte of script data in
``float("x" * 999000)``) to its two ends and says how much was left out.

    terminal_safe("\\x1b[2Jok\\n")   # '\\\\x1b[2Jok\\n'
    bounded("x" * 10_000)          # 'xxx...xx … [9,000 characters cut] … xxx'
"""

from __future__ import annotations

import re

__all__ = ["MAX_MESSAGE_CHARS", "bounded", "terminal_safe"]

#: C0 controls but tab and newline, DEL, C1 controls (``\x9b`` is a one-byte CSI), and the
#: Unicode formatting characters that reorder or hide text (bidirectional overrides and
#: isolates, zero-width marks).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
#: The most characters of a message (script data quoted in it included) an error carries.
MAX_MESSAGE_CHARS = 2000


def _escape(mo: re.Match[str]) -> str:
    c = mo.group()
    if c == "\r":
        return "\\r"
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with control and text-reordering characters written as escapes (newlines and
    tabs kept)."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` if at most ``limit`` characters; else its beginning and end, with the number of
    characters left out between them."""
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 5
    return f"{text[:head]} … [{len(text) - head - tail:,} characters cut] … {text[-tail:]}"
