"""Property tests: the parser never fails in any way but a ``TapirSyntaxError``, and random
valid programs parse to the same tree, with the same spans, as CPython gives their Python twin."""

from __future__ import annotations

import keyword

from cpython_oracle import python_form, substitute_elements, tapir_form
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tapir.core.errors import TapirSyntaxError
from tapir.core.positions import LineIndex
from tapir.dsl import ast as T
from tapir.dsl.parser import parse, parse_tolerant

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SAMPLES = [
    "$main__settings.tap()\n$settings__font_size_150%.tap()\n",
    "if len($notes__list) == 0:\n    tap($notes__create)\n    set_text($new__title, 'Shopping')\nelse:\n"
    "    $notes__list[0].tap()\n",
    "for item in $notes__list:\n    if item.get_text($notes__title) == \"x\":\n        item.long_tap()\n"
    "        break\n",
    "def pick(xs, k=1):\n    '''Pick.'''\n    return [x for x in xs if x][k:]\n\nn = 0\nwhile n < 3:\n"
    "    n += 1; back()\n",
    "selected = get_attributes($s__opt)[\"selected\"]\nassert selected, f'{n!r} not {\"on\"}'\n"
    "x = (1 +\n     2) * -3 ** 2 if a else {'k': [1, 2.5, None]}\n",
]


def check_outcome(source: str) -> None:
    """Parsing gives a module with sane spans, or a syntax error that renders; the tolerant parse
    never raises, finds problems exactly when the strict one does, and agrees with it otherwise."""
    tolerant = parse_tolerant(source, "p.tap")
    check_spans(tolerant.module, tolerant.text)
    check_tokens(tolerant)
    try:
        module = parse(source, "p.tap")
    except TapirSyntaxError as exc:
        assert exc.span is not None
        lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        assert 1 <= exc.span.line <= len(lines) + 1
        assert exc.render().startswith("p.tap:")
        assert tolerant.errors, "the strict parse failed but the tolerant one found nothing"
        return
    assert not tolerant.errors, tolerant.errors
    assert tapir_form(tolerant.module) == tapir_form(module)
    check_spans(module, tolerant.text)


def check_spans(module: T.Module, text: str) -> None:
    """Every node's span lies in the text, and its offsets are its lines and columns."""
    lines = text.split("\n")
    index = LineIndex(text)
    for node in module.walk():
        s = node.span
        assert (s.line, s.column) <= (s.end_line, s.end_column), node
        assert 1 <= s.line <= s.end_line <= len(lines), node
        assert 1 <= s.column and s.end_column <= len(lines[s.end_line - 1]) + 1, node
        offsets = index.offset(s.line, s.column), index.offset(s.end_line, s.end_column)
        assert (s.offset, s.end_offset) == offsets, node


def check_tokens(result: object) -> None:
    """Tokens are in order, do not overlap, and each is the text at its span."""
    text: str = result.text  # type: ignore[attr-defined]
    end = 0
    for tok in result.tokens:  # type: ignore[attr-defined]
        assert tok.span.offset >= end, tok
        assert text[tok.span.offset : tok.span.end_offset] == tok.text, tok
        end = tok.span.end_offset


# ---------------------------------------------------------------------------------------------
# Any text

TAPIR_PIECES = [
    "if ", "elif ", "else", "while ", "for ", " in ", "def ", "return", "pass", "break", "continue", "assert ",
    "not ", " and ", " or ", " is ", "True", "None", "x", "y1", "$a__b", "$s:e", "$p%", "tap", ".tap", ".match",
    "(", ")", "[", "]", "{", "}", ":", ",", ";", ".", "=", "==", "+", "-", "*", "**", "/", "//", "%", "<", ">=",
    "!=", "+=", "'", '"', "'''", "f'", "f'{", "}", "\\", "\\n", "#", "1", "2.5", "0x1", "1e3", "\n", "\n    ",
    "\n\t", "    ", " ", "@", ":=", "import", "lambda", "__x", "...", "|", "~", "!", "?", "$", "\r\n",
]


@FAST
@given(st.text(max_size=200))
def test_any_text(source: str) -> None:
    check_outcome(source)


