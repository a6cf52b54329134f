"""REPL latency: what each keystroke and each input cost as a session grows.

    python bench/repl_latency.py [--statements 0 100 1000] [--samples 30]

A session on the music sample document (no device) runs N statements first (assignments to new
names, calls of a function it defined, element handles); then, at each size, it measures p50/p95 in
milliseconds of: completion after '$' (an element name), after '.' (an element's methods) and of
a name (session variables included), the highlighting of a 3-line input, and the check and run of
one input that makes no device call (what Enter costs before the device is touched). Prints JSON.
Every keystroke runs completion and highlighting, so those are what typing feels like; the
language server is held to completion p95 under 50 ms, and the REPL to the same.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from tapir.repl.highlight import fragments
from tapir.repl.session import ReplSession

DOC = Path(__file__).resolve().parent.parent / "samples" / "music" / "music.yaml"
_calls = 0


def timed(fn: Callable[[int], object], samples: int) -> dict[str, float]:
    """``fn(i)`` is given a new number each time, so that no cache answers for it: a keystroke
    always changes the text."""
    global _calls
    _calls += samples + 1
    fn(_calls)
    times = []
    for i in range(_calls - samples, _calls):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}


def grow(session: ReplSession, to: int) -> None:
    if not session.transcript:
        session.handle("def label(i):\n    return f'item {i}'\n")
    while len(session.transcript) < to:
        i = len(session.transcript)
        kind = i % 3
        if kind == 0:
            session.handle(f"value_{i} = [label(j) for j in range({i % 7})]")
        elif kind == 1:
            session.handle(f"button_{i} = $songs_screen__search_button")
        else:
            session.handle(f"text_{i} = label({i}).upper()")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--statements", type=int, nargs="+", default=[0, 100, 1000])
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    session = ReplSession(document=DOC, out=io.StringIO(), err=io.StringIO())
    three_lines = 'for song in $songs_screen__song_list:\n    if song.get_text() == "x":\n        song.tap()'
    results = []
    for size in sorted(args.statements):
        grow(session, size)
        row: dict[str, object] = {"statements": len(session.transcript)}
        row["globals"] = len(session.interp.globals)

        def typed(text: str, i: int) -> tuple[str, int]:
            return f"x{i} = {text}", len(f"x{i} = {text}")

        row["complete_element"] = timed(lambda i: session.complete(*typed("$songs_screen__so", i)), args.samples)
        row["complete_method"] = timed(lambda i: session.complete(*typed("$songs_screen__search_button.", i)),
                                       args.samples)
        row["complete_name"] = timed(lambda i: session.complete(*typed("val", i)), args.samples)
        row["highlight_3_lines"] = timed(lambda i: fragments(f"x{i} = 1\n" + three_lines, session.symbols),
                                         args.samples)
        row["check_and_run"] = timed(lambda i: session.handle(f"probe = len('abc') + {i}"), args.samples)
        results.append(row)
    session.close()
    print(json.dumps({"document": DOC.name, "samples": args.samples, "target_completion_p95_ms": 50,
                      "sizes": results}, indent=2))


if __name__ == "__main__":
    main()
