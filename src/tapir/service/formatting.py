"""``tapir fmt``: one layout for every script, comments kept.

    result = format_source(text)
    result.text        # the formatted script (None when it does not parse: nothing is changed)
    result.errors      # the syntax errors that prevented it
    result.changed

The formatter rewrites the spacing of each line from its tokens and leaves everything else as
written: line breaks (a long call stays on the lines it was given), strings (quotes, escapes,
docstrings), comments (moved with their line; an end-of-line comment gets two spaces before its
'#', a comment one after it). Rules, after PEP 8:

* blocks indented by four spaces; continuation lines inside brackets keep their alignment with
  the bracket they were aligned with, or their indentation relative to the statement;
* one space around assignments, comparisons, arithmetic and boolean operators, after commas and
  after the ':' of a dict; none inside brackets, before calls and subscripts, around the '=' of a
  keyword argument or default, around the ':' of a slice, after a unary minus;
* at most two blank lines at the top level and one inside a block, two around a top-level
  ``def``, none at the start of a block or of the file; one newline at the end.

Formatting never changes what a script means: the parse of the result is the parse of the
input (tests check this on every sample and on generated programs), and formatting twice changes
nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.diagnostics import Diagnostic, TextEdit
from tapir.core.positions import LineIndex
from tapir.dsl.parser import parse_tolerant
from tapir.dsl.tokens import Token

__all__ = ["FormatResult", "format_edits", "format_source"]

_INDENT = "    "
_OPEN = {"LPAR", "LSQB", "LBRACE"}
_CLOSE = {"RPAR", "RSQB", "RBRACE"}
_BINARY = {"PLUS", "MINUS", "STAR", "SLASH", "DSLASH", "PERCENT", "DSTAR", "LESSTHAN", "MORETHAN", "EQEQ",
           "MOREEQ", "LESSEQ", "NOTEQ", "EQUAL", "AUGASSIGN", "VBAR", "CIRCUMFLEX", "AMPERSAND", "SHIFT_OP"}
_WORD_OPERATORS = {"AND", "OR", "NOT", "IN", "IS", "IF", "ELSE", "FOR"}
# After these a '-' or '+' is unary (no space after it).
_UNARY_CONTEXT = _BINARY | _OPEN | {"COMMA", "COLON", "SEMICOLON", "RETURN", "AND", "OR", "NOT", "IN", "IS", "IF",
                                    "ELSE", "ELIF", "WHILE", "FOR", "ASSERT"}
_OPERANDS = {"NAME", "ELEMENT", "STRING", "LONG_STRING", "DEC_NUMBER", "HEX_NUMBER", "OCT_NUMBER", "BIN_NUMBER",
             "FLOAT_NUMBER", "IMAG_NUMBER", "TRUE", "FALSE", "NONE"}


@dataclass(frozen=True)
class FormatResult:
    #: The formatted text, or None when the script does not parse.
    text: str | None
    errors: tuple[Diagnostic, ...] = ()
    original: str = ""

    @property
    def changed(self) -> bool:
        return self.text is not None and self.text != self.original


def format_source(source: str) -> FormatResult:
    """The script formatted (see the module docstring); unchanged when it has syntax errors."""
    parsed = parse_tolerant(source)
    if parsed.errors:
        return FormatResult(None, parsed.errors, source)
    if not parsed.tokens:
        return FormatResult("" if not source.strip() else "", (), source)
    return FormatResult(_Formatter(parsed.text, parsed.tokens).run(), (), source)


def format_edits(source: str) -> list[TextEdit]:
    """The edits that format ``source`` (one, replacing the whole text; none when it is already
    formatted or does not parse)."""
    result = format_source(source)
    if result.text is None or result.text == source:
        return []
    index = LineIndex(source)
    return [TextEdit(index.span(0, len(source)), result.text)]


@dataclass
class _Line:
    """A logical line: its tokens (comments included), in order."""

    tokens: list[Token]
    #: The column (0-based) of its first token in the original text.
    indent: int
    #: Blank lines before it in the original.
    blank_before: int = 0
    #: Only comments.
    comment_only: bool = False


class _Formatter:
    def __init__(self, text: str, tokens: tuple[Token, ...]) -> None:
        self.text = text
        self.index = LineIndex(text)
        self.tokens = [t for t in tokens if t.kind != "NEWLINE"]

    # -- logical lines --------------------------------------------------------------------------------

    def lines(self) -> list[_Line]:
        out: list[_Line] = []
        depth = 0
        current: list[Token] = []
        last_line = 0

        def flush() -> None:
            if current:
                first = current[0]
                out.append(_Line(list(current), first.span.column - 1, 0,
                                 all(t.kind == "COMMENT" for t in current)))
                current.clear()

        for tok in self.tokens:
            starts_line = not current or tok.span.line > current[-1].span.end_line
            if starts_line and current and depth == 0 and not self._continued(current[-1], tok):
                flush()
            if tok.kind == "COMMENT" and depth == 0 and starts_line and not current:
                current.append(tok)
                flush()
                continue
            if tok.kind in _OPEN:
                depth += 1
            elif tok.kind in _CLOSE:
                depth = max(depth - 1, 0)
            current.append(tok)
            last_line = tok.span.end_line
        flush()
        del last_line
        # blank lines before each logical line, from the original
        prev_end = 0
        for line in out:
            start = line.tokens[0].span.line
            blanks = 0
            for number in range(prev_end + 1, start):
                if not self.index.line_text(number).strip():
                    blanks += 1
            line.blank_before = blanks if prev_end else 0
            prev_end = max(t.span.end_line for t in line.tokens)
        return out

    def _continued(self, prev: Token, tok: Token) -> bool:
        """Whether a backslash joins the line of ``prev`` to the line of ``tok``."""
        between = self.text[prev.span.end_offset : tok.span.offset]
        return "\\" in between.split("\n", 1)[0] or between.rstrip(" \t\f").endswith("\\")

    # -- the whole text --------------------------------------------------------------------------------

    def run(self) -> str:
        lines = self.lines()
        out: list[str] = []
        stack: list[int] = [0]  # original indentation of the open blocks
        opened_block = False  # the previous code line ended with ':'
        in_top_def = False  # the last top-level statement was a def (its body may follow)
        for i, line in enumerate(lines):
            if line.comment_only:
                level = self._comment_level(stack, line.indent, lines, i)
            else:
                while len(stack) > 1 and line.indent < stack[-1]:
                    stack.pop()
                if line.indent > stack[-1]:
                    stack.append(line.indent)
                level = len(stack) - 1
            is_def = line.tokens[0].kind == "DEF"
            blanks = min(line.blank_before, 2 if level == 0 else 1)
            if opened_block or not out:
                blanks = 0
            elif level == 0 and not line.comment_only:
                if is_def and not self._after_comment_block(lines, i):
                    blanks = 2
                elif in_top_def:
                    blanks = 2  # the first statement after a top-level def's body
            elif level == 0 and in_top_def and line.blank_before:
                blanks = 2  # a comment after a top-level def's body, apart from it
            out.extend([""] * blanks)
            out.extend(self.render(line, level))
            if not line.comment_only:
                code = [t for t in line.tokens if t.kind != "COMMENT"]
                opened_block = code[-1].kind == "COLON"
                if level == 0:
                    in_top_def = is_def
        return "\n".join(out).rstrip("\n") + "\n"

    def _after_comment_block(self, lines: list[_Line], i: int) -> bool:
        """A def directly under a comment block (no blank line between): the comments belong to it."""
        return i > 0 and lines[i - 1].comment_only and lines[i].blank_before == 0 and i > 1

    def _comment_level(self, stack: list[int], column: int, lines: list[_Line], i: int) -> int:
        """The block level of a comment line: the deepest open block it is not left of, but never
        deeper than the next code line when it sits at that line's indentation or left of it."""
        nxt = next((ln for ln in lines[i + 1 :] if not ln.comment_only), None)
        level = 0
        for depth, indent in enumerate(stack):
            if column >= indent:
                level = depth
        if nxt is not None and nxt.indent > (stack[-1] if stack else 0) and column >= nxt.indent:
            level = len(stack)  # a comment opening a new block, at its indentation
        return level

    # -- one logical line ------------------------------------------------------------------------------

    def render(self, line: _Line, level: int) -> list[str]:
        indent = _INDENT * level
        rows: list[str] = [indent]
        brackets: list[tuple[str, int, int]] = []  # (kind, original column after it, new column after it)
        prev: Token | None = None
        prev_sig: Token | None = None  # the previous token that is not a comment
        unary_before = False  # prev_sig is a unary sign
        for tok in line.tokens:
            if prev is not None and tok.span.line > prev.span.end_line:
                # a new physical line inside the logical line
                if not brackets and tok.kind != "COMMENT":
                    rows[-1] = rows[-1].rstrip() + " \\"
                rows.append(" " * self._continuation_column(tok, line, level, brackets))
            elif prev is not None:
                if tok.kind == "COMMENT":
                    rows[-1] = rows[-1].rstrip() + "  "
                elif self._space(prev_sig, tok, brackets[-1][0] if brackets else None, unary_before):
                    rows[-1] += " "
            rows[-1] += self._text(tok)
            if tok.kind in _OPEN:
                brackets.append((self._bracket_kind(tok, prev_sig, line), tok.span.end_column - 1, len(rows[-1])))
            elif tok.kind in _CLOSE and brackets:
                brackets.pop()
            if tok.kind != "COMMENT":
                unary_before = tok.kind in ("MINUS", "PLUS") and (prev_sig is None or prev_sig.kind in _UNARY_CONTEXT)
                prev_sig = tok
            prev = tok
        return [row.rstrip() for row in rows]

    def _bracket_kind(self, tok: Token, prev: Token | None, line: _Line) -> str:
        """``call`` (a call's or a def's parentheses: '=' there is a keyword's), ``subscript``
        (':' there is a slice's), ``dict``, ``list`` or ``group``."""
        follows_operand = prev is not None and (prev.kind in _OPERANDS or prev.kind in _CLOSE) \
            and prev.text not in ("True", "False", "None")
        if tok.kind == "LBRACE":
            return "dict"
        if tok.kind == "LSQB":
            return "subscript" if follows_operand else "list"
        if follows_operand or (prev is not None and self._is_def_name(line, prev)):
            return "call"
        return "group"

    @staticmethod
    def _is_def_name(line: _Line, tok: Token) -> bool:
        return len(line.tokens) > 1 and line.tokens[0].kind == "DEF" and line.tokens[1] is tok

    def _continuation_column(self, tok: Token, line: _Line, level: int, brackets: list[tuple[str, int, int]]) -> int:
        original = tok.span.column - 1
        for _, after_orig, after_new in reversed(brackets):
            if original == after_orig:
                return after_new  # aligned with the bracket's contents: stays aligned
        if brackets and tok.kind in _CLOSE and original == line.indent:
            return len(_INDENT * level)  # a closing bracket on its own line, under the statement
        return max(len(_INDENT * level) + original - line.indent, len(_INDENT * level))

    @staticmethod
    def _text(tok: Token) -> str:
        if tok.kind != "COMMENT":
            return tok.text
        body = tok.text[1:]
        if body and not body.startswith((" ", "!", ":", "#")):
            body = " " + body
        return "#" + body.rstrip()

    @staticmethod
    def _space(prev: Token | None, tok: Token, inner: str | None, unary_before: bool) -> bool:
        """Whether a space goes between ``prev`` and ``tok`` on one line; ``inner`` is the kind
        of the innermost open bracket, ``unary_before`` whether ``prev`` is a unary sign."""
        if prev is None:
            return False
        p, t = prev.kind, tok.kind
        if p in _OPEN or t in _CLOSE or t in ("COMMA", "SEMICOLON", "DOT", "COLON") or p == "DOT":
            return False
        if p in ("COMMA", "SEMICOLON"):
            return True
        if p == "COLON":
            return inner != "subscript"
        if unary_before:
            return False
        if t == "EQUAL" or p == "EQUAL":  # before brackets: `f(a={...})` is a keyword's value too
            return inner != "call"
        if t in _OPEN:
            # a call or subscript sticks to what it calls; a bracket after an operator or keyword does not
            return not (p in _OPERANDS or p in _CLOSE) or prev.text in ("True", "False", "None")
        return True
