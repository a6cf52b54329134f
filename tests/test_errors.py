"""Rendering of errors: file:line:col, the source line, and a caret under the span."""

from pathlib import Path

import pytest

from tapir.core.diagnostics import Diagnostic, render_diagnostics
from tapir.core.errors import DocumentError, ScriptError, Span, TapirSyntaxError


def test_render_points_at_the_span() -> None:
    err = ScriptError("name 'x' is not defined", Span(2, 5, 2, 6), filename="a.tap", source="y = 1\nz = x + 1\n")
    assert err.render().splitlines() == [
        "a.tap:2:5: ScriptError: name 'x' is not defined",
        "    z = x + 1",
        "        ^",
    ]


def test_caret_follows_tab_expansion() -> None:
    err = ScriptError("bad", Span(1, 2, 1, 3), source="\tx = 1")
    line, caret = err.render().splitlines()[1:3]
    assert line[caret.index("^")] == "x"


def test_caret_follows_escaped_control_characters() -> None:
    # the quoted line shows ESC as the four characters \x1b: the caret moves with them
    err = ScriptError("bad", Span(1, 17, 1, 22), source='x = "\x1b[2J"; y = 1 / 0')
    line, caret = err.render().splitlines()[1:3]
    assert "\x1b" not in line and "\\x1b" in line
    assert line[caret.index("^"):caret.rindex("^") + 1] == "1 / 0"


def test_document_error_lists_every_problem() -> None:
    problems = [Diagnostic.at_line("duplicate name", 3, 5, code="duplicate-name"),
                Diagnostic.at_line("unknown kind", 4, code="bad-kind", severity="warning")]
    source = "app:\n  name: x\nscreens:\n  - name: x\n    kind: slider\n"
    err = DocumentError("invalid document", problems, filename="app.yaml", source=source)
    assert err.render().splitlines() == [
        "app.yaml: invalid document (1 error, 1 warning)",
        "app.yaml:3:5: error[duplicate-name]: duplicate name",
        "    screens:",
        "        ^^^",  # a point span underlines the word there (a key, up to its ':')
        "app.yaml:4: warning[bad-kind]: unknown kind",
        "      - name: x",
        "      ^^^^^^^^^",  # only the line is known: its text is underlined
    ]


def test_diagnostics_and_errors_share_one_renderer_with_the_caret_right_on_tabs() -> None:
    source = "if x:\n\tfoo.tap()\n"
    d = Diagnostic("unknown-name", "error", Span(2, 2, 2, 5), "unknown name 'foo'", hint="define it first")
    err = TapirSyntaxError("unknown name 'foo'", Span(2, 2, 2, 5), source=source, filename="s.tap",
                           hint="define it first")
    rendered, raised = d.render(source, "s.tap").splitlines(), err.render().splitlines()
    assert rendered[0] == "s.tap:2:2: error[unknown-name]: unknown name 'foo'"
    assert raised[0] == "s.tap:2:2: TapirSyntaxError: unknown name 'foo'"
    assert rendered[1:] == raised[1:]  # the same quote, caret and hint
    line, caret = rendered[1], rendered[2]
    assert line[caret.index("^"): caret.rindex("^") + 1] == "foo"
    assert rendered[3] == "  hint: define it first"
    assert err.diagnostic() == Diagnostic("syntax", "error", Span(2, 2, 2, 5), "unknown name 'foo'",
                                          hint="define it first")
    assert render_diagnostics([d, d], source, "s.tap").splitlines()[-1] == "2 errors, 0 warnings"


def test_an_error_of_no_file_names_no_file() -> None:
    from tapir.core.errors import DeviceError

    assert DeviceError("device emulator-5554 is offline").render() == "DeviceError: device emulator-5554 is offline"


def test_long_lines_are_cut_around_the_error() -> None:
    source = "x = " + "+".join(["1"] * 2000) + " + y + 2"
    column = source.index("y") + 1
    err = ScriptError("name 'y' is not defined", Span(1, column, 1, column + 1), filename="a.tap", source=source)
    _, line, caret = err.render().splitlines()
    assert len(line) < 200 and line.strip().startswith("...")
    assert line[caret.index("^")] == "y" and caret.count("^") == 1


def test_usage_errors_below_the_cli_name_settings_and_the_cli_names_flags(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    """A layer below the command line names the setting; only the CLI turns it into its flag."""
    from tapir.cli import main
    from tapir.core.errors import UsageError
    from tapir.dsl.inputs import ScriptInputs

    with pytest.raises(UsageError) as caught:
        ScriptInputs.from_options(["user"])
    assert caught.value.setting == "param" and "--" not in caught.value.message
    assert caught.value.in_words() == "param: 'user': expected NAME=VALUE, e.g. user=ada"
    script = tmp_path / "s.tap"
    script.write_text("print(1)\n")
    assert main(["run", str(script), "--param", "user"]) == 2
    assert "tapir: --param: 'user': expected NAME=VALUE" in capsys.readouterr().err
