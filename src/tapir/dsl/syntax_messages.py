"""Syntax errors in words: turns what the lexer and the LALR parser report into Tapir errors.

Lark reports an unexpected token with the set of terminal names the parser could have taken
(``RPAR``, ``NAME``, ``_INDENT``...). A person wants to read "expected ':' after the if condition"
or "unclosed '(' opened at 3:10", so this module looks at the token, the expected set and the
parser's value stack (what has been read of the current statement) and says what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from lark import Token, Tree

from tapir.core.errors import Span, TapirSyntaxError, UnsupportedConstruct
from tapir.dsl.ast import Stmt

# ---------------------------------------------------------------------------------------------
# Constructs refused before parsing. Keys are words the lexer reads as names.

_BUILTINS_ONLY = "scripts use only the built-in actions and functions"
REFUSED_KEYWORDS: dict[str, tuple[str, str | None]] = {
    "import": ("'import' is not allowed in Tapir scripts", _BUILTINS_ONLY),
    "from": ("'from ... import' is not allowed in Tapir scripts", _BUILTINS_ONLY),
    "class": ("'class' is not allowed in Tapir scripts", "use functions ('def') and dictionaries instead"),
    "lambda": ("'lambda' is not supported in Tapir scripts", "define a function with 'def' instead"),
    "with": ("'with' is not supported in Tapir scripts", None),
    "global": ("'global' is not supported in Tapir scripts", "pass values to functions and return results"),
    "nonlocal": ("'nonlocal' is not supported in Tapir scripts", "pass values to functions and return results"),
    "try": (
        "'try' is not supported in Tapir scripts",
        "a failing action stops the script with a clear error; test conditions with 'if' instead",
    ),
    "except": ("'except' is not supported in Tapir scripts", "test conditions with 'if' instead of catching errors"),
    "finally": ("'finally' is not supported in Tapir scripts", None),
    "raise": ("'raise' is not supported in Tapir scripts", "stop with an error using: assert condition, \"message\""),
    "yield": ("'yield' is not supported in Tapir scripts", "return a list instead"),
    "async": ("'async' is not supported in Tapir scripts", "actions already wait for the app"),
    "await": ("'await' is not supported in Tapir scripts", "actions already wait for the app"),
    "del": ("'del' is not supported in Tapir scripts", "assign a new value instead"),
    "as": ("'as' is not supported in Tapir scripts", None),
}

REFUSED_TOKENS: dict[str, tuple[str, str | None]] = {
    "WALRUS": ("the ':=' operator is not supported in Tapir scripts", "assign on a line of its own with '='"),
    "AT": ("'@' (decorators and matrix multiplication) is not supported in Tapir scripts", None),
}

DUNDER_MESSAGE = "names starting with '__' are not allowed in Tapir scripts"
UNPACKING_MESSAGE = "'*' and '**' unpacking (as in *args, **kwargs, [*items]) is not supported in Tapir scripts"

# ---------------------------------------------------------------------------------------------
# Terminal names in words

_WORDS: dict[str, str] = {
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COLON": "':'",
    "SEMICOLON": "';'",
    "COMMA": "','",
    "DOT": "'.'",
    "EQUAL": "'='",
    "AUGASSIGN": "an augmented assignment such as '+='",
    "NAME": "a name",
    "ELEMENT": "an element such as $screen__element",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "DEC_NUMBER": "a number",
    "HEX_NUMBER": "a number",
    "OCT_NUMBER": "a number",
    "BIN_NUMBER": "a number",
    "FLOAT_NUMBER": "a number",
    "IMAG_NUMBER": "a number",
    "_NEWLINE": "the end of the line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the indented block",
    "$END": "the end of the script",
    "ARROW": "'->'",
    "ELSE": "'else'",
}

# Terminals that can begin an expression: if the parser accepts NAME and a number, it wants one.
_EXPR_START = {
    "NAME", "ELEMENT", "STRING", "LONG_STRING", "DEC_NUMBER", "HEX_NUMBER", "OCT_NUMBER", "BIN_NUMBER",
    "FLOAT_NUMBER", "IMAG_NUMBER", "LPAR", "LSQB", "LBRACE", "MINUS", "PLUS", "TILDE", "NOT", "TRUE",
    "FALSE", "NONE", "ELLIPSIS",
}
# Operators that could always continue an expression; listing them would bury the useful words.
_CONTINUATIONS = {
    "PLUS", "MINUS", "STAR", "DSTAR", "SLASH", "DSLASH", "PERCENT", "VBAR", "CIRCUMFLEX", "AMPERSAND",
    "SHIFT_OP", "LESSTHAN", "MORETHAN", "EQEQ", "MOREEQ", "LESSEQ", "NOTEQ", "IN", "NOT", "IS",
    "AND", "OR", "IF", "DOT", "LPAR", "LSQB", "FOR",
}
# The order in which expected words are listed: the most telling first.
_LIST_ORDER = ["COLON", "COMMA", "RPAR", "RSQB", "RBRACE", "ELSE", "NAME", "_NEWLINE"]
_STMT_TYPES = get_args(Stmt)

_BLOCK_HEADERS = {
    "IF": "the if condition",
    "ELIF": "the elif condition",
    "WHILE": "the while condition",
    "FOR": "the for loop header",
    "DEF": "the function signature",
    "ELSE": "'else'",
}
_BLOCK_NAMES = {
    "IF": "the 'if' statement",
    "ELIF": "the 'elif' clause",
    "ELSE": "'else'",
    "WHILE": "the 'while' statement",
    "FOR": "the 'for' statement",
    "DEF": "the function definition",
}
_COMPOUND = {"IF", "WHILE", "FOR", "DEF"}
_STATEMENT_KEYWORDS = _COMPOUND | {"ELSE", "ELIF", "RETURN", "PASS", "BREAK", "CONTINUE", "ASSERT"}
_BOUNDARIES = {"_NEWLINE", "_INDENT", "_DEDENT", "SEMICOLON"}
_OPENING = {"LPAR", "LSQB", "LBRACE"}


def token_span(tok: Token) -> Span:
    """Where a token is (Lark types positions as optional; its lexer always sets them)."""
    return Span(tok.line or 1, tok.column or 1, tok.end_line or 1, tok.end_column or 1,
                tok.start_pos if tok.start_pos is not None else -1, tok.end_pos if tok.end_pos is not None else -1)


def describe(tok: Token) -> str:
    """A token as a person names it: "name 'x'", "')'", "the end of the line"."""
    t = tok.type
    if t == "NAME":
        return f"name '{tok}'"
    if t == "ELEMENT":
        return f"element '{tok}'"
    if t in ("STRING", "LONG_STRING"):
        text = str(tok)
        return f"string {text if len(text) <= 24 else text[:20] + '...'}"
    if t.endswith("_NUMBER"):
        return f"number {tok}"
    if t in ("_NEWLINE", "_INDENT", "_DEDENT", "$END"):
        return _WORDS[t]
    return f"'{tok}'"


def _expected_words(expected: set[str]) -> str:
    expected = expected - {"ERROR_TEXT", "INVALID"}
    wants_expression = "NAME" in expected and "DEC_NUMBER" in expected
    words = ["an expression"] if wants_expression else []
    for t in _LIST_ORDER:
        if t in expected and not (wants_expression and t == "NAME"):
            words.append(_WORDS[t])
    if not words and "EQUAL" in expected:
        words.append(_WORDS["EQUAL"])
    if not words:
        # only continuations are possible (e.g. '(' after 'def name'): name those
        rest = sorted(t for t in expected if t != "$END")
        words = [_WORDS.get(t, f"'{t.lower()}'") for t in rest[:3]] or ["the end of the script"]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _is_statement(value: Any) -> bool:
    if isinstance(value, (*_STMT_TYPES, Tree)):
        # (a Tree is one of the grammar's repetition helpers, holding the statements before)
        return True
    # a simple statement line (a list) or a block (a tuple) of statements
    return isinstance(value, (list, tuple)) and bool(value) and isinstance(value[0], _STMT_TYPES)


def _statement_items(stack: Sequence[Any]) -> list[Any]:
    """The values of the statement being read: the stack after the last statement boundary."""
    for i in range(len(stack) - 1, -1, -1):
        v = stack[i]
        if (isinstance(v, Token) and v.type in _BOUNDARIES) or _is_statement(v):
            return list(stack[i + 1 :])
    return list(stack)


def _header_keyword(items: list[Any]) -> Token | None:
    """The keyword opening the current compound statement, when no bracket is open since it."""
    if not items or not isinstance(items[0], Token) or items[0].type not in _BLOCK_HEADERS:
        return None
    depth = 0
    for v in items[1:]:
        if isinstance(v, Token):
            if v.type in _OPENING:
                depth += 1
            elif v.type in ("RPAR", "RSQB", "RBRACE"):
                depth -= 1
    return items[0] if depth <= 0 else None


def _nearest(items: list[Any], types: set[str]) -> Token | None:
    for v in reversed(items):
        if isinstance(v, Token) and v.type in types:
            return v
    return None


def _line_indent_column(source: str, line: int) -> int:
    lines = source.split("\n")
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        return len(text) - len(text.lstrip(" \t")) + 1
    return 1


def unexpected_token(
    tok: Token,
    expected: set[str],
    stack: Sequence[Any],
    prev: Token | None,
    open_brackets: Sequence[Token],
    line_first: Token | None,
    source: str,
    colon_element: Token | None = None,
) -> TapirSyntaxError:
    """The error for a token the parser cannot take at this point.

    ``prev`` is the token before ``tok``, ``open_brackets`` the brackets open before it and
    ``line_first`` the first token of its line, ``colon_element`` the last element token read
    in the `$screen:element` spelling.
    """
    t = tok.type
    at = token_span(tok)
    at_line_start = prev is None or prev.type in _BOUNDARIES or at.line > token_span(prev).end_line
    found = describe(tok)

    # A bracket left open runs into the next statement: its line starts no further right than
    # the line with the bracket (or starts with a statement keyword).
    if open_brackets:
        b = open_brackets[-1]
        opened = token_span(b)
        first = line_first if line_first is not None and token_span(line_first).line == at.line else tok
        where = token_span(first)
        if t == "$END" or (
            opened.line < where.line
            and (first.type in _STATEMENT_KEYWORDS or where.column <= _line_indent_column(source, opened.line))
        ):
            return TapirSyntaxError(f"unclosed '{b}' opened at {opened.line}:{opened.column}", opened)

    if t == "_INDENT":
        return TapirSyntaxError(
            "unexpected indent",
            Span(at.line, 1, at.line, max(at.column, 2)),
            hint="only the lines of a block (after a line ending in ':') are indented",
        )

    items = _statement_items(stack)
    if "_INDENT" in expected and expected <= {"_INDENT", "$END"}:
        # the stack still holds the block's header: its nearest keyword is the one that opened it
        kw = _nearest(list(stack), set(_BLOCK_NAMES))
        what = f"{_BLOCK_NAMES[kw.type]} on line {token_span(kw).line}" if kw is not None else "':'"
        return TapirSyntaxError(f"expected an indented block after {what}", token_span(tok))

    if t in ("ELSE", "ELIF"):
        if not at_line_start:
            return TapirSyntaxError(f"'{tok}' must start a new line, lined up with its 'if'", token_span(tok))
        if "COLON" not in expected:
            return TapirSyntaxError(
                f"'{tok}' does not follow an 'if' block at the same indentation", token_span(tok)
            )

    if prev is not None and prev.type == "NAME" and prev == "match" and line_first is prev:
        return UnsupportedConstruct("'match' statements are not supported in Tapir scripts", token_span(prev),
                                    hint="use 'if' and 'elif'")

    if t in _COMPOUND and prev is not None and prev.type == "SEMICOLON":
        return TapirSyntaxError(
            f"'{tok}' cannot follow ';': a compound statement must start on its own line", token_span(tok)
        )

    header = _header_keyword(items)
    if "COLON" in expected and header is not None and t != "COLON":
        hint = None
        if t == "EQUAL":
            hint = "to compare two values use '=='"
        elif header.type == "ELSE" and t == "IF":
            hint = "write 'elif'"
        elif colon_element is not None and token_span(colon_element).line == at.line:
            name = str(colon_element)[1:].replace(":", "__", 1)
            hint = f"'{colon_element}' was read as the element ${name}; put a space after ':'"
        return TapirSyntaxError(
            f"expected ':' after {_BLOCK_HEADERS[header.type]}, found {found}", token_span(tok), hint=hint
        )

    if "IN" in expected and "COLON" not in expected:
        kw = _nearest(items, {"FOR"})
        if kw is not None:
            return TapirSyntaxError(f"expected 'in' after the loop variable, found {found}", token_span(tok))

    if "ELSE" in expected and _nearest(items, {"IF"}) is not None and "_NEWLINE" not in expected:
        return TapirSyntaxError(
            f"expected 'else' in the conditional expression, found {found}", token_span(tok)
        )

    if "_NEWLINE" in expected and not at_line_start and t != "_NEWLINE":
        # the statement is complete, and this token does not continue it
        what = "an operator or the end of the statement" if expected & _CONTINUATIONS else "the end of the statement"
        starts_statement = t in _EXPR_START or t in _STATEMENT_KEYWORDS
        return TapirSyntaxError(
            f"expected {what}, found {found}",
            token_span(tok),
            hint="put each statement on its own line, or separate statements with ';'" if starts_statement else None,
        )

    if not items and at_line_start and "NAME" in expected and "PASS" in expected:
        return TapirSyntaxError(f"expected a statement, found {found}", token_span(tok))

    hint = None
    if colon_element is not None and token_span(colon_element).line == at.line:
        name = str(colon_element)[1:].replace(":", "__", 1)
        hint = f"'{colon_element}' was read as the element ${name}; put a space after ':' if that was not meant"
    if t == "EQUAL" and "NAME" in expected:
        hint = "to compare two values use '=='"
    elif prev is not None and prev.type == "ELEMENT" and (token_span(prev).end_line, token_span(prev).end_column) == (
        at.line, at.column
    ):
        hint = f"the element name ends before '{str(tok)[:1]}': names hold only letters, digits, '_' and '%'"
    return TapirSyntaxError(f"expected {_expected_words(expected)}, found {found}", token_span(tok), hint=hint)


def unexpected_character(source: str, line: int, column: int, pos: int) -> TapirSyntaxError:
    """The error for text no token starts with (an unterminated string, a stray character)."""
    c = source[pos] if pos < len(source) else ""
    here = Span(line, column, line, column + 1)
    if c in "'\"":
        if source.startswith(c * 3, pos):
            return TapirSyntaxError("unterminated triple-quoted string", Span(line, column, line, column + 3))
        if pos >= 2 and source[pos - 2 : pos] == c * 2 and column >= 3:
            # the lexer read '' (an empty string) and then failed on the third quote
            return TapirSyntaxError("unterminated triple-quoted string", Span(line, column - 2, line, column + 1))
        end = source.find("\n", pos)
        end = len(source) if end < 0 else end
        return TapirSyntaxError(
            "unterminated string", Span(line, column, line, column + max(end - pos, 1)),
            hint=f"close it with {c} on the same line, or use {c * 3} for text over several lines",
        )
    if c == "$":
        return TapirSyntaxError(
            "expected an element name after '$'", here, hint="element references look like $screen__element"
        )
    if c == "\\":
        return TapirSyntaxError(
            "unexpected character after '\\': a line continuation must end the line",
            here,
            hint="inside a string, write \\n for a newline",
        )
    if c == "!":
        return TapirSyntaxError("unexpected '!'", here, hint="use 'not' for negation, '!=' for 'not equal'")
    if c in "?`":
        return TapirSyntaxError(f"unexpected character '{c}'", here)
    if c and c.isprintable():
        return TapirSyntaxError(f"unexpected character '{c}' (U+{ord(c):04X})", here)
    return TapirSyntaxError(f"unexpected invisible character U+{ord(c) if c else 0:04X}", here)


def refused_token(tok: Token) -> UnsupportedConstruct | None:
    """The error for a token that starts a construct Tapir refuses, or None."""
    if tok.type == "NAME":
        value = str(tok)
        if value in REFUSED_KEYWORDS:
            message, hint = REFUSED_KEYWORDS[value]
            return UnsupportedConstruct(message, token_span(tok), hint=hint)
        if value.startswith("__"):
            return UnsupportedConstruct(DUNDER_MESSAGE, token_span(tok))
        return None
    if tok.type in REFUSED_TOKENS:
        message, hint = REFUSED_TOKENS[tok.type]
        return UnsupportedConstruct(message, token_span(tok), hint=hint)
    return None
