"""What every model backend takes and gives: one interface, three implementations.

* ``LlamaCppBackend`` (``tapir.codegen.llama_backend``): a local GGUF in this process, with the
  document prefix's KV state kept in memory and on disk (the default);
* ``HttpBackend`` (``tapir.codegen.http_backend``): any OpenAI-compatible server (llama.cpp's
  server, llama-cpp-python's, vLLM, Ollama);
* ``ScriptedBackend`` (below): answers given in advance, for tests and dry runs.

A ``Request`` is a chat of a system message and a user message whose first part
(``user_prefix``) is the same for every task on one document: backends that can, keep the model
state of everything up to the end of that part and start each task from it::

    backend = ScriptedBackend(["Plan: tap it\\nElements: $a\\n```python\\n$a.tap()\\n```"])
    done = backend.complete(Request("system", "document...\\n", "Your task is: tap a\\n", grammar=None))
    done.text, done.usage.generated_tokens
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tapir.codegen.loops import stop_repeats

__all__ = ["DEFAULT_CTX", "Backend", "Completion", "Request", "ScriptedBackend", "Usage", "estimate_tokens"]

#: A local model's context in tokens unless told otherwise: a focused prompt of a real app (about
#: 4k tokens) and its answer fit, and Qwen2.5-1.5B's state for it stays near 170 MB.
DEFAULT_CTX = 6144


@dataclass(frozen=True)
class Request:
    system: str
    #: The cacheable start of the user message (instruction, API, document); ends with a newline.
    user_prefix: str
    #: The rest of the user message (examples, current screen, task, repair notes).
    user_rest: str
    #: A GBNF grammar the answer must match, or None for free text.
    grammar: str | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int = 0
    #: A readable name for the prefix (``music-p1``), used in cache file names.
    cache_label: str = "prefix"
    #: Stop an answer that starts repeating itself (``tapir.codegen.loops``): finish ``loop``.
    stop_loops: bool = True

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.user_prefix + self.user_rest}]


@dataclass(frozen=True)
class Usage:
    """Accounting of one model call; token counts use the model's own tokenizer when known."""

    prompt_tokens: int
    #: Prompt tokens whose model state was reused (in memory, from disk, or by the server).
    cached_tokens: int | None
    #: Prompt tokens the model computed for this call.
    computed_tokens: int | None
    generated_tokens: int
    #: Seconds from the call to the first generated token, and to the end.
    ttft_s: float | None
    latency_s: float
    #: Where the prefix state came from: ``cold``, ``memory``, ``disk``, ``server`` or ``none``.
    cache: str = "none"
    #: How tokens were counted: ``model:<file>``, ``server`` (its ``usage``), ``server tokenizer`` (its
    #: tokenize endpoint, the chat template's few tokens aside) or ``estimate``.
    counted_by: str = "estimate"
    #: Seconds spent loading (``disk``) or saving (``cold``) the prefix state, inside ``latency_s``.
    state_io_s: float = 0.0
    #: CPU seconds this process spent on the call (all threads), when the backend computes locally:
    #: unlike ``latency_s`` it does not grow when other programs share the CPU.
    cpu_s: float | None = None
    #: Tokens guessed from the prompt and checked in a batch, and how many of them the model took
    #: (``tapir.codegen.lookup``); 0 where the backend does not draft.
    drafted_tokens: int = 0
    accepted_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    #: ``stop`` (the model ended the answer), ``closed`` (a constrained answer was brought to an end
    #: near ``max_tokens``: complete, but shorter than the model wanted), ``length`` (cut off) or
    #: ``loop`` (stopped when it began repeating itself, and cut back to before the repeats).
    finish: str = "stop"


@runtime_checkable
class Backend(Protocol):
    """A model that completes requests."""

    #: ``llama.cpp:<file>``, ``http:<url>`` or ``scripted``: shown in accounting lines.
    name: str

    def complete(self, request: Request) -> Completion: ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` with this backend's tokenizer (an estimate where it has none)."""
        ...

    def close(self) -> None: ...


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about four characters a token on code and English)."""
    return max(1, (len(text) + 3) // 4) if text else 0


@dataclass
class ScriptedBackend:
    """Answers fixed in advance (a list, consumed in order) or computed by a function of the request.

    Every request is kept in ``requests`` so tests can read the prompts that were sent.
    """

    answers: Sequence[str] | Callable[[Request], str]
    name: str = "scripted"
    requests: list[Request] = field(default_factory=list)

    def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        if callable(self.answers):
            text = self.answers(request)
        else:
            if len(self.requests) > len(self.answers):
                raise IndexError(f"the scripted backend has {len(self.answers)} answers; "
                                 f"request {len(self.requests)} has none")
            text = self.answers[len(self.requests) - 1]
        prompt = self.count_tokens(request.system + request.user_prefix + request.user_rest)
        generated = min(self.count_tokens(text), request.max_tokens)
        usage = Usage(prompt, 0, prompt, generated, 0.0, 0.0, "none", "estimate")
        looped = False
        if request.stop_loops:
            text, looped = stop_repeats(text)
        return Completion(text, usage, "loop" if looped else "stop")

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def close(self) -> None:
        pass
