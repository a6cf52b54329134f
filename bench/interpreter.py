"""Interpreter speed: a loop-heavy script run by Tapir and, as the same source, by CPython.

    python bench/interpreter.py [--repeat N]

Prints JSON: Tapir's time, CPython's time on the identical program (``exec``), the slowdown
ratio, statements executed (counted with CPython's line tracer: one statement per line here)
and Tapir's statements and steps per second. Best of ``--repeat`` runs each.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

from tapir.dsl.budget import Budgets
from tapir.dsl.interpreter import Interpreter
from tapir.dsl.parser import parse

# Valid Tapir and valid Python alike: nested loops, arithmetic, list/dict operations, calls.
SCRIPT = '''
def collatz_len(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps

best = 0
best_n = 0
for i in range(1, 1500):
    c = collatz_len(i)
    if c > best:
        best = c
        best_n = i

primes = []
for n in range(2, 6000):
    is_prime = True
    for p in primes:
        if p * p > n:
            break
        if n % p == 0:
            is_prime = False
            break
    if is_prime:
        primes.append(n)

words = ["alpha", "beta", "gamma", "delta", "epsilon"]
counts = {}
for k in range(5000):
    w = words[k % len(words)]
    counts[w] = counts.get(w, 0) + 1

squares = [x * x for x in range(20000) if x % 3 == 0]
total = sum(squares)
labels = []
for j in range(2000):
    labels.append(f"item {j}: {j * 2}")
print(best_n, best, len(primes), counts["alpha"], total, labels[-1])
'''

BUDGETS = Budgets(max_steps=10**9, timeout_s=600.0, max_size=10**7)


def run_tapir() -> tuple[float, int, list[str]]:
    module = parse(SCRIPT, "bench.tap")
    interp = Interpreter(budgets=BUDGETS, output=None)
    start = time.perf_counter()
    interp.execute(module, SCRIPT)
    return time.perf_counter() - start, interp.total_steps, interp.printed


def run_cpython() -> tuple[float, list[str]]:
    out: list[str] = []
    code = compile(SCRIPT, "bench.py", "exec")
    start = time.perf_counter()
    exec(code, {"print": lambda *a: out.append(" ".join(map(str, a)))})  # noqa: S102 - our own benchmark source
    return time.perf_counter() - start, out


def count_statements() -> int:
    """Statements CPython executes for the script: its 'line' trace events."""
    count = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event == "line" and frame.f_code.co_filename == "bench.py":
            count += 1
        return tracer

    code = compile(SCRIPT, "bench.py", "exec")
    sys.settrace(tracer)
    try:
        exec(code, {"print": lambda *a: None})  # noqa: S102
    finally:
        sys.settrace(None)
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tapir_times, py_times = [], []
    steps, printed, expected = 0, [], []
    for _ in range(args.repeat):
        t, steps, printed = run_tapir()
        tapir_times.append(t)
        p, expected = run_cpython()
        py_times.append(p)
    if printed != expected:
        raise SystemExit(f"Tapir printed {printed}, CPython {expected}")
    statements = count_statements()
    tapir_s, py_s = min(tapir_times), min(py_times)
    print(json.dumps({
        "benchmark": "interpreter",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "statements": statements,
        "steps": steps,
        "tapir_seconds": round(tapir_s, 4),
        "cpython_seconds": round(py_s, 4),
        "slowdown_vs_cpython": round(tapir_s / py_s, 1),
        "statements_per_second": round(statements / tapir_s),
        "steps_per_second": round(steps / tapir_s),
        "output_matches_cpython": True,
    }, indent=2))


if __name__ == "__main__":
    main()
