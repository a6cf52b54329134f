"""The run trace: one JSON object per line, written and flushed as each thing happens.

A trace answers "what did the run do, and why there?" after the fact: for each UI call the
script line, the element, how it was grounded (identifier k, fuzzy, embedding, or reached by
navigation), the score, the bounds acted on, the screen before and after, how many hierarchy
dumps it cost and where the time went. Each line is flushed before the next action starts, so a
crash or a killed run loses nothing that already happened.

Lines carry an ``event`` field:

* ``session``: the first line (device, document, script);
* ``action``: a call of the script (``tap``, ``set_text``, ``get_text``, ``len``, ``exists``,
  ``wait``, ``sleep``, ``launch_app``, ``screenshot``...; a wait has ``looks`` and ``waited_s``,
  a screenshot the ``file``);
* ``watcher``: a watcher tapped an interruption away (name, rule, count, the label tapped,
  screens before and after), or reached its limit (``exhausted``);
* ``navigation``: a step the runtime took by itself to reach an element's screen (Algorithm 1);
* ``scroll``: a swipe the runtime made to bring list items into view;
* ``repeat``: how many more times the read on the line before was made with the same result (a
  polling loop), written when the run of reads ends and each time the count doubles;
* ``guard``: a guard decided (``tapir.runtime.guards``): a sensitive tap allowed, confirmed or
  refused; another app in front left or stopping the run; a secret refused for a plain field;
* ``end``: the last line, with the session's totals (dumps, device actions).

With screenshots on (``StepScreenshots``), the ``session`` line and every ``action`` line of a call
that sent input or failed carry ``screenshot``: a PNG file name in the screenshots folder.

``read_trace`` reads a trace back (tolerating a torn last line from a crash). ``MaskedTrace`` is
the layer every runtime writes through: a ``secret()`` value never reaches a sink, as a value
(``*****``) or inside any text (a field that shows it, an error that quotes it), so reports built
from traces inherit the masking.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from tapir.core.nesting import load_json

TRACE_FORMAT = "tapir-trace/1"


class TraceSink(Protocol):
    """Where trace records go; ``write`` must make the record durable before returning."""

    def write(self, record: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NullTrace:
    """A sink that keeps nothing (the default when no ``--trace`` is asked for)."""

    def write(self, record: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


class MemoryTrace:
    """A sink that keeps the records in a list (tests, benchmarks)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        # round-trip through JSON so what is kept is exactly what a file would hold
        self.records.append(json.loads(_encode(record)))

    def close(self) -> None:
        return None

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("event") == kind]


class Masker(Protocol):
    """What masks secrets (``tapir.core.secrets.Redactor``)."""

    def mask_value(self, value: Any) -> Any: ...


class MaskedTrace:
    """Masks secrets in every record before ``inner`` sees it (see the module docstring)."""

    def __init__(self, inner: TraceSink, masker: Masker) -> None:
        self.inner = inner
        self.masker = masker

    def write(self, record: dict[str, Any]) -> None:
        self.inner.write(self.masker.mask_value(record))

    def close(self) -> None:
        self.inner.close()


class JsonLinesTrace:
    """Appends records to a file (or an open text stream), one JSON line each, flushed at once."""

    def __init__(self, target: str | Path | IO[str], *, fsync: bool = False) -> None:
        if isinstance(target, str | Path):
            self._stream: IO[str] = open(target, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
            self._owned = True
            self.path: Path | None = Path(target)
        else:
            self._stream = target
            self._owned = False
            self.path = None
        self._fsync = fsync
        self._closed = False

    def write(self, record: dict[str, Any]) -> None:
        if self._closed:
            return
        self._stream.write(_encode(record) + "\n")
        self._stream.flush()
        if self._fsync and self._owned:
            os.fsync(self._stream.fileno())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._owned:
            self._stream.close()


def _plain(value: Any) -> Any:
    """Values that JSON cannot hold (tuples are fine) become their text."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _encode(record: dict[str, Any]) -> str:
    return json.dumps(_plain(record), ensure_ascii=False, separators=(",", ":"))


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The records of a trace file, in order. A last line cut short by a crash is skipped."""
    return list(iter_trace(path))


def iter_trace(path: str | Path) -> Iterator[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = load_json(line, filename=str(path))  # nested too deep: a DocumentError naming the file
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                return  # torn by a crash mid-write: everything before it is intact
            raise
        if isinstance(record, dict):
            yield record
