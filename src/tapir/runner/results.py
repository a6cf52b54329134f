"""What a test run found: per script its status and attempts, per attempt its steps.

    run.results[0].status            # 'passed' | 'failed' | 'error' | 'flaky' | 'skipped'
    run.results[0].attempts[-1].steps[2].statement   # '$songs_screen__song_list.match("x").tap()'
    run.counts()                     # {'passed': 78, 'failed': 1, 'error': 0, 'flaky': 1, 'skipped': 0}

Statuses: ``passed`` (the first attempt ran to its end), ``flaky`` (an attempt failed, a later
one passed: reported, never hidden), ``failed`` (every attempt failed in the script: an
``assert``, an element not found, a budget), ``error`` (it could not run: the check refused it,
the device could not be started or reached, an internal error), ``skipped`` (``# skip:``, or not
run because the run was interrupted). ``failure`` and ``error`` follow JUnit's distinction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["STATUSES", "Attempt", "ScriptResult", "Step", "TestRun"]

STATUSES: tuple[str, ...] = ("passed", "flaky", "failed", "error", "skipped")


@dataclass(frozen=True)
class Step:
    """One line of an attempt's trace as reports show it: a script call, or a navigation step
    or list scroll the runtime took for one."""

    seq: int
    #: ``action`` (a call of the script), ``navigation``, ``scroll`` or ``repeat``.
    event: str
    line: int | None = None
    statement: str | None = None
    call: str | None = None
    element: str | None = None
    #: How the element was found: ``identifier 0``, ``fuzzy``, ``navigation+identifier 1``...
    grounded: str | None = None
    score: float | None = None
    screen_before: str | None = None
    screen_after: str | None = None
    ms: float | None = None
    ok: bool = True
    error: str | None = None
    #: The file name of the screenshot taken after it (in its attempt's ``shots`` folder).
    screenshot: str | None = None
    #: That screenshot made small for the HTML report (``image/webp`` or ``image/jpeg`` bytes).
    thumbnail: bytes | None = field(default=None, compare=False, repr=False)
    #: The file a ``screenshot("name")`` call saved (a name in its attempt's folder).
    saved: str | None = None
    #: That file made small for the HTML report.
    saved_thumbnail: bytes | None = field(default=None, compare=False, repr=False)
    #: The trace record as written.
    record: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_record(cls, seq: int, record: dict[str, Any]) -> Step:
        error = record.get("error")
        ms = record.get("ms")
        shot = record.get("screenshot")
        detail = record.get("step") if record.get("event") == "navigation" else None
        return cls(
            seq=seq, event=str(record.get("event")), line=record.get("line"),
            statement=record.get("statement") or detail, call=record.get("call") or record.get("action"),
            element=record.get("element") or record.get("target"),
            grounded=record.get("grounded"), score=record.get("score"),
            screen_before=record.get("screen_before"), screen_after=record.get("screen_after"),
            ms=ms.get("total") if isinstance(ms, dict) else (ms if isinstance(ms, int | float) else None),
            ok=record.get("ok", True) is not False,
            error=error.get("message") if isinstance(error, dict) else (str(error) if error else None),
            screenshot=shot if isinstance(shot, str) else None,
            record=record,
        )

    def as_dict(self, shots: Path | None = None, folder: Path | None = None) -> dict[str, Any]:
        """``shots``: the folder the screenshot is in (None: it was not kept, and is left out);
        ``folder``: the attempt's folder, where ``saved`` is (None: not kept)."""
        return {
            "seq": self.seq, "event": self.event, "line": self.line, "statement": self.statement, "call": self.call,
            "element": self.element, "grounded": self.grounded, "score": self.score,
            "screen_before": self.screen_before, "screen_after": self.screen_after, "ms": self.ms, "ok": self.ok,
            "error": self.error,
            "screenshot": str(shots / self.screenshot) if shots is not None and self.screenshot else None,
            "saved": str(folder / self.saved) if folder is not None and self.saved else None,
        }


