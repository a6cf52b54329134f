"""Waiting for the screen to settle after an action, with as few hierarchy dumps as possible.

A ``uiautomator dump`` is the expensive part of every step (a second or more on a phone), so
the runtime dumps once after each action and reuses that dump for everything that follows
until the next action: grounding the next element, reads (``get_text``, ``len``...), checks.

After an action the settler waits a short delay, dumps, and decides from what it sees whether
that one dump can be trusted:

* the screen the action was expected to lead to (the element's ``leads_to``) is showing: done;
* the screen changed and does not look transient: done;
* the screen did not change although the action should change it (the app may not have reacted
  yet), or it looks transient (empty, a bare progress spinner): wait and dump again, and stop
  as soon as two dumps in a row agree or the dump limit is reached.

So a typical action costs one dump; only actions whose effect is late or invisible cost two.
A dump is reused for at most ``SettleConfig.fresh_s`` seconds: screens also change by themselves
(a download finishes, a timer runs), and a script that polls must see it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tapir.hierarchy.model import Bounds, UINode, UITree


@dataclass(frozen=True)
class Observation:
    """One hierarchy dump and what the runtime concluded from it."""

    tree: UITree
    #: The document screen identified on it, or None when no screen matched.
    screen: str | None
    #: A digest of everything visible (texts, ids, bounds, states): equal digests, same screen.
    digest: str
    #: The foreground package, read from the dump's nodes.
    package: str
    #: The number of the dump in the session (1 = first).
    seq: int
    screen_score: float | None = None
    at: float = field(default=0.0, compare=False)


def _node_key(n: UINode) -> str:
    b = n.bounds
    flags = f"{int(n.checked)}{int(n.selected)}{int(n.enabled)}{int(n.focused)}"
    return f"{n.class_name}|{n.resource_id}|{n.text}|{n.content_desc}|{b.x1},{b.y1},{b.x2},{b.y2}|{flags}"


def tree_digest(tree: UITree) -> str:
    """A digest of the whole screen; two dumps of an unchanged screen give the same digest."""
    h = hashlib.blake2b(digest_size=12)
    for n in tree.nodes:
        if n.visible:
            h.update(_node_key(n).encode("utf-8", "replace"))
            h.update(b"\n")
    return h.hexdigest()


def region_digest(tree: UITree, node: UINode) -> str:
    """A digest of a node's subtree (a list's items, a scroll view's content): what scrolling moves."""
    h = hashlib.blake2b(digest_size=12)
    for n in [node, *tree.descendants(node.id)]:
        if n.visible:
            h.update(_node_key(n).encode("utf-8", "replace"))
            h.update(b"\n")
    return h.hexdigest()


def foreground_package(tree: UITree) -> str:
    """The package of the app on screen (uiautomator puts it on every node)."""
    if tree.package:
        return tree.package
    for n in tree.nodes:
        if n.package:
            return n.package
    return ""


def looks_transient(tree: UITree) -> bool:
    """A dump taken mid-transition: nothing on screen, or a lone spinner in an almost empty tree."""
    visible = [n for n in tree.nodes if n.visible and n.bounds.area > 0]
    if not visible:
        return True
    spinners = [n for n in visible if n.class_name.endswith("ProgressBar") and not n.class_name.endswith("SeekBar")]
    return bool(spinners) and len(visible) <= 6


@dataclass(frozen=True)
class SettleConfig:
    """Delays (seconds) and the dump limit. ``for_simulator()`` is instant: the simulated apps
    apply an input before the shell command returns."""

    first_delay_s: float = 0.35
    poll_delay_s: float = 0.4
    max_dumps: int = 3
    #: A dump older than this is not reused: the next call dumps again, so a script polling a
    #: read (``while $x.get_text() != "done": pass``) sees the screen change by itself. The
    #: settle interval on a phone; shorter on the simulator, whose dumps are cheap.
    fresh_s: float = 0.4

    @property
    def poll_interval_s(self) -> float:
        """How often a wait looks at the screen again: the settle interval, and never more often
        than a dump stays fresh."""
        return max(self.poll_delay_s, self.fresh_s)

    @classmethod
    def for_simulator(cls) -> SettleConfig:
        return cls(first_delay_s=0.0, poll_delay_s=0.0, max_dumps=2, fresh_s=0.25)


@dataclass(frozen=True)
class Expectation:
    """What the action should do, as far as the runtime knows."""

    #: True: the screen should change (a tap, BACK); False: it may well not (ENTER in a live
    #: search, a scroll at the end); a second dump is only spent when True and nothing changed.
    change: bool = True
    #: The screen it should lead to (the element's ``leads_to``), when the document says.
    screen: str | None = None


@dataclass(frozen=True)
class Settled:
    observation: Observation
    dumps: int
    waited_s: float
    #: Why it stopped: expected-screen, changed, unchanged, stable, limit, first.
    reason: str


def settle(
    observe: Callable[[], Observation],
    before: Observation | None,
    expect: Expectation,
    config: SettleConfig,
    sleep: Callable[[float], None] = time.sleep,
) -> Settled:
    """Dump until the screen can be trusted (see the module docstring); returns the last dump."""
    waited = 0.0
    if config.first_delay_s > 0:
        sleep(config.first_delay_s)
        waited += config.first_delay_s
    obs = observe()
    dumps = 1
    while True:
        reason = _verdict(before, obs, expect)
        if reason is not None:
            return Settled(obs, dumps, waited, reason)
        if dumps >= config.max_dumps:
            return Settled(obs, dumps, waited, "limit")
        if config.poll_delay_s > 0:
            sleep(config.poll_delay_s)
            waited += config.poll_delay_s
        previous, obs = obs, observe()
        dumps += 1
        if obs.digest == previous.digest and not looks_transient(obs.tree):
            return Settled(obs, dumps, waited, "stable")


def _verdict(before: Observation | None, obs: Observation, expect: Expectation) -> str | None:
    """Why ``obs`` can be trusted, or None when another dump is needed."""
    if looks_transient(obs.tree):
        return None
    if expect.screen is not None and obs.screen == expect.screen:
        return "expected-screen"
    if before is None:
        return "first"
    if obs.digest != before.digest:
        return "changed"
    return None if expect.change else "unchanged"


def clip(bounds: Bounds, to: Bounds) -> Bounds:
    """The part of ``bounds`` inside ``to`` (empty bounds when they do not overlap)."""
    x1, y1 = max(bounds.x1, to.x1), max(bounds.y1, to.y1)
    x2, y2 = min(bounds.x2, to.x2), min(bounds.y2, to.y2)
    if x2 <= x1 or y2 <= y1:
        return Bounds(x1, y1, x1, y1)
    return Bounds(x1, y1, x2, y2)
