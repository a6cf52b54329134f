"""What the embedding stage adds to a run that reaches it: a failing ``match()``, end to end.

    python bench/embedding_cost.py [--rounds 3] [--backends off,numpy,sentence-transformers]

A script whose ``match()`` finds nothing makes the grounding cascade go all the way to its last
stage (sentence embeddings), so the model is loaded. Each round runs ``tapir run`` on that
script on the simulated Music app once per embedding backend (``TAPIR_EMBEDDER``: ``off``, the
NumPy MiniLM, sentence-transformers with torch), each in a fresh process, interleaved so that the
machine's load affects all alike. Prints JSON: per backend the median wall time and its extra
over ``off``; the target is ``numpy`` at most 2 s more than ``off``. A backend whose packages are
missing is reported as such.
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

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 2.0


def run_once(script: Path, backend: str) -> tuple[float, int, str]:
    env = {**os.environ, "TAPIR_EMBEDDER": backend}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(script), "--device", "sim:music"],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    return time.perf_counter() - started, done.returncode, done.stderr


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per backend (interleaved)")
    parser.add_argument("--backends", default="off,numpy,sentence-transformers")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "failing_match.tap"
        script.write_text(f"# doc: {REPO / 'samples' / 'music' / 'music.yaml'}\n"
                          '$songs_screen__song_list.match("Zebra crossing at midnight").tap()\n', encoding="utf-8")
        times: dict[str, list[float]] = {b: [] for b in backends}
        notes: dict[str, str] = {}
        for _ in range(args.rounds):
            for backend in backends:
                seconds, code, stderr = run_once(script, backend)
                if code != 1 or "no item of $songs_screen__song_list matches" not in stderr:
                    notes[backend] = f"unexpected exit {code}: {stderr.strip().splitlines()[-1:] or ''}"
                if "progress" in stderr.lower() or "%|" in stderr:
                    notes[backend] = "printed a progress bar"
                times[backend].append(seconds)
    medians = {b: round(statistics.median(t), 3) for b, t in times.items()}
    base = medians.get("off")
    out: dict[str, object] = {
        "script": "a match() that finds nothing among the 44 songs (reaches the embedding stage)",
        "rounds": args.rounds,
        "median_s": medians,
        "runs_s": {b: [round(x, 3) for x in t] for b, t in times.items()},
    }
    if base is not None:
        out["extra_over_off_s"] = {b: round(m - base, 3) for b, m in medians.items() if b != "off"}
        if "numpy" in medians:
            out["target"] = {"numpy_extra_at_most_s": TARGET_S, "met": medians["numpy"] - base <= TARGET_S}
    if notes:
        out["notes"] = notes
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