@FAST
@given(st.lists(st.sampled_from(TAPIR_PIECES), max_size=60).map("".join))
def test_any_sequence_of_tapir_pieces(source: str) -> None:
    check_outcome(source)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SAMPLES))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "insert", "duplicate", "drop_line", "dup_line", "swap_lines"]))
        i = draw(st.integers(0, max(len(text) - 1, 0)))
        lines = text.split("\n")
        j = draw(st.integers(0, len(lines) - 1))
        k = draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            text = text[:i] + text[i + 1 :]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(TAPIR_PIECES) | st.characters()) + text[i:]
        elif op == "duplicate":
            text = text[:i] + text[i : i + 3] + text[i:]
        elif op == "drop_line":
            text = "\n".join(lines[:j] + lines[j + 1 :])
        elif op == "dup_line":
            text = "\n".join(lines[: j + 1] + lines[j:])
        else:
            lines[j], lines[k] = lines[k], lines[j]
            text = "\n".join(lines)
    return text


def test_samples_are_valid() -> None:
    for source in SAMPLES:
        module = parse(source)
        assert tapir_form(module) == python_form(substitute_elements(source, module))


@FAST
@given(mutated())
def test_mutated_scripts(source: str) -> None:
    check_outcome(source)


# ---------------------------------------------------------------------------------------------
# Random valid programs, checked against CPython

NAMES = st.sampled_from(["a", "b", "item", "n", "items", "x1", "total", "f", "tap", "get_text", "match"])
ATTRS = st.sampled_from(["tap", "get_text", "match", "scroll", "set_text", "get_attributes", "long_tap", "x"])
WORD = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True).filter(lambda w: not keyword.iskeyword(w))
ELEMENTS = st.builds(
    lambda screen, name, pct: "$" + (screen + "__" if screen else "") + name + ("%" if pct else ""),
    st.one_of(st.just(""), WORD), WORD, st.booleans(),
)
STRING_BODY = st.lists(
    st.sampled_from(list("abc XYZ019_-!?") + ["\\n", "\\t", "\\\\", "\\x41", "é"]), max_size=8
).map("".join)
STRINGS = st.one_of(
    STRING_BODY.map(lambda s: "'" + s.replace("'", "") + "'"),
    STRING_BODY.map(lambda s: '"' + s.replace('"', "") + '"'),
    STRING_BODY.map(lambda s: "r'" + s.replace("\\", "") + "'"),
)
NUMBERS = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["1.5", "0.25", "1e3", "0x1F", "1_000", "0"]))
ATOMS = st.one_of(NAMES, ELEMENTS, NUMBERS, STRINGS, st.sampled_from(["True", "False", "None"]))


# f-string fields: no nested f-strings (Python 3.11 cannot reuse the quote inside a field)
FIELDS = st.one_of(
    NAMES, ELEMENTS, NUMBERS,
    st.tuples(NAMES, st.sampled_from(["+", "*", "=="]), st.one_of(NAMES, NUMBERS)).map(" ".join),
    st.tuples(st.one_of(NAMES, ELEMENTS), ATTRS).map(lambda t: f"{t[0]}.{t[1]}()"),
    STRINGS.map(lambda s: s.replace("'", '"')),
)


