"""The sandboxed interpreter: the object front ends run scripts with.

Sandboxed by construction:

* Only node types listed in the compiler's dispatch tables compile (default deny); node fields
  are checked too, so a hand-built AST cannot smuggle a host object in a ``Constant``.
* Scripts see only script values (``tapir.dsl.values``). Names resolve to the script's own
  variables, then the registry's builtins and API functions (``tapir.dsl.registry``); attribute access
  exists only as a method call through a per-type allow-list, and names starting with ``_`` are
  refused. There is no way to name a Python object.
* Every loop iteration, statement and expression is charged to the step budget; allocations, UI
  actions, call depth, printed output and wall-clock time have budgets too (``dsl.budget``).
* Python exceptions never leave: script mistakes become ``ScriptError`` with Python's message,
  anything unexpected an "internal error" ``ScriptError``; all carry the span.

``run_script`` runs one script and reports a ``RunResult``; an ``Interpreter`` keeps its globals
and its device runtime across ``execute`` calls, each with fresh budgets (a REPL runs one
statement at a time this way), and ``interrupt()`` stops the running one at its next step or UI
call. The interpreter reaches the device only through the ``UIRuntime`` Protocol, made by a
factory on the first UI call.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tapir.core.errors import (
    ActionError,
    DeviceError,
    SandboxViolation,
    ScriptError,
    Span,
    TapirError,
)
from tapir.core.terminal import terminal_safe
from tapir.dsl import ast as A
from tapir.dsl.api import expect_handle
from tapir.dsl.budget import Budgets, Meter, check_source_size, out_of_memory
from tapir.dsl.builtins import materialize
from tapir.dsl.compiler import Compiler, Frame, convert_exception, span_of
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace, bind_arguments
from tapir.dsl.runtime_api import RuntimeFactory, UIRuntime
from tapir.dsl.safeops import check_key, short_repr
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.types import ALL_KINDS, LIST_KINDS, Kind
from tapir.dsl.values import (
    ApiFunction,
    Builtin,
    Child,
    ElementHandle,
    Index,
    Match,
    ScriptFunction,
    type_name,
)
from tapir.dsl.vocabulary import foreign

Output = Callable[[str], None]


def print_line(line: str, *, flush: bool = False) -> None:
    """Print one line of a script's output to standard output. Text the stream cannot encode
    (a lone surrogate, "\\ud800", which Python strings may hold) is written as escapes instead
    of failing: the script printed it, the run must not break on it. Control characters are
    written as escapes too (``tapir.core.terminal``): a script cannot clear or rewrite the
    user's terminal."""
    stream = sys.stdout
    line = terminal_safe(line)
    try:
        stream.write(line + "\n")
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(line.encode(encoding, "backslashreplace").decode(encoding) + "\n")
    if flush:
        stream.flush()
_SEQUENCE_NAMES: dict[type, str] = {list: "list", tuple: "tuple", str: "string", range: "range object"}

#: Python frames one script-level call may use (statement and expression closures in between).
_FRAMES_PER_CALL = 40
_MAX_RECURSION_LIMIT = 450_000


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
    #: What ``collect`` returned in the child process (``tapir.dsl.isolation``), else None.
    collected: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None


# ---------------------------------------------------------------------------------------------
# The interpreter


