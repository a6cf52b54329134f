"""The heap of a run: what is loaded once stays out of the garbage collector's way.

A run loads its modules, the app document and the grounder's indexes once (hundreds of
thousands of objects), then builds a tree of a few objects per view on every step. CPython's
collector walks every tracked object in a full collection, and the steps' allocations trigger
full collections, so a step's cost grew with everything loaded before it and superlinearly with
the size of the screen (a GC share of 4% at 200 views, 36% at 5,000). ``settle()`` moves what
is alive now into the permanent generation, which the collector never walks, and lets the young
generation hold a whole dump's allocations before a collection::

    from tapir.runtime.heap import settle
    settle()          # once, after loading and before the first step (``tapir run`` does)

Trees are acyclic and freed by reference counting, so collecting less often costs no memory.
Anything frozen is never collected, so only the first ``settle()`` of a process freezes: a
process that runs many scripts (``tapir test``, ``tapir eval``, the REPL) calls it for each, and
freezing again would make the previous runs' cyclic garbage (a runtime and its parts refer to
one another) permanent, about 80 MB a round of ``tapir test samples`` (``bench/soak.py``).
"""

from __future__ import annotations

import gc

#: Allocations (minus deallocations) between young collections while a run steps. A step on a
#: 10,000-view screen keeps about 100,000 tracked objects alive while it works (the tree, its
#: HTML form, the grounding indexes); with CPython's default of 700 a step ran 140 young
#: collections that walked them, a GC share of 17%; 3-6% with this (bench/step_speed.py).
YOUNG_THRESHOLD = 100_000


_frozen = False


def settle(young: int = YOUNG_THRESHOLD) -> None:
    """Freeze the objects alive now out of the collector's sight (the first time in a process)
    and raise the young threshold (never lowering one the user or the host program set higher)."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()  # what is garbage already must not become permanent
        gc.freeze()
    threshold0, threshold1, threshold2 = gc.get_threshold()
    if threshold0 and threshold0 < young:  # 0 means the host turned automatic collection off
        gc.set_threshold(young, threshold1, threshold2)
