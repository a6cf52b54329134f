"""Fuzz every input Tapir reads with hypothesis, and count what escapes; prints JSON.

    python bench/fuzz.py --kind scripts --cases 10000
    python bench/fuzz.py --kind all --cases 1000 --seed 3

Kinds (``fuzz_inputs.py``, ``fuzz_servers.py``):

* ``scripts``: text into ``parse_tolerant`` (never raises), the strict ``parse`` (only a
  ``TapirError``), the checker, and a run on a fake device under tight budgets (only a
  ``TapirError`` comes back, never an "internal error");
* ``documents``: YAML and JSON into the document loader (a document, or problems that say why);
* ``deep-documents``: documents nested up to 250,000 levels, in every shape, into every loader:
  past the nesting limit each refuses with a "too-deep" document problem, never a crash;
* ``uiautomator``: XML (text and bytes) into ``parse_uiautomator`` (only ``HierarchyError``; a
  parsed tree must render as AutoDroid-V2 HTML);
* ``droidbot``: DroidBot states into ``parse_droidbot_state`` (only ``HierarchyError``);
* ``lsp``: JSON-RPC frames, valid and broken, to a real ``tapir lsp``: it answers or ignores
  them and still answers a ``hover`` after each;
* ``adb``: bytes to the simulator's adbd: it answers or closes, and a valid connection after
  each case still runs ``shell:echo``;
* ``inspector``: HTTP requests and websocket messages to a real ``tapir inspect`` on the simulated
  music app: no answer is a 500, refusals are 4xx with a message, nothing is written outside the
  document's folder, and ``/api/state`` still answers after each case.

Cases are generated (no shrinking, no example database) and a case that breaks a promise is a
finding, counted by its error and where it was raised; the run goes on. Each case has
``--case-timeout`` seconds (a case past it is a finding: a hang); ``--save DIR`` keeps the
first input of each finding as a Python literal, to turn into a regression test. The report: ``cases``,
``unhandled`` (cases with a finding), ``findings`` (distinct, each with a count and the first
input, cut to 300 characters), ``seconds``, ``cases_per_s``, and the target's own counts.
Exit status 1 when anything was found. Not part of the test run: every finding becomes a small
regression test in ``tests/test_fuzz_regressions.py``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_inputs import Finding, Target  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

KINDS = ("scripts", "documents", "deep-documents", "uiautomator", "droidbot", "lsp", "adb", "inspector")


def make_target(kind: str) -> Target:
    import fuzz_inputs
    import fuzz_servers

    if kind == "scripts":
        return fuzz_inputs.script_target()
    if kind == "documents":
        return fuzz_inputs.document_target()
    if kind == "deep-documents":
        return fuzz_inputs.deep_document_target()
    if kind in ("uiautomator", "droidbot"):
        xml, droidbot = fuzz_inputs.hierarchy_targets()
        return xml if kind == "uiautomator" else droidbot
    if kind == "lsp":
        return fuzz_servers.lsp_target()
    if kind == "adb":
        return fuzz_servers.adb_target()
    if kind == "inspector":
        return fuzz_servers.inspector_target()
    raise ValueError(kind)


class _Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the case (Python code in the main thread) after ``seconds``."""
    def expire(signum: int, frame: Any) -> None:
        raise _Hang(f"the case ran for more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def where(exc: BaseException) -> str:
    """The innermost frame of Tapir's code (or the innermost at all) the error came from."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/bench/" not in f.filename and "site-packages" not in f.filename] or frames
    if not ours:
        return "?"
    f = ours[-1]
    return f"{Path(f.filename).name}:{f.lineno} ({f.name})"


def fuzz(kind: str, cases: int, seed_value: int, case_timeout: float, progress: bool,
         save: Path | None = None) -> dict[str, Any]:
    target = make_target(kind)
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    ran = 0
    unhandled = 0
    started = time.monotonic()

    @seed(seed_value)
    @settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(target.inputs)
    def case(value: Any) -> None:
        nonlocal ran, unhandled
        ran += 1
        try:
            with time_limit(case_timeout):
                target.check(value)
        except Exception as exc:  # noqa: BLE001 - every escape is what is being counted
            unhandled += 1
            text = str(exc).splitlines()[0][:200] if str(exc) else ""
            error = text if isinstance(exc, Finding | _Hang) else f"{type(exc).__name__}: {text}"
            # a finding is told apart by its message; an escaped error by its type and origin
            key = (error, "") if isinstance(exc, Finding | _Hang) else (type(exc).__name__, where(exc))
            entry = findings.setdefault(key, {"error": error, "where": key[1], "count": 0,
                                              "example": repr(value)[:300]})
            entry["count"] += 1
            if save is not None and entry["count"] == 1:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{kind}-{len(findings)}.repr").write_text(repr(value) + "\n", encoding="utf-8")
        if progress and ran % 500 == 0:
            print(f"\r{kind}: {ran}/{cases} cases, {unhandled} unhandled", end="", file=sys.stderr, flush=True)

    try:
        case()
    finally:
        target.close()
    if progress:
        print(file=sys.stderr)
    seconds = time.monotonic() - started
    return {
        "kind": kind, "cases": ran, "unhandled": unhandled, "distinct": len(findings),
        "findings": sorted(findings.values(), key=lambda f: -f["count"]),
        "seconds": round(seconds, 1), "cases_per_s": round(ran / seconds, 1) if seconds else None,
        "seed": seed_value, "target": target.stats(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", choices=[*KINDS, "all"], required=True, help="what to fuzz")
    parser.add_argument("--cases", type=int, default=10_000, help="cases per kind (default 10,000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--case-timeout", type=float, default=30.0, metavar="S",
                        help="seconds one case may take before it counts as a hang (default 30)")
    parser.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="write the first input of each finding to DIR/KIND-N.repr (a Python literal)")
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    kinds = KINDS if args.kind == "all" else (args.kind,)
    warnings.simplefilter("ignore")  # hypothesis warns about the size of the seeds' reprs
    reports = [fuzz(k, args.cases, args.seed, args.case_timeout, not args.no_progress, args.save) for k in kinds]
    out: dict[str, Any] = reports[0] if len(reports) == 1 else {
        "kinds": reports, "cases": sum(r["cases"] for r in reports),
        "unhandled": sum(r["unhandled"] for r in reports), "seconds": round(sum(r["seconds"] for r in reports), 1)}
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 1 if out["unhandled"] else 0


if __name__ == "__main__":
    sys.exit(main())
