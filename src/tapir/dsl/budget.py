"""The limits a script runs under, and the meter that enforces them.

Every budget is a hard stop: exceeding one raises ``BudgetExceeded`` naming the budget, its
limit and the span of the construct that crossed it. The interpreter charges steps inline (one
integer add and one compare per statement); the slower checks (wall clock, step limit, the
process's memory) run only when the step counter crosses the next checkpoint, so a
``while True: pass`` is still stopped within a few thousand steps of its deadline. Work done
inside one operation (a builtin walking a list, comparing long strings, dividing big integers)
is charged in proportion to what it does, so no single cheap-looking step can run on for long.

An interrupt (``Meter.request_interrupt``, safe to call from a signal handler) uses the same
checkpoint: it moves the checkpoint below the step counter, so the next statement stops with
``Interrupted`` at no cost to the statements that run while nobody asks.

    meter = Meter(Budgets(timeout_s=2))
    meter.charge(10_000, span)                 # steps of work inside one operation
    meter.check_size(n, span, "list", 8 + 64)  # before making n items of about 72 bytes each
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from typing import Any

from tapir.core.errors import BudgetExceeded, Interrupted, Span

#: How many steps may pass between two looks at the clock.
CHECK_EVERY = 2048
#: Creating a string or collection of n items/chars costs ``n // ALLOC_ITEMS_PER_STEP`` extra
#: steps, so memory a script can allocate in total is bounded by its step budget, not only the
#: size of each single value (``l.append("x" * 10**6)`` in a loop would otherwise be free).
ALLOC_ITEMS_PER_STEP = 64
#: The same in bytes: a pointer is 8 bytes, so 64 items are 512 bytes. New objects made per item
#: (the tuples of ``enumerate``, the big integers of a ``range``) are charged by their size too.
ALLOC_BYTES_PER_STEP = 8 * ALLOC_ITEMS_PER_STEP
#: Bytes a script may charge between two looks at the process's resident memory, and clock
#: checks between two such looks when it charges less (a look is one ``pread`` of /proc, ~1 us:
#: every 8,192 steps costs well under 1% of a tight loop). Together with every value being
#: charged by its size (small ones too, big integers included) they bound how far the process
#: can grow past the budget before a look sees it: ``MEMORY_MARGIN``.
MEMORY_CHECK_BYTES = 16 << 20
MEMORY_CHECK_TICKS = 4
#: The most the process may grow past ``max_memory`` before the run stops (documented in
#: docs/interpreter.md; tests/test_sandbox_attacks.py holds the interpreter to it): the bytes
#: charged between two looks, what ``MEMORY_CHECK_TICKS * CHECK_EVERY`` steps can make without
#: being charged (object headers, a dict's or list's growth), and the spare room a resize of
#: the largest container allowed (``max_size`` items) needs while it copies.
MEMORY_MARGIN = 64 << 20
#: Integers at least this large (in magnitude) are charged by their size when made (the fast
#: paths of + and - compare their result with it: the same two comparisons as before).
BIG_INT = 1 << 1024
#: A charge this large is compared with the time left, at the fastest a step ever runs.
_BIG_CHARGE = 1 << 20
_FASTEST_STEP_S = 20e-9


#: The deepest script recursion allowed at all. Each script call level may re-enter the C
#: interpreter once (a ``sorted`` key, a comprehension condition), and about 20,000 such levels
#: overflow an 8 MB thread stack; this keeps a 2x margin.
MAX_DEPTH_CEILING = 10_000


@dataclass(frozen=True)
class Budgets:
    """Limits for one run. All are configurable; the defaults suit a UI script."""

    #: Statements and expressions evaluated (see docs/interpreter.md for the cost model).
    max_steps: int = 1_000_000
    #: UI actions (registry entries with ``is_action``): taps, text entry, scrolls, BACK, ENTER.
    max_actions: int = 50
    #: Wall-clock seconds for the whole run, device time included.
    timeout_s: float = 60.0
    #: Nested calls of script functions.
    max_depth: int = 50
    #: Items of one list/dict/tuple/range, or characters of one string.
    max_size: int = 1_000_000
    #: Bits of one integer (``10**10**10`` stops here, ``2**1000`` is fine).
    max_int_bits: int = 65_536
    #: Characters a script may print in total.
    max_output: int = 1_000_000
    #: Bytes the run may add to the process's memory (its values, and the device runtime it uses).
    max_memory: int = 1 << 30
    #: Characters of the script's text (parsing is linear but not free: ~10 us a character).
    max_source: int = 100_000

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_actions", "timeout_s", "max_depth", "max_size", "max_int_bits", "max_output",
                     "max_memory", "max_source"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Budgets.{name} must be positive, not {getattr(self, name)!r}")
        if self.max_depth > MAX_DEPTH_CEILING:
            raise ValueError(f"Budgets.max_depth may be at most {MAX_DEPTH_CEILING:,}: deeper script recursion "
                             "could overflow the host's C stack")

    def replace(self, **changes: Any) -> Budgets:
        """A copy with the given limits changed; ``None`` values keep the current limit."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def budget_exceeded(budget: str, limit: float | int, message: str, span: Span | None) -> BudgetExceeded:
    """A ``BudgetExceeded`` that names the budget and its limit (also as attributes)."""
    err = BudgetExceeded(f"{budget} budget exceeded: {message} (limit {_fmt(limit, budget)})", span)
    err.budget = budget  # type: ignore[attr-defined]
    err.limit = limit  # type: ignore[attr-defined]
    return err