class Interpreter:
    """Runs modules against one set of globals (so a REPL can run one statement at a time).

    ``runtime_factory`` is called on the first UI call, never before; ``symbols`` (the app
    document's symbol table), when given, makes unknown ``$names`` fail before any device call
    and enables kind checks (``set_text`` only on inputs); ``inputs`` are the run's parameters
    (``param()``).
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
        inputs: ScriptInputs | None = None,
    ) -> None:
        self.budgets = budgets or Budgets()
        self.inputs = inputs or ScriptInputs()
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
        #: The text of the module being run (for assertion messages); None when unknown.
        self.source: str | None = None
        self.total_steps = 0
        self.total_actions = 0

    # -- running ------------------------------------------------------------------------------

    def execute(self, module: A.Module | str, source: str | None = None) -> Any:
        """Run ``module`` (or script text, parsed here) with fresh budgets; return the value of a
        final expression statement (for a REPL to echo), else None. Raises the ``TapirError``
        that stopped it.

        Everything counts against the time budget: parsing text, compiling, running, and the
        output flushed at the end; text longer than ``Budgets.max_source`` is refused unread."""
        self.meter = self._fresh_meter()
        if type(module) is str:
            source = module
            module = self._parse(module)
        if type(module) is not A.Module:
            raise SandboxViolation(f"expected a Module to run, got {type(module).__name__}")
        self.source = source
        old_limit = sys.getrecursionlimit()
        wanted = min(_MAX_RECURSION_LIMIT, 3000 + self.budgets.max_depth * _FRAMES_PER_CALL)
        if wanted > old_limit:
            sys.setrecursionlimit(wanted)
        failed = True
        try:
            body, last = Compiler(self).module(module)
            body(Frame(self.globals, None))
            failed = False
            return last[0] if last else None
        except TapirError as exc:
            exc.with_source(source, self.filename)
            raise
        except Exception as exc:  # compiling a malformed hand-built AST, or nesting too deep
            if self.debug and not isinstance(exc, RecursionError | MemoryError):
                raise
            raise convert_exception(exc, span_of(module)).with_source(source, self.filename) from None
        finally:
            if wanted > old_limit:
                sys.setrecursionlimit(old_limit)
            self.total_steps += self.meter.steps
            self.total_actions += self.meter.actions
            # A failure to write the last line must not hide the error that stopped the script.
            flushed = self._flush(span_of(module))
            if flushed is not None and not failed:
                raise flushed.with_source(source, self.filename)

    def _parse(self, text: str) -> A.Module:
        from tapir.dsl.parser import parse

        check_source_size(text, self.budgets, self.filename)
        span = Span(1, 1, 1, 1, 0, 0)
        return parse(text, self.filename, clock=lambda: self.meter.check_time(span))

    def interrupt(self, reason: str = "interrupted") -> None:
        """Stop the running ``execute`` with ``Interrupted(reason)`` at its next step or UI call
        (safe from a signal handler; a UI call already under way finishes first). Without a run
        under way it does nothing: the next ``execute`` starts with fresh budgets."""
        self.meter.request_interrupt(reason)

    @property
    def active_runtime(self) -> UIRuntime | None:
        """The device runtime if a UI call (or ``runtime()``) has made it, else None."""
        return self._runtime

    def _fresh_meter(self) -> Meter:
        # Compiled closures of earlier runs (functions a REPL defined) hold the meter object,
        # so it is reset in place rather than replaced.
        m = self.meter
        m.__init__(self.budgets)  # type: ignore[misc]
        return m

    def variables(self) -> dict[str, str]:
        """The script's global variables, each as a short repr (for summaries and the REPL).

        Each repr costs at most a few hundred characters of work whatever the value, and the
        whole summary stops at the run's deadline (variables left are shown as not summarised)."""
        out: dict[str, str] = {}
        deadline = self.meter.deadline
        for i, (k, v) in enumerate(self.globals.items()):
            if i % 256 == 255 and time.monotonic() > deadline:
                out.update({name: "<not summarised: the time budget ran out>" for name in list(self.globals)[i:]})
                break
            out[k] = short_repr(v)
        return out

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

    def _flush(self, span: Span | None) -> TapirError | None:
        """Write out a last line printed without a newline; the error if the output failed."""
        if not self._partial:
            return None
        line, self._partial = self._partial, ""
        self.printed.append(line)
        if self._output is None:
            return None
        try:
            self._output(line)
        except TapirError as exc:
            return exc
        except Exception as exc:
            return ScriptError(f"the script's output could not be written: {type(exc).__name__}: {exc}", span)
        return None

    def call(self, fn: Any, args: list[Any], span: Span, kwargs: dict[str, Any] | None = None) -> Any:
        """Call a script value with arguments (used by ``key=`` functions and call expressions)."""
        tf = type(fn)
        if tf is ScriptFunction:
            return fn.invoke(_bind(fn, args, kwargs or {}, span, self.meter), span)
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
                    what = _SEQUENCE_NAMES[tv]
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
            except MemoryError:
                raise out_of_memory(span) from None
            except Exception as exc:
                raise DeviceError(f"could not start the device runtime: {type(exc).__name__}: {exc}", span) from exc
            self._runtime = rt
        return rt

    def has_device(self) -> bool:
        """Whether the run has a device (made already, or to be made on first use)."""
        return self._runtime is not None or self._factory is not None

    def _device_call(self, what: str, span: Span, fn: Callable[[UIRuntime], Any]) -> Any:
        """Run ``fn`` on the runtime (made now if needed), with its errors given ``span``."""
        return self._guarded(what, span, lambda: fn(self.runtime(span, what)))

    def _guarded(self, what: str, span: Span, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` (which may use the device), with its errors given ``span``; then check the
        clock and whether an interrupt was asked for meanwhile."""
        self.meter.check_interrupt(span)
        try:
            result = fn()
        except TapirError as exc:
            if exc.span is None:
                exc.span = span
            raise
        except MemoryError:
            raise out_of_memory(span) from None
        except Exception as exc:
            if self.debug:
                raise
            raise ScriptError(f"internal error in the device runtime during {what}: {type(exc).__name__}: {exc}",
                              span) from None
        self.meter.check_interrupt(span)
        self.meter.check_time(span)
        return result

    def _kind_of(self, handle: ElementHandle) -> Kind | None:
        """The element kind of what ``handle`` selects, from the symbol table (None: unknown)."""
        if self.symbols is None:
            return None
        sym = self.symbols.element(handle.name)
        if sym is None:
            return None
        kind: Kind | None = sym.kind
        for sel in handle.path:
            if type(sel) is Index or type(sel) is Match:
                kind = sym.item_kind if sym is not None else None
            elif type(sel) is Child:
                sym = self.symbols.element(sel.name)
                kind = sym.kind if sym is not None else None
        return kind

    def _require_list(self, handle: ElementHandle, what: str, span: Span) -> None:
        kind = self._kind_of(handle)
        if kind is not None and kind not in LIST_KINDS:
            raise ActionError(f"{what} needs a list element, but {handle} is a {kind.value}", span)

    def _item_count(self, handle: ElementHandle, span: Span, what: str) -> int:
        self._require_list(handle, what, span)
        n = self._device_call(what, span, lambda rt: rt.item_count(handle, span))
        if type(n) is not int or n < 0:
            raise ScriptError(f"internal error: the device runtime returned {type(n).__name__} as item count", span)
        return n

    def _item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        item = self._device_call(f"{handle}[{index}]", span, lambda rt: rt.item(handle, index, span))
        return expect_handle(item, span)

    def _items(self, handle: ElementHandle, span: Span) -> Iterator[ElementHandle]:
        what = f"iterating over {handle}"
        self._require_list(handle, what, span)
        lazy = self._device_call(what, span, lambda rt: getattr(rt, "iter_items", None))
        if lazy is None:
            n = self._item_count(handle, span, what)
            for i in range(n):
                yield self._item(handle, i, span)
            return
        # Each item is fetched when the loop asks for it, so a loop that breaks early does not
        # make the device scroll through the whole list first.
        items = iter(lazy(handle, span))
        while (item := self._guarded(what, span, lambda: next(items, None))) is not None:
            yield expect_handle(item, span)

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
        entry = REGISTRY.element_method(name)
        if entry is None:
            word = foreign(name, Namespace.ELEMENT)
            if word is not None:  # Appium's or Maestro's word (tapir.dsl.vocabulary)
                raise ScriptError(f"element has no method '{name}'; did you mean '{word.name}'?", span,
                                  hint=f"'{name}' is a word of {word.origin}; in Tapir: $element.{word.call}")
            close = REGISTRY.close_names(name, Namespace.ELEMENT)
            raise ScriptError(
                f"element has no method '{name}'", span,
                hint=(f"did you mean '{close[0]}'? " if close else "") + "element methods: "
                + ", ".join(REGISTRY.names(Namespace.ELEMENT)),
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

    def _api_call(self, entry: Entry, handle: ElementHandle | None, args: list[Any],
                  kwargs: dict[str, Any], span: Span) -> Any:
        values = bind_arguments(entry, args, kwargs, span)
        if handle is not None and entry.kinds != ALL_KINDS:
            kind = self._kind_of(handle)
            if kind is not None and kind not in entry.kinds:
                legal = ", ".join(sorted(k.value for k in entry.kinds))
                raise ActionError(f"{entry.name}() is not possible on {handle}: it is a {kind.value}", span,
                                  hint=f"{entry.name}() works on: {legal}")
        if entry.acts_on_device:
            self.meter.count_action(entry.name, span)
        what = f"{entry.name}()"
        # the device is made only when the implementation asks for it (call.runtime)
        call = ApiCall(entry, handle, values, span, lambda: self.runtime(span, what), self)
        return self._guarded(what, span, lambda: entry.impl(call))


def _bind(fn: ScriptFunction, args: list[Any], kwargs: dict[str, Any], span: Span, meter: Meter) -> dict[str, Any]:
    """Python's argument binding for a ``def`` (positional, keywords, defaults)."""
    params = fn.params
    n = len(params)
    if not kwargs and len(args) == n:
        return dict(zip(params, args, strict=True))
    if n > 64:  # binding walks every parameter (defaults)
        meter.charge(n // 16, span)
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
# The one entry point for front ends


def run_script(
    script: A.Module | str,
    runtime_factory: RuntimeFactory | None = None,
    budgets: Budgets | None = None,
    output: Output | None = print_line,
    *,
    symbols: SymbolTable | None = None,
    filename: str = "<script>",
    source: str | None = None,
    debug: bool = False,
    inputs: ScriptInputs | None = None,
) -> RunResult:
    """Parse (if given text) and run a script; never raises for a script's own failure.

    The error that stopped the script (syntax, runtime, budget, device) is in
    ``RunResult.error`` with the source attached, so ``error.render()`` shows file:line:col and
    a caret. The device runtime, if one was made, is closed before returning.

    It runs in this process with the interpreter's checks only: the deadline is looked at between
    operations, so one long operation in C that cannot be charged step by step (a ``dict`` of
    colliding keys) runs to its end first. For scripts you did not write use
    ``tapir.run.Runner`` (a child process under OS limits by default) or
    ``tapir.dsl.isolation.run_script_isolated``.
    """
    interp = Interpreter(runtime_factory, budgets, output, symbols=symbols, filename=filename, debug=debug,
                         inputs=inputs)
    error: TapirError | None = None
    if isinstance(script, str):
        source = script
    try:
        interp.execute(script, source)
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


__all__ = ["Budgets", "Interpreter", "RunResult", "print_line", "run_script"]
