"""Decoding of literal tokens: numbers, strings with escapes, and the parts of f-strings.

The lexer only finds where a literal starts and ends; here its text becomes a value. Problems are
reported as ``LiteralProblem`` with an offset into the token text, so the parser can point at the
exact character (an escape, a brace) inside the literal.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


class LiteralProblem(Exception):
    """A malformed literal; ``start``/``end`` are offsets into the token text."""

    def __init__(self, message: str, start: int, end: int, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end
        self.unsupported = unsupported


# ---------------------------------------------------------------------------------------------
# Numbers


def decode_number(text: str) -> int | float:
    """The value of a DEC/HEX/OCT/BIN/FLOAT token (imaginary numbers are refused by the caller)."""
    digits = text.replace("_", "")
    if any(c in digits for c in ".eE") and not digits[:2].lower() == "0x":
        return float(digits)
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit() and digits.strip("0"):
        raise LiteralProblem(
            "leading zeros in a decimal number are not allowed; use 0o for octal", 0, len(text)
        )
    try:
        return int(digits, 0)
    except ValueError:
        # Python refuses to convert more than a few thousand digits.
        raise LiteralProblem("this number is too large", 0, len(text)) from None


# ---------------------------------------------------------------------------------------------
# Strings


@dataclass(frozen=True)
class StringToken:
    """A string token split into its parts; ``body_start`` is the offset of the body in the token."""

    prefix: str  # lower case, e.g. "", "r", "f", "rf"
    quote: str  # ', ", ''' or \"\"\"
    body: str
    body_start: int

    @property
    def raw(self) -> bool:
        return "r" in self.prefix

    @property
    def is_fstring(self) -> bool:
        return "f" in self.prefix

    @property
    def is_bytes(self) -> bool:
        return "b" in self.prefix


def split_string(text: str) -> StringToken:
    i = 0
    while text[i] not in "'\"":
        i += 1
    prefix = text[:i].lower()
    quote = text[i] * 3 if text[i : i + 3] in ("'''", '"""') and len(text) - i >= 6 else text[i]
    body_start = i + len(quote)
    return StringToken(prefix, quote, text[body_start : len(text) - len(quote)], body_start)


