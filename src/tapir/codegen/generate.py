"""From a task to a script: one model call writes the whole script; errors go back to the model.

``Generator.generate`` builds the prompt (``tapir.codegen.prompt``), constrains the answer with
the document's grammar (``tapir.codegen.script_grammar``) and splits it into plan, elements and
script. ``Generator.solve`` is the repair loop (AutoDroid-V2, section 3.2.2): the script is
checked statically, then run (when a device session is given); a failure's category, line and
the screen it left go back to the model, until the script passes or a budget of rounds or tokens
runs out. A run that finished without an error is checked against the answer's plan
(``tapir.codegen.postchecks``, the checks ``tapir eval --model`` runs): a finding goes back like
an error (no silent failures). Each ``Round`` records what it changed::

    gen = Generator(document, backend, examples=ExampleStore.for_document(path))
    result = gen.solve("Play the song Lanterns", device=DeviceSession(path, "sim:music"))
    result.ok, result.script, [r.summary() for r in result.rounds]
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tapir.codegen import language as L
from tapir.codegen.backend import Backend, Completion, Request, Usage
from tapir.codegen.corrections import Correction, corrected
from tapir.codegen.device import RunDeclined
from tapir.codegen.examples import ExampleStore
from tapir.codegen.postchecks import Finding, completed, plan_after, post_run_findings
from tapir.codegen.prompt import (
    SYSTEM,
    Prompt,
    RepairNote,
    ScreenInfo,
    build_prompt,
    relevant_screens,
    render_prefix,
    render_screens,
    render_summary_prefix,
    task_words,
)
from tapir.codegen.screen_walk import screen_walk
from tapir.codegen.script_grammar import AnswerParts, answer_grammar, split_answer

__all__ = ["Budget", "Failure", "GenConfig", "Generation", "Generator", "Round", "SolveResult", "categorize"]

#: Failure categories, as the repair prompt names them (the paper's, plus syntax and budget).
CATEGORIES = {
    "syntax": "syntax error",
    "unknown-element": "unknown element",
    "element-not-on-screen": "element not on the screen",
    "screen-not-reached": "screen not reached",
    "illegal-action": "illegal action",
    "match-index": "match or index failure",
    "script-logic": "script logic",
    "budget": "budget exceeded",
    "device": "device failure",
    "refused": "refused by a guard",
    "post-run-check": "finished without doing the task",
}

_CHECK_CODES = {
    "syntax": "syntax", "unsupported": "syntax", "unknown-element": "unknown-element",
    "illegal-action": "illegal-action", "not-a-list": "illegal-action", "wrong-child": "illegal-action",
}


@dataclass(frozen=True)
class GenConfig:
    max_tokens: int = 400
    #: Examples placed in the prompt prefix (the pool's first ones), and retrieved per task from the rest.
    prefix_examples: int = 8
    examples: int = 2
    temperature: float = 0.0
    seed: int = 0
    #: Constrain the answer with the document's grammar.
    constrained: bool = True
    #: ``auto`` (the largest form that fits the model's context), ``described`` (elements with
    #: descriptions), ``names`` (the paper's compressed form) or ``focused`` (the task's screens):
    #: ``tapir.codegen.prompt.PROMPT_STYLES``.
    style: str = "auto"
    #: Tokens kept free for the per-task part of a prompt (task, retrieved examples, the screen, a
    #: repair round's script and error) when a prompt is fitted to the model's context.
    reserve: int = 900
    #: A focused prompt's per-task screens: tokens at most (at least one screen is shown).
    focus_tokens: int = 1200
    #: Stop an answer that starts repeating itself (``tapir.codegen.loops``); off: ``--no-loop-stop``.
    stop_loops: bool = True
    #: After a run that finished, check what it did against the plan and the document
    #: (``tapir.codegen.postchecks``) and send a finding back like an error; off: ``--no-postchecks``.
    postchecks: bool = True
    #: A finished run whose finding names the one step left (``Finding.fix``: the dialog's OK, the
    #: screen's Save) gets that statement appended and is run again, up to this many statements,
    #: before the model is asked; it acts on the checks' findings, so it needs ``postchecks``;
    #: 0: ``--no-completion``.
    completions: int = 3
    #: A run that stopped on a line the document can set right (``tapir.codegen.corrections``: a
    #: ``match()`` on a list that does not have the item, when the document says which one does)
    #: gets that line rewritten and is run again, up to this many lines, before the model is asked;
    #: the rewrite stands only when the run gets past the line; 0: ``--no-correction``.
    corrections: int = 2
    #: A repair answered with the very script that failed is asked again this many times, sampled
    #: at ``resample_temperature`` (greedy decoding gives the same question the same answer);
    #: 0: ``--resamples 0``.
    resamples: int = 2
    resample_temperature: float = 0.7


@dataclass(frozen=True)
class Budget:
    """The repair loop's limits: model calls in all, and tokens (computed + generated) in all."""

    rounds: int = 3
    tokens: int = 20_000


