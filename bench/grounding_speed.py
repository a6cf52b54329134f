"""How long grounding takes on a real ~700-node uiautomator dump (Chrome search results).

    python bench/grounding_speed.py [--n 30] [--no-embedding]

A two-screen document is written from the real dumps the way upstream writes one (every
labelled interactive view an element, identifiers by upstream's rules in the ``html`` dialect,
two distinctive resource ids as each screen's signature; one element also gets a ``uiautomator``
identifier). Each measurement starts from a fresh tree, as every step of a run does (a new dump,
nothing cached), except those marked ``warm``. Prints one JSON object of medians and p90s in
milliseconds:

* ``parse``: the XML into a ``UITree``;
* ``identify_screen``: which screen is showing (renders the HTML form once);
* ``ground_identifier``: an element found by its first identifier, on a fresh tree;
* ``ground_warm``: the same after ``identify_screen`` on the same tree (the usual order);
* ``ground_uiautomator``: an element with a uiautomator-dialect identifier (builds that XML form);
* ``ground_fuzzy``: an element whose identifiers all fail (its id was removed), found by label;
* ``ground_embedding``: an element whose label was reworded, found by meaning (model loaded and
  the screen's strings cached beforehand; ``embedding_first_call`` is the first, uncached call);
* ``step``: parse + identify + ground, what one script step costs before the tap.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tapir.core.document import AppDocument, AppInfo, Dialect, Element, Identifier, Screen, Signature
from tapir.dsl.api import Kind
from tapir.hierarchy import UITree, parse_uiautomator, parse_view_list
from tapir.runtime.grounding import Grounder, GroundingConfig, default_embedder
from tapir.runtime.grounding.baseline import upstream_identifiers
from tapir.runtime.grounding.screen_view import ScreenView

DUMPS = Path(__file__).resolve().parent.parent.parent / "shared" / "upstream" / "uiautomator"


def timed(fn: Callable[[Any], object], n: int, setup: Callable[[], Any] = lambda: None) -> dict[str, float]:
    """Median and p90 of ``fn(setup())`` in milliseconds; ``setup`` is not timed."""
    samples = []
    for _ in range(n):
        arg = setup()
        start = time.perf_counter()
        fn(arg)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"median_ms": round(statistics.median(samples), 3), "p90_ms": round(samples[int(0.9 * (n - 1))], 3)}


def screen_of(name: str, tree: UITree) -> Screen:
    view = ScreenView(tree)
    elements = []
    for nid, el in view.html.elements.items():
        if el.described and el.tag in ("button", "checkbox", "input"):
            ids = upstream_identifiers(view, nid)
            if ids:
                kind = {"button": Kind.BUTTON, "checkbox": Kind.CHECKBOX, "input": Kind.INPUT}[el.tag]
                elements.append(Element(f"{name}__e{nid}", kind, "", ids))
    # two resource ids the screen shows once, below the window frames every screen has
    shown = [n for n in tree.nodes if n.resource_id and n.id in view.html.elements]
    counts = Counter(n.resource_name for n in shown)
    unique = [n.resource_name for n in shown if counts[n.resource_name] == 1 and n.depth >= 4][:2]
    sig = Signature(all_of=tuple(Identifier(f"//*[@resource_id='{r}']", Dialect.HTML) for r in unique))
    return Screen(name, name, sig, tuple(elements))


def without_id(tree: UITree, node_id: int) -> UITree:
    """The tree with one view's resource id removed (and optionally its label replaced)."""
    return relabel(tree, node_id, None)


