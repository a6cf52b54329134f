""""embedding stage off: ... not installed" is said once, by the front end, after its output, and
only when a match needed the embedding stage: not for a run whose matches were exact, not between
`tapir test -v` lines, not once per script of a `-j 2` run."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.runtime.grounding import embedding

pytestmark = [pytest.mark.adb]

MUSIC = Path(__file__).resolve().parent.parent / "samples" / "music" / "music.yaml"
EXACT = f'# doc: {MUSIC}\n$songs_screen__song_list.match("Lanterns").tap()\n'
NEEDS_IT = f'# doc: {MUSIC}\n$songs_screen__song_list.match("a song about lamps").tap()\n'
NOTICE = "tapir: embedding stage off: no_such_embedding_package not installed"


@pytest.fixture(autouse=True)
def embedder_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The embedding packages missing (a fresh process would find them so; a forked child inherits it)."""
    monkeypatch.setitem(embedding._NEEDS, "numpy", ("no_such_embedding_package",))
    monkeypatch.setattr(embedding, "_status", None)
    monkeypatch.setattr(embedding, "_default", None)
    monkeypatch.delenv("TAPIR_EMBEDDER", raising=False)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")
    monkeypatch.chdir(tmp_path)


def _tapir(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.timeout(120)
def test_a_run_whose_matches_were_exact_says_nothing_of_it() -> None:
    Path("exact.tap").write_text(EXACT)
    code, _, err = _tapir("run", "exact.tap", "--device", "sim:music")
    assert code == 0 and "embedding" not in err, err


@pytest.mark.timeout(180)
def test_a_test_run_says_it_once_after_its_lines() -> None:
    for name in ("one.tap", "two.tap"):
        Path(name).write_text(NEEDS_IT)
    Path("exact.tap").write_text(EXACT)
    code, out, err = _tapir("test", "one.tap", "two.tap", "exact.tap", "--device", "sim:music", "-j", "2", "-v")
    assert code == 1 and "1 passed, 2 failed" in out, out + err
    assert err.count(NOTICE) == 1 and err.splitlines()[-1].startswith(NOTICE), err
    assert NOTICE not in out  # never among the steps
    code, out, err = _tapir("run", "one.tap", "--device", "sim:music")
    assert code == 1 and err.count(NOTICE) == 1, err
