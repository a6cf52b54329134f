"""Token counts with the script model's own tokenizer, for anything that reports prompt sizes.

``tapir compile`` prints the document prefix's size in tokens; with a model installed the count
should be the model's, not an estimate. Only the vocabulary is loaded (no weights: ~0.1 s)::

    counter = model_token_counter()          # None when no model or no llama-cpp-python
    if counter is not None:
        count, method = counter.count(text), counter.method     # 2760, 'model:qwen2.5-coder-1.5b-...gguf'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TokenCounter", "model_token_counter"]


@dataclass
class TokenCounter:
    path: Path
    _vocab: Any = None

    @property
    def method(self) -> str:
        return f"model:{self.path.name}"

    def count(self, text: str) -> int:
        if self._vocab is None:
            from tapir.codegen.llama_backend import quiet_llama_logs, require_llama_cpp

            llama_cpp = require_llama_cpp()
            quiet_llama_logs()
            self._vocab = llama_cpp.Llama(str(self.path), vocab_only=True, verbose=False)
        return len(self._vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def model_token_counter(model: str | None = None) -> TokenCounter | None:
    """A counter for ``model`` (a name or a GGUF path), else for the default installed model;
    None when there is none or llama-cpp-python is missing (callers fall back to an estimate)."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from tapir.codegen.models import default_model, resolve_model
    from tapir.core.errors import UsageError

    try:
        if model is not None:
            return TokenCounter(resolve_model(model))
        found = default_model()
    except UsageError:
        return None
    return TokenCounter(found[1]) if found else None
