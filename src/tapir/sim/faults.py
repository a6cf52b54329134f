"""Fault injection for the simulated device.

Real devices are slow and flaky in a few recurring ways; tests of the runtime's retries,
timeouts and polling need to provoke them on demand:

* latency: ``uiautomator dump`` takes seconds and every ``input`` a few hundred ms on hardware;
* ``ERROR: could not get idle state.``: uiautomator gives up on an animating screen and writes
  no file (it still exits 0, so ``... && echo success`` still prints ``success``);
* a dropped connection: the transport dies mid-session and the device goes ``offline``, either
  before a command runs (``drop_at="open"``: nothing ran) or after it ran and before its answer
  came back (``drop_at="reply"``: the client cannot tell whether a tap happened);
* a late app: for ``input_lag`` seconds after an input, dumps still show the screen from before
  it (the app had not redrawn yet when uiautomator looked);
* things that happen by themselves (``events``): the app crashes and the launcher shows, a system
  dialog covers the app, the screen changes between the dump a client grounded on and its tap;
* UI drift: the app looks slightly different from the one that was documented (apps implement
  it; the device only passes the setting on).

A ``Faults`` object is shared by the device (which consults it) and the test (which arms it),
possibly from different threads, so every counter is updated under a lock::

    faults = Faults(dump_errors=2, events=[FaultEvent("crash", after=3)])  # crash after the 3rd input
    with start_sim([app], faults=faults) as sim:
        sim.device.faults.arm(FaultEvent("dialog", after=1, command="uiautomator"))
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tapir.sim.errors import SimUsageError

IDLE_STATE_ERROR = "ERROR: could not get idle state."
#: What a ``FaultEvent`` can do by name (a callable taking the ``SimDevice`` does anything else).
EVENT_KINDS = ("crash", "dialog", "home", "back")
DROP_POINTS = ("open", "reply")


@dataclass(frozen=True)
class FaultEvent:
    """Something that happens on the device by itself, once: right after the ``after``-th
    command named ``command`` (counted from when it is armed) has run, before the next one.

    ``what``: ``"crash"`` (the foreground app dies: the launcher shows, as after a crash on
    Android), ``"dialog"`` (a system permission dialog covers the app until one of its buttons
    is tapped; see ``SystemDialog``), ``"home"``, ``"back"``, or a callable given the
    ``SimDevice`` (a test's own change: a view that goes away, a list that reorders).

    ``after=2, command="input"``: after the second input, i.e. as the app reacts to it. An event
    after a ``uiautomator`` dump changes the screen between the dump a client grounds on and its
    next input: what it found there is gone when it taps.
    """

    what: str | Callable[[Any], None]
    after: int = 1
    command: str = "input"

    def __post_init__(self) -> None:
        if isinstance(self.what, str) and self.what not in EVENT_KINDS:
            raise SimUsageError(f"unknown fault event {self.what!r}; known: {', '.join(EVENT_KINDS)}")
        if self.after < 1:
            raise SimUsageError(f"a fault event fires after at least one command (got after={self.after})")

    def describe(self) -> str:
        what = self.what if isinstance(self.what, str) else getattr(self.what, "__name__", "change")
        return f"{what} after {self.after} `{self.command}`"


@dataclass
class Faults:
    """What to break, and how often. Every setting defaults to "nothing breaks"."""

    #: Seconds to sleep before running a command, by command name (``uiautomator``, ``input``,
    #: ``am``...); ``default_latency`` applies to commands not listed.
    latency: dict[str, float] = field(default_factory=dict)
    default_latency: float = 0.0
    #: The next N ``uiautomator dump`` runs print ``ERROR: could not get idle state.``.
    dump_errors: int = 0
    #: After this many more shell/exec commands, the next one drops the whole transport
    #: connection instead of answering (one-shot: it disarms itself when it fires).
    drop_after: int | None = None
    #: Where the drop happens: ``"open"``, before the command runs (nothing ran, any command may
    #: be sent again), or ``"reply"``, after it ran and before its output is sent (a tap happened
    #: but its client cannot know).
    drop_at: str = "open"
    #: For this many seconds after each input, dumps still show the screen from before it (an app
    #: that reacts late, beyond a client's settle interval).
    input_lag: float = 0.0
    #: Things that will happen by themselves (``FaultEvent``), each once; ``fired`` lists those
    #: that did, oldest first.
    events: list[FaultEvent] = field(default_factory=list)
    fired: list[FaultEvent] = field(default_factory=list)
    #: Passed to every app that has ``set_drift`` (see ``SimDevice.set_drift``), with
    #: ``drift_options`` as keyword arguments (the toolkit's apps take ``seed`` and ``rate``).
    drift: Any = None
    drift_options: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _counts: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.drop_at not in DROP_POINTS:
            raise SimUsageError(f"drop-at must be one of {', '.join(DROP_POINTS)}, not {self.drop_at!r}")

    def latency_for(self, command: str) -> float:
        return self.latency.get(command, self.default_latency)

    def take_dump_error(self) -> bool:
        """True when this dump must fail (and counts it)."""
        with self._lock:
            if self.dump_errors > 0:
                self.dump_errors -= 1
                return True
            return False

    def take_drop(self) -> bool:
        """Count one command; True when this one must drop the connection."""
        with self._lock:
            if self.drop_after is None:
                return False
            if self.drop_after <= 0:
                self.drop_after = None
                return True
            self.drop_after -= 1
            return False

    def arm(self, *events: FaultEvent) -> None:
        """Add events; each counts its commands from now."""
        with self._lock:
            self.events.extend(events)

    def take_events(self, command: str) -> list[FaultEvent]:
        """Count one run of ``command``; the events that fire now (removed from ``events``)."""
        with self._lock:
            due, waiting = [], []
            for event in self.events:
                seen = self._counts.get(id(event), 0) + (event.command == command)
                if seen >= event.after:
                    self._counts.pop(id(event), None)
                    due.append(event)
                else:
                    self._counts[id(event)] = seen
                    waiting.append(event)
            self.events[:] = waiting
            self.fired.extend(due)
            return due

    @classmethod
    def from_options(
        cls,
        *,
        latency: Mapping[str, float] | None = None,
        dump_errors: int = 0,
        drop_after: int | None = None,
        drop_at: str = "open",
        input_lag: float = 0.0,
        events: Sequence[FaultEvent] = (),
        drift: Any = None,
        drift_options: Mapping[str, Any] | None = None,
    ) -> Faults:
        lat = dict(latency or {})
        default = lat.pop("*", 0.0)
        for name, seconds in {**lat, "*": default}.items():
            if seconds < 0:
                raise SimUsageError(f"latency for {name!r} must not be negative (got {seconds})")
        if dump_errors < 0:
            raise SimUsageError(f"dump errors must not be negative (got {dump_errors})")
        if drop_after is not None and drop_after < 0:
            raise SimUsageError(f"drop-after must not be negative (got {drop_after})")
        if input_lag < 0:
            raise SimUsageError(f"input lag must not be negative (got {input_lag})")
        return cls(latency=lat, default_latency=default, dump_errors=dump_errors, drop_after=drop_after,
                   drop_at=drop_at, input_lag=input_lag, events=list(events), drift=drift,
                   drift_options=dict(drift_options or {}))


def parse_latency(items: list[str] | None) -> dict[str, float]:
    """Parse ``CMD=SECONDS`` items (``*=0.2`` for every command) as given on the command line."""
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SimUsageError(f"latency must look like COMMAND=SECONDS (e.g. uiautomator=1.5), got {item!r}")
        try:
            out[name] = float(value)
        except ValueError:
            raise SimUsageError(f"latency {item!r}: {value!r} is not a number of seconds") from None
    return out


def parse_event(item: str) -> FaultEvent:
    """``WHAT@N`` or ``WHAT@N:COMMAND`` as given on the command line: ``crash@3`` (the app
    crashes after the third input), ``dialog@2:uiautomator`` (a dialog shows after the second
    dump)."""
    what, sep, rest = item.partition("@")
    count, _, command = rest.partition(":")
    if not sep or not count.strip().isdigit():
        raise SimUsageError(f"an event looks like WHAT@N or WHAT@N:COMMAND (e.g. crash@3), got {item!r}",
                            hint=f"WHAT is one of {', '.join(EVENT_KINDS)}")
    return FaultEvent(what.strip(), after=int(count), command=command.strip() or "input")
