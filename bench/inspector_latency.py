"""How soon the inspector's page sees a screen change; prints JSON.

    python bench/inspector_latency.py [--n 20] [--interval 0.5] [--app music]

Starts ``tapir inspect`` in-process on the simulator (page served on a free port), connects a
websocket client as the page does, and then, ``--n`` times each:

* **device changes**: a person's hands change the screen on the phone (``SimDevice.hands``:
  open the search screen, then BACK), nothing the inspector asked for. Timed from the change to
  the ``screen`` message arriving at the client; ``dumps_after_change`` counts the dumps that
  *started* after the change, up to the one published (1: the first dump after the change showed
  it, and was published at once). The bound is the polling interval plus one dump.
* **page actions**: the page's ``POST /api/act`` (tap the search button, back), timed from the
  request to the ``screen`` message; ``dumps`` is how many dumps the action's settle took.

The floor printed beside them is one dump alone as the device thread makes it (``refresh()`` then
identify and ground the screen, ``--n`` times): the target is ``within_one_dump``: every change seen by the first dump
after it (device changes) and every action's new screen on its first settle dump when the app
answers at once (page actions).
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1), "n": len(ordered)}


class _Page:
    """A websocket client that keeps each ``screen`` message with when it arrived."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(url.replace("http://", "ws://") + "ws", open_timeout=10, max_size=None)
        self.screens: list[tuple[float, dict[str, Any]]] = []
        self.cv = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for raw in self.ws:
                m = json.loads(raw)
                if m.get("type") == "screen":
                    with self.cv:
                        self.screens.append((time.monotonic(), m))
                        self.cv.notify_all()
        except Exception:  # noqa: BLE001 - closed at the end
            return

    def wait_screen(self, name: str, after: int, timeout: float = 20.0) -> tuple[float, dict[str, Any]]:
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for at, m in self.screens[after:]:
                    if m["state"]["screen"]["name"] == name:
                        return at, m
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {name} on the page")
                self.cv.wait(left)

    def close(self) -> None:
        self.ws.close()


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "X-Tapir": "1"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return dict(json.loads(r.read()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="changes of each kind (default 20)")
    parser.add_argument("--interval", type=float, default=0.5, help="the inspector's polling interval (s)")
    parser.add_argument("--app", default="music", help="the sample app (music)")
    args = parser.parse_args()

    from tapir.inspector.screen import screen_state
    from tapir.inspector.session import InspectorOptions, InspectorSession

    options = InspectorOptions(device=f"sim:{args.app}", document=ROOT / f"samples/{args.app}/{args.app}.yaml",
                               port=0, interval=args.interval, device_input=False)
    with InspectorSession(options) as session:
        live, runtime = session.live, session.runtime
        assert live is not None and runtime is not None
        hands = runtime.simulator.device.hands  # type: ignore[attr-defined]
        dump_s = []
        for _ in range(args.n):
            # what the device thread does for each dump it publishes: dump, identify, ground
            t0 = time.perf_counter()
            live.call(lambda: screen_state(runtime, runtime.screen.refresh()))
            dump_s.append(time.perf_counter() - t0)
        page = _Page(session.url)
        time.sleep(args.interval * 2)

        def search_node() -> tuple[int, int, tuple[int, int]]:
            assert live.state is not None
            f = next(e for e in live.state.found if e.element.name.endswith("__search_button"))
            assert f.node is not None
            return live.state.seq, f.node.id, f.node.bounds.center

        seen_s: list[float] = []
        dumps_after: list[int] = []
        for _ in range(args.n):
            for change, expect in (("search", "search_screen"), ("back", "songs_screen")):
                seq_node = live.call(search_node) if change == "search" else None
                before = len(page.screens)
                time.sleep(args.interval * 0.37)  # land anywhere in the polling cycle
                # the app changes its screen as the finger lifts, at the end of the call: a dump
                # started after it returns is certain to show the change
                if seq_node is not None:
                    hands.tap(*seq_node[2])
                else:
                    hands.key("BACK")
                changed = time.monotonic()
                at, m = page.wait_screen(expect, before)
                seen_s.append(at - changed)
                dumps_after.append(live.dumps_started(changed, m["state"]["seq"]))

        action_s: list[float] = []
        action_dumps: list[int] = []
        for _ in range(args.n):
            seq, node, _ = live.call(search_node)
            before = len(page.screens)
            sent = time.monotonic()
            _post(session.url + "api/act", {"action": "tap", "seq": seq, "node": node})
            at, m = page.wait_screen("search_screen", before)
            action_s.append(at - sent)
            action_dumps.append(int(m.get("cause", {}).get("dumps", 0)))
            before = len(page.screens)
            _post(session.url + "api/act", {"action": "back"})
            page.wait_screen("songs_screen", before)
        page.close()

    hist: dict[str, int] = {}
    for d in dumps_after:
        hist[str(d)] = hist.get(str(d), 0) + 1
    print(json.dumps({
        "device": f"sim:{args.app}",
        "interval_s": args.interval,
        "one_dump": _ms(dump_s),
        "device_change_to_page": _ms(seen_s),
        "bound_ms": round((args.interval + max(dump_s)) * 1000, 1),
        "dumps_after_change": {"max": max(dumps_after), "histogram": hist},
        "page_action_to_page": _ms(action_s),
        "page_action_dumps": {"max": max(action_dumps), "median": statistics.median(action_dumps)},
        # 0: a dump already under way when the change happened showed it
        "within_one_dump": max(dumps_after) <= 1 and max(action_dumps) == 1,
    }, indent=2))


if __name__ == "__main__":
    main()
