"""The VS Code grammar (editors/vscode/syntaxes/tapir.tmLanguage.json), tokenized as VS Code does.

``editors/vscode/test/probe.js`` tokenizes with vscode-textmate and vscode-oniguruma, the
tokenizer and regular-expression engine of VS Code. The scopes are checked against an independent
reading of the same text, in both directions: Python's own tokenizer (Tapir is a Python subset;
``$`` is spelled as a letter for it) tells where strings, comments, numbers, names and operators
are, and the ELEMENT terminal of ``grammar/tapir.lark`` how far an element reference reaches. So
every sample script, the upstream corpus (when ../shared/upstream is present) and crafted
snippets each check that every string, comment, number, keyword, call and element has its scope,
and that nothing else has one of those scopes. The name lists in the grammar (API methods,
builtins) are compared with the language's registry; ``TAPIR_UPDATE_GOLDEN=1`` rewrites them.
"""

from __future__ import annotations

import io
import json
import keyword
import os
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from vscode_support import REPO, VSCODE, probe

GRAMMAR = VSCODE / "syntaxes" / "tapir.tmLanguage.json"
SAMPLES = sorted((REPO / "samples").glob("**/*.tap"))
DOLLAR = "Ж"  # `$` for Python's tokenizer: a letter, so `$a__b` reads as one name of the same length


def registry_names() -> dict[str, set[str]]:
    """The names the grammar highlights, from the language's registry: the one place that lists
    them. (When the registry moves, this function is all that changes.)"""
    from tapir.dsl.registry import REGISTRY, Namespace

    values = (Namespace.STR, Namespace.LIST, Namespace.TUPLE, Namespace.DICT)
    return {
        "api-method": set(REGISTRY.names(Namespace.ELEMENT)),
        "api-function": set(REGISTRY.names(Namespace.GLOBAL)) | {e.name for e in REGISTRY.legacy_globals()},
        "builtin-function": set(REGISTRY.names(Namespace.BUILTIN)),
        "builtin-method": set().union(*(set(REGISTRY.names(ns)) for ns in values)),
    }


def _words_regex(names: set[str]) -> str:
    return r"\b(?:" + "|".join(sorted(names, key=lambda n: (-len(n), n))) + r")\b"


def _regex_words(regex: str) -> set[str]:
    m = re.fullmatch(r"(?:\(\?<!\\\.\))?\\b\(\?:([\w|]+)\)\\b", regex)
    assert m, f"not a word list: {regex}"
    return set(m.group(1).split("|"))


def element_regex() -> re.Pattern[str]:
    """The ELEMENT terminal of the language's own grammar."""
    text = (REPO / "src" / "tapir" / "grammar" / "tapir.lark").read_text(encoding="utf-8")
    m = re.search(r"^ELEMENT:\s*/(.+)/\s*$", text, re.M)
    assert m, "grammar/tapir.lark has no ELEMENT terminal"
    return re.compile(m.group(1))


ELEMENT = element_regex()

# ---------------------------------------------------------------------------------------------
# The independent reading: Python's tokenizer plus the ELEMENT terminal.


@dataclass(frozen=True)
class Tok:
    kind: str  # COMMENT STRING NUMBER NAME OP ELEMENT
    text: str
    start: tuple[int, int]  # 0-based line, code-point column
    end: tuple[int, int]


class Untokenizable(Exception):
    pass


def oracle(text: str) -> list[Tok]:
    """Python's tokens for a Tapir text, elements made whole; Untokenizable when Python's
    tokenizer cannot read it (the test then only checks that VS Code's tokenizer copes)."""
    lines = text.split("\n")
    toks: list[Tok] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(text.replace("$", DOLLAR)).readline):
            kind = tokenize.tok_name[t.type]
            if kind == "ERRORTOKEN" and not t.string.isspace():
                raise Untokenizable(f"{t.start}: {t.string!r}")
            if kind in ("COMMENT", "STRING", "NUMBER", "NAME", "OP"):
                s, e = (t.start[0] - 1, t.start[1]), (t.end[0] - 1, t.end[1])
                toks.append(Tok(kind, t.string, s, e))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise Untokenizable(str(exc)) from exc
    out: list[Tok] = []
    skip_until: tuple[int, int] | None = None
    for tok in toks:
        if skip_until is not None and tok.start < skip_until:
            continue
        skip_until = None
        if tok.kind == "NAME" and tok.text.startswith(DOLLAR):
            line, col = tok.start
            m = ELEMENT.match(lines[line], col)
            if m is None:  # a lone `$`: not an element; the grammar marks it as one being typed
                continue
            out.append(Tok("ELEMENT", m.group(), tok.start, (line, m.end())))
            skip_until = (line, m.end())
        else:
            out.append(tok)
    return out


