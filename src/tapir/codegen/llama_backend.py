"""A local GGUF model in this process (llama-cpp-python), with the document prefix computed once.

The prompt is the model's own chat template (from the GGUF, rendered as llama-cpp-python's
server renders it) over the request's messages. Its first part, up to the end of
``Request.user_prefix``, is the **prefix**: per (model, prefix tokens) its KV state is

* kept in the context between calls (a later prompt reuses the longest common token prefix),
  and with it the states of the last prompts (``tapir.codegen.kept_states``: a prompt resumes from
  the one it shares most with, when that is more than the context's own);
* saved to the prefix cache on disk the first time it is computed, and loaded from there by a
  new process, so the first task after a restart skips it too.

On a cold start the prefix is evaluated on its own before the rest, exactly as it is after a
cache hit, so a cached call computes the same numbers as a cold one (same batch boundaries).

    backend = LlamaCppBackend("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    done = backend.complete(request)
    done.usage.cache, done.usage.cached_tokens      # 'disk', 2760
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tapir.codegen.backend import DEFAULT_CTX, Completion, Request, Usage
from tapir.codegen.kept_states import DEFAULT_KEPT_BYTES, KeptStates, common_prefix
from tapir.codegen.lookup import DRAFT_TOKENS, PromptLookup
from tapir.codegen.loops import RepeatGuard
from tapir.codegen.prefix_cache import PrefixCache, default_cache_dir
from tapir.core.errors import UsageError

__all__ = ["LlamaCppBackend", "quiet_llama_logs", "require_llama_cpp", "safe_model_params"]

_SENTINEL = "\u2063TAPIR-PREFIX-END\u2063"
#: Tokens before ``max_tokens`` (at least; a quarter of it for long answers) from which a constrained
#: answer is brought to an end (see ``_Decoder``).
_CLOSING_RESERVE = 48
#: A kept state is loaded when it holds at least this many more of the prompt's tokens than the
#: context does: loading copies the whole state (tens of milliseconds), about what computing
#: a few prompt tokens costs on two cores.
_WORTH_LOADING = 16
_LOG_CALLBACK: Any = None


# llama.cpp's OpenMP threads spin at every barrier by default; on a CPU shared with other work
# (a laptop, CI, two cores) that made decoding 6-40x slower in our measurements. Sleeping waits
# cost little when the CPU is idle. The setting is read once, when the OpenMP runtime loads (the
# first `import llama_cpp`), so it is made when this module is imported, before that.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def require_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise UsageError(
            "the local model backend needs llama-cpp-python",
            hint="pip install 'tapir[llm]' (it compiles llama.cpp: about 5 minutes), or use --url for a model server",
        ) from exc
    return llama_cpp


def quiet_llama_logs() -> None:
    """Send llama.cpp's own log lines (model loading, context sizes) nowhere."""
    global _LOG_CALLBACK
    llama_cpp = require_llama_cpp()
    if _LOG_CALLBACK is None:
        @llama_cpp.llama_log_callback  # type: ignore[misc]
        def _silent(level: int, text: bytes, user_data: Any) -> None:
            return None

        _LOG_CALLBACK = _silent
        llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


def cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return " amx_tile" in f.read(200_000)
    except OSError:
        return False


@contextlib.contextmanager
def safe_model_params() -> Iterator[None]:
    """Load models without llama.cpp's extra weight buffers (AMX, repacking) on AMX CPUs.

    llama.cpp 0.3.36's AMX buffer crashes (SIGSEGV in the first decode) on virtual machines whose
    CPU reports AMX; turning the extra buffers off (``use_extra_bufts``, llama.cpp's
    ``--no-repack``) avoids it at a cost in prompt speed. Elsewhere nothing changes.
    """
    if not cpu_has_amx() or os.environ.get("TAPIR_LLAMA_EXTRA_BUFFERS") == "1":
        yield
        return
    import llama_cpp.llama_cpp as low

    original = low.llama_model_default_params

    def params() -> Any:
        p = original()
        p.use_extra_bufts = False
        return p

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = original


