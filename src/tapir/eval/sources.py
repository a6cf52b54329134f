"""Where a task's script comes from: the reference (``--oracle``) or a model.

The harness asks a ``ScriptSource`` for each task's script and records what it reports about the
generation (tokens, latency). ``OracleSource`` hands back the suite's hand-written reference, so a
failure under ``--oracle`` is a runtime or suite failure, never a generation one. A model plugs in
as any object with the same two methods; ``CallableSource`` wraps a plain function::

    def generate(request: GenerationRequest) -> Generation:
        reply = my_model(request.task.text, request.document)
        return Generation(reply.script, Tokens(cached=reply.cached, computed=reply.prompt - reply.cached,
                                                generated=reply.completion), latency_s=reply.seconds)

    source = CallableSource("my-model", generate, settings={"model": "qwen2.5-coder-1.5b", "temperature": 0})
    report = run_suite(suite, source)

A source may also offer ``repair(request, previous, error) -> Generation | None`` (the paper's
validation-based revising): with ``repairs=N`` the harness calls it after a run that stopped on an
error, with the rendered error, and runs the repaired script on a fresh device, up to N times. And
``complete(request, previous, records) -> Generation | None``: after a run that finished, the
script with the one step it left undone appended (a dialog's OK), run before any repair and
without counting as one (``tapir.codegen``'s completion).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tapir.core.document import AppDocument
from tapir.eval.suite import Task


@dataclass(frozen=True)
class Tokens:
    """Token accounting of one generation, in the paper's terms."""

    #: Prompt tokens whose KV state was reused from the prompt cache.
    cached: int = 0
    #: Prompt tokens computed (prefilled) for this request.
    computed: int = 0
    #: Tokens generated.
    generated: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.cached + other.cached, self.computed + other.computed, self.generated + other.generated)

    def as_dict(self) -> dict[str, int]:
        return {"cached": self.cached, "computed": self.computed, "generated": self.generated}


@dataclass(frozen=True)
class GenerationRequest:
    """What a source is given for one task."""

    task: Task
    document: AppDocument
    #: The run's seed (sources that sample should use it, so that a run can be repeated).
    seed: int = 0
    #: The document's file (a model's examples live beside it), when the suite names one.
    document_path: str | None = None


@dataclass(frozen=True)
class Generation:
    """A source's answer: the script (None when it produced none) and what it cost."""

    script: str | None
    tokens: Tokens | None = None
    #: Seconds from the request to the last generated token.
    latency_s: float | None = None
    #: Why there is no script (the model's reply could not be parsed, the server failed...).
    error: str | None = None
    #: Anything else worth keeping in the report (the raw reply, the prompt's length...).
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class ScriptSource(Protocol):
    """Gives the script of a task (see the module docstring)."""

    #: Shown in reports: ``oracle``, or the model's name.
    name: str

    def settings(self) -> dict[str, Any]:
        """What decides the scripts (model, quantisation, temperature, prompt form...), recorded in
        the report so that a run can be reproduced and compared."""
        ...

    def generate(self, request: GenerationRequest) -> Generation: ...


class OracleSource:
    """The suite's reference scripts (``tapir eval --oracle``)."""

    name = "oracle"

    def settings(self) -> dict[str, Any]:
        return {"source": "oracle", "scripts": "the suite's reference scripts"}

    def generate(self, request: GenerationRequest) -> Generation:
        if request.task.reference is None:
            return Generation(None, error="the task has no reference script")
        return Generation(request.task.reference)


class ReportSource:
    """The scripts of an earlier report (``tapir eval --scripts-from REPORT.json``): each task runs
    the last script the report holds for it, so that a model's answers are judged again on the
    Tapir of today without the model. A task the report holds no script for gets none (a
    ``no_script`` verdict). The scripts are never trusted (they allow themselves nothing), even
    when the report was the oracle's."""

    def __init__(self, report: Mapping[str, Any], path: str) -> None:
        self.path = path
        source = report.get("source") or {}
        self.was = str(source.get("name") or "unknown") if isinstance(source, Mapping) else "unknown"
        self.name = f"{self.was} (scripts of {Path(path).name})"
        self.scripts: dict[str, str] = {
            str(t["id"]): t["script"] for t in report.get("tasks", ())
            if isinstance(t, Mapping) and "id" in t and isinstance(t.get("script"), str)}

    @classmethod
    def load(cls, path: str | Path) -> ReportSource:
        """The source of a report file (``UsageError`` for a file that is not a report)."""
        from tapir.eval.compare import load_report

        return cls(load_report(path), str(path))

    def settings(self) -> dict[str, Any]:
        return {"source": "scripts-from", "report": self.path, "report_source": self.was}

    def generate(self, request: GenerationRequest) -> Generation:
        script = self.scripts.get(request.task.id)
        if script is None:
            return Generation(None, error=f"{self.path} holds no script for {request.task.id}")
        return Generation(script)


