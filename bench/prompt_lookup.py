"""Drafts copied from the prompt (``tapir.codegen.lookup``) against one token at a time, side by side.

Each task's first-round answer is asked twice of one loaded model, in the same process, with
drafts off and on (the order alternating from task to task, so neither always runs second), from
the same warm prefix: each app's first prompt is asked once beforehand and not counted, and
before each call the context is cut back to the document prefix, as a new task finds it.

    python bench/prompt_lookup.py samples/suite --examples-file synth.jsonl --per-app 4
    python bench/prompt_lookup.py ../shared/upstream/droidtask --examples-file pool/ --per-app 2

Prints one JSON object: per task the seconds and generated tokens both ways, the draft tokens
checked and taken; overall, over the tasks answered the same both ways, the median of the
per-task ratios (off / on) of the seconds and of the decoding seconds, and how many answers
differed. They can: the model's arithmetic on a batch of rows is not bit for bit that on one row
(llama.cpp picks other kernels), so a near-tie between two tokens may fall the other way.

With ``--row-costs`` it also times what a draft costs: one batch of 1, 2, 4, 8 and 16 rows after
the first task's prompt (the fastest of 4 tries each), in milliseconds.

A local model only (a registry name or a .gguf): a server decodes its own way.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from prompt_budget import emit, suite_parser  # noqa: E402

from tapir.codegen.backend import Request  # noqa: E402
from tapir.codegen.lookup import DRAFT_TOKENS  # noqa: E402
from tapir.codegen.source import script_source  # noqa: E402
from tapir.core.errors import UsageError  # noqa: E402
from tapir.eval.sources import GenerationRequest  # noqa: E402
from tapir.eval.suite import load_suite  # noqa: E402


def row_costs(backend: Any, n_past: int) -> dict[str, float]:
    """Milliseconds to evaluate one batch of k rows after the first ``n_past`` tokens of the context."""
    llm = backend._llm
    filler = list(llm.input_ids[max(0, n_past - 16):n_past])
    costs: dict[str, float] = {}
    for k in (1, 2, 4, 8, 16):
        tries = []
        for _ in range(4):
            backend.rewind(n_past)
            t = time.perf_counter()
            backend._eval_rows(llm, [int(x) for x in (filler * 2)[:k]])
            tries.append(time.perf_counter() - t)
        costs[str(k)] = round(min(tries) * 1000, 1)
    backend.rewind(n_past)
    return costs


def measure(suite_path: str, model: str, *, example_files: list[str], per_app: int, apps: list[str],
            draft: int, threads: int | None, costs: bool = False) -> dict[str, Any]:
    if model.startswith(("http://", "https://")):
        raise UsageError("drafts are a local model's: give a registry name or a .gguf file", setting="model")
    if per_app < 1 or draft < 1:
        raise UsageError("--per-app and --draft must be 1 or more")
    suite = load_suite(suite_path)
    if apps:
        suite = suite.select(apps=apps)
    source = script_source(model, example_files=example_files, threads=threads)
    backend: Any = source.backend
    measured_costs: dict[str, float] | None = None
    source.hold_out([*(t.text for t in suite.tasks), *suite.unselected])
    chosen: dict[str, list[Any]] = {}
    for task in suite.tasks:
        group = chosen.setdefault(task.app, [])
        if len(group) < per_app + 1:  # the first one warms the app's prefix
            group.append(task)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for app, tasks in chosen.items():
        spec = suite.apps[app]
        for i, task in enumerate(tasks):
            request = GenerationRequest(task, spec.document, document_path=spec.document_path or None)
            prompt = source.prompt(request)
            tokens, n_prefix = backend.prompt_tokens(Request(prompt.system, prompt.prefix, prompt.rest))
            if i == 0:
                backend.draft_tokens = 0
                source.generate(request)
                if costs and measured_costs is None:
                    measured_costs = row_costs(backend, len(tokens))
                continue
            answers: dict[int, Any] = {}
            for k in ((0, draft) if i % 2 else (draft, 0)):
                backend.rewind(n_prefix)  # as a new task finds it: the document prefix, nothing after it
                backend.draft_tokens = k
                answers[k] = source.generate(request)
            off, on = answers[0], answers[draft]
            usage_on = on.extra
            rows.append({
                "task": task.id, "same": off.script == on.script,
                "off_s": off.latency_s, "on_s": on.latency_s,
                # decoding alone: the seconds after the first token (the prompt's part is the same)
                "off_decode_s": round(off.latency_s - off.extra["ttft_s"], 3),
                "on_decode_s": round(on.latency_s - on.extra["ttft_s"], 3),
                "generated": off.tokens.generated if off.tokens else None,
                "drafted": usage_on.get("drafted"), "accepted": usage_on.get("accepted"),
            })
            print(json.dumps(rows[-1]), file=sys.stderr)
    same = [r for r in rows if r["same"]]  # a different answer is a different amount of work
    ratios = [r["off_s"] / r["on_s"] for r in same if r["on_s"]]
    decode = [r["off_decode_s"] / r["on_decode_s"] for r in same if r["on_decode_s"] > 0]
    drafted = sum(r["drafted"] or 0 for r in rows)
    return {
        "suite": suite_path, "model": model, "draft_tokens": draft, "tasks": len(rows),
        "different_answers": sum(not r["same"] for r in rows),
        "median_speedup": round(statistics.median(ratios), 3) if ratios else None,
        "median_decode_speedup": round(statistics.median(decode), 3) if decode else None,
        "median_off_s": statistics.median(r["off_s"] for r in same) if same else None,
        "median_on_s": statistics.median(r["on_s"] for r in same) if same else None,
        "drafted": drafted, "accepted_share": round(sum(r["accepted"] or 0 for r in rows) / max(1, drafted), 3),
        "row_costs_ms": measured_costs, "rows": rows, "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = suite_parser(__doc__)
    p.add_argument("--per-app", type=int, default=3, help="tasks measured per app (after one warm-up task)")
    p.add_argument("--draft", type=int, default=DRAFT_TOKENS,
                   help=f"the longest draft (the backend's default: {DRAFT_TOKENS})")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--row-costs", action="store_true", help="also time a batch of 1, 2, 4, 8 and 16 rows")
    args = p.parse_args(argv)
    return emit("prompt_lookup", lambda: measure(
        args.suite, args.model, example_files=args.examples_file, per_app=args.per_app, apps=args.app,
        draft=args.draft, threads=args.threads, costs=args.row_costs), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
