"""Hostile scripts by class of broken promise: each is stopped with the expected error, in time,
without crashing or exhausting the host.

Every family runs in a subprocess under an address-space limit, a wall-clock timeout (and, for
the recursion family, a small C stack), so that a regression fails the test instead of taking
the machine down: a segfault, a runaway or an 8 GB allocation shows up as a missing result.

* crash: deep values reach no C recursion (hash, compare, repr); recursion through every
  construct at the deepest allowed ``max_depth`` stops at the depth budget;
* memory: big integers and per-item objects are charged by size, integers capped on every path,
  the run's memory budget holds;
* deadline: work inside one operation is charged in proportion, pathological arguments refused,
  parsing and compiling are under the deadline;
* unclean: output, documents and messages never turn into an internal error or a leak;
* wall: what the in-process checks would miss (a runtime that allocates, spins or crashes) costs
  the child process, not its parent.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tapir.core.errors import TapirError
from tapir.dsl.budget import MAX_DEPTH_CEILING, Budgets
from tapir.dsl.interpreter import run_script
from tapir.dsl.isolation import isolation_available

GiB = 1 << 30
#: How much later than its deadline a run may end (a loaded 2-core machine, process start).
SLACK_S = 2.0

# The driver runs cases in a fresh interpreter and prints one JSON line per case as it ends, so
# a case that kills the process is the first one without a line.
_DRIVER = textwrap.dedent('''
    import json, sys, time
    from tapir.dsl.budget import Budgets
    from tapir.dsl.interpreter import run_script

    def peak_rss():
        # this process's own high-water mark (ru_maxrss would include the parent's, from before exec)
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))

    spec = json.load(sys.stdin)
    exec(spec.get("setup", ""))
    run = globals().get("RUN", run_script)
    if spec.get("prelude"):  # run once; each case then runs against its globals (as a REPL would)
        from tapir.core.errors import TapirError
        from tapir.dsl.interpreter import Interpreter

        shared = Interpreter(budgets=Budgets(**spec["cases"][0]["budgets"]), output=None)
        shared.execute(spec["prelude"])

        class Ran:
            def __init__(self, src):
                self.error, self.printed = None, []
                try:
                    shared.execute(src)
                except TapirError as exc:
                    self.error = exc
                self.printed, self.variables = shared.printed[:], shared.variables()

        run = lambda src, budgets, output: Ran(src)
    def rss():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))

    for case in spec["cases"]:
        try:  # reset the high-water mark: each case's peak is its own
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        rss_before = rss()
        started = time.monotonic()
        r = run(case["src"], budgets=Budgets(**case["budgets"]), output=None)
        e = r.error
        print(json.dumps({
            "id": case["id"], "elapsed": time.monotonic() - started,
            "category": type(e).__name__ if e else None, "message": e.message if e else None,
            "budget": getattr(e, "budget", None), "printed": list(r.printed), "variables": r.variables,
            "peak_rss": peak_rss(), "rss_before": rss_before,
        }), flush=True)
''')


def run_cases(cases: list[dict[str, Any]], *, memory: int = 3 * GiB, stack: int | None = None,
              timeout: float = 240, setup: str = "", prelude: str = "") -> dict[str, dict[str, Any]]:
    """Run ``cases`` ({id, src, budgets}) in a subprocess under the given limits; the results by
    id. A case that crashed, hung or exhausted the subprocess fails the test, naming the case.
    ``prelude``: a script run once, whose globals every case then sees (the first case's budgets)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if stack is not None:
            resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))

    spec = json.dumps({"cases": cases, "setup": setup, "prelude": prelude})
    try:
        proc = subprocess.run([sys.executable, "-c", _DRIVER], input=spec, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit, check=False)
    except subprocess.TimeoutExpired as exc:
        done = [json.loads(line)["id"] for line in (exc.stdout or b"").decode().splitlines()]
        pending = [c["id"] for c in cases if c["id"] not in done]
        pytest.fail(f"the cases did not finish in {timeout} s; stuck on {pending[:1]}")
    results = {}
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        results[r["id"]] = r
    missing = [c["id"] for c in cases if c["id"] not in results]
    assert not missing, (f"the process died (status {proc.returncode}) running {missing[0]!r}:\n"
                         f"{proc.stderr[-3000:]}")
    return results


def case(id: str, src: str, **budgets: Any) -> dict[str, Any]:
    return {"id": id, "src": src, "budgets": budgets}


def expect(results: dict[str, dict[str, Any]], id: str, category: str | None, fragment: str = "",
           within: float | None = None) -> dict[str, Any]:
    r = results[id]
    assert r["category"] == category, f"{id}: {r['category']}: {r['message']}"
    assert fragment in (r["message"] or ""), f"{id}: {r['message']}"
    if within is not None:
        assert r["elapsed"] < within, f"{id}: took {r['elapsed']:.2f} s (at most {within} s)"
    return r


