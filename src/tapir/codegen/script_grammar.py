"""The GBNF grammar of an answer: a short plan, the elements used, and a Tapir script that parses
and names only the document's elements, each with a method its kind allows.

It follows ``grammar/tapir.lark`` (statement forms, Python's operator precedence) restricted to
what a generated script needs, with three things the Lark grammar cannot say:

* **Element names are the document's.** ``$name`` is an alternative of the document's element
  names, never a free identifier; a method is written after an element only if the registry
  allows it on that element's kind (``set_text`` on inputs, ``match``/``[i]``/``len``/``for`` on
  lists), and a child element is passed only to an item of the list it belongs to. A list is
  tapped only through an item (``$list[0].tap()``, ``$list.match("DCIM").tap()``), never whole.
* **Elements are never bare values.** An element appears only as the receiver of a legal call,
  in ``len($list)`` or as the iterable of a ``for``, so no variable can carry it to an illegal
  call. Loop variables over a list may call the methods legal on every kind.
* **Indentation and nesting are bounded.** Blocks nest at most ``MAX_DEPTH`` deep and brackets
  ``MAX_NESTING`` deep, so a sentence never outgrows the parser's limits; ``break``/``continue``
  appear only in loops and ``return`` only in functions, as the parser requires; names are never
  keywords (Python's and Tapir's refused ones).

    from tapir.codegen.script_grammar import answer_grammar
    g = answer_grammar(document)
    gbnf_text = g.to_gbnf()
"""

from __future__ import annotations

import keyword
import string
from dataclasses import dataclass

from tapir.codegen import language as L
from tapir.codegen.gbnf import Grammar, Node, alt, chars, lit, opt, ref, rep, seq

__all__ = ["ANSWER_FENCE", "AnswerParts", "MAX_DEPTH", "MAX_NESTING", "answer_grammar", "script_grammar",
           "split_answer"]

#: Deepest block nesting of a generated script (``def`` > ``for`` > ``if`` > statement).
MAX_DEPTH = 3
#: Deepest bracket nesting inside one expression.
MAX_NESTING = 3
#: Statements in one block at most (the top level: ``MAX_STATEMENTS``).
MAX_BLOCK = 8
MAX_STATEMENTS = 20
#: The script is fenced like code in the model's training data: models close a fence reliably.
ANSWER_FENCE = "```python\n"
_CLOSE_FENCE = "```"

_INDENT = "    "
#: Actions taken on one item of a list, never on the list as a whole.
_ITEM_ACTIONS = ("tap", "long_tap")
_ID_CHARS = string.ascii_letters + string.digits + "_"
#: Names a script cannot bind: Python's keywords (Tapir refuses the rest by name).
_RESERVED = sorted(set(keyword.kwlist) | set(keyword.softkwlist) - {"_", "match", "case", "type"})


@dataclass(frozen=True)
class AnswerParts:
    plan: str
    elements: tuple[str, ...]
    script: str


def split_answer(text: str) -> AnswerParts:
    """The plan, the elements and the script of an answer in the grammar's format.

    Tolerant of unconstrained answers (an HTTP server without grammar support): a missing plan
    or element line is empty, and text without a fence is taken as the script.
    """
    plan, script = "", text
    elements: tuple[str, ...] = ()
    head, sep, rest = text.partition(ANSWER_FENCE)
    if not sep:
        head, sep, rest = text.partition("```\n")
    if sep:
        script = rest.split(_CLOSE_FENCE, 1)[0]
        for line in head.splitlines():
            if line.startswith("Plan:"):
                plan = line[len("Plan:"):].strip()
            elif line.startswith("Elements:"):
                elements = tuple(e.strip().lstrip("$") for e in line[len("Elements:"):].split(",") if e.strip())
    if script and not script.endswith("\n"):
        script += "\n"
    return AnswerParts(plan, elements, script)


def _class_of(chars_: str) -> str:
    """A GBNF class body for exactly these ASCII characters, as ranges."""
    codes = sorted({ord(c) for c in chars_})
    parts, i = [], 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        a, b = chr(codes[i]), chr(codes[j])
        parts.append(a if i == j else f"{a}{b}" if j == i + 1 else f"{a}-{b}")
        i = j + 1
    return "".join(parts)