# ---------------------------------------------------------------------------------------------
# VS Code's reading: scopes per character.

Scopes = list[list[list[str]]]  # [line][code-point column] -> scopes


def _utf16_to_codepoints(line: str) -> list[int]:
    """index in UTF-16 code units -> index in code points (one entry per unit, plus the end)."""
    out = []
    for i, ch in enumerate(line):
        out += [i] * (2 if ord(ch) > 0xFFFF else 1)
    out.append(len(line))
    return out


def scopes_per_char(texts: dict[str, str]) -> dict[str, Scopes]:
    answer = probe("tokenize", {"texts": [{"name": n, "text": t} for n, t in texts.items()]})
    result: dict[str, Scopes] = {}
    for name, text in texts.items():
        lines = text.split("\n")
        assert len(answer[name]) == len(lines), name
        per_line: Scopes = []
        for line, tokens in zip(lines, answer[name], strict=True):
            cps = _utf16_to_codepoints(line)
            chars: list[list[str]] = [[] for _ in line]
            for start, end, scopes in tokens:
                for i in range(cps[start], cps[end]):
                    chars[i] = scopes
            assert all(chars[i] for i in range(len(line))), f"{name}: characters without a token in {line!r}"
            per_line.append(chars)
        result[name] = per_line
    return result


def has(scopes: list[str], prefix: str) -> bool:
    return any(s == prefix or s.startswith(prefix + ".") or s.startswith(prefix + " ") for s in scopes)


# ---------------------------------------------------------------------------------------------
# What each token must look like.

CONTROL = {"if", "elif", "else", "for", "while", "break", "continue", "return", "pass", "assert"}
LOGICAL = {"and", "or", "not", "is"}
REFUSED = {"import", "from", "class", "lambda", "try", "except", "finally", "raise", "with", "as", "global",
           "nonlocal", "yield", "async", "await", "del"}
OPERATORS = {
    "keyword.operator.assignment": {"="},
    "keyword.operator.assignment.augmented": {"+=", "-=", "*=", "/=", "//=", "%=", "**="},
    "keyword.operator.comparison": {"==", "!=", "<", ">", "<=", ">="},
    "keyword.operator.arithmetic": {"+", "-", "*", "/", "//", "%", "**"},
    "invalid.illegal": {":=", "<<", ">>", "|", "&", "^", "~", "@", "->", "<<=", ">>=", "|=", "&=", "^=", "@=", "..."},
    "punctuation": {"(", ")", "[", "]", "{", "}", ",", ":", ";", "."},
}
OPERATOR_SCOPE = {op: scope for scope, ops in OPERATORS.items() for op in ops}
# `*args`, `**kw` and annotations in a parameter list are refused: marked invalid there.
OPERATOR_ALSO = {"*": "invalid.illegal", "**": "invalid.illegal", ":": "invalid.illegal"}


def _positions(tok: Tok, lines: list[str]) -> Iterator[tuple[int, int]]:
    (l0, c0), (l1, c1) = tok.start, tok.end
    for line in range(l0, l1 + 1):
        start = c0 if line == l0 else 0
        stop = c1 if line == l1 else len(lines[line])
        for col in range(start, stop):
            yield line, col