class LlamaCppBackend:
    """``Backend`` over ``llama_cpp.Llama``; the model is loaded on the first call."""

    def __init__(self, model_path: str | Path, *, n_ctx: int = DEFAULT_CTX, n_threads: int | None = None,
                 cache_dir: Path | None | bool = True, n_batch: int = 512,
                 draft_tokens: int = DRAFT_TOKENS, kept_bytes: int = DEFAULT_KEPT_BYTES) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise UsageError(f"no such model file: {self.model_path}")
        self.name = f"llama.cpp:{self.model_path.name}"
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self.n_threads = n_threads or max(1, min(os.cpu_count() or 1, 8))
        #: The longest draft copied from the prompt and checked in one batch (0: one token at a
        #: time). The answer is the model's own either way; see ``tapir.codegen.lookup``.
        self.draft_tokens = draft_tokens
        folder = default_cache_dir() if cache_dir is True else (cache_dir or None)
        self.cache = PrefixCache(Path(folder)) if folder else None
        #: The states of the last prompts, in memory (``kept_bytes``, 0 for none).
        self.kept = KeptStates(kept_bytes)
        #: Called just before a prefix is computed (no copy in memory or on disk): the minutes on a
        #: CPU a front end should announce, and only then.
        self.on_cold: Callable[[], None] | None = None
        self._llm: Any = None
        self._vocab: Any = None
        self._formatter: Any = None
        #: Load time of the model, for accounting (not part of any call's latency).
        self.load_s = 0.0

    # -- loading -----------------------------------------------------------------------------------

    def _model(self) -> Any:
        if self._llm is None:
            llama_cpp = require_llama_cpp()
            quiet_llama_logs()
            t0 = time.perf_counter()
            with safe_model_params():
                self._llm = llama_cpp.Llama(str(self.model_path), n_ctx=self.n_ctx, n_batch=self.n_batch,
                                            n_threads=self.n_threads, verbose=False, seed=0)
            self.load_s = time.perf_counter() - t0
            self._formatter = self._chat_formatter(self._llm)
        return self._llm

    def _tokenizer(self) -> Any:
        """A vocabulary-only model for counting tokens without loading the weights."""
        if self._llm is not None:
            return self._llm
        if self._vocab is None:
            llama_cpp = require_llama_cpp()
            quiet_llama_logs()
            self._vocab = llama_cpp.Llama(str(self.model_path), vocab_only=True, verbose=False)
        return self._vocab

    @staticmethod
    def _chat_formatter(llm: Any) -> Any:
        # The same formatter llama-cpp-python's server builds for a GGUF with a chat template, so
        # a prompt here and one sent to that server are the same tokens.
        from llama_cpp import llama_chat_format as fmt

        template = llm.metadata.get("tokenizer.chat_template") or fmt.CHATML_CHAT_TEMPLATE
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        return fmt.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id])

    def model_id(self) -> str:
        st = self.model_path.stat()
        return f"{self.model_path.resolve()}:{st.st_size}:{st.st_mtime_ns}"

    # -- prompts -------------------------------------------------------------------------------------

    def prompt_tokens(self, request: Request) -> tuple[list[int], int]:
        """The prompt's tokens and how many of them are the prefix (the weights need not be loaded:
        counting a prompt reads the vocabulary only)."""
        llm = self._tokenizer()
        if self._formatter is None:
            self._formatter = self._chat_formatter(llm)
        marked = [{"role": "system", "content": request.system},
                  {"role": "user", "content": request.user_prefix + _SENTINEL + request.user_rest}]
        rendered = self._formatter(messages=marked)
        text: str = rendered.prompt
        cut = text.index(_SENTINEL)
        prefix_text, full_text = text[:cut], text.replace(_SENTINEL, "", 1)
        add_bos = not getattr(rendered, "added_special", False)
        full = llm.tokenize(full_text.encode("utf-8"), add_bos=add_bos, special=True)
        prefix = llm.tokenize(prefix_text.encode("utf-8"), add_bos=add_bos, special=True)
        n = 0
        for a, b in zip(prefix, full, strict=False):
            if a != b:
                break
            n += 1
        return list(full), n

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    # -- the prefix state ------------------------------------------------------------------------------

    def _common(self, tokens: list[int]) -> int:
        return common_prefix(self._llm.input_ids[: self._llm.n_tokens], tokens)

    def _ready_prefix(self, prefix: list[int], label: str) -> tuple[str, float]:
        """Make the context hold ``prefix``: from memory, from disk, or computed (and saved)."""
        llm = self._llm
        if len(prefix) == 0 or self._common(prefix) == len(prefix):
            return "memory", 0.0
        llama_cpp = require_llama_cpp()
        key = None
        if self.cache is not None:
            key = self.cache.key(self.model_id(), self.n_ctx, prefix, label=label,
                                 runtime=f"llama-cpp-python {llama_cpp.__version__}")
            t0 = time.perf_counter()
            hit = self.cache.load(key)
            if hit is not None and list(hit.tokens) == prefix and self._set_state(prefix, hit.state):
                return "disk", time.perf_counter() - t0
        if self.on_cold is not None:
            self.on_cold()
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.eval(prefix)
        io = 0.0
        if self.cache is not None and key is not None:
            t0 = time.perf_counter()
            try:
                self.cache.save(key, prefix, self._get_state())
            except OSError:
                pass  # a full or read-only disk costs the next process the prefix, nothing else
            io = time.perf_counter() - t0
        return "cold", io

    def _set_state(self, tokens: list[int] | tuple[int, ...], state: bytes | bytearray | memoryview) -> bool:
        """Put ``state`` (of ``tokens``) into the context; False when llama.cpp refuses it."""
        llama_cpp = require_llama_cpp()
        llm = self._llm
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(llm._ctx.ctx, buf, len(state)) != len(state):
            return False
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)
        llm._requires_eval = True
        return True

    def _get_state(self) -> memoryview:
        """The context's state (its KV cache), a copy."""
        llama_cpp = require_llama_cpp()
        ctx = self._llm._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buf = (ctypes.c_uint8 * int(size))()
        n = llama_cpp.llama_state_get_data(ctx, buf, size)
        return memoryview(buf).cast("B")[: int(n)]

    def _resume(self, tokens: list[int], n_prefix: int, label: str) -> tuple[str, float]:
        """Make the context start with as much of ``tokens`` as memory or disk holds: the kept
        state that shares the most with them, when that is worth loading over the context's own
        (and covers the prefix), else the prefix from the context, the disk, or computed."""
        hit = self.kept.longest(tokens)
        if hit is not None and hit[0] >= max(n_prefix, self._common(tokens) + _WORTH_LOADING):
            t0 = time.perf_counter()
            if self._set_state(hit[1].tokens, hit[1].state):
                return "memory", time.perf_counter() - t0
        return self._ready_prefix(tokens[:n_prefix], label)

    def forget(self) -> None:
        """Drop the model states kept in memory (the next call starts cold, or from the disk cache)."""
        self.kept.clear()
        if self._llm is not None:
            self._llm.reset()
            self._llm._ctx.kv_cache_seq_rm(-1, 0, -1)

    def rewind(self, n_tokens: int) -> None:
        """Keep only the first ``n_tokens`` of the context and no other state (a benchmark's way
        to give every call the state a new task finds: the document prefix and nothing after it)."""
        self.kept.clear()
        if self._llm is not None and n_tokens < self._llm.n_tokens:
            self._llm._ctx.kv_cache_seq_rm(-1, max(0, n_tokens), -1)
            self._llm.n_tokens = max(0, n_tokens)

    def warm(self, request: Request) -> str:
        """Compute or load the request's prefix now (a server warming up); returns where it came from."""
        tokens, n_prefix = self.prompt_tokens(request)
        return self._ready_prefix(tokens[:n_prefix], request.cache_label)[0]

    # -- completing ------------------------------------------------------------------------------------

    def complete(self, request: Request) -> Completion:
        t0 = time.perf_counter()
        c0 = time.process_time()
        llm = self._model()
        tokens, n_prefix = self.prompt_tokens(request)
        if len(tokens) + request.max_tokens > self.n_ctx:
            raise UsageError(f"the prompt has {len(tokens)} tokens; with {request.max_tokens} to generate it "
                             f"does not fit the model's context of {self.n_ctx}", hint="use a larger --ctx")
        source, io_s = self._resume(tokens, n_prefix, request.cache_label)
        # Reuse the longest common prefix in the context; at least the last prompt token is
        # evaluated again, for its logits.
        reused = min(self._common(tokens), len(tokens) - 1)
        llm._ctx.kv_cache_seq_rm(-1, reused, -1)
        llm.n_tokens = reused
        llm.eval(tokens[reused:])
        if self.kept.max_bytes > 0:
            t1 = time.perf_counter()
            self.kept.add(tokens, self._get_state())
            io_s += time.perf_counter() - t1
        decoder = _Decoder(llm, request)
        # a draft and the token before it go to llama.cpp as one batch
        longest = min(self.draft_tokens, self.n_batch - 1)
        drafts = PromptLookup(tokens, max_draft=longest) if longest > 0 else None
        out: list[int] = []
        ttft = None
        finish = "length"
        closing_at = request.max_tokens - max(_CLOSING_RESERVE, request.max_tokens // 4)
        guard = RepeatGuard() if request.stop_loops else None

        def take(tok: int) -> str | None:
            """Add a chosen token to the answer; the finish reason when the answer ends with it."""
            out.append(tok)
            if drafts is not None:
                drafts.extend([tok])
            if guard is not None and b"\n" in llm.detokenize([tok]):
                # a line was finished: is the answer repeating itself?
                so_far = llm.detokenize(out).decode("utf-8", errors="replace")
                if guard.feed(so_far[len(guard.text):]):
                    return "loop"
            return "length" if len(out) >= request.max_tokens else None

        try:
            tok = decoder.next_token(closing=len(out) >= closing_at)
            ttft = time.perf_counter() - t0
            while True:
                if tok is None:
                    finish = "closed" if decoder.closed else "stop"
                    break
                ended = take(tok)
                if ended is not None:
                    finish = ended
                    break
                # Check the token and a draft of what follows it in one batch; the draft's tokens
                # count only as far as the model would have chosen them itself.
                draft = drafts.draft(request.max_tokens - len(out)) if drafts is not None else []
                base = llm.n_tokens
                self._eval_rows(llm, [tok, *draft])
                taken = 0
                nxt = decoder.next_token(closing=len(out) >= closing_at, row=0)
                while taken < len(draft) and nxt == draft[taken]:
                    ended = take(nxt)
                    taken += 1
                    if ended is not None:
                        break
                    nxt = decoder.next_token(closing=len(out) >= closing_at, row=taken)
                if drafts is not None and draft:
                    drafts.feedback(len(draft), taken)
                if ended is not None:
                    finish = ended
                    break
                # the rows after the last token taken hold a rejected draft: drop them
                llm._ctx.kv_cache_seq_rm(-1, base + 1 + taken, -1)
                llm.n_tokens = base + 1 + taken
                tok = nxt
        finally:
            decoder.close()
        text = llm.detokenize(out).decode("utf-8", errors="replace")
        if guard is not None and finish == "loop":
            text = guard.cut()
        latency = time.perf_counter() - t0
        # A prefix computed by this very call was not cached for it.
        cached = 0 if source == "cold" else reused
        usage = Usage(
            prompt_tokens=len(tokens), cached_tokens=cached, computed_tokens=len(tokens) - cached,
            generated_tokens=len(out), ttft_s=ttft, latency_s=latency, cache=source,
            counted_by=f"model:{self.model_path.name}", state_io_s=io_s, cpu_s=time.process_time() - c0,
            drafted_tokens=drafts.drafted if drafts is not None else 0,
            accepted_tokens=drafts.accepted if drafts is not None else 0,
        )
        return Completion(text, usage, finish)

    @staticmethod
    def _eval_rows(llm: Any, batch: list[int]) -> None:
        """Evaluate ``batch`` after the context, keeping the logits of every row (``Llama.eval``
        keeps the last row's only)."""
        n_past = llm.n_tokens
        llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
        llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
        llm._ctx.decode(llm._batch)
        llm.input_ids[n_past:n_past + len(batch)] = batch
        llm.n_tokens = n_past + len(batch)

    def close(self) -> None:
        for attr in ("_llm", "_vocab"):
            obj = getattr(self, attr)
            if obj is not None:
                close = getattr(obj, "close", None)
                if callable(close):
                    close()
                setattr(self, attr, None)


class _Decoder:
    """Picks each next token, honouring the grammar at a fraction of the cost of masking every time.

    llama.cpp's grammar sampler checks each candidate against the grammar; over a 50k-150k token
    vocabulary that dominates decoding. At temperature 0 the constrained choice is the best token
    the grammar accepts, so the unconstrained best is tried first and the whole vocabulary is
    masked only when the grammar rejects it (what llama.cpp's own ``common_sampler`` does). The
    result is the same token as masking first. Returns None at the end of the answer.

    Near the token limit (``closing``), a constrained answer is ended rather than cut: wherever
    the grammar accepts a newline (the end of a statement) or the closing fence, that token is
    taken. Inside a string or brackets neither is accepted, and a small model can go on there
    until the limit (an argument list that never ends), so the string's quote and then a
    closing bracket are taken first, and in an ``if`` or ``for`` header the colon. The script is
    then shorter than the model wanted, but it parses; the completion says ``closed``.
    """

    def __init__(self, llm: Any, request: Request) -> None:
        import numpy as np

        llama_cpp = require_llama_cpp()
        self.np = np
        self.low = llama_cpp
        self.llm = llm
        self.vocab = llm._model.vocab
        self.n_vocab = llm.n_vocab()
        self.temperature = request.temperature
        self.rng = np.random.default_rng(request.seed)
        self.grammar = None
        if request.grammar:
            self.grammar = llama_cpp.llama_sampler_init_grammar(self.vocab, request.grammar.encode("utf-8"), b"root")
            if not self.grammar:
                raise UsageError("llama.cpp refused the answer grammar (a bug in the grammar builder)")
        self._all = (llama_cpp.llama_token_data * self.n_vocab)()
        self._one = (llama_cpp.llama_token_data * 1)()
        self.closed = False
        self._enders = [t for t in (self._single("```"), self._single("\n")) if t is not None]
        self._closers = [t for t in (self._single(c) for c in ")]}") if t is not None]
        # an `if`/`for` header's condition ends only at its colon (neither a newline nor a bracket
        # is accepted there; "x == '' and x == '' and ..." went on to the limit); the body's one
        # statement is then the model's, and the closing goes on after it
        self._colon = [t for t in (self._single(":"),) if t is not None]
        self._quotes = {q: t for q in "\"'" if (t := self._single(q)) is not None}
        self._line = ""  # the text of the current line so far: is a string open?

    def _single(self, text: str) -> int | None:
        toks = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        return int(toks[0]) if len(toks) == 1 else None

    def _logits(self, row: int) -> Any:
        ptr = self.low.llama_get_logits_ith(self.llm._ctx.ctx, row)
        return self.np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def _accepts(self, token: int, logit: float) -> bool:
        one = self._one
        one[0].id, one[0].logit, one[0].p = token, logit, 0.0
        arr = self.low.llama_token_data_array(one, 1, -1, False)
        self.low.llama_sampler_apply(self.grammar, ctypes.byref(arr))
        return bool(one[0].logit != float("-inf"))

    def _mask(self, logits: Any) -> Any:
        data = self._all
        view = self.np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_float)),
                                          shape=(self.n_vocab * 3,))
        ids = view.view(self.np.int32)
        ids[0::3] = self.np.arange(self.n_vocab, dtype=self.np.int32)
        view[1::3] = logits
        arr = self.low.llama_token_data_array(data, self.n_vocab, -1, False)
        self.low.llama_sampler_apply(self.grammar, ctypes.byref(arr))
        return view[1::3].copy()

    def next_token(self, *, closing: bool = False, row: int = -1) -> int | None:
        """The next token from the logits of the last batch's ``row`` (its last by default)."""
        np = self.np
        logits = self._logits(row)
        if closing and self.grammar is not None:
            for tok in self._closing_order():
                if self._accepts(tok, float(logits[tok])):
                    self.closed = True
                    return self._take(tok)
        if self.temperature <= 0:
            tok = int(np.argmax(logits))
            if self.grammar is not None and not self._accepts(tok, float(logits[tok])):
                logits = self._mask(logits)
                tok = int(np.argmax(logits))
        else:
            if self.grammar is not None:
                logits = self._mask(logits)
            scaled = (logits - logits.max()) / self.temperature
            probs = np.exp(scaled)
            probs /= probs.sum()
            tok = int(self.rng.choice(self.n_vocab, p=probs))
        if self.low.llama_vocab_is_eog(self.vocab, tok):
            return None
        return self._take(tok)

    def _take(self, tok: int) -> int:
        if self.grammar is not None:
            self.low.llama_sampler_accept(self.grammar, tok)
        piece = self.llm.detokenize([tok]).decode("utf-8", errors="replace")
        self._line = piece.rsplit("\n", 1)[-1] if "\n" in piece else self._line + piece
        return tok

    def _open_quote(self) -> str | None:
        """The quote of a string left open on the current line, if any (escapes honoured)."""
        quote = None
        escaped = False
        for c in self._line:
            if escaped:
                escaped = False
            elif c == "\\" and quote:
                escaped = True
            elif quote is None and c in "\"'":
                quote = c
            elif c == quote:
                quote = None
            elif quote is None and c == "#":
                break
        return quote

    def _closing_order(self) -> list[int]:
        quote = self._open_quote()
        if quote is not None:  # inside a string every bracket is text: only its quote ends it
            return [self._quotes[quote]] if quote in self._quotes else []
        return self._enders + self._closers + self._colon

    def close(self) -> None:
        if self.grammar is not None:
            self.low.llama_sampler_free(self.grammar)
            self.grammar = None
