"""Prompt size and cached share per task, without running the model: the first-round prompt of
every task of a suite, as ``tapir eval --model`` builds it, counted with the model's tokenizer.

The issue's targets are per task, warm: median prompt tokens <= 4k and a cached share >= 95%.
The cached share here is what the llama.cpp backend reuses when the suite's tasks run one after
another on one model: the document prefix (computed once, then kept in memory or on disk), and
beyond it the longest common token prefix with the previous task's prompt (the backend reuses
the context's longest common prefix), and beyond that the longest prefix shared with one of the
states of the last prompts kept in memory (``tapir.codegen.kept_states``: ``--kept-bytes``, as the
backend's default; 0 for none; each prompt's state counted at ``--bytes-per-token``, Qwen2.5-1.5B's
KV cache). Repair rounds are not counted (their prompt carries the
failed script, which no earlier prompt had); ``tapir eval`` reports those with them.

    python bench/prompt_budget.py ../shared/upstream/droidtask --examples-file pool/
    python bench/prompt_budget.py samples/suite --prompt-style focused

Prints one JSON object: overall and per app, the median prompt tokens, the cached share (warm:
each app's first task, which computes the prefix, left out) and the prompt style each document
got. Only the tokenizer is loaded (seconds), not the weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tapir.codegen.backend import Request  # noqa: E402
from tapir.codegen.generate import GenConfig  # noqa: E402
from tapir.codegen.kept_states import DEFAULT_KEPT_BYTES, KeptStates, common_prefix  # noqa: E402
from tapir.codegen.source import script_source  # noqa: E402
from tapir.core.errors import TapirError  # noqa: E402
from tapir.eval.sources import GenerationRequest  # noqa: E402
from tapir.eval.suite import load_suite  # noqa: E402

#: Bytes of llama.cpp state per token of Qwen2.5-Coder-1.5B (28 layers, 2 KV heads of 128, f16 K and V).
QWEN_BYTES_PER_TOKEN = 28 * 2 * 128 * 2 * 2


def measure(suite_path: str, model: str, *, example_files: list[str], style: str | None, ctx: int,
            apps: list[str], examples: bool, kept_bytes: int = DEFAULT_KEPT_BYTES,
            bytes_per_token: int = QWEN_BYTES_PER_TOKEN, focus_tokens: int | None = None) -> dict[str, Any]:
    suite = load_suite(suite_path)
    if apps:
        suite = suite.select(apps=apps)
    config = GenConfig()
    if focus_tokens is not None:
        config = dataclasses.replace(config, focus_tokens=focus_tokens)
    source = script_source(model, ctx=ctx, style=style, config=config, example_files=example_files,
                           examples=examples)
    source.hold_out([*(t.text for t in suite.tasks), *suite.unselected])
    rows: list[dict[str, Any]] = []
    context: list[int] = []
    kept = KeptStates(kept_bytes // bytes_per_token)  # counted in tokens: one byte a token here
    seen: set[str] = set()
    t0 = time.perf_counter()
    for task in suite.tasks:
        spec = suite.apps[task.app]
        request = GenerationRequest(task, spec.document, document_path=spec.document_path or None)
        prompt = source.prompt(request)
        tokens, n_prefix = source.backend.prompt_tokens(  # type: ignore[attr-defined]
            Request(prompt.system, prompt.prefix, prompt.rest, cache_label=prompt.label))
        form = prompt.label.rsplit("-", 1)[-1]  # <app>-p<version>-<style>
        cold = prompt.prefix not in seen  # this prefix computed now: nothing of the prompt was cached
        seen.add(prompt.prefix)
        live = common_prefix(context, tokens)
        hit = kept.longest(tokens)
        # the backend's rule (LlamaCppBackend._resume): a kept state when it holds the prefix and
        # enough more than the context
        if hit is not None and hit[0] >= max(n_prefix, live + 16):
            live = hit[0]
        cached = 0 if cold else max(n_prefix, live)
        context = tokens
        if kept_bytes > 0:
            kept.add(tokens, bytes(len(tokens)))
        rows.append({"task": task.id, "app": task.app, "style": form, "prompt": len(tokens),
                     "prefix": n_prefix, "cached": cached, "cold": cold})

    def summary(group: list[dict[str, Any]]) -> dict[str, Any]:
        warm = [r for r in group if not r["cold"]]
        return {
            "tasks": len(group),
            "median_prompt_tokens": statistics.median(r["prompt"] for r in group) if group else None,
            "median_per_task_tokens": statistics.median(r["prompt"] - r["prefix"] for r in group) if group else None,
            "cached_share_warm": round(sum(r["cached"] for r in warm) / max(1, sum(r["prompt"] for r in warm)), 4),
            "cached_share": round(sum(r["cached"] for r in group) / max(1, sum(r["prompt"] for r in group)), 4),
            "styles": sorted({r["style"] for r in group}),
        }

    by_app = {app: summary([r for r in rows if r["app"] == app]) for app in dict.fromkeys(r["app"] for r in rows)}
    return {"suite": suite_path, "model": model, "ctx": ctx, "style": style or "auto",
            "example_files": example_files, "examples": examples, "kept_bytes": kept_bytes,
            "focus_tokens": source.config.focus_tokens,
            "overall": summary(rows), "by_app": by_app,
            "seconds": round(time.perf_counter() - t0, 1)}


def emit(name: str, measured: Callable[[], dict[str, Any]], out: str | None) -> int:
    """Print what ``measured`` returns as JSON (and write it to ``out``); a suite, model or file
    that is not there is said in one line, exit status 2, not a traceback. The prompt benches'
    (this one's, ``prompt_lookup.py``'s) common end."""
    try:
        result = measured()
    except TapirError as exc:
        print(f"{name}: {exc.render()}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    return 0


def suite_parser(doc: str | None) -> argparse.ArgumentParser:
    """The prompt benches' common arguments: a suite, --model, --examples-file, --app, --out."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suite", help="samples/suite, or a DroidTask folder")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--examples-file", action="append", default=[])
    p.add_argument("--app", action="append", default=[])
    p.add_argument("--out", help="also write the JSON here")
    return p


def main(argv: list[str] | None = None) -> int:
    p = suite_parser(__doc__)
    p.add_argument("--no-examples", action="store_true")
    p.add_argument("--prompt-style", default=None)
    p.add_argument("--ctx", type=int, default=6144)
    p.add_argument("--kept-bytes", type=int, default=DEFAULT_KEPT_BYTES,
                   help="memory for the states of the last prompts (the backend's default); 0: none")
    p.add_argument("--bytes-per-token", type=int, default=QWEN_BYTES_PER_TOKEN)
    p.add_argument("--focus-tokens", type=int, default=None,
                   help="a focused prompt's per-task screens, tokens at most (default: GenConfig's)")
    args = p.parse_args(argv)
    if args.bytes_per_token <= 0 or args.kept_bytes < 0:
        p.error("--bytes-per-token must be positive and --kept-bytes at least 0")
    return emit("prompt_budget", lambda: measure(
        args.suite, args.model, example_files=args.examples_file, style=args.prompt_style, ctx=args.ctx,
        apps=args.app, examples=not args.no_examples, kept_bytes=args.kept_bytes,
        bytes_per_token=args.bytes_per_token, focus_tokens=args.focus_tokens), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