def relabel(tree: UITree, node_id: int, text: str | None) -> UITree:
    views = []
    for n in tree.nodes:
        views.append({
            "temp_id": n.id, "parent": n.parent if n.parent is not None else -1, "children": list(n.children),
            "class": n.class_name, "resource_id": "" if n.id == node_id else n.resource_id,
            "text": text if (n.id == node_id and text is not None) else n.text, "content_description": n.content_desc,
            "bounds": str(n.bounds), "clickable": n.clickable, "checkable": n.checkable, "checked": n.checked,
            "selected": n.selected, "scrollable": n.scrollable, "editable": n.editable, "enabled": n.enabled,
            "visible": n.visible, "package": n.package,
        })
    return parse_view_list(views)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="repetitions per measurement")
    parser.add_argument("--no-embedding", action="store_true")
    args = parser.parse_args()
    chrome_file, maps_file = DUMPS / "chrome_search_results.xml", DUMPS / "maps_dialog.xml"
    if not chrome_file.is_file():
        print(json.dumps({"error": f"{chrome_file} not found (needs ../shared/upstream)"}))
        return 1
    data = chrome_file.read_bytes()
    chrome = parse_uiautomator(data)
    results = screen_of("search_results", chrome)
    # the "Clear Search" button, with a uiautomator identifier added in front
    clear = next(n for n in chrome.nodes if n.text == "Clear Search")
    clear_el = next(e for e in results.elements if e.name == f"search_results__e{clear.id}")
    uia = Identifier(f"//node[@resource-id='{clear.resource_id}' and @text='Clear Search']",
                     Dialect.UIAUTOMATOR)
    elements = tuple(e if e is not clear_el else Element(e.name, e.kind, "", (uia,)) for e in results.elements)
    results = Screen(results.name, results.description, results.signature, elements)
    screens = [results]
    if maps_file.is_file():
        screens.append(screen_of("maps_dialog", parse_uiautomator(maps_file.read_bytes())))
    document = AppDocument(AppInfo("com.android.chrome", "chrome", "search_results"), tuple(screens))

    # "Search by voice" (a resource id and a text): first identifier on a fresh dump
    voice = next(n for n in chrome.nodes if n.text == "Search by voice")
    voice_name = f"search_results__e{voice.id}"
    no_id = without_id(chrome, voice.id)
    reworded = relabel(chrome, voice.id, "Voice search")

    embedder = None if args.no_embedding else default_embedder()
    exact = Grounder(document, config=GroundingConfig(use_embedding=False))
    fresh = lambda: parse_uiautomator(data)  # noqa: E731 - a fresh tree for every sample

    def checked(g: Grounder, tree: UITree, name: str, method: str) -> None:
        found = g.ground(name, tree)
        assert found is not None and found.method == method, (name, method, g.last_detail)

    checked(exact, chrome, voice_name, "identifier")
    checked(exact, no_id, voice_name, "fuzzy")
    assert exact.identify_screen(chrome).name == "search_results"

    def step(_: None) -> None:
        tree = parse_uiautomator(data)
        exact.identify_screen(tree)
        exact.ground(voice_name, tree)

    def warm(tree: UITree) -> None:
        exact.ground(voice_name, tree)

    def warm_setup() -> UITree:
        tree = fresh()
        exact.identify_screen(tree)
        return tree

    out: dict[str, object] = {
        "file": chrome_file.name,
        "nodes": len(chrome),
        "document": document.counts(),
        "n": args.n,
        "parse": timed(lambda _: parse_uiautomator(data), args.n),
        "identify_screen": timed(exact.identify_screen, args.n, fresh),
        "ground_identifier": timed(lambda t: exact.ground(voice_name, t), args.n, fresh),
        "ground_warm": timed(warm, args.n, warm_setup),
        "ground_uiautomator": timed(lambda t: exact.ground(clear_el.name, t), args.n, fresh),
        "ground_fuzzy": timed(lambda t: exact.ground(voice_name, t), args.n, lambda: relabel(no_id, -1, None)),
        "step": timed(step, args.n),
    }
    if embedder is not None:
        g = Grounder(document, embedder=embedder)
        start = time.perf_counter()
        checked(g, reworded, voice_name, "embedding")
        out["embedding_first_call_ms"] = round((time.perf_counter() - start) * 1000, 1)
        out["ground_embedding"] = timed(lambda t: g.ground(voice_name, t), args.n,
                                        lambda: relabel(reworded, -1, None))
    else:
        out["ground_embedding"] = "embedding stage off"
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