class CallableSource:
    """A source from functions: ``generate(request) -> Generation | str`` and optionally
    ``repair(request, previous, error) -> Generation | str | None``."""

    def __init__(
        self,
        name: str,
        generate: Callable[[GenerationRequest], Generation | str],
        *,
        repair: Callable[[GenerationRequest, Generation, str], Generation | str | None] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._generate = generate
        self._repair = repair
        self._settings = dict(settings or {})

    def settings(self) -> dict[str, Any]:
        return {"source": self.name, **self._settings}

    def generate(self, request: GenerationRequest) -> Generation:
        return as_generation(self._generate(request))

    def repair(self, request: GenerationRequest, previous: Generation, error: str) -> Generation | None:
        if self._repair is None:
            return None
        answer = self._repair(request, previous, error)
        return None if answer is None else as_generation(answer)


def model_source(spec: str, *, seed: int = 0, **options: Any) -> AdaptedSource:
    """The source behind ``tapir eval --model SPEC``: the code generator's
    ``tapir.codegen.script_source(spec, seed=...)`` (the seam a model plugs into); UsageError
    while this installation has no code generator.

    The code generator sits below the harness and cannot name these types: its source is a
    ``ScriptSource`` by shape, and its answers carry the fields of ``Generation`` (``script``,
    ``tokens`` with ``cached``/``computed``/``generated``, ``latency_s``, ``error``, ``extra``);
    ``AdaptedSource`` turns them into ``Generation`` here, at the boundary. ``options`` go to the
    code generator as they are (``threads``, ``ctx``, ``style``)."""
    import importlib

    from tapir.core.errors import UsageError

    codegen = importlib.import_module("tapir.codegen")
    factory = getattr(codegen, "script_source", None)
    if not callable(factory):
        raise UsageError("model runs need the code generator (tapir.codegen.script_source), which this "
                         "installation does not have yet; --oracle runs the reference scripts")
    source = factory(spec, seed=seed, **options)
    if not isinstance(source, ScriptSource):
        raise UsageError(f"tapir.codegen.script_source({spec!r}) did not give a script source")
    return AdaptedSource(source)


class AdaptedSource:
    """A source whose answers have ``Generation``'s fields but not its type (the code generator's),
    with each answer converted; ``repair`` is offered when the wrapped source offers it."""

    def __init__(self, inner: Any) -> None:
        # Any: the inner source's answers are not Generations, so it is a ScriptSource by shape only
        self.inner = inner
        self.name = inner.name

    def settings(self) -> dict[str, Any]:
        return self.inner.settings()

    def generate(self, request: GenerationRequest) -> Generation:
        return as_generation(self.inner.generate(request))

    def __getattr__(self, name: str) -> Any:
        # ``repair`` only where the inner source has it (can_repair looks for the attribute)
        if name == "repair" and callable(getattr(self.inner, "repair", None)):
            return self._repair
        # the code generator's levers: post-run checks and held-out tasks, passed through as they are
        if name in ("postcheck", "hold_out") and callable(getattr(self.inner, name, None)):
            return getattr(self.inner, name)
        if name == "complete" and callable(getattr(self.inner, "complete", None)):
            return self._complete
        if name == "correct" and callable(getattr(self.inner, "correct", None)):
            return self._correct
        raise AttributeError(name)

    def _correct(self, request: GenerationRequest, previous: Generation, error: str,
                 records: Sequence[Mapping[str, Any]] = ()) -> Generation | None:
        answer = self.inner.correct(request, previous, error, records)  # type: ignore[attr-defined]
        return None if answer is None else as_generation(answer)

    def _complete(self, request: GenerationRequest, previous: Generation,
                  records: Sequence[Mapping[str, Any]]) -> Generation | None:
        answer = self.inner.complete(request, previous, records)  # type: ignore[attr-defined]
        return None if answer is None else as_generation(answer)

    def _repair(self, request: GenerationRequest, previous: Generation, error: str) -> Generation | None:
        answer = self.inner.repair(request, previous, error)  # type: ignore[attr-defined]
        return None if answer is None else as_generation(answer)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def as_generation(answer: Any) -> Generation:
    """A ``Generation`` from a ``Generation``, a script (``str``) or any object with its fields."""
    if isinstance(answer, Generation):
        return answer
    if isinstance(answer, str):
        return Generation(answer)
    if not hasattr(answer, "script"):
        raise TypeError(f"a script source answered {type(answer).__name__}, which has no script")
    t = getattr(answer, "tokens", None)
    if t is not None and not isinstance(t, Tokens):
        get = t.get if isinstance(t, Mapping) else (lambda k, d=0: getattr(t, k, d))
        t = Tokens(int(get("cached", 0) or 0), int(get("computed", 0) or 0), int(get("generated", 0) or 0))
    return Generation(answer.script, t, getattr(answer, "latency_s", None), getattr(answer, "error", None),
                      dict(getattr(answer, "extra", None) or {}))


def can_repair(source: ScriptSource) -> bool:
    """True when the source offers ``repair`` (and, for a ``CallableSource``, was given one)."""
    if isinstance(source, CallableSource):
        return source._repair is not None
    return callable(getattr(source, "repair", None))


__all__ = ["AdaptedSource", "CallableSource", "Generation", "GenerationRequest", "OracleSource", "ReportSource",
           "ScriptSource", "Tokens", "as_generation", "can_repair", "model_source"]
