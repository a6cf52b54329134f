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
