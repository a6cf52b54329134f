"""Rendering of errors: file:line:col, the source line, and a caret under the span."""

from tapir.dsl.errors import DocumentError, Problem, ScriptError, Span


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


def test_document_error_lists_every_problem() -> None:
    err = DocumentError("invalid document", [Problem("duplicate name", line=3), Problem("unknown kind", line=9)],
                        filename="app.yaml")
    assert err.render().splitlines() == [
        "app.yaml: invalid document (2 problems)",
        "app.yaml:3: error: duplicate name",
        "app.yaml:9: error: unknown kind",
    ]


def test_an_error_of_no_file_names_no_file() -> None:
    from tapir.dsl.errors import DeviceError

    assert DeviceError("device emulator-5554 is offline").render() == "DeviceError: device emulator-5554 is offline"


def test_long_lines_are_cut_around_the_error() -> None:
    source = "x = " + "+".join(["1"] * 2000) + " + y + 2"
    column = source.index("y") + 1
    err = ScriptError("name 'y' is not defined", Span(1, column, 1, column + 1), filename="a.tap", source=source)
    _, line, caret = err.render().splitlines()
    assert len(line) < 200 and line.strip().startswith("...")
    assert line[caret.index("^")] == "y" and caret.count("^") == 1
