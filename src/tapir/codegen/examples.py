"""In-context examples: validated task/script pairs, retrieved by similarity to the task.

Example files sit in an ``examples/`` folder beside the app document: ``*.yaml`` (hand-written)
or ``*.jsonl`` (one JSON object a line, what task synthesis writes). Each entry has a ``task``
and a ``script``, optionally a ``plan``::

    - task: Play the song "Lanterns"
      plan: Tap the song in the songs list
      script: |
        $songs_screen__song_list.match("Lanterns").tap()

``ExampleStore.for_document(path)`` loads the entries of those files (in file-name order) that
check clean against the document; ``retrieve(task, k)`` ranks them by TF-IDF cosine similarity
of words (stop words dropped, plural/verb endings folded).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["Example", "ExampleStore", "load_examples"]

_ELEMENT = re.compile(r"\$([A-Za-z_][\w%]*)")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on and or for by with is it its from at as be this that then all".split())


@dataclass(frozen=True)
class Example:
    task: str
    script: str
    plan: str = ""
    source: str = ""

    @property
    def elements(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for m in _ELEMENT.finditer(self.script):
            seen.setdefault(m.group(1), None)
        return tuple(seen)

    def answer(self) -> str:
        """The example in the answer format the model writes."""
        plan = self.plan or self.task
        els = ", ".join(f"${e}" for e in self.elements)
        return f"Plan: {plan}\nElements: {els}\n```python\n{self.script.rstrip(chr(10))}\n```"


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def load_examples(path: Path) -> list[Example]:
    """Entries of one ``.yaml`` / ``.jsonl`` example file (malformed entries are skipped)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        raw = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        loaded = yaml.safe_load(text)
        raw = loaded if isinstance(loaded, list) else []
    out = []
    for entry in raw:
        if isinstance(entry, dict) and isinstance(entry.get("task"), str) and isinstance(entry.get("script"), str):
            script = entry["script"] if entry["script"].endswith("\n") else entry["script"] + "\n"
            out.append(Example(entry["task"].strip(), script, str(entry.get("plan") or "").strip(), str(path)))
    return out


class ExampleStore:
    """A pool of examples with TF-IDF retrieval."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)
        docs = [Counter(_words(e.task + " " + e.plan)) for e in self.examples]
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        n = len(docs)
        self._idf = {w: math.log((1 + n) / (1 + c)) + 1 for w, c in df.items()}
        self._vectors = [self._vector(d) for d in docs]

    def _vector(self, counts: Counter[str]) -> dict[str, float]:
        vec = {w: c * self._idf.get(w, math.log(1 + len(self.examples)) + 1) for w, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {w: v / norm for w, v in vec.items()}

    @classmethod
    def for_document(cls, document: str | Path, table: object | None = None) -> ExampleStore:
        """The examples in the ``examples/`` folder beside ``document``; with a symbol table, only
        those that check clean."""
        folder = Path(document).parent / "examples"
        examples: list[Example] = []
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *folder.glob("*.jsonl")]):
            examples += load_examples(path)
        if table is not None:
            from tapir.codegen import language as L

            examples = [e for e in examples
                        if not any(i.is_error for i in L.check(e.script, table))]  # type: ignore[arg-type]
        return cls(examples)

    def split(self, standing: int) -> tuple[list[Example], ExampleStore]:
        """The first ``standing`` examples (for the prompt prefix) and a store of the rest (to retrieve from)."""
        return self.examples[:standing], ExampleStore(self.examples[standing:])

    def retrieve(self, task: str, k: int = 2, *, exclude: str | None = None) -> list[Example]:
        """The ``k`` examples most similar to ``task``, in pool order (stable prompts for caching).

        ``exclude`` drops an example whose task is exactly that text (leave-one-out evaluation).
        """
        if k <= 0 or not self.examples:
            return []
        query = self._vector(Counter(_words(task)))
        scored = []
        for i, (ex, vec) in enumerate(zip(self.examples, self._vectors, strict=True)):
            if exclude is not None and ex.task == exclude:
                continue
            score = sum(v * vec.get(w, 0.0) for w, v in query.items())
            scored.append((score, -i, i))
        best = sorted(scored, reverse=True)[:k]
        return [self.examples[i] for _, _, i in sorted(best, key=lambda t: t[2])]
