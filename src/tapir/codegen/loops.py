"""Stopping an answer that repeats itself (the "no loops" lever).

A small model given a long prompt sometimes writes the same statement, or the same few lines,
again and again until the token limit: 900 tokens for a four-line answer, and a script that
repeats an action it was meant to take once. ``RepeatGuard`` watches the answer as it is written,
one finished line at a time, and says when it has started looping:

* the last ``k`` lines (``k`` from 1 to ``max_block``) are the ``k`` lines before them, repeated
  so that the block has now been written ``repeats`` times in a row (3 by default); or
* one statement (a line of at least ``min_chars`` characters, blank lines and fences aside) has
  been written ``max_same`` times in all (4 by default).

A repeated statement is rarely meant (a loop is written with ``for``), so the answer is stopped
there and cut back to its first copy of the block: ``cut()`` gives the text without the repeats.
The backends (``llama_backend`` while decoding; the others on the finished text) report such an
answer with ``finish="loop"``::

    guard = RepeatGuard()
    for piece in stream:
        if guard.feed(piece):
            text = guard.cut()
            break
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RepeatGuard", "stop_repeats"]


@dataclass
class RepeatGuard:
    repeats: int = 3
    max_block: int = 6
    max_same: int = 4
    min_chars: int = 4
    #: The text seen so far.
    text: str = ""
    #: Where the answer should end (an offset in ``text``) once a loop was seen, else None.
    cut_at: int | None = None
    _lines: list[tuple[str, int]] = field(default_factory=list)  # (stripped line, offset of its start)
    _counts: dict[str, int] = field(default_factory=dict)
    _done: int = 0  # offset of the first character of the unfinished line

    @property
    def looping(self) -> bool:
        return self.cut_at is not None

    def feed(self, piece: str) -> bool:
        """Add generated text; True once the answer has started repeating itself."""
        if self.cut_at is not None:
            return True
        self.text += piece
        while True:
            end = self.text.find("\n", self._done)
            if end < 0:
                return False
            line, start = self.text[self._done:end].strip(), self._done
            self._done = end + 1
            if self._line(line, start):
                return True

    def _line(self, line: str, start: int) -> bool:
        if not line or line.startswith("```"):
            return False
        self._lines.append((line, start))
        if len(line) >= self.min_chars:
            self._counts[line] = self._counts.get(line, 0) + 1
            if self._counts[line] >= self.max_same:
                self.cut_at = start
                return True
        lines = [s for s, _ in self._lines]
        for k in range(1, self.max_block + 1):
            span = k * self.repeats
            if len(lines) < span:
                break
            block = lines[-k:]
            if sum(len(s) for s in block) < self.min_chars:
                continue
            if all(lines[-span + i * k: len(lines) - span + (i + 1) * k] == block for i in range(self.repeats)):
                # keep the first copy of the block; the answer ends where the second began
                self.cut_at = self._lines[len(lines) - span + k][1]
                return True
        return False

    def cut(self) -> str:
        """The text without its repeats (all of it when no loop was seen)."""
        return self.text if self.cut_at is None else self.text[: self.cut_at]


def stop_repeats(text: str, guard: RepeatGuard | None = None) -> tuple[str, bool]:
    """A finished answer cut back where it started repeating itself, and whether it did (for
    backends that do not decode token by token: the same verdict, none of the time saved)."""
    guard = guard or RepeatGuard()
    looped = guard.feed(text if text.endswith("\n") else text + "\n")
    return (guard.cut() if looped else text), looped