# ---------------------------------------------------------------------------------------------
# Host crash: nothing deep reaches C recursion; the documented depth ceiling is true

#: Two tuples nested 200,000 levels deep, built in a loop well within the step budget.
DEEP = ("t = ()\nu = ()\nfor i in range(20000):\n    t = ((((((((((t,),),),),),),),),),)\n"
        "    u = ((((((((((u,),),),),),),),),),)\n")
#: A list nested as deep.
DEEP_LIST = "lt = []\nfor i in range(200000):\n    lt = [lt]\n"
DEEP_CASES = [
    # hashing: as a dict key, through every path that hashes
    ("dict literal", "d = {t: 1}", "a dict key may"),
    ("dict of zip", "d = dict(zip([t], [1]))", "a dict key may"),
    ("dict of pairs", "d = dict([(t, 1)])", "a dict key may"),
    ("update", "d = {}\nd.update([(t, 1)])", "a dict key may"),
    ("setitem", "d = {}\nd[t] = 1", "a dict key may"),
    ("in dict", "q = t in {}", "a dict key may"),
    ("get", "q = {}.get(t)", "a dict key may"),
    ("setdefault", "q = {}.setdefault(t)", "a dict key may"),
    ("pop", "q = {}.pop(t, 0)", "a dict key may"),
    # comparing
    ("equal", "q = t == u", "cannot be compared"),
    ("equal in list", "q = [t] == [u]", "cannot be compared"),
    ("equal lists", "q = lt == [lt]", "cannot be compared"),
    ("order", "q = t < u", "cannot be compared"),
    ("sorted", "q = sorted([t, u])", "cannot be compared"),
    ("max", "q = max(t, u)", "cannot be compared"),
    ("in list", "q = t in [u]", "cannot be compared"),
    ("count", "q = [u].count(t)", "cannot be compared"),
    ("index", "q = [u].index(t)", "cannot be compared"),
    # printing
    ("print", "print(t)", "cannot be printed"),
    ("str", "s = str(lt)", "cannot be printed"),
    ("f-string", "s = f'{t}'", "cannot be printed"),
    ("percent", "s = '%s' % (t,)", "cannot be printed"),
    ("format", "s = '{}'.format(t)", "cannot be printed"),
]


def test_deep_values_are_refused_before_anything_hashes_compares_or_prints_them() -> None:
    cases = [case(cid, src, timeout_s=20, max_steps=5_000_000) for cid, src, _ in DEEP_CASES]
    cases.append(case("summary", "x = 1", timeout_s=20, max_steps=5_000_000))
    results = run_cases(cases, memory=2 * GiB, prelude=DEEP + DEEP_LIST)
    for cid, _, fragment in DEEP_CASES:
        expect(results, cid, "ScriptError", fragment, within=20)
    # the end-of-run summary of the variables shows them, cut short, at no cost
    summary = expect(results, "summary", None)
    assert summary["variables"]["t"].startswith("((((") and len(summary["variables"]["t"]) <= 80


#: Recursion through every construct that can call a script function: none may take C stack
#: per level (a C builtin consuming a generator did: the crash at max_depth 2,000).
RECURSION_SHAPES = {
    "plain": "def f(n):\n    return f(n + 1)\nf(0)",
    "keywords": "def f(n=0):\n    return f(n=n + 1)\nf()",
    "comprehension condition": "def f(n):\n    return [1 for i in [1] if f(n + 1)]\nf(0)",
    "nested comprehension conditions":
        "def f(n):\n    return [1 for i in [1] if [1 for j in [1] if [1 for k in [1] if f(n + 1)]]]\nf(0)",
    "comprehension element": "def f(n):\n    return [f(n + 1) for i in [1]]\nf(0)",
    "comprehension inner iterable": "def f(n):\n    return [1 for i in [1] for j in f(n + 1)]\nf(0)",
    "sorted key": "def f(x):\n    return sorted([1], key=f)\nf(0)",
    "sort key": "def f(x):\n    [1, 2].sort(key=f)\n    return 1\nf(0)",
    "max key": "def f(x):\n    return max([1, 2], key=f)\nf(0)",
    "min key": "def f(x):\n    return min(1, 2, key=f)\nf(0)",
    "default value": "def f(n):\n    def g(a=f(n + 1)):\n        pass\nf(0)",
    "f-string": "def f(n):\n    return f'{f(n + 1)}'\nf(0)",
    "format argument": "def f(n):\n    return '{}'.format(f(n + 1))\nf(0)",
    "percent argument": "def f(n):\n    return '%s' % f(n + 1)\nf(0)",
    "dict literal": "def f(n):\n    return {'a': f(n + 1)}\nf(0)",
    "while test": "def f(n):\n    while f(n + 1):\n        pass\nf(0)",
    "for iterable": "def f(n):\n    for i in [f(n + 1)]:\n        pass\nf(0)",
    "if test": "def f(n):\n    if f(n + 1):\n        pass\nf(0)",
    "assert": "def f(n):\n    assert f(n + 1)\nf(0)",
    "and": "def f(n):\n    return 1 and f(n + 1)\nf(0)",
    "conditional": "def f(n):\n    return f(n + 1) if 1 else 0\nf(0)",
    "chained comparison": "def f(n):\n    return 0 < f(n + 1) < 2\nf(0)",
    "subscript": "def f(n):\n    return [1][f(n + 1)]\nf(0)",
    "augmented assignment": "def f(n):\n    x = 1\n    x += f(n + 1)\nf(0)",
    "builtin argument": "def f(n):\n    return sum([f(n + 1)])\nf(0)",
    "inner function": "def f(n):\n    def g():\n        return f(n + 1)\n    return g()\nf(0)",
    "builtin with keywords": "def f(n):\n    return print(f(n + 1), sep='')\nf(0)",
}


