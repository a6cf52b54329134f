"""The one analysis of a script: scopes, bindings, references, types, elements and diagnostics.

    analysis = analyze(module, symbols)        # symbols: the app document's SymbolTable, or None
    analysis.diagnostics                       # what the checker reports (tapir.dsl.checker)
    analysis.type_of(node)                     # Ty('item', 'songs__list') ...
    analysis.element_of(ref)                   # the ElementSymbol a $ref names, or None
    analysis.references                        # every name read, with the bindings it can see
    analysis.scope_at(position).visible(position)   # the names a completion may offer

Two passes, each a ``NodeVisitor``:

* ``Binder`` (``tapir.dsl.bindings``, flow-insensitive) finds every scope (the module, each function, each list
  comprehension) and what each binds: assignment and loop targets, ``def`` names, parameters.
  It is the only place name binding is computed: the compiler reads it too (``scope_table``).
* ``FlowChecker`` (``tapir.dsl.flow``) walks the statements in order with what is known at each point (names that may
  be assigned, their types), records bindings with their definition spans, every reference and
  the type of every expression, and reports the diagnostics the checker lists
  (``tapir.dsl.checker``). A loop body is walked twice: once quietly for the state an earlier
  round leaves, then for real. Function bodies are walked after the module, when any module
  name may be bound.

Types are tracked as far as checks and completion need them: element kinds, list items (``for
song in $songs`` makes ``song`` an item of that list), the types of literals and of registry
results. What is not known is ``unknown`` and never reported, so valid scripts get no false alarms.
"""

from __future__ import annotations

import sys

from tapir.core.diagnostics import ERROR, Diagnostic
from tapir.core.positions import Position, Span
from tapir.dsl import ast as A
from tapir.dsl.bindings import UNKNOWN, Binder, Binding, Reference, Scope, Ty, local_scope, scope_table
from tapir.dsl.gcpause import paused_gc
from tapir.dsl.registry import Entry
from tapir.dsl.symbols import ElementSymbol, SymbolTable

__all__ = [
    "UNKNOWN", "Analysis", "Binder", "Binding", "Reference", "Scope", "Ty", "analyze", "local_scope", "scope_table",
]

#: The Python recursion limit while analysing: two frames a level (visit, visit_<Class>), as deep
#: as the interpreter runs at its default budgets.
_RECURSION_LIMIT = 12_000


class Analysis:
    """What ``analyze`` found (see the module docstring)."""

    def __init__(self, module: A.Module, symbols: SymbolTable | None, root: Scope, scopes: dict[int, Scope],
                 path: str | None = None) -> None:
        self.module = module
        self.symbols = symbols
        #: The script's file (flows it runs are found from its folder); None: the working folder.
        self.path = path
        self.module_scope = root
        self._scopes = scopes
        self.diagnostics: list[Diagnostic] = []
        self.bindings: list[Binding] = []
        self.references: list[Reference] = []
        self._types: dict[int, Ty] = {}
        self._elements: dict[int, ElementSymbol | None] = {}
        #: ``$refs`` in source order, with the element each names (None: not in the document).
        self.element_refs: list[A.ElementRef] = []
        #: Calls to registry entries, by ``id(call)``: (entry, how it was called).
        self._calls: dict[int, Entry] = {}
        #: Whether the script needs a device: it names an element or calls what needs one.
        self.needs_device = False
        #: Where it first does (for a diagnostic about a missing document).
        self.first_device_use: Span | None = None

    def type_of(self, node: A.Node) -> Ty:
        """What is known of the value of an expression (``UNKNOWN`` if nothing)."""
        return self._types.get(id(node), UNKNOWN)

    def element_of(self, ref: A.ElementRef) -> ElementSymbol | None:
        return self._elements.get(id(ref))

    def entry_of(self, call: A.Call) -> Entry | None:
        """The registry entry a call calls (a builtin, an API function, a method), if known."""
        return self._calls.get(id(call))

    def scope_of(self, node: A.Node) -> Scope | None:
        """The scope a module, function or list comprehension opens."""
        return self._scopes.get(id(node))

    @property
    def scopes(self) -> list[Scope]:
        return list(self.module_scope.walk())

    def scope_at(self, at: Position) -> Scope:
        """The innermost scope whose node spans ``at``."""
        best = self.module_scope
        for scope in self.module_scope.walk():
            if scope.kind != "module" and scope.span.contains(at):
                if best.kind == "module" or (scope.span.line, scope.span.column) >= (best.span.line, best.span.column):
                    best = scope
        return best

    def definitions_of(self, name: str, scope: Scope) -> tuple[Binding, ...]:
        owner = scope.owner(name)
        return tuple(owner.bindings.get(name, ())) if owner is not None else ()


def analyze(module: A.Module, symbols: SymbolTable | None = None, path: str | None = None) -> Analysis:
    """Analyse ``module``; without symbols, element checks are skipped. ``path``: the script's
    file, for the flows it runs (``run_flow``)."""
    binder = Binder()
    old_limit = sys.getrecursionlimit()
    # as deep as the interpreter goes at its default budgets: what runs can be analysed
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    try:
        try:
            root = binder.run(module)
        except RecursionError:
            root = Scope("module", module, None)
            binder.scopes = {id(module): root}
        analysis = Analysis(module, symbols, root, binder.scopes, path)
        from tapir.dsl.flow import FlowChecker  # (it fills this module's Analysis)

        flow = FlowChecker(analysis)
        try:
            with paused_gc():
                flow.run(module)
            from tapir.dsl.screen_calls import text_notes  # which element a tap_text('...') names

            flow.diagnostics.extend(text_notes(module, symbols))
        except RecursionError:
            # The parser reads nesting deeper than this recursive walk can follow (a 20,000-term
            # sum): a diagnostic, not a crash of `tapir check` or the language server.
            at = flow.at or module.span
            flow.diagnostics.append(Diagnostic("too-deep", ERROR, Span.point(at.line, at.column),
                                               "this statement nests too deeply to be checked"))
    finally:
        sys.setrecursionlimit(old_limit)
    seen: set[tuple[Span | None, str, str]] = set()
    for d in sorted(flow.diagnostics, key=lambda d: (d.span or module.span, d.code)):
        key = (d.span, d.code, d.message)
        if key not in seen:
            seen.add(key)
            analysis.diagnostics.append(d)
    return analysis
