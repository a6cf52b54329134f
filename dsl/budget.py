"""The limits a script runs under, and the meter that enforces them.

Every budget is a hard stop: exceeding one raises ``BudgetExceeded`` naming the budget, its
limit and the span of the construct that crossed it. The interpreter charges steps inline (one
integer add and one compare per statement); the slower checks (wall clock, step limit) run only
when the step counter crosses the next checkpoint, so a ``while True: pass`` is still stopped
within a few thousand steps of its deadline.

An interrupt (``Meter.request_interrupt``, safe to call from a signal handler) uses the same
checkpoint: it moves the checkpoint below the step counter, so the next statement stops with
``Interrupted`` at no cost to the statements that run while nobody asks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from tapir.dsl.errors import BudgetExceeded, Interrupted, Span

#: How many steps may pass between two looks at the clock.
CHECK_EVERY = 2048
#: Creating a string or collection of n items/chars costs ``n // ALLOC_ITEMS_PER_STEP`` extra
#: steps, so memory a script can allocate in total is bounded by its step budget, not only the
#: size of each single value (``l.append("x" * 10**6)`` in a loop would otherwise be free).
ALLOC_ITEMS_PER_STEP = 64


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

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_actions", "timeout_s", "max_depth", "max_size", "max_int_bits", "max_output"):
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
    err = BudgetExceeded(f"{budget} budget exceeded: {message} (limit {_fmt(limit)})", span)
    err.budget = budget  # type: ignore[attr-defined]
    err.limit = limit  # type: ignore[attr-defined]
    return err


def _fmt(limit: float | int) -> str:
    if isinstance(limit, float) and not limit.is_integer():
        return f"{limit:g} s"
    if isinstance(limit, float):
        return f"{int(limit)} s"
    return f"{limit:,}"


class Meter:
    """The mutable counters of one execution. Attributes are read and written by the
    interpreter's compiled closures directly, which is why this is a plain slotted class."""

    __slots__ = (
        "budgets", "steps", "checkpoint", "actions", "depth", "deadline", "started", "output_chars",
        "max_size", "max_int_bits", "simulated_s", "interrupt",
    )

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        self.max_size = budgets.max_size
        self.max_int_bits = budgets.max_int_bits
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

    def tick(self, span: Span | None) -> None:
        """Called when ``steps`` passed ``checkpoint``: enforce the step limit and the deadline."""
        if self.interrupt is not None:
            raise Interrupted(self.interrupt, span)
        limit = self.budgets.max_steps
        if self.steps > limit:
            raise budget_exceeded("steps", limit, f"the script ran more than {limit:,} steps", span)
        self.check_time(span)
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
        """Charge ``n`` extra steps (work done inside one operation, e.g. sorting n items)."""
        self.steps += n
        if self.steps > self.checkpoint:
            self.tick(span)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # -- sizes ----------------------------------------------------------------------------------

    def check_size(self, n: int, span: Span | None, what: str = "value") -> None:
        """Refuse to create a value of ``n`` items/chars; charge for creating it otherwise."""
        if n > self.max_size:
            raise budget_exceeded(
                "size", self.max_size, f"a {what} of {n:,} items/characters would be too large", span
            )
        if n >= ALLOC_ITEMS_PER_STEP:
            self.charge(n // ALLOC_ITEMS_PER_STEP, span)

    def check_int(self, bits: int, span: Span | None) -> None:
        if bits > self.max_int_bits:
            raise budget_exceeded(
                "size", self.max_int_bits, f"an integer of about {bits:,} bits would be too large", span
            )

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
