"""Fuzz targets that read text or data in process: scripts, app documents, uiautomator dumps,
DroidBot states (``bench/fuzz.py`` runs them; the language server and adbd are in
``fuzz_servers.py``).

Each target is a hypothesis strategy of inputs and a ``check`` that feeds one input to the real
reader and raises ``Finding`` when the reader broke its promise: anything escaping but the error
it documents (``TapirError`` for scripts, ``DocumentError`` for documents, ``HierarchyError``
for hierarchies), an "internal error" where a script error was due, a failed document without
a problem listed. Inputs come from three sources in every target: mutations of real inputs
(the sample scripts, documents and the simulator's own screens; DroidTask recordings too when
``$TAPIR_UPSTREAM`` or ../shared/upstream has them, read in place), structure-aware random
values, and random text.

    target = script_target()
    target.check("x = [i for i in range(3)]\\nprint(x)\\n")     # None: handled
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


class Finding(Exception):
    """An input made a reader break its promise (the message says how)."""


@dataclass
class Target:
    name: str
    inputs: st.SearchStrategy[Any]
    check: Callable[[Any], None]
    #: Extra figures for the report (servers' threads, restarts...).
    stats: Callable[[], dict[str, Any]] = field(default=lambda: {})
    close: Callable[[], None] = field(default=lambda: None)


def upstream() -> Path | None:
    folder = Path(os.environ.get("TAPIR_UPSTREAM") or REPO.parent / "shared" / "upstream")
    return folder if folder.is_dir() else None


# ---------------------------------------------------------------------------------------------
# Mutations of real inputs

MUTATIONS = ("delete", "insert", "duplicate", "replace", "swap_lines", "truncate", "indent", "repeat")


def mutate(text: str, steps: Sequence[tuple[str, float, int, str]]) -> str:
    """Apply ``(kind, where 0..1, size, piece)`` steps to ``text``."""
    for kind, where, size, piece in steps:
        at = int(where * len(text))
        if kind == "delete":
            text = text[:at] + text[at + size:]
        elif kind == "insert":
            text = text[:at] + piece + text[at:]
        elif kind == "duplicate":
            text = text[:at] + text[at:at + size] + text[at:]
        elif kind == "replace":
            text = text[:at] + piece + text[at + len(piece):]
        elif kind == "swap_lines":
            lines = text.split("\n")
            if len(lines) > 1:
                i, j = at % len(lines), (at + size) % len(lines)
                lines[i], lines[j] = lines[j], lines[i]
                text = "\n".join(lines)
        elif kind == "truncate":
            text = text[:at]
        elif kind == "indent":
            lines = text.split("\n")
            if lines:
                i = at % len(lines)
                lines[i] = " " * (size % 9) + lines[i].lstrip(" ")
                text = "\n".join(lines)
        elif kind == "repeat":
            text = text[:at] + piece * (size * 8) + text[at:]
    return text


def mutated(seeds: Sequence[str], pieces: Sequence[str]) -> st.SearchStrategy[str]:
    step = st.tuples(st.sampled_from(MUTATIONS), st.floats(0, 1), st.integers(0, 80),
                     st.one_of(st.sampled_from(list(pieces)), st.text(max_size=6)))
    return st.builds(mutate, st.sampled_from(list(seeds)), st.lists(step, min_size=1, max_size=6))


json_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
              st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def replace_somewhere(value: Any, path: Sequence[int], new: Any, *, delete: bool = False) -> Any:
    """``value`` with the node reached by following ``path`` (indices into each container's
    keys or items, modulo their count) replaced by ``new`` (or removed)."""
    if not path or not isinstance(value, dict | list) or not value:
        return new
    if isinstance(value, dict):
        keys = list(value)
        key = keys[path[0] % len(keys)]
        out = dict(value)
        if delete and len(path) == 1:
            del out[key]
        else:
            out[key] = replace_somewhere(value[key], path[1:], new, delete=delete)
        return out
    items = list(value)
    i = path[0] % len(items)
    if delete and len(path) == 1:
        del items[i]
    else:
        items[i] = replace_somewhere(items[i], path[1:], new, delete=delete)
    return items


def structurally_mutated(seeds: Sequence[Any]) -> st.SearchStrategy[Any]:
    """Decoded JSON/YAML seeds with a few nodes replaced by random values or removed."""
    edit = st.tuples(st.lists(st.integers(0, 1000), min_size=1, max_size=7), json_values, st.booleans())

    def apply(seed: Any, edits: list[tuple[list[int], Any, bool]]) -> Any:
        for path, new, delete in edits:
            seed = replace_somewhere(seed, path, new, delete=delete)
        return seed

    return st.builds(apply, st.sampled_from(list(seeds)), st.lists(edit, min_size=1, max_size=4))


ODD = ["\x00", "\x07", "\ufeff", "\u2028", "\r", "\r\n", "\t", "\ud800", "\U0001f600", "é", "\\", "'", '"',
       "{", "}", "[", "]", "<", ">", "&", "&amp;", "&#0;", "%", "${", "*", "&a", "!!python/object", "---", "...",
       "9" * 40, "-1", "1e309", "NaN", "null", "true"]


# ---------------------------------------------------------------------------------------------
# Scripts: parse_tolerant, the strict parse, the checker, a run on a fake device

SCRIPT_PIECES = [
    "if ", "elif ", "else:", "while ", "for ", " in ", "def ", "return ", "pass", "break", "continue", "assert ",
    "not ", " and ", " or ", " is ", "True", "False", "None", "lambda", "import os", "class ", "try:", "with ",
    "global ", "nonlocal ", "yield", "await ", "x", "y", "i", "__class__", "_x", "f", "(", ")", "[", "]", "{", "}",
    ":", ",", ";", ".", "=", "==", "+=", "**=", "+", "-", "*", "**", "/", "//", "%", "<", ">=", "!=", "@", "~",
    "|", "&", "^", "<<", "\n", "\n    ", "\n        ", "    ", "#", "# doc: x.yaml\n", "'a'", '"b"', "'''",
    'f"{x}"', "f'{", "!r", ":>10", "0", "1", "-1", "2**64", "1.5", "1e308", "0x1f", "1_000", "10**10**10",
    "print(", "len(", "range(", "str(", "int(", "sorted(", "min(", "max(", "sum(", "enumerate(", "zip(",
    "dict(", "list(", "tuple(", "set(", "abs(", "round(", "isinstance(", "getattr(", "type(", "open(",
    "tap(", ".tap()", ".long_tap()", ".get_text()", ".set_text(", ".match(", ".scroll(", ".exists()",
    ".wait(", ".wait_gone()", ".get_attributes()", ".append(", ".format(", ".split(", ".join(", ".items()",
    ".keys()", ".get(", ".upper()", "back()", "enter()", "sleep(", "wait_text(", "param(", "watch(",
    "launch_app()", "stop_app()", "screenshot(", "$", "$songs_screen__song_list", "$songs_screen__song_title",
    "$now_playing_screen__title_text", "$settings_screen__theme_row", "$main_menu__options", "$nope__nothing",
    "[0]", "[-1]", "[1:2]", "[::-1]", " for x in ", " if ",
] + ODD

ELEMENT_REFS = ["$songs_screen__song_list", "$songs_screen__now_playing_bar", "$now_playing_screen__title_text",
                "$settings_screen__theme_value", "$theme_dialog__theme_options", "$songs_screen__search_box",
                "$unknown__element"]
BUILTINS = ["len", "range", "str", "int", "float", "bool", "list", "dict", "tuple", "sorted", "reversed", "min",
            "max", "sum", "abs", "round", "enumerate", "zip", "any", "all", "print", "repr", "ord", "chr",
            "isinstance", "type", "divmod", "pow", "hex", "bin", "format", "map", "filter", "hash", "iter", "next"]
METHODS = ["append", "extend", "pop", "insert", "index", "count", "sort", "reverse", "get", "keys", "values",
           "items", "update", "setdefault", "split", "join", "strip", "replace", "upper", "lower", "format",
           "startswith", "find", "zfill", "center", "ljust", "encode", "tap", "get_text", "match", "exists",
           "wait", "scroll", "set_text", "get_attributes", "long_tap"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "and",
          "or", "is not"]
NAMES = ["x", "y", "s", "items", "n", "f"]


def _program() -> st.SearchStrategy[str]:
    atoms = st.one_of(
        st.integers(-(2**70), 2**70).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.text(max_size=6).map(repr),
        st.sampled_from(NAMES + ELEMENT_REFS + ["None", "True", "False", "[]", "{}", "()", "''", "[1, 2, 3]",
                                                "{'a': 1}", "range(5)", "'a,b,c'", "10**6", "[0] * 1000"]),
    )

    def extend(e: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        args = st.lists(e, max_size=3).map(", ".join)
        return st.one_of(
            st.tuples(e, st.sampled_from(BINOPS), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["not ", "-", "+"]), e).map("".join),
            st.tuples(st.sampled_from(BUILTINS), args).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(e, st.sampled_from(METHODS), args).map(lambda t: f"{t[0]}.{t[1]}({t[2]})"),
            st.tuples(e, e).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(e, e, e).map(lambda t: f"{t[0]}[{t[1]}:{t[2]}]"),
            st.tuples(e, e, e).map(lambda t: f"[{t[0]} for x in {t[1]} if {t[2]}]"),
            st.tuples(e, e).map(lambda t: f"f'{{{t[0]}}}-{{{t[1]}!r:>4}}'"),
            st.lists(e, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            st.tuples(e, e).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
            st.tuples(e, e, e).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        )

    expr = st.recursive(atoms, extend, max_leaves=10)
    simple = st.one_of(
        st.tuples(st.sampled_from(NAMES), expr).map(lambda t: f"{t[0]} = {t[1]}"),
        st.tuples(st.sampled_from(NAMES), st.sampled_from(["+=", "*=", "-="]), expr).map(" ".join),
        expr.map(lambda e: f"print({e})"),
        st.tuples(expr, expr).map(lambda t: f"assert {t[0]}, {t[1]}"),
        expr,
    )
    block = st.one_of(
        simple,
        st.tuples(expr, simple, simple).map(lambda t: f"if {t[0]}:\n    {t[1]}\nelse:\n    {t[2]}"),
        st.tuples(expr, simple).map(lambda t: f"for x in {t[0]}:\n    {t[1]}"),
        st.tuples(expr, simple).map(lambda t: f"n = 0\nwhile {t[0]} and n < 50:\n    n += 1\n    {t[1]}"),
        st.tuples(expr, expr, expr).map(lambda t: f"def f(a, b={t[0]}):\n    return {t[1]}\nx = f({t[2]})"),
        st.tuples(expr, expr).map(lambda t: f"def f(a):\n    return f(a) if {t[0]} else {t[1]}\nx = f(1)"),
    )
    return st.lists(block, min_size=1, max_size=8).map(lambda b: "\n".join(b) + "\n")


@cache
def _music_document() -> Any:
    from tapir.docgen.loader import load_document

    return load_document(SAMPLES / "music" / "music.yaml")


def _fake_runtime() -> Any:
    from tapir.dsl.fake_runtime import FakeElement, FakeItem, FakeRuntime

    elements = {}
    for el in _music_document().elements:
        if el.item_of is not None:
            continue
        items = [FakeItem(o) for o in el.options] or [FakeItem(f"item {i}") for i in range(3)] if el.is_list else []
        elements[el.name] = FakeElement(el.kind, text=el.description[:20], items=items)
    return FakeRuntime(elements)


def script_target() -> Target:
    from tapir.core.errors import TapirError
    from tapir.docgen.symbols import build_symbols
    from tapir.dsl.budget import Budgets
    from tapir.dsl.checker import check
    from tapir.dsl.interpreter import run_script
    from tapir.dsl.parser import parse, parse_tolerant

    symbols = build_symbols(_music_document())
    budgets = Budgets(max_steps=20_000, max_actions=20, timeout_s=1.0, max_depth=20, max_size=10_000,
                      max_int_bits=4096, max_output=10_000)
    seeds = [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.rglob("*.tap")) if "generated" not in p.parts]
    ran = {"strict_ok": 0, "runs": 0, "run_ok": 0}

    def run(source: str) -> None:
        tolerant = parse_tolerant(source, "fuzz.tap")
        check(tolerant.module, symbols)
        try:
            module = parse(source, "fuzz.tap")
        except TapirError as exc:
            exc.render()
            if not tolerant.errors:
                raise Finding("the strict parse failed where the tolerant one found nothing") from exc
            return
        ran["strict_ok"] += 1
        if tolerant.errors:
            raise Finding(f"the tolerant parse found {tolerant.errors[0].message!r} in a script the strict one reads")
        check(module, symbols)
        result = run_script(module, _fake_runtime().factory(), budgets, output=None, symbols=symbols,
                            filename="fuzz.tap", source=source)
        ran["runs"] += 1
        ran["run_ok"] += result.ok
        if result.error is not None:
            if not isinstance(result.error, TapirError):
                raise Finding(f"run_script returned {type(result.error).__name__}")
            if "internal error" in result.error.message:
                raise Finding(result.error.message.splitlines()[0][:200])
            result.error.render()

    inputs = st.one_of(
        mutated(seeds, SCRIPT_PIECES),
        st.lists(st.sampled_from(SCRIPT_PIECES), max_size=40).map("".join),
        _program(),
        _program().flatmap(lambda p: mutated([p], SCRIPT_PIECES)),
        st.text(max_size=200),
    )
    return Target("scripts", inputs, run, stats=lambda: dict(ran))


# ---------------------------------------------------------------------------------------------
# App documents: YAML and JSON into the loader

SMALL_DOCUMENT = """\
format: 1
app: {package: org.example.app, name: Example, start_screen: home}
screens:
  home:
    description: The first screen.
    signature: {activity: .Main, all: ["//node[@resource-id='org.example.app:id/list']"]}
    elements:
      home__list:
        kind: list
        description: The items.
        identifiers: ["//node[@resource-id='org.example.app:id/list']"]
        options: [One, Two]
        paths: [[home__menu.tap(), "menu__options.match('Home').tap()"]]
      home__title:
        kind: text
        item_of: home__list
        description: An item's title.
        identifiers: [{html: "//p[@resource_id='title']"}]
      home__menu:
        kind: button
        description: Opens the menu.
        identifiers: ["//node[@content-desc='More options']"]
        leads_to: menu
        sensitive: false
  menu:
    description: The overflow menu.
    elements:
      menu__options:
        kind: list
        description: The menu entries.
        identifiers: ["//node[@resource-id='org.example.app:id/menu']"]
        options: [Home, Settings]
