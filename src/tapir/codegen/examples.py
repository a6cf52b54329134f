"""In-context examples: validated task/script pairs, retrieved by similarity to the task.

Example files sit in an ``examples/`` folder beside the app document: ``*.yaml`` (hand-written)
or ``*.jsonl`` (one JSON object a line, what task synthesis writes). Each entry has a ``task``
and a ``script``, optionally a ``plan``::

    - task: Play the song "Lanterns"
      plan: Tap the song in the songs list
      script: |
        $songs_screen__song_list.match("Lanterns").tap()

``tapir synth``'s output (chat records: ``messages`` and ``meta`` with ``task``, ``script`` and
``app``) is read too, from that folder or from a file or folder given with ``--examples-file``
(a pool of several apps' files: ``tapir synth --droidtask`` writes one per app). A record that
names its app is an example for that app's document only.

``ExampleStore.for_document(path)`` loads the entries of those files (in file-name order) that
check clean against the document; ``retrieve(task, k)`` ranks them by the cosine similarity of
their MiniLM sentence embeddings when the store has an embedder (``tapir.runtime.grounding``),
else by TF-IDF cosine similarity of words (stop words dropped, plural/verb endings folded).

``without(texts)`` holds tasks out: an example whose task is one of ``texts``, or a near-copy
of one (``near_duplicate``: the same words once normalised, or a character similarity of at
least ``NEAR_DUPLICATE``), is dropped, so an evaluated task is never answered from its own
example.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["NEAR_DUPLICATE", "NO_PLAN", "Example", "ExampleStore", "app_key", "example_files", "load_examples",
           "near_duplicate", "normalise_task"]

#: Two task texts at least this similar (difflib's ratio, on normalised text) are near-copies.
NEAR_DUPLICATE = 0.85

_ELEMENT = re.compile(r"\$([A-Za-z_][\w%]*)")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on and or for by with is it its from at as be this that then all".split())


#: An example's plan when it has none of its own but the task (``tapir synth``'s pairs): short, so
#: the model that copies it gets to the elements and the script sooner.
NO_PLAN = "as the task says"


@dataclass(frozen=True)
class Example:
    task: str
    script: str
    plan: str = ""
    source: str = ""
    #: The app the example is for (``tapir synth``'s ``meta.app``), as ``app_key`` spells it; "": any.
    app: str = ""

    @property
    def elements(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for m in _ELEMENT.finditer(self.script):
            seen.setdefault(m.group(1), None)
        return tuple(seen)

    def answer(self) -> str:
        """The example in the answer format the model writes."""
        # A plan that only repeats the task (every synthesized pair's) costs its tokens twice in the
        # prompt and again in each answer that copies it; a fixed short plan says the same.
        plan = self.plan if self.plan and self.plan != self.task else NO_PLAN
        els = ", ".join(f"${e}" for e in self.elements)
        return f"Plan: {plan}\nElements: {els}\n```python\n{self.script.rstrip(chr(10))}\n```"


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def normalise_task(text: str) -> str:
    """A task text compared for copies: lower case, words only, quotes and punctuation gone."""
    return " ".join(_WORD.findall(text.lower()))


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """Whether two task texts are the same task written slightly differently."""
    na, nb = normalise_task(a), normalise_task(b)
    if na == nb or sorted(_words(a)) == sorted(_words(b)):
        return True
    return difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio() >= threshold


def app_key(name: str) -> str:
    """An app's name as examples and ``tapir synth`` name it: lower case, ``_`` for spaces."""
    return name.strip().lower().replace(" ", "_")


