"""The run's heap policy (``tapir.runtime.heap``): freeze what is loaded, collect the young less often."""

from __future__ import annotations

import gc

import pytest
from tapir.runtime import heap


def test_settling_the_heap_freezes_what_is_loaded_and_raises_the_young_threshold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
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
    finally:
        gc.set_threshold(*thresholds)
