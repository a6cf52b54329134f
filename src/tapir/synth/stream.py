"""The JSONL written as the pairs are kept, so a stopped ``tapir synth`` loses none of them.

    with PairWriter("data.jsonl", resume=True) as writer:        # resume: keep the file's pairs
        try:
            run = synthesize(apps, config, on_pair=writer.write, resume=writer.resumed)
        except SynthInterrupted as stopped:
            run = stopped.run
        writer.finish(run)                                       # the data card beside it

Each pair's line reaches the file in one ``os.write`` of the whole line, with SIGINT and SIGTERM
held back meanwhile, so a run stopped by a signal (or killed outright: a write to a file is not
cut short by the process's death) leaves only whole lines. A torn last line (only a crash of the
machine leaves one) is cut off when the file is resumed. The file is (re)written from the first
pair kept, or at ``finish``: a run that fails on its arguments leaves an earlier file alone.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import UsageError
from tapir.synth.pipeline import Pair, SynthRun, chat_record, write_card

__all__ = ["PairWriter", "read_pairs"]

_HELD = {signal.SIGINT, signal.SIGTERM}


def read_pairs(path: str | Path) -> tuple[list[Pair], int]:
    """The pairs of a JSONL ``tapir synth`` wrote (from each line's ``meta``) and the length in
    bytes of its whole lines; a last line without its newline that does not parse is left out."""
    path = Path(path)
    data = path.read_bytes()
    pairs: list[Pair] = []
    good = 0
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        try:
            meta = json.loads(line)["meta"]
            pair = Pair(str(meta["id"]), str(meta["app"]), "", str(meta["task"]), str(meta["script"]),
                        int(meta["complexity"]), tuple(meta.get("checks", ())), tuple(meta.get("repairs", ())),
                        # the template text is the answer's plan (chat_record writes it so)
                        _plan(json.loads(line)), tuple(meta.get("actions", ())))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            if not line.endswith(b"\n"):
                break  # torn by a crash: cut off
            raise UsageError(f"{path}:{number}: not a line of tapir synth ({type(exc).__name__}: {exc}); "
                             "--resume continues a file tapir synth wrote", setting="resume") from None
        pairs.append(pair)
        good += len(line)
    return pairs, good


def _plan(record: dict[str, Any]) -> str:
    answer = str(record["messages"][-1]["content"])
    first = answer.splitlines()[0] if answer else ""
    return first.removeprefix("Plan: ") if first.startswith("Plan: ") else ""


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait (and are raised after) while a line is written."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class PairWriter:
    """Appends each pair kept to ``out`` at once and writes the data card at ``finish`` (see the
    module docstring). ``resume``: the file's pairs are kept (``resumed``, for ``synthesize``)."""

    def __init__(self, out: str | Path, *, resume: bool = False) -> None:
        self.path = Path(out)
        self.resumed: list[Pair] = []
        self._keep: int | None = None  # bytes of the file to keep (None: start it afresh)
        if resume and self.path.is_file():
            self.resumed, self._keep = read_pairs(self.path)
        #: Lines in the file (the resumed ones included).
        self.lines = len(self.resumed)
        self._fd: int | None = None
        self._prefixes: dict[str, str] = {}

    def __enter__(self) -> PairWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            self._fd = os.open(self.path, flags | (0 if self._keep is not None else os.O_TRUNC), 0o644)
            if self._keep is not None:
                os.truncate(self._fd, self._keep)
        return self._fd

    def write(self, pair: Pair, document: AppDocument) -> None:
        """The pair's chat record as one line, whole, in the file now."""
        from tapir.codegen.prompt import render_prefix

        prefix = self._prefixes.get(pair.app)
        if prefix is None:
            prefix = self._prefixes[pair.app] = render_prefix(document)
        data = (json.dumps(chat_record(pair, document, prefix), ensure_ascii=False) + "\n").encode("utf-8")
        with _signals_held():
            fd = self._open()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            self.lines += 1

    def finish(self, run: SynthRun) -> list[Path]:
        """Close the file and write the data card of ``run`` beside it; returns the files."""
        # a pair the stop came after (kept, not yet written) is not in the file: the card counts the file
        del run.pairs[self.lines:]
        self._open()
        self.close()
        return [self.path, *write_card(run, self.path)]

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