def _string_parts(text: str) -> tuple[str, str]:
    prefix = re.match(r"[A-Za-z]*", text).group()  # type: ignore[union-attr]
    body = text[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return prefix, quote


def fstring_fields(text: str) -> list[tuple[int, int]]:
    """Offsets of each replacement field's `{` and its `}` in an f-string token."""
    prefix, quote = _string_parts(text)
    i, end = len(prefix) + len(quote), len(text) - len(quote)
    fields = []
    while i < end:
        if text.startswith(("{{", "}}"), i):
            i += 2
            continue
        if text[i] == "\\" and "r" not in prefix.lower():
            i += 2
            continue
        if text[i] == "{":
            j, depth, inner_quote = i + 1, 0, ""
            while j < end:
                ch = text[j]
                if inner_quote:
                    inner_quote = "" if ch == inner_quote else inner_quote
                elif ch in "'\"":
                    inner_quote = ch
                elif ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    if ch == "}" and depth == 0:
                        break
                    depth -= 1
                j += 1
            fields.append((i, j))
            i = j + 1
            continue
        i += 1
    return fields


@dataclass
class Checker:
    name: str
    lines: list[str]
    scopes: Scopes
    problems: list[str]

    def at(self, line: int, col: int) -> list[str]:
        return self.scopes[line][col]

    def expect(self, tok: Tok, scope: str, where: Iterator[tuple[int, int]] | None = None, alt: str = "") -> None:
        for line, col in where if where is not None else _positions(tok, self.lines):
            got = self.at(line, col)
            if not has(got, scope) and not (alt and has(got, alt)):
                self.problems.append(
                    f"{self.name}:{line + 1}:{col + 1}: {tok.kind} {tok.text!r}: "
                    f"{self.lines[line][col]!r} should be {scope}{' or ' + alt if alt else ''}, is {got[1:]}"
                )
                return

    def check_element(self, tok: Tok) -> None:
        line, col = tok.start
        self.expect(tok, "variable.other.element")
        self.expect(tok, "punctuation.definition.element", iter([(line, col)]))
        name = tok.text[1:]
        normal = name.replace(":", "__", 1)
        screen = normal.split("__", 1)[0] if "__" in normal else ""
        if screen:
            self.expect(tok, "entity.name.namespace.screen", ((line, c) for c in range(col + 1, col + 1 + len(screen))))
            sep = 1 if name[len(screen)] == ":" else 2
            first = col + 1 + len(screen) + sep
            self.expect(tok, "punctuation.separator.screen", ((line, c) for c in range(first - sep, first)))
        else:
            first = col + 1
        self.expect(tok, "variable.other.constant.element", ((line, c) for c in range(first, tok.end[1])))

    def check_string(self, tok: Tok) -> None:
        self.expect(tok, "string")
        prefix, quote = _string_parts(tok.text)
        offsets = list(_positions(tok, self.lines))
        prefix_scope = "invalid.illegal.prefix" if "b" in prefix.lower() else "storage.type.string"
        self.expect(tok, prefix_scope, iter(offsets[: len(prefix)]))
        self.expect(tok, "punctuation.definition.string.begin", iter(offsets[len(prefix): len(prefix) + len(quote)]))
        self.expect(tok, "punctuation.definition.string.end", iter(offsets[len(offsets) - len(quote):]))
        fields = fstring_fields(tok.text) if "f" in prefix.lower() else []
        inside: set[int] = set()
        for start, end in fields:
            self.expect(tok, "punctuation.section.interpolation.begin", iter([offsets[start]]))
            self.expect(tok, "punctuation.section.interpolation.end", iter([offsets[end]]))
            self.expect(tok, "meta.embedded.line", iter(offsets[start + 1: end]))
            inside.update(range(start, end + 1))
        for i, pos in enumerate(offsets):
            if i not in inside and has(self.at(*pos), "meta.interpolation"):
                self.problems.append(f"{self.name}:{pos[0] + 1}:{pos[1] + 1}: {tok.text!r} has no field here")
                return

    def check_name(self, tok: Tok, before: Tok | None, after: Tok | None) -> None:
        word = tok.text
        call = after is not None and after.text == "(" and after.start == tok.end
        member = before is not None and before.text == "."
        if word.startswith("__"):
            self.expect(tok, "invalid.illegal.name")
        elif keyword.iskeyword(word):
            if word in ("True", "False", "None"):
                self.expect(tok, "constant.language")
            elif word == "def":
                self.expect(tok, "storage.type.function")
            elif word == "in":
                self.expect(tok, "keyword.control.flow", alt="keyword.operator.logical")
            elif word in CONTROL:
                self.expect(tok, "keyword.control.flow")
            elif word in LOGICAL:
                self.expect(tok, "keyword.operator.logical")
            elif word in REFUSED:
                self.expect(tok, "invalid.illegal.refused")
        elif before is not None and before.text == "def":
            self.expect(tok, "entity.name.function")
        elif member and call:
            names = registry_names()
            scope = ("support.function.api" if word in names["api-method"]
                     else "support.function.builtin.method" if word in names["builtin-method"]
                     else "entity.name.function.member")
            self.expect(tok, scope)
        elif member:
            self.expect(tok, "variable.other.member")
        elif call:
            names = registry_names()
            scope = ("support.function.api" if word in names["api-function"]
                     else "support.function.builtin" if word in names["builtin-function"]
                     else "entity.name.function.call")
            self.expect(tok, scope, alt="variable.parameter")
        elif word in registry_names()["builtin-function"]:
            self.expect(tok, "support.function.builtin", alt="variable.parameter")
        else:
            self.expect(tok, "variable.other", alt="variable.parameter")

    def check_reverse(self, toks: list[Tok]) -> None:
        """Only strings are strings, only comments comments; numbers and elements are where the
        reading puts them (or inside an f-string's fields)."""
        kind_at: dict[tuple[int, int], str] = {}
        for tok in toks:
            for pos in _positions(tok, self.lines):
                kind_at[pos] = tok.kind
        claims = {"comment": {"COMMENT"}, "string": {"STRING"}, "constant.numeric": {"NUMBER", "STRING"},
                  "variable.other.element": {"ELEMENT", "STRING"}, "keyword.control": {"NAME", "STRING"}}
        for line, chars in enumerate(self.scopes):
            for col, scopes in enumerate(chars):
                for scope, kinds in claims.items():
                    kind = kind_at.get((line, col))
                    if has(scopes, scope) and kind not in kinds and not self.lines[line][col].isspace():
                        self.problems.append(f"{self.name}:{line + 1}:{col + 1}: {self.lines[line][col]!r} is "
                                             f"{scope} but Python reads {kind or 'nothing'}")
                        return

    def check_all(self, toks: list[Tok]) -> None:
        for i, tok in enumerate(toks):
            if tok.kind == "ELEMENT":
                self.check_element(tok)
            elif tok.kind == "STRING":
                self.check_string(tok)
            elif tok.kind == "COMMENT":
                self.expect(tok, "comment.line.number-sign")
            elif tok.kind == "NUMBER":
                self.expect(tok, "constant.numeric")
            elif tok.kind == "NAME":
                self.check_name(tok, toks[i - 1] if i else None, toks[i + 1] if i + 1 < len(toks) else None)
            elif tok.kind == "OP":
                self.expect(tok, OPERATOR_SCOPE.get(tok.text, "punctuation"), alt=OPERATOR_ALSO.get(tok.text, ""))
        self.check_reverse(toks)


def check_texts(texts: dict[str, str]) -> tuple[int, list[str]]:
    """Tokenizes every text with VS Code's tokenizer and checks it against the reading; returns
    how many texts Python could read (and so were checked) and the problems found."""
    scopes = scopes_per_char(texts)
    problems: list[str] = []
    checked = 0
    for name, text in texts.items():
        try:
            toks = oracle(text)
        except Untokenizable:
            continue
        checked += 1
        Checker(name, text.split("\n"), scopes[name], problems).check_all(toks)
    return checked, problems


# ---------------------------------------------------------------------------------------------
# Tests


def test_every_sample_script_is_scoped_as_python_reads_it(npm_deps: Path) -> None:
    assert len(SAMPLES) >= 10
    texts = {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in SAMPLES}
    checked, problems = check_texts(texts)
    assert checked == len(SAMPLES)
    assert not problems, "\n".join(problems[:20])


def test_the_samples_use_every_kind_of_token_the_checks_cover(npm_deps: Path) -> None:
    """The sample test above is only as good as what the samples contain."""
    kinds = set()
    for p in SAMPLES:
        for tok in oracle(p.read_text(encoding="utf-8")):
            kinds.add(tok.kind)
            if tok.kind == "STRING" and tok.text[:1] in "fF":
                kinds.add("FSTRING")
            if tok.kind == "NAME" and keyword.iskeyword(tok.text):
                kinds.add("KEYWORD")
    assert kinds >= {"ELEMENT", "STRING", "FSTRING", "COMMENT", "NUMBER", "NAME", "OP", "KEYWORD"}


@pytest.mark.upstream
def test_the_upstream_corpus_is_scoped_as_python_reads_it(npm_deps: Path, upstream: Path) -> None:
    texts = {}
    for path in sorted((upstream / "synthetic").glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                texts[f"{path.name}:{i}"] = json.loads(line)["solution"].replace("\r\n", "\n")
    if not texts:
        pytest.skip("no synthetic scripts in the upstream folder")
    checked, problems = check_texts(texts)
    # Measured: Python's tokenizer reads all but a handful (unterminated strings, stray indentation).
    assert checked >= len(texts) - 40, f"only {checked} of {len(texts)} scripts could be read"
    assert not problems, f"{len(problems)} problems, the first:\n" + "\n".join(problems[:20])


# Crafted snippets: (text, the piece to look at, the scope each of its characters must have).
# The piece is the first occurrence of the text after `@`, if any, else of the whole piece.
CASES: list[tuple[str, str, str]] = [
    # element references
    ("$main__sort__button.tap()", "main", "entity.name.namespace.screen.tapir"),
    ("$main__sort__button.tap()", "sort__button", "variable.other.constant.element.tapir"),
    ("$main__sort__button.tap()", "$main__sort__button", "variable.other.element.tapir"),
    ("$settings__font_size_150%.tap()", "font_size_150%", "variable.other.constant.element.tapir"),
    ("tap($home:search_box)", "home", "entity.name.namespace.screen.tapir"),
    ("tap($home:search_box)", ":", "punctuation.separator.screen.tapir"),
    ("tap($home:search_box)", "search_box", "variable.other.constant.element.tapir"),
    ("tap($search_button)", "search_button", "variable.other.constant.element.tapir"),
    ("x = $songs_screen__", "songs_screen", "entity.name.namespace.screen.tapir"),
    ("$écran__bouton.tap()", "écran", "entity.name.namespace.screen.tapir"),
    ('s = "😀"; $a__b.tap()', "b", "variable.other.constant.element.tapir"),
    ("for x in $list: pass", ":", "punctuation.separator.colon.tapir"),
    # strings
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', "name", "meta.embedded.line.tapir"),
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', "!r", "storage.type.format.conversion.tapir"),
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', ">10", "constant.other.format-spec.tapir"),
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', "{{", "constant.character.escape.tapir"),
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', "'k'", "string.quoted.single.tapir"),
    ('f"{name!r:>10} and {{x}} {d[\'k\']} {xs[1:2]}"', "[1@:", "punctuation.separator.colon.tapir"),
    ('f"{$a__b.get_text()} items"', "a", "entity.name.namespace.screen.tapir"),
    ('f"{$a__b.get_text()} items"', "get_text", "support.function.api.tapir"),
    ('f"{len(xs)} items"', " items", "string.interpolated.tapir"),
    ('f"{x:.2f}"', ".2f", "constant.other.format-spec.tapir"),
    ('rf"\\d{x}"', "\\d", "string.quoted.raw.single.tapir"),
    ('rf"\\d{x}"', "x", "meta.embedded.line.tapir"),
    ('r"\\n"', "\\n", "string.quoted.raw.single.tapir"),
    ('"\\n\\x41\\u00e9\\N{BULLET}"', "\\N{BULLET}", "constant.character.escape.tapir"),
    ('"\\n\\x41\\u00e9\\N{BULLET}"', "\\x41", "constant.character.escape.tapir"),
    ('x = "abc\ny = 1', "y", "variable.other.tapir"),
    ('x = f"{y\nz = 1', "z", "variable.other.tapir"),
    ('x = """a\n# not a comment\n"""', "# not a comment", "string.quoted.multi.tapir"),
    ('"""Doc."""\nx = 1', "Doc.", "string.quoted.docstring.multi.tapir"),
    ('b"bytes"', "b", "invalid.illegal.prefix.tapir"),
    ('"# not a comment"', "#", "string.quoted.single.tapir"),
    # comments and the document header
    ("# doc: music.yaml\nx = 1", "music.yaml", "markup.underline.link.document-path.tapir"),
    ("# doc: music.yaml\nx = 1", "doc", "keyword.other.doc-header.tapir"),
    ("x = 1\n# doc: music.yaml", "music.yaml", "comment.line.number-sign.tapir"),
    ("x = 1  # note $a__b 'q'", "$a__b", "comment.line.number-sign.tapir"),
    # keywords, refused constructs
    ("if x not in xs: pass", "not in", "keyword.operator.logical.tapir"),
    ("if x is not None: pass", "is not", "keyword.operator.logical.tapir"),
    ("for i in range(3):", "in", "keyword.control.flow.tapir"),
    ("[x for x in xs if x]", "in", "keyword.control.flow.tapir"),
    ("for i\ny = 1", "=", "keyword.operator.assignment.tapir"),
    ("import os", "import", "invalid.illegal.refused.tapir"),
    ("f = lambda x: x", "lambda", "invalid.illegal.refused.tapir"),
    ("try:", "try", "invalid.illegal.refused.tapir"),
    ("x = a | b", "|", "invalid.illegal.operator.tapir"),
    ("if (n := 3): pass", ":=", "invalid.illegal.operator.tapir"),
    ("x.__class__", "__class__", "invalid.illegal.name.tapir"),
    ("x = ...", "...", "invalid.illegal.ellipsis.tapir"),
    ("def f(*args): pass", "*", "invalid.illegal.parameter.tapir"),
    # calls and definitions
    ("$a__b.match('Rock').tap()", "match", "support.function.api.tapir"),
    ("name.lower()", "lower", "support.function.builtin.method.tapir"),
    ("name.frobnicate()", "frobnicate", "entity.name.function.member.tapir"),
    ("tap($x)", "tap", "support.function.api.tapir"),
    ("back()", "back", "support.function.api.tapir"),
    ("print(len(xs))", "len", "support.function.builtin.tapir"),
    ("seconds(text)", "seconds", "entity.name.function.call.tapir"),
    ("sorted(xs, key=len)", "key", "variable.parameter.function-call.tapir"),
    ("sorted(xs, key=len)", "len", "support.function.builtin.tapir"),
    ("f(a,\n  key=1)", "key", "variable.parameter.function-call.tapir"),
    ("def f(a, b=max(1, 2), c=3):", "a", "variable.parameter.function.tapir"),
    ("def f(a, b=max(1, 2), c=3):", "c", "variable.parameter.function.tapir"),
    ("def f(a, b=max(1, 2), c=3):", "max", "support.function.builtin.tapir"),
    ("def f(a, b=max(1, 2), c=3):", "def @f", "entity.name.function.tapir"),
    # numbers
    ("x = 1_000 + 0x1F + 0o7 + 0b1", "1_000", "constant.numeric.dec.tapir"),
    ("x = 1_000 + 0x1F + 0o7 + 0b1", "0x1F", "constant.numeric.hex.tapir"),
    ("x = 2.5e-3 + .5 + 1.", "2.5e-3", "constant.numeric.float.tapir"),
    ("x = 2.5e-3 + .5 + 1.", ".5", "constant.numeric.float.tapir"),
    ("x = 2.5e-3 + .5 + 1.", "1.", "constant.numeric.float.tapir"),
    ("x = a1 + $a__b1", "a1", "variable.other.tapir"),
    ("x = a1 + $a__b1", "b1", "variable.other.constant.element.tapir"),
    # lines
    ("x = 1 + \\\n    2", "\\", "punctuation.separator.continuation.line.tapir"),
]


def _find(text: str, piece: str) -> tuple[int, int, int]:
    """(line, column, length) of a case's piece: `before@target` finds target after before."""
    before, _, target = piece.rpartition("@")
    offset = text.index(before + target) + len(before)
    line = text.count("\n", 0, offset)
    col = offset - (text.rfind("\n", 0, offset) + 1)
    return line, col, len(target)


def test_crafted_snippets(npm_deps: Path) -> None:
    texts = {f"case{i}": text for i, (text, _, _) in enumerate(CASES)}
    scopes = scopes_per_char(texts)
    wrong = []
    for i, (text, piece, scope) in enumerate(CASES):
        line, col, length = _find(text, piece)
        for c in range(col, col + length):
            got = scopes[f"case{i}"][line][c]
            if not has(got, scope.removesuffix(".tapir")) or not any(s.endswith(".tapir") for s in got):
                wrong.append(f"{text!r}: {piece!r} at {line + 1}:{c + 1} should be {scope}, is {got[1:]}")
                break
    assert not wrong, "\n".join(wrong)


def test_crafted_snippets_that_python_reads_agree_with_it(npm_deps: Path) -> None:
    """The crafted snippets also go through the full check where Python's tokenizer reads them."""
    checked, problems = check_texts({f"case{i}": text for i, (text, _, _) in enumerate(CASES)})
    assert checked >= len(CASES) * 3 // 4
    assert not problems, "\n".join(problems)


def test_half_typed_code_does_not_swallow_the_rest_of_the_file(npm_deps: Path) -> None:
    """An editor shows code while it is being typed: an unclosed call, string or field must not
    turn the following lines into something else."""
    texts = {
        "unclosed-field": 'x = f"{a\nif y:\n    $a__b.tap()\n',
        "unclosed-string": 'x = "abc\nif y:\n    $a__b.tap()\n',
        "for-without-in": "for x\nif y:\n    $a__b.tap()\n",
        "def-without-paren": "def f(a:\nif y:\n    $a__b.tap()\n",
        "dollar-alone": "x = $\nif y:\n    $a__b.tap()\n",
    }
    scopes = scopes_per_char(texts)
    for name, text in texts.items():
        lines = text.split("\n")
        if_scopes = scopes[name][1][0]
        assert has(if_scopes, "keyword.control.flow"), (name, if_scopes)
        assert not has(if_scopes, "string") and not has(if_scopes, "meta.function"), (name, if_scopes)
        col = lines[2].index("a__b")
        assert has(scopes[name][2][col], "entity.name.namespace.screen"), (name, scopes[name][2][col])


def test_a_long_script_tokenizes_quickly(npm_deps: Path) -> None:
    """No pattern backtracks badly: a 3,000-line script of sample lines (long lines included)."""
    body = "\n".join(p.read_text(encoding="utf-8") for p in SAMPLES)
    text = (body + "\n") * (3000 // body.count("\n") + 1)
    text += "x = " + " + ".join(f'f"{{$s__e{i}.get_text()}}"' for i in range(300)) + "\n"
    scopes = scopes_per_char({"long": text})  # probe.js fails on a line that takes over 5 s
    assert len(scopes["long"]) == text.count("\n") + 1


def test_grammar_names_match_the_registry() -> None:
    """The API and builtin names the grammar highlights are the registry's; with
    TAPIR_UPDATE_GOLDEN=1 the grammar is rewritten to match."""
    grammar = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    repo: dict[str, Any] = grammar["repository"]
    names = registry_names()
    stale = {key: names[key] for key in names if _regex_words(repo[key]["match"]) != names[key]}
    if stale and os.environ.get("TAPIR_UPDATE_GOLDEN"):
        for key, words in stale.items():
            repo[key]["match"] = _words_regex(words)
        repo["builtin-name"]["match"] = r"(?<!\.)" + _words_regex(names["builtin-function"])
        GRAMMAR.write_text(json.dumps(grammar, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        stale = {}
    for key, words in stale.items():
        have = _regex_words(repo[key]["match"])
        pytest.fail(f"grammar #{key}: missing {sorted(words - have)}, extra {sorted(have - words)} "
                    "(TAPIR_UPDATE_GOLDEN=1 python3 -m pytest tests/test_editors_textmate.py rewrites it)")
    assert _regex_words(repo["builtin-name"]["match"]) == names["builtin-function"]


def test_grammar_declares_every_rule_it_includes() -> None:
    grammar = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    text = json.dumps(grammar)
    included = set(re.findall(r'"include": "#([\w-]+)"', text))
    assert included <= set(grammar["repository"]), included - set(grammar["repository"])
    assert set(grammar["repository"]) - included == set(), "rules nothing includes"
    assert grammar["scopeName"] == "source.tapir"