watchers:
  rate:
    when_text: Rate us?
    tap_text: Later
    limit: 2
"""

DOCUMENT_PIECES = ["\n", ":", ": ", "- ", "  ", "    ", "[", "]", "{", "}", ",", "'", '"', "#", "|", ">", "?",
                   "kind: ", "list", "button", "identifiers: ", "//node[@text='x']", "//*[", "paths: ",
                   "tap()", "match(", "leads_to: ", "item_of: ", "screens:", "elements:", "watchers:",
                   "format: 2", "app:", "home__list", "menu__options", "nowhere", "signature:", "html: ",
                   "dialect: html", "limit: 0", "&anchor ", "*anchor", "<<: *anchor", "!!binary ", "~"] + ODD


def document_target() -> Target:
    from tapir.core.errors import DocumentError
    from tapir.docgen.loader import loads_document

    texts = [SMALL_DOCUMENT] + [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*/*.yaml"))
                                if p.parent.name != "suite"]
    decoded = [yaml.safe_load(t) for t in texts]
    counts = {"loaded": 0, "refused": 0}

    def dump(value: Any, as_json: bool) -> str:
        if as_json:
            return json.dumps(value, ensure_ascii=False)
        return yaml.safe_dump(value, allow_unicode=True, sort_keys=False)

    def load(text: str) -> None:
        try:
            result = loads_document(text, source="fuzz.yaml")
        except DocumentError as exc:
            if not exc.message:
                raise Finding("a DocumentError without a message") from exc
            counts["refused"] += 1
            return
        if result.document is None:
            if not result.errors:
                raise Finding("no document and no error said why")
            for problem in result.errors:
                if not problem.message:
                    raise Finding("a problem without a message")
            counts["refused"] += 1
        else:
            counts["loaded"] += 1

    inputs = st.one_of(
        mutated(texts[:1] * 4 + texts[1:], DOCUMENT_PIECES),
        st.tuples(structurally_mutated(decoded), st.booleans()).map(lambda t: dump(*t)),
        json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
        json_values.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
        st.lists(st.sampled_from(DOCUMENT_PIECES), max_size=40).map("".join),
        st.text(max_size=200),
    )
    return Target("documents", inputs, load, stats=lambda: dict(counts))


def deep_document_target() -> Target:
    """Documents nested deep, in every shape (flow and block YAML, JSON lists and objects, deep in
    a field the loader reads or one it does not), into every loader: the YAML/JSON loader, the
    compiled-symbols reader and the guarded JSON reader. Past ``MAX_DEPTH`` each must refuse with
    its document error ("too-deep"), never a ``RecursionError`` or a crash."""
    from tapir.core.errors import DocumentError
    from tapir.core.nesting import MAX_DEPTH, load_json
    from tapir.docgen.loader import loads_document
    from tapir.dsl.symbols import SymbolTable

    counts = {"refused_too_deep": 0, "loaded_or_other_problem": 0}
    app = '"app": {"package": "org.x", "name": "X", "start_screen": "main"}'

    def shape(kind: str, n: int, where: str) -> str:
        if kind == "json-lists":
            return "{" + app + f', "{where}": ' + "[" * n + "]" * n + "}"
        if kind == "json-objects":
            return "{" + app + f', "{where}": ' + '{"a": ' * n + "1" + "}" * n + "}"
        if kind == "yaml-flow":
            return f"{where}: " + "[" * n + "]" * n + "\nscreens: {}\n"
        if kind == "yaml-mixed":
            return f"{where}: " + "[{a: " * n + "1" + "}]" * n + "\n"
        if kind == "yaml-compact":
            return f"app: {{}}\n{where}:\n  " + "- " * n + "1\n"
        return f"app: {{}}\n{where}:\n" + "".join("  " * i + "  - \n" for i in range(min(n, 2500)))

    def check(case: tuple[str, int, str, bool]) -> None:
        kind, n, where, truncated = case
        text = shape(kind, n, where)
        if truncated:
            text = text[: len(text) * 2 // 3]
        result = loads_document(text, source="fuzz.json")
        codes = [p.code for p in result.errors]
        if result.document is None and not codes:
            raise Finding("no document and no error said why")
        if n > MAX_DEPTH + 2 and not truncated and "too-deep" not in codes:
            raise Finding(f"nested {n} deep and not refused as too deep: {codes[:3]}")
        counts["refused_too_deep" if "too-deep" in codes else "loaded_or_other_problem"] += 1
        if kind.startswith("json"):
            for read in (lambda t: load_json(t), SymbolTable.from_json):
                try:
                    read(text)
                except (DocumentError, ValueError):
                    pass

    inputs = st.tuples(
        st.sampled_from(("json-lists", "json-objects", "yaml-flow", "yaml-mixed", "yaml-compact", "yaml-block")),
        st.one_of(st.integers(0, 3 * MAX_DEPTH), st.integers(3 * MAX_DEPTH, 20_000),
                  st.sampled_from((MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 250_000))),
        st.sampled_from(("screens", "notes", "watchers", "format", "extra")),
        st.booleans())
    return Target("deep-documents", inputs, check, stats=lambda: dict(counts))


# ---------------------------------------------------------------------------------------------
# Hierarchies: uiautomator XML and DroidBot states

@cache
def _screens() -> list[str]:
    """uiautomator dumps of the simulator's screens: each sample app on a few screens, the
    launcher, a system dialog."""
    from tapir.sim.apps import APP_NAMES, get_app
    from tapir.sim.device import SimDevice

    dumps = []
    for name in APP_NAMES:
        app = get_app(name)
        device = SimDevice([app])
        dumps.append(device.dump_xml())
        device.start_app(app.package)
        dumps.append(device.dump_xml())
        rng = random.Random(name)
        for _ in range(3):  # a few screens deeper
            device.run_shell(f"input tap {rng.randrange(1080)} {rng.randrange(300, 2300)}")
            dumps.append(device.dump_xml())
        device.show_dialog()
        dumps.append(device.dump_xml())
    root = upstream()
    if root is not None:
        real = sorted((root / "uiautomator").rglob("*.xml"))[:20]
        dumps += [p.read_text(encoding="utf-8", errors="replace") for p in real]
    return dumps


XML_PIECES = ["<", ">", "/>", "</node>", "<node ", "<node>", "</hierarchy>", "<hierarchy>", " bounds=\"", "\"",
              "[0,0][1080,2400]", "[-5,3][2,1]", "[1e9,0][0,0]", "[]", "[0,0]", " text=\"", " class=\"",
              " resource-id=\"", " clickable=\"true\"", " index=\"x\"", "<!--", "-->", "<![CDATA[", "]]>",
              "<!DOCTYPE x [<!ENTITY a 'aaaa'>]>", "&a;", "&amp;", "&#x0;", "&#65;",
              "<?xml version='1.0' encoding='UTF-16'?>",
              "ERROR: could not get idle state.", "UI hierchary dumped to: /sdcard/window_dump.xml\n"] + ODD


ATTRIBUTE_VALUES = ["", "[0,0][0,0]", "[-5,3][2,1]", "[1080,2400][0,0]", "[0,0][99999999999999999999,1]",
                    "[1,2]", "[a,b][c,d]", "0,0,10,10", "[0,0][10,10][20,20]", "true", "false", "TRUE", "1", "nan",
                    "-1", "99999999999999999999", "android.widget.Button", ".", "..", "a:id/", ":id/x", "é" * 300,
                    "x" * 5000, "\u202e", "'", '"', "<>&"]


def _as_droidbot(xml: str) -> dict[str, Any]:
    """A uiautomator dump as a DroidBot state (``views`` linked by temp_id/parent/children)."""
    from tapir.hierarchy import parse_uiautomator

    tree = parse_uiautomator(xml)
    views = []
    for n in tree:
        b = n.bounds
        views.append({
            "temp_id": n.id, "parent": -1 if n.parent is None else n.parent, "children": list(n.children),
            "class": n.class_name, "resource_id": n.resource_id or None, "text": n.text or None,
            "content_description": n.content_desc or None, "bounds": [[b.x1, b.y1], [b.x2, b.y2]],
            "visible": n.visible, "clickable": n.clickable, "long_clickable": n.long_clickable,
            "checkable": n.checkable, "checked": n.checked, "selected": n.selected, "scrollable": n.scrollable,
            "editable": n.editable, "enabled": n.enabled, "focusable": n.focusable, "focused": n.focused,
            "is_password": n.password, "package": n.package,
        })
    return {"tag": "fuzz", "foreground_activity": f"{tree.package}/.Main", "width": 1080, "height": 2400,
            "views": views}


def hierarchy_targets() -> tuple[Target, Target]:
    from tapir.core.errors import HierarchyError
    from tapir.hierarchy import html_view, parse_droidbot_state, parse_uiautomator
    from tapir.hierarchy.parse import parse_tree

    dumps = _screens()
    counts = {"uiautomator_parsed": 0, "droidbot_parsed": 0, "refused": 0, "refused_when_read": 0, "nodes_read": 0}

    def use(tree: Any, kind: str) -> None:
        counts[f"{kind}_parsed"] += 1
        try:
            html_view(tree)  # what grounding reads: every parsed tree must render,
            # every field decode (fields are decoded when first read: a bad one is refused then),
            read = [n for n in tree if (n.bounds, n.clickable, n.visible, n.text, n.resource_name)]
            counts["nodes_read"] += len(read)
            tree.xpath("//node[@clickable='true']")  # and identifiers run on the dump itself
        except HierarchyError:
            counts["refused_when_read"] += 1

    def xml(data: str | bytes) -> None:
        try:
            tree = parse_uiautomator(data)
        except HierarchyError:
            counts["refused"] += 1
            return
        use(tree, "uiautomator")

    states: list[dict[str, Any]] = [_as_droidbot(x) for x in dumps]
    root = upstream()
    if root is not None:
        for p in sorted((root / "droidtask").glob("apps/*/states/state_*.json"))[:40]:
            states.append(json.loads(p.read_text(encoding="utf-8")))

    def droidbot(data: Any) -> None:
        try:
            tree = parse_droidbot_state(data) if isinstance(data, dict) else parse_tree(data)
        except HierarchyError:
            counts["refused"] += 1
            return
        use(tree, "droidbot")

    attribute_edit = st.tuples(st.integers(0, 10**6), st.sampled_from(
        ["bounds", "text", "class", "resource-id", "content-desc", "clickable", "index", "package", "enabled",
         "visible-to-user", "checked", "password", "scrollable"]), st.one_of(st.sampled_from(ATTRIBUTE_VALUES),
                                                                           st.text(max_size=12)))

    def edit_xml(xml: str, edits: list[tuple[int, str, str]]) -> str:
        """A dump with some attributes of some nodes changed (a well-formed dump, odd values)."""
        from lxml import etree

        root = etree.fromstring(xml.encode("utf-8"))
        nodes = root.xpath("//node")
        for i, name, value in edits:
            if nodes:
                clean = "".join(ch for ch in value
                                if ch in "\t\n\r" or " " <= ch <= "\ud7ff" or "\ue000" <= ch <= "\ufffd")
                nodes[i % len(nodes)].set(name, clean)
        return etree.tostring(root, encoding="unicode")

    def encodings(text: str, encoding: str) -> bytes:
        return text.encode(encoding, "replace" if encoding == "latin-1" else "surrogatepass")

    xml_inputs = st.one_of(
        st.builds(edit_xml, st.sampled_from(dumps), st.lists(attribute_edit, min_size=1, max_size=6)),
        mutated(dumps, XML_PIECES),
        st.tuples(mutated(dumps, XML_PIECES), st.sampled_from(["utf-8", "utf-16", "latin-1"])).map(
            lambda t: encodings(*t)),
        st.lists(st.sampled_from(XML_PIECES), max_size=50).map("".join),
        st.binary(max_size=200),
        st.text(max_size=200),
    )
    # views are edited where they matter: bounds, links, flags
    view_edit = st.tuples(st.integers(0, 10**6), st.sampled_from(
        ["bounds", "temp_id", "parent", "children", "class", "text", "visible", "clickable", "resource_id",
         "content_description", "package", "enabled"]), json_values | st.integers(-3, 3))

    def edit_views(state: dict[str, Any], edits: list[tuple[int, str, Any]]) -> dict[str, Any]:
        views = [dict(v) if isinstance(v, dict) else v for v in state.get("views", [])]
        for i, key, value in edits:
            if views and isinstance(views[i % len(views)], dict):
                views[i % len(views)][key] = value
        return {**state, "views": views}

    droidbot_inputs = st.one_of(
        st.builds(edit_views, st.sampled_from(states), st.lists(view_edit, min_size=1, max_size=6)),
        structurally_mutated(states),
        json_values,
        st.dictionaries(st.sampled_from(["views", "foreground_activity", "width", "height", "tag"]), json_values),
        mutated([json.dumps(s) for s in states[:8]], ["{", "}", "[", "]", ",", ":", '"', "null", "-1"] + ODD),
    )
    return (Target("uiautomator", xml_inputs, xml, stats=lambda: dict(counts)),
            Target("droidbot", droidbot_inputs, droidbot, stats=lambda: dict(counts)))