@dataclass(frozen=True)
class Generation:
    prompt: Prompt
    answer: AnswerParts
    completion: Completion
    #: How many times a repair that repeated the failed script was asked again (``GenConfig.resamples``).
    resampled: int = 0

    @property
    def script(self) -> str:
        return self.answer.script

    @property
    def usage(self) -> Usage:
        return self.completion.usage


@dataclass(frozen=True)
class Failure:
    category: str
    message: str
    line: int | None = None
    source_line: str | None = None
    screen: ScreenInfo | None = None
    #: ``check`` (found before running), ``run`` (the run's error) or ``postcheck`` (a run that
    #: finished, by a post-run check).
    stage: str = "check"
    #: The post-run check that found it (``tapir.codegen.postchecks.POSTCHECKS``), else None.
    check: str | None = None

    def describe(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{CATEGORIES.get(self.category, self.category)}{where}: {self.message}"


@dataclass(frozen=True)
class Round:
    index: int
    generation: Generation
    #: None when the script passed the check (and the run, when there was one).
    failure: Failure | None
    #: A unified diff against the previous round's script (empty for the first round).
    diff: tuple[str, ...] = ()
    ran: bool = False
    #: Every post-run finding of a run that finished (the first is ``failure``; empty otherwise).
    findings: tuple[Finding, ...] = ()
    #: Given a post-run finding, the model wrote the same script: it stands by the run that
    #: finished, which is not run again (``failure`` is that run's finding).
    stood_by: bool = False
    #: The findings whose one statement (``Finding.fix``) was appended to the model's script, in
    #: order: ``generation`` holds the script with them, as it last ran.
    completed: tuple[Finding, ...] = ()
    #: The lines set right before (``tapir.codegen.corrections``), in order: ``generation`` holds
    #: the script with them.
    corrected: tuple[Correction, ...] = ()

    def summary(self) -> str:
        u = self.generation.usage
        cached = "?" if u.cached_tokens is None else f"{u.cached_tokens:,}"
        head = (f"round {self.index}: {u.generated_tokens} tokens generated, {u.prompt_tokens:,} in the prompt "
                f"({cached} cached, prefix from {u.cache}); {u.latency_s:.1f} s"
                + (f", first token {u.ttft_s:.2f} s" if u.ttft_s is not None else ""))
        finish = self.generation.completion.finish
        if finish != "stop":
            head += " (answer closed at the token limit)" if finish == "closed" else " (answer cut off)"
        status = "ok" if self.failure is None else f"{self.failure.stage} failed: {self.failure.describe()}"
        if self.stood_by:
            status = "the same script again: the model stands by the run that finished (not run again)"
        if self.corrected:
            status += "; corrected " + ", ".join(f"line {c.line} to {c.statement} ({c.check})" for c in self.corrected)
        if self.completed:
            status += "; completed with " + ", ".join(f"{f.change()} ({f.check})" for f in self.completed)
        changed = ""
        if self.diff:
            plus = sum(1 for d in self.diff if d.startswith("+") and not d.startswith("+++"))
            minus = sum(1 for d in self.diff if d.startswith("-") and not d.startswith("---"))
            changed = f"; changed +{plus}/-{minus} lines"
        return f"{head}; {status}{changed}"


@dataclass
class SolveResult:
    task: str
    rounds: list[Round] = field(default_factory=list)
    #: ``ok``, ``rounds`` or ``tokens`` (which budget ended the loop), ``device``, ``refused`` (a
    #: guard refused an action: the user's to allow), or ``stood-by`` (given a post-run finding,
    #: the model wrote the same script again).
    stopped: str = "ok"

    @property
    def ok(self) -> bool:
        return bool(self.rounds) and self.rounds[-1].failure is None

    @property
    def best(self) -> Round | None:
        """The round whose script is the result: the last, unless a repair made things worse. A
        script that ran to its end (a post-run check's suspicion) beats a later one that broke or
        did not pass the checker, as ``tapir eval`` keeps it (``kept-finished``)."""
        if not self.rounds:
            return None
        rank = {"postcheck": 2, "run": 1, "check": 0}
        return max(reversed(self.rounds), key=lambda r: 3 if r.failure is None else rank.get(r.failure.stage, 0))

    @property
    def script(self) -> str:
        best = self.best
        return best.generation.script if best is not None else ""

    def tokens_used(self) -> int:
        return sum((r.generation.usage.computed_tokens or r.generation.usage.prompt_tokens)
                   + r.generation.usage.generated_tokens for r in self.rounds)


def same_script(a: str, b: str) -> bool:
    """Whether two scripts are the same statements (blank lines and trailing spaces aside)."""
    def lines(s: str) -> list[str]:
        return [ln.rstrip() for ln in s.splitlines() if ln.strip()]
    return bool(a.strip()) and lines(a) == lines(b)


def _sum_usage(a: Usage, b: Usage) -> Usage:
    """Two calls' accounting as one (a repair asked again): tokens and seconds add up."""
    def add(x: float | None, y: float | None) -> float | None:
        return None if x is None and y is None else (x or 0) + (y or 0)
    return dataclasses.replace(
        b, prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        cached_tokens=None if a.cached_tokens is None or b.cached_tokens is None else a.cached_tokens + b.cached_tokens,
        computed_tokens=(None if a.computed_tokens is None or b.computed_tokens is None
                         else a.computed_tokens + b.computed_tokens),
        generated_tokens=a.generated_tokens + b.generated_tokens, ttft_s=a.ttft_s,
        latency_s=a.latency_s + b.latency_s, state_io_s=a.state_io_s + b.state_io_s, cpu_s=add(a.cpu_s, b.cpu_s))


def categorize(error: L.TapirError) -> str:
    """The repair category of a run's error."""
    if isinstance(error, L.TapirSyntaxError):
        return "syntax"
    if isinstance(error, L.UnknownElement):
        return "unknown-element"
    if isinstance(error, L.ElementNotFound):
        return "element-not-on-screen"
    if isinstance(error, L.ScreenNotReached):
        return "screen-not-reached"
    if isinstance(error, L.ActionError):
        text = error.message.lower()
        if any(w in text for w in ("match", "index", "out of range", "no item", "items")):
            return "match-index"
        return "illegal-action"
    if isinstance(error, L.BudgetExceeded):
        return "budget"
    if isinstance(error, L.SafetyError):
        return "refused"
    if isinstance(error, L.DeviceError):
        return "device"
    return "script-logic"


def _line(script: str, line: int | None) -> str | None:
    if line is None:
        return None
    lines = script.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


class Generator:
    """Writes scripts for one app document with one backend."""

    def __init__(self, doc: L.AppDocument, backend: Backend, *, examples: ExampleStore | None = None,
                 config: GenConfig | None = None) -> None:
        self.doc = doc
        self.backend = backend
        self.config = config or GenConfig()
        self._pool = examples or ExampleStore([])
        self.standing, self.examples = self._pool.split(self.config.prefix_examples)
        self.table = L.symbols(doc)
        #: The model's context in tokens, when the backend has one (a local model); prompts are fitted to it.
        self.context: int | None = getattr(backend, "n_ctx", None)
        self.style, self._prefix = self._fit()
        self._grammar = answer_grammar(doc).to_gbnf() if self.config.constrained else None

    def _room(self) -> int | None:
        """Tokens the system message and the prefix may take, None when unbounded."""
        if self.context is None:
            return None
        return self.context - self.config.max_tokens - self.config.reserve

    def _fits(self, prefix: str) -> bool:
        room = self._room()
        return room is None or self.backend.count_tokens(SYSTEM + prefix) <= room

    def _fit(self) -> tuple[str, str]:
        """The prompt style this document gets with this model, and its prefix (for ``focused``, the
        summary of screens; the task's screens are added per task): with ``auto``, the first of
        described, names that fits, else focused."""
        style = self.config.style
        if style == "focused":
            return style, self._summary()
        if style != "auto":
            return style, render_prefix(self.doc, style, self.standing)
        # fewer standing examples (the others are retrieved per task) before the names-only form:
        # a small model needs the elements' descriptions and options more
        for n in range(len(self.standing), -1, -1):
            prefix = render_prefix(self.doc, "described", self.standing[:n])
            if self._fits(prefix):
                if n < len(self.standing):
                    self.standing, self.examples = self._pool.split(n)
                return "described", prefix
        prefix = render_prefix(self.doc, "names", self.standing)
        if self._fits(prefix):
            return "names", prefix
        return "focused", self._summary()

    def _summary(self) -> str:
        """A focused prompt's cached prefix, with the standing examples when they leave room for the
        task's screens."""
        room = self._room()
        candidates = [render_summary_prefix(self.doc, self.standing), render_summary_prefix(self.doc),
                      render_summary_prefix(self.doc, screen_list=False),
                      render_summary_prefix(self.doc, screen_list=False, shape=False)]
        for prefix in candidates:
            if room is None or self.backend.count_tokens(SYSTEM + prefix) + self.config.focus_tokens // 2 <= room:
                return prefix
        return candidates[-1]

    def _focus(self, task: str, budget: int) -> str:
        """The elements of the screens most relevant to ``task``: one screen at least (cut to the
        budget when it alone is larger), more while they stay within ``budget`` tokens."""
        chosen: list[str] = []
        for name in relevant_screens(self.doc, task):
            if chosen and self.backend.count_tokens(render_screens(self.doc, [*chosen, name])) > budget:
                break
            chosen.append(name)
        lines = render_screens(self.doc, chosen).splitlines()
        if self.backend.count_tokens("\n".join(lines)) > budget:
            # one screen larger than the budget: its elements that share the fewest words with the
            # task go first (headers stay)
            wanted = task_words(task)
            order = sorted((i for i, ln in enumerate(lines) if ln.startswith("- ")),
                           key=lambda i: (len(wanted & task_words(lines[i])), -i))
            dropped: set[int] = set()
            for i in order:
                kept = "\n".join(ln for j, ln in enumerate(lines) if j not in dropped)
                if self.backend.count_tokens(kept) <= budget:
                    break
                dropped.add(i)
            lines = [ln for j, ln in enumerate(lines) if j not in dropped]
        return "\n".join(lines) + "\n"

    @property
    def grammar(self) -> str | None:
        return self._grammar

    def prompt(self, task: str, *, screen: ScreenInfo | None = None, repair: RepairNote | None = None,
               exclude_example: str | None = None) -> Prompt:
        # exclude_example (leave-one-out evaluation) cannot take a standing example out of the
        # prefix; evaluation tasks are kept apart from the example pool instead.
        examples = self.examples.retrieve(task, self.config.examples, exclude=exclude_example)
        bare = build_prompt(self.doc, task, examples=examples, screen=screen, repair=repair, style=self.style,
                            prefix=self._prefix)
        if self.style != "focused":
            return bare
        budget = self.config.focus_tokens
        if self.context is not None:  # what the context leaves beside the rest of the prompt and the answer
            used = self.backend.count_tokens(bare.system + bare.prefix + bare.rest)
            budget = min(budget, self.context - self.config.max_tokens - used - 16)
        return build_prompt(self.doc, task, examples=examples, screen=screen, repair=repair, style=self.style,
                            prefix=self._prefix, focus=self._focus(task, budget))

    def request(self, prompt: Prompt) -> Request:
        c = self.config
        return Request(prompt.system, prompt.prefix, prompt.rest, grammar=self._grammar, max_tokens=c.max_tokens,
                       temperature=c.temperature, seed=c.seed, cache_label=prompt.label,
                       stop_loops=c.stop_loops)

    def generate(self, task: str, *, screen: ScreenInfo | None = None, repair: RepairNote | None = None,
                 exclude_example: str | None = None) -> Generation:
        prompt = self.prompt(task, screen=screen, repair=repair, exclude_example=exclude_example)
        request = self.request(prompt)
        done = self.backend.complete(request)
        answer = split_answer(done.text)
        tries = 0
        # a run error is a fact, a post-run check's finding a suspicion: the same script given back
        # after a finding is the model standing by a run that finished, not a repair that failed
        doubted = repair is not None and repair.category == CATEGORIES["post-run-check"]
        while (repair is not None and not doubted and tries < self.config.resamples
               and same_script(answer.script, repair.script)):
            # the repair repeated the failed script word for word: ask again, sampled (the seed
            # changes with each try, so a run is still repeatable)
            tries += 1
            again = self.backend.complete(dataclasses.replace(
                request, temperature=self.config.resample_temperature, seed=self.config.seed + tries))
            done = Completion(again.text, _sum_usage(done.usage, again.usage), again.finish)
            answer = split_answer(done.text)
        return Generation(prompt, answer, done, resampled=tries)

    def check(self, script: str) -> Failure | None:
        """The first error the static checker finds, as a repair failure (None when clean); a
        script that walks through a screen's elements (``screen_walk``) is sent back before it runs."""
        if not script.strip():
            return Failure("syntax", "the answer has no script", None)
        for issue in L.check(script, self.table):
            if issue.is_error:
                category = _CHECK_CODES.get(issue.code, "script-logic")
                return Failure(category, issue.message, issue.line, _line(script, issue.line), None, "check")
        walk = screen_walk(self.doc, script)
        if walk is not None:
            return Failure("script-logic", walk.message(), walk.first_line, _line(script, walk.first_line), None,
                           "check")
        return None

    def postcheck(self, script: str, records: Sequence[Mapping[str, Any]], *, plan_elements: Iterable[str] = (),
                  effect_screen: str | None = None, task: str | None = None) -> tuple[Finding, ...]:
        """What a run of ``script`` that finished left undone by its plan (``post_run_findings``),
        empty when the checks hold or ``GenConfig.postchecks`` is off: ``solve`` (``tapir gen
        --run``) and ``ModelSource.postcheck`` (``tapir eval --model``) both ask here."""
        if not self.config.postchecks or not script.strip():
            return ()
        return tuple(post_run_findings(self.doc, script, records, plan_elements=plan_elements,
                                       effect_screen=effect_screen, task=task))

    def complete(self, script: str, findings: Sequence[Finding], done: int = 0) -> tuple[str, Finding] | None:
        """``script`` with the first finding's one statement appended (``postchecks.completed``),
        and that finding; None when none has one, or ``done`` statements were appended already
        (``GenConfig.completions``)."""
        if done >= self.config.completions:
            return None
        return completed(script, findings)

    def correct(self, script: str, line: int | None, message: str, task: str = "", done: int = 0,
                records: Sequence[Mapping[str, Any]] = ()) -> Correction | None:
        """``script`` with the line its run stopped on set right (``corrections.corrected``: the
        list the document gives the item to, the permission prompt in the way answered), None
        when neither the error nor the run's ``records`` say how, or ``done`` lines were
        rewritten already (``GenConfig.corrections``)."""
        if done >= self.config.corrections:
            return None
        return corrected(self.doc, script, line, message, task, records)

    def solve(self, task: str, *, device: Any = None, screen: ScreenInfo | None = None, budget: Budget | None = None,
              on_round: Callable[[Round], None] | None = None, exclude_example: str | None = None,
              output: Callable[[str], None] | None = None) -> SolveResult:
        """Generate, check, run (with ``device``, a ``DeviceSession``) and repair within ``budget``.

        Without a device, ``screen`` (if given) is shown as the current screen and only the
        static check can send a script back."""
        budget = budget or Budget()
        result = SolveResult(task)
        if device is not None:
            screen = device.screen()
        note: RepairNote | None = None
        previous = ""
        while True:
            gen = self.generate(task, screen=screen, repair=note, exclude_example=exclude_example)
            if (note is not None and note.category == CATEGORIES["post-run-check"] and result.rounds
                    and same_script(gen.script, previous)):
                # a finding is a suspicion; the same script back is the model's answer to it, and
                # running it again would only find the same thing (as tapir eval's stood-by)
                last = result.rounds[-1]
                rnd = Round(len(result.rounds) + 1, gen, last.failure, (), False, (), stood_by=True)
                result.rounds.append(rnd)
                if on_round is not None:
                    on_round(rnd)
                result.stopped = "stood-by"
                return result
            failure = self.check(gen.script)
            ran = False
            findings: tuple[Finding, ...] = ()
            appended: list[Finding] = []
            fixed: list[Correction] = []
            if failure is None and device is not None:
                ran = True
                outcome = device.run(gen.script, output=output)
                # the match on a list the item is not on: the document's list, no model asked
                while outcome.error is not None and (fix := self.correct(
                        gen.script, outcome.error.span.line if outcome.error.span else None, outcome.error.message,
                        task, len(fixed), outcome.records)) is not None:
                    try:
                        tried = device.run(fix.script, output=output)
                    except RunDeclined:
                        break
                    if tried.error is not None and (tried.error.span is None or tried.error.span.line <= fix.line):
                        break  # stopped there again (or before): the model's own line goes to repair
                    gen = dataclasses.replace(gen, answer=dataclasses.replace(
                        gen.answer, script=fix.script, elements=fix.plan(gen.answer.elements)))
                    fixed.append(fix)
                    outcome = tried
                if outcome.error is not None:
                    err = outcome.error
                    line = err.span.line if err.span else None
                    # the hint goes too: it says what to write instead (as in tapir eval's repair note)
                    said = err.message + (f" ({err.hint})" if err.hint else "")
                    failure = Failure(categorize(err), said, line, _line(gen.script, line),
                                      device.failure_screen, "run")
                else:
                    # no silent failures: a run that finished but left its plan undone is repaired too
                    findings = self.postcheck(gen.script, outcome.records, plan_elements=gen.answer.elements,
                                              task=task)
                    # one step short (the dialog's OK): appended and run, no model asked
                    while findings and (more := self.complete(gen.script, findings, len(appended))) is not None:
                        script, finding = more
                        try:
                            tried = device.run(script, output=output)
                        except RunDeclined:  # asked before the step ran, the person said no
                            break
                        stopped = tried.error.span.line if tried.error is not None and tried.error.span else None
                        if tried.error is not None and (stopped is None or finding.ends is None
                                                        or stopped <= finding.ends):
                            break  # the step did not fit: the run before it stands
                        elements = plan_after(gen.answer.elements, gen.script, script)
                        gen = dataclasses.replace(gen, answer=dataclasses.replace(gen.answer, script=script,
                                                                                 elements=elements))
                        appended.append(finding)
                        if tried.error is not None:
                            # a fix in the middle the run got past: the later line's error is the model's
                            err = tried.error
                            findings = ()
                            failure = Failure(categorize(err), err.message + (f" ({err.hint})" if err.hint else ""),
                                              stopped, _line(script, stopped), device.failure_screen, "run")
                            break
                        findings = self.postcheck(script, tried.records, plan_elements=gen.answer.elements,
                                                  task=task)
                    if findings:
                        failure = Failure("post-run-check", findings[0].message, None, None, device.failure_screen,
                                          "postcheck", findings[0].check)
            diff = tuple(difflib.unified_diff(previous.splitlines(), gen.script.splitlines(), "before", "after",
                                              lineterm="", n=0)) if result.rounds else ()
            rnd = Round(len(result.rounds) + 1, gen, failure, diff, ran, findings, completed=tuple(appended),
                        corrected=tuple(fixed))
            result.rounds.append(rnd)
            if on_round is not None:
                on_round(rnd)
            if failure is None:
                result.stopped = "ok"
                return result
            if failure.category == "device":
                result.stopped = "device"
                return result
            # a guard's refusal is the user's to lift (--allow), not the model's to write around
            if failure.category == "refused":
                result.stopped = "refused"
                return result
            if len(result.rounds) >= budget.rounds:
                result.stopped = "rounds"
                return result
            if result.tokens_used() >= budget.tokens:
                result.stopped = "tokens"
                return result
            previous = gen.script
            note = RepairNote(gen.script, CATEGORIES.get(failure.category, failure.category), failure.message,
                              failure.line, failure.source_line, failure.screen)
            if ran and device is not None:
                # the next attempt starts on a fresh connection: tell the model where it starts
                screen = device.screen()

