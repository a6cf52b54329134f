"""The flow-sensitive walk of the analysis: statements in order, with what is known at each point.

``FlowChecker`` visits statements (``visit(stmt, state) -> state``) and expressions
(``visit(expr, state) -> Ty``), records into an ``Analysis`` the bindings with their definition
spans, every reference, the type of every expression and the element of every ``$ref``, and
reports the checker's diagnostics (``tapir.dsl.checker`` lists them). A loop body is walked twice,
once quietly for the state an earlier round leaves; function bodies after the module, when any
module name may be bound. ``tapir.dsl.analysis.analyze`` runs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tapir.core.diagnostics import ERROR, WARNING, Diagnostic, Fix
from tapir.core.positions import Span
from tapir.dsl import ast as A
from tapir.dsl import operand_types
from tapir.dsl.bindings import UNKNOWN, Binding, Reference, Scope, Ty, merge_types, name_span
from tapir.dsl.registry import REGISTRY, Entry, Namespace, ParamKind
from tapir.dsl.types import LIST_KINDS, Kind, accepts, describe, type_of_constant
from tapir.dsl.visitor import NodeVisitor
from tapir.dsl.vocabulary import foreign

if TYPE_CHECKING:
    from tapir.dsl.analysis import Analysis

__all__ = ["FlowChecker", "State"]

_VALUE_NAMESPACES = {"str": Namespace.STR, "list": Namespace.LIST, "tuple": Namespace.TUPLE, "dict": Namespace.DICT}


@dataclass
class State:
    """Flow facts at one point: names possibly assigned, and their known types."""

    maybe: set[str] = field(default_factory=set)
    types: dict[str, Ty] = field(default_factory=dict)

    def copy(self) -> State:
        return State(set(self.maybe), dict(self.types))

    def merge(self, other: State) -> State:
        # Only the names whose types differ need merging; finding them is one set operation
        # (states are mostly copies of each other, and a script may have hundreds of names).
        types = dict(self.types)
        for name in {n for n, _ in self.types.items() ^ other.types.items()}:
            types[name] = merge_types(self.types.get(name), other.types.get(name)) or UNKNOWN
        return State(self.maybe | other.maybe, types)


class FlowChecker(NodeVisitor[Any]):
    """The flow-sensitive walk: ``visit(stmt, state) -> state``, ``visit(expr, state) -> Ty``."""

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis
        self.symbols = analysis.symbols
        self.diagnostics: list[Diagnostic] = []
        self.quiet = 0  # > 0 while a loop body is pre-analysed for its exit state
        self.scope = analysis.module_scope
        #: The statement being checked, for a diagnostic when nesting overflows the stack.
        self.at: Span | None = None

    # -- reporting and recording ---------------------------------------------------------------------

    def report(self, span: Span, code: str, message: str, suggestions: Iterable[str] = (),
               severity: str = ERROR, hint: str | None = None) -> None:
        if not self.quiet:
            fixes = tuple(Fix.replace(span, s) for s in suggestions)
            self.diagnostics.append(Diagnostic(code, severity, span, message, hint, fixes))

    def typed(self, node: A.Node, ty: Ty) -> Ty:
        self.a._types[id(node)] = ty
        return ty

    def define(self, name: str, kind: str, span: Span, node: A.Node, ty: Ty = UNKNOWN) -> None:
        if self.quiet:
            return
        b = Binding(name, kind, span, self.scope, node, ty)
        self.scope.bindings.setdefault(name, []).append(b)
        self.a.bindings.append(b)

    def device_use(self, span: Span) -> None:
        if not self.a.needs_device:
            self.a.needs_device = True
            self.a.first_device_use = span

    # -- scopes and statements ------------------------------------------------------------------------

    def run(self, module: A.Module) -> None:
        self.block(module.body, State())
        # Function bodies run when called, by which time any module name may be bound: check them
        # after the module, each in its own scope.
        self.functions(self.scope)

    def functions(self, scope: Scope) -> None:
        for fn in list(scope.functions.values()):
            inner = self.a.scope_of(fn)
            if inner is None:
                continue
            outer = self.scope
            self.scope = inner
            state = State(maybe={p.name for p in fn.params})
            for p in fn.params:
                self.define(p.name, "parameter", name_span(p), p)
            self.block(fn.body, state)
            self.functions(inner)
            self.scope = outer

    def block(self, body: Iterable[A.Stmt], state: State) -> State:
        ended: A.Stmt | None = None
        for stmt in body:
            self.at = stmt.span
            if ended is not None:
                word = type(ended).__name__.lower()
                self.report(stmt.span, "unreachable", f"this statement is never run: it follows '{word}'",
                            severity=WARNING)
                ended = None
            after = self.visit(stmt, state)
            if isinstance(after, State):  # (a Refused statement leaves the state as it was)
                state = after
            if isinstance(stmt, A.Return | A.Break | A.Continue):
                ended = stmt
        return state

    def generic_visit(self, node: Any, context: Any = None) -> Any:
        state = context if isinstance(context, State) else State()
        for child in node.children() if isinstance(node, A.Node) else ():
            self.visit(child, state)
        return UNKNOWN

    def visit_ExprStmt(self, s: A.ExprStmt, state: State) -> State:
        self.visit(s.value, state)
        return state

    def visit_Assign(self, s: A.Assign, state: State) -> State:
        ty = self.visit(s.value, state)
        for t in s.targets:
            self.bind(t, ty, state, s, "variable")
        return state

    def visit_AugAssign(self, s: A.AugAssign, state: State) -> State:
        target = self.visit(s.target, state)
        value = self.visit(s.value, state)
        if operand_types.binop(s.op, target.tag, value.tag) is None:
            self.report(s.span, "operand-type", f"unsupported operand types for {s.op}=: {target.describe()} "
                                                f"and {value.describe()}")
        self.bind(s.target, UNKNOWN, state, s, "variable")
        return state

    def visit_If(self, s: A.If, state: State) -> State:
        self.visit(s.test, state)
        a = self.block(s.body, state.copy())
        b = self.block(s.orelse, state.copy())
        return a.merge(b)

    def visit_While(self, s: A.While, state: State) -> State:
        self.visit(s.test, state)
        return self.loop(s, s.body, state, None)

    def visit_For(self, s: A.For, state: State) -> State:
        ty = self.visit(s.iter, state)
        item = self.iteration(s.iter, ty)
        return self.loop(s, s.body, state, (s.target, item))

    def visit_FunctionDef(self, s: A.FunctionDef, state: State) -> State:
        for p in s.params:
            if p.default is not None:
                self.visit(p.default, state)
        state.maybe.add(s.name)
        state.types[s.name] = Ty("function", s.name)
        self.shadowing(s.name, s.name_span or s.span)
        self.define(s.name, "function", s.name_span or s.span, s, Ty("function", s.name))
        return state

    def visit_Return(self, s: A.Return, state: State) -> State:
        if s.value is not None:
            self.visit(s.value, state)
        return state

    def visit_Assert(self, s: A.Assert, state: State) -> State:
        self.visit(s.test, state)
        if s.msg is not None:
            self.visit(s.msg, state)
        return state

    def visit_ErrorStmt(self, s: A.ErrorStmt, state: State) -> State:
        for name in s.names:  # may be bound there: uses later are not reported again
            state.maybe.add(name)
            state.types[name] = UNKNOWN
            self.define(name, "unreadable", s.span, s)
        return self.block(s.body, state)

    def visit_Refused(self, s: A.Refused, state: State) -> Any:
        # what a refused construct contains is still read (its names, its elements); as a
        # statement it leaves the state its statements leave, as an expression it is unknown
        for part in s.parts:
            after = self.visit(part, state)
            if isinstance(after, State):
                state = after
        return UNKNOWN

    def loop(self, node: A.Node, body: tuple[A.Stmt, ...], state: State,
             target: tuple[A.Target, Ty] | None) -> State:
        """A loop body may run after earlier rounds: analyse it once quietly for the state a round
        leaves, then for real from the merge of the entry state and that one. (Inside the quiet
        walk, nested loops are walked once: twice at every level would take 2^depth walks.)"""
        def enter(st: State) -> State:
            st = st.copy()
            if target is not None:
                self.bind(target[0], target[1], st, node, "loop")
            return st

        if self.quiet:
            return state.merge(self.block(body, enter(state)))
        self.quiet += 1
        after_one = self.block(body, enter(state))
        self.quiet -= 1
        entry = state.merge(after_one)
        after = self.block(body, enter(entry))
        return state.merge(after)

    def bind(self, target: A.Node, ty: Ty, state: State, node: A.Node, kind: str) -> None:
        if isinstance(target, A.Name):
            state.maybe.add(target.id)
            state.types[target.id] = ty
            self.typed(target, ty)
            self.shadowing(target.id, target.span)
            self.define(target.id, kind, target.span, node, ty)
        elif isinstance(target, A.TupleExpr | A.ListExpr):
            for elt in target.elts:
                self.bind(elt, UNKNOWN, state, node, kind)
        elif isinstance(target, A.Subscript):
            self.visit(target.value, state)
            self.visit(target.index, state)
        else:
            self.visit(target, state)

    def shadowing(self, name: str, span: Span) -> None:
        if self.scope.kind == "module" and (REGISTRY.script_value(name) is not None):
            self.report(span, "shadows-builtin", f"'{name}' is a built-in function of the language; "
                        "assigning it hides the built-in for the rest of the script", severity=WARNING)

    # -- expressions ----------------------------------------------------------------------------------

    def visit_Constant(self, e: A.Constant, state: State) -> Ty:
        return self.typed(e, Ty(type_of_constant(e.value)))

    def visit_Name(self, e: A.Name, state: State) -> Ty:
        return self.typed(e, self.name(e, state))

    def visit_ElementRef(self, e: A.ElementRef, state: State) -> Ty:
        return self.typed(e, self.element_ref(e))

    def visit_Call(self, e: A.Call, state: State) -> Ty:
        return self.typed(e, self.call(e, state))

    def visit_Subscript(self, e: A.Subscript, state: State) -> Ty:
        return self.typed(e, self.subscript(e, state))

    def visit_Attribute(self, e: A.Attribute, state: State) -> Ty:
        # Attributes are only legal as callees; the interpreter says so. Check inside.
        self.visit(e.value, state)
        return UNKNOWN

    def visit_FString(self, e: A.FString, state: State) -> Ty:
        for part in e.parts:
            self.visit(part, state)
        return self.typed(e, Ty("str"))

    def visit_FormattedValue(self, e: A.FormattedValue, state: State) -> Ty:
        self.visit(e.value, state)
        return Ty("str")

    def visit_ListExpr(self, e: A.ListExpr, state: State) -> Ty:
        for x in e.elts:
            self.visit(x, state)
        return self.typed(e, Ty("list"))

    def visit_TupleExpr(self, e: A.TupleExpr, state: State) -> Ty:
        for x in e.elts:
            self.visit(x, state)
        return self.typed(e, Ty("tuple"))

    def visit_DictExpr(self, e: A.DictExpr, state: State) -> Ty:
        for x in (*e.keys, *e.values):
            self.visit(x, state)
        return self.typed(e, Ty("dict"))

    def visit_Compare(self, e: A.Compare, state: State) -> Ty:
        left = self.visit(e.left, state)
        for op, x in zip(e.ops, e.comparators, strict=False):
            right = self.visit(x, state)
            if op in ("<", "<=", ">", ">=") and not operand_types.ordering(left.tag, right.tag):
                self.report(e.span, "operand-type", f"'{op}' cannot compare {left.describe()} with {right.describe()}")
            left = right
        return self.typed(e, Ty("bool"))

    def visit_BoolOp(self, e: A.BoolOp, state: State) -> Ty:
        types = [self.visit(x, state) for x in e.values]
        merged: Ty | None = None
        for t in types:
            merged = merge_types(merged, t)
        return self.typed(e, merged or UNKNOWN)

    def visit_UnaryOp(self, e: A.UnaryOp, state: State) -> Ty:
        inner = self.visit(e.operand, state)
        result = operand_types.unary(e.op, inner.tag)
        if result is None:
            self.report(e.span, "operand-type", f"bad operand type for unary {e.op}: {inner.describe()}")
            return self.typed(e, UNKNOWN)
        return self.typed(e, UNKNOWN if result == operand_types.UNKNOWN_TAG else Ty(result))

    def visit_BinOp(self, e: A.BinOp, state: State) -> Ty:
        left = self.visit(e.left, state)
        right = self.visit(e.right, state)
        result = operand_types.binop(e.op, left.tag, right.tag)
        if result is None:  # the interpreter would refuse it: say so before the run
            self.report(e.span, "operand-type", f"unsupported operand types for {e.op}: {left.describe()} "
                                                f"and {right.describe()}")
            return self.typed(e, UNKNOWN)
        return self.typed(e, UNKNOWN if result == operand_types.UNKNOWN_TAG else Ty(result))

    def visit_IfExp(self, e: A.IfExp, state: State) -> Ty:
        self.visit(e.test, state)
        return self.typed(e, merge_types(self.visit(e.body, state), self.visit(e.orelse, state)) or UNKNOWN)

    def visit_Slice(self, e: A.Slice, state: State) -> Ty:
        for bound_expr in (e.lower, e.upper, e.step):
            if bound_expr is not None:
                bound = self.visit(bound_expr, state)
                if bound.tag not in ("int", "bool", "None", "unknown", "any"):
                    self.report(bound_expr.span, "arg-type",
                                f"slice indices must be integers or None, not {bound.describe()}")
        return UNKNOWN

    def visit_Keyword(self, e: A.Keyword, state: State) -> Ty:
        return self.visit(e.value, state)  # type: ignore[no-any-return]

    def visit_ListComp(self, e: A.ListComp, state: State) -> Ty:
        inner = state.copy()
        outer = self.scope
        scope = self.a.scope_of(e)
        for i, gen in enumerate(e.generators):
            if i == 1 and scope is not None:
                self.scope = scope
            ty = self.visit(gen.iter, inner)
            if i == 0 and scope is not None:
                self.scope = scope
            self.bind(gen.target, self.iteration(gen.iter, ty), inner, gen, "comprehension")
            for cond in gen.conds:
                self.visit(cond, inner)
        self.visit(e.elt, inner)
        self.scope = outer
        return self.typed(e, Ty("list"))

    def name(self, e: A.Name, state: State) -> Ty:
        owner = self.scope.owner(e.id)
        if not self.quiet:
            entry = None if owner is not None else (REGISTRY.builtin(e.id) or REGISTRY.global_function(e.id))
            self.a.references.append(Reference(e.id, e.span, e, self.scope, owner, entry))
        if e.id in state.maybe:
            return state.types.get(e.id, UNKNOWN)
        if owner is not None and owner is self.flow_scope():
            self.report(e.span, "use-before-assignment", f"'{e.id}' is used before it is assigned")
            return UNKNOWN
        if owner is not None:
            fn = owner.functions.get(e.id)
            return Ty("function", e.id) if fn is not None else UNKNOWN
        if REGISTRY.script_value(e.id) is not None:
            return Ty("builtin", e.id)
        close = _close(e.id, self.known_names())
        hint = f"; did you mean '{close[0]}'?" if close else ""
        self.report(e.span, "unknown-name", f"unknown name '{e.id}'{hint}", close)
        return UNKNOWN

    def flow_scope(self) -> Scope:
        """The scope whose statements the walk is in (a comprehension reads its enclosing one's
        flow facts)."""
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope

    def known_names(self) -> set[str]:
        names = set(REGISTRY.global_names())
        scope: Scope | None = self.scope
        while scope is not None:
            names |= scope.names
            scope = scope.parent
        return names

    def element_ref(self, e: A.ElementRef) -> Ty:
        self.device_use(e.span)
        if not self.quiet:
            self.a.element_refs.append(e)
        if self.symbols is None:
            return Ty("element", e.name)
        sym = self.symbols.element(e.name)
        self.a._elements[id(e)] = sym
        if sym is None:
            suggestions = self.symbols.suggest(e.name)
            hint = f"; did you mean ${suggestions[0]}?" if suggestions else ""
            self.report(e.span, "unknown-element", f"${e.name} is not an element of the app document{hint}",
                        [f"${s}" for s in suggestions])
            return UNKNOWN
        return Ty("element", e.name, sym.kind)

    # -- element semantics ----------------------------------------------------------------------------

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
        if ty.tag == "list" and ty.element is not None:  # a slice of an element list: its items
            return Ty("item", ty.element)
        if not ty.is_element:
            return UNKNOWN
        listed = self.is_list(ty)
        if listed is False:
            self.report(node.span, "not-a-list", f"cannot iterate {ty.describe()}: only lists have items")
            return UNKNOWN
        return Ty("item", ty.element) if ty.tag == "element" and listed else UNKNOWN

    def subscript(self, e: A.Subscript, state: State) -> Ty:
        ty = self.visit(e.value, state)
        index = self.visit(e.index, state)
        sliced = isinstance(e.index, A.Slice)
        if ty.tag == "list" and ty.element is not None:  # a slice of an element list holds its items
            return Ty("list", ty.element) if sliced else Ty("item", ty.element)
        if not ty.is_element:
            # a slice of a str, list or tuple is one of the same; of anything else, not known here
            return Ty(ty.tag) if sliced and ty.tag in ("str", "list", "tuple") else UNKNOWN
        listed = self.is_list(ty)
        if listed is False:
            what = "slice" if sliced else "index"
            self.report(e.span, "not-a-list", f"cannot {what} {ty.describe()}: only lists have items")
            return UNKNOWN
        if sliced:  # a slice of an element list is a plain list of its items (docs/language.md)
            return Ty("list", ty.element) if ty.tag == "element" and listed else UNKNOWN
        if index.tag not in ("int", "unknown", "bool", "any"):
            self.report(e.index.span, "arg-type", f"a list is indexed by an int, not by {index.describe()}")
        return Ty("item", ty.element) if ty.tag == "element" and listed else UNKNOWN

    def call(self, e: A.Call, state: State) -> Ty:
        args = [self.visit(a, state) for a in e.args]
        kw = {k.name: self.visit(k.value, state) for k in e.keywords}
        # a refused argument (a repeated keyword...) is reported already; counting would mislead
        counted = not any(isinstance(a, A.Refused) for a in e.args)
        func = e.func
        if isinstance(func, A.Attribute):
            receiver = self.visit(func.value, state)
            return self.method_call(e, func, receiver, args, kw, counted)
        if isinstance(func, A.Name):
            owner = self.scope.owner(func.id)
            if func.id in state.maybe or owner is not None:
                callee = self.visit(func, state)
                if callee.tag == "function" and callee.element is not None and counted:
                    self.script_call(e, callee.element, len(args), kw)
                return UNKNOWN
            if REGISTRY.script_value(func.id) is not None:
                self.typed(func, Ty("builtin", func.id))
            if not self.quiet and REGISTRY.script_value(func.id) is not None:
                self.a.references.append(Reference(func.id, func.span, func, self.scope, None,
                                                   REGISTRY.builtin(func.id) or REGISTRY.global_function(func.id)))
            entry = REGISTRY.get(Namespace.GLOBAL, func.id)
            if entry is not None and entry.name == "run_flow":
                self.a._calls[id(e)] = entry
                if counted and not self.quiet:
                    self.flow_call(e, args, kw)
                return self.result(entry, None)
            if entry is not None:
                self.a._calls[id(e)] = entry
                self.uses(entry, e.span)
                if counted:
                    self.api_call(e, entry, args, kw, func.id + "()")
                return self.result(entry, None)
            entry = REGISTRY.global_function(func.id)
            if entry is not None:  # an element method in the form name($element, ...)
                self.a._calls[id(e)] = entry
                self.uses(entry, e.span)
                if not args:
                    self.report(e.span, "arg-count", f"{func.id}() needs the element to act on as its first argument")
                    return UNKNOWN
                if not args[0].is_element:
                    if args[0].tag not in ("unknown", "any"):
                        self.report(e.args[0].span, "arg-type",
                                    f"{func.id}() acts on an element, not on {args[0].describe()}")
                    return UNKNOWN
                self.element_call(e, e.args[0].span, func.id, entry, args[0], args[1:], kw, e.args[1:], counted)
                return self.result(entry, args[0])
            entry = REGISTRY.builtin(func.id)
            if entry is not None:
                self.a._calls[id(e)] = entry
                return self.builtin_call(e, entry, args, kw, counted)
            word = foreign(func.id, Namespace.GLOBAL)
            if word is not None:  # Appium's or Maestro's word, not a typo: say what it is here
                self.report(func.span, "unknown-function", f"unknown function '{func.id}'; did you mean "
                            f"'{word.name}'?", [word.name], hint=f"'{func.id}' is a word of {word.origin}; "
                            f"in Tapir: {word.call}")
                return UNKNOWN
            close = _close(func.id, self.known_names())
            hint = f"; did you mean {close[0]}()?" if close else ""
            self.report(func.span, "unknown-function", f"unknown function '{func.id}'{hint}", close)
            return UNKNOWN
        self.visit(func, state)
        return UNKNOWN

    def flow_call(self, e: A.Call, args: list[Ty], kw: dict[str, Ty]) -> None:
        """``run_flow("login.tap", user=...)``: the flow checked against this document, the
        arguments against the parameters it reads (``tapir.dsl.flow_calls``)."""
        from tapir.dsl.flow_calls import check_flow

        if len(e.args) != 1:
            self.report(e.span, "arg-count", "run_flow() takes the flow's path, then its arguments by name "
                                             "(run_flow(\"login.tap\", user=\"ada\"))")
            return
        for k in e.keywords:
            ty = kw.get(k.name, UNKNOWN)
            if ty.tag not in ("str", "int", "float", "bool", "unknown", "any"):
                self.report(k.value.span, "arg-type", f"run_flow(): argument '{k.name}' must be text or a number "
                                                      f"(the flow reads it with param()), not {ty.describe()}")
        path = e.args[0]
        if not (isinstance(path, A.Constant) and isinstance(path.value, str)):
            if args[0].tag not in ("str", "unknown", "any"):
                self.report(path.span, "arg-type", f"run_flow(): 'path' must be a str, not {args[0].describe()}")
            return  # a computed path is resolved when the script runs
        for span_of, code, message, fixes in check_flow(self.a.path, path.value, sorted(kw), self.symbols):
            self.report(path.span if span_of == "path" else e.span, code, message, fixes)

    def uses(self, entry: Entry, span: Span) -> None:
        if entry.needs_device:
            self.device_use(span)

    def result(self, entry: Entry, receiver: Ty | None) -> Ty:
        """The type of a registry call's result (``item``: an item of the receiver list)."""
        returns = entry.returns
        if returns == "item":
            if receiver is not None and receiver.tag == "element" and self.is_list(receiver) is not False:
                return Ty("item", receiver.element)
            return UNKNOWN
        if returns in ("any", "element") or "|" in returns:
            return UNKNOWN
        return Ty(returns)

    def builtin_call(self, e: A.Call, entry: Entry, args: list[Ty], kw: dict[str, Ty], counted: bool) -> Ty:
        if entry.name == "len" and len(args) == 1 and args[0].is_element and self.is_list(args[0]) is False:
            self.report(e.args[0].span, "not-a-list", f"len() of {args[0].describe()}: only lists have items")
        if counted:
            self.count(e, entry, len(args), kw, f"{entry.name}()")
        return self.result(entry, None)

    def count(self, e: A.Call, entry: Entry, nargs: int, kw: dict[str, Ty], shown: str) -> bool:
        """Argument count and keyword names against a signature; True when they fit."""
        ok = True
        if not entry.any_keyword:
            for k in kw:
                if k not in entry.keywords:
                    self.report(e.span, "arg-count", f"{shown} has no parameter '{k}'", _close(k, entry.keywords))
                    ok = False
        top = entry.max_args
        if top is not None and nargs > top:
            self.report(e.span, "arg-count", f"{shown} takes {_range(entry)}, {nargs} given ({entry.signature()})")
            ok = False
        else:
            missing = _missing(entry, nargs, kw)
            if missing:
                self.report(e.span, "arg-count", f"{shown} is missing {', '.join(repr(m) for m in missing)} "
                                                  f"({entry.signature()})")
                ok = False
        return ok

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
        scope: Scope | None = self.scope
        while scope is not None:
            if name in scope.functions:
                return scope.functions[name]
            if name in scope.names:
                return None
            scope = scope.parent
        return None

    def method_call(self, e: A.Call, func: A.Attribute, receiver: Ty, args: list[Ty], kw: dict[str, Ty],
                    counted: bool) -> Ty:
        span = func.attr_span or func.span
        if receiver.is_element:
            entry = REGISTRY.element_method(func.attr)
            if entry is None:
                word = foreign(func.attr, Namespace.ELEMENT)
                if word is not None:  # Appium's or Maestro's word, not a typo: say what it is here
                    self.report(span, "unknown-method", f"elements have no method '{func.attr}'; did you mean "
                                f"'{word.name}'?", [word.name], hint=f"'{func.attr}' is a word of {word.origin}; "
                                f"in Tapir: $element.{word.call}")
                    return UNKNOWN
                close = _close(func.attr, REGISTRY.names(Namespace.ELEMENT))
                hint = f"; did you mean {close[0]}()?" if close else ""
                self.report(span, "unknown-method", f"elements have no method '{func.attr}'{hint}", close)
                return UNKNOWN
            self.a._calls[id(e)] = entry
            self.uses(entry, e.span)
            self.element_call(e, span, func.attr, entry, receiver, args, kw, e.args, counted)
            return self.result(entry, receiver)
        namespace = _VALUE_NAMESPACES.get(receiver.tag)
        if namespace is not None:
            entry = REGISTRY.value_method(namespace, func.attr)
            if entry is None:
                self.report(span, "unknown-method", f"a {receiver.tag} has no method '{func.attr}' in Tapir scripts",
                            _close(func.attr, REGISTRY.names(namespace)))
                return UNKNOWN
            self.a._calls[id(e)] = entry
            if counted:
                self.count(e, entry, len(args), kw, f"{func.attr}()")
            return self.result(entry, receiver)
        return UNKNOWN

    def element_call(self, e: A.Call, span: Span, name: str, entry: Entry, receiver: Ty, args: list[Ty],
                     kw: dict[str, Ty], arg_nodes: tuple[A.Expr, ...], counted: bool) -> None:
        kind = self.kind_of(receiver)
        if kind is not None and kind not in entry.kinds:
            allowed = " or ".join(sorted(k.value for k in entry.kinds))
            what = (receiver.describe() if receiver.tag == "element"
                    else f"{receiver.describe()} ({describe(kind.value)})")
            code = "not-a-list" if entry.kinds <= LIST_KINDS else "illegal-action"
            self.report(span, code, f"{name}() is not possible on {what}; only on {allowed} elements")
        if counted:
            self.api_call(e, entry, args, kw, f"{name}()", arg_nodes, receiver)

    def api_call(self, e: A.Call, entry: Entry, args: list[Ty], kw: dict[str, Ty], shown: str,
                 arg_nodes: tuple[A.Expr, ...] | None = None, receiver: Ty | None = None) -> None:
        nodes = arg_nodes if arg_nodes is not None else e.args
        names = [p.name for p in entry.params]
        for k in kw:
            if k not in names:
                self.report(e.span, "arg-count", f"{shown} has no parameter '{k}'", _close(k, names))
        given = len(args) + len(kw)
        top = entry.max_args if entry.max_args is not None else given
        if not entry.min_args <= given <= top:
            self.report(e.span, "arg-count", f"{shown} takes {_range(entry)}, {given} given "
                                              f"({entry.signature('$element' if receiver else None)})")
            return
        bound = [(p, t, n) for p, t, n in zip(entry.params, args, nodes, strict=False)]
        by_name = {k.name: k for k in e.keywords}
        for p in entry.params[len(args):]:
            if p.name in kw:
                bound.append((p, kw[p.name], by_name[p.name].value))
        for param, ty, node in bound:
            self.argument(param, ty, node, shown, receiver)

    def argument(self, param: Any, ty: Ty, node: A.Node, shown: str, receiver: Ty | None) -> None:
        wanted = {t.strip() for t in param.type.split("|")}
        if ty.tag in ("unknown", "any", "builtin") or (ty.tag == "function" and "element" not in wanted):
            return
        if "element" in wanted and (ty.is_element or not (wanted - {"element", "item"}) or not accepts(param.type,
                                                                                                   ty.tag)):
            if not ty.is_element:
                if ty.tag != "None" or param.default is None:
                    wants = "an element" if not (wanted - {"element", "item"}) else param.type
                    self.report(node.span, "arg-type", f"{shown}: '{param.name}' must be {wants}, not {ty.describe()}")
            elif receiver is not None:
                self.child(node, ty, receiver, shown)
            return
        if not accepts(param.type, ty.tag) and not (ty.tag == "None" and param.default is not None):
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
    """Names close to ``word`` for "did you mean": similar as a whole, not only in part (WRatio
    alone finds 'x' in 'set_text')."""
    from rapidfuzz import fuzz, process

    if len(word) < 3:
        return []
    pool = [c for c in choices if c != word]
    found = process.extract(word, pool, scorer=fuzz.WRatio, limit=limit * 3, score_cutoff=75)
    return [m for m, _, _ in found if fuzz.ratio(word, m) >= 60][:limit]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _range(entry: Entry) -> str:
    lo, hi = entry.min_args, entry.max_args
    if hi is None:
        return f"at least {_count(lo, 'argument')}"
    if lo == hi:
        return _count(hi, "argument")
    if lo == 0:
        return f"at most {_count(hi, 'argument')}"
    return f"{lo} to {hi} arguments"


def _missing(entry: Entry, nargs: int, kw: dict[str, Ty]) -> list[str]:
    """The required parameters a call with ``nargs`` positional arguments and keywords ``kw``
    leaves without a value."""
    positional = [p for p in entry.params if p.kind in (ParamKind.POSITIONAL, ParamKind.EITHER)]
    out = [p.name for p in positional[nargs:]
           if p.default is None and not (p.kind == ParamKind.EITHER and p.name in kw)]
    out += [p.name for p in entry.params if p.kind == ParamKind.KEYWORD and p.default is None and p.name not in kw]
    return out
