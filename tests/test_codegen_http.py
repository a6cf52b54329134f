"""The HTTP backend asks a model server what prompts are fitted with: its context and its tokenizer.

A real llama-cpp-python server is started in ``tests/test_codegen_llm.py``; here a small stand-in
speaks the endpoints of the three server families Tapir knows (llama.cpp's ``llama-server``, vLLM,
llama-cpp-python), so that each one's answers are checked without loading a model, and a server
with none of them (Ollama, a hosted API) keeps the estimate.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tapir.codegen import language as L
from tapir.codegen.backend import Request, estimate_tokens
from tapir.codegen.generate import GenConfig, Generator
from tapir.codegen.http_backend import HttpBackend
from tapir.codegen.source import script_source
from tapir.core.errors import TapirError

NOTES = Path(__file__).resolve().parent.parent / "samples" / "notes" / "notes.yaml"
ANSWER = ("Plan: as the task says\nElements: $notes_screen__new_note_button\n"
          "```python\n$notes_screen__new_note_button.tap()\n```")


def tokens(text: str) -> int:
    """The stand-in's tokenizer: words and punctuation marks (close to a real one's count on prompts)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


class Server:
    """An OpenAI-compatible server of one ``family`` (``llama-server``, ``vllm``, ``llama-cpp-python``,
    ``plain``), with a context of ``n_ctx`` tokens; it keeps the chat requests it was sent."""

    def __init__(self, family: str, n_ctx: int = 4096) -> None:
        self.family, self.n_ctx = family, n_ctx
        self.chats: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _json(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path == "/props" and server.family == "llama-server":
                    return self._json(200, {"default_generation_settings": {"n_ctx": server.n_ctx}})
                if self.path == "/v1/models":
                    model: dict[str, Any] = {"id": "m", "object": "model"}
                    if server.family == "vllm":
                        model["max_model_len"] = server.n_ctx
                    return self._json(200, {"object": "list", "data": [model]})
                self._json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/extras/tokenize/count" and server.family == "llama-cpp-python":
                    return self._json(200, {"count": 1 + tokens(body["input"])})  # with its BOS
                if self.path == "/tokenize" and server.family == "llama-server":
                    return self._json(200, {"tokens": list(range(tokens(body["content"])))})
                if self.path == "/tokenize" and server.family == "vllm":
                    n = 1 + tokens(body["prompt"])
                    return self._json(200, {"count": n, "tokens": list(range(n)), "max_model_len": server.n_ctx})
                if self.path == "/v1/chat/completions":
                    return self._chat(body)
                self._json(404, {"detail": "Not Found"})

            def _chat(self, body: dict[str, Any]) -> None:
                server.chats.append(body)
                prompt = sum(tokens(m["content"]) for m in body["messages"])
                if prompt + body["max_tokens"] > server.n_ctx:
                    if server.family == "llama-cpp-python":  # it fails inside the stream it began
                        self.send_response(200)
                        self.send_header("Content-Type", "text/event-stream")
                        self.end_headers()
                        return
                    return self._json(400, {"error": {"message": f"Requested tokens ({prompt}) exceed context "
                                                                f"window of {server.n_ctx}"}})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in (ANSWER[:20], ANSWER[20:]):  # no usage: as llama-cpp-python streams
                    chunk = {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n')

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Server] = []

    def start(family: str, n_ctx: int = 4096) -> Server:
        started.append(Server(family, n_ctx))
        return started[-1]

    yield start
    for s in started:
        s.close()


@pytest.mark.parametrize("family", ["llama-server", "vllm", "llama-cpp-python"])
def test_the_server_counts_the_tokens_and_what_it_adds_to_every_text_is_taken_off(serve: Any, family: str) -> None:
    backend = HttpBackend(serve(family).url)
    text = "$notes_screen__new_note_button.tap()"
    assert backend.count_tokens(text) == tokens(text) == 6 != estimate_tokens(text)
    assert backend.count_tokens("") == 0


@pytest.mark.parametrize("family", ["llama-server", "vllm"])
def test_the_server_says_its_context_unless_it_is_given(serve: Any, family: str) -> None:
    server = serve(family, n_ctx=3500)
    assert HttpBackend(server.url).n_ctx == 3500
    assert HttpBackend(server.url, n_ctx=8192).n_ctx == 8192


def test_a_server_that_says_neither_keeps_the_estimate_and_unfitted_prompts(serve: Any) -> None:
    backend = HttpBackend(serve("plain").url)
    text = "Tap the Save button, then go back."
    assert backend.n_ctx is None and backend.count_tokens(text) == estimate_tokens(text)
    done = backend.complete(Request("system", "prefix ", "rest", max_tokens=50))
    assert done.text == ANSWER and done.usage.counted_by == "estimate"


@pytest.mark.parametrize("family", ["llama-server", "vllm"])
def test_a_document_too_large_for_the_servers_context_gets_a_prompt_that_fits(serve: Any, family: str) -> None:
    """Before, a server's backend had no context, so every document went whole into the prompt:
    past the context of the server, which refused it (the stand-in does as llama.cpp does)."""
    doc = L.load_document(NOTES)
    config = GenConfig(max_tokens=200)
    roomy = Generator(doc, HttpBackend(serve(family, n_ctx=32768).url), config=config)
    assert roomy.style == "described"
    whole = roomy.prompt("Add a note called milk")
    needed = tokens(whole.system) + tokens(whole.prefix + whole.rest) + config.max_tokens
    server = serve(family, n_ctx=needed * 2 // 3)
    gen = Generator(doc, HttpBackend(server.url), config=config)
    assert gen.style in ("names", "focused")
    done = gen.generate("Add a note called milk")
    assert done.script is not None and "$notes_screen__new_note_button" in done.script
    sent = server.chats[-1]["messages"]
    assert sum(tokens(m["content"]) for m in sent) + config.max_tokens <= server.n_ctx
    assert done.usage.counted_by == "server tokenizer"
    assert done.usage.prompt_tokens == tokens(sent[0]["content"]) + tokens(sent[1]["content"])


def test_a_prompt_past_the_context_says_how_to_give_the_servers_context(serve: Any) -> None:
    doc = L.load_document(NOTES)
    refusing = serve("plain", n_ctx=1000)  # a 400 that says why
    with pytest.raises(TapirError) as caught:
        Generator(doc, HttpBackend(refusing.url), config=GenConfig(max_tokens=200)).generate("Add a note")
    assert "exceed context window of 1000" in caught.value.message
    assert caught.value.hint is not None and "--ctx" in caught.value.hint
    # llama-cpp-python's server neither says its context nor refuses: its stream ends before it begins
    silent = serve("llama-cpp-python", n_ctx=1000)
    with pytest.raises(TapirError) as caught:
        Generator(doc, HttpBackend(silent.url), config=GenConfig(max_tokens=200)).generate("Add a note")
    assert "closed its answer before it began" in caught.value.message
    hint = caught.value.hint or ""
    assert re.search(r"the prompt has [\d,]+ tokens", hint) and "--ctx" in hint
    # `tapir eval --model URL --ctx N` and `tapir gen --url URL --ctx N` give it
    assert script_source(silent.url, ctx=1000, examples=False).backend.n_ctx == 1000  # type: ignore[attr-defined]


def test_tapir_gen_fits_the_prompt_to_the_ctx_given_for_a_server_that_does_not_say_it(
        serve: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    command = ["gen", "Add a note called milk", "--doc", str(NOTES), "--rounds", "1", "--max-tokens", "400"]
    roomy = serve("llama-server", n_ctx=32768)
    assert main([*command, "--url", roomy.url]) == 0
    n_ctx = (sum(tokens(m["content"]) for m in roomy.chats[-1]["messages"]) + 400) * 2 // 3
    server = serve("llama-cpp-python", n_ctx=n_ctx)
    command += ["--url", server.url]
    assert main(command) == 1
    err = capsys.readouterr().err
    assert "closed its answer before it began" in err and "give its size (--ctx N)" in err
    assert main([*command, "--ctx", str(n_ctx)]) == 0
    assert "$notes_screen__new_note_button.tap()" in capsys.readouterr().out
    assert sum(tokens(m["content"]) for m in server.chats[-1]["messages"]) + 400 <= n_ctx
