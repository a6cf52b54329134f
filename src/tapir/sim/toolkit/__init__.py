"""A small UI toolkit for simulated apps: widgets, layout, uiautomator dumps, wireframes, drift.

Apps subclass ``ToolkitApp`` and declare screens (``@screen``), dialogs (``@dialog``) and menus
(``@menu``) that build widget trees from the app's state; see ``app.py``. The dialogs the apps
share (confirmations, forms, notices, single choices) come from one helper, ``alert``
(``dialogs.py``), also as ``ToolkitApp`` methods (``confirm_dialog``...).
"""

from tapir.sim.toolkit.app import Layer, ToolkitApp, dialog, key_name, menu, screen
from tapir.sim.toolkit.dialogs import Action, alert
from tapir.sim.toolkit.drift import Drift
from tapir.sim.toolkit.tree import Node, Rect, by_id
from tapir.sim.toolkit.widgets import (
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
    "Action", "Button", "CheckBox", "Column", "Dialog", "Drift", "Image", "ImageButton", "Input", "Layer",
    "ListItem", "ListView", "Menu", "MenuItem", "Node", "Radio", "RadioGroup", "Rect", "Row", "Screen", "Spacer",
    "Switch", "Tab", "Tabs", "Text", "Toolbar", "ToolkitApp", "Widget", "alert", "by_id", "dialog", "key_name",
    "menu", "screen",
]