class _GrammarBuilder:
    def __init__(self, doc: L.AppDocument) -> None:
        self.doc = doc
        self.g = Grammar("root")
        self.elements = list(doc.elements)
        self.lists = [e for e in self.elements if e.kind in L.LIST_KINDS]
        self.children = {e.name: [c for c in self.elements if c.item_of == e.name] for e in self.lists}

    # -- names -----------------------------------------------------------------------------------

    def names(self) -> None:
        """``name``: an identifier starting with a letter that is no keyword (a trie over them)."""
        tail = self.g.rule("name-tail", rep(chars(_class_of(_ID_CHARS)), 0, 24))
        trie: dict[str, set[str]] = {}
        for word in _RESERVED:
            for i in range(len(word)):
                trie.setdefault(word[:i], set()).add(word[i])
        ids: dict[str, str] = {p: f"name-k{n}" for n, p in enumerate(sorted(trie, key=lambda p: (len(p), p)))}

        def continuation(prefix: str) -> Node:
            nxt = trie.get(prefix, set())
            pool = (string.ascii_letters if prefix == "" else _ID_CHARS)
            others = "".join(c for c in pool if c not in nxt)
            options: list[Node] = []
            for c in sorted(nxt):
                word = prefix + c
                if word in ids:
                    options.append(seq(lit(c), ref(ids[word])))
                elif word in _RESERVED:  # a keyword no other keyword extends: one more character
                    options.append(seq(lit(c), chars(_class_of(_ID_CHARS)), tail))
                else:
                    options.append(seq(lit(c), tail))
            options.append(seq(chars(_class_of(others)), tail))
            body = alt(*options)
            if prefix != "" and prefix not in _RESERVED:
                return opt(body)
            return body

        for prefix, rule in ids.items():
            if prefix:
                self.g.rule(rule, continuation(prefix))
        self.g.rule("name", continuation(""))

    # -- literals ------------------------------------------------------------------------------------

    def literals(self) -> None:
        g = self.g
        # No leading zeros: Tapir refuses `07` like Python 3 does.
        whole = alt("0", seq(chars("1-9"), rep(chars("0-9"), 0, 5)))
        g.rule("number", seq(whole, opt(seq(".", rep(chars("0-9"), 1, 3)))))
        # No backticks in strings or comments: a fence inside the script would end it early.
        dq = chars('^"\\\\\\n`', pool=string.ascii_letters + " ,:'-")
        sq = chars("^'\\\\\\n`", pool=string.ascii_letters + ' ,:"-')
        g.rule("string", alt(seq('"', rep(dq, 0, 60), '"'), seq("'", rep(sq, 0, 60), "'")))
        fq = chars('^"\\\\\\n{}`', pool=string.ascii_letters + " ,:-")
        g.rule("fstring", seq('f"', rep(alt(fq, seq("{", ref("name"), "}")), 0, 60), '"'))
        # What `match` and `[i]` take: the registry's types (str | dict; int), as literals or names.
        integer = alt("0", seq(chars("1-9"), rep(chars("0-9"), 0, 3)))
        offset = opt(seq(alt(" + ", " - "), alt(integer, ref("name"))))
        g.rule("index", alt(seq(opt("-"), integer), seq(ref("name"), offset)))
        flag = alt("True", "False", ref("string"))
        g.rule("query", alt(ref("string"), ref("fstring"), ref("name"),
                            seq("{", ref("string"), ": ", flag, rep(seq(", ", ref("string"), ": ", flag), 0, 2), "}")))
        g.rule("dir", alt(*[f'"{d}"' for d in ("up", "down", "left", "right")]))

    # -- element calls -----------------------------------------------------------------------------

    def elements_rules(self) -> None:
        g = self.g
        # Non-list elements grouped by the methods their kind allows: one name rule per group.
        groups: dict[tuple[str, ...], list[str]] = {}
        for e in self.elements:
            if e.kind in L.LIST_KINDS or e.item_of is not None:
                continue
            methods = tuple(m.name for m in L.methods_legal_on(e.kind))
            groups.setdefault(methods, []).append(e.name)
        group_refs = [(g.rule(f"el-g{n}", alt(*[f"${name}" for name in names])), methods)
                      for n, (methods, names) in enumerate(groups.items())]
        child_rules: dict[str, str] = {}
        for n, e in enumerate(self.lists):
            kids = self.children.get(e.name, [])
            if kids:
                child_rules[e.name] = f"child-l{n}"
                g.rule(f"child-l{n}", alt(*[f"${c.name}" for c in kids]))
        # Arguments of a call at nesting level e are expressions of level e + 1.
        for level in range(1, MAX_NESTING):
            arg = f"test-{level + 1}"
            calls: list[Node] = [seq(el, ".", alt(*[self.method_call(m, None, arg) for m in methods]))
                                 for el, methods in group_refs]
            calls += [self.list_calls(e, child_rules.get(e.name), arg) for e in self.lists]
            g.rule(f"el-call-{level}", alt(*calls) if calls else lit("back()"))
        listrefs = [f"${e.name}" for e in self.lists]
        g.rule("list-ref", alt(*listrefs) if listrefs else lit("[]"))
        every = [f"${e.name}" for e in self.elements]
        g.rule("elem-name", alt(*every) if every else lit("$none"))
        child_names = [f"${c.name}" for c in self.elements if c.item_of is not None]
        # A loop variable (an item of some list) may be given any child element; the checker
        # reports a child of the wrong list, which the grammar cannot tell from a plain variable.
        g.rule("any-child", alt(*child_names) if child_names else lit("None"))

    def method_call(self, method: str, child_rule: str | None, arg: str) -> Node:
        entry = next(m for m in L.element_methods() if m.name == method)
        params = [p.name for p in entry.params]
        if method == "set_text":
            return seq("set_text(", ref(arg), ")")
        if method == "scroll":
            return seq("scroll(", opt(ref("dir")), ")")
        if method == "match":
            return seq("match(", ref("query"), ")")
        if params == ["child"] and child_rule is not None:
            return seq(f"{method}(", opt(ref(child_rule)), ")")
        return lit(f"{method}()")

    def list_calls(self, e: L.Element, child_rule: str | None, arg: str) -> Node:
        item_methods = [m.name for m in L.methods_legal_on(e.item_kind) if m.name != "match"]
        item = seq(f"${e.name}", alt(seq("[", ref("index"), "]"), seq(".match(", ref("query"), ")")))
        # A list is acted on through its items: `$list.tap()` would tap whichever item sits in its
        # middle (the runtime refuses such a step when it navigates), so the grammar leaves it out.
        own = [m.name for m in L.methods_legal_on(e.kind) if m.name not in ("match", *_ITEM_ACTIONS)]
        return alt(
            seq(f"${e.name}.", alt(*[self.method_call(m, None, arg) for m in own])),
            seq(item, ".", alt(*[self.method_call(m, child_rule, arg) for m in item_methods])),
        )

    # -- expressions, nesting level e = 1..MAX_NESTING ------------------------------------------------

    def expressions(self) -> None:
        g = self.g
        value_methods = sorted({m for ms in L.value_methods().values() for m in ms})
        loop_var_methods = [m.name for m in L.element_methods()
                            if all(k in m.kinds for k in L.Kind) and m.name != "match"]
        var_methods = sorted(set(value_methods) - set(loop_var_methods))
        for e in range(1, MAX_NESTING + 1):
            inner = e + 1 if e < MAX_NESTING else None
            t = f"test-{e}"
            g.rule(t, seq(ref(f"and-{e}"), rep(seq(" or ", ref(f"and-{e}")), 0, 3)))
            g.rule(f"and-{e}", seq(ref(f"not-{e}"), rep(seq(" and ", ref(f"not-{e}")), 0, 3)))
            g.rule(f"not-{e}", seq(rep("not ", 0, 1), ref(f"cmp-{e}")))
            g.rule(f"cmp-{e}", seq(ref(f"arith-{e}"), opt(seq(ref("cmp-op"), ref(f"arith-{e}")))))
            g.rule(f"arith-{e}", seq(ref(f"term-{e}"), rep(seq(alt(" + ", " - "), ref(f"term-{e}")), 0, 4)))
            g.rule(f"term-{e}", seq(ref(f"factor-{e}"),
                                    rep(seq(alt(" * ", " / ", " // ", " % "), ref(f"factor-{e}")), 0, 3)))
            g.rule(f"factor-{e}", seq(opt("-"), ref(f"primary-{e}")))
            atoms: list[Node | str] = [ref("string"), ref("fstring"), "True", "False", "None"]
            if inner is None:
                atoms += [ref("name"), ref("number")]
                g.rule(f"primary-{e}", alt(*atoms))
                continue
            ti = f"test-{inner}"
            args = seq(ref(ti), rep(seq(", ", ref(ti)), 0, 4))
            atoms += [
                ref(f"el-call-{e}"),
                seq("len(", ref("list-ref"), ")"),
                seq(ref("name"), "(", opt(args), ")"),
                seq("(", ref(ti), ")"),
                seq("[", opt(args), "]"),
                seq("[", ref(ti), " for ", ref("name"), " in ", alt(ref("list-ref"), ref(ti)),
                    opt(seq(" if ", ref(ti))), "]"),
                seq("{", opt(seq(ref("string"), ": ", ref(ti),
                                 rep(seq(", ", ref("string"), ": ", ref(ti)), 0, 4))), "}"),
                ref("name"),
            ]
            method = g.rule(f"method-{e}", alt(
                seq(".", alt(*var_methods), "(", opt(args), ")"),
                seq(".", alt(*loop_var_methods), "(", opt(ref("any-child")), ")"),
            ))
            # A number takes no postfix: `8.lower()` would lex as the float `8.`.
            g.rule(f"primary-{e}", alt(ref("number"), seq(alt(*atoms), rep(alt(method, seq("[", ref(ti), "]")), 0, 3))))
        g.rule("cmp-op", alt(" == ", " != ", " < ", " > ", " <= ", " >= ", " in ", " not in "))

    # -- statements --------------------------------------------------------------------------------

    def statements(self) -> None:
        g = self.g
        g.rule("target", ref("name"))
        g.rule("assign", seq(ref("target"), alt(" = ", " += ", " -= "), ref("test-1")))
        args = seq(ref("test-2"), rep(seq(", ", ref("test-2")), 0, 4))
        g.rule("call-stmt", alt(ref("el-call-1"), "back()", "enter()",
                                seq(ref("name"), "(", opt(args), ")"),
                                seq(ref("name"), ref("method-1"))))
        g.rule("assert-stmt", seq("assert ", ref("test-1"), opt(seq(", ", ref("test-1")))))
        g.rule("comment", seq("# ", rep(chars("^\\n`", pool=string.ascii_letters + " "), 0, 80), "\n"))
        for depth in range(MAX_DEPTH + 1):
            for in_loop in (False, True):
                for in_func in (False, True):
                    if depth == 0 and (in_loop or in_func):
                        continue
                    self.statement_rules(depth, in_loop, in_func)
        g.rule("body", seq(rep(ref("comment"), 0, 3), ref(self.stmt_name(0, False, False)),
                           rep(alt(ref(self.stmt_name(0, False, False)), ref("comment")), 0, MAX_STATEMENTS)))

    @staticmethod
    def stmt_name(depth: int, in_loop: bool, in_func: bool) -> str:
        return f"stmt-{depth}{'l' if in_loop else ''}{'f' if in_func else ''}"

    def block_ref(self, depth: int, in_loop: bool, in_func: bool) -> Node:
        name = f"block-{depth}{'l' if in_loop else ''}{'f' if in_func else ''}"
        if name not in self.g.rules:
            line = seq(_INDENT * depth, ref(self.stmt_name(depth, in_loop, in_func)))
            self.g.rule(name, rep(line, 1, MAX_BLOCK))
        return ref(name)

    def statement_rules(self, depth: int, in_loop: bool, in_func: bool) -> None:
        simple: list[Node | str] = [ref("call-stmt"), ref("assign"), ref("assert-stmt"), "pass"]
        if in_loop:
            simple += ["break", "continue"]
        if in_func:
            simple.append(seq("return", opt(seq(" ", ref("test-1")))))
        options: list[Node | str] = [seq(alt(*simple), "\n")]
        if depth < MAX_DEPTH:
            ind = _INDENT * depth
            d = depth + 1
            options += [
                seq("if ", ref("test-1"), ":\n", self.block_ref(d, in_loop, in_func),
                    rep(seq(ind, "elif ", ref("test-1"), ":\n", self.block_ref(d, in_loop, in_func)), 0, 3),
                    opt(seq(ind, "else:\n", self.block_ref(d, in_loop, in_func)))),
                seq("for ", ref("target"), " in ",
                    alt(ref("list-ref"), seq("range(", ref("test-2"), ")"), ref("test-1")),
                    ":\n", self.block_ref(d, True, in_func)),
                seq("while ", ref("test-1"), ":\n", self.block_ref(d, True, in_func)),
            ]
            if depth == 0:
                # One parameter at most: two could repeat a name, which the parser refuses and a
                # context-free grammar cannot prevent.
                options.append(seq("def ", ref("name"), "(", opt(ref("name")), "):\n", self.block_ref(1, False, True)))
        self.g.rule(self.stmt_name(depth, in_loop, in_func), alt(*options))

    # -- the whole answer ------------------------------------------------------------------------------

    def build(self, with_plan: bool) -> Grammar:
        self.names()
        self.literals()
        self.elements_rules()
        self.expressions()
        self.statements()
        script = seq(ANSWER_FENCE, ref("body"), _CLOSE_FENCE)
        if with_plan:
            plan_char = chars("^\\n`", pool=string.ascii_letters + " ,")
            self.g.rule("root", seq("Plan: ", rep(plan_char, 3, 100), "\n",
                                    "Elements: ", ref("elem-name"), rep(seq(", ", ref("elem-name")), 0, 7), "\n",
                                    script))
        else:
            self.g.rule("root", script)
        return self.g


def answer_grammar(doc: L.AppDocument, *, with_plan: bool = True) -> Grammar:
    """The grammar of a whole answer for ``doc``: plan, elements, fenced script."""
    return _GrammarBuilder(doc).build(with_plan)


def script_grammar(doc: L.AppDocument) -> Grammar:
    """Only the fenced script (for repair rounds, where the plan is already known)."""
    return _GrammarBuilder(doc).build(with_plan=False)