def example_files(paths: Iterable[str | Path]) -> list[Path]:
    """The example files of ``paths``: a file as it is, a folder's ``*.jsonl`` / ``*.yaml`` files
    (in name order; ``tapir synth`` data cards are not examples)."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            out += sorted(f for f in path.iterdir() if f.is_file() and f.suffix in (".jsonl", ".yaml", ".yml"))
        else:
            out.append(path)
    return out


def _entry(raw: dict[str, Any]) -> tuple[str, str, str] | None:
    """(task, script, plan) of a plain entry or of a ``tapir synth`` chat record."""
    if isinstance(raw.get("task"), str) and isinstance(raw.get("script"), str):
        return raw["task"], raw["script"], str(raw.get("plan") or "")
    meta = raw.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("task"), str) and isinstance(meta.get("script"), str):
        plan = ""
        for message in raw.get("messages") or ():
            if isinstance(message, dict) and message.get("role") == "assistant":
                first = str(message.get("content") or "").split("\n", 1)[0]
                plan = first[len("Plan:"):].strip() if first.startswith("Plan:") else ""
        return meta["task"], meta["script"], plan
    return None


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
        got = _entry(entry) if isinstance(entry, dict) else None
        if got is not None:
            task, script, plan = got
            script = script if script.endswith("\n") else script + "\n"
            meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else entry
            app = meta.get("app") if isinstance(meta.get("app"), str) else ""
            out.append(Example(task.strip(), script, plan.strip(), str(path), app_key(app)))
    return out


class ExampleStore:
    """A pool of examples with TF-IDF retrieval."""

    def __init__(self, examples: Sequence[Example], *, embedder: Any = None) -> None:
        self.examples = list(examples)
        #: A ``tapir.runtime.grounding.Embedder`` (MiniLM), or None for TF-IDF retrieval.
        self.embedder = embedder
        # a pool written with the short plan is retrieved as one that repeats the task was
        docs = [Counter(_words(e.task + " " + (e.task if e.plan == NO_PLAN else e.plan))) for e in self.examples]
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
    def for_document(cls, document: str | Path, table: object | None = None, *, extra: Iterable[str | Path] = (),
                     embedder: Any = None, app: str | None = None) -> ExampleStore:
        """The examples in the ``examples/`` folder beside ``document`` and in the ``extra`` files
        or folders (``tapir synth`` output, say); with ``app`` (the document's app name), not those
        that name another app; with a symbol table, only those that check clean (which also leaves
        out another app's pairs that do not name their app)."""
        folder = Path(document).parent / "examples"
        examples: list[Example] = []
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *folder.glob("*.jsonl")]):
            examples += load_examples(path)
        for more in example_files(extra):
            examples += load_examples(more)
        if app is not None:
            examples = [e for e in examples if not e.app or e.app == app_key(app)]
        # the same pair in two files (a synth file given again with --examples-file) counts once
        examples = list({(e.task, e.script): e for e in examples}.values())
        if table is not None:
            from tapir.codegen import language as L

            examples = [e for e in examples
                        if not any(i.is_error for i in L.check(e.script, table))]  # type: ignore[arg-type]
        return cls(examples, embedder=embedder)

    def split(self, standing: int) -> tuple[list[Example], ExampleStore]:
        """The first ``standing`` examples (for the prompt prefix) and a store of the rest (to retrieve from)."""
        return self.examples[:standing], ExampleStore(self.examples[standing:], embedder=self.embedder)

    def without(self, tasks: Iterable[str], threshold: float = NEAR_DUPLICATE) -> ExampleStore:
        """This pool less every example whose task is one of ``tasks`` or a near-copy of one."""
        held = list(tasks)
        kept = [e for e in self.examples if not any(near_duplicate(e.task, t, threshold) for t in held)]
        return ExampleStore(kept, embedder=self.embedder)

    def retrieve(self, task: str, k: int = 2, *, exclude: str | None = None) -> list[Example]:
        """The ``k`` examples most similar to ``task``, in pool order (stable prompts for caching).

        ``exclude`` drops an example whose task is that text or a near-copy of it (leave-one-out).
        """
        if k <= 0 or not self.examples:
            return []
        keep = [i for i, ex in enumerate(self.examples) if exclude is None or not near_duplicate(ex.task, exclude)]
        if self.embedder is not None:
            sims = self.embedder.similarity([task], [self.examples[i].task for i in keep])[0]
            scored = [(float(s), -i, i) for s, i in zip(sims, keep, strict=True)]
        else:
            query = self._vector(Counter(_words(task)))
            scored = [(sum(v * self._vectors[i].get(w, 0.0) for w, v in query.items()), -i, i) for i in keep]
        best = sorted(scored, reverse=True)[:k]
        return [self.examples[i] for _, _, i in sorted(best, key=lambda t: t[2])]
