"""What an operator makes of operands whose types the analysis knows, as the interpreter does it.

``binop(op, left, right)`` is the result's type tag, ``"unknown"`` when the operands are fine but the
result is not known here (or an operand's type is not known: never a false alarm), and None when
the interpreter would refuse the operation (``1 + "a"``). ``unary`` and ``ordering`` likewise for
``-x`` and ``a < b``. The tags are the analysis' (``tapir.dsl.bindings.Ty``).
"""

from __future__ import annotations

__all__ = ["UNKNOWN_TAG", "binop", "ordering", "unary"]

UNKNOWN_TAG = "unknown"
_NUMBERS = frozenset({"int", "float", "bool"})
_SEQUENCES = frozenset({"str", "list", "tuple"})
#: The tags whose values the interpreter's operators treat exactly as Python does.
_KNOWN = _NUMBERS | _SEQUENCES | {"dict", "None"}


def binop(op: str, left: str, right: str) -> str | None:
    """The type of ``left op right``; None when Tapir (as Python) refuses the operand types."""
    if left not in _KNOWN or right not in _KNOWN:
        return UNKNOWN_TAG
    if left in _NUMBERS and right in _NUMBERS:
        if op == "/":
            return "float"
        if "float" in (left, right):
            return "float"
        return UNKNOWN_TAG if op == "**" else "int"  # 2 ** -1 is a float
    if op == "+" and left == right and left in _SEQUENCES:
        return left
    if op == "*" and left in _SEQUENCES and right in ("int", "bool"):
        return left
    if op == "*" and right in _SEQUENCES and left in ("int", "bool"):
        return right
    if op == "%" and left == "str":  # formatting: whether the values fit the format is not known here
        return "str"
    return None


def unary(op: str, operand: str) -> str | None:
    """The type of ``op operand`` (``-``, ``+``; ``not`` is always a bool); None when refused."""
    if op == "not":
        return "bool"
    if operand not in _KNOWN:
        return UNKNOWN_TAG
    if operand in _NUMBERS:
        return "int" if operand == "bool" else operand
    return None


def ordering(left: str, right: str) -> bool:
    """Whether ``left < right`` (``<=``, ``>``, ``>=``) can be compared; True when not known."""
    if left not in _KNOWN or right not in _KNOWN:
        return True
    if left in _NUMBERS and right in _NUMBERS:
        return True
    return left == right and left in _SEQUENCES
