"""Time parsing a real ~700-node uiautomator dump and rendering it as AutoDroid-V2 HTML.

    python bench/hierarchy_parse.py [--n 50] [--file DUMP.xml]

Prints one JSON object: median and p90 milliseconds for parsing the XML into a ``UITree``,
rendering the HTML string, building the XPath-ready ``HtmlView`` (render + lxml parse + id
map), one ``resource_id`` XPath lookup, and parsing the same screen as a DroidBot view list.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tapir.hierarchy import html_view, parse_uiautomator, parse_view_list, render_html

UPSTREAM = Path(__file__).resolve().parent.parent.parent / "shared" / "upstream" / "uiautomator"


def timed(fn: Callable[[], object], n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"median_ms": round(statistics.median(samples), 3), "p90_ms": round(samples[int(0.9 * (n - 1))], 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50, help="repetitions per measurement")
    parser.add_argument("--file", type=Path, default=UPSTREAM / "chrome_search_results.xml")
    args = parser.parse_args()
    if not args.file.is_file():
        print(json.dumps({"error": f"{args.file} not found (needs ../shared/upstream)"}))
        return 1
    data = args.file.read_bytes()
    tree = parse_uiautomator(data)
    view = html_view(tree)
    xpath = "//*[@resource_id='tsf']"
    result: dict[str, object] = {
        "file": args.file.name,
        "bytes": len(data),
        "nodes": len(tree),
        "html_elements": len(view.elements),
        "n": args.n,
        "parse_xml": timed(lambda: parse_uiautomator(data), args.n),
        "render_html": timed(lambda: render_html(tree), args.n),
        "html_view": timed(lambda: html_view(tree), args.n),
        "xpath_lookup": timed(lambda: view.xpath(xpath), args.n),
    }
    twin = args.file.with_name(args.file.name.removesuffix(".xml") + ".views.json")
    if twin.is_file():
        views = json.loads(twin.read_text())
        result["parse_view_list"] = {"nodes": len(views), **timed(lambda: parse_view_list(views), args.n)}
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