@pytest.mark.slow
def test_recursion_at_the_deepest_max_depth_stops_at_the_depth_budget_with_an_eighth_of_the_stack() -> None:
    """``max_depth`` may be MAX_DEPTH_CEILING (10,000): every shape stops at the depth budget
    with a 1 MiB C stack, an eighth of the usual 8 MiB, so the ceiling holds with a margin."""
    budgets = {"max_depth": MAX_DEPTH_CEILING, "max_steps": 10**8, "timeout_s": 60}
    cases = [case(name, src, **budgets) for name, src in RECURSION_SHAPES.items()]
    results = run_cases(cases, stack=1 << 20, memory=3 * GiB, timeout=600)
    for name in RECURSION_SHAPES:
        r = expect(results, name, "BudgetExceeded", f"more than {MAX_DEPTH_CEILING} nested function calls")
        assert r["budget"] == "depth"


def test_max_depth_above_the_ceiling_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 10,000"):
        Budgets(max_depth=MAX_DEPTH_CEILING + 1)


# ---------------------------------------------------------------------------------------------
# Host memory within budgets: charged by size, integers capped everywhere, a budget for the run

MEMORY_CASES = [
    # 1,000,000 integers of 65,000 bits: 8 GiB, refused before one is made
    ("big ints of a range", "b = 2**65000\nx = list(range(b, b + 10**6))", "memory", "would not fit"),
    ("enumerate sixty times", "xs = list(range(10**6))\nkeep = []\nfor i in range(60):\n    keep.append(enumerate(xs))",
     "steps", "steps budget exceeded"),
    ("zip sixty times", "xs = list(range(10**6))\nkeep = []\nfor i in range(60):\n    keep.append(zip(xs, xs))",
     "steps", "steps budget exceeded"),
    ("items sixty times", "d = dict(zip(range(300000), range(300000)))\nkeep = []\nfor i in range(60):\n"
     "    keep.append(d.items())", "steps", "steps budget exceeded"),
    ("int of hex text", "n = int('f' * 100000, 16)", "size", "bits would be too large"),
    ("int of binary text", "n = int('1' * 70000, 2)", "size", "bits would be too large"),
    ("int of base-0 text", "n = int('0x' + 'f' * 20000, 0)", "size", "bits would be too large"),
    ("power estimate", "n = 3 ** 50000", "size", "bits would be too large"),
    ("add fast path", "x = 2**65535\ny = x + x", "size", "bits would be too large"),
    ("subtract fast path", "x = 2**65535\ny = x - (0 - x)", "size", "bits would be too large"),
    ("augmented add", "x = 2**65535\nx += x", "size", "bits would be too large"),
    ("plus one", "x = (2**65535 - 1) * 2 + 1\ny = x + 1", "size", "bits would be too large"),
    ("local plus one", "def f():\n    x = (2**65535 - 1) * 2 + 1\n    return x + 1\nf()", "size",
     "bits would be too large"),
    ("doubling", "x = 1\nwhile True:\n    x = x + x", "size", "bits would be too large"),
    ("split into many strings", "s = 'a ' * 500000\nkeep = []\nfor i in range(60):\n    keep.append(s.split())",
     "steps", "steps budget exceeded"),
]


def test_memory_is_charged_by_size_and_integers_are_capped_on_every_path() -> None:
    cases = [case(cid, src, timeout_s=20) for cid, src, _, _ in MEMORY_CASES]
    # the run's memory budget: retained strings, with the step and size budgets out of the way
    cases.append(case("memory budget", "keep = []\nfor i in range(100000):\n    keep.append('x' * 1000000 + str(i))",
                      max_memory=96 << 20, max_steps=10**10, max_size=10**7, timeout_s=20))
    results = run_cases(cases, memory=2 * GiB)
    for cid, _, budget, fragment in MEMORY_CASES:
        r = expect(results, cid, "BudgetExceeded", fragment, within=20)
        assert r["budget"] == budget, (cid, r["message"])
    r = expect(results, "memory budget", "BudgetExceeded", "memory budget exceeded: the run grew the process's memory")
    assert "(limit 96 MiB)" in r["message"]
    # nothing came near the subprocess's 2 GiB: the budgets stopped each before it allocated
    assert max(r["peak_rss"] for r in results.values()) < GiB


