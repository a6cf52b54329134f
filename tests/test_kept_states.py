"""The states of the last prompts kept in memory: which one a prompt resumes from, and the budget."""

from __future__ import annotations

from tapir.codegen.kept_states import KeptStates, common_prefix


def test_the_state_sharing_the_most_leading_tokens_is_found() -> None:
    kept = KeptStates(max_bytes=100)
    kept.add([1, 2, 3, 4, 5], b"a" * 5)
    kept.add([1, 2, 9, 9], b"b" * 4)
    hit = kept.longest([1, 2, 3, 4, 7, 7])
    assert hit is not None and hit[0] == 4 and hit[1].tokens == (1, 2, 3, 4, 5)
    hit = kept.longest([1, 2, 9, 8])
    assert hit is not None and hit[0] == 3 and hit[1].tokens == (1, 2, 9, 9)
    assert KeptStates().longest([1, 2]) is None
    assert common_prefix([1, 2, 3], [1, 2]) == 2 and common_prefix([], [1]) == 0


def test_the_least_recently_used_go_first_past_the_budget() -> None:
    kept = KeptStates(max_bytes=10)
    kept.add([1, 1], b"x" * 4)
    kept.add([2, 2], b"x" * 4)
    kept.longest([1, 1, 5])  # used: now the most recent
    kept.add([3, 3], b"x" * 4)  # 12 bytes: the least recently used, [2, 2], goes
    assert len(kept) == 2 and kept.size == 8
    hit = kept.longest([2, 2])
    assert hit is not None and hit[0] == 0
    kept.add([4], b"x" * 11)  # larger than the whole budget: not kept, nothing dropped for it
    assert len(kept) == 2
    kept.clear()
    assert len(kept) == 0 and kept.longest([1]) is None


def test_a_state_that_another_extends_is_replaced_by_it() -> None:
    """A repair's prompt does not extend its task's (it diverges after the task line), but the
    same prompt computed again with more tokens would: the shorter state serves nothing the
    longer one does not."""
    kept = KeptStates(max_bytes=100)
    kept.add([1, 2, 3], b"abc")
    kept.add([1, 2, 3, 4], b"abcd")
    kept.add([1, 2, 5], b"abe")
    assert len(kept) == 2
    assert sorted(s.tokens for s in kept._states) == [(1, 2, 3, 4), (1, 2, 5)]