def check_source_size(text: str, budgets: Budgets, filename: str | None = None) -> None:
    """Refuse a script longer than ``budgets.max_source`` characters, before anything reads it."""
    if len(text) > budgets.max_source:
        err = budget_exceeded("source", budgets.max_source, f"the script is {len(text):,} characters long", None)
        err.hint = "split it into smaller scripts, or raise Budgets.max_source"
        raise err.with_source(text, filename)


def out_of_memory(span: Span | None) -> BudgetExceeded:
    """A ``MemoryError`` as the script's error: an allocation the estimates let through failed
    (the child process's address-space limit, or the machine's memory)."""
    err = BudgetExceeded("memory budget exceeded: the process ran out of memory", span)
    err.budget = "memory"  # type: ignore[attr-defined]
    err.limit = None  # type: ignore[attr-defined]
    return err


def _fmt(limit: float | int, budget: str = "") -> str:
    if budget == "memory":
        return human_bytes(int(limit))
    if budget == "time":
        return f"{float(limit):g} s"
    if isinstance(limit, float) and not limit.is_integer():
        return f"{limit:g} s"
    if isinstance(limit, float):
        return f"{int(limit)} s"
    return f"{limit:,}"


def human_bytes(n: int) -> str:
    """``1 GiB``, ``512 MiB``, ``8.7 GiB``: sizes for messages (binary units)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value >= 10 or value.is_integer() else f"{value:.1f} {unit}"
    return f"{n} bytes"


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


#: (pid, descriptor) of this process's /proc/self/statm, kept open: a ``pread`` of it is ~1 us,
#: opening it anew ~7 us. A forked child opens its own (``/proc/self`` was the parent's).
_statm: tuple[int, int] | None = None


def resident_bytes() -> int:
    """The process's resident memory now (its peak where /proc is missing), in bytes."""
    global _statm
    try:
        pid = os.getpid()
        if _statm is None or _statm[0] != pid:
            _statm = (pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
        return int(os.pread(_statm[1], 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:  # no way to tell on this platform: only the estimates are checked
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class Meter:
    """The mutable counters of one execution. Attributes are read and written by the
    interpreter's compiled closures directly, which is why this is a plain slotted class."""

    __slots__ = (
        "budgets", "steps", "checkpoint", "actions", "depth", "deadline", "started", "output_chars",
        "max_size", "max_int_bits", "int_limit", "int_fast", "max_memory", "allocated", "memory_check_at",
        "memory_base", "ticks", "simulated_s", "interrupt",
    )

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        self.max_size = budgets.max_size
        self.max_int_bits = budgets.max_int_bits
        #: Every integer a script holds is strictly between -int_limit and int_limit: the fast
        #: paths of + and - compare their result with it instead of asking for its bit length.
        self.int_limit = 1 << budgets.max_int_bits
        #: Integer results at least this large take ``big_int`` (charged by size, then checked
        #: against ``int_limit``); smaller ones cost what any small value costs.
        self.int_fast = min(BIG_INT, self.int_limit)
        self.max_memory = budgets.max_memory
        #: Bytes charged so far (an upper estimate of what was allocated, not what is live).
        self.allocated = 0
        self.memory_check_at = MEMORY_CHECK_BYTES
        self.memory_base = resident_bytes()
        self.ticks = 0
        self.steps = 0
        self.actions = 0
        self.depth = 0
        self.output_chars = 0
        self.started = time.monotonic()
        self.deadline = self.started + budgets.timeout_s
        self.checkpoint = min(budgets.max_steps, CHECK_EVERY)
        #: Seconds that passed on a simulated clock (a simulator's waits), not on the host's: they
        #: count against the time budget as if they had been waited for.
        self.simulated_s = 0.0
        #: Why the run was asked to stop from outside (None: it was not); see ``request_interrupt``.
        self.interrupt: str | None = None

    # -- steps and time -----------------------------------------------------------------------

    def step(self, cost: int, span: Span | None) -> None:
        """Count one statement's ``cost`` steps (``1``: a loop's next round, ``break``, ``pass``).
        Past the checkpoint, ``tick`` runs the slower checks. Every statement closure calls this
        first (``compile_statements``, ``Compiler.guard``)."""
        self.steps += cost
        if self.steps > self.checkpoint:
            self.tick(span)

    def tick(self, span: Span | None) -> None:
        """Called when ``steps`` passed ``checkpoint``: enforce the step limit and the deadline."""
        if self.interrupt is not None:
            raise Interrupted(self.interrupt, span)
        limit = self.budgets.max_steps
        if self.steps > limit:
            raise budget_exceeded("steps", limit, f"the script ran more than {limit:,} steps", span)
        self.check_time(span)
        self.ticks += 1
        if self.ticks % MEMORY_CHECK_TICKS == 0:
            self.check_memory(span)
        self.checkpoint = min(limit, self.steps + CHECK_EVERY)

    def check_time(self, span: Span | None) -> None:
        if time.monotonic() + self.simulated_s > self.deadline:
            limit = self.budgets.timeout_s
            raise budget_exceeded("time", limit, f"the script ran longer than {limit:g} s", span)

    def remaining(self) -> float:
        """Seconds left of the time budget (simulated time included); never negative."""
        return max(0.0, self.deadline - time.monotonic() - self.simulated_s)

    def reserve_time(self, seconds: float, span: Span | None, what: str) -> None:
        """Refuse, before it starts, a wait of ``seconds`` that would outlast the time budget
        (``what``: the call, for the message): better than waiting and failing at the end."""
        if seconds > self.remaining():
            limit = self.budgets.timeout_s
            raise budget_exceeded("time", limit, f"{what} would wait past the end of the script's "
                                                 f"{limit:g} s ({self.remaining():.1f} s left)", span)

    # -- interrupts -----------------------------------------------------------------------------

    def request_interrupt(self, reason: str = "interrupted") -> None:
        """Ask the run to stop with ``Interrupted(reason)`` at its next step or UI call.

        Only sets two attributes, so a signal handler may call it at any moment: the compiled
        statements see the lowered checkpoint on their next step and call ``tick``."""
        self.interrupt = reason
        self.checkpoint = -1

    def check_interrupt(self, span: Span | None) -> None:
        """Raise ``Interrupted`` if one was requested (before and after each UI call, and by
        whatever sits between device commands)."""
        if self.interrupt is not None:
            raise Interrupted(self.interrupt, span)

    def charge(self, n: int, span: Span | None) -> None:
        """Charge ``n`` extra steps (work done inside one operation, e.g. sorting n items), before
        the operation does it. An operation charged more than could possibly run in the time
        left is refused now, not stopped at the next look at the clock after it ran."""
        self.steps += n
        if self.steps > self.checkpoint:
            self.tick(span)
            if n >= _BIG_CHARGE and time.monotonic() + self.simulated_s + n * _FASTEST_STEP_S > self.deadline:
                limit = self.budgets.timeout_s
                raise budget_exceeded("time", limit, f"this operation would not finish within {limit:g} s "
                                      f"(about {n:,} steps of work)", span)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # -- sizes ----------------------------------------------------------------------------------

    def check_size(self, n: int, span: Span | None, what: str = "value", item_bytes: int = 8) -> None:
        """Refuse to create a value of ``n`` items/chars; charge for creating it otherwise.

        ``item_bytes`` is what each item costs: 8 for a list of existing values (a pointer), more
        when each item is a new object (``enumerate``'s tuples, a ``range``'s big integers)."""
        if n > self.max_size:
            raise budget_exceeded(
                "size", self.max_size, f"a {what} of {n:,} items/characters would be too large", span
            )
        if n >= ALLOC_ITEMS_PER_STEP or item_bytes > 8:
            self.alloc(n * item_bytes, span, what)
        else:  # no steps for a small value, but its bytes count towards the next look at memory
            self.allocated += n * item_bytes
            if self.allocated >= self.memory_check_at:
                self.check_memory(span)

    def alloc(self, nbytes: int, span: Span | None, what: str = "value") -> None:
        """Charge the creation of about ``nbytes`` bytes of new values (before they are made)."""
        if nbytes > self.max_memory:
            raise budget_exceeded("memory", self.max_memory,
                                  f"a {what} of about {human_bytes(nbytes)} would not fit", span)
        self.allocated += nbytes
        if self.allocated >= self.memory_check_at:
            self.check_memory(span, nbytes, what)
        if nbytes >= ALLOC_BYTES_PER_STEP:
            self.charge(nbytes // ALLOC_BYTES_PER_STEP, span)

    def check_memory(self, span: Span | None, coming: int = 0, what: str = "value") -> None:
        """Stop the run when the process grew by more than the memory budget since it started,
        or would with ``coming`` more bytes (a value of that size about to be made)."""
        self.memory_check_at = self.allocated + MEMORY_CHECK_BYTES
        grown = resident_bytes() - self.memory_base
        if grown > self.max_memory:
            raise budget_exceeded("memory", self.max_memory,
                                  f"the run grew the process's memory by {human_bytes(grown)}", span)
        if coming and grown + coming > self.max_memory:
            raise budget_exceeded("memory", self.max_memory,
                                  f"the run grew the process's memory by {human_bytes(grown)}, and a {what} "
                                  f"of about {human_bytes(coming)} would not fit", span)

    def big_int(self, value: int, span: Span | None) -> int:
        """``value``, a new integer at least ``int_fast`` in magnitude, charged by its size
        (a 65,536-bit integer is 8.7 KB, made by one cheap-looking ``-x``); refused when it
        is over the size budget."""
        bits = value.bit_length()
        if bits > self.max_int_bits:
            raise self.int_too_big(value, span)
        self.alloc(bits // 8 + 32, span, "integer")
        return value

    def check_int(self, bits: int, span: Span | None) -> None:
        if bits > self.max_int_bits:
            raise budget_exceeded(
                "size", self.max_int_bits, f"an integer of about {bits:,} bits would be too large", span
            )

    def int_too_big(self, value: int, span: Span | None) -> BudgetExceeded:
        """The error for an integer result outside the size budget (raised by the fast paths)."""
        return budget_exceeded("size", self.max_int_bits,
                               f"an integer of {value.bit_length():,} bits would be too large", span)

    # -- UI actions, depth, output ----------------------------------------------------------------

    def count_action(self, name: str, span: Span | None) -> None:
        limit = self.budgets.max_actions
        if self.actions >= limit:
            raise budget_exceeded("actions", limit, f"{name}() would be UI action number {limit + 1}", span)
        self.actions += 1

    def depth_exceeded(self, span: Span | None) -> BudgetExceeded:
        limit = self.budgets.max_depth
        return budget_exceeded("depth", limit, f"more than {limit} nested function calls", span)

    def count_output(self, n: int, span: Span | None) -> None:
        self.output_chars += n
        limit = self.budgets.max_output
        if self.output_chars > limit:
            raise budget_exceeded("output", limit, f"the script printed more than {limit:,} characters", span)