#: Fill the process to about 8 MiB under a 128 MiB budget, run past a look at memory, then
#: allocate with one kind of operation for ever (the overshoot: a whole interval between two
#: looks of values nobody charged, 1.6 GiB at the 1 GiB default).
_FILL = ("x = 2**65000\ny = -x\nt = 'f' * 16000\nkeep = []\nfor i in range(120):\n"
         "    keep.append('x' * 999990 + str(i))\nfor i in range(300000):\n    pass\n")
OVERSHOOT_CASES = {
    "negate": "-x", "add": "x + x", "subtract": "x - y", "add one": "x + 1", "floor divide": "x // 1",
    "modulo": "x % (x + 1)", "multiply": "x * 3", "abs": "abs(y)",
    "int of text": "int(t, 16)",
    # values too small to be charged steps one by one (their bytes still count)
    "small values": "(str(i) * 12, [i] * 60, t[:60] + str(i), f'{i}-{i}-{i}', {i: i}, '-'.join([t[:50]] * 9))",
}


def test_the_process_never_grows_past_the_memory_budget_plus_the_margin() -> None:
    """Whatever makes the values (big integers from any operator or builtin, small strings,
    lists and dicts nobody charged one by one), the run stops within ``MEMORY_MARGIN`` of the
    budget: every value is charged by size and memory is looked at every few thousand steps."""
    from tapir.dsl.budget import MEMORY_MARGIN

    budget = 128 << 20
    loops = {cid: f"while True:\n    keep.append({op})" for cid, op in OVERSHOOT_CASES.items()}
    loops["augmented"] = "while True:\n    z = x\n    z += x\n    keep.append(z)"
    loops["neg with steps to spare"] = "while True:\n    keep.append(-x)\n    keep.append(-y)"
    cases = [case(cid, _FILL + loop, max_memory=budget, max_steps=10**9, timeout_s=60)
             for cid, loop in loops.items()]
    results = run_cases(cases, memory=3 * GiB, timeout=400)
    for cid in loops:
        r = expect(results, cid, "BudgetExceeded", "memory budget exceeded")
        assert r["budget"] == "memory", (cid, r["message"])
        grown = r["peak_rss"] - r["rss_before"]
        assert grown <= budget + MEMORY_MARGIN, f"{cid}: grew by {grown >> 20} MiB (budget 128 MiB)"


# ---------------------------------------------------------------------------------------------
# Past the deadline: work charged in proportion, pathological arguments refused, parsing and
# compiling under the deadline

_LONG = "s = 'a' * 1000000\nt = 'a' * 999999 + 'b'\n"
#: (id, source, category): each must end within its deadline (1 s) plus slack; the step budget is
#: out of the way, so the clock is what stops them.
DEADLINE_CASES = [
    ("format fields", "s = ('{0}' * 300000).format(1)\nwhile True:\n    s = ('{0}' * 300000).format(1)",
     "BudgetExceeded"),
    ("percent fields", "while True:\n    s = ('%(a)s' * 200000) % {'a': 1}", "BudgetExceeded"),
    ("colliding keys", "keys = [i * (2**61 - 1) for i in range(60000)]\nd = dict(zip(keys, keys))", "ScriptError"),
    ("big-int division", "n = int('f' * 16000, 16)\nd = int('f' * 8000, 16)\nwhile True:\n    q = n // d",
     "BudgetExceeded"),
    ("big-int modulo", "n = int('f' * 16000, 16)\nd = int('f' * 8000, 16)\nwhile True:\n    q = n % d",
     "BudgetExceeded"),
    ("big-int product", "x = int('f' * 8000, 16)\nwhile True:\n    y = x * x", "BudgetExceeded"),
    ("big power", "while True:\n    y = 7 ** 23000", "BudgetExceeded"),
    ("in over long strings", _LONG + "xs = [s] * 1000000\nwhile True:\n    q = t in xs", "BudgetExceeded"),
    ("count of long strings", _LONG + "xs = [s] * 1000000\nwhile True:\n    q = xs.count(t)", "BudgetExceeded"),
    ("index of long strings", _LONG + "xs = [s] * 1000000 + [t]\nwhile True:\n    q = xs.index(t)",
     "BudgetExceeded"),
    ("max of long strings", _LONG + "xs = [s, t] * 500000\nwhile True:\n    q = max(xs)", "BudgetExceeded"),
    ("sorted long strings", _LONG + "xs = [s, t] * 500000\nwhile True:\n    q = sorted(xs)", "BudgetExceeded"),
    ("equal lists of long strings", _LONG + "u = t[:-1] + 'b'\nxs = [t] * 1000000\nys = [u] * 1000000\n"
     "while True:\n    q = xs == ys", "BudgetExceeded"),
    ("strip with long chars", _LONG + "c = 'b' * 999999 + 'a'\nwhile True:\n    q = s.strip(c)", "BudgetExceeded"),
    ("str of a long list", "xs = list(range(10**6))\nwhile True:\n    q = str(xs)", "BudgetExceeded"),
    ("round to huge negative digits", "x = round(1, -10**9)\ny = round(10**300, -10**6)", None),
]


