"""What grounding answers: a node with the evidence for it, or a screen with its score."""

from __future__ import annotations

from dataclasses import dataclass

from tapir.hierarchy import UINode

#: How a node was found. ``identifier``, ``fuzzy`` and ``embedding`` are the stages of
#: ``Grounder.ground``; ``exact`` and ``attributes`` are only given by ``Grounder.match_item``
#: (text equal to the query after case/space folding, or an attribute dict that holds).
METHODS = ("identifier", "fuzzy", "embedding", "exact", "attributes")


@dataclass(frozen=True)
class Grounding:
    """The node to act on for an element, and why.

    ``node`` is the actionable target: for a button, the clickable node itself or the clickable
    row around the matched label; for an input, the editable node. ``identifier_index`` is the
    position in the element's identifier queue of the XPath that found it (``identifier`` method
    only). ``score`` is the stage's similarity in [0, 1] (1.0 for an identifier), and
    ``runner_up_score`` the best score of a candidate with a different target (None if there was
    none), so ``score - runner_up_score`` is the margin the stage required.
    """

    node: UINode
    method: str
    identifier_index: int | None
    score: float
    runner_up_score: float | None
    detail: str


@dataclass(frozen=True)
class ScreenMatch:
    """Which document screen is showing.

    ``name`` is None when no screen reaches the threshold. ``score`` is the confidence in [0, 1]:
    the winner's evidence, lowered when a runner-up is within the margin (a tie keeps the first
    screen in document order, with at most half the confidence). ``candidates`` lists every
    screen with some evidence, best first (the winner first), with its raw evidence score.
    ``beaten`` are look-alikes within the margin that the winner beat on evidence only it has
    (elements found by their texts or descriptions): they are ruled out as surely as screens
    far behind.
    """

    name: str | None
    score: float
    candidates: tuple[tuple[str, float], ...]
    detail: str = ""
    beaten: frozenset[str] = frozenset()

    @property
    def confident(self) -> bool:
        """Named, and clearly ahead of every rival (by the margin, or beaten on evidence)."""
        if self.name is None or not self.candidates:
            return False
        return self.score >= self.score_of(self.name) - 1e-9

    def score_of(self, screen: str) -> float:
        """The raw evidence score of ``screen`` (0.0 when it had none)."""
        for name, score in self.candidates:
            if name == screen:
                return score
        return 0.0

    def rules_out(self, screen: str, margin: float) -> bool:
        """True when another screen is confidently showing and ``screen`` is not a contender:
        behind the winner by ``margin``, or a look-alike it beat."""
        if not self.confident or self.name == screen:
            return False
        return screen in self.beaten or self.score_of(self.name or "") - self.score_of(screen) >= margin
