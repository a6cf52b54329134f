"""Script generation with a local model: prefix-cache speedup, tokens per task, success on the simulator.

Three measurements, printed as one JSON object:

* **latency** on one sample-app document (default music): for each task, the cold latency (no
  prefix state anywhere: the whole prompt is computed) and the cached latency (the document
  prefix's state in memory, as in steady use), side by side in the same process with the model
  loaded; then the first task in a **new process** that finds the prefix state on disk. Target:
  cached at least 9x faster than cold, the first task after the restart included.
* **tokens** per task (prompt, cached, computed, generated, with the model's tokenizer) over the
  success run's first rounds, next to the paper's Table 4 (2,828 input of which 2,760 cached, 123
  output).
* **success** on the sample suite (``samples/suite``, run by ``tapir.eval`` with the code
  generator as its script source: each task checked on the simulated app's final state), without
  repair (the first script) and with repair (up to ``--rounds`` scripts), from one run.

    python bench/codegen.py                                   # qwen2.5-coder-1.5b, all of it
    python bench/codegen.py --model smollm2-135m --latency-tasks 2 --tasks 4 --out codegen.json

The model must be installed (``tapir model install qwen2.5-coder-1.5b``). On 2 CPU cores the whole
run takes 20-40 minutes. Wall-clock latency grows with anything else running on the CPU; each call's
CPU seconds (all threads) are reported beside it and give the speedup that does not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PAPER_TABLE4 = {"input_tokens": 2828.0, "cached_tokens": 2760.1, "remaining_tokens": 67.9, "output_tokens": 122.9}


SUITE = Path(__file__).resolve().parent.parent / "samples" / "suite"


def _suite() -> Any:
    from tapir.eval import load_suite

    return load_suite(SUITE)


def _generator(app: str, backend: Any, max_tokens: int) -> Any:
    from tapir.codegen import language as L
    from tapir.codegen.examples import ExampleStore
    from tapir.codegen.generate import GenConfig, Generator

    path = _suite().apps[app].document_path
    doc = L.load_document(path)
    return Generator(doc, backend, examples=ExampleStore.for_document(path, L.symbols(doc)),
                     config=GenConfig(max_tokens=max_tokens))


def _usage(u: Any) -> dict[str, Any]:
    return u.as_dict()  # type: ignore[no-any-return]


def latency(args: argparse.Namespace, model: Path, cache: Path) -> dict[str, Any]:
    from tapir.codegen.llama_backend import LlamaCppBackend

    backend = LlamaCppBackend(model, cache_dir=cache, n_threads=args.threads)
    gen = _generator(args.app, backend, args.max_tokens)
    tasks = [t.text for t in _suite().select(apps=[args.app]).tasks][: args.latency_tasks]
    t0 = time.perf_counter()
    backend.warm(gen.request(gen.prompt(tasks[0])))  # computes the prefix once and saves it to disk
    warm_s = time.perf_counter() - t0
    rows = []
    for task in tasks:
        cached = gen.generate(task)          # the context holds the prefix (and the previous task)
        store, backend.cache = backend.cache, None
        backend.forget()
        cold = gen.generate(task)            # nothing cached: the whole prompt is computed
        backend.cache = store
        rows.append({
            "task": task,
            "cold_s": round(cold.usage.latency_s, 3), "cached_s": round(cached.usage.latency_s, 3),
            "speedup": round(cold.usage.latency_s / cached.usage.latency_s, 2),
            "cold_cpu_s": round(cold.usage.cpu_s, 2), "cached_cpu_s": round(cached.usage.cpu_s, 2),
            "speedup_cpu": round(cold.usage.cpu_s / cached.usage.cpu_s, 2),
            "cold_ttft_s": round(cold.usage.ttft_s or 0, 3), "cached_ttft_s": round(cached.usage.ttft_s or 0, 3),
            "same_script": cold.script == cached.script, "script": cold.script,
            "cold": _usage(cold.usage), "cached": _usage(cached.usage),
        })
        print(f"latency: {task!r}: cold {cold.usage.latency_s:.1f} s ({cold.usage.cpu_s:.1f} s CPU), "
              f"cached {cached.usage.latency_s:.1f} s ({cached.usage.cpu_s:.1f} s CPU)", file=sys.stderr)
    load_s = backend.load_s
    backend.close()
    # the first task of a new process: the prefix state comes from the disk cache
    code = "\n".join([
        "import json, sys, time",
        "from pathlib import Path",
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})",
        "from codegen import _generator",
        "from tapir.codegen.llama_backend import LlamaCppBackend",
        f"b = LlamaCppBackend(Path({str(model)!r}), cache_dir=Path({str(cache)!r}), n_threads={args.threads})",
        f"g = _generator({args.app!r}, b, {args.max_tokens})",
        "t = time.perf_counter(); b._model(); load = time.perf_counter() - t",
        f"out = g.generate({tasks[0]!r})",
        "print(json.dumps({'load_s': load, 'usage': out.usage.as_dict(), 'script': out.script}))",
    ])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        raise SystemExit(f"the restart run failed:\n{proc.stderr[-3000:]}")
    after = json.loads(proc.stdout.strip().splitlines()[-1])
    restart_s = after["usage"]["latency_s"]
    speedups = [r["speedup"] for r in rows]
    cpu_speedups = [r["speedup_cpu"] for r in rows]
    return {
        "document": args.app, "tasks": rows, "model_load_s": round(load_s, 2),
        "prefix_compute_and_save_s": round(warm_s, 2),
        "restart": {"task": tasks[0], "latency_s": restart_s, "model_load_s": round(after["load_s"], 2),
                    "cache": after["usage"]["cache"], "state_load_s": after["usage"]["state_io_s"],
                    "speedup_vs_cold": round(rows[0]["cold_s"] / restart_s, 2),
                    "cpu_s": round(after["usage"]["cpu_s"], 2),
                    "speedup_cpu_vs_cold": round(rows[0]["cold_cpu_s"] / after["usage"]["cpu_s"], 2),
                    "same_script_as_cold": after["script"] == rows[0]["script"],
                    "usage": after["usage"]},
        "speedup_min": min(speedups), "speedup_median": round(statistics.median(speedups), 2),
        "speedup_cpu_min": min(cpu_speedups), "speedup_cpu_median": round(statistics.median(cpu_speedups), 2),
        "target": ">= 9x, the first task after a restart included",
    }


def success(args: argparse.Namespace, model: Path, cache: Path) -> dict[str, Any]:
    """The sample suite through ``tapir.eval`` (as ``tapir eval --model M --repairs R`` runs it),
    with the first script's verdict and the verdict after repair from the same run."""
    from tapir.codegen.generate import GenConfig
    from tapir.codegen.llama_backend import LlamaCppBackend
    from tapir.codegen.source import ModelSource
    from tapir.eval import EvalConfig, report_json, run_suite
    from tapir.eval.sources import AdaptedSource

    suite = _suite()
    if args.per_app:
        keep: list[str] = []
        for app in suite.apps:
            keep += [t.id for t in suite.tasks if t.app == app][: args.per_app]
        suite = suite.select(ids=keep)
    if args.tasks:
        suite = suite.select(ids=[t.id for t in suite.tasks[: args.tasks]])
    backend = LlamaCppBackend(model, cache_dir=cache, n_threads=args.threads)
    source = AdaptedSource(ModelSource(backend, spec=args.model, config=GenConfig(max_tokens=args.max_tokens)))

    def progress(r: Any) -> None:
        if args.out:  # each task as it finishes, so a long run that is stopped still tells something
            with Path(args.out).with_suffix(".partial.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(r.as_dict()) + "\n")
        print(f"success: {r.id}: first script {'ok' if r.first_attempt_ok else 'no'}, with repair "
              f"{'ok' if r.success else 'no'} ({r.attempts} scripts, {r.wall_s:.1f} s)", file=sys.stderr)

    try:
        run = run_suite(suite, source, EvalConfig(repairs=args.rounds - 1), on_result=progress)
    finally:
        backend.close()
    data = report_json(run)
    rows = data["tasks"]
    first = [r["tokens"] for r in rows if r.get("tokens") and r["attempts"] == 1]

    def mean(key: str) -> float | None:
        return round(statistics.fmean(u[key] for u in first), 1) if first else None

    return {
        "n": data["total"], "suite_digest": data["suite"]["digest"], "prefix_cache_dir": str(cache),
        "success_without_repair": data["success_rate_without_repair"], "success_with_repair": data["success_rate"],
        "by_difficulty": {lv: {k: s[k] for k in ("total", "success_rate_without_repair", "success_rate")}
                          for lv, s in data["by_difficulty"].items()},
        "mean_scripts": round(statistics.fmean(r["attempts"] for r in rows), 2) if rows else None,
        "model_latency_s_mean": data["model_latency_s"],
        "tokens_per_task_one_script": {"cached": mean("cached"), "computed": mean("computed"),
                                       "generated": mean("generated"), "paper_table4": PAPER_TABLE4},
        "tasks": [{k: r[k] for k in ("id", "app", "difficulty", "verdict", "first_attempt_ok", "repairs_used",
                                     "attempt_errors", "tokens", "model_latency_s", "wall_s", "script")}
                  for r in rows],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b", help="an installed model name or a GGUF path")
    ap.add_argument("--threads", type=int, default=min(os.cpu_count() or 2, 8))
    ap.add_argument("--app", default="music", help="the sample app whose document the latency runs use")
    ap.add_argument("--latency-tasks", type=int, default=4, help="tasks timed cold and cached (4)")
    ap.add_argument("--tasks", type=int, default=0, help="suite tasks for the success rate (0: all)")
    ap.add_argument("--per-app", type=int, default=0, help="only the first N suite tasks of each app (0: all)")
    ap.add_argument("--rounds", type=int, default=3, help="scripts per task at most, repairs included (3)")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-success", action="store_true")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()

    from tapir.codegen.models import resolve_model

    model = resolve_model(args.model)
    from tapir.codegen.llama_backend import require_llama_cpp

    llama_cpp = require_llama_cpp()  # imports llama_cpp after setting OMP_WAIT_POLICY

    out: dict[str, Any] = {"model": model.name, "threads": args.threads, "llama_cpp_python": llama_cpp.__version__,
                           "cpu_count": os.cpu_count(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    with tempfile.TemporaryDirectory(prefix="tapir-bench-") as tmp:
        if not args.skip_latency:
            out["latency"] = latency(args, model, Path(tmp) / "latency")
        if not args.skip_success:
            # kept after the run, for a restart measurement against the same prefix states
            cache = Path(tempfile.gettempdir()) / "tapir-bench-prefix"
            if cache.exists():
                import shutil

                shutil.rmtree(cache)
            out["success"] = success(args, model, cache)
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