def test_one_operation_cannot_run_past_the_deadline() -> None:
    budgets = {"timeout_s": 1.0, "max_steps": 10**11, "max_size": 10**7, "max_memory": 2 * GiB}
    cases = [case(cid, src, **budgets) for cid, src, _ in DEADLINE_CASES]
    results = run_cases(cases, memory=3 * GiB, timeout=400)
    for cid, _, category in DEADLINE_CASES:
        r = expect(results, cid, category, within=1.0 + SLACK_S)
        if category == "BudgetExceeded":
            assert r["budget"] in ("time", "size"), (cid, r["message"])
    assert "cannot be a dict key" in results["colliding keys"]["message"]


def test_parsing_and_compiling_are_under_the_deadline_and_scripts_have_a_size_limit() -> None:
    big = {"timeout_s": 1.0, "max_source": 10**7}
    sources = {
        "a megabyte of assignments": "x = 1\n" * 170_000,
        "an f-string with 200,000 fields": "x = 1\ns = f\"" + "{x}" * 200_000 + "\"\n",
        "a def with 100,000 parameters": "def f(" + ", ".join(f"a{i}" for i in range(100_000)) + "):\n    pass\n",
        "a list of 300,000 items": "x = [" + "1, " * 300_000 + "]\n",
    }
    cases = [case(cid, src, **big) for cid, src in sources.items()]
    cases.append(case("over the size limit", "x = 1\n" * 170_000, timeout_s=1.0))
    results = run_cases(cases, memory=3 * GiB, timeout=300)
    for cid in sources:
        r = results[cid]
        assert r["elapsed"] < 1.0 + SLACK_S, f"{cid}: {r['elapsed']:.2f} s"
        assert r["category"] in (None, "BudgetExceeded", "TapirSyntaxError", "UnsupportedConstruct"), r
        if r["category"] == "BudgetExceeded":
            assert r["budget"] == "time", r["message"]
    r = expect(results, "over the size limit", "BudgetExceeded", "the script is 1,020,000 characters long", within=1.0)
    assert r["budget"] == "source" and "(limit 100,000)" in r["message"]


def test_the_variables_summary_is_bounded_whatever_the_values() -> None:
    from tapir.dsl.interpreter import Interpreter

    interp = Interpreter(budgets=Budgets(max_size=10**7, max_steps=10**8, timeout_s=20), output=None)
    interp.execute("s = 'x' * 10000000\nn = 2**65000\nd = dict(zip(range(10**6), range(10**6)))\n"
                   "lt = []\nfor i in range(100000):\n    lt = [lt]\ne = '\\x00' * 1000000")
    import time

    started = time.monotonic()
    summary = interp.variables()
    assert time.monotonic() - started < 0.2
    assert all(len(v) <= 80 for v in summary.values())
    assert summary["n"].startswith("<") and summary["s"].startswith("'xxx")


# ---------------------------------------------------------------------------------------------
# Unclean errors: through the command line, as a user meets them


def _tapir(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * GiB, 3 * GiB))

    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "tapir.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit, check=False, env=env)


