"""The second wall: a script run in a child process under OS limits.

The interpreter's own checks (``tapir.dsl.budget``, ``tapir.dsl.safeops``) are the first wall.
Whatever they miss (an allocation estimated too low, a recursion in C nobody foresaw, a device
runtime that spins) must cost an error, not the host. ``run_script_isolated`` runs
``run_script`` in a forked child of the current process:

* the child gets OS limits: address space (the memory budget plus headroom, over what the
  parent had mapped when it forked) and CPU seconds (the time budget plus grace, then SIGKILL);
  no core files;
* the parent keeps the deadline too: a child still running at ``timeout + grace`` is killed;
* printed lines come back as they are printed and the result at the end, as JSON lines (never
  pickle: the parent runs nothing the child sends, and caps how much it reads);
* a child that dies becomes the error a user expects: the time budget for SIGXCPU or the
  parent's kill, the memory budget for an allocation that failed, "internal error" with the
  signal for anything else. Budget messages are the interpreter's own, rendered the same way,
  so ``tapir run`` prints the same text and exits with the same status either way.

Forking after imports makes the start cheap (a few milliseconds; ``bench/sandbox_attacks.py``
measures it), and the child inherits everything a run needs: the runtime factory (the device
is opened in the child, on the script's first UI call), the symbol table, the trace path, the
run's parameters. What the child changes stays in the child: pass ``collect`` to bring a JSON
value back at the end (the test runner brings back the device statistics and the names of the
failure files it saved), and a ``Relay`` to bring values back as they happen (the runner's live
step lines). Flush files the parent wrote before calling (standard output and error are flushed
here).

    from tapir.dsl.isolation import run_script_isolated
    result = run_script_isolated(source, factory, Budgets(timeout_s=10), output=print,
                                 symbols=symbols, filename="flow.tap")
    result.ok, result.error, result.printed

    steps = Relay(console_step)                 # called here, in the parent, as records arrive
    run_script_isolated(source, factory, budgets, relay=steps,
                        collect=lambda result: {"dumps": runtime.stats.dumps})
    # code running in the child calls steps.send(record); result.collected == {"dumps": ...}

Where ``os.fork`` is missing or unsafe (not Linux) the script runs in-process, with the first
wall only (``isolation_available()`` says which).
"""

from __future__ import annotations

import gc
import json
import math
import os
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tapir.core import errors as E
from tapir.core.errors import Interrupted, ScriptError, Span, TapirError
from tapir.dsl import ast as A
from tapir.dsl.budget import Budgets, budget_exceeded, out_of_memory
from tapir.dsl.inputs import ScriptInputs
from tapir.dsl.interpreter import Output, RunResult, print_line, run_script
from tapir.dsl.runtime_api import RuntimeFactory
from tapir.dsl.symbols import SymbolTable

__all__ = ["ChildLimits", "Relay", "isolation_available", "run_script_isolated"]

#: Address space the child may map beyond the memory budget: thread stacks and malloc arenas of
#: a device runtime, libraries it loads (an embedding model), Python's own slack.
HEADROOM_BYTES = 1 << 30
#: The most the parent reads from one child (printed text is capped by the output budget).
_MAX_READ_BYTES = 64 << 20
#: How long the parent waits for a child to finish after Ctrl-C before killing it.
_INTERRUPT_GRACE_S = 3.0
_EXIT_MEMORY = 3
_EXIT_CRASH = 4

#: Error classes a child may name (anything else is read as a ScriptError).
_ERROR_CLASSES: dict[str, type[TapirError]] = {
    name: cls for name in E.__all__ if isinstance(cls := getattr(E, name), type) and issubclass(cls, TapirError)
}


