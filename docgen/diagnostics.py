"""Show document problems the way every Tapir error is shown: file:line:col, the line, a caret."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tapir.dsl.errors import Problem


def render_problems(problems: Sequence[Problem], filename: str, source: str | None = None) -> str:
    """One block per problem; ``source`` is read from ``filename`` when not given."""
    if source is None:
        try:
            source = Path(filename).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            source = ""
    lines = source.splitlines()
    out: list[str] = []
    for p in problems:
        where = filename
        if p.line is not None:
            where += f":{p.line}" + (f":{p.column}" if p.column is not None else "")
        out.append(f"{where}: {p.severity}[{p.code}]: {p.message}")
        if p.line is not None and 1 <= p.line <= len(lines):
            text = lines[p.line - 1].expandtabs(4)
            out.append(f"    {text}")
            start = (p.column - 1) if p.column else len(text) - len(text.lstrip())
            width = max(len(text.rstrip()) - start, 1) if p.column is None else max(_token_width(text, start), 1)
            out.append("    " + " " * start + "^" * width)
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    out.append(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}")
    return "\n".join(out)


def _token_width(text: str, start: int) -> int:
    """The width of the key or scalar starting at ``start`` (up to ':' or the end of the line)."""
    rest = text[start:].rstrip()
    colon = rest.find(": ")
    if rest.endswith(":"):
        colon = len(rest) - 1
    return colon if colon > 0 else len(rest)