@pytest.mark.parametrize("mode", ["isolated", "in-process"])
def test_a_lone_surrogate_is_printed_escaped_and_never_hides_the_scripts_error(tmp_path: Path, mode: str) -> None:
    flags = ["--in-process"] if mode == "in-process" else []
    (tmp_path / "end.tap").write_text("print('\\ud800', end='')\n")
    (tmp_path / "fail.tap").write_text("print('a\\ud800b', end='')\nx = 1 / 0\n")
    done = _tapir("run", "end.tap", *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\\ud800\n"
    failed = _tapir("run", "fail.tap", *flags, cwd=tmp_path)
    assert failed.returncode == 1
    assert "fail.tap:2:5: ScriptError: division by zero" in failed.stderr and "internal error" not in failed.stderr
    assert failed.stdout == "a\\ud800b\n"


def test_a_doc_line_cannot_make_tapir_read_a_host_file_or_echo_one(tmp_path: Path) -> None:
    (tmp_path / "environ.tap").write_text("# doc: /proc/self/environ\nprint(1)\n")
    (tmp_path / "secrets.yaml").write_text("aws_secret_access_key: AKIAFAKE1234\ndb_password: hunter2\n")
    (tmp_path / "secrets.tap").write_text("# doc: secrets.yaml\nprint(1)\n")
    (tmp_path / "list.yaml").write_text("- hunter2\n- AKIAFAKE1234\n")
    (tmp_path / "list.tap").write_text("# doc: list.yaml\nprint(1)\n")
    (tmp_path / "noise.yml").write_text("password: [hunter2\n")
    (tmp_path / "noise.tap").write_text("# doc: noise.yml\nprint(1)\n")
    os.symlink("/proc/self/environ", tmp_path / "env.yaml")
    (tmp_path / "link.tap").write_text("# doc: env.yaml\nprint(1)\n")
    for script, fragment in (("environ.tap", "documents are .yaml, .yml or .json files"),
                             ("secrets.tap", "it has none of the fields app and screens"),
                             ("list.tap", "the document must be a mapping"),
                             ("noise.tap", "it is not valid YAML or JSON"),
                             ("link.tap", "documents are .yaml, .yml or .json files")):
        done = _tapir("run", script, cwd=tmp_path)
        assert done.returncode == 1, (script, done.stderr)
        assert "this is not an app document" in done.stderr or "is not an app document" in done.stderr, done.stderr
        assert fragment in done.stderr, done.stderr
        for secret in ("hunter2", "AKIAFAKE", "aws_secret", "db_password", "PATH="):
            assert secret not in done.stderr, (script, done.stderr)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "big.yaml").write_bytes(b"app: x\n" + b"#" * (17 << 20))
    (tmp_path / "big.tap").write_text("# doc: big.yaml\nprint(1)\n")
    done = _tapir("run", "big.tap", cwd=tmp_path)
    assert done.returncode == 1 and "too large to be an app document" in done.stderr


HOST_NAME_CASES = [
    "q = 'a'.startswith(len)", "q = 'a'.split(len)", "q = 'a'.strip(print)", "q = 'a'.find(tap)",
    "def f():\n    pass\nq = 'a'.count(f)", "q = 'a'.startswith(('x', len))", "q = 'a'.rjust(len)",
    "q = 'a'.endswith($home__more)", "q = '%d' % len", "q = '%x' % back", "q = '%f' % $home__more",
]


@pytest.mark.parametrize("src", HOST_NAME_CASES)
def test_messages_never_name_host_classes(src: str) -> None:
    from tapir.dsl.api import Kind
    from tapir.dsl.fake_runtime import FakeElement, FakeRuntime

    r = run_script(src, FakeRuntime({"home__more": FakeElement(Kind.BUTTON)}).factory(), output=None)
    assert r.error is not None and type(r.error).__name__ == "ScriptError", r.error
    for host in ("Builtin", "ApiFunction", "ScriptFunction", "ElementHandle"):
        assert host not in r.error.message, r.error.message


# ---------------------------------------------------------------------------------------------
# The second wall: the child process

needs_fork = pytest.mark.skipif(not isolation_available(), reason="scripts run in a child process on Linux only")

_WALL_SETUP = textwrap.dedent('''
    import ctypes, os, signal
    from tapir.dsl.api import Kind
    from tapir.dsl.fake_runtime import FakeElement, FakeRuntime
    from tapir.dsl.isolation import ChildLimits, run_script_isolated

    class Hostile(FakeRuntime):
        """A device runtime with a hole the interpreter cannot see into."""

        def tap(self, handle, child, span):
            how = handle.name.split("__")[1]
            if how == "allocate":
                keep = bytearray(8 << 30)  # refused by the child's address-space limit
            elif how == "spin":
                while True:
                    pass
            elif how == "segfault":
                ctypes.string_at(0)
            elif how == "signal":
                os.kill(os.getpid(), signal.SIGTERM)
            return super().tap(handle, child, span)

    def factory():
        return Hostile({f"home__{n}": FakeElement(Kind.BUTTON) for n in ("allocate", "spin", "segfault", "signal")})

    def RUN(src, budgets, output):
        return run_script_isolated(src, factory, budgets, output)

    def RUN_CPU(src, budgets, output):  # only the CPU limit can stop a spin: the clock is far away
        return run_script_isolated(src, factory, budgets, output,
                                   limits=ChildLimits(ChildLimits.for_budgets(budgets).memory_bytes, 1, 60.0))
''')


