"""Synthesis end to end: sample walks, validate them (repairing what fails), deduplicate, export.

    from tapir.synth import SynthConfig, synthesize, write_outputs

    run = synthesize([("samples/music/music.yaml", "sim:music")], SynthConfig(count=100, seed=7))
    run.pairs[0].task, run.pairs[0].script, run.card()["rejected"]
    write_outputs(run, "data.jsonl")            # data.jsonl, data.card.json, data.card.md

For each app: probe the items of its lists on a fresh simulated app, build its transition graph
(``tapir.synth.graph``), then draw walks of 1 to ``max_complexity`` actions until ``count`` pairs
are kept (shared evenly over the apps) or ``max_candidates`` walks were drawn. A walk whose
script or task text was seen before is a duplicate and is not run. Each other walk is validated
(``tapir.synth.validate``); one that fails is repaired, depth-first: the repairs its error
category suggests are tried in order, each validated and, if it fails again, repaired in turn,
up to ``repair_depth`` levels and ``repair_budget`` validations per walk (AutoDroid-V2, section
3.2.3, with template-level repairs in place of a model's). A walk that passes has its trailing
actions that change nothing trimmed, and its derived checks run once more on a fresh app; the
first failure of a walk whose repairs all failed is its rejection reason.

Everything is drawn from ``random.Random`` seeded by ``seed`` and the app, and the simulator is
deterministic, so a run is reproducible: the same seed gives the same file.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir import __version__
from tapir.core.document import AppDocument
from tapir.core.errors import UsageError
from tapir.synth.graph import Action, TransitionGraph, Walk, normalise_script, normalise_text
from tapir.synth.validate import CATEGORIES, Outcome, Validator

__all__ = ["FORMAT", "Pair", "Rejection", "SynthApp", "SynthConfig", "SynthInterrupted", "SynthRun", "chat_record",
           "synthesize", "write_card", "write_outputs"]

#: The data card's format name (bumped when its fields change).
FORMAT = "tapir-synth/1"


@dataclass(frozen=True)
class SynthConfig:
    #: Validated pairs wanted, over all apps together (shared evenly).
    count: int = 300
    seed: int = 0
    #: Walks of 1..max_complexity actions.
    max_complexity: int = 5
    #: Walks drawn at most per app, as a multiple of the pairs wanted from it.
    max_candidates_factor: int = 6
    #: Repairs: levels of the depth-first search, and validations per walk in all.
    repair_depth: int = 2
    repair_budget: int = 4
    #: Rephrases the template task texts (``tapir.codegen``), when given.
    rephrase: Callable[[AppDocument, str], str] | None = field(default=None, compare=False)
    #: Validate each script here rather than in a child process under OS limits (``--in-process``:
    #: for debugging; the pairs are the same).
    in_process: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "seed": self.seed, "max_complexity": self.max_complexity,
                "max_candidates_factor": self.max_candidates_factor, "repair_depth": self.repair_depth,
                "repair_budget": self.repair_budget, "texts": "model" if self.rephrase else "templates"}


@dataclass(frozen=True)
class SynthApp:
    """One app to synthesise for: its document (read from ``path`` unless given loaded, as a
    DroidTask suite's import is) and the simulator spec that validates its pairs."""

    path: str | Path
    device: str
    document: AppDocument | None = None
    #: Task texts no pair may copy (a suite's own tasks): a walk whose text is one of them or a
    #: near-copy (``tapir.codegen.examples.near_duplicate``) is not kept.
    held_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pair:
    """A validated (task, script) pair."""

    id: str
    app: str
    document: str
    task: str
    script: str
    complexity: int
    #: Checks that hold on the app's final state after the script (and not on a fresh app).
    checks: tuple[str, ...]
    #: Repairs that made it pass (``drop:3``, ``navigate:2``, ``confirm``...), in order.
    repairs: tuple[str, ...] = ()
    template_task: str = ""
    #: On a replayed recording: the run's action log (what DroidTask's metric compares).
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rejection:
    app: str
    task: str
    script: str
    category: str
    message: str


@dataclass
class SynthRun:
    config: SynthConfig
    apps: dict[str, str]
    pairs: list[Pair] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    duplicates: int = 0
    #: Walks whose text copies a held-out task (``SynthApp.held_out``), not kept.
    held_out: int = 0
    candidates: Counter[str] = field(default_factory=Counter)
    #: Walks that failed once and passed after a repair; validation runs in all.
    repaired: int = 0
    trimmed: int = 0
    runs: int = 0
    wall_s: float = 0.0
    documents: dict[str, AppDocument] = field(default_factory=dict)
    #: Pairs kept from an earlier, interrupted run (``synthesize(resume=...)``), first in ``pairs``.
    resumed: int = 0
    #: The run was stopped (Ctrl-C, SIGTERM) before it was done: ``pairs`` are those kept so far.
    interrupted: bool = False

    def card(self) -> dict[str, Any]:
        """The data card: what was made, from what, and what was thrown away and why."""
        per_app = Counter(p.app for p in self.pairs)
        per_complexity = Counter(p.complexity for p in self.pairs)
        rejected = Counter(r.category for r in self.rejections)
        return {
            "format": FORMAT, "tapir": __version__, "seed": self.config.seed, "config": self.config.as_dict(),
            "apps": self.apps, "pairs": len(self.pairs), "interrupted": self.interrupted, "resumed": self.resumed,
            "candidates": sum(self.candidates.values()),
            "per_app": {app: {"pairs": per_app.get(app, 0), "candidates": self.candidates.get(app, 0),
                              "rejected": sum(1 for r in self.rejections if r.app == app)} for app in self.apps},
            "per_complexity": {str(k): per_complexity[k] for k in sorted(per_complexity)},
            "rejected": {c: rejected[c] for c in CATEGORIES if rejected.get(c)},
            "rejected_total": len(self.rejections),
            "duplicates": self.duplicates, "held_out": self.held_out, "repaired": self.repaired,
            "trimmed": self.trimmed,
            "validation_runs": self.runs, "wall_s": round(self.wall_s, 2),
            "rejection_examples": {c: next(_example(r) for r in self.rejections if r.category == c)
                                   for c in CATEGORIES if rejected.get(c)},
        }


class SynthInterrupted(KeyboardInterrupt):
    """``synthesize`` was stopped by a KeyboardInterrupt (Ctrl-C, or a SIGTERM handler that raises
    one); ``run`` holds what was done, marked ``interrupted``. A KeyboardInterrupt still, so a
    caller that does not look for it stops as before."""

    def __init__(self, run: SynthRun) -> None:
        super().__init__(f"interrupted after {len(run.pairs)} pairs")
        self.run = run


def _example(r: Rejection) -> dict[str, str]:
    return {"app": r.app, "task": r.task, "script": r.script, "message": r.message.splitlines()[0][:300]}


# ---------------------------------------------------------------------------------------------


def synthesize(apps: Sequence[tuple[str | Path, str] | SynthApp], config: SynthConfig | None = None, *,
               on_progress: Callable[[str, int, int], None] | None = None,
               on_pair: Callable[[Pair, AppDocument], None] | None = None,
               resume: Sequence[Pair] = ()) -> SynthRun:
    """Pairs for each ``(document path, simulator spec)`` or ``SynthApp`` (see the module
    docstring); ``on_progress(app, kept, wanted)`` is called once after each walk drawn, and
    ``on_pair(pair, document)`` as soon as a pair is kept (``tapir.synth.stream`` writes it).

    ``resume``: the pairs of an earlier run of the same apps (``stream.read_pairs``); they count
    towards ``count`` and their scripts and texts are duplicates, so only new pairs are made. A
    KeyboardInterrupt raises ``SynthInterrupted`` with the run so far."""
    from tapir.docgen.loader import load_document

    config = config or SynthConfig()
    if config.count < 1:
        raise UsageError("must be at least 1", setting="count")
    if config.max_complexity < 1:
        raise UsageError("must be at least 1", setting="max_complexity")
    if not apps:
        raise UsageError("no app to synthesise for: give --doc APP.yaml (or --samples)")
    loaded: list[tuple[str, AppDocument, SynthApp]] = []
    for given in apps:
        spec = given if isinstance(given, SynthApp) else SynthApp(*given)
        doc = spec.document or load_document(spec.path)
        name = app_name(doc)
        if any(name == n for n, *_ in loaded):
            raise UsageError(f"{spec.path}: the app {name!r} is given twice", setting="doc")
        loaded.append((name, doc, spec))
    run = SynthRun(config, {name: str(spec.path) for name, _, spec in loaded},
                   documents={name: doc for name, doc, _ in loaded})
    started = time.monotonic()
    seen_scripts: set[str] = set()
    seen_texts: set[str] = set()
    for pair in resume:
        if pair.app not in run.apps:
            raise UsageError(f"the pairs to resume are of the app {pair.app!r}, which is not given "
                             f"(given: {', '.join(run.apps)})", setting="resume")
        seen_scripts.add(normalise_script(pair.script))
        seen_texts.add(normalise_text(pair.template_task or pair.task))
    run.pairs.extend(resume)
    run.resumed = len(resume)
    share = [config.count // len(loaded) + (1 if i < config.count % len(loaded) else 0) for i in range(len(loaded))]
    try:
        for (name, doc, spec), wanted in zip(loaded, share, strict=True):
            done = sum(1 for p in resume if p.app == name)
            if done >= wanted:
                continue
            with Validator(doc, spec.device, isolation="inline" if config.in_process else "process") as validator:
                try:
                    _synthesize_app(run, name, doc, spec, validator, done, wanted, seen_scripts, seen_texts,
                                    on_progress, on_pair)
                finally:
                    run.runs += validator.runs
    except KeyboardInterrupt:
        run.interrupted = True
        run.wall_s = time.monotonic() - started
        raise SynthInterrupted(run) from None
    run.wall_s = time.monotonic() - started
    return run


def app_name(document: AppDocument) -> str:
    """The app's name in pairs and cards (``meta.app``): the document's, lower case, ``_`` for spaces."""
    return document.app.name.lower().replace(" ", "_")


def _synthesize_app(run: SynthRun, name: str, doc: AppDocument, spec: SynthApp, validator: Validator, kept: int,
                    wanted: int, seen_scripts: set[str], seen_texts: set[str],
                    on_progress: Callable[[str, int, int], None] | None,
                    on_pair: Callable[[Pair, AppDocument], None] | None) -> None:
    from tapir.codegen.examples import near_duplicate

    config = run.config
    path = str(spec.path)
    rng = random.Random(f"{config.seed}:{name}")
    # a replayed recording follows only the texts it typed: those are the values a walk types
    graph = TransitionGraph(doc, validator.probe_items(), values=validator.recorded_texts if validator.replay else None)
    for _ in range(wanted * config.max_candidates_factor):
        if kept >= wanted:
            break
        walk = graph.sample_walk(rng, rng.randint(1, config.max_complexity))
        if walk is None:
            break
        run.candidates[name] += 1
        if spec.held_out and any(near_duplicate(walk.task_text(), t) for t in spec.held_out):
            run.held_out += 1
        elif _seen(walk, seen_scripts, seen_texts):
            run.duplicates += 1
        else:
            search = _Search(graph, validator, rng, config)
            found = search.run(walk)
            if found is None:
                first = search.first
                assert first is not None
                if first.category == "not-recorded" and first.line == 0:
                    # the recording cannot follow this action even from its start: draw it no more
                    graph.forget(walk.actions[0])
                run.rejections.append(Rejection(name, walk.task_text(), walk.script(), first.category or "runtime",
                                                first.message))
            else:
                walk, outcome, repairs = found
                walk, outcome, trimmed = _trim(walk, outcome, validator)
                run.trimmed += trimmed
                if repairs or trimmed:  # the walk changed: it may now repeat an earlier one
                    if _seen(walk, seen_scripts, seen_texts):
                        run.duplicates += 1
                        _progress(on_progress, name, kept, wanted)
                        continue
                if repairs:
                    run.repaired += 1
                not_held = validator.recheck(walk.script(), outcome.checks)
                if not_held:
                    run.rejections.append(Rejection(name, walk.task_text(), walk.script(), "check-not-reproduced",
                                                    "; ".join(not_held)))
                else:
                    text = walk.task_text()
                    task = config.rephrase(doc, text) if config.rephrase else text
                    if spec.held_out and task != text and any(near_duplicate(task, t) for t in spec.held_out):
                        task = text  # a rephrasing that copies a held-out task: the template instead
                    pair = Pair(f"{name}/{kept + 1:04d}", name, path, task, walk.script(), walk.complexity,
                                outcome.checks, tuple(repairs), text, outcome.actions)
                    run.pairs.append(pair)
                    kept += 1
                    if on_pair is not None:
                        on_pair(pair, doc)
        _progress(on_progress, name, kept, wanted)


def _progress(cb: Callable[[str, int, int], None] | None, app: str, kept: int, wanted: int) -> None:
    if cb is not None:
        cb(app, kept, wanted)


def _seen(walk: Walk, scripts: set[str], texts: set[str]) -> bool:
    """True when the walk's script or task text was seen before; remembers both otherwise."""
    s, t = normalise_script(walk.script()), normalise_text(walk.task_text())
    if s in scripts or t in texts:
        return True
    scripts.add(s)
    texts.add(t)
    return False


def _trim(walk: Walk, outcome: Outcome, validator: Validator) -> tuple[Walk, Outcome, int]:
    """Leave out trailing actions that change nothing in the app's final state (a task ending in
    a tap that only opens a screen says more than its script does). Fields that move on with time
    alone are not compared: one more action takes more time, not more effect."""
    trimmed = 0
    moving: set[str] | None = None
    while walk.complexity > 1:
        last = max(i for i, a in enumerate(walk.actions) if a.kind != "nav")
        shorter = walk.without(last)
        again = validator.validate(shorter.script(), shorter.values)
        if not again.ok:
            break
        if moving is None:
            moving = validator.time_driven(walk.script(), outcome)
        if any(again.state.get(k) != v for k, v in outcome.state.items() if k not in moving):
            break
        walk, outcome, trimmed = shorter, again, trimmed + 1
    return walk, outcome, trimmed


class _Search:
    """Depth-first repair of one walk (see the module docstring)."""

    def __init__(self, graph: TransitionGraph, validator: Validator, rng: random.Random, config: SynthConfig) -> None:
        self.graph, self.validator, self.rng, self.config = graph, validator, rng, config
        self.left = config.repair_budget + 1
        self.first: Outcome | None = None

    def run(self, walk: Walk) -> tuple[Walk, Outcome, list[str]] | None:
        return self._try(walk, [], 0)

    def _try(self, walk: Walk, repairs: list[str], depth: int) -> tuple[Walk, Outcome, list[str]] | None:
        if self.left <= 0 or not walk.actions:
            return None
        self.left -= 1
        outcome = self.validator.validate(walk.script(), walk.values)
        if self.first is None:
            self.first = outcome
        if outcome.ok:
            return walk, outcome, repairs
        if depth >= self.config.repair_depth:
            return None
        for label, candidate in self.repairs(walk, outcome):
            found = self._try(candidate, [*repairs, label], depth + 1)
            if found is not None:
                return found
            if self.left <= 0:
                break
        return None

    def repairs(self, walk: Walk, outcome: Outcome) -> list[tuple[str, Walk]]:
        """Repaired walks for a failure, most promising first (template-level: no model)."""
        out: list[tuple[str, Walk]] = []
        i = outcome.line if outcome.line is not None and 0 <= outcome.line < len(walk.actions) else None
        category = outcome.category
        if category == "effect-not-confirmed":
            here = _last_screen(walk)
            for confirm in self.graph.confirmations(here) if here else []:
                if all(a.element != confirm.element for a in walk.actions):
                    out.append(("confirm", walk.appended(confirm, self.graph.phrase(confirm, self.rng))))
            out = out[:2]
            if i is not None and walk.complexity > 1:  # a typed value that left no trace
                out.append((f"drop:{i + 1}", walk.without(i)))
            return out
        if i is None:
            return out
        action = walk.actions[i]
        if category == "navigation" and action.kind != "nav":
            path = self._explicit_path(action)
            if path:
                out.append((f"navigate:{i + 1}", walk.inserted(i, path)))
        if category in ("grounding", "not-recorded") and action.kind in ("item", "item_child"):
            others = [t for t in self.graph.items.get(action.element, []) if t != action.text]
            if others:
                other = Action(action.kind, action.element, action.screen, others[0], action.child, action.leads_to)
                out.append((f"other-item:{i + 1}", walk.replaced(i, other, self.graph.phrase(other, self.rng))))
        if category in ("grounding", "navigation", "action", "wait", "not-recorded") and i > 0 and action.kind != "nav":
            out.append((f"back:{i + 1}", walk.inserted(i, [Action("nav", action.element, action.screen, call="back")])))
        if walk.complexity > 1 or action.kind == "nav":
            out.append((f"drop:{i + 1}", walk.without(i)))
        return out

    def _explicit_path(self, action: Action) -> list[Action]:
        """The document's first path to the action's element, as explicit navigation steps."""
        element = self.graph.document.element(action.element)
        if element is None or not element.paths:
            return []
        steps = []
        for step in element.paths[0]:
            if step.action == "back":
                steps.append(Action("nav", step.target or action.element, action.screen, call="back"))
            elif step.target and step.action == "tap":
                steps.append(Action("nav", step.target, action.screen, step.match))
            else:
                return []
        return steps


def _last_screen(walk: Walk) -> str | None:
    last = walk.actions[-1]
    return last.leads_to or last.screen


# ---------------------------------------------------------------------------------------------
# Export


def chat_record(pair: Pair, document: AppDocument, prefix: str | None = None) -> dict[str, Any]:
    """One line of the JSONL: the runtime prompt (``tapir.codegen.prompt``) as system and user
    messages, and the answer in the format the code generator parses (plan, elements, script)."""
    from tapir.codegen.examples import Example
    from tapir.codegen.prompt import build_prompt

    prompt = build_prompt(document, pair.task, prefix=prefix)
    answer = Example(pair.task, pair.script, plan=pair.template_task or pair.task).answer()
    return {
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.prefix + prompt.rest},
            {"role": "assistant", "content": answer},
        ],
        "meta": {"id": pair.id, "app": pair.app, "task": pair.task, "complexity": pair.complexity,
                 "checks": list(pair.checks),
                 "repairs": list(pair.repairs), "script": pair.script,
                 **({"actions": list(pair.actions)} if pair.actions else {})},
    }