def _operand(e: str) -> str:
    # compound operands are parenthesised so every generated text is valid Python
    return e if e.replace("_", "").replace("$", "").replace("%", "").isalnum() else f"({e})"


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    op = st.sampled_from(["+", "-", "*", "/", "//", "%", "**"])
    cmp = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"])
    callee = st.one_of(NAMES, st.tuples(st.one_of(NAMES, ELEMENTS), ATTRS).map(lambda t: f"{t[0]}.{t[1]}"))
    args = st.lists(inner, max_size=3)
    kwargs = st.lists(
        st.tuples(st.sampled_from(["k", "direction", "child"]), inner), max_size=2, unique_by=lambda t: t[0]
    )
    return st.one_of(
        st.tuples(inner, op, inner).map(lambda t: f"{_operand(t[0])} {t[1]} {_operand(t[2])}"),
        st.tuples(inner, cmp, inner).map(lambda t: f"{_operand(t[0])} {t[1]} {_operand(t[2])}"),
        st.tuples(st.sampled_from(["-", "+", "not "]), inner).map(lambda t: t[0] + _operand(t[1])),
        st.tuples(inner, st.sampled_from(["and", "or"]), inner, inner).map(
            lambda t: f"{_operand(t[0])} {t[1]} {_operand(t[2])} {t[1]} {_operand(t[3])}"
        ),
        st.tuples(inner, inner, inner).map(lambda t: f"{_operand(t[0])} if {_operand(t[1])} else {_operand(t[2])}"),
        st.tuples(callee, args, kwargs).map(
            lambda t: f"{t[0]}(" + ", ".join(t[1] + [f"{k}={v}" for k, v in t[2]]) + ")"
        ),
        st.tuples(st.one_of(NAMES, ELEMENTS), inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(NAMES, st.one_of(st.just(""), NUMBERS), st.one_of(st.just(""), NUMBERS)).map(
            lambda t: f"{t[0]}[{t[1]}:{t[2]}]"
        ),
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ")"),
        st.lists(st.tuples(STRINGS, inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
        ),
        st.tuples(inner, NAMES, inner, st.lists(inner, max_size=2)).map(
            lambda t: f"[{t[0]} for {t[1]} in {_operand(t[2])}" + "".join(f" if {_operand(c)}" for c in t[3]) + "]"
        ),
        st.tuples(STRING_BODY, FIELDS, st.sampled_from(["", "!r", "!s"]), st.sampled_from(["", ":>4", ":.2f"])).map(
            # no quote of the same kind, and (before Python 3.12) no backslash inside a field
            # (the spaces keep a dict in a field from reading as '{{')
            lambda t: "f'" + t[0].replace("'", "") + "{ " + t[1].replace("\\", "") + " "
            + t[2] + t[3] + "}'"
        ),
    )


EXPRESSIONS = st.recursive(ATOMS, _compound, max_leaves=6)


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, in_loop: bool = False, in_def: bool = False) -> list[str]:
    """Lines of a block of statements (indented by the caller)."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["expr", "assign", "augassign", "multi", "pass", "assert", "comment"]
        if depth < 2:
            kinds += ["if", "while", "for"] + (["def"] if not in_def else [])
        if in_loop:
            kinds += ["break", "continue"]
        if in_def:
            kinds += ["return"]
        kind = draw(st.sampled_from(kinds))
        e = draw(EXPRESSIONS)
        name = draw(NAMES)
        if kind == "expr":
            out.append(e)
        elif kind == "assign":
            target = draw(st.sampled_from([name, f"{name}, other", f"{name} = other", f"{name}[0]"]))
            out.append(f"{target} = {e}")
        elif kind == "augassign":
            out.append(f"{name} {draw(st.sampled_from(['+=', '-=', '*=', '//=']))} {e}")
        elif kind == "multi":
            out.append(f"{name} = {e}; back(); enter()")
        elif kind == "pass":
            out.append("pass")
        elif kind == "assert":
            out.append(f"assert {e}, 'message'")
        elif kind == "comment":
            out.append(f"{name} = 1  # a comment")
        elif kind in ("break", "continue"):
            out.append(kind)
        elif kind == "return":
            out.append(f"return {e}")
        else:
            header = {
                "if": f"if {e}:",
                "while": f"while {e}:",
                "for": f"for {name} in {_operand(e)}:",
                "def": f"def {name}(p, q=1):",
            }[kind]
            loop = kind in ("while", "for") or (in_loop and kind != "def")  # a def starts outside any loop
            body = draw(blocks(depth + 1, loop, in_def or kind == "def"))
            out.append(header)
            out.extend("    " + line for line in body)
            if kind == "if" and draw(st.booleans()):
                out.append(f"elif {draw(EXPRESSIONS)}:")
                out.extend("    " + line for line in draw(blocks(depth + 1, in_loop, in_def)))
            if kind == "if" and draw(st.booleans()):
                out.append("else:")
                out.extend("    " + line for line in draw(blocks(depth + 1, in_loop, in_def)))
    return out


PROGRAMS = st.tuples(blocks(), st.sampled_from(["    ", "  ", "\t"]), st.booleans()).map(
    lambda t: "\n".join(line.replace("    ", t[1]) for line in t[0]) + ("\n" if t[2] else "")
)


# (no "explain" phase: it would print the large generated strategy)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
@given(PROGRAMS)
def test_generated_programs_match_cpython(source: str) -> None:
    module = parse(source)
    assert isinstance(module, T.Module)
    assert tapir_form(module) == python_form(substitute_elements(source, module))
