"""Language service latency: a 1,000-line script against a 300-element document.

    python bench/language_service.py [--lines 1000] [--elements 300] [--samples 40]

Prints JSON: p50/p95 (milliseconds) of a check after an edit (the script changed, so it is parsed
and analysed again; the document is cached), of completion after '$', after '.' and of names, of
hover and of signature help on the edited script, and of the tolerant parse alone. The targets
the language server is held to (completion p95 under 50 ms, diagnostics p95 under 200 ms) are
printed beside them. The files are generated in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tapir.dsl.parser import parse_tolerant
from tapir.service import Workspace

KINDS = ["button", "input", "text", "list", "switch", "scroller"]


def document(elements: int) -> str:
    screens = max(elements // 20, 1)
    out = ["app: {package: org.bench.app, name: Bench, start_screen: s0}", "screens:"]
    for s in range(screens):
        out += [f"  s{s}:", f"    description: screen {s}", f"    signature: {{activity: .S{s}}}", "    elements:"]
        for e in range(elements // screens):
            kind = KINDS[(s + e) % len(KINDS)]
            out += [f"      s{s}__e{e}:", f"        kind: {kind}", f"        description: element {e} of screen {s}",
                    f"        identifiers: [\"//node[@resource-id='s{s}e{e}']\"]"]
            if kind == "list":
                out += ["        item_kind: button", "        options: [one, two, three]"]
    return "\n".join(out) + "\n"


def script(lines: int, elements: int) -> str:
    screens = max(elements // 20, 1)
    per = elements // screens
    out = ["# doc: app.yaml", "total = 0"]
    i = 0
    while len(out) < lines - 6:
        s, e = i % screens, i % per
        kind = KINDS[(s + e) % len(KINDS)]
        if kind == "input":
            out.append(f"$s{s}__e{e}.set_text('value {i}')")
        elif kind == "list":
            out += [f"for row in $s{s}__e{e}:", "    total += 1", "    row.tap()"]
        else:
            out.append(f"text_{i} = $s{s}__e{e}.get_text()")
        if i % 10 == 0:
            out += [f"def helper_{i}(a, b=1):", "    return a + b", f"total = helper_{i}(total)"]
        i += 1
    out += ["print(total)"]
    return "\n".join(out) + "\n"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2)}


def timed(fn: Callable[[int], Any], samples: int) -> list[float]:
    out = []
    for i in range(samples):
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--elements", type=int, default=300)
    ap.add_argument("--samples", type=int, default=40)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    (folder / "app.yaml").write_text(document(args.elements))
    path = folder / "big.tap"
    base = script(args.lines, args.elements)
    path.write_text(base)
    ws = Workspace()
    ws.check(path)  # load the document once, as an editor session would
    lines = base.splitlines()
    middle = len(lines) // 2

    def edited(i: int) -> str:
        changed = list(lines)
        changed[middle] = f"edit_{i} = {i}"
        return "\n".join(changed) + "\n"

    def check(i: int) -> None:
        ws.open(path, edited(i))
        ws.check(path)

    results: dict[str, Any] = {"lines": len(lines), "elements": args.elements}
    results["check_after_edit"] = percentiles(timed(check, args.samples))
    results["tolerant_parse"] = percentiles(timed(lambda i: parse_tolerant(edited(i)), args.samples))
    probes = {
        "complete_element": ("x = $s3__e", None),
        "complete_method": ("x = $s0__e3.", None),
        "complete_name": ("x = hel", None),
    }
    for name, (prefix, _) in probes.items():
        text = edited(0).replace("edit_0 = 0", prefix, 1)
        ws.open(path, text)
        ws.check(path)
        line = middle + 1
        column = len(prefix) + 1
        results[name] = percentiles(timed(lambda i, ln=line, col=column: ws.complete(path, (ln, col)), args.samples))
        results[name]["items"] = len(ws.complete(path, (line, column)))
    ws.open(path, base)
    target = next(n for n, ln in enumerate(lines, 1) if ln.startswith("for row in"))
    results["hover"] = percentiles(timed(lambda i: ws.hover(path, (target, 13)), args.samples))
    results["signature_help"] = percentiles(timed(lambda i: ws.signature_help(path, (target + 2, 13)), args.samples))
    results["targets"] = {"completion_p95_ms": 50, "diagnostics_p95_ms": 200}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