@dataclass(frozen=True)
class ChildLimits:
    """The OS limits of one child process (``for_budgets`` derives them from a run's budgets)."""

    #: Bytes of address space the child may map beyond what it inherited.
    memory_bytes: int
    #: CPU seconds the child may use (SIGXCPU, then SIGKILL a second later).
    cpu_seconds: int
    #: Wall-clock seconds after which the parent kills the child.
    wall_seconds: float

    @classmethod
    def for_budgets(cls, budgets: Budgets) -> ChildLimits:
        # The interpreter's own deadline fires first; the grace covers closing the device.
        grace = max(2.0, 0.25 * budgets.timeout_s)
        return cls(memory_bytes=budgets.max_memory + HEADROOM_BYTES,
                   cpu_seconds=math.ceil(budgets.timeout_s + grace), wall_seconds=budgets.timeout_s + grace)


class Relay:
    """Carries JSON values from the code running a script to ``receive`` in this process.

    ``send`` calls ``receive`` directly when the script runs here (``run_script``, or
    ``run_script_isolated`` where there is no child process); in a child process it writes the
    value to the pipe, and the parent calls ``receive`` with it as it arrives (in the thread
    that called ``run_script_isolated``). Values must be JSON (others are sent as ``str``)."""

    def __init__(self, receive: Callable[[Any], None]) -> None:
        self.receive = receive
        self._send: Callable[[Any], None] = receive

    def send(self, value: Any) -> None:
        self._send(value)


def isolation_available() -> bool:
    """True where scripts can run in a forked child (Linux); elsewhere they run in-process."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def run_script_isolated(
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
    limits: ChildLimits | None = None,
    collect: Callable[[RunResult], Any] | None = None,
    relay: Relay | None = None,
) -> RunResult:
    """``run_script`` in a child process under OS limits (see the module docstring); the same
    arguments and the same ``RunResult``. ``collect``, called in the child with the run's result
    (the runtime already closed, a ``Borrowed`` one still open), returns a JSON value the parent
    finds in ``RunResult.collected``; ``relay`` carries values sent while the script runs (see
    ``Relay``). Never raises for the script."""
    budgets = budgets or Budgets()
    text = script if isinstance(script, str) else source

    def run(out: Output | None) -> RunResult:
        return run_script(script, runtime_factory, budgets, out, symbols=symbols, filename=filename,
                          source=source, debug=debug, inputs=inputs)

    if not isolation_available():
        result = run(output)
        return replace(result, collected=collect(result) if collect is not None else None)
    limits = limits or ChildLimits.for_budgets(budgets)
    import resource  # noqa: F401 - here, once: a child would import it anew on every run
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # else what is buffered would be written twice, by both processes
        except (OSError, ValueError, AttributeError):
            pass
    read_fd, write_fd = os.pipe()
    gc.freeze()  # the child's collector leaves the parent's objects (and their pages) alone
    try:
        pid = os.fork()
    except OSError as exc:
        gc.unfreeze()
        os.close(read_fd)
        os.close(write_fd)
        err = ScriptError(f"could not start the script's process: {exc.strerror or exc}", None)
        return RunResult(0, 0, 0.0, (), {}, err.with_source(text, filename))
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(write_fd, run, limits, collect, relay, debug)
    gc.unfreeze()
    os.close(write_fd)
    return _Parent(pid, read_fd, limits, budgets, output, relay, text, filename, debug).wait()


# ---------------------------------------------------------------------------------------------
# The child


def _child(fd: int, run: Callable[[Output | None], RunResult], limits: ChildLimits,
           collect: Callable[[RunResult], Any] | None, relay: Relay | None, debug: bool) -> None:
    code = 0
    # a runtime may send from threads of its own: one message at a time on the pipe
    lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=str) + "\n").encode("ascii")  # (json escapes everything else)
        with lock:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]

    try:
        _apply_limits(limits)
        if relay is not None:
            relay._send = lambda value: send({"event": value})
        result = run(lambda line: send({"line": line}))
        message: dict[str, Any] = {"result": _encode_result(result)}
        cause = result.error.__cause__ if result.error is not None else None
        if debug and cause is not None:
            message["traceback"] = "".join(traceback.format_exception(cause))
        if collect is not None:
            message["collected"] = collect(result)
        send(message)
    except MemoryError:
        code = _EXIT_MEMORY
    except BaseException as exc:  # an interrupt, or a bug: say what, the parent makes it an error
        code = _EXIT_CRASH
        try:
            send({"crash": f"{type(exc).__name__}: {exc}"[:2000],
                  "traceback": "".join(traceback.format_exception(exc))[-20_000:]})
        except BaseException:  # noqa: S110 - the parent reports the exit status instead
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: S110 - nothing left to tell it to
                pass
        os._exit(code)


def _apply_limits(limits: ChildLimits) -> None:
    import resource  # (imported by run_script_isolated, before the fork)

    def lower(which: int, soft: int, hard: int) -> None:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))

    space = _mapped_bytes() + limits.memory_bytes
    lower(resource.RLIMIT_AS, space, space)
    lower(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1)
    lower(resource.RLIMIT_CORE, 0, 0)


def _mapped_bytes() -> int:
    """The address space the process has mapped now."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _encode_result(result: RunResult) -> dict[str, Any]:
    err = result.error
    error = None
    if err is not None:
        s = err.span
        error = {
            "category": type(err).__name__, "message": err.message, "hint": err.hint,
            "span": None if s is None else [s.line, s.column, s.end_line, s.end_column, s.offset, s.end_offset],
            "budget": getattr(err, "budget", None), "limit": getattr(err, "limit", None),
            # an error in a flow (run_flow) belongs to the flow's file, not to the script run
            "filename": err.filename, "source": err.source,
        }
    return {"steps": result.steps, "actions": result.actions, "duration_s": result.duration_s,
            "variables": result.variables, "error": error}


