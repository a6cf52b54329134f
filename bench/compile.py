"""Benchmark `tapir compile` on the imported AutoDroid-V2 applauncher document; prints JSON.

    python bench/compile.py [--runs 20] [--document path/to/doc.yaml]

Without --document the upstream applauncher document (../shared/upstream) is imported first;
if that is absent the repository's example document is used. Reports in-process timings per
stage (load+validate, stubs, symbols, prompts, reference) and the wall time of the whole
`tapir compile` command in a fresh interpreter (what a user waits for).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = REPO.parent / "shared" / "upstream" / "droidtask" / "apps" / "applauncher" / "doc.json"
EXAMPLE = REPO / "tests" / "golden" / "example_app.yaml"


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(values), 4),
        "min_s": round(min(values), 4),
        "max_s": round(max(values), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--document")
    args = parser.parse_args()

    from tapir.docgen.compile import compile_document, write_outputs
    from tapir.docgen.upstream import import_file

    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp) / "out"
        if args.document:
            doc_path, source = Path(args.document), args.document
        elif UPSTREAM.is_file():
            text, _ = import_file(UPSTREAM, package="com.simplemobiletools.applauncher")
            doc_path, source = Path(tmp) / "applauncher.yaml", "upstream applauncher doc.json (imported)"
            doc_path.write_text(text, encoding="utf-8")
        else:
            doc_path, source = EXAMPLE, "tests/golden/example_app.yaml (upstream data absent)"

        stages: dict[str, list[float]] = {}
        compiled = None
        for _ in range(args.runs):
            compiled = compile_document(doc_path, out_dir=out_dir)
            for stage, seconds in compiled.seconds.items():
                stages.setdefault(stage, []).append(seconds)
        assert compiled is not None
        write_outputs(compiled, out_dir)

        cli_runs = []
        for _ in range(max(3, args.runs // 4)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tapir.cli", "compile", str(doc_path), "-o", str(out_dir)],
                           check=True, capture_output=True)
            cli_runs.append(time.perf_counter() - t)

        result = {
            "benchmark": "tapir compile",
            "document": source,
            "document_bytes": doc_path.stat().st_size,
            "counts": compiled.document.counts(),
            "runs": args.runs,
            "in_process": {stage: _stats(v) for stage, v in stages.items()},
            "cli_wall_clock": _stats(cli_runs) | {"runs": len(cli_runs)},
            "outputs_bytes": {name: len(text.encode()) for name, text in compiled.files.items()},
            "prompt_tokens": {k: {"count": v.count, "method": v.method} for k, v in compiled.tokens.items()},
            "python": sys.version.split()[0],
        }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
