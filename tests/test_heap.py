"""The run's heap policy (``tapir.runtime.heap``): freeze what is loaded, collect the young less often."""

from __future__ import annotations

import gc
import weakref

import pytest

from tapir.runtime import heap


def test_settling_the_heap_freezes_what_is_loaded_and_raises_the_young_threshold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(heap, "_frozen", False)  # as in a fresh process
    thresholds = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        heap.settle()
        assert frozen == [True] and gc.get_threshold() == (heap.YOUNG_THRESHOLD, 10, 10)
        gc.set_threshold(500_000, 5, 5)  # a host program's higher setting stays
        heap.settle()
        assert gc.get_threshold() == (500_000, 5, 5)
        gc.set_threshold(0, 10, 10)  # automatic collection turned off stays off
        heap.settle()
        assert gc.get_threshold()[0] == 0
        assert frozen == [True]  # frozen once: later runs' garbage stays collectable
    finally:
        gc.set_threshold(*thresholds)


def test_a_later_settle_does_not_make_the_previous_runs_garbage_permanent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that runs many scripts settles for each; what an earlier run left in reference
    cycles must still be collected (freezing it leaked ~80 MB a round of `tapir test samples`)."""
    monkeypatch.setattr(heap, "_frozen", True)  # an earlier run of this process settled already

    class Runtime:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the cyclic collector frees it

    collected: list[int] = []
    garbage = Runtime()
    weakref.finalize(garbage, collected.append, 1)
    del garbage  # the run is over, its runtime unreachable
    heap.settle()  # the next run
    gc.collect()
    assert collected == [1]
