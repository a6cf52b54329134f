"""Model output is untrusted code (cli/confirm.py, docs/safety.md): `tapir gen --run` shows the
script and, outside CI, asks before running it unless `--yes`; a generated script cannot give
itself permissions, in `tapir eval` either, where the task's `allow:` is what the person allows."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tapir.cli.confirm import confirm_run, in_ci, script_summary, untrusted_safety
from tapir.core.errors import SafetyError, UsageError

SCRIPT = ("# allow: delete\n"
          "$note_screen__delete_button.tap()\n"
          "$account_screen__password_input.set_text(secret('NOTES_PASSWORD'))\n")


def _confirm(*, answer: bool = False, **kw: object) -> tuple[bool, str, list[str]]:
    asked: list[str] = []
    out = io.StringIO()

    def ask(question: str) -> bool:
        asked.append(question)
        return answer

    ok = confirm_run(SCRIPT, task="Delete my note", device="sim:notes", stream=out, ask=ask, **kw)  # type: ignore[arg-type]
    return ok, out.getvalue(), asked


def test_the_script_is_shown_with_what_to_notice() -> None:
    ok, shown, asked = _confirm(environ={}, interactive=True, answer=True)
    assert ok and asked == ["Run this script on sim:notes?"]
    assert shown.splitlines()[:4] == [
        "the model's script for: Delete my note",
        "  1 | # allow: delete",
        "  2 | $note_screen__delete_button.tap()",
        "  3 | $account_screen__password_input.set_text(secret('NOTES_PASSWORD'))",
    ]
    assert ("  note: line 1 asks for a permission (# allow: delete): refused, a generated script cannot give itself "
            "permissions") in shown
    assert "  note: it reads the secret NOTES_PASSWORD (typed into password fields only, never shown)" in shown


def test_no_means_not_run() -> None:
    ok, shown, asked = _confirm(environ={}, interactive=True, answer=False)
    assert not ok and len(asked) == 1 and shown.endswith("not run\n")


@pytest.mark.parametrize(("kw", "said"), [
    ({"yes": True, "environ": {}, "interactive": True}, "running it on sim:notes (--yes)"),
    ({"environ": {"CI": "true"}, "interactive": True}, "running it on sim:notes without asking: CI is set"),
    ({"environ": {}, "interactive": False},
     "running it on sim:notes without asking: no terminal to ask on (--yes says so explicitly)"),
])
def test_without_a_question_it_runs_and_says_why(kw: dict[str, object], said: str) -> None:
    ok, shown, asked = _confirm(**kw)
    assert ok and asked == [] and shown.endswith(said + "\n")


def test_ci_detection() -> None:
    assert in_ci({"CI": "true"}) and in_ci({"CI": "1"}) and in_ci({"CI": "yes"})
    assert not in_ci({}) and not in_ci({"CI": ""}) and not in_ci({"CI": "false"}) and not in_ci({"CI": "0"})
    assert script_summary("tap()\n") == []


def test_the_safety_of_a_generated_script(tmp_path: Path) -> None:
    safety = untrusted_safety(allow=["delete"], allow_apps=["org.tapir.music"], foreign_app="stop")
    assert not safety.trust_script and safety.allowed == {"delete": "--allow delete"}
    assert safety.apps == ("org.tapir.music",) and safety.foreign_app == "stop"
    with pytest.raises(SafetyError, match="cannot give itself permissions"):
        safety.grant_from_script("sensitive", "allow()", None)
    safety.apply_header("# allow: sensitive\ntap()\n")
    assert "sensitive" not in safety.allowed and safety.ignored_header == ["# allow: sensitive (line 1)"]
    with pytest.raises(UsageError, match="'not a package' is not an Android package name"):
        untrusted_safety(allow_apps=["not a package"])
    with pytest.raises(UsageError, match=r"--allow \?\?: '\?\?' is not something to allow"):
        untrusted_safety(allow=["??"])


@pytest.mark.adb
@pytest.mark.timeout(300)
def test_eval_gives_a_generated_script_the_task_s_permission_only() -> None:
    """The Notes task "Delete the note" allows `delete` in suite.yaml: a generated script that
    deletes passes; one that grants itself more (`allow("sensitive")`) fails with the guard's error."""
    from tapir.eval import EvalConfig, load_suite, run_suite
    from tapir.eval.sources import CallableSource, Generation

    suite = load_suite(Path(__file__).resolve().parent.parent / "samples" / "suite").select(
        ids=["notes/delete_note", "notes/open_note"])
    assert {t.id: t.allow for t in suite.tasks} == {"notes/delete_note": ("delete",), "notes/open_note": ()}
    scripts = {
        "notes/delete_note": '$notes_screen__note_list.match("Passwords hint").tap()\n'
                             "$note_screen__delete_button.tap()\n$delete_note_dialog__delete_button.tap()\n",
        "notes/open_note": 'allow("sensitive")\n$notes_screen__note_list.match("Meeting notes").tap()\n',
    }
    source = CallableSource("stub-model", lambda request: Generation(scripts[request.task.id]))
    run = run_suite(suite, source, EvalConfig())
    verdicts = {r.id: (r.verdict, r.category) for r in run.results}
    assert verdicts == {"notes/delete_note": ("pass", None), "notes/open_note": ("error", "SafetyError")}


