"""Document building speed and document size in prompt tokens.

Takes the largest DroidBot recording in ``../shared/upstream`` (by hierarchies: clock, 175),
converts it into a trace once, then times ``build_document`` without a model (reading and parsing
every hierarchy included; median of ``--runs``), and compares the document's size as prompt text
(``tapir.docgen.prompt``: the full rendering, the paper's Listing 2, and the compressed one, names
only) with the upstream AutoDroid-V2 document of the same app, imported and rendered the same way,
counted with the same tokenizer. The upstream JSON file itself is counted too, since that is what
upstream puts in its prompts.

    python bench/docgen.py [--runs 5] [--upstream DIR]
    python bench/docgen.py --trace TRACE_DIR --reference DOC.yaml   # any trace and document

Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def largest_recording(upstream: Path) -> Path | None:
    apps = upstream / "droidtask" / "apps"
    found = [p for p in apps.iterdir() if (p / "states").is_dir() and (p / "events").is_dir()] if apps.is_dir() else []
    return max(found, key=lambda p: len(list((p / "states").glob("state_*.json"))), default=None)


def sizes(doc: Any) -> dict[str, Any]:
    from tapir.docgen.prompt import count_tokens, render_compressed, render_full

    full = render_full(doc).template()
    compressed = render_compressed(doc).template()
    counts = doc.counts()
    return {"screens": counts["screens"], "elements": counts["elements"], "paths": counts["paths"],
            "prompt_full_tokens": count_tokens(full).count, "prompt_compressed_tokens": count_tokens(compressed).count,
            "prompt_full_chars": len(full)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--upstream",
                        default=os.environ.get("TAPIR_UPSTREAM") or str(REPO.parent / "shared" / "upstream"))
    parser.add_argument("--trace", help="a trace directory to build from instead of the largest recording")
    parser.add_argument("--reference", help="the document to compare sizes with (with --trace)")
    args = parser.parse_args(argv)
    from tapir.docgen.build import build_document, import_droidbot, read_trace
    from tapir.docgen.loader import load_document, loads_document
    from tapir.docgen.prompt import count_tokens

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.trace:
            trace_dir = Path(args.trace)
            reference = load_document(args.reference) if args.reference else None
            upstream_json = None
            out["trace"] = str(trace_dir)
        else:
            recording = largest_recording(Path(args.upstream))
            if recording is None:
                print(json.dumps({"error": f"no DroidBot recording in {args.upstream} (pass --trace)"}))
                return 2
            trace_dir = Path(tmp) / "trace"
            t0 = time.perf_counter()
            summary = import_droidbot(recording, trace_dir)
            out["recording"] = recording.name
            out["import_s"] = round(time.perf_counter() - t0, 3)
            out["hierarchies"] = summary.states
            out["steps"] = summary.steps
            from tapir.eval.droidtask import import_document

            reference = import_document(recording, summary.package)
            upstream_json = recording / "doc.json"
        times = []
        result = None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = build_document([read_trace(trace_dir)])
            times.append(time.perf_counter() - t0)
        assert result is not None
        generated = loads_document(result.text, source="generated.yaml").document
        assert generated is not None
        out["docgen_s"] = {"median": round(statistics.median(times), 3), "min": round(min(times), 3),
                           "runs": args.runs, "model": None}
        out["generated"] = sizes(generated) | {"yaml_chars": len(result.text)}
        method = count_tokens("x").method
        out["tokenizer"] = method
        if reference is not None:
            out["reference"] = sizes(reference)
            if upstream_json is not None and upstream_json.is_file():
                out["reference"]["upstream_json_tokens"] = count_tokens(upstream_json.read_text(encoding="utf-8")).count
            g, r = out["generated"], out["reference"]
            out["ratio_prompt_full"] = round(g["prompt_full_tokens"] / r["prompt_full_tokens"], 3)
            out["ratio_prompt_compressed"] = round(g["prompt_compressed_tokens"] / r["prompt_compressed_tokens"], 3)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
