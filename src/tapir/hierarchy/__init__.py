"""UI hierarchies: one normalised tree for uiautomator XML and DroidBot views, and its
AutoDroid-V2 HTML rendering for evaluating upstream XPaths."""

from tapir.hierarchy.html import HtmlElement, HtmlView, html_view, render_html
from tapir.hierarchy.model import Bounds, UINode, UITree
from tapir.hierarchy.parse import (
    load_tree,
    parse_droidbot_state,
    parse_tree,
    parse_uiautomator,
    parse_view_list,
)

__all__ = [
    "Bounds",
    "HtmlElement",
    "HtmlView",
    "UINode",
    "UITree",
    "html_view",
    "load_tree",
    "parse_droidbot_state",
    "parse_tree",
    "parse_uiautomator",
    "parse_view_list",
    "render_html",
]
