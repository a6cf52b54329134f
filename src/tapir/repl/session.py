"""One REPL session: statements run live on the device, one after another, in one environment.

    session = ReplSession(device="sim:music", document=Path("samples/music/music.yaml"))
    session.handle('$songs_screen__song_list.match("Lanterns").tap()')   # True: it ran
    session.handle("$now_playing_screen__title_text.get_text()")         # prints 'Lanterns'
    session.handle(":save play.tap")                                      # a script of what ran
    session.close()

The session is what the terminal front end (``tapir.repl.terminal``) and the line-by-line loop
(``tapir.repl.lines``) share; it never reads input itself. Each input is

1. **checked** as ``tapir check`` checks a script, in the context of the statements that ran
   before it (``Transcript``): errors are shown with ``<repl>:line:col`` and a caret and nothing
   runs; warnings are shown and it runs;
2. **run** one top-level statement at a time in the interpreter's one environment
   (``Interpreter.execute``), each with fresh budgets (``--max-actions`` and the others apply per
   statement); the device runtime is made on the first UI call and kept;
3. **echoed**: the value of an expression statement is printed as Python's REPL prints it (None
   is not). A script's ``print`` and the echo go to ``out``, errors to ``err``.

A statement that fails shows its error exactly as ``tapir run`` does and the session goes on;
the statements of the input after it are not run. Ctrl-C while a statement runs stops it
between two device commands (``tapir.repl.interrupts``). Lines starting with ``:`` are meta
commands (``tapir.repl.meta``).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from tapir.core.diagnostics import ERROR, Diagnostic
from tapir.core.document import AppDocument
from tapir.core.errors import DocumentError, Interrupted, TapirError, UsageError
from tapir.core.positions import Span, normalize_newlines
from tapir.core.safety import Safety
from tapir.core.terminal import terminal_safe
from tapir.dsl import ast as A
from tapir.dsl.budget import Budgets
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import Interpreter
from tapir.dsl.parser import parse
from tapir.dsl.runtime_api import RuntimeFactory
from tapir.dsl.safeops import to_repr
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.values import ElementHandle, ScriptFunction, type_name
from tapir.repl.context import handle_source, preamble
from tapir.repl.device import Confirm, DeviceLink, RecentCalls, open_trace_file
from tapir.repl.interrupts import Interrupts
from tapir.repl.transcript import Transcript
from tapir.service import (
    CompletionItem,
    CompletionKind,
    Hover,
    InputStatus,
    LineIndex,
    LoadedDocument,
    Workspace,
    input_status,
)
from tapir.service.completion import complete
from tapir.service.context import open_string
from tapir.service.hover import hover
from tapir.service.sessions import session_document

__all__ = ["REPL_BUDGETS", "REPL_FILENAME", "ReplSession", "session_document"]

#: The file name errors of typed input carry: ``<repl>:line:col``.
REPL_FILENAME = "<repl>"
#: Per-statement budgets of a session: more UI actions and time than a script's defaults (one
#: statement may be a loop over a list), still a stop for a runaway loop on a real phone.
REPL_BUDGETS = Budgets(max_actions=100, timeout_s=300.0)
#: The name being typed before the cursor (completion offers the session's names it starts).
_NAME_BEFORE = re.compile(r"[A-Za-z_]\w*$")
#: Values longer than this are cut when echoed.
_ECHO_LIMIT = 10_000


class ReplSession:
    """A session's state and its inputs (see the module docstring)."""

    def __init__(
        self,
        *,
        device: str | None = None,
        document: Path | None = None,
        budgets: Budgets | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
        workspace: Workspace | None = None,
        trace: str | None = None,
        confirm: Confirm | None = None,
        cwd: Path | None = None,
        runtime_factory: RuntimeFactory | None = None,
        adb_port: int | None = None,
        debug: bool = False,
        safety: Safety | None = None,
    ) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.ws = workspace or Workspace()
        self.cwd = (cwd or Path.cwd()).resolve()
        self.device = device
        self.budgets = budgets or REPL_BUDGETS
        self.debug = debug
        #: The document's file and its loaded form (None: the session has no document yet).
        self.document_path: Path | None = None
        self.loaded: LoadedDocument | None = None
        self.transcript = Transcript()
        self.interrupts = Interrupts(self._interrupt)
        self.calls = RecentCalls(file=open_trace_file(trace))
        self.link = DeviceLink(device, None, self.interrupts, self.calls, confirm=confirm, adb_port=adb_port,
                               safety=safety)
        #: What the session may do (``--allow``, ``allow()``; sensitive taps are asked, docs/safety.md).
        self.safety = self.link.safety
        self.interp = Interpreter(runtime_factory or self.link.factory(), self.budgets, self._print_line,
                                  filename=REPL_FILENAME, debug=debug, inputs=ScriptInputs(safety=self.safety))
        #: Inputs run so far (the trace stamps each call with its input's number).
        self.inputs = 0
        #: Inputs that ended in an error (the line-by-line loop's exit status).
        self.failures = 0
        #: Set by :quit; the front end leaves after the input that set it.
        self.quit_requested = False
        #: Statements, UI actions and seconds of the last input (the toolbar).
        self.last_run: tuple[int, int, float] | None = None
        # The completer runs in a thread of its own; the workspace's caches are not thread-safe.
        self._lock = threading.Lock()
        self._virtual = self.cwd / "<repl>.tap"
        if document is not None:
            self.use_document(document)

    # -- the document ----------------------------------------------------------------------------

    @property
    def symbols(self) -> SymbolTable | None:
        return self.loaded.symbols if self.loaded is not None else None

    def use_document(self, path: Path) -> AppDocument:
        """Make ``path`` the session's document (``DocumentError`` listing its problems when it
        cannot be used); a device already connected stays up and is bound to it."""
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"{path} {'is a directory' if path.is_dir() else 'does not exist'}")
        with self._lock:
            loaded = self.ws.load_document(path)
        if loaded.document is None or loaded.symbols is None or loaded.errors:
            if loaded.errors:
                raise DocumentError(f"{path} cannot be used", list(loaded.errors), filename=str(path),
                                    source=loaded.text)
            raise UsageError(f"{path} is a compiled symbol table: a session needs the app document itself "
                             "(its identifiers and paths)")
        self.link.use_document(loaded.document)
        self.loaded, self.document_path = loaded, path.resolve()
        self.interp.symbols = loaded.symbols
        return loaded.document

    # -- input ---------------------------------------------------------------------------------------

    @staticmethod
    def input_status(text: str) -> InputStatus:
        """Whether typed ``text`` is complete (run it), incomplete (read a line more) or invalid."""
        if text.lstrip().startswith(":"):
            return InputStatus("complete")
        return input_status(text)

    def handle(self, text: str) -> bool:
        """Run one input (code or a ``:command``); False when it failed."""
        if not text.strip():
            return True
        try:
            if text.lstrip().startswith(":"):
                from tapir.repl.meta import run_meta

                ok = run_meta(self, text.strip())
            else:
                ok = self.run_code(text)
        except Exception as exc:  # a bug in Tapir: said plainly, and the session goes on
            if self.debug:
                import traceback

                traceback.print_exc(file=self.err)
            self.error(f"tapir: internal error: {type(exc).__name__}: {exc}"
                       + ("" if self.debug else " (start the REPL with --debug for a traceback)"))
            ok = False
        if not ok:
            self.failures += 1
        return ok

    def run_code(self, text: str, origin: str = REPL_FILENAME, *, echo: bool = True) -> bool:
        """Check ``text``, then run its statements one by one (see the module docstring)."""
        text = normalize_newlines(text)
        blocking, shown = self.check(text, origin)
        for d in shown:
            self.error(d.render(text, origin))
        if blocking:
            return False
        try:
            module = parse(text, filename=origin)
        except TapirError as exc:  # the check found no error, so this is a bug; still shown plainly
            self.error(exc.with_source(text, origin).render())
            return False
        self.inputs += 1
        self.calls.begin(self.inputs, origin, text)
        started, actions, count = time.monotonic(), self.interp.total_actions, 0
        try:
            if module.docstring is not None and not module.body and echo:
                self.transcript.add(text.strip(), origin)
                self.write(repr(module.docstring))
                return True
            # armed for the whole input: a Ctrl-C between two statements stops the rest too
            with self.interrupts.armed():
                for stmt in module.body:
                    if not self._run_statement(stmt, text, origin, echo):
                        return False
                    count += 1
            return True
        finally:
            self.last_run = (count, self.interp.total_actions - actions, time.monotonic() - started)

    def _run_statement(self, stmt: A.Stmt, text: str, origin: str, echo: bool) -> bool:
        self.interp.filename = origin
        try:
            self.interrupts.check()  # asked for after the statement before ended
            value = self.interp.execute(A.Module(stmt.span, (stmt,)), text)
            self.interrupts.check()  # asked for after this statement's last step
        except Interrupted as exc:
            self.link.forget_screen()
            if exc.span is None:
                exc.span = stmt.span
            if _is_terminal(self.err):
                self.err.write("\n")  # the terminal echoed ^C where the cursor was
            self.error(exc.with_source(text, origin).render())
            return False
        except TapirError as exc:
            if self.debug and exc.__cause__ is not None:
                import traceback

                traceback.print_exception(exc.__cause__, file=self.err)
            self.error(exc.with_source(text, origin).render())
            return False
        self.transcript.add(text[stmt.span.offset:stmt.span.end_offset], origin)
        if echo and value is not None:
            shown = to_repr(value, None, None, limit=_ECHO_LIMIT + 1)
            self.write(shown if len(shown) <= _ECHO_LIMIT else shown[:_ECHO_LIMIT] + "...")
        return True

    def _interrupt(self, reason: str) -> None:
        self.interp.interrupt(reason)

    # -- the language service on the session ---------------------------------------------------------

    def _context(self, text: str) -> tuple[str, int]:
        """The text the service sees for ``text``: the session's names it mentions
        (``tapir.repl.context``), then ``text``; and where ``text`` starts in it. A first empty
        line keeps a ``# doc:`` comment typed as input from naming the document: the session's
        is passed explicitly."""
        prefix = "\n" + preamble(self.interp.globals, self.transcript.defs, text)
        return prefix + text, len(prefix)

    def check(self, text: str, origin: str = REPL_FILENAME) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """The problems of ``text`` after the session so far: (those that refuse it, those shown),
        with positions in ``text``."""
        full, start = self._context(text)
        # a :load-ed script is checked in its own folder: the flows it runs are named from there
        where = self._virtual if origin == REPL_FILENAME else (self.cwd / origin).parent / self._virtual.name
        with self._lock:
            result = self.ws.check(where, full, doc=self.document_path)
            policy = self.ws.warnings_policy(self._virtual)
        lines_before = full.count("\n", 0, start)
        shown: list[Diagnostic] = []
        for d in result.shown(policy):
            if d.span is None or d.span.offset < start:
                continue
            span = _shift(d.span, lines_before, start)
            hint = d.hint
            if d.code == "no-document":
                hint = "load one with :document APP.yaml, or start the REPL with --doc APP.yaml"
            shown.append(dataclasses.replace(d, span=span, hint=hint, fixes=()))
        blocking = [d for d in shown if d.severity == ERROR or (policy == "error" and d.severity == "warning")]
        return blocking, shown

    def complete(self, text: str, cursor: int) -> list[CompletionItem]:
        """The service's completions at ``cursor`` (an offset in ``text``), and the session's names
        that start with the name being typed; ``replace`` spans are in ``text``'s positions."""
        full, start = self._context(text)
        with self._lock:
            view = self.ws.view(self._virtual, full, doc=self.document_path)
            items = complete(view, view.index.position(start + cursor))
        lines_before = full.count("\n", 0, start)
        out = []
        for item in items:
            if item.replace is not None and item.replace.offset >= start:
                item = dataclasses.replace(item, replace=_shift(item.replace, lines_before, start))
            out.append(item)
        return out + self._session_names(text, cursor, {i.label for i in out})

    def _session_names(self, text: str, cursor: int, known: set[str]) -> list[CompletionItem]:
        """The environment's names that start with the name typed before ``cursor`` (the context
        holds only the names the input mentions, so that a long session costs nothing per key)."""
        typed = _NAME_BEFORE.search(text, 0, cursor)
        begin = typed.start() if typed is not None else cursor
        if (begin > 0 and text[begin - 1] in "$.") or open_string(text, cursor) is not None \
                or text[text.rfind("\n", 0, cursor) + 1:cursor].lstrip().startswith("#"):
            return []
        word = typed.group() if typed is not None else ""
        if word[:1].isdigit():
            return []
        replace = LineIndex(text).span(begin, cursor)
        out = []
        for name, value in self.interp.globals.items():
            if not name.startswith(word) or name in known:
                continue
            if type(value) is ScriptFunction:
                params = ", ".join(value.params)
                out.append(CompletionItem(name, CompletionKind.FUNCTION, f"def {name}({params})", replace=replace,
                                          sort_text=f"1{name}"))
            else:
                out.append(CompletionItem(name, CompletionKind.VARIABLE, _describe(value), replace=replace,
                                          sort_text=f"1{name}"))
        return out

    def hover(self, text: str, cursor: int) -> Hover | None:
        """The service's hover text for what is at ``cursor`` in ``text`` (after the session)."""
        full, start = self._context(text)
        with self._lock:
            view = self.ws.view(self._virtual, full, doc=self.document_path)
            return hover(view, view.index.position(start + cursor))

    # -- output and the end ----------------------------------------------------------------------------

    def write(self, text: str) -> None:
        """A result line (script output, values, meta command output): to ``out``; a secret the
        session read is masked (a field showing it in ``:tree``, docs/safety.md)."""
        print(terminal_safe(self.safety.secrets.redactor.mask(text)), file=self.out, flush=True)

    def error(self, text: str) -> None:
        """An error or warning: to ``err`` (masked as ``write``)."""
        print(terminal_safe(self.safety.secrets.redactor.mask(text)), file=self.err, flush=True)

    def _print_line(self, line: str) -> None:
        self.write(line)

    def current_screen(self) -> str | None:
        """The document screen of the last dump, if the device was looked at (no device command)."""
        return self.link.current_screen()

    def close(self) -> None:
        """Release the device (a simulator started for the session stops) and the trace file."""
        try:
            self.interp.close()
            self.link.close()
        finally:
            self.calls.close()


def _describe(value: object) -> str:
    """A session variable beside its completion: ``str``, ``list``, ``element $songs__list[2]``."""
    if type(value) is ElementHandle:
        return f"element {handle_source(value)}"
    return type_name(value)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _shift(span: Span, lines: int, offset: int) -> Span:
    return Span(span.line - lines, span.column, span.end_line - lines, span.end_column,
                span.offset - offset if span.offset >= 0 else -1,
                span.end_offset - offset if span.end_offset >= 0 else -1)



