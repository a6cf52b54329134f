"""Hostile scripts, one representative per attack class, each run under OS limits: what it costs.

    python bench/sandbox_attacks.py [--baseline DIR] [--timeout S] [--memory GIB] [--only NAME ...]

Each attack runs in a fresh process (``tapir run FILE --timeout 2``, or a small driver calling
``run_script`` for attacks that need other budgets or a hostile device runtime) with an
address-space limit (``--memory``, default 4 GiB) and a wall-clock limit (``--timeout``, default
60 s; the process group is killed then). For each it reports the wall time, the peak resident
memory of the process and its children (the largest one, ``peak_rss_mib``, and the whole process
tree sampled every 10 ms as proportional set size, ``tree_peak_mib``), how it ended (exit status
or signal) and the last line of its error output. ``--baseline DIR`` runs every attack a second
time with ``DIR`` first on PYTHONPATH (a checkout of an older commit, as ``DIR/tapir``), so that
before and after sit side by side. It also measures what the child-process wall adds to a run: ``tapir run`` of a
one-line script with and without ``--in-process``, and ``run_script`` against
``run_script_isolated`` in one process.

Prints JSON. The scripts are written out here rather than imported from the tests because the
baseline may be a checkout that has neither.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

REPO_PKG = Path(__file__).resolve().parent.parent

_DEEP_TUPLE = "t = ()\nfor i in range(20000):\n    t = ((((((((((t,),),),),),),),),),)\n"
_LONG = "s = 'a' * 1000000\nt = 'a' * 999999 + 'b'\n"
#: Grow to about 16 MiB under the 1 GiB default, run past a look at memory, then allocate with
#: one kind of operation for ever (round one's overshoot: 1.6 GiB).
_FILL = ("x = 2**65000\ny = -x\nkeep = []\nfor i in range(1000):\n    keep.append('x' * 999990 + str(i))\n"
         "for i in range(300000):\n    pass\n")
_UNBOUNDED = {"budgets": {"max_steps": 10**9, "timeout_s": 60}}

#: name -> (class, how, script, extra): how is "cli" (tapir run FILE --timeout 2 EXTRA...) or
#: "api" (the driver below: run_script with the budgets in EXTRA, or a hostile runtime).
ATTACKS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "deep tuple as a dict key": ("crash", "cli", _DEEP_TUPLE + "d = dict(zip([t], [1]))\nprint('survived')\n", {}),
    "nested comprehension conditions at max_depth 10,000": (
        "crash", "api",
        "def f(n):\n    return [1 for i in [1] if [1 for j in [1] if [1 for k in [1] if f(n + 1)]]]\nf(0)\n",
        {"budgets": {"max_depth": 10_000, "max_steps": 10**8, "timeout_s": 30}}),
    "big ints of a range": ("memory", "cli", "b = 2**65000\nx = list(range(b, b + 10**6))\n", {}),
    "enumerate sixty times": ("memory", "cli", "xs = list(range(10**6))\nkeep = []\nfor i in range(60):\n"
                              "    keep.append(enumerate(xs))\n", {}),
    "int of hex text, then arithmetic": ("memory", "cli", "n = int('f' * 1000000, 16)\nkeep = [n + i for i in "
                                         "range(2000)]\n", {}),
    "str.format with 300,000 fields": ("deadline", "cli", "s = ('{0}' * 300000).format(1)\nprint(len(s))\n", {}),
    "% with 200,000 fields": ("deadline", "cli", "s = ('%(a)s' * 200000) % {'a': 1}\nprint(len(s))\n", {}),
    "colliding dict keys": ("deadline", "cli", "keys = [i * (2**61 - 1) for i in range(60000)]\n"
                            "d = dict(zip(keys, keys))\nprint(len(d))\n", {}),
    "4M-bit integer division": ("deadline", "cli", "n = int('f' * 1000000, 16)\nd = int('f' * 500000, 16)\n"
                                "q = n // d\nprint(q > 0)\n", {}),
    "round(1, -10**9)": ("deadline", "cli", "x = round(1, -10**9)\nprint(x)\n", {}),
    "in over 1 MB strings": ("deadline", "cli", _LONG + "xs = [s] * 500000\nprint(t in xs)\n", {}),
    "a megabyte of x = 1": ("deadline", "cli", "x = 1\n" * 170_000, {}),
    "a megabyte of x = 1, size limit raised": (
        "deadline", "api", "x = 1\n" * 170_000, {"budgets": {"timeout_s": 2, "max_source": 10**7}}),
    "f-string with 200,000 fields, size limit raised": (
        "deadline", "api", "x = 1\ns = f\"" + "{x}" * 200_000 + "\"\n",
        {"budgets": {"timeout_s": 2, "max_source": 10**7}}),
    "def with 100,000 parameters, size limit raised": (
        "deadline", "api", "def f(" + ", ".join(f"a{i}" for i in range(100_000)) + "):\n    pass\n",
        {"budgets": {"timeout_s": 2, "max_source": 10**7}}),
    "lone surrogate without a newline": ("unclean", "cli", "print('\\ud800', end='')\n", {}),
    "doc: /proc/self/environ": ("unclean", "cli", "# doc: /proc/self/environ\nprint(1)\n", {}),
    "doc: a YAML file of secrets": ("unclean", "cli", "# doc: secrets.yaml\nprint(1)\n", {"files": {
        "secrets.yaml": "aws_secret_access_key: AKIAFAKE\ndb_password: hunter2\n"}}),
    "host class in a message": ("unclean", "cli", "q = 'a'.startswith(len)\n", {}),
    "fill to the budget, then negate big ints": ("memory", "api", _FILL + "while True:\n    keep.append(-x)\n",
                                                 _UNBOUNDED),
    "fill to the budget, then add big ints": ("memory", "api", _FILL + "while True:\n    keep.append(x + y + x)\n",
                                              _UNBOUNDED),
    "fill to the budget, then small values": (
        "memory", "api", _FILL + "while True:\n    keep.append((str(i) * 12, [i] * 60, {i: i}, f'{i}-{i}'))\n",
        _UNBOUNDED),
    "ANSI escapes and NUL in output": ("unclean", "cli", 'print("\\x1b[2J\\x1b[1;1Hall tests passed\\x00\\r")\n', {}),
    "a megabyte in an error message": ("unclean", "cli", "x = float('x' * 999000)\n", {}),
    "nested str.format fields": ("unclean", "cli", 'print("{:{}{}}".format("a", ">", "9"))\n', {}),
    "int('0b' + 65,536 ones, 0)": ("unclean", "cli", "n = int('0b' + '1' * 65536, 0)\nprint(n.bit_length() "
                                   "if False else 'read')\n", {}),
    "device runtime allocates 8 GiB": ("wall", "api", "$home__allocate.tap()\n", {"hostile": True}),
    "device runtime spins": ("wall", "api", "$home__spin.tap()\n", {"hostile": True, "budgets": {"timeout_s": 2}}),
    "device runtime segfaults": ("wall", "api", "$home__segfault.tap()\n", {"hostile": True}),
}

_DRIVER = textwrap.dedent('''
    import ctypes, json, sys
    from tapir.dsl.budget import Budgets
    from tapir.dsl.interpreter import run_script
    try:
        from tapir.dsl.isolation import run_script_isolated as run
    except ImportError:  # a baseline without the child process
        run = run_script
    spec = json.loads(sys.argv[1])
    factory = None
    if spec.get("hostile"):
        from tapir.dsl.api import Kind
        from tapir.dsl.fake_runtime import FakeElement, FakeRuntime

        class Hostile(FakeRuntime):
            def tap(self, handle, child, span):
                how = handle.name.split("__")[1]
                if how == "allocate":
                    keep = bytearray(8 << 30)
                elif how == "spin":
                    while True:
                        pass
                elif how == "segfault":
                    ctypes.string_at(0)
                return super().tap(handle, child, span)

        factory = lambda: Hostile({f"home__{n}": FakeElement(Kind.BUTTON) for n in ("allocate", "spin", "segfault")})
    known = {k: v for k, v in spec.get("budgets", {}).items() if k in Budgets.__dataclass_fields__}
    r = run(open(spec["file"]).read(), factory, Budgets(**known), print, filename=spec["file"])
    if r.error is not None:
        print(r.error.render(), file=sys.stderr)
        sys.exit(1)
''')


def run_limited(argv: list[str], *, cwd: str, pythonpath: str, memory: int, timeout: float) -> dict[str, Any]:
    """Run ``argv`` under the limits; wall time, peak RSS (with children), how it ended."""

    def limit() -> None:
        os.setsid()  # its own process group: a timeout kills what it started too
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    env = {**os.environ, "PYTHONPATH": pythonpath, "PYTHONIOENCODING": "utf-8"}
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=limit)
    tree_peak = [0]
    sampling = threading.Event()

    def sample() -> None:  # the process group's memory (PSS: pages shared after fork count once)
        while not sampling.wait(0.01):
            tree_peak[0] = max(tree_peak[0], _group_pss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n, s: out.__setitem__(n, s.read()), args=(n, s))
               for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    for t in readers:
        t.start()
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    sampling.set()
    sampler.join()
    elapsed = time.monotonic() - started
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
    except ProcessLookupError:
        pass
    for t in readers:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = out.get("stderr", b"").decode("utf-8", "replace").strip().splitlines()
    if os.WIFSIGNALED(status):
        how = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        if os.WTERMSIG(status) == signal.SIGKILL and elapsed >= timeout:
            how = f"still running after {timeout:g} s (killed)"
    else:
        how = f"exit {os.WEXITSTATUS(status)}"
    message = next((line.strip() for line in err if ": " in line and not line.startswith(" ")), err[-1] if err else "")
    return {"seconds": round(elapsed, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024),
            "tree_peak_mib": round(tree_peak[0] / (1 << 20)), "ended": how,
            "message": message[:200], "stdout": out.get("stdout", b"").decode("utf-8", "replace")[:80],
            "stderr_has_secret": any(s in "\n".join(err) for s in ("hunter2", "AKIAFAKE", "aws_secret"))}


def _group_pss(pgid: int) -> int:
    """Bytes of proportional set size of the processes in group ``pgid`` (the attack and the
    child it forked), from /proc."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            with open(f"/proc/{entry}/smaps_rollup", "rb") as f:
                total += next(int(line.split()[1]) * 1024 for line in f if line.startswith(b"Pss:"))
        except (OSError, ValueError, IndexError, StopIteration):
            continue
    return total


