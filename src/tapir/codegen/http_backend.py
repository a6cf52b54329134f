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

Only the standard library is used (``urllib``); an API key, if any, goes in ``Authorization``.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from tapir.codegen.backend import Completion, Request, Usage, estimate_tokens
from tapir.codegen.loops import RepeatGuard
from tapir.core.errors import TapirError, UsageError

__all__ = ["HttpBackend"]


class HttpBackend:
    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 grammar_field: str | None = "grammar", timeout_s: float = 300.0,
                 extra: dict[str, Any] | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(f"{base_url!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)", setting="url")
        self.base = base_url.rstrip("/")
        if not self.base.endswith("/v1"):
            self.base += "/v1"
        self.name = f"http:{self.base}"
        self.model = model
        self.api_key = api_key
        self.grammar_field = grammar_field
        self.timeout_s = timeout_s
        # Without a repeat penalty (llama.cpp servers default to 1.1): scripts repeat names by design.
        self.extra = {"repeat_penalty": 1.0} if extra is None else extra

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method="POST")
        try:
            return urllib.request.urlopen(req, timeout=self.timeout_s)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:400]
            raise TapirError(f"the model server at {self.base} answered {exc.code}: {detail}") from None
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
                        finish = "length" if choice["finish_reason"] == "length" else "stop"
                usage = chunk.get("usage") or usage
                timings = chunk.get("timings") or timings
        latency = time.perf_counter() - t0
        text = guard.cut() if guard is not None and guard.looping else "".join(parts)
        if guard is not None and guard.looping:
            finish = "loop"
        prompt_tokens = usage.get("prompt_tokens")
        generated = usage.get("completion_tokens")
        counted = "server"
        if prompt_tokens is None or generated is None:
            counted = "estimate"
            prompt_tokens = estimate_tokens(request.system + request.user_prefix + request.user_rest)
            generated = estimate_tokens(text)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if cached is None and "cache_n" in timings:
            cached = timings["cache_n"]
        computed = None if cached is None else int(prompt_tokens) - int(cached)
        return Completion(text, Usage(int(prompt_tokens), cached, computed, int(generated), ttft, latency,
                                      "server" if cached else "none", counted), finish)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def close(self) -> None:
        pass