# -- tapir gen --run ----------------------------------------------------------------------------------------

MUSIC = Path(__file__).resolve().parent.parent / "samples" / "music" / "music.yaml"
DELETE_PLAYLIST = ('$playlists_screen__playlist_list.match("Favourites").tap()\n'
                   "$playlist_screen__more_options_button.tap()\n"
                   '$playlist_menu__options.match("Delete playlist").tap()\n'
                   "$delete_playlist_dialog__delete_button.tap()\n")


@pytest.fixture()
def gen_asks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``tapir gen`` with a scripted model answering DELETE_PLAYLIST, and a person at a terminal
    who says no (the scripts asked about are recorded)."""
    from tapir.cli import confirm
    from tapir.codegen.backend import ScriptedBackend

    answer = f"Plan: delete it\nElements: $playlists_screen__playlist_list\n```python\n{DELETE_PLAYLIST}```"
    monkeypatch.setattr("tapir.cli.gen._backend", lambda args: ScriptedBackend([answer]))
    monkeypatch.delenv("CI", raising=False)
    asked: list[str] = []
    real = confirm.confirm_run

    def at_terminal(script: str, **kw: object) -> bool:
        asked.append(script)
        return real(script, ask=lambda q: False, interactive=True, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(confirm, "confirm_run", at_terminal)
    return asked


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_asks_first_and_a_no_runs_nothing(gen_asks: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    code = main(["gen", "Delete the playlist Favourites", "--doc", str(MUSIC), "--run", "--device", "sim:music"])
    out, err = capsys.readouterr()
    assert code == 1 and gen_asks == [DELETE_PLAYLIST]
    assert "  4 | $delete_playlist_dialog__delete_button.tap()" in err and err.rstrip().endswith("not run")
    assert "[script]" not in err and "round 1" not in err


@pytest.mark.adb
@pytest.mark.timeout(180)
def test_gen_run_in_ci_runs_without_asking_and_the_guards_apply(gen_asks: list[str], monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from tapir.cli import main

    monkeypatch.setenv("CI", "true")
    argv = ["gen", "Delete the playlist Favourites", "--doc", str(MUSIC), "--run", "--device", "sim:music",
            "--rounds", "1"]
    assert main(argv) == 1  # shown, run without asking, and the delete refused
    err = capsys.readouterr().err
    assert "running it on sim:music without asking: CI is set" in err
    assert "refused: its label says 'delete'; a sensitive action needs permission" in err
    assert main([*argv, "--allow", "delete"]) == 0  # the person allows what the task says
    err = capsys.readouterr().err
    assert "; ran without error" in err and "needs permission" not in err
