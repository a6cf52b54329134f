"""The one registry of what a script can call: every element method, API function, builtin and
str/list/tuple/dict method is one ``Entry`` (signature, types, docs, flags, implementation).

    from tapir.dsl.registry import REGISTRY, Entry, Namespace

    REGISTRY.element_method("set_text").signature()     # '$element.set_text(text: str) -> None'
    REGISTRY.builtin("len").returns                     # 'int'
    REGISTRY.methods_for(Kind.LIST)                     # what a list element accepts

    double_tap = Entry.define(
        "double_tap(child: element = None) -> None", Namespace.ELEMENT,
        "Tap the element twice.", impl=lambda call: [call.runtime.tap(call.handle, call.args["child"],
                                                                      call.span) for _ in "12"] and None,
        acts_on_device=True, needs_device=True)
    with REGISTRY.extended(double_tap):                 # (or REGISTRY.add for good)
        ...   # the interpreter runs it, the checker checks it, page objects, prompts, completion,
              # hover and signature help show it

Everything that knows the language's API reads it from here: the interpreter dispatches through
``impl``, the checker checks calls against the signatures and infers results from ``returns``,
``tapir.docgen`` prints page-object methods and prompt text from it, and the language service
completes, hovers and helps with signatures from it. Types are written in the vocabulary of
``tapir.dsl.types``.

Implementations by namespace:

* ``ELEMENT`` and ``GLOBAL``: ``impl(call: ApiCall)``; ``call.runtime`` is the device
  (``UIRuntime``, made on first use), ``call.handle`` the element (None for a global),
  ``call.args`` the arguments bound by name and checked against the signature, defaults filled
  in. An element method flagged ``legacy_global`` can also be called as ``name($element, ...)``.
* ``BUILTIN``: ``impl(host, args, kwargs, span)``; ``STR``/``LIST``/``TUPLE``/``DICT``:
  ``impl(host, receiver, args, kwargs, span)``. The argument count and keywords are checked
  from the signature before ``impl`` runs (``Entry.checked``).

Flags say what a call does, for budgets, the checker and the tools: ``acts_on_device`` (counts
against the UI-action budget: taps, text, BACK), ``needs_device`` (reads the device too),
``navigates`` (False: never navigates to the element's screen, as a presence check must not),
``in_prompts`` (False: left out of the prompt text models write scripts from).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tapir.core.errors import ScriptError, Span
from tapir.dsl.types import ALL_KINDS, ANY, Kind, parse_type, runtime_types

if TYPE_CHECKING:
    from tapir.dsl.runtime_api import UIRuntime
    from tapir.dsl.values import ElementHandle

__all__ = [
    "REGISTRY", "ApiCall", "Entry", "Namespace", "Param", "ParamKind", "Registry", "arity_error", "bind_arguments",
]


class Namespace(StrEnum):
    """Where a name lives: what it is called on."""

    ELEMENT = "element"  #: methods of elements: $x.tap()
    GLOBAL = "global"  #: the API's functions: back()
    BUILTIN = "builtin"  #: plain builtins: len(), print()
    STR = "str"  #: methods of strings
    LIST = "list"
    TUPLE = "tuple"
    DICT = "dict"


#: The namespaces of methods on plain values, by the Python type of the receiver.
VALUE_NAMESPACES: dict[type, Namespace] = {
    str: Namespace.STR, list: Namespace.LIST, tuple: Namespace.TUPLE, dict: Namespace.DICT,
}


class ParamKind(StrEnum):
    POSITIONAL = "positional"  #: positional only (before '/')
    EITHER = "either"  #: positional or keyword
    KEYWORD = "keyword"  #: keyword only (after '*')
    VAR_POSITIONAL = "var_positional"  #: *args
    VAR_KEYWORD = "var_keyword"  #: **kwargs


@dataclass(frozen=True)
class Param:
    name: str
    #: A type of the vocabulary (``tapir.dsl.types``): ``str``, ``element``, ``str | dict``...
    type: str = ANY
    doc: str = ""
    #: The default as written in the signature (``None``, ``'down'``); None when required.
    default: str | None = None
    kind: ParamKind = ParamKind.EITHER
    #: For string parameters with a closed set of values (e.g. scroll directions).
    choices: tuple[str, ...] = ()

    @property
    def optional(self) -> bool:
        return self.default is not None or self.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)

    @property
    def default_value(self) -> Any:
        """The default as a value (literals only)."""
        return None if self.default is None else ast.literal_eval(self.default)

    def render(self) -> str:
        """``name: type = default``, ``*name: type``, ``**name: type``."""
        star = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}.get(self.kind, "")
        text = f"{star}{self.name}: {self.type}"
        return text + (f" = {self.default}" if self.default is not None else "")


@dataclass(frozen=True)
class Entry:
    """One callable of the language (see the module docstring)."""

    name: str
    namespace: Namespace
    params: tuple[Param, ...]
    returns: str
    doc: str
    impl: Callable[..., Any] = field(compare=False, repr=False)
    #: Element kinds on which the method is legal (element methods only).
    kinds: frozenset[Kind] = ALL_KINDS
    #: The call acts on the device and counts against the UI-action budget.
    acts_on_device: bool = False
    #: The call needs the device runtime (reads included).
    needs_device: bool = False
    #: False: the call never navigates to its element's screen (presence checks, waits).
    navigates: bool = True
    #: An element method also callable as a function of the element: ``tap($x)``.
    legacy_global: bool = False
    #: Shown as a method of generated page objects (element methods) or of the app (globals).
    page_object: bool = True
    #: Listed in the prompt text of script-writing models (``allow()`` is not: a model does not
    #: grant its own scripts permissions, ``docs/safety.md``).
    in_prompts: bool = True

    def __post_init__(self) -> None:
        parse_type(self.returns)
        for p in self.params:
            parse_type(p.type)

    @classmethod
    def define(cls, signature: str, namespace: Namespace, doc: str, impl: Callable[..., Any], *,
               params: Mapping[str, str] | None = None, choices: Mapping[str, tuple[str, ...]] | None = None,
               **flags: Any) -> Entry:
        """An entry from a signature in Python syntax with the vocabulary's types,
        ``"scroll(direction: str = 'down') -> bool"``; ``params`` documents the parameters."""
        name, parameters, returns = parse_signature(signature)
        docs, closed = params or {}, choices or {}
        unknown = (set(docs) | set(closed)) - {p.name for p in parameters}
        if unknown:
            raise ValueError(f"{name}: no parameter {sorted(unknown)}")
        parameters = tuple(
            Param(p.name, p.type, docs.get(p.name, ""), p.default, p.kind, tuple(closed.get(p.name, ())))
            for p in parameters
        )
        return cls(name, namespace, parameters, returns, doc, impl, **flags)

    # -- what the signature allows -------------------------------------------------------------------

    @property
    def is_action(self) -> bool:
        """The call counts against the UI-action budget (``acts_on_device``)."""
        return self.acts_on_device

    @property
    def min_args(self) -> int:
        """Positional arguments that must be given."""
        return sum(1 for p in self.params if p.kind in (ParamKind.POSITIONAL, ParamKind.EITHER) and p.default is None)

    @property
    def max_args(self) -> int | None:
        """Positional arguments that may be given (None: any number)."""
        if any(p.kind == ParamKind.VAR_POSITIONAL for p in self.params):
            return None
        return sum(1 for p in self.params if p.kind in (ParamKind.POSITIONAL, ParamKind.EITHER))

    @property
    def keywords(self) -> tuple[str, ...]:
        """Parameters that may be given by name."""
        return tuple(p.name for p in self.params if p.kind in (ParamKind.EITHER, ParamKind.KEYWORD))

    @property
    def any_keyword(self) -> bool:
        return any(p.kind == ParamKind.VAR_KEYWORD for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    # -- how it is shown -----------------------------------------------------------------------------

    @property
    def receiver(self) -> str | None:
        """How the receiver is written in a signature: ``$element``, ``$list``, ``str``..."""
        if self.namespace == Namespace.ELEMENT:
            return "$list" if self.kinds <= frozenset({Kind.LIST}) else "$element"
        if self.namespace in (Namespace.STR, Namespace.LIST, Namespace.TUPLE, Namespace.DICT):
            return self.namespace.value
        return None

    def parameter_labels(self) -> list[str]:
        """Each parameter as the signature shows it, with the '/' and '*' markers as Python writes
        them (``sorted(items, /, *, key: function = None)``)."""
        out: list[str] = []
        params = self.params
        for i, p in enumerate(params):
            if p.kind == ParamKind.KEYWORD and (i == 0 or params[i - 1].kind not in (ParamKind.KEYWORD,
                                                                                       ParamKind.VAR_POSITIONAL)):
                out.append("*")
            out.append(p.render())
            if p.kind == ParamKind.POSITIONAL and (i + 1 == len(params) or params[i + 1].kind != ParamKind.POSITIONAL):
                out.append("/")
        return out

    def signature(self, receiver: str | None = "") -> str:
        """``$element.set_text(text: str) -> None``: the form shown in prompts, hovers and stubs.
        ``receiver`` overrides how the receiver is written (None: none)."""
        who = self.receiver if receiver == "" else receiver
        head = f"{who}.{self.name}" if who else self.name
        return f"{head}({', '.join(self.parameter_labels())}) -> {self.returns}"

    # -- calling -------------------------------------------------------------------------------------

    def checked(self) -> Callable[..., Any]:
        """``impl`` behind the argument count and keyword checks of the signature (builtins and
        value methods; API entries bind their arguments with ``bind_arguments``)."""
        impl, name = self.impl, self.name
        lo, hi = self.min_args, self.max_args
        top = hi if hi is not None else 1 << 30
        keywords, any_keyword = frozenset(self.keywords), self.any_keyword

        def check(args: list[Any], kwargs: dict[str, Any], span: Span) -> None:
            if kwargs and not any_keyword:
                for k in kwargs:
                    if k not in keywords:
                        raise ScriptError(f"{name}() got an unexpected keyword argument '{k}'", span)
            n = len(args)
            if n < lo or n > top:
                raise arity_error(name, n, lo, hi, span)

        if self.namespace == Namespace.BUILTIN:
            def builtin(host: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
                if kwargs or not lo <= len(args) <= top:
                    check(args, kwargs, span)
                return impl(host, args, kwargs, span)

            return builtin

        def method(host: Any, receiver: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
            if kwargs or not lo <= len(args) <= top:
                check(args, kwargs, span)
            return impl(host, receiver, args, kwargs, span)

        return method


def parse_signature(text: str) -> tuple[str, tuple[Param, ...], str]:
    """``name(params) -> returns`` in Python syntax -> (name, params, returns)."""
    try:
        tree = ast.parse(f"def {text.strip()}: pass")
    except SyntaxError as exc:
        raise ValueError(f"malformed signature {text!r}: {exc.msg}") from None
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args

    def typed(arg: ast.arg) -> str:
        return ast.unparse(arg.annotation) if arg.annotation is not None else ANY

    params: list[Param] = []
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = ParamKind.POSITIONAL if i < len(a.posonlyargs) else ParamKind.EITHER
        params.append(Param(arg.arg, typed(arg), "", ast.unparse(default) if default is not None else None, kind))
    if a.vararg is not None:
        params.append(Param(a.vararg.arg, typed(a.vararg), kind=ParamKind.VAR_POSITIONAL))
    for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append(Param(arg.arg, typed(arg), "", ast.unparse(kw_default) if kw_default is not None else None,
                            ParamKind.KEYWORD))
    if a.kwarg is not None:
        params.append(Param(a.kwarg.arg, typed(a.kwarg), kind=ParamKind.VAR_KEYWORD))
    returns = ast.unparse(fn.returns) if fn.returns is not None else "None"
    return fn.name, tuple(params), returns


def arity_error(name: str, given: int, lo: int, hi: int | None, span: Span) -> ScriptError:
    """Python-like: ``len() takes exactly 1 argument (2 given)``."""
    def args(n: int) -> str:
        return f"{n} argument{'s' if n != 1 else ''}"

    if lo == hi:
        want = f"exactly {args(lo)}"
    elif given < lo:
        want = f"at least {args(lo)}"
    else:
        want = f"at most {args(hi or 0)}"
    return ScriptError(f"{name}() takes {want} ({given} given)", span)


@dataclass
class ApiCall:
    """What the implementation of an element method or API function receives."""

    entry: Entry
    #: The element the method is called on (None for a global function).
    handle: ElementHandle | None
    #: The arguments by parameter name, checked, defaults filled in.
    args: dict[str, Any]
    span: Span
    #: Makes (once) and returns the device runtime.
    get_runtime: Callable[[], UIRuntime]
    #: The interpreter (None when page objects call): its budgets, output and run settings.
    host: Any = None

    @property
    def runtime(self) -> UIRuntime:
        return self.get_runtime()


def bind_arguments(entry: Entry, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[str, Any]:
    """Bind a call's arguments to an API entry's parameters and check them: count, keywords,
    types, closed choices; an optional parameter given None takes its default."""
    params = entry.params
    hint = f"signature: {entry.signature()}"
    top = entry.max_args
    if top is not None and len(args) > top:
        raise ScriptError(
            f"{entry.name}() takes at most {top} argument{'s' if top != 1 else ''} ({len(args)} given)", span,
            hint=hint,
        )
    values: dict[str, Any] = {p.name: a for p, a in zip(params, args, strict=False)}
    names = set(entry.keywords)
    # the keywords no parameter names go to a **parameter, as a dict (run_flow's arguments)
    extra = next((p.name for p in params if p.kind == ParamKind.VAR_KEYWORD), None)
    rest: dict[str, Any] = {}
    for k, v in kwargs.items():
        if k not in names and extra is not None:
            rest[k] = v
            continue
        if k not in names:
            raise ScriptError(f"{entry.name}() got an unexpected keyword argument '{k}'", span, hint=hint)
        if k in values:
            raise ScriptError(f"{entry.name}() got multiple values for argument '{k}'", span)
        values[k] = v
    from tapir.dsl.safeops import short_repr
    from tapir.dsl.values import QUERY_SCALARS, type_name

    for p in params:
        if p.kind == ParamKind.VAR_KEYWORD:
            values[p.name] = rest
            continue
        v = values.get(p.name)
        if v is None:
            if not p.optional:
                raise ScriptError(f"{entry.name}() missing required argument '{p.name}'", span, hint=hint)
            values[p.name] = p.default_value
            continue
        allowed = runtime_types(p.type)
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


class Registry:
    """Entries by namespace and name, in the order they were added."""

    def __init__(self) -> None:
        self._entries: dict[Namespace, dict[str, Entry]] = {ns: {} for ns in Namespace}
        #: Grows on every change, so what is derived from the entries can be cached.
        self.version = 0
        self._values: tuple[int, dict[str, Any]] = (-1, {})
        self._checked: dict[tuple[Namespace, str], tuple[Entry, Callable[..., Any]]] = {}

    # -- changing ------------------------------------------------------------------------------------

    def add(self, entry: Entry, *, replace: bool = False) -> Entry:
        table = self._entries[entry.namespace]
        if entry.name in table and not replace:
            raise ValueError(f"{entry.namespace.value} {entry.name!r} is already registered")
        table[entry.name] = entry
        self.version += 1
        return entry

    def remove(self, namespace: Namespace, name: str) -> None:
        del self._entries[namespace][name]
        self.version += 1

    @contextmanager
    def extended(self, *entries: Entry) -> Iterator[Registry]:
        """The registry with ``entries`` added (replacing same-named ones) until the block ends."""
        saved = {ns: dict(table) for ns, table in self._entries.items()}
        try:
            for e in entries:
                self.add(e, replace=True)
            yield self
        finally:
            self._entries = saved
            self.version += 1

    # -- reading -------------------------------------------------------------------------------------

    def get(self, namespace: Namespace, name: str) -> Entry | None:
        return self._entries[namespace].get(name)

    def entries(self, namespace: Namespace) -> list[Entry]:
        return list(self._entries[namespace].values())

    def names(self, namespace: Namespace) -> list[str]:
        return list(self._entries[namespace])

    def view(self, namespace: Namespace) -> Mapping[str, Entry]:
        """A live read-only mapping of one namespace."""
        return _View(self, namespace)

    def element_method(self, name: str) -> Entry | None:
        return self._entries[Namespace.ELEMENT].get(name)

    def global_function(self, name: str) -> Entry | None:
        """An API function, or an element method called in the legacy form ``name($x, ...)``."""
        entry = self._entries[Namespace.GLOBAL].get(name)
        if entry is not None:
            return entry
        method = self._entries[Namespace.ELEMENT].get(name)
        return method if method is not None and method.legacy_global else None

    def legacy_globals(self) -> list[Entry]:
        return [e for e in self._entries[Namespace.ELEMENT].values() if e.legacy_global]

    def builtin(self, name: str) -> Entry | None:
        return self._entries[Namespace.BUILTIN].get(name)

    def value_method(self, namespace: Namespace, name: str) -> Entry | None:
        return self._entries[namespace].get(name)

    def methods_for(self, kind: Kind) -> list[Entry]:
        """The element methods legal on ``kind``, in registry order."""
        return [e for e in self._entries[Namespace.ELEMENT].values() if kind in e.kinds]

    def global_names(self) -> list[str]:
        """Every name a script can call without defining it: builtins, API functions, legacy forms."""
        return [*self._entries[Namespace.BUILTIN], *self._entries[Namespace.GLOBAL],
                *(e.name for e in self.legacy_globals())]

    def close_names(self, name: str, namespace: Namespace, n: int = 1) -> list[str]:
        return difflib.get_close_matches(name, list(self._entries[namespace]), n=n)

    # -- for the interpreter ---------------------------------------------------------------------------

    def checked(self, namespace: Namespace, name: str) -> Callable[..., Any] | None:
        """The checked implementation of a builtin or value method (cached per entry)."""
        entry = self._entries[namespace].get(name)
        if entry is None:
            return None
        hit = self._checked.get((namespace, name))
        if hit is not None and hit[0] is entry:
            return hit[1]
        fn = entry.checked()
        self._checked[(namespace, name)] = (entry, fn)
        return fn

    def script_value(self, name: str) -> Any:
        """What a global name means to a script (a ``Builtin`` or an ``ApiFunction``), or None."""
        version, values = self._values
        if version != self.version:
            from tapir.dsl.values import ApiFunction, Builtin

            values = {}
            for e in self.legacy_globals():
                values[e.name] = ApiFunction(e, legacy=True)
            for e in self._entries[Namespace.GLOBAL].values():
                values[e.name] = ApiFunction(e, legacy=False)
            for e in self._entries[Namespace.BUILTIN].values():
                values.setdefault(e.name, Builtin(e.name, e.checked()))
            self._values = (self.version, values)
        return values.get(name)


class _View(Mapping[str, Entry]):
    def __init__(self, registry: Registry, namespace: Namespace) -> None:
        self._registry, self._namespace = registry, namespace

    def __getitem__(self, name: str) -> Entry:
        entry = self._registry.get(self._namespace, name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.names(self._namespace))

    def __len__(self) -> int:
        return len(self._registry.names(self._namespace))


#: The language's registry.
REGISTRY = Registry()

# The entries are defined beside their implementations; importing those modules fills REGISTRY
# (they import this module first, so this runs once everything above exists).
from tapir.dsl import api as _api  # noqa: E402,F401
from tapir.dsl import builtins as _builtins  # noqa: E402,F401
from tapir.dsl import flow_calls as _flow_calls  # noqa: E402,F401
from tapir.dsl import methods as _methods  # noqa: E402,F401
from tapir.dsl import screen_calls as _screen_calls  # noqa: E402,F401
