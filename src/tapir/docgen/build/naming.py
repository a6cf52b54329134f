"""Names and descriptions for screens and elements, without a model.

Screens are named from what a person would call them: a dialog by its title (``sort_by_dialog``),
a menu by what opens it (``more_options_menu``), a full screen by its selected tab, its toolbar
title or its activity (``songs_screen``, ``settings_screen``). Elements are named from their label
(``new_playlist_button``), else their resource id (``songs_count_text``), with a suffix saying
their kind. Names are snake_case words, unique in their scope.

A model can do better; ``Annotator`` is where one plugs in (the code generator's backends, when a
model is configured). It is asked first and may decline (return None) for anything.

    slug("Delete song?")                   # 'delete_song'
    element_base("org.x:id/tab_playlists", "", "Playlists", Kind.TAB)   # 'playlists'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from tapir.dsl.api import Kind

_SUFFIX = {
    Kind.BUTTON: "button", Kind.INPUT: "input", Kind.CHECKBOX: "checkbox", Kind.SWITCH: "switch",
    Kind.TEXT: "text", Kind.IMAGE: "image", Kind.LIST: "list", Kind.SCROLLER: "scroller", Kind.TAB: "tab",
    Kind.OTHER: "view",
}
#: Words that say nothing about an element in resource ids.
_NOISE = {"holder", "container", "wrapper", "layout", "view", "btn", "iv", "tv", "img", "txt", "item", "id",
          "widget", "frame", "linear", "relative", "constraint", "main", "dialog", "radio", "group"}
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
MAX_WORDS = 4


def slug(text: str, max_words: int = MAX_WORDS) -> str:
    """``"Delete song?"`` -> ``delete_song``; camelCase and ids split into words; at most ``max_words``."""
    words = [w.lower() for w in _WORDS.findall(text.replace("_", " "))]
    words = [w for w in words if w][:max_words]
    out = "_".join(words)
    return ("n" + out if out[:1].isdigit() else out) or ""


def resource_words(resource_id: str) -> str:
    """The meaningful words of a resource id: ``org.x:id/settings_theme_holder`` -> ``settings_theme``."""
    name = resource_id.rsplit("/", 1)[-1]
    words = list(dict.fromkeys(w for w in slug(name, 8).split("_") if w and w not in _NOISE))
    return "_".join(words[:MAX_WORDS])


def with_suffix(base: str, kind: Kind) -> str:
    suffix = _SUFFIX[kind]
    if not base:
        return suffix
    if base == suffix or base.endswith("_" + suffix) or (kind is Kind.LIST and base.endswith(("_list", "options"))):
        return base
    return f"{base}_{suffix}"


def element_base(resource_id: str, content_desc: str, label: str, kind: Kind, *, class_name: str = "") -> str:
    """The words of an element's name before its kind suffix."""
    from_label = slug(content_desc or label) if (content_desc or label) else ""
    from_id = resource_words(resource_id) if resource_id else ""
    if kind in (Kind.TEXT, Kind.LIST, Kind.SCROLLER, Kind.INPUT):
        # texts, fields and lists show content: their id says what they are better than what they show
        base = from_id or from_label
    else:
        base = from_label or from_id
    if not base and class_name:
        base = slug(class_name.rsplit(".", 1)[-1])
    return base


class Namer:
    """Hands out names unique within one scope (a document's screens, or one screen's elements)."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def unique(self, wanted: str, alternatives: Iterable[str] = ()) -> str:
        for option in (wanted, *alternatives):
            if option and option not in self.taken:
                self.taken.add(option)
                return option
        n = 2
        while f"{wanted}_{n}" in self.taken:
            n += 1
        name = f"{wanted}_{n}"
        self.taken.add(name)
        return name


@dataclass(frozen=True)
class Annotation:
    name: str
    description: str


class Annotator(Protocol):
    """What a model may name and describe. ``facts`` is a plain-text summary of the screen (its
    title, activity, labels and options) or of the element (kind, labels, effect)."""

    def screen(self, facts: str) -> Annotation | None: ...

    def element(self, screen: str, facts: str) -> Annotation | None: ...
