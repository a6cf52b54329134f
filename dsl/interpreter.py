"""The sandboxed interpreter: compiles the AST to Python closures and runs them.

Sandboxed by construction:

* Only node types listed in the dispatch tables compile (default deny); node fields are checked
  too, so a hand-built AST cannot smuggle a host object in a ``Constant``.
* Scripts see only script values (``tapir.dsl.values``). Names resolve to the script's own
  variables, then the builtins of ``api.BUILTINS``, then the registry's globals; attribute access
  exists only as a method call through a per-type allow-list, and names starting with ``_`` are
  refused. There is no way to name a Python object.
* Every loop iteration, statement and expression is charged to the step budget; allocations, UI
  actions, call depth, printed output and wall-clock time have budgets too (``dsl.budget``).
* Python exceptions never leave: script mistakes become ``ScriptError`` with Python's message,
  anything unexpected an "internal error" ``ScriptError``; all carry the span.

Compilation turns each node into a closure once (``_Compiler``); running is calling closures,
which is several times faster than walking the tree with a visitor. Statement closures return
``None`` or a control signal (``_BREAK``/``_CONTINUE``/``_RETURN``) instead of raising.
"""

from __future__ import annotations

import difflib
import operator
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tapir.dsl import api
from tapir.dsl import ast as A
from tapir.dsl.budget import Budgets, Meter, budget_exceeded
from tapir.dsl.builtins import BUILTINS, materialize
from tapir.dsl.errors import (
    ActionError,
    AssertionFailed,
    DeviceError,
    SandboxViolation,
    ScriptError,
    Span,
    TapirError,
    UnknownElement,
)
from tapir.dsl.methods import lookup as lookup_method
from tapir.dsl.runtime_api import RuntimeFactory, UIRuntime
from tapir.dsl.safeops import (
    BINOPS,
    add,
    check_key,
    compare,
    contains,
    equal,
    format_value,
    mul,
    short_repr,
    to_str,
    unary,
)
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.values import (
    QUERY_SCALARS,
    ApiFunction,
    Builtin,
    Child,
    ElementHandle,
    Index,
    Match,
    ScriptFunction,
    type_name,
)

Output = Callable[[str], None]
Eval = Callable[["Frame"], Any]
Exec = Callable[["Frame"], Any]

_BREAK = "break"
_CONTINUE = "continue"
_RETURN = "return"
_MISSING: Any = object()
#: Python frames one script-level call may use (statement and expression closures in between).
_FRAMES_PER_CALL = 40
_MAX_RECURSION_LIMIT = 200_000

#: Python builtins a script might try; naming one gives a SandboxViolation, not "not defined".
_PY_BUILTINS = frozenset(
    "abs aiter all anext any ascii bin breakpoint bytearray bytes callable chr classmethod compile complex "
    "copyright credits delattr dir divmod eval exec exit filter format frozenset getattr globals hasattr "
    "hash help hex id input isinstance issubclass iter license locals map memoryview next object oct open "
    "ord pow property quit repr reversed set setattr slice staticmethod super type vars __import__ "
    "__build_class__ __builtins__ __loader__ __spec__ __name__ __doc__ __package__ __debug__".split()
)

_API_GLOBALS: dict[str, Any] = {
    **{name: ApiFunction(entry, legacy=True) for name, entry in api.LEGACY_GLOBALS.items()},
    **{name: ApiFunction(entry, legacy=False) for name, entry in api.GLOBALS.items()},
}


class Frame:
    """One scope's variables at run time, linked to the enclosing scope's frame."""

    __slots__ = ("vars", "parent", "ret")

    def __init__(self, vars: dict[str, Any], parent: Frame | None) -> None:
        self.vars = vars
        self.parent = parent
        self.ret: Any = None


@dataclass(frozen=True)
class RunResult:
    """What one run did. ``error`` is None when the script finished."""

    steps: int
    actions: int
    duration_s: float
    printed: tuple[str, ...]
    #: Final global variables of the script, each as a short repr.
    variables: dict[str, str] = field(default_factory=dict)
    error: TapirError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# ---------------------------------------------------------------------------------------------
# Errors


def _convert(exc: BaseException, span: Span | None) -> TapirError:
    """A Python exception raised while running a script, as the error the user sees."""
    if isinstance(exc, TapirError):
        if exc.span is None:
            exc.span = span
        return exc
    if isinstance(exc, RecursionError):
        return budget_exceeded("depth", sys.getrecursionlimit(), "the script nests too deeply", span)
    if isinstance(exc, MemoryError):
        return budget_exceeded("size", 0, "the host ran out of memory", span)
    if isinstance(exc, KeyError):
        return ScriptError(f"KeyError: {short_repr(exc.args[0]) if exc.args else ''}", span)
    if isinstance(exc, ZeroDivisionError | TypeError | ValueError | IndexError | OverflowError | RuntimeError):
        msg = str(exc).replace("ElementHandle", "element").replace("ScriptFunction", "function")
        return ScriptError(msg, span)
    return ScriptError(f"internal error: {type(exc).__name__}: {exc}", span,
                       hint="this is a bug in Tapir; run with --debug for details")


def _not_defined(name: str, span: Span) -> TapirError:
    if name.startswith("__") or name in _PY_BUILTINS:
        return SandboxViolation(
            f"'{name}' is not available in Tapir scripts", span,
            hint="builtins: " + ", ".join(api.BUILTINS),
        )
    close = difflib.get_close_matches(name, [*api.BUILTINS, *_API_GLOBALS], n=1)
    return ScriptError(f"name '{name}' is not defined", span, hint=f"did you mean '{close[0]}'?" if close else None)


# ---------------------------------------------------------------------------------------------
# Scopes (static): which names are local to which function or comprehension


class _Scope:
    __slots__ = ("kind", "names", "parent")

    def __init__(self, kind: str, names: set[str], parent: _Scope | None) -> None:
        self.kind = kind  # "module", "function" or "comprehension"
        self.names = names
        self.parent = parent

    def resolve(self, name: str) -> int | None:
        """How many frames up ``name`` lives, or None for a module global."""
        hops, s = 0, self
        while s is not None and s.kind != "module":
            if name in s.names:
                return hops
            hops += 1
            s = s.parent
        return None


def _target_names(t: A.Node, out: set[str]) -> None:
    if type(t) is A.Name:
        out.add(t.id)
    elif type(t) in (A.TupleExpr, A.ListExpr):
        for e in t.elts:  # type: ignore[attr-defined]
            _target_names(e, out)


def _assigned(stmts: tuple[A.Stmt, ...], out: set[str]) -> set[str]:
    """Names a function body binds (not descending into nested defs or comprehensions)."""
    for s in stmts:
        t = type(s)
        if t is A.Assign:
            for tg in s.targets:  # type: ignore[union-attr]
                _target_names(tg, out)
        elif t is A.AugAssign:
            _target_names(s.target, out)  # type: ignore[union-attr]
        elif t is A.For:
            _target_names(s.target, out)  # type: ignore[union-attr]
            _assigned(s.body, out)  # type: ignore[union-attr]
        elif t is A.While:
            _assigned(s.body, out)  # type: ignore[union-attr]
        elif t is A.If:
            _assigned(s.body, out)  # type: ignore[union-attr]
            _assigned(s.orelse, out)  # type: ignore[union-attr]
        elif t is A.FunctionDef:
            out.add(s.name)  # type: ignore[union-attr]
    return out


def _cost(node: A.Node) -> int:
    """Steps charged for evaluating ``node`` once: one per expression node, not counting the
    parts of a comprehension that run per item (those are charged per item)."""
    if type(node) is A.ListComp:
        return 1 + _cost(node.generators[0].iter)
    return 1 + sum(_cost(c) for c in node.children())


# ---------------------------------------------------------------------------------------------
# The interpreter


