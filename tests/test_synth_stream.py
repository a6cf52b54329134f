"""``tapir synth`` keeps what it made when stopped: each pair reaches the JSONL as it is kept, a
Ctrl-C or SIGTERM writes the data card marked interrupted, and ``--resume`` continues the file."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from tapir.cli import main
from tapir.cli.synth import _SynthProgress
from tapir.core.errors import UsageError
from tapir.synth import PairWriter, read_pairs

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "samples" / "notes" / "notes.yaml"
MUSIC = ROOT / "samples" / "music" / "music.yaml"
ARGS = ["synth", "--doc", str(NOTES), "--device", "sim:notes", "--seed", "2", "--in-process", "-q"]


def _metas(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")  # whole lines only
    return [json.loads(line)["meta"] for line in text.splitlines()]


def _card(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".card.json").read_text(encoding="utf-8"))


def test_sigterm_leaves_the_pairs_so_far_and_a_card_marked_interrupted(tmp_path):
    out = tmp_path / "n.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "tapir.cli", *ARGS, "-o", str(out), "--count", "20"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not (out.is_file() and out.stat().st_size):
        time.sleep(0.2)  # the first pair is in the file before the run ends
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("tapir synth: interrupted (SIGTERM) after ")
    metas = _metas(out)
    card = _card(out)
    assert 1 <= len(metas) < 20 and f"after {len(metas)} of 20 pairs" in lines[0]
    assert card["interrupted"] is True and card["pairs"] == len(metas) and card["resumed"] == 0
    assert "**interrupted** after" in out.with_name("n.card.md").read_text(encoding="utf-8")


def test_an_interrupt_after_n_pairs_leaves_n_lines_and_resume_continues_them(tmp_path, monkeypatch, capsys):
    out = tmp_path / "n.jsonl"
    write = PairWriter.write

    def write_then_stop(self, pair, document):  # Ctrl-C right after the second pair is written
        write(self, pair, document)
        if self.lines == 2:
            raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(PairWriter, "write", write_then_stop)
        assert main([*ARGS, "-o", str(out), "--count", "4"]) == 130
    err = capsys.readouterr().err
    assert "interrupted (SIGINT) after 2 of 4 pairs" in err and "--resume" in err and "Traceback" not in err
    first = out.read_bytes()
    assert [m["id"] for m in _metas(out)] == ["notes/0001", "notes/0002"]
    card = _card(out)
    assert card["interrupted"] is True and card["pairs"] == 2

    assert main([*ARGS, "-o", str(out), "--count", "4", "--resume"]) == 0
    assert "resuming" in capsys.readouterr().err
    metas = _metas(out)
    assert out.read_bytes().startswith(first)  # the earlier pairs are kept as they were
    assert [m["id"] for m in metas] == ["notes/0001", "notes/0002", "notes/0003", "notes/0004"]
    assert len({m["script"] for m in metas}) == 4 and len({m["task"] for m in metas}) == 4  # no duplicates
    card = _card(out)
    assert card["interrupted"] is False and card["pairs"] == 4 and card["resumed"] == 2

    # a file already complete: nothing to do; another app's file: refused
    assert main([*ARGS, "-o", str(out), "--count", "4", "--resume"]) == 0
    assert len(_metas(out)) == 4
    assert main(["synth", "--doc", str(MUSIC), "-o", str(out), "--count", "5", "--resume", "-q"]) == 2
    assert "of the app 'notes', which is not given" in capsys.readouterr().err
    assert len(_metas(out)) == 4


def test_resume_of_a_file_that_does_not_exist_says_so_and_starts_it(tmp_path, capsys):
    out = tmp_path / "new.jsonl"
    assert main([*ARGS, "-o", str(out), "--count", "1", "--resume"]) == 0
    assert f"nothing to resume: {out} does not exist yet; starting it" in capsys.readouterr().err
    assert len(_metas(out)) == 1


def _record(i: int) -> str:
    meta = {"id": f"notes/{i:04d}", "app": "notes", "task": f"task {i}", "script": f"$a{i}.tap()\n",
            "complexity": 1, "checks": ["state.x == 1"], "repairs": []}
    answer = f"Plan: template {i}\nElements: $a{i}\n```python\n$a{i}.tap()\n```"
    return json.dumps({"messages": [{"role": "assistant", "content": answer}], "meta": meta})


def test_resume_cuts_a_torn_last_line_and_refuses_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "t.jsonl"
    whole = _record(1) + "\n" + _record(2) + "\n"
    out.write_text(whole + _record(3)[:40], encoding="utf-8")  # a crash tore the third line
    pairs, good = read_pairs(out)
    assert [p.id for p in pairs] == ["notes/0001", "notes/0002"] and good == len(whole.encode())
    assert pairs[1].template_task == "template 2" and pairs[1].checks == ("state.x == 1",)
    writer = PairWriter(out, resume=True)
    assert len(writer.resumed) == 2 and out.read_text(encoding="utf-8").endswith(_record(3)[:40])
    writer._open()  # the file is cut back to its whole lines when it is first written
    writer.close()
    assert out.read_text(encoding="utf-8") == whole
    out.write_text(_record(1) + "\nnot json\n" + _record(2) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"t\.jsonl:2: not a line of tapir synth"):
        read_pairs(out)


def test_progress_line_says_pairs_walks_and_time_and_quiet_says_nothing():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with _SynthProgress(console, 10, every_s=0.0, done={"notes": 2}) as progress:
        progress.update("notes", 2, 10)
        progress.update("notes", 3, 10)
    text = buf.getvalue()
    assert "synth notes: 10 pairs wanted" in text
    assert "synth notes: 3/10 pairs kept, 2 walks tried, " in text
    quiet = io.StringIO()
    with _SynthProgress(Console(file=quiet, force_terminal=False), 10, quiet=True, every_s=0.0) as progress:
        progress.update("notes", 1, 10)
    assert quiet.getvalue() == ""
