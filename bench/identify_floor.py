"""Screen identification and grounding against a raw floor measured in the same process.

    python bench/identify_floor.py [--n 40] [--sizes 200,688,2000,5000,10000]

On the 688-node Chrome dump of ``../shared/upstream/uiautomator`` (with a two-screen document
written by upstream's rules, as ``bench/grounding_speed.py`` writes it), or on the simulated
Weather app's forecast and its sample document when that data is absent, samples of each
measurement are interleaved in one loop so that the machine's load affects all alike:

* ``floor``: what the step would cost with bare libraries: ``lxml.etree.fromstring`` of the
  dump, one compiled XPath on it, one ``rapidfuzz.process.extractOne`` over its texts;
* ``parse``: the dump into a ``UITree`` (the hierarchy layer's part);
* ``identify``: ``Grounder.identify_screen`` on a fresh tree;
* ``ground``: ``Grounder.ground`` of an element after identification (the usual order);
* ``step``: parse + identify + ground, what one script step costs before the tap.

Prints JSON: medians in milliseconds, the ratios to the floor (``identify_ground_over_floor``:
the grounding layer's share; ``step_over_floor``: the whole step, target 2x), and, with
``--sizes``, identification time per node on trees made by repeating the dump's content
(``identify_per_node_us``; flat means linear; sizes below the dump's own are skipped).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lxml import etree
from rapidfuzz import process

from tapir.core.document import AppDocument, AppInfo
from tapir.hierarchy import parse_uiautomator
from tapir.runtime.grounding import Grounder, GroundingConfig

REPO = Path(__file__).resolve().parent.parent
DUMPS = Path(os.environ.get("TAPIR_UPSTREAM") or REPO.parent / "shared" / "upstream") / "uiautomator"


def chrome_setup() -> tuple[bytes, AppDocument, str, str, str] | None:
    """The Chrome dump, its document, an element, and the floor's XPath and label."""
    chrome_file, maps_file = DUMPS / "chrome_search_results.xml", DUMPS / "maps_dialog.xml"
    if not chrome_file.is_file():
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from grounding_speed import screen_of  # the same document as the grounding benchmark

    data = chrome_file.read_bytes()
    tree = parse_uiautomator(data)
    screens = [screen_of("search_results", tree)]
    if maps_file.is_file():
        screens.append(screen_of("maps_dialog", parse_uiautomator(maps_file.read_bytes())))
    doc = AppDocument(AppInfo("com.android.chrome", "chrome", "search_results"), tuple(screens))
    voice = next(n for n in tree.nodes if n.text == "Search by voice")
    return data, doc, f"search_results__e{voice.id}", f"//node[@resource-id='{voice.resource_id}']", voice.text


def weather_setup() -> tuple[bytes, AppDocument, str, str, str]:
    from tapir.docgen.loader import load_document
    from tapir.sim.apps import get_app

    data = get_app("weather").dump_xml().encode()
    doc = load_document(REPO / "samples" / "weather" / "weather.yaml")
    return (data, doc, "forecast_screen__current_wind", "//node[@resource-id='org.tapir.weather:id/current_wind']",
            "Wind 14 km/h")


def repeated(data: bytes, nodes: int) -> bytes:
    """The dump with its content repeated under the root until it has about ``nodes`` nodes."""
    root = etree.fromstring(data)
    top = root[0]
    body = list(top)
    per = sum(1 for _ in top.iter()) - 1
    copies = max(1, round((nodes - 1) / max(per, 1)))
    for _ in range(copies - 1):
        for child in body:
            top.append(copy.deepcopy(child))
    return etree.tostring(root)


def interleaved(fns: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    """Median milliseconds of each function, sampled in turn ``n`` times."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(n):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {k: round(statistics.median(v), 3) for k, v in samples.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="samples per measurement")
    parser.add_argument("--sizes", default="", help="comma-separated node counts for the growth table")
    args = parser.parse_args(argv)
    setup = chrome_setup()
    source = "chrome_search_results.xml" if setup is not None else "sim:weather forecast"
    data, doc, element, xpath_text, label = setup if setup is not None else weather_setup()
    grounder = Grounder(doc, config=GroundingConfig(use_embedding=False))
    tree = parse_uiautomator(data)
    assert grounder.identify_screen(tree).name is not None
    assert grounder.ground(element, tree) is not None, grounder.last_detail
    xpath = etree.XPath(xpath_text)
    strings = [n.text for n in tree.nodes if n.text]

    def floor() -> None:
        root = etree.fromstring(data)
        xpath(root)
        process.extractOne(label, strings)

    fresh: dict[str, Any] = {}

    def parse() -> None:
        fresh["tree"] = parse_uiautomator(data)

    def identify() -> None:
        grounder.identify_screen(fresh["tree"])

    def ground() -> None:
        grounder.ground(element, fresh["tree"])

    def step() -> None:
        t = parse_uiautomator(data)
        grounder.identify_screen(t)
        grounder.ground(element, t)

    def lxml_parse() -> None:
        etree.fromstring(data)

    # parse must run before identify and ground in each round: they use the tree it made
    ms = interleaved({"floor": floor, "lxml_parse": lxml_parse, "parse": parse, "identify": identify,
                      "ground": ground, "step": step}, args.n)
    out: dict[str, Any] = {
        "dump": source,
        "nodes": len(tree),
        "n": args.n,
        "median_ms": ms,
        "identify_ground_over_floor": round((ms["identify"] + ms["ground"]) / ms["floor"], 2),
        "step_over_floor": round(ms["step"] / ms["floor"], 2),
        "parse_over_lxml": round(ms["parse"] / ms["lxml_parse"], 2),
        "targets": {"step_over_floor_at_most": 2.0},
    }
    if args.sizes:
        growth = []
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
        smaller = [s for s in sizes if s < len(tree)]
        if smaller:
            out["sizes_skipped"] = f"{smaller}: smaller than the dump itself"
        for size in (s for s in sizes if s >= len(tree)):
            big = repeated(data, size)
            trees: list[Any] = []

            def parse_big(big: bytes = big, trees: list[Any] = trees) -> None:
                trees.append(parse_uiautomator(big))

            def identify_big(trees: list[Any] = trees) -> None:
                grounder.identify_screen(trees[-1])

            def floor_big(big: bytes = big) -> None:
                etree.fromstring(big)

            m = interleaved({"lxml_parse": floor_big, "parse": parse_big, "identify": identify_big},
                            max(5, args.n // 4))
            nodes = len(trees[-1])
            growth.append({"nodes": nodes, **m, "identify_per_node_us": round(m["identify"] * 1000 / nodes, 2)})
        out["growth"] = growth
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