@needs_fork
def test_the_child_process_turns_what_the_interpreter_cannot_see_into_errors() -> None:
    budgets = {"timeout_s": 1.0, "max_memory": 256 << 20}
    cases = [
        case("allocate", "print('before')\n$home__allocate.tap()", **budgets),
        case("spin", "$home__spin.tap()", **budgets),
        case("segfault", "$home__segfault.tap()", **budgets),
        case("signal", "$home__signal.tap()", **budgets),
        case("fine", "print('still here')\nx = [1, 2]", **budgets),
    ]
    results = run_cases(cases, memory=4 * GiB, timeout=120, setup=_WALL_SETUP)
    r = expect(results, "allocate", "BudgetExceeded", "memory budget exceeded: the process ran out of memory",
               within=10)
    assert r["printed"] == ["before"]
    # the parent (this driver) never grew: the 8 GiB were the child's to fail
    assert r["peak_rss"] < GiB
    r = expect(results, "spin", "BudgetExceeded", "time budget exceeded: the script ran longer than 1 s "
               "(its process was stopped) (limit 1 s)", within=1.0 + 2.0 + SLACK_S)
    expect(results, "segfault", "ScriptError", "internal error: the script's process was killed by SIGSEGV")
    expect(results, "signal", "ScriptError", "internal error: the script's process was killed by SIGTERM")
    r = expect(results, "fine", None)
    assert r["printed"] == ["still here"] and r["variables"] == {"x": "[1, 2]"}


@needs_fork
def test_the_childs_cpu_limit_stops_a_spin_the_clock_would_stop_later() -> None:
    setup = _WALL_SETUP + "RUN = RUN_CPU\n"
    results = run_cases([case("cpu", "$home__spin.tap()", timeout_s=30.0)], memory=4 * GiB, timeout=60, setup=setup)
    r = expect(results, "cpu", "BudgetExceeded", "time budget exceeded: the script used more than its CPU time "
               "(1 s; its process was stopped)", within=5)
    assert r["budget"] == "time"


@needs_fork
def test_the_child_gives_the_same_results_as_in_process() -> None:
    """The escape corpus and the budget messages: same category, message, span and output."""
    from test_sandbox_escapes import CORPUS, _budgets_for, _fake

    from tapir.dsl.fake_runtime import FakeRuntime
    from tapir.dsl.isolation import run_script_isolated

    for case_id, src, _, _ in CORPUS:
        here = run_script(src, _fake().factory(), _budgets_for(case_id), output=None)
        there = run_script_isolated(src, _fake().factory(), _budgets_for(case_id), output=None)
        assert there.error is not None and here.error is not None
        assert (type(there.error), there.error.message, there.error.span, there.error.hint) == \
               (type(here.error), here.error.message, here.error.span, here.error.hint), case_id
        assert there.error.render() == here.error.render()
        assert getattr(there.error, "budget", None) == getattr(here.error, "budget", None)
    # printed lines come back as they are printed, the variables and counts at the end
    lines: list[str] = []
    src = "for i in range(3):\n    print(i, 'é\\ud800')\nprint('no newline', end='')\nx = {'k': (1, None)}"
    there = run_script_isolated(src, output=lines.append)
    here = run_script(src, output=None)
    assert lines == list(there.printed) == list(here.printed)
    assert (there.steps, there.variables, there.error) == (here.steps, here.variables, None)
    # what the child's runtime did comes back through `collect`
    fake: FakeRuntime = _fake()
    there = run_script_isolated("$home__more.tap()", fake.factory(), output=None, collect=lambda _: fake.log())
    assert there.ok and there.actions == 1 and there.collected == ["$home__more.tap()"] and fake.log() == []


@needs_fork
def test_parameters_go_to_the_child_and_relayed_values_come_back_as_they_happen() -> None:
    """What the runner and the front ends pass through the wall: the run's parameters in, values
    sent while the script runs (the runner's live steps) out, in order with the printed lines."""
    from tapir.dsl.fake_runtime import FakeRuntime
    from tapir.dsl.inputs import ScriptInputs
    from tapir.dsl.isolation import Relay, run_script_isolated

    seen: list[tuple[str, Any]] = []

    class Reporting(FakeRuntime):
        def __init__(self, relay: Relay) -> None:
            super().__init__({"home__more": _fake_element()})
            self.relay = relay

        def tap(self, handle: Any, child: Any, span: Any) -> None:
            self.relay.send({"tapped": handle.name, "pid": os.getpid()})
            super().tap(handle, child, span)

    relay = Relay(lambda value: seen.append(("event", value)))
    rt = Reporting(relay)
    src = "print(param('user'))\n$home__more.tap()\nprint('done')"
    inputs = ScriptInputs.from_options(["user=ada"])
    result = run_script_isolated(src, lambda: rt, output=lambda line: seen.append(("line", line)), relay=relay,
                                 inputs=inputs, collect=lambda r: {"ok": r.ok, "pid": os.getpid()})
    assert result.ok, result.error
    assert [kind for kind, _ in seen] == ["line", "event", "line"]
    assert seen[0] == ("line", "ada") and seen[2] == ("line", "done")
    event = seen[1][1]
    assert isinstance(event, dict) and event["tapped"] == "home__more"
    assert event["pid"] != os.getpid() and result.collected == {"ok": True, "pid": event["pid"]}
    assert rt.log() == []  # the tap happened on the child's copy
    # in this process the relay calls its receiver directly: the same values, in the same order
    seen.clear()
    here = run_script(src, lambda: rt, output=lambda line: seen.append(("line", line)), inputs=inputs)
    assert here.ok and [kind for kind, _ in seen] == ["line", "event", "line"] and seen[1][1]["pid"] == os.getpid()
    # a receiver that fails is a bug of the host's: the run stops with an internal error
    broken = Relay(lambda value: 1 / 0)
    failed = run_script_isolated(src, lambda: Reporting(broken), output=None, relay=broken, inputs=inputs)
    assert failed.error is not None and "internal error: a run event could not be handled: ZeroDivisionError" \
        in failed.error.message


