"""``tapir`` itself: how a wrong flag is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tapir.cli import main


@pytest.mark.parametrize(("argv", "usage"), [
    (["run", "x.tap", "--frobnicate"], "usage: tapir run "),
    (["doc", "validate", "x.yaml", "--frob"], "usage: tapir doc validate "),
    (["model", "list", "--zz"], "usage: tapir model list"),
    (["--zz"], "usage: tapir [-h]"),
])
def test_an_unknown_flag_is_refused_with_its_commands_usage(argv: list[str], usage: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith(usage), err
    prog = usage.removeprefix("usage: ").split(" [")[0].strip()
    assert f"{prog}: error: unrecognized arguments: {argv[-1]}" in err


@pytest.mark.parametrize("command", [["run", "s.tap"], ["test", "s.tap"], ["repl"]])
def test_an_unknown_simulated_app_in_tapir_toml_is_refused_as_the_files_mistake(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tapir.toml").write_text('[device]\ndefault = "sim:nope"\n', encoding="utf-8")
    (tmp_path / "s.tap").write_text("print(1)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'tapir.toml'}: [device] default: unknown simulated app 'nope'" in err
    assert "known apps: music" in err
