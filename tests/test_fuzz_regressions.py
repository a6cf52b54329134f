"""Regression tests for what ``bench/fuzz.py`` found: each input once broke its reader's promise
(only ``TapirError`` from scripts, problems from documents, ``HierarchyError`` from dumps and
states). The smallest input that showed each is kept here; docs/reliability.md tells how to
fuzz."""

from __future__ import annotations

import pytest

from tapir.core.errors import HierarchyError, TapirSyntaxError
from tapir.docgen.loader import loads_document
from tapir.dsl.parser import parse, parse_tolerant
from tapir.hierarchy import html_view, parse_droidbot_state, parse_uiautomator

# -- scripts ----------------------------------------------------------------------------------

def test_an_unfinished_conditional_before_an_open_fstring_is_a_syntax_error() -> None:
    # the tolerant parse looked up 'ELSE' in the table of expected words, which lacked it
    source = "a if f'{'"
    result = parse_tolerant(source)
    assert result.errors and "'else'" in result.errors[0].message
    with pytest.raises(TapirSyntaxError):
        parse(source)


# -- documents --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, words", [
    ("format: 1\napp: \x80\n", 2, "the character '\\x80' is not allowed"),
    ("a: \x07", 1, "the character '\\x07' is not allowed"),
    ("\x00", 1, "the character '\\x00' is not allowed"),
    ("format: 1\nscreens:\n  - \ud800\n", 3, "not Unicode"),  # a lone surrogate, as an editor may send
])
def test_characters_yaml_refuses_are_problems_with_a_line(text: str, line: int, words: str) -> None:
    result = loads_document(text, source="doc.yaml")
    assert result.document is None
    (problem,) = result.errors
    assert problem.line == line and words in problem.message and problem.code == "syntax"


# -- uiautomator dumps ------------------------------------------------------------------------

def test_a_dump_declaring_an_unknown_encoding_is_a_hierarchy_error() -> None:
    with pytest.raises(HierarchyError, match="malformed uiautomator dump"):
        parse_uiautomator('<?xml version="1.0" encoding="NULLNULL"?><hierarchy><node/></hierarchy>')


def test_a_dump_with_a_lone_surrogate_is_read() -> None:
    tree = parse_uiautomator('<hierarchy><node text="a\ud800b" bounds="[0,0][10,10]"/></hierarchy>')
    assert tree.node(0).text == "a?b"
    with pytest.raises(HierarchyError):
        parse_uiautomator("\x00\ud800")


# -- DroidBot states and the HTML form ----------------------------------------------------------

def test_a_class_name_with_characters_xml_names_refuse_still_renders() -> None:
    # \w matched '²' and 'º', which no XML name may hold: the HTML form did not parse
    state = {"foreground_activity": "a/.B", "views": [
        {"temp_id": 0, "parent": -1, "children": [1, 2], "class": "x.Gr\u00b2oup\u00ba",
         "bounds": [[0, 0], [100, 100]]},
        {"temp_id": 1, "parent": 0, "children": [], "class": "android.widget.TextView", "text": "hi",
         "bounds": [[0, 0], [10, 10]]},
        {"temp_id": 2, "parent": 0, "children": [], "class": "android.widget.TextView", "text": "ho",
         "bounds": [[0, 10], [10, 20]]},
    ]}
    view = html_view(parse_droidbot_state(state))
    assert view.tag(0) == "Gr_oup_"
    assert [n.id for n in view.xpath("//Gr_oup_/p")] == [1, 2]


def test_json_true_is_not_a_view_id() -> None:
    # `"children": [true]` named view 1 (a bool is an int in Python); the HTML form then read the
    # id back as 'True' and failed with a ValueError
    state = {"foreground_activity": "a/.B", "width": True, "views": [
        {"temp_id": 0, "parent": -1, "children": [True], "class": "android.widget.FrameLayout",
         "bounds": [[0, 0], [100, 100]]},
        {"temp_id": 1, "parent": 0, "children": [], "class": "android.widget.TextView", "text": "hi",
         "bounds": [[0, 0], [10, 10]]},
    ]}
    tree = parse_droidbot_state(state)
    assert [n.text for n in tree] == ["", "hi"] and tree.width == 100  # from the root, not `true`
    assert [n.id for n in html_view(tree).xpath("//p")] == [1]
    with pytest.raises(HierarchyError, match="bad temp_id"):
        parse_droidbot_state({"views": [{"temp_id": True, "children": []}]})