def _fake_element() -> Any:
    from tapir.dsl.api import Kind
    from tapir.dsl.fake_runtime import FakeElement

    return FakeElement(Kind.BUTTON)


def test_the_errors_a_child_reports_are_rebuilt_without_trusting_it() -> None:
    from tapir.dsl.isolation import _decode_error

    err = _decode_error({"category": "BudgetExceeded", "message": "time budget exceeded: x (limit 1 s)",
                         "span": [1, 2, 1, 5, 1, 4], "budget": "time", "limit": 1.0, "hint": None})
    assert type(err).__name__ == "BudgetExceeded" and err.span is not None and err.limit == 1.0  # type: ignore[attr-defined]
    odd = _decode_error({"category": "os.system", "message": "m", "span": ["x"], "budget": None})
    assert type(odd).__name__ == "ScriptError" and odd.span is None
    assert isinstance(odd, TapirError)


# ---------------------------------------------------------------------------------------------
# Near misses: terminal control, megabyte messages, nested format fields, int() of long text


def test_script_output_and_error_messages_cannot_drive_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "ansi.tap").write_text('print("a\\x1b[2Jb\\x00c\\td\\re\\u202ef")\nassert False, "\\x1b[1A\\x9b0m"\n')
    for flags in ([], ["--in-process"]):
        done = _tapir("run", "ansi.tap", *flags, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert done.stdout == "a\\x1b[2Jb\\x00c\td\\re\\u202ef\n", flags
        assert "\\x1b[1A\\x9b0m" in done.stderr, done.stderr
        for raw in ("\x1b", "\x00", "\r", "\x9b", "\u202e"):
            assert raw not in done.stdout + done.stderr, (flags, raw)


def test_a_message_quotes_a_bounded_part_of_the_scripts_data() -> None:
    cases = [case("float", "x = float('x' * 999000)"), case("int", "x = int('y' * 999000)"),
             case("key", "d = {}\nx = d['k' * 999000]"), case("assert", "assert False, 'm' * 999000"),
             case("index", "x = ['a' * 999000].index('b' * 999000)")]
    results = run_cases(cases, memory=2 * GiB)
    for c in cases:
        r = results[c["id"]]
        assert r["category"] is not None and len(r["message"]) <= 2000 + 40, (c["id"], len(r["message"]))
        if len(r["message"]) > 1000:
            assert "characters cut]" in r["message"], r["message"][:200]


def test_int_of_prefixed_text_takes_every_valid_integer_up_to_the_size_budget() -> None:
    ones = "1" * 65536
    sources = {
        "binary, base 0": f"n = int('0b{ones}', 0)", "binary, base 2": f"n = int('0b{ones}', 2)",
        "binary, underscores": f"n = int('0b_' + '_'.join('{ones}'), 0)",
        "octal": "n = int('-0o' + '7' * 21845, 0)", "hex": "n = int('  0x' + 'f' * 16384 + '  ', 0)",
        "leading zeros": f"n = int('0' * 100000 + '{ones}', 2)", "decimal": "n = int('9' * 4000, 0)",
    }
    big = {"max_source": 10**6, "timeout_s": 20}
    cases = [case(cid, src, **big) for cid, src in sources.items()]
    cases.append(case("one bit over", f"n = int('0b1{ones}', 0)", **big))
    results = run_cases(cases, memory=2 * GiB)
    for cid in sources:
        expect(results, cid, None)
    expect(results, "one bit over", "BudgetExceeded", "bits would be too large")


FORMATS = ["{:{}{}}", "{:{}}{}", "{0:{1}}", "{:{}}{:{}}", "{:{}.{}}", "{:{}{}{}}", "{0:{2}}{1}", "{:>{}}"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_format_fields_are_numbered_as_in_python(fmt: str) -> None:
    args = ("a", ">", "9", "3")
    try:
        want: str | None = fmt.format(*args)
    except (ValueError, IndexError) as exc:
        want, why = None, str(exc)
    r = run_script(f"print({fmt!r}.format{args!r}, end='')", output=None)
    if want is None:
        assert r.error is not None and r.error.message == why
    else:
        assert r.error is None and r.printed == (want,)
