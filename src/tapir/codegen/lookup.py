"""Drafts for speculative decoding taken from the prompt itself (prompt-lookup decoding).

A script copies most of its tokens from its prompt: element names (``$notes_screen__note_list``),
option texts, the failed script a repair round shows. When the answer's last few tokens appeared
before, the tokens that followed them there are a good guess for what comes next. The model checks
a guess of k tokens in one batch, which on a CPU costs little more than one token (a 1.5B model
on 2 cores: ``python bench/prompt_lookup.py ... --row-costs``), and keeps the part it chooses
itself at each row. The answer is the model's own, but not bit for bit the one of a token at a
time: llama.cpp computes a batch of rows with other kernels than one row, and a near-tie between
two tokens can fall the other way (``tests/test_codegen_llm.py`` measures how often).

    drafts = PromptLookup(prompt_tokens)
    drafts.extend([tok])                 # each token the answer gets
    drafts.draft(8)                      # up to 8 tokens to check, or [] when nothing matches

The draft length adapts: it doubles after a draft the model took whole and shrinks to what was
taken after one it cut short, since a rejected token costs the batch its length for nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DRAFT_TOKENS", "PromptLookup"]

#: The longest draft a local model checks in one batch, by default (``--no-drafts``: none).
DRAFT_TOKENS = 16


class PromptLookup:
    """The tokens seen so far, indexed by n-gram, and a draft length that follows the hit rate."""

    def __init__(self, tokens: Sequence[int], *, max_ngram: int = 3, min_ngram: int = 2,
                 max_draft: int = DRAFT_TOKENS, first_draft: int = 4) -> None:
        self.tokens: list[int] = list(tokens)
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self.max_draft = max_draft
        self.length = min(first_draft, max_draft)
        #: n-gram -> the position just after its latest occurrence (the latest is the likeliest:
        #: the answer so far, a repair's failed script, then the document).
        self._after: dict[tuple[int, ...], int] = {}
        for end in range(1, len(self.tokens)):  # the tail's continuation is not known yet
            self._index(end)
        self.drafted = 0
        self.accepted = 0

    def _index(self, end: int) -> None:
        for n in range(self.min_ngram, self.max_ngram + 1):
            if end - n >= 0:
                self._after[tuple(self.tokens[end - n:end])] = end

    def extend(self, tokens: Sequence[int]) -> None:
        """Add tokens of the answer (taken by the model) to what later drafts can copy."""
        for tok in tokens:
            # The n-grams ending at the old end now have a continuation: index them before the
            # new tail, whose own n-grams would point past the end.
            self.tokens.append(tok)
            self._index(len(self.tokens) - 1)

    def draft(self, limit: int | None = None) -> list[int]:
        """Up to ``limit`` (and the current draft length) tokens, from the longest n-gram that matches."""
        k = self.length if limit is None else min(self.length, limit)
        if k <= 0:
            return []
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if len(self.tokens) < n:
                continue
            start = self._after.get(tuple(self.tokens[-n:]))
            if start is not None and start < len(self.tokens):
                return self.tokens[start:start + k]
        return []

    def feedback(self, offered: int, taken: int) -> None:
        """How much of a draft of ``offered`` tokens the model took: sets the next draft's length."""
        self.drafted += offered
        self.accepted += taken
        if offered and taken == offered:
            self.length = min(self.max_draft, self.length * 2)
        else:
            self.length = max(1, min(self.length, taken + 1))
