"""App drift: the small changes a new app version makes, for robustness tests.

A script written against one version of an app should survive the next one: labels reworded
("Add to playlist" -> "Add to a playlist"), resource ids renamed or dropped, widgets inserted
next to the ones it uses, list items in another order. ``Drift(kind, seed)`` applies such changes
to every screen an app builds, before layout, so bounds, the dump and taps all agree. Every
decision comes from a hash of the seed and a structural key (the label, the id, the path of the
container without list positions), so the same seed always gives the same app, and every item of a
list drifts the same way.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from tapir.sim.errors import SimUsageError
from tapir.sim.toolkit.widgets import (
    Button,
    Column,
    Dialog,
    Image,
    ImageButton,
    Input,
    ListItem,
    ListView,
    Menu,
    Row,
    Screen,
    Text,
    Toolbar,
    Widget,
    child_fields,
)

KINDS = ("text", "ids", "insert", "reorder")
T = TypeVar("T")

#: Rewordings seen between real app versions; apps add their own (``ToolkitApp.drift_texts``).
GENERIC_TEXTS: dict[str, tuple[str, ...]] = {
    "Add to playlist": ("Add to a playlist", "Add to list"),
    "Delete": ("Remove", "Delete permanently"),
    "Cancel": ("Close", "Dismiss"),
    "Save": ("Done", "Save changes"),
    "Search": ("Find", "Search…"),
    "Settings": ("Preferences",),
    "Share": ("Send", "Share…"),
    "Play": ("Play now",),
    "OK": ("Done", "Ok"),
    "Edit": ("Modify", "Edit…"),
    "Create": ("Add", "Create new"),
    "Rename": ("Change name",),
    "Properties": ("Details", "Info"),
    "Sort by": ("Sort", "Sort order"),
    "Theme": ("App theme", "Appearance"),
    "Navigate up": ("Back",),
    "More options": ("More",),
}


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) for the given key (Python's ``hash`` is salted per process)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class Drift:
    """Which changes (``kind``: text, ids, insert, reorder or all), chosen by ``seed``, at ``rate``."""

    kind: str
    seed: int = 0
    rate: float = 0.5
    #: Kinds left out although ``kind`` names them (``structural()``).
    off: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.kind != "all" and self.kind not in KINDS:
            raise SimUsageError(f"unknown drift kind {self.kind!r}; choose one of {', '.join(KINDS)} or all")
        if not 0.0 <= self.rate <= 1.0:
            raise SimUsageError(f"drift rate must be between 0 and 1, not {self.rate}")

    def has(self, kind: str) -> bool:
        return kind not in self.off and self.kind in ("all", kind)

    def structural(self) -> Drift:
        """The same version's structure (inserted widgets, reordered lists) with the labels and
        ids of the undrifted app: every decision is keyed on the undrifted widget, so the views
        are the same ones, in the same places (what an auditor compares a drifted screen with)."""
        return replace(self, off=self.off | {"text", "ids"})

    def hit(self, *key: object) -> bool:
        return _unit(self.seed, *key) < self.rate

    def pick(self, options: Sequence[T], *key: object) -> T:
        return options[int(_unit(self.seed, "pick", *key) * len(options))]


def _renamed_id(drift: Drift, short: str, widget: Widget) -> str | None:
    """Either no id at all, or the same meaning in another naming convention."""
    prefix = {Text: "tv_", Button: "btn_", ImageButton: "ib_", Image: "iv_", Input: "et_"}.get(type(widget), "view_")
    camel = short.split("_")[0] + "".join(p.title() for p in short.split("_")[1:])
    options: list[str | None] = [None, camel, prefix + short, short + "_view"]
    return drift.pick(options, "id", short)


def _inserted(drift: Drift, container: Widget, path: str) -> Widget:
    if isinstance(container, Row):
        options: list[Widget] = [Text("New", id="badge", style="caption", wrap=True),
                                 Image(id="badge_icon", size=63)]
    elif isinstance(container, Toolbar):
        options = [ImageButton(id="cast", desc="Cast", kind="action", on_tap=lambda: None)]
    else:
        options = [Text("Tip: long-press an item to see more options", id="tip_banner", style="caption"),
                   Text("What's new in this version", id="whats_new", style="caption")]
    return drift.pick(options, "insert-what", path)


def apply_drift(
    widget: Widget, drift: Drift, scope: str, texts: Mapping[str, tuple[str, ...]] = GENERIC_TEXTS
) -> Widget:
    """``widget`` as the drifted app version would build it. ``scope`` names the screen or dialog."""
    return _walk(widget, drift, f"{scope}", texts)


def _walk(w: Widget, drift: Drift, path: str, texts: Mapping[str, tuple[str, ...]]) -> Widget:
    path = f"{path}/{type(w).__name__}:{w.id or ''}"
    changes: dict[str, object] = {}
    if drift.has("text"):
        for name in ("text", "desc", "title", "hint", "message", "nav_desc"):
            value = getattr(w, name, None)
            if isinstance(value, str) and value in texts and drift.hit("text", value):
                changes[name] = drift.pick(texts[value], "text", value)
    if drift.has("ids") and w.id and ":id/" not in w.id and drift.hit("ids", w.id):
        changes["id"] = _renamed_id(drift, w.id, w)
    for name in child_fields(w):
        value = getattr(w, name)
        if isinstance(value, Widget):
            changes[name] = _walk(value, drift, f"{path}.{name}", texts)
        elif isinstance(value, tuple):
            # List items share one structural path, so every item drifts alike.
            item_path = f"{path}.{name}[*]" if isinstance(w, ListView | Menu) else None
            kids = [_walk(c, drift, item_path or f"{path}.{name}[{i}]", texts) for i, c in enumerate(value)]
            kids = _restructure(w, name, kids, drift, f"{path}.{name}")
            changes[name] = tuple(kids)
    return replace(w, **changes) if changes else w  # type: ignore[arg-type]


def _restructure(w: Widget, name: str, kids: list[Widget], drift: Drift, path: str) -> list[Widget]:
    if drift.has("reorder") and isinstance(w, ListView | Menu) and len(kids) > 1 and drift.hit("reorder", path):
        rng = random.Random(int(_unit(drift.seed, "shuffle", path) * 2**32))
        kids = kids[:]
        rng.shuffle(kids)
    insertable = (
        (isinstance(w, Row | ListItem) and name == "children")
        or (isinstance(w, Column) and name == "children")
        or (isinstance(w, Screen) and name == "body")
        or (isinstance(w, Toolbar) and name == "actions")
        or (isinstance(w, Dialog) and name == "body")
    )
    if drift.has("insert") and insertable and drift.hit("insert", path):
        at = int(_unit(drift.seed, "insert-at", path) * (len(kids) + 1))
        kids = kids[:at] + [_inserted(drift, w, path)] + kids[at:]
    return kids