@dataclass(frozen=True)
class Attempt:
    """One run of a script on one device."""

    number: int
    ok: bool
    seconds: float
    #: The slot it ran on (``sim#2``, a serial), or None when it never reached a device.
    device: str | None = None
    #: The rendered error (file:line:col, the line, a caret) when it failed.
    error: str | None = None
    category: str | None = None
    #: ``failure`` (the script failed) or ``error`` (it could not run), as JUnit says.
    kind: str | None = None
    #: The script line the error points at.
    line: int | None = None
    printed: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    actions: int = 0
    dumps: int = 0
    device_actions: int = 0
    #: The screenshot at the start of the session (a file name in ``shots``), and its thumbnail.
    start_screenshot: str | None = None
    start_thumbnail: bytes | None = field(default=None, compare=False, repr=False)
    #: Where the attempt's files are kept (its artifacts folder: everything of a failed attempt,
    #: what ``screenshot()`` saved of a passed one); None when nothing was kept.
    folder: Path | None = None
    #: The screen when it failed, the last hierarchy dump the runtime read, and the trace
    #: (file names in ``folder``; None when there is none).
    screenshot: str | None = None
    hierarchy: str | None = None
    trace: str | None = None
    #: The failure screenshot made small for the HTML report.
    screenshot_image: bytes | None = field(default=None, compare=False, repr=False)
    #: The files the script's ``screenshot()`` calls saved, in order (names in ``folder``); kept
    #: whether the attempt passed or failed.
    saved: tuple[str, ...] = ()
    #: What the run had to say besides its result (the app was left, the embedding stage was
    #: off when a match needed it); ``tapir test`` says each once, after the summary.
    notices: tuple[str, ...] = ()

    @property
    def shots(self) -> Path | None:
        """The folder of the step screenshots, when kept (a failed attempt's; a passed one keeps
        only what ``screenshot()`` saved)."""
        return self.folder / "shots" if self.folder is not None and not self.ok else None

    def path(self, name: str | None) -> Path | None:
        """A kept file of the attempt (``attempt.path(attempt.hierarchy)``)."""
        return self.folder / name if self.folder is not None and name else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number, "ok": self.ok, "seconds": self.seconds, "device": self.device,
            "error": self.error, "category": self.category, "kind": self.kind, "line": self.line,
            "printed": list(self.printed), "actions": self.actions, "dumps": self.dumps,
            "device_actions": self.device_actions,
            "folder": str(self.folder) if self.folder else None,
            "screenshot": _text(self.path(self.screenshot)), "hierarchy": _text(self.path(self.hierarchy)),
            "trace": _text(self.path(self.trace)),
            "saved": [str(self.folder / name) for name in self.saved] if self.folder is not None else [],
            "steps": [s.as_dict(self.shots, self.folder) for s in self.steps],
        }


@dataclass(frozen=True)
class ScriptResult:
    __test__ = False  # not a pytest test class

    script: str
    status: str
    attempts: tuple[Attempt, ...] = ()
    tags: tuple[str, ...] = ()
    #: The warnings ``tapir check`` reports for the script, rendered (None when there are none).
    warnings: str | None = None
    #: Why it was skipped.
    reason: str | None = None
    #: The folder its artifacts were saved in (a failure's files, ``screenshot()`` files).
    artifacts: Path | None = None
    #: The script's text (the HTML report quotes the failing line from it).
    source: str | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "flaky", "skipped")

    @property
    def last(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def seconds(self) -> float:
        return round(sum(a.seconds for a in self.attempts), 3)

    @property
    def error(self) -> str | None:
        """The error of the last failed attempt (for a flaky script, the failure that was retried)."""
        failed = [a for a in self.attempts if not a.ok]
        return failed[-1].error if failed else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "script": self.script, "status": self.status, "tags": list(self.tags), "seconds": self.seconds,
            "warnings": self.warnings, "reason": self.reason,
            "artifacts": str(self.artifacts) if self.artifacts else None,
            "attempts": [a.as_dict() for a in self.attempts],
        }


@dataclass
class TestRun:
    """A whole run: results in the order the scripts were given."""

    __test__ = False  # not a pytest test class

    results: list[ScriptResult] = field(default_factory=list)
    #: Scripts left out by the tag filter, and those another shard runs.
    deselected: int = 0
    other_shards: int = 0
    #: Ctrl-C stopped the run (the scripts it did not reach are ``skipped``).
    interrupted: bool = False
    wall_s: float = 0.0
    started: str = ""
    #: The slots the scripts ran on (``sim#1``, serials).
    devices: tuple[str, ...] = ()
    #: Where artifacts were saved (None when no script left any: none failed or took a screenshot).
    artifacts: Path | None = None

    def __iter__(self) -> Iterator[ScriptResult]:
        return iter(self.results)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for r in self.results:
            out[r.status] += 1
        return out

    @property
    def passed(self) -> int:
        return sum(r.status in ("passed", "flaky") for r in self.results)

    @property
    def failed(self) -> int:
        return sum(r.status in ("failed", "error") for r in self.results)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.interrupted

    def summary(self) -> str:
        """``78 passed, 1 failed, 1 flaky, 2 skipped in 21.4 s`` (statuses with none left out but passed)."""
        c = self.counts()
        parts = [f"{c['passed']} passed"]
        parts += [f"{c[s]} {s if s != 'error' else 'errors' if c[s] != 1 else 'error'}"
                  for s in ("failed", "error", "flaky", "skipped") if c[s]]
        if self.deselected:
            parts.append(f"{self.deselected} deselected")
        text = ", ".join(parts)
        return text + (f" in {self.wall_s:.1f} s" if self.wall_s else "")


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None
