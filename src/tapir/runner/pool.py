"""Device slots: running jobs on several devices at once (``tapir test`` and ``tapir eval``).

    with DevicePool(["sim"], jobs=4) as pool:               # four simulators at once
        run = pool.run(scripts, lambda script, slot: run_one(script, slot), on_result=print)
    run.results, run.not_run

Each ``--device`` value is a slot: a simulator spec (``sim``, ``sim:APP``) starts a fresh
simulated device per job, and ``jobs`` of them run at once (each simulator spec named counts as
one more); an adb serial is one phone running one job at a time. Jobs are handed to the first
free slot, on_result is called in the calling thread as each finishes, and results come back in
the order of the items. All simulators share one private adb server, started for the pool
(``adb_port`` names an existing one instead) and killed when it closes. A phone is on the adb
server its spec names (``HOST:PORT/SERIAL``: one run can use phones on several servers), else on
``adb_host``/``adb_port``, else the default one.

Ctrl-C keeps what finished: jobs not started are dropped, those running are let finish, and
``PoolRun.not_run`` lists the items that have no result.
"""

from __future__ import annotations

import concurrent.futures
import queue
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from tapir.sim.launch import is_sim_spec

__all__ = ["DevicePool", "PoolRun", "Slot", "plan_slots"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Slot:
    """Where one job runs: ``name`` is what reports show (``sim#2``, or the serial)."""

    name: str
    #: What ``--device`` takes: a simulator spec or an adb serial.
    device: str
    #: The adb server a simulator slot attaches to; a phone's (None: the default one). A phone
    #: whose spec names its server (``HOST:PORT/SERIAL``) is on that one whatever these say.
    adb_port: int | None = None
    #: A phone's adb server host (None: ``$ANDROID_ADB_SERVER_HOST``, else 127.0.0.1).
    adb_host: str | None = None

    @property
    def is_sim(self) -> bool:
        return is_sim_spec(self.device)


def plan_slots(devices: Sequence[str], jobs: int = 1) -> list[tuple[str, str]]:
    """``(name, device)`` of each slot: simulators first (``max(jobs, simulator specs named)``
    of them, the specs taken in turn), then one per serial. No device named means ``sim``."""
    devices = list(devices) or ["sim"]
    sims = [d for d in devices if is_sim_spec(d)]
    serials = list(dict.fromkeys(d for d in devices if not is_sim_spec(d)))
    n_sims = max(jobs, len(sims)) if sims else 0
    return [(f"sim#{i + 1}", sims[i % len(sims)]) for i in range(n_sims)] + [(s, s) for s in serials]


@dataclass
class PoolRun(Generic[T, R]):
    """What a pool run gave: the results in the items' order, and the items without one."""

    results: list[R] = field(default_factory=list)
    #: Items that did not run because the run was interrupted (Ctrl-C).
    not_run: list[T] = field(default_factory=list)
    #: True when Ctrl-C stopped the run.
    interrupted: bool = False


class DevicePool:
    """Slots for ``devices`` (see the module docstring); use it as a context manager."""

    def __init__(self, devices: Sequence[str] = ("sim",), jobs: int = 1, *, adb_port: int | None = None,
                 adb_host: str | None = None) -> None:
        self.plan = plan_slots(devices, jobs)
        self._adb_port = adb_port
        self._adb_host = adb_host
        self._own_server = False

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.plan]

    def __enter__(self) -> DevicePool:
        if self._adb_port is None and any(is_sim_spec(device) for _, device in self.plan):
            from tapir.sim.launch import start_private_adb_server

            self._adb_port, self._own_server = start_private_adb_server(), True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own_server and self._adb_port is not None:
            from tapir.sim.launch import kill_adb_server

            kill_adb_server(self._adb_port)
            self._adb_port, self._own_server = None, False

    def slots(self) -> list[Slot]:
        # a phone is on the server the caller named; the private server this pool started for its
        # simulators knows no phone, so a phone then stays on the default one
        def port(device: str) -> int | None:
            return self._adb_port if is_sim_spec(device) or not self._own_server else None

        return [Slot(name, device, port(device), None if is_sim_spec(device) else self._adb_host)
                for name, device in self.plan]

    def run(
        self,
        items: Sequence[T],
        job: Callable[[T, Slot], R],
        *,
        on_result: Callable[[R], None] | None = None,
        on_crash: Callable[[T, Slot, str], R] | None = None,
    ) -> PoolRun[T, R]:
        """Run ``job(item, slot)`` for every item on the first free slot.

        An exception from a job is an internal bug: it must not lose the rest of the run, so
        ``on_crash(item, slot, traceback_text)`` turns it into a result (without ``on_crash`` it
        propagates). KeyboardInterrupt (a job's or the user's) stops the run as described above.
        """
        free: queue.Queue[Slot] = queue.Queue()
        slots = self.slots()
        for slot in slots:
            free.put(slot)

        def work(item: T) -> R:
            slot = free.get()
            try:
                return job(item, slot)
            except Exception:
                if on_crash is None:
                    raise
                return on_crash(item, slot, traceback.format_exc(limit=8))
            finally:
                free.put(slot)

        done: dict[int, R] = {}
        out: PoolRun[T, R] = PoolRun()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(len(slots), 1), thread_name_prefix="tapir") as pool:
            futures = {pool.submit(work, item): i for i, item in enumerate(items)}
            try:
                for future in concurrent.futures.as_completed(futures):
                    result = future.result()
                    done[futures[future]] = result
                    if on_result is not None:
                        on_result(result)
            except KeyboardInterrupt:
                out.interrupted = True
                for f in futures:
                    f.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                for f, i in futures.items():
                    if f.done() and not f.cancelled() and f.exception() is None:
                        done.setdefault(i, f.result())
        out.results = [done[i] for i in range(len(items)) if i in done]
        out.not_run = [item for i, item in enumerate(items) if i not in done]
        return out
