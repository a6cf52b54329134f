"""``run_flow("login.tap", user="ada")``: one script runs another, as Maestro's ``runFlow``.

The flow is a plain script (it runs on its own too: ``tapir run login.tap --param user=ada``); it
reads its arguments with ``param()``, which therefore sees the arguments of the call and nothing
of the caller's parameters. It runs in the caller's interpreter: the same device, guards, secrets
and budgets (steps, actions and time are shared, not reset), in globals of its own. Flows run
flows up to ``MAX_FLOW_DEPTH`` deep (a flow may run itself, bounded so).

A path is relative to the calling script's folder and must stay inside the folder of the script
the run started with (no absolute paths, no ``..`` above it, no symbolic link out of it), and
name a ``.tap`` file. An error in the flow is reported at its line in the flow, with the call
site in the caller (file, line, column) in its hint; ``tapir check`` checks the flow against the
caller's document and the call's arguments against the ``param()`` names the flow reads
(``tapir.dsl.flow.FlowChecker``, with ``flow_signature`` from here).
"""

from __future__ import annotations

import difflib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from tapir.core.diagnostics import ERROR
from tapir.core.errors import ScriptError, Span, TapirError
from tapir.dsl import ast as A
from tapir.dsl.registry import REGISTRY, ApiCall, Entry, Namespace
from tapir.dsl.symbols import SymbolTable

__all__ = ["MAX_FLOW_DEPTH", "FlowPathError", "FlowSignature", "check_flow", "flow_signature", "resolve_flow"]

#: How deep flows may run flows (a flow that runs itself stops here, with the chain in the error).
MAX_FLOW_DEPTH = 10
#: The types of a flow's arguments: they become its parameters, which are text.
_ARGUMENT_TYPES = (str, int, float, bool)


class FlowPathError(ValueError):
    """A flow path that may not be run: outside the script's folder, not a .tap file, missing."""


def _root_of(filename: str) -> Path:
    """The folder a run's flows must stay in: the folder of the script it started with."""
    if not filename or filename.startswith("<"):  # the REPL, standard input: the working folder
        return Path.cwd().resolve()
    return Path(filename).resolve().parent


def resolve_flow(caller: str, path: str, root: Path | None = None) -> tuple[Path, str]:
    """The file ``path`` names, seen from the script ``caller`` (a file name as runs name it), and
    the name to show for it (``caller``'s folder joined with ``path``). ``root``: the folder flows
    must stay in (default: ``caller``'s folder). ``FlowPathError`` says why a path is refused."""
    if not path.strip():
        raise FlowPathError("run_flow() needs the path of a .tap file")
    if os.path.isabs(path) or path.startswith("~"):
        raise FlowPathError(f"{path!r} is an absolute path: a flow is named relative to the calling script's folder")
    if not path.endswith(".tap"):
        raise FlowPathError(f"{path!r} is not a .tap script")
    here = _root_of(caller)
    top = root if root is not None else here
    target = (here / path).resolve()
    if not target.is_relative_to(top):
        raise FlowPathError(f"{path!r} is outside the script's folder {str(top)!r}: flows must be in it or below it")
    if not target.is_file():
        raise FlowPathError(f"no such flow: {path!r} (looked for {str(target)!r})")
    folder = "" if caller.startswith("<") else os.path.dirname(caller)
    shown = os.path.normpath(os.path.join(folder, path))
    if os.path.isabs(shown):  # (an editor's absolute path) shown from the working folder when inside it
        relative = os.path.relpath(shown)
        shown = shown if relative.startswith("..") else relative
    return target, shown


@dataclass(frozen=True)
class FlowSignature:
    """The parameters a flow reads: ``param("name")`` calls with a literal name (``required``:
    without a default). ``open``: it also reads a parameter whose name is not a literal, so any
    argument may be read."""

    required: frozenset[str]
    optional: frozenset[str]
    open: bool

    @property
    def names(self) -> frozenset[str]:
        return self.required | self.optional


def flow_signature(module: A.Module) -> FlowSignature:
    """What ``module`` reads with ``param()`` (see ``FlowSignature``)."""
    required: set[str] = set()
    optional: set[str] = set()
    is_open = False
    for node in module.walk():
        if not (isinstance(node, A.Call) and isinstance(node.func, A.Name) and node.func.id == "param"):
            continue
        name = node.args[0] if node.args else next((k.value for k in node.keywords if k.name == "name"), None)
        if not (isinstance(name, A.Constant) and isinstance(name.value, str)):
            is_open = True
            continue
        has_default = len(node.args) > 1 or any(k.name == "default" for k in node.keywords)
        (optional if has_default else required).add(name.value)
    return FlowSignature(frozenset(required - optional), frozenset(optional), is_open)


# -- running ----------------------------------------------------------------------------------------


