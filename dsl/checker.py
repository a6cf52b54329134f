"""The static checker: every diagnostic of a script against its app document, before it runs.

    diagnostics = check(module, symbols)          # the LSP calls this on every change
    diagnostics = check_source(text, symbols)     # parses too; syntax errors become diagnostics

It reports, each with span, severity and code:

* ``unknown-element``: ``$name`` is not in the document (with "did you mean" suggestions);
* ``illegal-action``: a method the element's kind does not allow (``set_text`` on a button,
  ``match`` on a non-list), iterating, indexing or ``len`` of a non-list (``not-a-list``), or a
  child element used with a list it does not belong to (``wrong-child``);
* ``unknown-method``, ``arg-count``, ``arg-type``: calls that do not fit the API registry
  (``tapir.dsl.api``) or a script function's parameters;
* ``unknown-name`` / ``unknown-function``: names bound nowhere;
* ``use-before-assignment``: a name read where no path can have assigned it yet.
* ``too-deep``: a statement nested deeper than the checker's walk can follow.

Types are tracked only as far as needed: element kinds, list items (``for song in $songs`` makes
``song`` an item of that list), and the plain types literals and API results have. Anything not
known is ``unknown`` and never reported, so the checker gives no false alarms on valid scripts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tapir.dsl import ast as A
from tapir.dsl.api import BUILTINS, ELEMENT_METHODS, GLOBALS, LEGACY_GLOBALS, LIST_KINDS, ApiEntry, Kind, Param
from tapir.dsl.errors import Span, TapirSyntaxError
from tapir.dsl.symbols import SymbolTable

ERROR = "error"
WARNING = "warning"

#: The Python recursion limit while checking (the interpreter's at its default budgets).
_RECURSION_LIMIT = 5_000

#: The first-line comment naming a script's document: ``# doc: path/app.yaml``.
DOC_COMMENT = re.compile(r"^\s*#\s*doc:\s*(?P<path>\S.*?)\s*$")


@dataclass(frozen=True)
class Diagnostic:
    span: Span
    severity: str
    code: str
    message: str
    #: Replacements to offer (element or name spellings), best first.
    suggestions: tuple[str, ...] = ()

    def render(self, source: str | None = None, filename: str | None = None) -> str:
        """``file:line:col: severity[code]: message``, the source line and a caret."""
        out = [f"{filename or '<script>'}:{self.span.line}:{self.span.column}: {self.severity}[{self.code}]: "
               f"{self.message}"]
        if source is not None:
            lines = source.splitlines()
            if 1 <= self.span.line <= len(lines):
                text = lines[self.span.line - 1].expandtabs(4)
                start = max(self.span.column - 1, 0)
                if self.span.end_line == self.span.line:
                    width = max(self.span.end_column - self.span.column, 1)
                else:
                    width = max(len(text) - start, 1)
                out += [f"    {text}", "    " + " " * start + "^" * width]
        return "\n".join(out)


def doc_comment(source: str) -> str | None:
    """The document path a script names in its first line (``# doc: app.yaml``), if any."""
    first = source.split("\n", 1)[0].lstrip("\ufeff")  # a byte-order mark is not part of the comment
    m = DOC_COMMENT.match(first)
    return m.group("path") if m else None


def check_source(source: str, symbols: SymbolTable | None, filename: str = "<script>") -> list[Diagnostic]:
    """Parse and check ``source``; a syntax error is returned as the only diagnostic."""
    from tapir.dsl.parser import parse

    try:
        module = parse(source, filename)
    except TapirSyntaxError as exc:
        span = exc.span or Span.point(1, 1)
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        return [Diagnostic(span, ERROR, exc.code, message)]
    return check(module, symbols)


def check(module: A.Module, symbols: SymbolTable | None) -> list[Diagnostic]:
    """Every diagnostic of ``module``, sorted by position. Without symbols, element checks are skipped."""
    checker = _Checker(symbols)
    old_limit = sys.getrecursionlimit()
    # as deep as the interpreter goes at its default budgets: what runs can be checked
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    try:
        checker.run(module)
    except RecursionError:
        # The parser reads nesting deeper than this recursive walk can follow (a 20,000-term sum):
        # a diagnostic, not a crash of `tapir check` or the LSP.
        at = checker.at or module.span
        checker.diagnostics.append(Diagnostic(Span.point(at.line, at.column), ERROR, "too-deep",
                                              "this statement nests too deeply to be checked"))
    finally:
        sys.setrecursionlimit(old_limit)
    seen: set[tuple[Span, str, str]] = set()
    out = []
    for d in sorted(checker.diagnostics, key=lambda d: (d.span, d.code)):
        key = (d.span, d.code, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


# ---------------------------------------------------------------------------------------------
# Abstract values


@dataclass(frozen=True)
class Ty:
    """What the checker knows of a value. ``tag`` is ``element``, ``item`` (an item of the list
    ``element``), a plain type name (``str``, ``int``, ``dict``...), ``function`` or ``unknown``."""

    tag: str
    element: str | None = None
    kind: Kind | None = None

    @property
    def is_element(self) -> bool:
        return self.tag in ("element", "item")

    def describe(self) -> str:
        if self.tag == "element":
            return f"${self.element}, {_a(self.kind.value if self.kind else 'element')}"
        if self.tag == "item":
            return f"an item of ${self.element}"
        return _a(self.tag)


UNKNOWN = Ty("unknown")
_RETURNS = {"None": "none", "str": "str", "bool": "bool", "dict": "dict", "int": "int"}
_BUILTIN_RESULTS = {"len": "int", "str": "str", "int": "int", "float": "float", "bool": "bool", "list": "list",
                    "dict": "dict", "sorted": "list", "range": "range", "any": "bool", "all": "bool",
                    "print": "none", "abs": "unknown", "round": "unknown"}
_CONSTANT_TYPES = {str: "str", int: "int", float: "float", bool: "bool", type(None): "none"}


def _merge(a: Ty | None, b: Ty | None) -> Ty | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    return UNKNOWN


@dataclass
class _State:
    """Flow facts at one point: names possibly assigned, and their known types."""

    maybe: set[str] = field(default_factory=set)
    types: dict[str, Ty] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(set(self.maybe), dict(self.types))

    def merge(self, other: _State) -> _State:
        names = set(self.types) | set(other.types)
        types = {n: _merge(self.types.get(n), other.types.get(n)) or UNKNOWN for n in names}
        return _State(self.maybe | other.maybe, types)


@dataclass
class _Scope:
    kind: str
    #: Every name bound anywhere in the scope (assignment, for target, def, parameter).
    bound: set[str]
    functions: dict[str, A.FunctionDef]
    parent: _Scope | None = None


def _target_names(target: A.Node) -> Iterator[str]:
    if isinstance(target, A.Name):
        yield target.id
    elif isinstance(target, A.TupleExpr | A.ListExpr):
        for elt in target.elts:
            yield from _target_names(elt)


def _bound_in(body: Iterable[A.Stmt]) -> tuple[set[str], dict[str, A.FunctionDef]]:
    """Names a block binds (not looking into nested function bodies)."""
    names: set[str] = set()
    functions: dict[str, A.FunctionDef] = {}
    for stmt in body:
        if isinstance(stmt, A.Assign):
            for t in stmt.targets:
                names.update(_target_names(t))
        elif isinstance(stmt, A.AugAssign):
            names.update(_target_names(stmt.target))
        elif isinstance(stmt, A.For):
            names.update(_target_names(stmt.target))
            n, f = _bound_in(stmt.body)
            names |= n
            functions.update(f)
        elif isinstance(stmt, A.While):
            n, f = _bound_in(stmt.body)
            names |= n
            functions.update(f)
        elif isinstance(stmt, A.If):
            for block in (stmt.body, stmt.orelse):
                n, f = _bound_in(block)
                names |= n
                functions.update(f)
        elif isinstance(stmt, A.FunctionDef):
            names.add(stmt.name)
            functions[stmt.name] = stmt
    return names, functions


# ---------------------------------------------------------------------------------------------
# The checker


class _Checker:
    def __init__(self, symbols: SymbolTable | None) -> None:
        self.symbols = symbols
        self.diagnostics: list[Diagnostic] = []
        self.quiet = 0  # > 0 while a loop body is pre-analysed for its exit state
        self.scope = _Scope("module", set(), {})
        #: The statement being checked, for a diagnostic when nesting overflows the stack.
        self.at: Span | None = None

    # -- reporting ------------------------------------------------------------------------------

    def report(self, span: Span, code: str, message: str, suggestions: Iterable[str] = (),
               severity: str = ERROR) -> None:
        if not self.quiet:
            self.diagnostics.append(Diagnostic(span, severity, code, message, tuple(suggestions)))

    # -- scopes and statements ------------------------------------------------------------------

    def run(self, module: A.Module) -> None:
        bound, functions = _bound_in(module.body)
        self.scope = _Scope("module", bound, functions)
        state = _State()
        self.block(module.body, state)
        # Function bodies run when called, by which time any module name may be bound: check them
        # after the module, each in its own scope.
        self.check_functions(functions.values(), self.scope)

    def check_functions(self, defs: Iterable[A.FunctionDef], parent: _Scope) -> None:
        for fn in defs:
            bound, functions = _bound_in(fn.body)
            params = {p.name for p in fn.params}
            outer = self.scope
            self.scope = _Scope("function", bound | params, functions, parent)
            state = _State(maybe=set(params))
            self.block(fn.body, state)
            self.check_functions(functions.values(), self.scope)
            self.scope = outer

    def block(self, body: Iterable[A.Stmt], state: _State) -> _State:
        for stmt in body:
            self.at = stmt.span
            state = self.stmt(stmt, state)
        return state

    def stmt(self, s: A.Stmt, state: _State) -> _State:
        if isinstance(s, A.ExprStmt):
            self.expr(s.value, state)
        elif isinstance(s, A.Assign):
            ty = self.expr(s.value, state)
            for t in s.targets:
                self.bind(t, ty, state)
        elif isinstance(s, A.AugAssign):
            self.expr(s.target, state)
            self.expr(s.value, state)
            self.bind(s.target, UNKNOWN, state)
        elif isinstance(s, A.If):
            self.expr(s.test, state)
            a = self.block(s.body, state.copy())
            b = self.block(s.orelse, state.copy())
            return a.merge(b)
        elif isinstance(s, A.While):
            self.expr(s.test, state)
            return self.loop(s.body, state, None)
        elif isinstance(s, A.For):
            ty = self.expr(s.iter, state)
            item = self.iteration(s.iter, ty)
            return self.loop(s.body, state, (s.target, item))
        elif isinstance(s, A.FunctionDef):
            for p in s.params:
                if p.default is not None:
                    self.expr(p.default, state)
            state.maybe.add(s.name)
            state.types[s.name] = Ty("function", s.name)
        elif isinstance(s, A.Return):
            if s.value is not None:
                self.expr(s.value, state)
        elif isinstance(s, A.Assert):
            self.expr(s.test, state)
            if s.msg is not None:
                self.expr(s.msg, state)
        return state

    def loop(self, body: tuple[A.Stmt, ...], state: _State, target: tuple[A.Target, Ty] | None) -> _State:
        """A loop body may run after earlier rounds: analyse it once quietly for the state a round
        leaves, then for real from the merge of the entry state and that one."""
        def enter(st: _State) -> _State:
            st = st.copy()
            if target is not None:
                self.bind(target[0], target[1], st)
            return st

        self.quiet += 1
        after_one = self.block(body, enter(state))
        self.quiet -= 1
        entry = state.merge(after_one)
        after = self.block(body, enter(entry))
        return state.merge(after)

    def bind(self, target: A.Node, ty: Ty, state: _State) -> None:
        if isinstance(target, A.Name):
            state.maybe.add(target.id)
            state.types[target.id] = ty
        elif isinstance(target, A.TupleExpr | A.ListExpr):
            for elt in target.elts:
                self.bind(elt, UNKNOWN, state)
        elif isinstance(target, A.Subscript):
            self.expr(target.value, state)
            self.expr(target.index, state)
        else:
            self.expr(target, state)

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, e: A.Node, state: _State) -> Ty:
        if isinstance(e, A.Constant):
            return Ty(_CONSTANT_TYPES.get(type(e.value), "unknown"))
        if isinstance(e, A.Name):
            return self.name(e, state)
        if isinstance(e, A.ElementRef):
            return self.element_ref(e)
        if isinstance(e, A.Call):
            return self.call(e, state)
        if isinstance(e, A.Subscript):
            return self.subscript(e, state)
        if isinstance(e, A.Attribute):
            # Attributes are only legal as callees; the parser/interpreter says so. Check inside.
            self.expr(e.value, state)
            return UNKNOWN
        if isinstance(e, A.FString):
            for part in e.parts:
                self.expr(part, state)
            return Ty("str")
        if isinstance(e, A.FormattedValue):
            self.expr(e.value, state)
            return Ty("str")
        if isinstance(e, A.ListComp):
            return self.listcomp(e, state)
        if isinstance(e, A.ListExpr | A.TupleExpr):
            for x in e.elts:
                self.expr(x, state)
            return Ty("list" if isinstance(e, A.ListExpr) else "tuple")
        if isinstance(e, A.DictExpr):
            for x in (*e.keys, *e.values):
                self.expr(x, state)
            return Ty("dict")
        if isinstance(e, A.Compare):
            self.expr(e.left, state)
            for x in e.comparators:
                self.expr(x, state)
            return Ty("bool")
        if isinstance(e, A.BoolOp):
            for x in e.values:
                self.expr(x, state)
            return UNKNOWN
        if isinstance(e, A.UnaryOp):
            inner = self.expr(e.operand, state)
            return Ty("bool") if e.op == "not" else (inner if inner.tag in ("int", "float") else UNKNOWN)
        if isinstance(e, A.BinOp):
            left = self.expr(e.left, state)
            right = self.expr(e.right, state)
            if left.tag == right.tag == "str" and e.op == "+":
                return Ty("str")
            if left.tag == right.tag == "int" and e.op in ("+", "-", "*", "//", "%"):
                return Ty("int")
            return UNKNOWN
        if isinstance(e, A.IfExp):
            self.expr(e.test, state)
            return _merge(self.expr(e.body, state), self.expr(e.orelse, state)) or UNKNOWN
        if isinstance(e, A.Slice):
            for bound_expr in (e.lower, e.upper, e.step):
                if bound_expr is not None:
                    self.expr(bound_expr, state)
            return UNKNOWN
        for child in e.children():
            self.expr(child, state)
        return UNKNOWN

    def listcomp(self, e: A.ListComp, state: _State) -> Ty:
        inner = state.copy()
        for gen in e.generators:
            ty = self.expr(gen.iter, inner)
            self.bind(gen.target, self.iteration(gen.iter, ty), inner)
            for cond in gen.conds:
                self.expr(cond, inner)
        self.expr(e.elt, inner)
        return Ty("list")

    def known_names(self) -> set[str]:
        names = set(BUILTINS) | set(GLOBALS) | set(LEGACY_GLOBALS)
        scope: _Scope | None = self.scope
        while scope is not None:
            names |= scope.bound
            scope = scope.parent
        return names

    def name(self, e: A.Name, state: _State) -> Ty:
        if e.id in state.maybe:
            return state.types.get(e.id, UNKNOWN)
        if e.id in self.scope.bound:
            self.report(e.span, "use-before-assignment", f"'{e.id}' is used before it is assigned")
            return UNKNOWN
        scope = self.scope.parent
        while scope is not None:
            if e.id in scope.bound:
                fn = scope.functions.get(e.id)
                return Ty("function", e.id) if fn is not None else UNKNOWN
            scope = scope.parent
        if e.id in BUILTINS or e.id in GLOBALS or e.id in LEGACY_GLOBALS:
            return Ty("builtin", e.id)
        close = _close(e.id, self.known_names())
        hint = f"; did you mean '{close[0]}'?" if close else ""
        self.report(e.span, "unknown-name", f"unknown name '{e.id}'{hint}", close)
        return UNKNOWN

    def element_ref(self, e: A.ElementRef) -> Ty:
        if self.symbols is None:
            return Ty("element", e.name)
        sym = self.symbols.element(e.name)
        if sym is None:
            suggestions = self.symbols.suggest(e.name)
            hint = f"; did you mean ${suggestions[0]}?" if suggestions else ""
            self.report(e.span, "unknown-element", f"${e.name} is not an element of the app document{hint}",
                        [f"${s}" for s in suggestions])
            return UNKNOWN
        return Ty("element", e.name, sym.kind)

    # -- element semantics ----------------------------------------------------------------------

    def kind_of(self, ty: Ty) -> Kind | None:
        """The kind that decides what ``ty`` accepts (an item's is its list's ``item_kind``)."""
        if self.symbols is None or ty.element is None:
            return None
        if ty.tag == "element":
            return ty.kind
        if ty.tag == "item":
            sym = self.symbols.element(ty.element)
            return (sym.item_kind or Kind.OTHER) if sym is not None else None
        return None

    def is_list(self, ty: Ty) -> bool | None:
        kind = self.kind_of(ty)
        return None if kind is None else kind in LIST_KINDS

    def iteration(self, node: A.Node, ty: Ty) -> Ty:
        """The type of one item when iterating ``ty``; reports iterating a non-list element."""
        if not ty.is_element:
            return UNKNOWN
        listed = self.is_list(ty)
        if listed is False:
            self.report(node.span, "not-a-list", f"cannot iterate {ty.describe()}: only lists have items")
            return UNKNOWN
        return Ty("item", ty.element) if ty.tag == "element" and listed else UNKNOWN

    def subscript(self, e: A.Subscript, state: _State) -> Ty:
        ty = self.expr(e.value, state)
        index = self.expr(e.index, state)
        if not ty.is_element:
            return UNKNOWN
        listed = self.is_list(ty)
        if listed is False:
            self.report(e.span, "not-a-list", f"cannot index {ty.describe()}: only lists have items")
            return UNKNOWN
        if index.tag not in ("int", "unknown", "bool"):
            self.report(e.index.span, "arg-type", f"a list is indexed by an int, not by {index.describe()}")
        return Ty("item", ty.element) if ty.tag == "element" and listed else UNKNOWN

    def call(self, e: A.Call, state: _State) -> Ty:
        args = [self.expr(a, state) for a in e.args]
        kw = {k.name: self.expr(k.value, state) for k in e.keywords}
        func = e.func
        if isinstance(func, A.Attribute):
            receiver = self.expr(func.value, state)
            return self.method_call(e, func, receiver, args, kw)
        if isinstance(func, A.Name):
            if func.id in state.maybe or func.id in self.scope.bound or self._bound_outside(func.id):
                callee = self.name(func, state)
                if callee.tag == "function" and callee.element is not None:
                    self.script_call(e, callee.element, len(args), kw)
                return UNKNOWN
            if func.id in GLOBALS:
                self.api_call(e, GLOBALS[func.id], args, kw, func.id + "()")
                return Ty(_RETURNS.get(GLOBALS[func.id].returns, "unknown"))
            if func.id in LEGACY_GLOBALS:
                entry = LEGACY_GLOBALS[func.id]
                if not args:
                    self.report(e.span, "arg-count", f"{func.id}() needs the element to act on as its first argument")
                    return UNKNOWN
                if not args[0].is_element:
                    if args[0].tag != "unknown":
                        self.report(e.args[0].span, "arg-type",
                                    f"{func.id}() acts on an element, not on {args[0].describe()}")
                    return UNKNOWN
                self.element_call(e, e.args[0].span, func.id, entry, args[0], args[1:], kw, e.args[1:])
                return Ty(_RETURNS.get(entry.returns, "unknown"))
            if func.id in BUILTINS:
                return self.builtin_call(e, func.id, args)
            close = _close(func.id, self.known_names())
            hint = f"; did you mean {close[0]}()?" if close else ""
            self.report(func.span, "unknown-function", f"unknown function '{func.id}'{hint}", close)
            return UNKNOWN
        self.expr(func, state)
        return UNKNOWN

    def _bound_outside(self, name: str) -> bool:
        scope = self.scope.parent
        while scope is not None:
            if name in scope.bound:
                return True
            scope = scope.parent
        return False

    def builtin_call(self, e: A.Call, name: str, args: list[Ty]) -> Ty:
        if name == "len" and len(args) == 1 and args[0].is_element and self.is_list(args[0]) is False:
            self.report(e.args[0].span, "not-a-list", f"len() of {args[0].describe()}: only lists have items")
        return Ty(_BUILTIN_RESULTS.get(name, "unknown"))

    def script_call(self, e: A.Call, name: str, nargs: int, kw: dict[str, Ty]) -> None:
        fn = self._function(name)
        if fn is None:
            return
        params = [p.name for p in fn.params]
        required = [p.name for p in fn.params if p.default is None]
        for k in kw:
            if k not in params:
                self.report(e.span, "arg-count", f"{name}() has no parameter '{k}'", _close(k, params))
        given = nargs + sum(1 for k in kw if k in params)
        missing = [p for p in required[nargs:] if p not in kw]
        if nargs > len(params):
            self.report(e.span, "arg-count", f"{name}() takes {_count(len(params), 'argument')}, {given} given")
        elif missing:
            self.report(e.span, "arg-count", f"{name}() is missing {', '.join(repr(m) for m in missing)}")

    def _function(self, name: str) -> A.FunctionDef | None:
        scope: _Scope | None = self.scope
        while scope is not None:
            if name in scope.functions:
                return scope.functions[name]
            if name in scope.bound:
                return None
            scope = scope.parent
        return None

    def method_call(self, e: A.Call, func: A.Attribute, receiver: Ty, args: list[Ty], kw: dict[str, Ty]) -> Ty:
        span = func.attr_span or func.span
        if receiver.is_element:
            entry = ELEMENT_METHODS.get(func.attr)
            if entry is None:
                close = _close(func.attr, ELEMENT_METHODS)
                hint = f"; did you mean {close[0]}()?" if close else ""
                self.report(span, "unknown-method", f"elements have no method '{func.attr}'{hint}", close)
                return UNKNOWN
            self.element_call(e, span, func.attr, entry, receiver, args, kw, e.args)
            if func.attr == "match" and receiver.tag == "element" and self.is_list(receiver) is not False:
                return Ty("item", receiver.element)
            return Ty(_RETURNS.get(entry.returns, "unknown"))
        if receiver.tag in ("str", "list", "dict", "tuple"):
            from tapir.dsl.methods import METHODS

            table = METHODS[{"str": str, "list": list, "dict": dict, "tuple": tuple}[receiver.tag]]
            if func.attr not in table:
                self.report(span, "unknown-method", f"a {receiver.tag} has no method '{func.attr}' in Tapir scripts",
                            _close(func.attr, table))
            return Ty("str") if receiver.tag == "str" and func.attr in ("lower", "upper", "strip") else UNKNOWN
        return UNKNOWN

    def element_call(self, e: A.Call, span: Span, name: str, entry: ApiEntry, receiver: Ty, args: list[Ty],
                     kw: dict[str, Ty], arg_nodes: tuple[A.Expr, ...]) -> None:
        kind = self.kind_of(receiver)
        if kind is not None and kind not in entry.kinds:
            allowed = " or ".join(sorted(k.value for k in entry.kinds))
            what = receiver.describe() if receiver.tag == "element" else f"{receiver.describe()} ({_a(kind.value)})"
            code = "not-a-list" if entry.kinds <= LIST_KINDS else "illegal-action"
            self.report(span, code, f"{name}() is not possible on {what}; only on {allowed} elements")
        self.api_call(e, entry, args, kw, f"{name}()", arg_nodes, receiver)

    def api_call(self, e: A.Call, entry: ApiEntry, args: list[Ty], kw: dict[str, Ty], shown: str,
                 arg_nodes: tuple[A.Expr, ...] | None = None, receiver: Ty | None = None) -> None:
        nodes = arg_nodes if arg_nodes is not None else e.args
        names = [p.name for p in entry.params]
        for k in kw:
            if k not in names:
                self.report(e.span, "arg-count", f"{shown} has no parameter '{k}'", _close(k, names))
        given = len(args) + len(kw)
        if not entry.min_args <= given <= entry.max_args:
            self.report(e.span, "arg-count", f"{shown} takes {_range(entry)}, {given} given "
                                              f"({entry.signature('$element' if receiver else None)})")
            return
        bound: list[tuple[Param, Ty, A.Node]] = [(p, t, n) for p, t, n in zip(entry.params, args, nodes, strict=False)]
        by_name = {k.name: k for k in e.keywords}
        for p in entry.params[len(args):]:
            if p.name in kw:
                bound.append((p, kw[p.name], by_name[p.name].value))
        for param, ty, node in bound:
            self.argument(param, ty, node, shown, receiver)

    def argument(self, param: Param, ty: Ty, node: A.Node, shown: str, receiver: Ty | None) -> None:
        wanted = {t.strip() for t in param.type.split("|")}
        if ty.tag == "unknown" or (ty.tag == "function" and "element" not in wanted):
            return
        if "element" in wanted:
            if not ty.is_element:
                self.report(node.span, "arg-type", f"{shown}: '{param.name}' must be an element, not {ty.describe()}")
            elif receiver is not None:
                self.child(node, ty, receiver, shown)
            return
        plain = {"str": {"str"}, "dict": {"dict"}, "int": {"int", "bool"}, "bool": {"bool"}}
        accepted = set().union(*(plain.get(w, {w}) for w in wanted))
        if ty.tag not in accepted:
            self.report(node.span, "arg-type", f"{shown}: '{param.name}' must be {param.type}, not {ty.describe()}")
            return
        if param.choices and isinstance(node, A.Constant) and isinstance(node.value, str):
            if node.value not in param.choices:
                self.report(node.span, "arg-type", f"{shown}: {node.value!r} is not one of "
                                                   f"{', '.join(repr(c) for c in param.choices)}",
                            [repr(c) for c in _close(node.value, param.choices)])

    def child(self, node: A.Node, child: Ty, receiver: Ty, shown: str) -> None:
        """A child element must belong to the list the receiver is (an item of)."""
        if self.symbols is None or child.tag != "element" or child.element is None or receiver.element is None:
            return
        sym = self.symbols.element(child.element)
        if sym is None:
            return
        owner = receiver.element if receiver.tag == "item" or self.is_list(receiver) else None
        if sym.item_of is not None:
            if owner is not None and owner != sym.item_of:
                self.report(node.span, "wrong-child",
                            f"{shown}: ${sym.name} is a child element of ${sym.item_of}, not of ${owner}")
            elif owner is None:
                self.report(node.span, "wrong-child",
                            f"{shown}: ${sym.name} is a child element of ${sym.item_of}; use it on an item "
                            f"of that list, not on {receiver.describe()}")
        elif owner is not None and self.symbols.children_of(owner):
            children = ", ".join(f"${c.name}" for c in self.symbols.children_of(owner))
            self.report(node.span, "wrong-child",
                        f"{shown}: ${sym.name} is not a child element of ${owner} (its children: {children})")


def _close(word: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    from rapidfuzz import fuzz, process

    pool = [c for c in choices if c != word]
    return [m for m, _, _ in process.extract(word, pool, scorer=fuzz.WRatio, limit=limit, score_cutoff=75)]


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _range(entry: ApiEntry) -> str:
    if entry.min_args == entry.max_args:
        return _count(entry.max_args, "argument")
    if entry.min_args == 0:
        return f"at most {_count(entry.max_args, 'argument')}"
    return f"{entry.min_args} to {entry.max_args} arguments"


__all__ = ["Diagnostic", "check", "check_source", "doc_comment", "ERROR", "WARNING"]