# ---------------------------------------------------------------------------------------------
# The parent


class _Parent:
    """Reads one child's messages until it ends, enforcing the wall-clock limit."""

    def __init__(self, pid: int, fd: int, limits: ChildLimits, budgets: Budgets, output: Output | None,
                 relay: Relay | None, text: str | None, filename: str, debug: bool) -> None:
        self.pid, self.fd, self.limits, self.budgets = pid, fd, limits, budgets
        self.output, self.relay, self.text, self.filename, self.debug = output, relay, text, filename, debug
        self.printed: list[str] = []
        self.final: dict[str, Any] | None = None
        self.crash: str | None = None
        self.problem: TapirError | None = None  # found by the parent: a kill, a flood, bad output
        self.status: int | None = None
        self.started = time.monotonic()

    def wait(self) -> RunResult:
        try:
            self._read()
        except KeyboardInterrupt:
            self._interrupt()
            raise
        finally:
            os.close(self.fd)
            if self.status is None:
                _, self.status = os.waitpid(self.pid, 0)
        return self._result()

    def _read(self) -> None:
        deadline = self.started + self.limits.wall_seconds
        buf = bytearray()
        total = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill(budget_exceeded("time", self.budgets.timeout_s,
                                           f"the script ran longer than {self.budgets.timeout_s:g} s "
                                           "(its process was stopped)", None))
                return
            ended = self.status is not None
            ready, _, _ = select.select([self.fd], [], [], 0 if ended else min(left, 0.25))
            if not ready:
                if ended:
                    return  # the child ended and the pipe holds nothing more of it
                # a process the child started may hold the pipe open after the child ended
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    # it may have written its result and ended between the select and the wait
                    # (a loaded machine): read what is in the pipe, without waiting for an end of
                    # file that such a process would keep off
                    self.status = status
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return
            total += len(chunk)
            if total > _MAX_READ_BYTES:
                self._kill(ScriptError(f"internal error: the script's process sent more than "
                                       f"{_MAX_READ_BYTES >> 20} MiB", None))
                return
            buf += chunk
            start = 0
            while (end := buf.find(b"\n", start)) >= 0:
                self._message(bytes(buf[start:end]))
                start = end + 1
                if self.problem is not None:
                    return
            del buf[:start]

    def _message(self, line: bytes) -> None:
        try:
            msg = json.loads(line.decode("ascii"))
        except ValueError:
            msg = None
        if not isinstance(msg, dict):
            self._kill(ScriptError("internal error: the script's process sent something unreadable", None))
            return
        if "line" in msg:
            text = str(msg["line"])
            self.printed.append(text)
            if self.output is not None:
                try:
                    self.output(text)
                except Exception as exc:  # e.g. a closed pipe: the script cannot go on printing
                    self._kill(ScriptError(f"the script's output could not be written: {type(exc).__name__}: "
                                           f"{exc}", None))
        elif "event" in msg:
            if self.relay is not None:
                try:
                    self.relay.receive(msg["event"])
                except Exception as exc:  # a bug of the receiver's: it must not run on unseen
                    self._kill(ScriptError(f"internal error: a run event could not be handled: "
                                           f"{type(exc).__name__}: {exc}", None))
        elif "result" in msg:
            self.final = msg
        elif "crash" in msg:
            self.crash = str(msg["crash"])
            if self.debug:
                print(str(msg.get("traceback", "")), file=sys.stderr, end="")

    def _kill(self, problem: TapirError) -> None:
        self.problem = problem
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _interrupt(self) -> None:
        """Ctrl-C: the child (in the same process group) got it too; give it a moment to close
        its device, then kill it."""
        try:
            os.kill(self.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        until = time.monotonic() + _INTERRUPT_GRACE_S
        while time.monotonic() < until:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = status
                return
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)

    # -- the outcome ------------------------------------------------------------------------------

    def _result(self) -> RunResult:
        printed = tuple(self.printed)
        if self.problem is None and self.final is not None:
            try:
                return self._decoded(self.final, printed)
            except (KeyError, TypeError, ValueError):
                self.problem = ScriptError("internal error: the script's process sent a malformed result", None)
        error = self.problem or self._death()
        return RunResult(0, 0, round(time.monotonic() - self.started, 6), printed, {},
                         error.with_source(self.text, self.filename))

    def _death(self) -> TapirError:
        """The error for a child that ended without a result."""
        status = self.status or 0
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        budgets = self.budgets
        if sig == signal.SIGXCPU:
            return budget_exceeded("time", budgets.timeout_s, "the script used more than its CPU time "
                                   f"({self.limits.cpu_seconds} s; its process was stopped)", None)
        if code == _EXIT_MEMORY:
            return out_of_memory(None)
        if sig == signal.SIGKILL:
            err = budget_exceeded("memory", budgets.max_memory, "the script's process was killed, most likely "
                                  "for want of memory", None)
            return err
        if self.crash is not None and self.crash.startswith("KeyboardInterrupt"):
            return Interrupted("the script was interrupted", None)
        what = f"was killed by {signal.Signals(sig).name}" if sig is not None else f"ended with status {code}"
        detail = f" ({self.crash})" if self.crash else ""
        return ScriptError(f"internal error: the script's process {what}{detail}", None,
                           hint="this is a bug in Tapir; run again with --in-process --debug for details")

    def _decoded(self, msg: dict[str, Any], printed: tuple[str, ...]) -> RunResult:
        res = msg["result"]
        variables = {str(k): str(v) for k, v in dict(res.get("variables") or {}).items()}
        error = _decode_error(res["error"]) if res.get("error") is not None else None
        if error is not None:
            error.with_source(self.text, self.filename)
            if self.debug and msg.get("traceback"):
                print(str(msg["traceback"]), file=sys.stderr, end="")
        return RunResult(int(res["steps"]), int(res["actions"]), float(res["duration_s"]), printed, variables,
                         error, collected=msg.get("collected"))


def _decode_error(data: dict[str, Any]) -> TapirError:
    cls = _ERROR_CLASSES.get(str(data.get("category")), ScriptError)
    err = cls(str(data["message"]))
    span = data.get("span")
    if isinstance(span, list) and len(span) == 6 and all(type(x) is int for x in span):
        err.span = Span(*span)
    hint = data.get("hint")
    err.hint = str(hint) if hint is not None else None
    if isinstance(data.get("filename"), str) and isinstance(data.get("source"), str):
        err.with_source(data["source"], data["filename"])
    if data.get("budget") is not None:
        err.budget = str(data["budget"])  # type: ignore[attr-defined]
        limit = data.get("limit")
        err.limit = limit if type(limit) in (int, float) else None  # type: ignore[attr-defined]
    return err