def run_attack(name: str, pythonpath: str, workdir: Path, memory: int, timeout: float) -> dict[str, Any]:
    cls, how, script, extra = ATTACKS[name]
    folder = workdir / str(abs(hash((name, pythonpath))))
    folder.mkdir(parents=True, exist_ok=True)
    for fname, text in extra.get("files", {}).items():
        (folder / fname).write_text(text)
    path = folder / "attack.tap"
    path.write_text(script, encoding="utf-8")
    if how == "cli":
        argv = [sys.executable, "-m", "tapir.cli", "run", str(path), "--timeout", "2"]
    else:
        spec = {"file": str(path), "budgets": extra.get("budgets", {}), "hostile": extra.get("hostile", False)}
        argv = [sys.executable, "-c", _DRIVER, json.dumps(spec)]
    return {"class": cls, **run_limited(argv, cwd=str(folder), pythonpath=pythonpath, memory=memory, timeout=timeout)}


def startup_cost(pythonpath: str, workdir: Path, rounds: int) -> dict[str, Any]:
    """What the child process adds: `tapir run` of a one-line script with and without it
    (alternating), and the same two ways in one process."""
    hello = workdir / "hello.tap"
    hello.write_text("print('hello')\n")
    env = {**os.environ, "PYTHONPATH": pythonpath}
    cli: dict[str, list[float]] = {"child": [], "in_process": []}
    for _ in range(rounds):
        for mode, flags in (("child", []), ("in_process", ["--in-process"])):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tapir.cli", "run", str(hello), *flags], env=env, check=True,
                           capture_output=True)
            cli[mode].append(time.perf_counter() - started)
    inner = subprocess.run([sys.executable, "-c", textwrap.dedent(f'''
        import json, statistics, time
        from tapir.dsl.interpreter import run_script
        from tapir.dsl.isolation import run_script_isolated
        times = {{"run_script": [], "run_script_isolated": []}}
        for _ in range({rounds * 5}):
            for f in (run_script, run_script_isolated):
                t = time.perf_counter(); f("x = 1", output=None); times[f.__name__].append(time.perf_counter() - t)
        print(json.dumps({{k: round(statistics.median(v) * 1000, 2) for k, v in times.items()}}))
    ''')], env=env, check=True, capture_output=True, text=True)
    per_run = json.loads(inner.stdout)
    return {
        "tapir_run_ms_median": {k: round(statistics.median(v) * 1000) for k, v in cli.items()},
        "one_process_ms_median": per_run,
        "added_ms": round(per_run["run_script_isolated"] - per_run["run_script"], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", metavar="DIR", help="also run each attack with DIR first on PYTHONPATH")
    ap.add_argument("--timeout", type=float, default=60.0, help="wall-clock limit of each run (default 60 s)")
    ap.add_argument("--memory", type=float, default=4.0, help="address-space limit in GiB (default 4)")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="run only these attacks (names as in the output)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of the start-up measurement (default 10)")
    args = ap.parse_args()
    memory = int(args.memory * (1 << 30))
    ours = os.environ.get("PYTHONPATH") or str(REPO_PKG.parent)
    names = args.only or list(ATTACKS)
    report: dict[str, Any] = {"benchmark": "sandbox_attacks", "limits": {"memory_gib": args.memory,
                                                                         "timeout_s": args.timeout}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        attacks = {}
        for name in names:
            entry: dict[str, Any] = {}
            if args.baseline:
                entry["before"] = run_attack(name, args.baseline, work, memory, args.timeout)
            entry["after"] = run_attack(name, ours, work, memory, args.timeout)
            attacks[name] = entry
            print(f"{name}: {json.dumps(entry)}", file=sys.stderr, flush=True)
        report["attacks"] = attacks
        if not args.only:
            report["child_process"] = startup_cost(ours, work, args.rounds)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
