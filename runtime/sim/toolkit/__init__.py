"""A small UI toolkit for simulated apps: widgets, layout, uiautomator dumps, wireframes, drift.

Apps subclass ``ToolkitApp`` and declare screens (``@screen``), dialogs (``@dialog``) and menus
(``@menu``) that build widget trees from the app's state; see ``app.py``.
"""

from tapir.runtime.sim.toolkit.app import Layer, ToolkitApp, dialog, key_name, menu, screen
from tapir.runtime.sim.toolkit.drift import Drift
from tapir.runtime.sim.toolkit.tree import Node, Rect, by_id
from tapir.runtime.sim.toolkit.widgets import (
    Button,
    CheckBox,
    Column,
    Dialog,
    Image,
    ImageButton,
    Input,
    ListItem,
    ListView,
    Menu,
    MenuItem,
    Radio,
    RadioGroup,
    Row,
    Screen,
    Spacer,
    Switch,
    Tab,
    Tabs,
    Text,
    Toolbar,
    Widget,
)

__all__ = [
    "Button", "CheckBox", "Column", "Dialog", "Drift", "Image", "ImageButton", "Input", "Layer", "ListItem",
    "ListView", "Menu", "MenuItem", "Node", "Radio", "RadioGroup", "Rect", "Row", "Screen", "Spacer", "Switch",
    "Tab", "Tabs", "Text", "Toolbar", "ToolkitApp", "Widget", "by_id", "dialog", "key_name", "menu", "screen",
]
