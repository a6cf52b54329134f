"""Model states of earlier prompts, kept in memory, so that a prompt reuses the longest prefix it
shares with any of them, not only with the prompt just before it.

A focused prompt's per-task part starts with the elements of the screens the task needs; two
tasks on one app often need the same first screens, but seldom one right after the other. The
context holds the last prompt only, so the screens one task shared with the task before the last
were computed again. On the DroidTask suite's first-round prompts (``python
bench/prompt_budget.py ../shared/upstream/droidtask --examples-file POOL --kept-bytes 0``, then
with the default) the cached share of a warm prompt goes from 81.2% with the previous prompt
alone to 87.1% with the states that 1 GiB keeps (docs/codegen.md).

A state is llama.cpp's context state (the KV cache of its tokens: about 28 kB a token for
Qwen2.5-1.5B, so 4,000 tokens take 115 MB), opaque here::

    kept = KeptStates(max_bytes=1 << 30)
    kept.add(tokens, state)                 # after a prompt was evaluated
    hit = kept.longest(other_tokens)        # (shared tokens, KeptState) or None
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_KEPT_BYTES", "KeptState", "KeptStates", "common_prefix"]

#: Memory for kept states by default: about eight prompts of 4,000 tokens of Qwen2.5-1.5B.
DEFAULT_KEPT_BYTES = 1 << 30


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True)
class KeptState:
    """The tokens a context held and its state (bytes-like, as llama.cpp wrote it)."""

    tokens: tuple[int, ...]
    state: bytes | bytearray | memoryview

    @property
    def size(self) -> int:
        return len(self.state)


class KeptStates:
    """The most recent states, within ``max_bytes`` (the least recently used go first; a state
    larger than the whole budget is not kept)."""

    def __init__(self, max_bytes: int = DEFAULT_KEPT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._states: list[KeptState] = []  # least recently used first

    def __len__(self) -> int:
        return len(self._states)

    @property
    def size(self) -> int:
        return sum(s.size for s in self._states)

    def add(self, tokens: Sequence[int], state: bytes | bytearray | memoryview) -> None:
        """Keep ``state`` for ``tokens``; a state whose tokens another one starts with is
        replaced by it (the longer one serves every prompt the shorter one did)."""
        entry = KeptState(tuple(tokens), state)
        if entry.size > self.max_bytes:
            return
        self._states = [s for s in self._states if s.tokens != entry.tokens[: len(s.tokens)]]
        self._states.append(entry)
        while self.size > self.max_bytes:
            self._states.pop(0)

    def longest(self, tokens: Sequence[int]) -> tuple[int, KeptState] | None:
        """The kept state that shares the most leading tokens with ``tokens`` and how many, or
        None when none is kept; the one found becomes the most recently used."""
        best: tuple[int, KeptState] | None = None
        for s in self._states:
            n = common_prefix(s.tokens, tokens)
            if best is None or n > best[0]:
                best = (n, s)
        if best is not None:
            self._states.remove(best[1])
            self._states.append(best[1])
        return best

    def clear(self) -> None:
        self._states.clear()
