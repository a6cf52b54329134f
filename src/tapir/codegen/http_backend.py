"""Any OpenAI-compatible server: llama.cpp's ``llama-server``, llama-cpp-python's server, vLLM, Ollama.

The request goes to ``POST {base}/chat/completions`` with the system and user messages, streamed
(so the time to the first token is measured), at the request's temperature, with the answer
grammar in the field the server understands (``grammar`` for llama.cpp servers, ``guided_grammar``
for vLLM; ``None`` for servers without grammars, whose answers the checker then vets). Prefix
caching is the server's business: llama.cpp keeps the last prompt's KV state per slot, so the
document prefix is reused there too. Token counts come from the server's ``usage`` (and its
``prompt_tokens_details.cached_tokens`` or llama.cpp's ``timings.cache_n`` when present)::

    backend = HttpBackend("http://127.0.0.1:8080/v1")
    done = backend.complete(request)

Prompts are fitted to a model's context (``tapir.codegen.generate``), which needs the context's
size and the model's own token counts: without them a real app's document went whole into every
prompt (10k tokens and more), past the context of the server that had to read it. So the backend
asks the server, once each: its context (``n_ctx``: given, else llama.cpp's ``GET /props`` or
vLLM's ``max_model_len`` in ``GET /v1/models``) and its tokenizer (llama-cpp-python's ``POST
/extras/tokenize/count``, llama.cpp's and vLLM's ``POST /tokenize``); a server with neither
(Ollama, a hosted API) gets the four-characters-a-token estimate and unfitted prompts, as before.
Only llama-cpp-python's server is run in the tests; the others' endpoints are stand-ins.

Only the standard library is used (``urllib``); an API key, if any, goes in ``Authorization``.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from tapir.codegen.backend import Completion, Request, Usage, estimate_tokens
from tapir.codegen.loops import RepeatGuard
from tapir.core.errors import TapirError, UsageError

__all__ = ["HttpBackend"]


def _cannot_count(text: str) -> int | None:
    """The counter of a server that has no tokenizer endpoint."""
    return None


class HttpBackend:
    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 grammar_field: str | None = "grammar", timeout_s: float = 300.0,
                 extra: dict[str, Any] | None = None, n_ctx: int | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(f"{base_url!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)", setting="url")
        self.base = base_url.rstrip("/")
        if not self.base.endswith("/v1"):
            self.base += "/v1"
        #: The server's root, where llama.cpp's and vLLM's own endpoints (``/props``, ``/tokenize``) are.
        self.root = self.base[: -len("/v1")]
        self.name = f"http:{self.base}"
        self.model = model
        self.api_key = api_key
        self.grammar_field = grammar_field
        self.timeout_s = timeout_s
        # Without a repeat penalty (llama.cpp servers default to 1.1): scripts repeat names by design.
        self.extra = {"repeat_penalty": 1.0} if extra is None else extra
        self._n_ctx = n_ctx
        self._asked_ctx = n_ctx is not None
        #: How this server counts a text's tokens (None: not asked yet), and what it adds to any text.
        self._counter: Callable[[str], int | None] | None = None
        self._offset = 0
        self._counts: dict[str, int] = {}

    def _request(self, url: str, body: dict[str, Any] | None, timeout: float) -> Any:
        headers = {"Accept": "text/event-stream, application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
        return urllib.request.urlopen(req, timeout=timeout)

    def _ask(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """The JSON a server's own endpoint answers (``path`` from its root), or None where it has
        none: a question about the server, which not every server can answer."""
        try:
            with self._request(self.root + path, body, min(self.timeout_s, 30.0)) as resp:
                return json.loads(resp.read().decode("utf-8", "replace"))
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        try:
            return self._request(self.base + path, body, self.timeout_s)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:400]
            hint = None
            if "context" in detail.lower() and self._n_ctx is None:
                hint = "give the server's context size (--ctx N) so that prompts are fitted to it"
            raise TapirError(f"the model server at {self.base} answered {exc.code}: {detail}", hint=hint) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TapirError(f"cannot reach the model server at {self.base}: {reason}",
                             hint="is the server running? (e.g. python -m llama_cpp.server --model M.gguf)") from None

    def complete(self, request: Request) -> Completion:
        body: dict[str, Any] = {
            "messages": request.messages(), "max_tokens": request.max_tokens, "temperature": request.temperature,
            "seed": request.seed, "stream": True, "stream_options": {"include_usage": True}, **self.extra,
        }
        if self.model:
            body["model"] = self.model
        if request.grammar and self.grammar_field:
            body[self.grammar_field] = request.grammar
        t0 = time.perf_counter()
        ttft: float | None = None
        parts: list[str] = []
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        finish = "stop"
        ended = False  # a finish reason or [DONE] came: a stream cut short has neither
        guard = RepeatGuard() if request.stop_loops else None
        with self._post("/chat/completions", body) as resp:
            for raw in resp:
                if guard is not None and guard.looping:
                    finish = "loop"  # leaving the stream closes it: the server stops generating
                    break
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    ended = True
                    break
                try:
                    chunk = json.loads(payload)
                except json.JSONDecodeError:
                    continue
                for choice in chunk.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content") or ""
                    if text:
                        if ttft is None:
                            ttft = time.perf_counter() - t0
                        parts.append(text)
                        if guard is not None:
                            guard.feed(text)
                    if choice.get("finish_reason"):
                        ended = True
                        finish = "length" if choice["finish_reason"] == "length" else "stop"
                usage = chunk.get("usage") or usage
                timings = chunk.get("timings") or timings
        latency = time.perf_counter() - t0
        if not ended and not parts:
            # llama-cpp-python's server answers 200, then fails inside the stream (a prompt past its
            # context) and closes it: nothing said but the log
            raise self._cut_short(request)
        text = guard.cut() if guard is not None and guard.looping else "".join(parts)
        if guard is not None and guard.looping:
            finish = "loop"
        prompt_tokens = usage.get("prompt_tokens")
        generated = usage.get("completion_tokens")
        counted = "server"
        if prompt_tokens is None or generated is None:
            # llama-cpp-python streams no usage; its tokenizer still counts (the chat template's
            # few tokens aside)
            counted = "server tokenizer" if self._tokenizer() is not None else "estimate"
            prompt_tokens = self.count_tokens(request.system) + self.count_tokens(request.user_prefix
                                                                                  + request.user_rest)
            generated = self.count_tokens(text)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if cached is None and "cache_n" in timings:
            cached = timings["cache_n"]
        computed = None if cached is None else int(prompt_tokens) - int(cached)
        return Completion(text, Usage(int(prompt_tokens), cached, computed, int(generated), ttft, latency,
                                      "server" if cached else "none", counted), finish)

    def _cut_short(self, request: Request) -> TapirError:
        hint = "the server's log says why"
        if self._tokenizer() is not None:
            size = self.count_tokens(request.system) + self.count_tokens(request.user_prefix + request.user_rest)
            hint += f"; the prompt has {size:,} tokens"
            if self._n_ctx is None:
                hint += ": if that is past the server's context, give its size (--ctx N) to fit prompts to it"
        return TapirError(f"the model server at {self.base} closed its answer before it began", hint=hint)

    @property
    def n_ctx(self) -> int | None:
        """The server's context in tokens: as given, else as the server says, else None (prompts
        are then not fitted)."""
        if not self._asked_ctx:
            self._asked_ctx = True
            self._n_ctx = self._server_context()
        return self._n_ctx

    def _server_context(self) -> int | None:
        props = self._ask("/props")  # llama.cpp's llama-server
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            for found in ((settings or {}).get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")):
                if isinstance(found, int) and found > 0:
                    return found
        models = self._ask("/v1/models")  # vLLM
        for m in (models or {}).get("data") or [] if isinstance(models, dict) else []:
            if isinstance(m, dict) and (self.model is None or m.get("id") == self.model):
                found = m.get("max_model_len")
                if isinstance(found, int) and found > 0:
                    return found
        return None

    def _tokenizer(self) -> Callable[[str], int | None] | None:
        """How the server counts tokens, found on the first question (None: it cannot)."""
        if self._counter is None:
            model = {"model": self.model} if self.model else {}

            def llama_cpp_python(text: str) -> int | None:
                found = self._ask("/extras/tokenize/count", {"input": text, **model})
                return found.get("count") if isinstance(found, dict) else None

            def tokenize(text: str) -> int | None:  # llama-server reads "content", vLLM "prompt"
                found = self._ask("/tokenize", {"content": text, "prompt": text, **model})
                if not isinstance(found, dict):
                    return None
                count = found.get("count", len(found["tokens"]) if isinstance(found.get("tokens"), list) else None)
                return count if isinstance(count, int) else None

            self._counter = _cannot_count
            for counter in (llama_cpp_python, tokenize):
                empty, probe = counter(""), counter("Tap the OK button")
                if isinstance(empty, int) and isinstance(probe, int) and probe > empty:
                    # what a server adds to every text (a BOS token), which a prompt has once
                    self._counter, self._offset = counter, empty
                    break
        return None if self._counter is _cannot_count else self._counter

    def count_tokens(self, text: str) -> int:
        counter = self._tokenizer()
        if counter is None or not text:
            return estimate_tokens(text)
        if text not in self._counts:
            found = counter(text)
            if found is None:
                raise TapirError(f"the model server at {self.base} stopped answering how many tokens a text has")
            if len(self._counts) >= 4096:  # the texts of a few prompts' fitting, not of a whole run
                self._counts.clear()
            self._counts[text] = max(0, found - self._offset)
        return self._counts[text]

    def close(self) -> None:
        pass
