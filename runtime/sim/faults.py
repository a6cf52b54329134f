"""Fault injection for the simulated device.

Real devices are slow and flaky in a few recurring ways; tests of the runtime's retries,
timeouts and polling need to provoke them on demand:

* latency: ``uiautomator dump`` takes seconds and every ``input`` a few hundred ms on hardware;
* ``ERROR: could not get idle state.``: uiautomator gives up on an animating screen and writes
  no file (it still exits 0, so ``... && echo success`` still prints ``success``);
* a dropped connection: the transport dies mid-session and the device goes ``offline``;
* UI drift: the app looks slightly different from the one that was documented (apps implement
  it; the device only passes the setting on).

A ``Faults`` object is shared by the device (which consults it) and the test (which arms it),
possibly from different threads, so every counter is updated under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tapir.runtime.sim.errors import SimUsageError

IDLE_STATE_ERROR = "ERROR: could not get idle state."


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
    #: Passed to every app that has ``set_drift`` (see ``SimDevice.set_drift``), with
    #: ``drift_options`` as keyword arguments (the toolkit's apps take ``seed`` and ``rate``).
    drift: Any = None
    drift_options: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

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

    @classmethod
    def from_options(
        cls,
        *,
        latency: Mapping[str, float] | None = None,
        dump_errors: int = 0,
        drop_after: int | None = None,
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
        return cls(latency=lat, default_latency=default, dump_errors=dump_errors,
                   drop_after=drop_after, drift=drift, drift_options=dict(drift_options or {}))


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