def write_outputs(run: SynthRun, out: str | Path) -> list[Path]:
    """Write the JSONL (one chat record per pair) and the data card beside it (``.card.json``,
    ``.card.md``); returns the files written."""
    from tapir.codegen.prompt import render_prefix

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefixes = {name: render_prefix(doc) for name, doc in run.documents.items()}
    lines = [json.dumps(chat_record(p, run.documents[p.app], prefixes[p.app]), ensure_ascii=False)
             for p in run.pairs]
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return [out, *write_card(run, out)]


def write_card(run: SynthRun, out: str | Path) -> list[Path]:
    """The data card of ``run`` beside the JSONL ``out`` (``OUT.card.json``, ``OUT.card.md``)."""
    out = Path(out)
    card = run.card()
    stem = out.with_suffix("") if out.suffix else out
    card_json = stem.parent / f"{stem.name}.card.json"
    card_md = stem.parent / f"{stem.name}.card.md"
    card_json.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    card_md.write_text(card_markdown(card, out.name), encoding="utf-8")
    return [card_json, card_md]


def card_markdown(card: dict[str, Any], data_name: str) -> str:
    lines = [f"# Data card: {data_name}", "",
             f"Synthesised by `tapir synth` (Tapir {card['tapir']}), seed {card['seed']}, task texts from "
             f"{card['config']['texts']}. Every pair ran on a fresh simulated app and its effect was confirmed "
             "on the app's final state.", "",
             f"- pairs: **{card['pairs']}** from {card['candidates']} walks drawn",
             *([f"- **interrupted** after {card['pairs']} of the {card['config']['count']} pairs wanted "
                "(`tapir synth --resume` continues it)"] if card.get("interrupted") else []),
             *([f"- resumed: {card['resumed']} of the pairs were kept by an earlier run (its walks, "
                "rejections and runs are not counted here)"] if card.get("resumed") else []),
             f"- rejected: {card['rejected_total']}; duplicates: {card['duplicates']}; copies of a held-out "
             f"task: {card['held_out']}; passed after a repair: "
             f"{card['repaired']}; trailing no-op actions trimmed: {card['trimmed']}",
             f"- validation runs: {card['validation_runs']}; wall time: {card['wall_s']} s", "",
             "| app | pairs | walks | rejected |", "|---|---:|---:|---:|"]
    lines += [f"| {app} | {v['pairs']} | {v['candidates']} | {v['rejected']} |" for app, v in card["per_app"].items()]
    lines += ["", "| complexity (actions) | pairs |", "|---:|---:|"]
    lines += [f"| {k} | {v} |" for k, v in card["per_complexity"].items()]
    lines += ["", "| rejected because | walks | example |", "|---|---:|---|"]
    for reason, n in card["rejected"].items():
        ex = card["rejection_examples"][reason]
        lines.append(f"| {reason} | {n} | {ex['message'].replace('|', '/')[:140]} |")
    return "\n".join(lines) + "\n"
