"""The code generator as a script source for the evaluation harness (``tapir eval --model SPEC``).

    source = script_source("qwen2.5-coder-1.5b", seed=0)    # or a .gguf path, or an http(s) URL
    answer = source.generate(request)                         # request.task.text, request.document
    answer.script, answer.tokens.cached, answer.latency_s
    fixed = source.repair(request, answer, rendered_error)    # the paper's validation-based revising
    source.close()

One model is loaded for the whole run, lazily (on the first task) and once: the backend keeps the
document prefix's KV state between tasks (and on disk), so every task after the first on a
document computes only its own few dozen tokens. A ``Generator`` is built per document (its
prompt prefix and answer grammar) and kept.

The harness (``tapir.eval``) sits above the code generator, so this module cannot name its types:
a ``ModelSource`` is the harness's ``ScriptSource`` by shape (``name``, ``settings()``,
``generate(request)``, ``repair(request, previous, error)``), the request is read by attribute
(``task.text``, ``task.id``, ``document``, ``document_path``, ``seed``) and the answers are
``SourceAnswer`` objects with the fields of the harness's ``Generation``, which
``tapir.eval.sources.model_source`` converts at the boundary.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.codegen import language as L
from tapir.codegen.backend import DEFAULT_CTX, Backend, Usage
from tapir.codegen.examples import ExampleStore, app_key, example_files, load_examples
from tapir.codegen.generate import CATEGORIES, GenConfig, Generator, categorize
from tapir.codegen.postchecks import Finding, plan_after
from tapir.codegen.prompt import PROMPT_VERSION, Prompt, RepairNote
from tapir.codegen.screen_walk import screen_walk
from tapir.core.errors import UsageError

__all__ = ["ModelSource", "SourceAnswer", "SourceTokens", "open_backend", "script_source"]


@dataclass(frozen=True)
class SourceTokens:
    """Token accounting of one answer (the fields of ``tapir.eval.sources.Tokens``)."""

    cached: int = 0
    computed: int = 0
    generated: int = 0

    @classmethod
    def of(cls, usage: Usage) -> SourceTokens:
        cached = usage.cached_tokens or 0
        computed = usage.computed_tokens if usage.computed_tokens is not None else usage.prompt_tokens - cached
        return cls(cached, computed, usage.generated_tokens)


@dataclass(frozen=True)
class SourceAnswer:
    """One answer: the fields of ``tapir.eval.sources.Generation``."""

    script: str | None
    tokens: SourceTokens | None = None
    latency_s: float | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def open_backend(spec: str, *, threads: int | None = None, ctx: int | None = None, drafts: bool = True) -> Backend:
    """The backend of a ``--model`` value: an http(s) URL (an OpenAI-compatible server), a registry
    name or a GGUF path (a local model, loaded on its first call; ``drafts``: prompt-lookup drafts,
    ``tapir.codegen.lookup``). ``ctx``: the model's context in tokens (a local model's default is
    ``DEFAULT_CTX``; a server, when not given, is asked for its own)."""
    if spec.startswith(("http://", "https://")):
        import os

        from tapir.codegen.http_backend import HttpBackend

        return HttpBackend(spec, api_key=os.environ.get("OPENAI_API_KEY"), n_ctx=ctx)
    from tapir.codegen.llama_backend import LlamaCppBackend
    from tapir.codegen.lookup import DRAFT_TOKENS
    from tapir.codegen.models import resolve_model

    return LlamaCppBackend(resolve_model(spec), n_ctx=ctx or DEFAULT_CTX, n_threads=threads,
                           draft_tokens=DRAFT_TOKENS if drafts else 0)


class ModelSource:
    """Writes each task's script with one backend; repairs it from the harness's rendered error."""

    def __init__(self, backend: Backend, *, spec: str | None = None, config: GenConfig | None = None,
                 example_files: Sequence[str | Path] = (), use_examples: bool = True, embedder: Any = None) -> None:
        self.backend = backend
        self.spec = spec or backend.name
        self.config = config or GenConfig()
        self.name = self.spec
        #: Example files besides each document's ``examples/`` folder (``tapir synth`` output).
        self.example_files = tuple(Path(f) for f in example_files)
        self.use_examples = use_examples
        #: MiniLM for retrieving examples (``tapir.runtime.grounding``), None for TF-IDF.
        self.embedder = embedder
        #: Task texts never to be shown as examples (the suite being evaluated): ``hold_out``.
        self.held_out: tuple[str, ...] = ()
        self._generators: dict[str, Generator] = {}
        # one model, one context: tasks run on several devices at once take turns at it
        self._lock = threading.Lock()

    def settings(self) -> dict[str, Any]:
        c = self.config
        settings: dict[str, Any] = {
            "source": "codegen", "model": self.spec, "backend": self.backend.name, "prompt_version": PROMPT_VERSION,
            "prompt_style": c.style, "constrained": c.constrained, "temperature": c.temperature, "seed": c.seed,
            "max_tokens": c.max_tokens, "prefix_examples": c.prefix_examples, "examples": c.examples,
            "example_pool": "off" if not self.use_examples else "beside the document"
            + "".join(f" + {f.name}" for f in self.example_files),
            "retrieval": "minilm" if self.embedder is not None else "tf-idf",
            "loop_stop": c.stop_loops, "postchecks": c.postchecks, "resamples": c.resamples,
            "completions": c.completions, "corrections": c.corrections,
        }
        path = getattr(self.backend, "model_path", None)
        if path is not None:
            settings["model_file"] = Path(path).name
        drafts = getattr(self.backend, "draft_tokens", None)
        if drafts is not None:
            settings["draft_tokens"] = drafts  # batch arithmetic differs: a report says which way it ran
        threads = getattr(self.backend, "n_threads", None)
        if threads is not None:
            settings["threads"] = threads
        return settings

    def _generator(self, request: Any) -> Generator:
        doc: L.AppDocument = request.document
        path = getattr(request, "document_path", None)
        key = str(path) if path else doc.app.package
        gen = self._generators.get(key)
        if gen is None:
            gen = self._generators[key] = Generator(doc, self.backend, examples=self.examples_for(doc, path),
                                                    config=self.config)
        return gen

    def examples_for(self, doc: L.AppDocument, path: str | Path | None) -> ExampleStore | None:
        """The example pool of one document, less the held-out tasks and their near-copies."""
        if not self.use_examples:
            return None
        table = L.symbols(doc)
        if path:
            store = ExampleStore.for_document(path, table, extra=self.example_files, embedder=self.embedder,
                                              app=doc.app.name)
        else:
            pool = [e for f in example_files(self.example_files) for e in load_examples(f)
                    if not e.app or e.app == app_key(doc.app.name)]
            store = ExampleStore([e for e in pool if not any(i.is_error for i in L.check(e.script, table))],
                                 embedder=self.embedder)
        return store.without(self.held_out) if self.held_out else store

    def hold_out(self, tasks: Sequence[str]) -> None:
        """Never show these tasks (nor near-copies) as examples: the harness gives the suite's texts
        (each call adds to those held out before)."""
        self.held_out = tuple(dict.fromkeys((*self.held_out, *tasks)))
        self._generators.clear()

    def prompt(self, request: Any) -> Prompt:
        """The first-round prompt this source sends for ``request`` (its examples retrieved, the task
        held out of them), without asking the model: what a prompt costs can be counted apart."""
        with self._lock:
            return self._generator(request).prompt(request.task.text, exclude_example=request.task.text)

    def postcheck(self, request: Any, previous: Any, records: Sequence[Mapping[str, Any]]) -> Finding | None:
        """The first thing a finished run left undone by its plan (``tapir.codegen.postchecks``),
        None when every check holds or the checks are off; ``Finding.render()`` goes to ``repair``."""
        findings = self._findings(request, previous, records)
        return findings[0] if findings else None

    def complete(self, request: Any, previous: Any, records: Sequence[Mapping[str, Any]]) -> SourceAnswer | None:
        """``previous`` with the one statement a finding of its finished run names appended
        (``Generator.complete``: the dialog's OK left untapped), for the harness to run before it
        asks for a repair; None when no finding names one, or enough were appended already.
        ``extra["completed"]`` lists the checks whose statements the script has,
        ``extra["completed_line"]`` the last line the fix wrote in the script's middle (a run that
        stops after it got past the fix: ``Finding.ends``), None for one appended."""
        script = getattr(previous, "script", None)
        extra = dict(getattr(previous, "extra", None) or {})
        done = list(extra.get("completed", ()))
        with self._lock:
            gen = self._generator(request)
        more = gen.complete(script or "", self._findings(request, previous, records), len(done))
        if more is None:
            return None
        extra["completed"] = [*done, more[1].check]
        extra["completed_line"] = more[1].ends
        if "elements" in extra:
            extra["elements"] = list(plan_after(extra["elements"], script or "", more[0]))
        return SourceAnswer(more[0], tokens=None, latency_s=None, extra=extra)

    def correct(self, request: Any, previous: Any, error: str,
                records: Sequence[Mapping[str, Any]] = ()) -> SourceAnswer | None:
        """``previous`` with the line its run stopped on (``error``, rendered as for ``repair``) set
        right where the document or the run's trace ``records`` say how (``Generator.correct``: the
        list that has the item, the permission prompt in the way), for
        the harness to run before it asks for a repair; None when it cannot be, or enough lines
        were rewritten already. ``extra["corrected"]`` lists the corrections, ``extra["corrected_line"]``
        the line the last one rewrote (a run stopping there again gained nothing)."""
        script = getattr(previous, "script", None)
        if not script:
            return None
        extra = dict(getattr(previous, "extra", None) or {})
        done = list(extra.get("corrected", ()))
        note = repair_note(script, error)
        with self._lock:
            gen = self._generator(request)
        fix = gen.correct(script, note.line, note.message, request.task.text, len(done), records)
        if fix is None:
            return None
        extra["corrected"] = [*done, fix.check]
        extra["corrected_line"] = fix.line
        if "elements" in extra:
            extra["elements"] = list(fix.plan(extra["elements"]))
        return SourceAnswer(fix.script, tokens=None, latency_s=None, extra=extra)

    def _findings(self, request: Any, previous: Any, records: Sequence[Mapping[str, Any]]) -> tuple[Finding, ...]:
        script = getattr(previous, "script", None)
        if not self.config.postchecks or not script:
            return ()
        extra = getattr(previous, "extra", None) or {}
        with self._lock:
            gen = self._generator(request)
        # the checks ``tapir gen --run`` runs (``Generator.postcheck``), with the task's effect screen
        return gen.postcheck(script, records, plan_elements=extra.get("elements", ()),
                             effect_screen=getattr(request.task, "effect_screen", None), task=request.task.text)

    def generate(self, request: Any) -> SourceAnswer:
        return self._answer(request, None)

    def repair(self, request: Any, previous: Any, error: str) -> SourceAnswer | None:
        script = getattr(previous, "script", None)
        if not script:
            return None
        note = repair_note(script, error)
        walk = screen_walk(request.document, script)
        if walk is not None and note.category != CATEGORIES["post-run-check"]:
            # the run stopped on a screen not reached, say; the walk is what to repair first
            note = dataclasses.replace(note, message=f"{note.message}; and {walk.message()}")
        return self._answer(request, note)

    def _answer(self, request: Any, note: RepairNote | None) -> SourceAnswer:
        task = request.task
        with self._lock:
            gen = self._generator(request)
            # a task that is also an example would be answered from the prompt: leave it out of retrieval
            done = gen.generate(task.text, repair=note, exclude_example=task.text)
        u = done.usage
        extra: dict[str, Any] = {"plan": done.answer.plan, "elements": list(done.answer.elements),
                                 "cache": u.cache, "finish": done.completion.finish}
        if u.cpu_s is not None:
            extra["cpu_s"] = round(u.cpu_s, 3)
        if u.ttft_s is not None:
            extra["ttft_s"] = round(u.ttft_s, 3)
        if done.resampled:
            extra["resampled"] = done.resampled
        if u.drafted_tokens:
            extra["drafted"], extra["accepted"] = u.drafted_tokens, u.accepted_tokens
        script = done.script if done.script.strip() else None
        return SourceAnswer(script, SourceTokens.of(u), round(u.latency_s, 4),
                            None if script else "the model's answer has no script", extra)

    def close(self) -> None:
        self.backend.close()


_HEAD = re.compile(r"^(?:(?P<file>.*?):(?P<line>\d+):\d+: |(?P<nofile>[^:]*): )?(?P<kind>[A-Z]\w*): (?P<message>.*)$")


def repair_note(script: str, error: str) -> RepairNote:
    """What the repair prompt says about a run that stopped on ``error`` (a rendered TapirError:
    ``file:line:col: Kind: message``, the line, a caret): its category, message and line."""
    from tapir.core import errors

    first = error.strip().splitlines()[0] if error.strip() else "the script stopped"
    head = _HEAD.match(first)
    line = int(head.group("line")) if head and head.group("line") else None
    message = head.group("message") if head else first
    # the render's hint says what to write instead; the quoted line and caret are said apart
    hints = [ln.strip()[len("hint:"):].strip() for ln in error.splitlines() if ln.strip().startswith("hint:")]
    if hints:
        message = f"{message} ({hints[0]})"
    category = "script-logic"
    cls = getattr(errors, head.group("kind"), None) if head else None
    if head and head.group("kind") == "PostRunCheck":
        category = "post-run-check"
    elif isinstance(cls, type) and issubclass(cls, errors.TapirError):
        category = categorize(cls(message))
    lines = script.splitlines()
    source_line = lines[line - 1] if line and 1 <= line <= len(lines) else None
    return RepairNote(script, CATEGORIES.get(category, category), message, line, source_line, None)


def script_source(spec: str, *, seed: int = 0, threads: int | None = None, ctx: int | None = None,
                  style: str | None = None, config: GenConfig | None = None,
                  backend: Backend | None = None, example_files: Sequence[str | Path] = (),
                  examples: bool = True, postchecks: bool = True, loop_stop: bool = True,
                  retrieval: str = "minilm", resamples: int | None = None, drafts: bool = True,
                  completion: bool = True, correction: bool = True) -> ModelSource:
    """The source for ``tapir eval --model SPEC`` (``SPEC`` as ``tapir gen --model`` takes it, or an
    http(s) URL of an OpenAI-compatible server); ``backend`` given, it is used instead (tests).
    ``ctx``: the model's context (``open_backend``); ``style``: the prompt style (default: ``auto``, which fits
    every document's prompt to that context). The levers, each on by default: ``examples`` (the
    example pool: beside each document and in ``example_files``), ``postchecks``, ``completion``
    (``GenConfig.completions``; it needs ``postchecks``), ``correction`` (``GenConfig.corrections``), ``loop_stop``,
    ``resamples`` (``GenConfig.resamples``; None: its default), ``drafts`` (a local model's
    prompt-lookup drafts); ``retrieval``: ``minilm`` (when installed) or ``tf-idf``."""
    if not spec.strip() and backend is None:
        raise UsageError("is empty: give a model name (tapir model list), a .gguf file or a server URL",
                         setting="model")
    config = dataclasses.replace(config or GenConfig(), seed=seed)
    if style is not None:
        config = dataclasses.replace(config, style=style)
    config = dataclasses.replace(config, postchecks=postchecks, stop_loops=loop_stop,
                                 completions=config.completions if completion else 0,
                                 corrections=config.corrections if correction else 0)
    if resamples is not None:
        if resamples < 0:
            raise UsageError(f"must be 0 or more, not {resamples}", setting="resamples")
        config = dataclasses.replace(config, resamples=resamples)
    for f in example_files:
        if not Path(f).exists():
            raise UsageError(f"no such examples file or folder: {f}", setting="examples-file")
    embedder = None
    if retrieval == "minilm" and examples:
        from tapir.runtime.grounding import default_embedder

        embedder = default_embedder()
    return ModelSource(backend if backend is not None else open_backend(spec, threads=threads, ctx=ctx, drafts=drafts),
                       spec=spec,
                       config=config, example_files=example_files, use_examples=examples, embedder=embedder)
