"""``tapir`` itself: how a wrong flag is refused."""

from __future__ import annotations

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