_ESCAPE = re.compile(r"\\(\n|.)", re.S)
_SIMPLE_ESCAPES = {
    "\n": "",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_OCTAL = re.compile(r"[0-7]{1,3}")
_HEX = re.compile(r"[0-9a-fA-F]*")


def decode_escapes(body: str, offset: int = 0) -> str:
    """Python's escape sequences; an unknown escape such as ``\\d`` keeps its backslash, as in Python.

    ``offset`` is added to positions in a ``LiteralProblem``.
    """
    if "\\" not in body:
        return body
    out: list[str] = []
    pos = 0
    while True:
        i = body.find("\\", pos)
        if i < 0 or i + 1 >= len(body):
            out.append(body[pos:])
            return "".join(out)
        out.append(body[pos:i])
        c = body[i + 1]
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
            pos = i + 2
        elif c in "01234567":
            m = _OCTAL.match(body, i + 1)
            assert m is not None
            out.append(chr(int(m.group(), 8)))
            pos = m.end()
        elif c in _HEX_LEN:
            n = _HEX_LEN[c]
            digits = _HEX.match(body, i + 2, i + 2 + n)
            assert digits is not None
            if len(digits.group()) != n:
                raise LiteralProblem(
                    f"truncated \\{c} escape: expected {n} hex digits", offset + i, offset + i + 2 + len(digits.group())
                )
            code = int(digits.group(), 16)
            if code > 0x10FFFF:
                raise LiteralProblem(f"\\{c} escape is not a valid character", offset + i, offset + i + 2 + n)
            out.append(chr(code))
            pos = i + 2 + n
        elif c == "N":
            end = body.find("}", i) if body.startswith("{", i + 2) else -1
            if end < 0:
                raise LiteralProblem("malformed \\N{...} escape", offset + i, offset + i + 2)
            try:
                out.append(unicodedata.lookup(body[i + 3 : end]))
            except KeyError:
                raise LiteralProblem("unknown Unicode character name", offset + i, offset + end + 1) from None
            pos = end + 1
        else:
            out.append("\\" + c)
            pos = i + 2


# ---------------------------------------------------------------------------------------------
# f-strings


@dataclass(frozen=True)
class FLiteral:
    """Literal text of an f-string; ``text`` has ``{{``/``}}`` collapsed but escapes not decoded."""

    text: str
    start: int  # offsets into the string body
    end: int


@dataclass(frozen=True)
class FField:
    """A ``{expr!c:spec}`` replacement field; offsets are into the string body."""

    expr_start: int
    expr_end: int
    conversion: str | None
    format_spec: str | None
    start: int  # the '{'
    end: int  # after the '}'


_OPENERS = {"(": ")", "[": "]", "{": "}"}


def split_fstring(body: str) -> list[FLiteral | FField]:
    """The literal and replacement-field parts of an f-string body, in order.

    Offsets in a ``LiteralProblem`` are into ``body``.
    """
    parts: list[FLiteral | FField] = []
    text: list[str] = []
    lit_start = 0
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c == "{" and body.startswith("{{", i):
            text.append("{")
            i += 2
        elif c == "}" and body.startswith("}}", i):
            text.append("}")
            i += 2
        elif c == "}":
            raise LiteralProblem("single '}' is not allowed in an f-string (write '}}')", i, i + 1)
        elif c == "{":
            if text:
                parts.append(FLiteral("".join(text), lit_start, i))
                text = []
            field = _scan_field(body, i)
            parts.append(field)
            i = lit_start = field.end
        else:
            text.append(c)
            i += 1
    if text:
        parts.append(FLiteral("".join(text), lit_start, n))
    return parts


def _scan_field(body: str, start: int) -> FField:
    """Scan the replacement field that opens at ``body[start] == '{'``."""
    i = start + 1
    n = len(body)
    closers: list[str] = []
    quote: str | None = None
    while i < n:
        c = body[i]
        if quote is not None:
            if body.startswith(quote, i):
                i += len(quote)
                quote = None
            else:
                i += 1
            continue
        if c in "'\"":
            quote = c * 3 if body.startswith(c * 3, i) else c
            i += len(quote)
        elif c in _OPENERS:
            closers.append(_OPENERS[c])
            i += 1
        elif closers and c == closers[-1]:
            closers.pop()
            i += 1
        elif not closers and (c == "}" or c == ":" or (c == "!" and not body.startswith("!=", i))):
            break
        else:
            i += 1
    if i >= n:
        raise LiteralProblem("unclosed '{' in f-string: expected '}'", start, start + 1)
    expr_end = i
    expr = body[start + 1 : expr_end]
    if not expr.strip():
        raise LiteralProblem("empty expression in f-string", start, expr_end + 1)
    stripped = expr.rstrip()
    if stripped.endswith("=") and not stripped.endswith(("==", "!=", "<=", ">=")):
        raise LiteralProblem(
            "the '=' specifier in f-strings is not supported in Tapir scripts",
            start + 1 + len(stripped) - 1,
            start + 1 + len(stripped),
            unsupported=True,
        )
    conversion: str | None = None
    if body[i] == "!":
        conv = body[i + 1 : i + 2]
        if conv not in ("r", "s") or i + 2 >= n or body[i + 2] not in ":}":
            raise LiteralProblem("f-string conversion must be '!r' or '!s'", i, min(i + 2, n))
        conversion = conv
        i += 2
    format_spec: str | None = None
    if body[i] == ":":
        spec_start = i + 1
        end = body.find("}", spec_start)
        if end < 0:
            raise LiteralProblem("unclosed '{' in f-string: expected '}'", start, start + 1)
        nested = body.find("{", spec_start, end)
        if nested >= 0:
            raise LiteralProblem(
                "nested '{...}' in an f-string format spec is not supported in Tapir scripts",
                nested,
                nested + 1,
                unsupported=True,
            )
        format_spec = body[spec_start:end]
        i = end
    return FField(start + 1, expr_end, conversion, format_spec, start, i + 1)