class Interpreter:
    """Runs modules against one set of globals (so a REPL can run one statement at a time).

    ``runtime_factory`` is called on the first UI call, never before; ``symbols`` (the app
    document's symbol table), when given, makes unknown ``$names`` fail before any device call
    and enables kind checks (``set_text`` only on inputs).
    """

    def __init__(
        self,
        runtime_factory: RuntimeFactory | None = None,
        budgets: Budgets | None = None,
        output: Output | None = None,
        *,
        symbols: SymbolTable | None = None,
        filename: str = "<script>",
        debug: bool = False,
    ) -> None:
        self.budgets = budgets or Budgets()
        self.meter = Meter(self.budgets)
        self.globals: dict[str, Any] = {}
        self.symbols = symbols
        self.filename = filename
        self.debug = debug
        self.printed: list[str] = []
        self._output = output
        self._partial = ""
        self._factory = runtime_factory
        self._runtime: UIRuntime | None = None
        self._source: str | None = None
        self.total_steps = 0
        self.total_actions = 0

    # -- running ------------------------------------------------------------------------------

    def execute(self, module: A.Module, source: str | None = None) -> Any:
        """Run ``module`` with fresh budgets; return the value of a final expression statement
        (for a REPL to echo), else None. Raises the ``TapirError`` that stopped it."""
        if type(module) is not A.Module:
            raise SandboxViolation(f"expected a Module to run, got {type(module).__name__}")
        self._source = source
        self.meter = self._fresh_meter()
        old_limit = sys.getrecursionlimit()
        wanted = min(_MAX_RECURSION_LIMIT, 3000 + self.budgets.max_depth * _FRAMES_PER_CALL)
        if wanted > old_limit:
            sys.setrecursionlimit(wanted)
        try:
            body, last = _Compiler(self).module(module)
            body(Frame(self.globals, None))
            return last[0] if last else None
        except TapirError as exc:
            exc.with_source(source, self.filename)
            raise
        except Exception as exc:  # compiling a malformed hand-built AST, or nesting too deep
            if self.debug and not isinstance(exc, RecursionError):
                raise
            raise _convert(exc, _span_of(module)).with_source(source, self.filename) from None
        finally:
            if wanted > old_limit:
                sys.setrecursionlimit(old_limit)
            self._flush()
            self.total_steps += self.meter.steps
            self.total_actions += self.meter.actions

    def _fresh_meter(self) -> Meter:
        # Compiled closures of earlier runs (functions a REPL defined) hold the meter object,
        # so it is reset in place rather than replaced.
        m = self.meter
        m.__init__(self.budgets)  # type: ignore[misc]
        return m

    def variables(self) -> dict[str, str]:
        """The script's global variables, each as a short repr (for summaries and the REPL)."""
        return {k: short_repr(v) for k, v in self.globals.items()}

    def close(self) -> None:
        """Release the device runtime if one was made."""
        rt, self._runtime = self._runtime, None
        if rt is not None:
            close = getattr(rt, "close", None)
            if callable(close):
                close()

    # -- the Host interface used by builtins and methods ----------------------------------------

    def write(self, text: str, span: Span) -> None:
        self.meter.count_output(len(text), span)
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self.printed.append(line)
            if self._output is not None:
                self._output(line)

    def _flush(self) -> None:
        if self._partial:
            line, self._partial = self._partial, ""
            self.printed.append(line)
            if self._output is not None:
                self._output(line)

    def call(self, fn: Any, args: list[Any], span: Span, kwargs: dict[str, Any] | None = None) -> Any:
        """Call a script value with arguments (used by ``key=`` functions and call expressions)."""
        tf = type(fn)
        if tf is ScriptFunction:
            return fn.invoke(_bind(fn, args, kwargs or {}, span), span)
        if tf is Builtin:
            return fn.fn(self, args, kwargs or {}, span)
        if tf is ApiFunction:
            return self._api_global(fn, args, kwargs or {}, span)
        raise ScriptError(f"'{type_name(fn)}' object is not callable", span)

    def iterate(self, value: Any, span: Span) -> Iterator[Any]:
        tv = type(value)
        if tv in (list, tuple, str, dict, range):
            return iter(value)
        if tv is ElementHandle:
            return self._items(value, span)
        raise ScriptError(f"'{type_name(value)}' object is not iterable", span)

    def length(self, value: Any, span: Span) -> int:
        tv = type(value)
        if tv in (list, tuple, str, dict, range):
            try:
                return len(value)
            except OverflowError as exc:
                raise ScriptError(str(exc), span) from None
        if tv is ElementHandle:
            return self._item_count(value, span, "len()")
        raise ScriptError(f"object of type '{type_name(value)}' has no len()", span)

    def getitem(self, value: Any, key: Any, span: Span) -> Any:
        tv, tk = type(value), type(key)
        if tv is dict:
            try:
                return value[check_key(key, span)]
            except KeyError:
                raise ScriptError(f"KeyError: {short_repr(key)}", span) from None
        if tv in (list, tuple, str, range):
            if tk is int or tk is bool:
                try:
                    return value[key]
                except IndexError:
                    what = {list: "list", tuple: "tuple", str: "string", range: "range object"}[tv]
                    raise ScriptError(f"{what} index out of range", span) from None
            if tk is slice:
                out = value[key]
                if tv is not range:
                    self.meter.check_size(len(out), span, type_name(value))
                return out
            raise ScriptError(f"{type_name(value)} indices must be integers or slices, not {type_name(key)}", span)
        if tv is ElementHandle:
            return self._element_index(value, key, span)
        raise ScriptError(f"'{type_name(value)}' object is not subscriptable", span)

    def setitem(self, container: Any, key: Any, value: Any, span: Span) -> None:
        tc, tk = type(container), type(key)
        if tc is dict:
            k = check_key(key, span)
            if len(container) >= self.meter.max_size and k not in container:
                self.meter.check_size(len(container) + 1, span, "dict")
            container[k] = value
            return
        if tc is list:
            if tk is int or tk is bool:
                try:
                    container[key] = value
                except IndexError:
                    raise ScriptError("list assignment index out of range", span) from None
                return
            if tk is slice:
                items = materialize(self, value, span)
                self.meter.check_size(len(container) + len(items), span, "list")
                try:
                    container[key] = items
                except ValueError as exc:
                    raise ScriptError(str(exc), span) from None
                return
            raise ScriptError(f"list indices must be integers or slices, not {type_name(key)}", span)
        raise ScriptError(f"'{type_name(container)}' object does not support item assignment", span)

    # -- the device side ------------------------------------------------------------------------

    def runtime(self, span: Span, what: str) -> UIRuntime:
        """The device runtime, made on first use. This is where a script first needs a device."""
        rt = self._runtime
        if rt is None:
            if self._factory is None:
                raise DeviceError(
                    f"no device runtime is available to run {what}", span,
                    hint="run the script with a device (tapir run --device SERIAL, or --device sim:APP)",
                )
            try:
                rt = self._factory()
            except TapirError as exc:
                if exc.span is None:
                    exc.span = span
                raise
            except Exception as exc:
                raise DeviceError(f"could not start the device runtime: {type(exc).__name__}: {exc}", span) from exc
            self._runtime = rt
        return rt

    def _device_call(self, what: str, span: Span, fn: Callable[[UIRuntime], Any]) -> Any:
        rt = self.runtime(span, what)
        try:
            result = fn(rt)
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            raise
        except Exception as exc:
            if self.debug:
                raise
            raise ScriptError(f"internal error in the device runtime during {what}: {type(exc).__name__}: {exc}",
                              span) from None
        self.meter.check_time(span)
        return result

    def _kind_of(self, handle: ElementHandle) -> api.Kind | None:
        """The element kind of what ``handle`` selects, from the symbol table (None: unknown)."""
        if self.symbols is None:
            return None
        sym = self.symbols.element(handle.name)
        if sym is None:
            return None
        kind: api.Kind | None = sym.kind
        for sel in handle.path:
            if type(sel) is Index or type(sel) is Match:
                kind = sym.item_kind if sym is not None else None
            elif type(sel) is Child:
                sym = self.symbols.element(sel.name)
                kind = sym.kind if sym is not None else None
        return kind

    def _require_list(self, handle: ElementHandle, what: str, span: Span) -> None:
        kind = self._kind_of(handle)
        if kind is not None and kind not in api.LIST_KINDS:
            raise ActionError(f"{what} needs a list element, but {handle} is a {kind.value}", span)

    def _item_count(self, handle: ElementHandle, span: Span, what: str) -> int:
        self._require_list(handle, what, span)
        n = self._device_call(what, span, lambda rt: rt.item_count(handle, span))
        if type(n) is not int or n < 0:
            raise ScriptError(f"internal error: the device runtime returned {type(n).__name__} as item count", span)
        return n

    def _item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        item = self._device_call(f"{handle}[{index}]", span, lambda rt: rt.item(handle, index, span))
        return _expect_handle(item, span)

    def _items(self, handle: ElementHandle, span: Span) -> Iterator[ElementHandle]:
        n = self._item_count(handle, span, f"iterating over {handle}")
        for i in range(n):
            yield self._item(handle, i, span)

    def _element_index(self, handle: ElementHandle, key: Any, span: Span) -> Any:
        tk = type(key)
        if tk is int or tk is bool:
            i = int(key)
            self._require_list(handle, "indexing", span)
            if i < 0:
                n = self._item_count(handle, span, "indexing")
                if i + n < 0:
                    raise ActionError(f"index {i} is out of range: {handle} has {n} items", span)
                i += n
            return self._item(handle, i, span)
        if tk is slice:
            n = self._item_count(handle, span, "slicing")
            idx = range(n)[key]
            self.meter.check_size(len(idx), span, "list")
            return [self._item(handle, i, span) for i in idx]
        raise ActionError(
            f"an element list is indexed by position, not {type_name(key)}", span,
            hint=f"to pick the item showing a text use {handle}.match(...)" if tk is str else None,
        )

    def element_method(self, handle: ElementHandle, name: str, args: list[Any], kwargs: dict[str, Any],
                       span: Span) -> Any:
        entry = api.ELEMENT_METHODS.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(api.ELEMENT_METHODS), n=1)
            raise ScriptError(
                f"element has no method '{name}'", span,
                hint=(f"did you mean '{close[0]}'? " if close else "") + "element methods: "
                + ", ".join(api.ELEMENT_METHODS),
            )
        return self._api_call(entry, handle, args, kwargs, span)

    def _api_global(self, fn: ApiFunction, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        if not fn.legacy:
            return self._api_call(fn.entry, None, args, kwargs, span)
        if not args or type(args[0]) is not ElementHandle:
            got = type_name(args[0]) if args else "nothing"
            raise ScriptError(f"{fn.name}() needs an element as its first argument, got {got}", span,
                              hint=f"write $screen__element.{fn.name}(...) or {fn.name}($screen__element, ...)")
        return self._api_call(fn.entry, args[0], args[1:], kwargs, span)

    def _api_call(self, entry: api.ApiEntry, handle: ElementHandle | None, args: list[Any],
                  kwargs: dict[str, Any], span: Span) -> Any:
        values = _bind_api(entry, args, kwargs, span)
        if handle is not None and entry.kinds != api.ALL_KINDS:
            kind = self._kind_of(handle)
            if kind is not None and kind not in entry.kinds:
                legal = ", ".join(sorted(k.value for k in entry.kinds))
                raise ActionError(f"{entry.name}() is not possible on {handle}: it is a {kind.value}", span,
                                  hint=f"{entry.name}() works on: {legal}")
        if entry.is_action:
            self.meter.count_action(entry.name, span)
        impl = _API_IMPLEMENTATIONS[entry.name]
        return self._device_call(f"{entry.name}()", span, lambda rt: impl(rt, handle, values, span))


# ---------------------------------------------------------------------------------------------
# The registry's calls, on the runtime Protocol


def _expect_handle(v: Any, span: Span) -> ElementHandle:
    if type(v) is not ElementHandle:
        raise ScriptError(f"internal error: the device runtime returned {type(v).__name__}, not an element", span)
    return v


def _api_scroll(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> bool:
    r = rt.scroll(h, v.get("direction") or "down", span)
    if type(r) is not bool:
        raise ScriptError(f"internal error: scroll() returned {type(r).__name__}, not bool", span)
    return r


def _api_get_text(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> str:
    r = rt.get_text(h, v.get("child"), span)
    if r is None:
        return ""
    if type(r) is not str:
        raise ScriptError(f"internal error: get_text() returned {type(r).__name__}, not str", span)
    return r


def _api_get_attributes(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> dict[str, Any]:
    r = rt.get_attributes(h, v.get("child"), span)
    if type(r) is not dict or not all(type(k) is str and type(x) in QUERY_SCALARS for k, x in r.items()):
        raise ScriptError("internal error: get_attributes() must return a dict of str to str/bool", span)
    return dict(r)


def _api_tap(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.tap(h, v.get("child"), span)


def _api_long_tap(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.long_tap(h, v.get("child"), span)


def _api_set_text(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.set_text(h, v["text"], span)


def _api_back(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.back(span)


def _api_enter(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.enter(span)


#: How each registry entry is carried out on the runtime Protocol (results checked: only
#: script values come back).
_API_IMPLEMENTATIONS: dict[str, Callable[[UIRuntime, Any, dict[str, Any], Span], Any]] = {
    "tap": _api_tap,
    "long_tap": _api_long_tap,
    "set_text": _api_set_text,
    "scroll": _api_scroll,
    "get_text": _api_get_text,
    "get_attributes": _api_get_attributes,
    "match": lambda rt, h, v, span: _expect_handle(rt.match(h, v["query"], span), span),
    "back": _api_back,
    "enter": _api_enter,
}

_missing_impl = (set(api.ELEMENT_METHODS) | set(api.GLOBALS)) - set(_API_IMPLEMENTATIONS)
if _missing_impl:  # the registry is the one list of API calls; each must be implemented here
    raise ImportError(f"API entries without an implementation: {sorted(_missing_impl)}")

_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "element": (ElementHandle,), "str": (str,), "dict": (dict,), "int": (int, bool), "bool": (bool,),
    "float": (float, int, bool),
}


def _bind_api(entry: api.ApiEntry, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[str, Any]:
    """Bind and check call arguments against the registry entry."""
    params = entry.params
    if len(args) > len(params):
        raise ScriptError(
            f"{entry.name}() takes at most {len(params)} argument{'s' if len(params) != 1 else ''} "
            f"({len(args)} given)", span, hint=f"signature: {entry.signature()}",
        )
    values: dict[str, Any] = {p.name: a for p, a in zip(params, args, strict=False)}
    names = {p.name for p in params}
    for k, v in kwargs.items():
        if k not in names:
            raise ScriptError(f"{entry.name}() got an unexpected keyword argument '{k}'", span,
                              hint=f"signature: {entry.signature()}")
        if k in values:
            raise ScriptError(f"{entry.name}() got multiple values for argument '{k}'", span)
        values[k] = v
    for p in params:
        if p.name not in values:
            if not p.optional:
                raise ScriptError(f"{entry.name}() missing required argument '{p.name}'", span,
                                  hint=f"signature: {entry.signature()}")
            continue
        v = values[p.name]
        if p.optional and v is None:
            continue
        allowed = tuple(t for part in p.type.split("|") for t in _PARAM_TYPES.get(part.strip(), ()))
        if allowed and type(v) not in allowed:
            raise ScriptError(f"{entry.name}() argument '{p.name}' must be {p.type}, not {type_name(v)}", span)
        if p.choices and v not in p.choices:
            raise ScriptError(f"{entry.name}() argument '{p.name}' must be one of "
                              + ", ".join(repr(c) for c in p.choices) + f"; got {short_repr(v)}", span)
        if type(v) is dict:
            for k, x in v.items():
                if type(k) is not str or type(x) not in QUERY_SCALARS:
                    raise ScriptError(f"{entry.name}() query keys must be str and values str, bool or numbers",
                                      span)
            values[p.name] = dict(v)
    return values


def _bind(fn: ScriptFunction, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[str, Any]:
    """Python's argument binding for a ``def`` (positional, keywords, defaults)."""
    params = fn.params
    n = len(params)
    if not kwargs and len(args) == n:
        return dict(zip(params, args, strict=True))
    if len(args) > n:
        raise ScriptError(
            f"{fn.name}() takes {n} positional argument{'s' if n != 1 else ''} but {len(args)} "
            f"{'were' if len(args) != 1 else 'was'} given", span)
    bound = dict(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise ScriptError(f"{fn.name}() got an unexpected keyword argument '{k}'", span)
        if k in bound:
            raise ScriptError(f"{fn.name}() got multiple values for argument '{k}'", span)
        bound[k] = v
    first_default = n - len(fn.defaults)
    missing = []
    for i, p in enumerate(params):
        if p not in bound:
            if i >= first_default:
                bound[p] = fn.defaults[i - first_default]
            else:
                missing.append(p)
    if missing:
        names = " and ".join(", ".join(repr(p) for p in missing).rsplit(", ", 1))
        raise ScriptError(
            f"{fn.name}() missing {len(missing)} required positional argument{'s' if len(missing) != 1 else ''}: "
            f"{names}", span)
    return bound


# ---------------------------------------------------------------------------------------------
# The compiler: AST -> closures


def _refuse(exc: TapirError) -> Eval:
    """A closure that raises ``exc`` when run: refusals happen when the construct is reached,
    like every other runtime error, so code that never runs cannot fail."""

    def ev(fr: Frame) -> Any:
        raise exc

    return ev


class _Compiler:
    def __init__(self, interp: Interpreter) -> None:
        self.i = interp
        self.m = interp.meter
        self.g = interp.globals

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _check_node(node: Any, types: tuple[type, ...], what: str) -> None:
        if type(node) not in types:
            raise SandboxViolation(f"{what}: node type {type(node).__name__} is not allowed here", _span_of(node))

    @staticmethod
    def _check_str(value: Any, node: A.Node, what: str) -> str:
        if type(value) is not str:
            raise SandboxViolation(f"{what} must be a str, not {type(value).__name__}", node.span)
        return value

    def module(self, node: A.Module) -> tuple[Exec, list[Any]]:
        if type(node.body) is not tuple:
            raise SandboxViolation("malformed module", node.span)
        scope = _Scope("module", set(), None)
        last: list[Any] = []
        stmts = list(node.body)
        fns = [self.stmt(s, scope, loop=False, func=False) for s in stmts[:-1]]
        if stmts and type(stmts[-1]) is A.ExprStmt:
            fns.append(self._expr_stmt(stmts[-1], scope, sink=last))  # type: ignore[arg-type]
        elif stmts:
            fns.append(self.stmt(stmts[-1], scope, loop=False, func=False))
        return self._seq(fns), last

    def block(self, stmts: tuple[A.Stmt, ...], scope: _Scope, loop: bool, func: bool) -> Exec:
        if type(stmts) is not tuple:
            raise SandboxViolation("malformed block: expected a tuple of statements")
        return self._seq([self.stmt(s, scope, loop, func) for s in stmts])

    @staticmethod
    def _seq(fns: list[Exec]) -> Exec:
        if not fns:
            return lambda fr: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f1, f2 = fns

            def two(fr: Frame) -> Any:
                r = f1(fr)
                if r is not None:
                    return r
                return f2(fr)

            return two
        seq = tuple(fns)

        def many(fr: Frame) -> Any:
            for f in seq:
                r = f(fr)
                if r is not None:
                    return r
            return None

        return many

    # -- statements ----------------------------------------------------------------------------

    def stmt(self, node: A.Stmt, scope: _Scope, loop: bool, func: bool) -> Exec:
        compile_ = _STMTS.get(type(node))
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported statement type {type(node).__name__}",
                _span_of(node),
            )
        return compile_(self, node, scope, loop, func)

    def _guard(self, span: Span, cost: int, body: Callable[[Frame], Any]) -> Exec:
        """Charge ``cost`` steps, run ``body``, turn Python exceptions into script errors."""
        m = self.m
        debug = self.i.debug

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                return body(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise _convert(exc, span) from (exc if debug else None)

        return ex

    def _expr_stmt(self, node: A.ExprStmt, scope: _Scope, sink: list[Any] | None = None) -> Exec:
        val = self.expr(node.value, scope)
        if sink is None:
            return self._guard(node.span, 1 + _cost(node.value), lambda fr: val(fr) and None)

        def keep(fr: Frame) -> None:
            sink[:] = [val(fr)]

        return self._guard(node.span, 1 + _cost(node.value), keep)

    def _s_expr(self, node: A.ExprStmt, scope: _Scope, loop: bool, func: bool) -> Exec:
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.value), self.i.debug
        val = self.expr(node.value, scope)

        def ex(fr: Frame) -> None:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                val(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise _convert(exc, span) from (exc if debug else None)

        return ex

    def _s_assign(self, node: A.Assign, scope: _Scope, loop: bool, func: bool) -> Exec:
        if type(node.targets) is not tuple or not node.targets:
            raise SandboxViolation("malformed assignment", node.span)
        m, span, debug = self.m, node.span, self.i.debug
        cost = 1 + _cost(node.value) + sum(_cost(t) for t in node.targets)
        val = self.expr(node.value, scope)
        stores = [self.store(t, scope) for t in node.targets]
        if len(stores) == 1 and type(node.targets[0]) is A.Name:
            name = node.targets[0].id
            hops = scope.resolve(name)
            g = self.g
            if hops is None:
                def ex(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        g[name] = val(fr)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise _convert(exc, span) from (exc if debug else None)

                return ex
            if hops == 0:
                def ex0(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        fr.vars[name] = val(fr)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise _convert(exc, span) from (exc if debug else None)

                return ex0
        if len(stores) == 1:
            store = stores[0]
            return self._guard(span, cost, lambda fr: store(fr, val(fr)))

        def many(fr: Frame) -> None:
            v = val(fr)
            for s in stores:
                s(fr, v)

        return self._guard(span, cost, many)

    def _s_augassign(self, node: A.AugAssign, scope: _Scope, loop: bool, func: bool) -> Exec:
        op = node.op
        if op not in BINOPS:
            raise SandboxViolation(f"unsupported operator {op!r}=", node.span)
        opfn, m, span, i = BINOPS[op], self.m, node.span, self.i
        cost = 2 + _cost(node.value) + _cost(node.target)
        val = self.expr(node.value, scope)
        target = node.target

        def combine(cur: Any, v: Any) -> Any:
            # Python's in-place list operators mutate the list (other references see it).
            if type(cur) is list and op == "+":
                items = materialize(i, v, span)
                m.check_size(len(cur) + len(items), span, "list")
                cur.extend(items)
                return cur
            if type(cur) is list and op == "*":
                new = mul(cur, v, m, span)
                cur[:] = new
                return cur
            if type(cur) is int and type(v) is int and op == "+":
                return cur + v
            return opfn(cur, v, m, span)

        if type(target) is A.Name:
            load = self.expr(target, scope)
            store = self.store(target, scope)
            name = target.id
            hops = scope.resolve(name) if not name.startswith("__") else -1
            if hops is None or hops == 0:
                g, debug, is_add = self.g, self.i.debug, op == "+"

                # The common `total += x`: one closure, no load/store calls.
                def ex(fr: Frame) -> None:
                    m.steps += cost
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    try:
                        variables = g if hops is None else fr.vars
                        cur = variables[name] if name in variables else load(fr)
                        v = val(fr)
                        if is_add and type(cur) is int and type(v) is int:
                            variables[name] = cur + v
                        else:
                            variables[name] = combine(cur, v)
                    except TapirError:
                        raise
                    except Exception as exc:
                        raise _convert(exc, span) from (exc if debug else None)

                return ex
            return self._guard(span, cost, lambda fr: store(fr, combine(load(fr), val(fr))))
        if type(target) is A.Subscript:
            obj = self.expr(target.value, scope)
            key = self._index(target.index, scope)

            def sub(fr: Frame) -> None:
                o, k = obj(fr), key(fr)
                i.setitem(o, k, combine(i.getitem(o, k, span), val(fr)), span)

            return self._guard(span, cost, sub)
        return _refuse(ScriptError("illegal expression for augmented assignment", node.span))

    def _s_if(self, node: A.If, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        body = self.block(node.body, scope, loop, func)
        orelse = self.block(node.orelse, scope, loop, func)
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.test), self.i.debug

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                t = test(fr)
            except TapirError:
                raise
            except Exception as exc:
                raise _convert(exc, span) from (exc if debug else None)
            return body(fr) if t else orelse(fr)

        if not node.orelse:
            def ex_no_else(fr: Frame) -> Any:
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                try:
                    t = test(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise _convert(exc, span) from (exc if debug else None)
                if t:
                    return body(fr)
                return None

            return ex_no_else
        return ex

    def _s_while(self, node: A.While, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        body = self.block(node.body, scope, True, func)
        m, span, cost, debug = self.m, node.span, 1 + _cost(node.test), self.i.debug

        def ex(fr: Frame) -> Any:
            while True:
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                try:
                    t = test(fr)
                except TapirError:
                    raise
                except Exception as exc:
                    raise _convert(exc, span) from (exc if debug else None)
                if not t:
                    return None
                r = body(fr)
                if r is not None:
                    if r is _BREAK:
                        return None
                    if r is not _CONTINUE:
                        return r

        return ex

    def _s_for(self, node: A.For, scope: _Scope, loop: bool, func: bool) -> Exec:
        it = self.expr(node.iter, scope)
        store = self.store(node.target, scope)
        body = self.block(node.body, scope, True, func)
        m, span, i, debug = self.m, node.span, self.i, self.i.debug
        cost = 1 + _cost(node.iter)
        fast_name = node.target.id if type(node.target) is A.Name else None
        if fast_name is not None and (type(fast_name) is not str or fast_name.startswith("__")):
            fast_name = None
        hops = scope.resolve(fast_name) if fast_name else -1
        g = self.g

        def ex(fr: Frame) -> Any:
            m.steps += cost
            if m.steps > m.checkpoint:
                m.tick(span)
            try:
                seq = it(fr)
                tv = type(seq)
                iterator = iter(seq) if (tv is list or tv is range or tv is tuple or tv is str or tv is dict) \
                    else i.iterate(seq, span)
                target_vars = g if hops is None else (fr.vars if hops == 0 else None)
                for v in iterator:
                    m.steps += 1
                    if m.steps > m.checkpoint:
                        m.tick(span)
                    if target_vars is not None:
                        target_vars[fast_name] = v
                    else:
                        store(fr, v)
                    r = body(fr)
                    if r is not None:
                        if r is _BREAK:
                            return None
                        if r is not _CONTINUE:
                            return r
            except TapirError:
                raise
            except Exception as exc:
                raise _convert(exc, span) from (exc if debug else None)
            return None

        return ex

    def _s_break(self, node: A.Break, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not loop:
            return _refuse(ScriptError("'break' outside loop", node.span))
        m, span = self.m, node.span

        def ex(fr: Frame) -> str:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)
            return _BREAK

        return ex

    def _s_continue(self, node: A.Continue, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not loop:
            return _refuse(ScriptError("'continue' not properly in loop", node.span))
        m, span = self.m, node.span

        def ex(fr: Frame) -> str:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)
            return _CONTINUE

        return ex

    def _s_pass(self, node: A.Pass, scope: _Scope, loop: bool, func: bool) -> Exec:
        m, span = self.m, node.span

        def ex(fr: Frame) -> None:
            m.steps += 1
            if m.steps > m.checkpoint:
                m.tick(span)

        return ex

    def _s_return(self, node: A.Return, scope: _Scope, loop: bool, func: bool) -> Exec:
        if not func:
            return _refuse(ScriptError("'return' outside function", node.span))
        val = self.expr(node.value, scope) if node.value is not None else (lambda fr: None)
        cost = 1 + (_cost(node.value) if node.value is not None else 0)

        def ret(fr: Frame) -> str:
            fr.ret = val(fr)
            return _RETURN

        return self._guard(node.span, cost, ret)

    def _s_assert(self, node: A.Assert, scope: _Scope, loop: bool, func: bool) -> Exec:
        test = self.expr(node.test, scope)
        msg = self.expr(node.msg, scope) if node.msg is not None else None
        m, span, i = self.m, node.span, self.i
        cost = 1 + _cost(node.test)
        test_span = node.test.span

        def ex(fr: Frame) -> None:
            if not test(fr):
                if msg is not None:
                    text = to_str(msg(fr), m, span)
                else:
                    shown = _source_text(i._source, test_span)
                    text = f"assert {shown}" if shown else "the assertion is false"
                raise AssertionFailed(f"assertion failed: {text}", span)

        return self._guard(span, cost, ex)

    def _s_def(self, node: A.FunctionDef, scope: _Scope, loop: bool, func: bool) -> Exec:
        name = self._check_str(node.name, node, "function name")
        if type(node.params) is not tuple:
            raise SandboxViolation("malformed function parameters", node.span)
        params: list[str] = []
        defaults: list[Eval] = []
        for p in node.params:
            self._check_node(p, (A.Param,), "function parameter")
            pname = self._check_str(p.name, p, "parameter name")
            if pname in params:
                return _refuse(ScriptError(f"duplicate argument '{pname}' in function definition", p.span))
            if pname.startswith("__"):
                return _refuse(SandboxViolation(f"'{pname}' is not a valid name in Tapir scripts", p.span))
            params.append(pname)
            if p.default is not None:
                defaults.append(self.expr(p.default, scope))
            elif defaults:
                return _refuse(ScriptError("parameter without a default follows parameter with a default", p.span))
        fscope = _Scope("function", set(params) | _assigned(node.body, set()), scope)
        body = self.block(node.body, fscope, loop=False, func=True)
        store = self.store(A.Name(node.span, name), scope)
        m = self.m
        ptuple = tuple(params)
        cost = 1 + sum(_cost(p.default) for p in node.params if p.default is not None)

        def define(fr: Frame) -> None:
            closure = fr
            dvals = tuple(d(fr) for d in defaults)

            def invoke(bound: dict[str, Any], call_span: Span) -> Any:
                if m.depth >= m.budgets.max_depth:
                    raise m.depth_exceeded(call_span)
                m.depth += 1
                frame = Frame(bound, closure)
                try:
                    r = body(frame)
                finally:
                    m.depth -= 1
                return frame.ret if r is _RETURN else None

            store(fr, ScriptFunction(name, ptuple, dvals, invoke))

        if name.startswith("__"):
            return _refuse(SandboxViolation(f"'{name}' is not a valid name in Tapir scripts", node.span))
        return self._guard(node.span, cost, define)

    # -- assignment targets ----------------------------------------------------------------------

    def store(self, target: A.Node, scope: _Scope) -> Callable[[Frame, Any], None]:
        t = type(target)
        if t is A.Name:
            name = self._check_str(target.id, target, "name")  # type: ignore[attr-defined]
            if name.startswith("__"):
                err = SandboxViolation(f"'{name}' is not a valid name in Tapir scripts", target.span)

                def refuse(fr: Frame, v: Any) -> None:
                    raise err

                return refuse
            hops = scope.resolve(name)
            if hops is None:
                g = self.g

                def store_global(fr: Frame, v: Any) -> None:
                    g[name] = v

                return store_global

            def store_local(fr: Frame, v: Any) -> None:
                fr.vars[name] = v

            return store_local
        if t is A.Subscript:
            obj = self.expr(target.value, scope)  # type: ignore[attr-defined]
            key = self._index(target.index, scope)  # type: ignore[attr-defined]
            i, span = self.i, target.span

            def store_item(fr: Frame, v: Any) -> None:
                i.setitem(obj(fr), key(fr), v, span)

            return store_item
        if t is A.TupleExpr or t is A.ListExpr:
            subs = [self.store(e, scope) for e in target.elts]  # type: ignore[attr-defined]
            n, i, span = len(subs), self.i, target.span

            def unpack(fr: Frame, v: Any) -> None:
                if type(v) not in (list, tuple, str, dict, range, ElementHandle):
                    raise ScriptError(f"cannot unpack non-iterable {type_name(v)} object", span)
                items = materialize(i, v, span)
                if len(items) != n:
                    if len(items) > n:
                        raise ScriptError(f"too many values to unpack (expected {n}, got {len(items)})", span)
                    raise ScriptError(f"not enough values to unpack (expected {n}, got {len(items)})", span)
                for s, x in zip(subs, items, strict=True):
                    s(fr, x)

            return unpack
        err = SandboxViolation(f"cannot assign to {type(target).__name__}", _span_of(target))
        if t is A.Attribute:
            err = SandboxViolation("assigning to attributes is not allowed in Tapir scripts", target.span)

        def refuse_target(fr: Frame, v: Any) -> None:
            raise err

        return refuse_target

    # -- expressions -------------------------------------------------------------------------------

    def expr(self, node: A.Node, scope: _Scope) -> Eval:
        compile_ = _EXPRS.get(type(node))
        if compile_ is None:
            raise SandboxViolation(
                f"unsupported expression type {type(node).__name__}",
                _span_of(node),
            )
        return compile_(self, node, scope)

    @staticmethod
    def _local_name(node: A.Node, scope: _Scope) -> str | None:
        """The name, when ``node`` reads a variable of the current function's own frame."""
        if type(node) is A.Name and type(node.id) is str and not node.id.startswith("__") \
                and scope.resolve(node.id) == 0:
            return node.id
        return None

    def _e_constant(self, node: A.Constant, scope: _Scope) -> Eval:
        v = node.value
        if type(v) not in (str, int, float, bool, type(None)):
            raise SandboxViolation(f"a constant of type {type(v).__name__} is not a script value", node.span)
        if type(v) is str and len(v) > self.m.max_size:
            return _refuse(budget_exceeded("size", self.m.max_size, "a string literal is too long", node.span))
        if type(v) is int and v.bit_length() > self.m.max_int_bits:
            return _refuse(budget_exceeded("size", self.m.max_int_bits, "an integer literal is too large", node.span))
        return lambda fr: v

    def _e_name(self, node: A.Name, scope: _Scope) -> Eval:
        name = self._check_str(node.id, node, "name")
        span = node.span
        if name.startswith("__"):
            return _refuse(_not_defined(name, span))
        hops = scope.resolve(name)
        if hops is None:
            g = self.g
            default = BUILTINS.get(name, _API_GLOBALS.get(name, _MISSING))

            def load_global(fr: Frame) -> Any:
                v = g.get(name, default)
                if v is _MISSING:
                    raise _not_defined(name, span)
                return v

            return load_global

        def unbound() -> ScriptError:
            return ScriptError(f"cannot access local variable '{name}' where it is not associated with a value",
                               span)

        if hops == 0:
            def load_local(fr: Frame) -> Any:
                try:
                    return fr.vars[name]
                except KeyError:
                    raise unbound() from None

            return load_local

        def load_outer(fr: Frame) -> Any:
            f = fr
            for _ in range(hops):
                f = f.parent  # type: ignore[assignment]
            try:
                return f.vars[name]
            except KeyError:
                raise unbound() from None

        return load_outer

    def _e_element(self, node: A.ElementRef, scope: _Scope) -> Eval:
        name = self._check_str(node.name, node, "element name")
        handle = ElementHandle(name)
        symbols = self.i.symbols
        if symbols is not None and name not in symbols:
            suggestions = symbols.suggest(name)
            hint = ("did you mean " + " or ".join(f"${s}" for s in suggestions) + "?") if suggestions else None
            return _refuse(UnknownElement(f"unknown element ${name}: it is not in the app document",
                                          node.span, hint=hint))
        return lambda fr: handle

    def _e_fstring(self, node: A.FString, scope: _Scope) -> Eval:
        parts: list[Eval] = []
        for p in node.parts:
            if type(p) is A.Constant and type(p.value) is str:
                text = p.value
                parts.append(lambda fr, text=text: text)
            else:
                parts.append(self.expr(p, scope))
        m, span = self.m, node.span

        def ev(fr: Frame) -> str:
            pieces = []
            total = 0
            for p in parts:
                s = p(fr)
                if type(s) is not str:
                    s = to_str(s, m, span)
                total += len(s)
                pieces.append(s)
            m.check_size(total, span, "str")
            return "".join(pieces)

        return ev

    def _e_formatted(self, node: A.FormattedValue, scope: _Scope) -> Eval:
        val = self.expr(node.value, scope)
        conv, spec = node.conversion, node.format_spec
        if conv not in (None, "r", "s", "a"):
            raise SandboxViolation(f"unknown conversion {conv!r}", node.span)
        if spec is not None and type(spec) is not str:
            raise SandboxViolation("a format spec must be a str", node.span)
        m, span, spec_s = self.m, node.span, spec or ""
        return lambda fr: format_value(val(fr), spec_s, conv, m, span)

    def _e_list(self, node: A.ListExpr, scope: _Scope) -> Eval:
        elts = [self.expr(e, scope) for e in node.elts]
        return lambda fr: [e(fr) for e in elts]

    def _e_tuple(self, node: A.TupleExpr, scope: _Scope) -> Eval:
        elts = [self.expr(e, scope) for e in node.elts]
        return lambda fr: tuple([e(fr) for e in elts])

    def _e_dict(self, node: A.DictExpr, scope: _Scope) -> Eval:
        if len(node.keys) != len(node.values):
            raise SandboxViolation("malformed dict literal", node.span)
        pairs = [(self.expr(k, scope), self.expr(v, scope)) for k, v in zip(node.keys, node.values, strict=True)]
        span = node.span

        def ev(fr: Frame) -> dict[Any, Any]:
            d: dict[Any, Any] = {}
            for k, v in pairs:
                d[check_key(k(fr), span)] = v(fr)
            return d

        return ev

    def _e_binop(self, node: A.BinOp, scope: _Scope) -> Eval:
        op = node.op
        if op not in BINOPS:
            raise SandboxViolation(f"unsupported operator {op!r}", node.span)
        left, right = self.expr(node.left, scope), self.expr(node.right, scope)
        fn, m, span = BINOPS[op], self.m, node.span
        c = node.right.value if type(node.right) is A.Constant else None
        if type(c) is int and op in _INT_CONST_OPS and (op not in ("//", "%") or c != 0) \
                and (op != "*" or -0x80000000 < c < 0x80000000):
            return _int_const_binop(op, left, c, fn, m, span, self._local_name(node.left, scope))
        if op == "+":
            def ev_add(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a + b
                return add(a, b, m, span)

            return ev_add
        if op == "-":
            def ev_sub(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a - b
                return fn(a, b, m, span)

            return ev_sub
        if op == "*":
            def ev_mul(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and -0x80000000 < a < 0x80000000 and -0x80000000 < b < 0x80000000:
                    return a * b
                return mul(a, b, m, span)

            return ev_mul
        if op == "//":
            def ev_floordiv(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and b:
                    return a // b
                return fn(a, b, m, span)

            return ev_floordiv
        if op == "%":
            def ev_mod(fr: Frame) -> Any:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int and b:
                    return a % b
                return fn(a, b, m, span)

            return ev_mod
        return lambda fr: fn(left(fr), right(fr), m, span)

    def _e_unary(self, node: A.UnaryOp, scope: _Scope) -> Eval:
        op = node.op
        if op not in ("not", "-", "+"):
            raise SandboxViolation(f"unsupported unary operator {op!r}", node.span)
        operand, span = self.expr(node.operand, scope), node.span
        if op == "not":
            return lambda fr: not operand(fr)

        def ev(fr: Frame) -> Any:
            v = operand(fr)
            if type(v) is int:
                return -v if op == "-" else v
            return unary(op, v, span)

        return ev

    def _e_boolop(self, node: A.BoolOp, scope: _Scope) -> Eval:
        if node.op not in ("and", "or") or len(node.values) < 2:
            raise SandboxViolation(f"malformed boolean operation {node.op!r}", node.span)
        vals = [self.expr(v, scope) for v in node.values]
        if node.op == "and":
            def ev_and(fr: Frame) -> Any:
                v = None
                for f in vals:
                    v = f(fr)
                    if not v:
                        return v
                return v

            return ev_and

        def ev_or(fr: Frame) -> Any:
            v = None
            for f in vals:
                v = f(fr)
                if v:
                    return v
            return v

        return ev_or

    _CMP_OPS = frozenset(("==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"))

    def _e_compare(self, node: A.Compare, scope: _Scope) -> Eval:
        if not node.ops or len(node.ops) != len(node.comparators) or any(o not in self._CMP_OPS for o in node.ops):
            raise SandboxViolation("malformed comparison", node.span)
        left = self.expr(node.left, scope)
        rights = [self.expr(c, scope) for c in node.comparators]
        ops = list(node.ops)
        m, span = self.m, node.span
        if len(ops) == 1:
            op, right = ops[0], rights[0]
            c = node.comparators[0]
            if type(c) is A.Constant and type(c.value) in (int, str) and op in _CONST_CMP:
                local = self._local_name(node.left, scope)
                if local is not None:
                    return _local_const_compare(op, local, left, c.value, m, span)
                return _const_compare(op, left, c.value, m, span)
            return self._compare1(op, left, right, m, span)

        def chain(fr: Frame) -> bool:
            a = left(fr)
            for op, r in zip(ops, rights, strict=True):
                b = r(fr)
                if not compare(op, a, b, m, span):
                    return False
                a = b
            return True

        return chain

    @staticmethod
    def _compare1(op: str, left: Eval, right: Eval, m: Meter, span: Span) -> Eval:
        if op == "<":
            def lt(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                if type(a) is int and type(b) is int:
                    return a < b
                return compare("<", a, b, m, span)

            return lt
        if op == "==":
            def eq(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                ta = type(a)
                if (ta is int or ta is str) and type(b) is ta:
                    return a == b
                return equal(a, b, m, span)

            return eq
        if op == "!=":
            def ne(fr: Frame) -> bool:
                a = left(fr)
                b = right(fr)
                ta = type(a)
                if (ta is int or ta is str) and type(b) is ta:
                    return a != b
                return not equal(a, b, m, span)

            return ne
        if op == "is":
            return lambda fr: left(fr) is right(fr)
        if op == "is not":
            return lambda fr: left(fr) is not right(fr)
        if op == "in":
            return lambda fr: contains(right(fr), left(fr), m, span)
        if op == "not in":
            return lambda fr: not contains(right(fr), left(fr), m, span)

        def other(fr: Frame) -> bool:
            a = left(fr)
            b = right(fr)
            if type(a) is int and type(b) is int:
                return a > b if op == ">" else a <= b if op == "<=" else a >= b
            return compare(op, a, b, m, span)

        return other

    def _e_ifexp(self, node: A.IfExp, scope: _Scope) -> Eval:
        test, body, orelse = self.expr(node.test, scope), self.expr(node.body, scope), self.expr(node.orelse, scope)
        return lambda fr: body(fr) if test(fr) else orelse(fr)

    def _e_slice(self, node: A.Slice, scope: _Scope) -> Eval:
        return _refuse(ScriptError("a slice can only appear inside brackets, as in x[1:3]", node.span))

    def _index(self, node: A.Node, scope: _Scope) -> Eval:
        """The index of a subscript: an expression, or a slice made of checked bounds."""
        if type(node) is not A.Slice:
            return self.expr(node, scope)
        parts = [self.expr(p, scope) if p is not None else None for p in (node.lower, node.upper, node.step)]
        span = node.span

        def bound(f: Eval | None, fr: Frame) -> Any:
            if f is None:
                return None
            v = f(fr)
            if v is not None and type(v) not in (int, bool):
                raise ScriptError("slice indices must be integers or None", span)
            return v

        def ev(fr: Frame) -> slice:
            lo, hi, step = (bound(p, fr) for p in parts)
            if step == 0:
                raise ScriptError("slice step cannot be zero", span)
            return slice(lo, hi, step)

        return ev

    def _e_subscript(self, node: A.Subscript, scope: _Scope) -> Eval:
        obj, key, i, span = self.expr(node.value, scope), self._index(node.index, scope), self.i, node.span

        def ev(fr: Frame) -> Any:
            o = obj(fr)
            k = key(fr)
            if type(o) is list and type(k) is int:
                try:
                    return o[k]
                except IndexError:
                    raise ScriptError("list index out of range", span) from None
            return i.getitem(o, k, span)

        return ev

    def _e_attribute(self, node: A.Attribute, scope: _Scope) -> Eval:
        attr = self._check_str(node.attr, node, "attribute name")
        span = node.attr_span or node.span
        if attr.startswith("_"):
            return _refuse(SandboxViolation(f"access to '{attr}' is not allowed: names starting with '_' are private",
                                            span))
        return _refuse(SandboxViolation(
            f"attribute access ('.{attr}') is not allowed in Tapir scripts, only method calls", span,
            hint=f"call a method, e.g. x.{attr}(...), if the value has one"))

    def _e_call(self, node: A.Call, scope: _Scope) -> Eval:
        if type(node.args) is not tuple or type(node.keywords) is not tuple:
            raise SandboxViolation("malformed call", node.span)
        args = [self.expr(a, scope) for a in node.args]
        kw: list[tuple[str, Eval]] = []
        for k in node.keywords:
            self._check_node(k, (A.Keyword,), "keyword argument")
            kname = self._check_str(k.name, k, "keyword name")
            if any(kname == n for n, _ in kw):
                return _refuse(ScriptError(f"keyword argument repeated: {kname}", k.span))
            kw.append((kname, self.expr(k.value, scope)))
        i, span = self.i, node.span
        func = node.func

        def kwargs_of(fr: Frame) -> dict[str, Any]:
            return {n: f(fr) for n, f in kw}

        if type(func) is A.Attribute:
            attr = self._check_str(func.attr, func, "method name")
            aspan = func.attr_span or func.span
            if attr.startswith("_"):
                return _refuse(SandboxViolation(
                    f"access to '{attr}' is not allowed: names starting with '_' are private", aspan))
            recv = self.expr(func.value, scope)
            cache: dict[type, Any] = {}

            def method(fr: Frame) -> Any:
                r = recv(fr)
                a = [f(fr) for f in args]
                k = kwargs_of(fr) if kw else {}
                if type(r) is ElementHandle:
                    return i.element_method(r, attr, a, k, span)
                fn = cache.get(type(r))
                if fn is None:
                    fn = lookup_method(r, attr, aspan)
                    cache[type(r)] = fn
                return fn(i, r, a, k, span)

            return method

        callee = self.expr(func, scope)
        if not kw:
            if len(args) == 1:
                a0 = args[0]

                def call1(fr: Frame) -> Any:
                    f = callee(fr)
                    if type(f) is ScriptFunction and len(f.params) == 1:
                        return f.invoke({f.params[0]: a0(fr)}, span)
                    return i.call(f, [a0(fr)], span)

                return call1

            def call_pos(fr: Frame) -> Any:
                f = callee(fr)
                a = [g(fr) for g in args]
                if type(f) is ScriptFunction and len(f.params) == len(a):
                    return f.invoke(dict(zip(f.params, a, strict=True)), span)
                return i.call(f, a, span)

            return call_pos

        def call_kw(fr: Frame) -> Any:
            f = callee(fr)
            return i.call(f, [g(fr) for g in args], span, kwargs_of(fr))

        return call_kw

    def _e_listcomp(self, node: A.ListComp, scope: _Scope) -> Eval:
        gens = node.generators
        if type(gens) is not tuple or not gens:
            raise SandboxViolation("malformed list comprehension", node.span)
        for g in gens:
            self._check_node(g, (A.Comprehension,), "comprehension")
        names: set[str] = set()
        for g in gens:
            _target_names(g.target, names)
        cscope = _Scope("comprehension", names, scope)
        first_iter = self.expr(gens[0].iter, scope)
        levels = []
        for n, g in enumerate(gens):
            levels.append((
                self.store(g.target, cscope),
                self.expr(g.iter, cscope) if n else None,
                [self.expr(c, cscope) for c in g.conds],
                1 + sum(_cost(c) for c in g.conds) + (_cost(g.iter) if n else 0),
            ))
        elt = self.expr(node.elt, cscope)
        elt_cost = _cost(node.elt)
        m, i, span = self.m, self.i, node.span
        depth = len(levels)

        def run(level: int, iterable: Any, cfr: Frame, out: list[Any]) -> None:
            store, _, conds, cost = levels[level]
            last = level + 1 == depth
            for v in i.iterate(iterable, span):
                m.steps += cost
                if m.steps > m.checkpoint:
                    m.tick(span)
                store(cfr, v)
                if conds and not all(c(cfr) for c in conds):
                    continue
                if last:
                    m.steps += elt_cost
                    if len(out) >= m.max_size:
                        m.check_size(len(out) + 1, span, "list")
                    out.append(elt(cfr))
                else:
                    nxt = levels[level + 1][1]
                    run(level + 1, nxt(cfr), cfr, out)  # type: ignore[misc]

        def ev(fr: Frame) -> list[Any]:
            out: list[Any] = []
            run(0, first_iter(fr), Frame({}, fr), out)
            m.check_size(len(out), span, "list")
            return out

        return ev


_INT_CONST_OPS = frozenset(("+", "-", "*", "//", "%"))
_CONST_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


_PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}


def _int_const_binop(op: str, left: Eval, c: int, fn: Callable[..., Any], m: Meter, span: Span,
                     local: str | None) -> Eval:
    """``expr OP int-literal``, the most common arithmetic in loops: one closure, no call for
    the constant, the int case inline (and the variable read inline when it is a local)."""
    if local is not None:
        pyop = _PY_OPS[op]
        small = op == "*"

        def local_c(fr: Frame) -> Any:
            try:
                a = fr.vars[local]
            except KeyError:
                a = left(fr)  # raises the unbound-variable error
            if type(a) is int and (not small or -0x80000000 < a < 0x80000000):
                return pyop(a, c)
            return fn(a, c, m, span)

        return local_c
    if op == "+":
        def add_c(fr: Frame) -> Any:
            a = left(fr)
            return a + c if type(a) is int else fn(a, c, m, span)

        return add_c
    if op == "-":
        def sub_c(fr: Frame) -> Any:
            a = left(fr)
            return a - c if type(a) is int else fn(a, c, m, span)

        return sub_c
    if op == "*":
        def mul_c(fr: Frame) -> Any:
            a = left(fr)
            return a * c if type(a) is int and -0x80000000 < a < 0x80000000 else fn(a, c, m, span)

        return mul_c
    if op == "//":
        def floordiv_c(fr: Frame) -> Any:
            a = left(fr)
            return a // c if type(a) is int else fn(a, c, m, span)

        return floordiv_c

    def mod_c(fr: Frame) -> Any:
        a = left(fr)
        return a % c if type(a) is int else fn(a, c, m, span)

    return mod_c


def _const_compare(op: str, left: Eval, c: int | str, m: Meter, span: Span) -> Eval:
    """``expr OP literal`` for an int or str literal: same-type comparisons inline."""
    tc = type(c)
    if op == "==":
        def eq_c(fr: Frame) -> bool:
            a = left(fr)
            return a == c if type(a) is tc else equal(a, c, m, span)

        return eq_c
    if op == "!=":
        def ne_c(fr: Frame) -> bool:
            a = left(fr)
            return a != c if type(a) is tc else not equal(a, c, m, span)

        return ne_c
    if op == "<":
        def lt_c(fr: Frame) -> bool:
            a = left(fr)
            return a < c if type(a) is tc else compare("<", a, c, m, span)

        return lt_c
    if op == ">":
        def gt_c(fr: Frame) -> bool:
            a = left(fr)
            return a > c if type(a) is tc else compare(">", a, c, m, span)

        return gt_c
    py = _CONST_CMP[op]

    def cmp_c(fr: Frame) -> bool:
        a = left(fr)
        return py(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_c


def _local_const_compare(op: str, local: str, left: Eval, c: int | str, m: Meter, span: Span) -> Eval:
    """``local_variable OP literal``: the loop test of most loops."""
    tc, pyop = type(c), _PY_OPS[op]

    def cmp_local(fr: Frame) -> bool:
        try:
            a = fr.vars[local]
        except KeyError:
            a = left(fr)
        return pyop(a, c) if type(a) is tc else compare(op, a, c, m, span)

    return cmp_local


def _span_of(node: Any) -> Span | None:
    span = getattr(node, "span", None)
    return span if type(span) is Span else None


def _source_text(source: str | None, span: Span) -> str | None:
    if source is None or span.line != span.end_line:
        return None
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return None
    return lines[span.line - 1][span.column - 1: span.end_column - 1] or None


_STMTS: dict[type, Callable[..., Exec]] = {
    A.ExprStmt: _Compiler._s_expr,
    A.Assign: _Compiler._s_assign,
    A.AugAssign: _Compiler._s_augassign,
    A.If: _Compiler._s_if,
    A.While: _Compiler._s_while,
    A.For: _Compiler._s_for,
    A.Break: _Compiler._s_break,
    A.Continue: _Compiler._s_continue,
    A.Pass: _Compiler._s_pass,
    A.FunctionDef: _Compiler._s_def,
    A.Return: _Compiler._s_return,
    A.Assert: _Compiler._s_assert,
}

_EXPRS: dict[type, Callable[..., Eval]] = {
    A.Constant: _Compiler._e_constant,
    A.Name: _Compiler._e_name,
    A.ElementRef: _Compiler._e_element,
    A.FString: _Compiler._e_fstring,
    A.FormattedValue: _Compiler._e_formatted,
    A.ListExpr: _Compiler._e_list,
    A.TupleExpr: _Compiler._e_tuple,
    A.DictExpr: _Compiler._e_dict,
    A.BinOp: _Compiler._e_binop,
    A.UnaryOp: _Compiler._e_unary,
    A.BoolOp: _Compiler._e_boolop,
    A.Compare: _Compiler._e_compare,
    A.IfExp: _Compiler._e_ifexp,
    A.Slice: _Compiler._e_slice,
    A.Subscript: _Compiler._e_subscript,
    A.Attribute: _Compiler._e_attribute,
    A.Call: _Compiler._e_call,
    A.ListComp: _Compiler._e_listcomp,
}


# ---------------------------------------------------------------------------------------------
# The one entry point for front ends


def run_script(
    script: A.Module | str,
    runtime_factory: RuntimeFactory | None = None,
    budgets: Budgets | None = None,
    output: Output | None = print,
    *,
    symbols: SymbolTable | None = None,
    filename: str = "<script>",
    source: str | None = None,
    debug: bool = False,
) -> RunResult:
    """Parse (if given text) and run a script; never raises for a script's own failure.

    The error that stopped the script (syntax, runtime, budget, device) is in
    ``RunResult.error`` with the source attached, so ``error.render()`` shows file:line:col and
    a caret. The device runtime, if one was made, is closed before returning.
    """
    interp = Interpreter(runtime_factory, budgets, output, symbols=symbols, filename=filename, debug=debug)
    error: TapirError | None = None
    if isinstance(script, str):
        source = script
        try:
            from tapir.dsl.parser import parse

            module = parse(script, filename=filename)
        except TapirError as exc:
            exc.with_source(source, filename)
            return RunResult(0, 0, 0.0, (), {}, exc)
    else:
        module = script
    try:
        interp.execute(module, source)
    except TapirError as exc:
        error = exc.with_source(source, filename)
    finally:
        try:
            interp.close()
        except TapirError as exc:
            error = error or exc
    return RunResult(
        steps=interp.total_steps,
        actions=interp.total_actions,
        duration_s=interp.meter.elapsed(),
        printed=tuple(interp.printed),
        variables=interp.variables(),
        error=error,
    )


__all__ = ["Budgets", "Interpreter", "RunResult", "run_script"]