def _run_flow(call: ApiCall) -> None:
    from tapir.dsl.budget import check_source_size
    from tapir.dsl.compiler import Compiler, Frame
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.parser import parse

    host = call.host
    if host is None:
        raise ScriptError("run_flow() runs only inside a script", call.span)
    caller: str = host.filename
    stack: list[tuple[str, Span]] = getattr(host, "flow_stack", [])
    if len(stack) >= MAX_FLOW_DEPTH:
        chain = " -> ".join([*(name for name, _ in stack), caller])
        raise ScriptError(f"flows run flows more than {MAX_FLOW_DEPTH} deep: {chain}", call.span,
                          hint="a flow that runs itself needs a condition to stop")
    root = Path(getattr(host, "flow_root", None) or _root_of(stack[0][0] if stack else caller))
    try:
        target, shown = resolve_flow(caller, call.args["path"], root)
    except FlowPathError as exc:
        raise ScriptError(str(exc), call.span) from None
    params: dict[str, str] = {}
    for name, value in call.args["params"].items():
        if type(value) not in _ARGUMENT_TYPES:
            raise ScriptError(f"run_flow() argument '{name}' must be str, int, float or bool (a flow reads its "
                              f"arguments as text with param()), not {type(value).__name__}", call.span,
                              hint="a flow reads secrets itself, with secret('NAME')")
        params[name] = str(value)
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(f"cannot read the flow {shown}: {exc}", call.span) from None
    check_source_size(text, host.budgets, shown)
    saved = (host.filename, host.source, host.inputs, host.globals)
    stack.append((caller, call.span))
    host.flow_stack = stack
    host.flow_root = str(root)
    try:
        module = parse(text, shown, clock=lambda: host.meter.check_time(call.span))
        host.filename, host.source = shown, text
        host.inputs = ScriptInputs(params, host.inputs.safety)
        host.globals = {}  # globals of its own (the compiler takes them from the host)
        body, _ = Compiler(host).module(module)
        body(Frame(host.globals, None))  # the meter (steps, actions, time) stays the caller's
    except TapirError as exc:
        exc.with_source(text, shown)
        where = f"{caller}:{call.span.line}:{call.span.column}"
        line = _line(saved[1], call.span.line)
        ran = f"in the flow {shown}, run from {where}" + (f": {line}" if line else "")
        exc.hint = _chained(exc.hint, ran)
        raise
    finally:
        host.filename, host.source, host.inputs, host.globals = saved
        stack.pop()
        if not stack:  # the outermost flow ended: the REPL's next input may start from another folder
            host.flow_root = None


def _chained(hint: str | None, ran: str) -> str:
    """``hint`` with the call site ``ran`` below it; the same call site again (a flow running
    itself) is counted rather than repeated."""
    if not hint:
        return ran
    lines = hint.split("\n  ")
    last = lines[-1]
    base, _, times = last.partition(" (x")
    if base == ran:
        count = int(times.rstrip(")")) if times.rstrip(")").isdigit() else 1
        lines[-1] = f"{ran} (x{count + 1})"
    else:
        lines.append(ran)
    return "\n  ".join(lines)


def _line(source: str | None, number: int) -> str | None:
    lines = (source or "").splitlines()
    return lines[number - 1].strip() if 1 <= number <= len(lines) else None


def run_flow_entry() -> Entry:
    """The registry entry of ``run_flow``."""
    return Entry.define(
        "run_flow(path: str, **params: str | int | float | bool) -> None", Namespace.GLOBAL,
        "Run another script (a flow shared by several scripts, e.g. a login) with arguments, which it reads "
        "with param(). The path is relative to this script's folder and stays inside it; the flow runs on the "
        "same device, under the same guards and budgets.", _run_flow,
        params={"path": "the flow's .tap file, relative to this script's folder",
                "params": "the flow's parameters, as its param() calls name them"},
        navigates=False, page_object=False, in_prompts=False)


REGISTRY.add(run_flow_entry())



# -- checking ---------------------------------------------------------------------------------------

#: The flows being checked in this thread, outermost first (a flow that runs itself, directly or
#: through others, is checked once), with the folder the outermost script is in.
_checking = threading.local()
#: At most this many of a flow's problems are reported at the call (then a count of the rest).
_SHOWN = 5

Problem = tuple[str, str, str, list[str]]


def check_flow(caller: str | None, path: str, keywords: list[str], symbols: SymbolTable | None) -> list[Problem]:
    """The problems of ``run_flow(path, **keywords)`` in the script ``caller`` (None: one with no
    file): ``(where, code, message, fixes)``, ``where`` being ``"path"`` (the path argument) or
    ``"call"``. The flow is parsed and analysed with ``symbols``, as the caller is."""
    from tapir.dsl.analysis import analyze
    from tapir.dsl.parser import parse_tolerant

    stack: list[Path] = getattr(_checking, "stack", None) or []
    root = getattr(_checking, "root", None) if stack else None
    try:
        target, shown = resolve_flow(caller or "<script>", path, root)
    except FlowPathError as exc:
        return [("path", "flow-path", str(exc), [])]
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [("path", "flow-path", f"cannot read the flow {shown}: {exc}", [])]
    result = parse_tolerant(text, shown)
    out: list[Problem] = []
    if target not in stack:  # (a flow that runs itself is checked once)
        _checking.stack = [*stack, target]
        if not stack:
            _checking.root = _root_of(caller or "<script>")
        try:
            found = [*result.errors, *analyze(result.module, symbols, str(target)).diagnostics]
        finally:
            _checking.stack = stack
        errors = sorted((d for d in found if d.severity == ERROR), key=lambda d: (d.span or result.module.span))
        for d in errors[:_SHOWN]:
            where = f"{shown}:{d.span.line}:{d.span.column}" if d.span is not None else shown
            out.append(("call", "flow-error", f"in the flow {where}: {d.message} [{d.code}]", []))
        if len(errors) > _SHOWN:
            out.append(("call", "flow-error", f"the flow {shown} has {len(errors) - _SHOWN} more errors "
                                              f"(tapir check {shown})", []))
    signature = flow_signature(result.module)
    for name in keywords:
        if name not in signature.names and not signature.open:
            reads = ", ".join(sorted(signature.names)) or "no parameters"
            close = difflib.get_close_matches(name, sorted(signature.names), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            out.append(("call", "arg-count", f"the flow {shown} reads no parameter '{name}'{hint} (it reads: {reads})",
                        close))
    for name in sorted(signature.required - set(keywords)):
        out.append(("call", "arg-count", f"the flow {shown} needs the argument '{name}' (it reads param({name!r}) "
                                         f"without a default)", []))
    return out
