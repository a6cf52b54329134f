"""Words from Appium and Maestro, and the Tapir call each one means, for "did you mean" hints.

A typo is caught by spelling (``tpa`` -> ``tap``), but ``click`` is no typo of ``tap``: it is the
word a newcomer already knows. ``foreign(name, namespace)`` gives the Tapir name a known foreign
word stands for, and where it comes from; a word maps to candidates in order, and only one the
registry has is offered (so a global added to the registry later starts being offered without a
change here).

    foreign("click", Namespace.ELEMENT)   # Foreign(name="tap", origin="Appium", call="tap()")
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.dsl.registry import REGISTRY, Namespace

__all__ = ["Foreign", "foreign"]


@dataclass(frozen=True)
class Foreign:
    """What a foreign word means in Tapir: the registry ``name``, the ``call`` to write, and the
    tools the word comes from."""

    name: str
    call: str
    origin: str


_APPIUM, _MAESTRO, _BOTH, _ESPRESSO = "Appium", "Maestro", "Appium and Maestro", "Espresso and UiAutomator"

# word -> (candidate Tapir calls in order of preference, origin). A candidate is ``name`` or
# ``name(args)`` (the call to write); the first whose name the registry has is offered.
_ELEMENT_WORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "click": (("tap()",), _BOTH),
    "tapOn": (("tap()",), _MAESTRO),
    "tap_on": (("tap()",), _MAESTRO),
    "press": (("tap()",), _APPIUM),
    "touch": (("tap()",), _APPIUM),
    "perform_click": (("tap()",), _ESPRESSO),
    "performClick": (("tap()",), _ESPRESSO),
    "longPress": (("long_tap()",), _BOTH),
    "long_press": (("long_tap()",), _BOTH),
    "longClick": (("long_tap()",), _ESPRESSO),
    "long_click": (("long_tap()",), _ESPRESSO),
    "longPressOn": (("long_tap()",), _MAESTRO),
    "sendKeys": (("set_text(text)",), _APPIUM),
    "send_keys": (("set_text(text)",), _APPIUM),
    "setValue": (("set_text(text)",), _APPIUM),
    "set_value": (("set_text(text)",), _APPIUM),
    "type": (("set_text(text)",), _ESPRESSO),
    "typeText": (("set_text(text)",), _ESPRESSO),
    "type_text": (("set_text(text)",), _ESPRESSO),
    "inputText": (("set_text(text)",), _MAESTRO),
    "input_text": (("set_text(text)",), _MAESTRO),
    "fill": (("set_text(text)",), _APPIUM),
    "clear": (('set_text("")',), _APPIUM),
    "clearText": (('set_text("")',), _APPIUM),
    "clear_text": (('set_text("")',), _APPIUM),
    "eraseText": (('set_text("")',), _MAESTRO),
    "swipe": (('scroll("down")',), _BOTH),
    "scrollTo": (('scroll("down")',), _APPIUM),
    "scroll_to": (('scroll("down")',), _APPIUM),
    "fling": (('scroll("down")',), _ESPRESSO),
    "scrollUntilVisible": (('match("text")',), _MAESTRO),
    "getText": (("get_text()",), _APPIUM),
    "text": (("get_text()",), _BOTH),
    "get_attribute": (('get_attributes()["name"]',), _APPIUM),
    "getAttribute": (('get_attributes()["name"]',), _APPIUM),
    "isSelected": (('get_attributes()["selected"]',), _APPIUM),
    "is_selected": (('get_attributes()["selected"]',), _APPIUM),
    "isChecked": (('get_attributes()["checked"]',), _APPIUM),
    "is_checked": (('get_attributes()["checked"]',), _APPIUM),
    "isEnabled": (('get_attributes()["enabled"]',), _APPIUM),
    "is_enabled": (('get_attributes()["enabled"]',), _APPIUM),
    "isDisplayed": (("exists()",), _APPIUM),
    "is_displayed": (("exists()",), _APPIUM),
    "isVisible": (("exists()",), _APPIUM),
    "is_visible": (("exists()",), _APPIUM),
    "assertVisible": (("wait()",), _MAESTRO),
    "assert_visible": (("wait()",), _MAESTRO),
    "waitForDisplayed": (("wait()",), _APPIUM),
    "wait_for": (("wait()",), _APPIUM),
    "waitForExist": (("wait()",), _APPIUM),
    "extendedWaitUntil": (("wait()",), _MAESTRO),
    "assertNotVisible": (("wait_gone()",), _MAESTRO),
    "assert_not_visible": (("wait_gone()",), _MAESTRO),
    "waitUntilGone": (("wait_gone()",), _APPIUM),
    "findElement": (('match("text")',), _APPIUM),
    "find_element": (('match("text")',), _APPIUM),
    "find": (('match("text")',), _APPIUM),
}

# Words of the screen (global calls). Candidates name what the registry may have: the screen-level
# actions are offered once they exist there.
_GLOBAL_WORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "tapOn": (('tap_text("text")',), _MAESTRO),
    "click": (('tap_text("text")',), _BOTH),
    "longPressOn": (('long_tap_text("text")',), _MAESTRO),
    "pressBack": (("back()",), _MAESTRO),
    "press_back": (("back()",), _APPIUM),
    "go_back": (("back()",), _APPIUM),
    "goBack": (("back()",), _APPIUM),
    "pressEnter": (("enter()",), _MAESTRO),
    "press_enter": (("enter()",), _MAESTRO),
    "pressKey": (('press_key("home")', "back()"), _MAESTRO),
    "press_key": (('press_key("home")', "back()"), _APPIUM),
    "press_keycode": (('press_key("home")', "back()"), _APPIUM),
    "pressKeyCode": (('press_key("home")', "back()"), _APPIUM),
    "inputText": (('type_text("text")',), _MAESTRO),
    "input_text": (('type_text("text")',), _MAESTRO),
    "inputRandomText": (('type_text("text")',), _MAESTRO),
    "sendKeys": (('type_text("text")',), _APPIUM),
    "send_keys": (('type_text("text")',), _APPIUM),
    "typeText": (('type_text("text")',), _ESPRESSO),
    "eraseText": (('press_key("delete")',), _MAESTRO),
    "hideKeyboard": (("hide_keyboard()", "back()"), _BOTH),
    "hide_keyboard": (("hide_keyboard()", "back()"), _APPIUM),
    "swipe": (('swipe("up")',), _BOTH),
    "scroll": (('swipe("up")',), _MAESTRO),
    "openLink": (('open_link("url")',), _MAESTRO),
    "open_link": (('open_link("url")',), _MAESTRO),
    "launchApp": (("launch_app()",), _MAESTRO),
    "activate_app": (("launch_app()",), _APPIUM),
    "activateApp": (("launch_app()",), _APPIUM),
    "stopApp": (("stop_app()",), _MAESTRO),
    "terminate_app": (("stop_app()",), _APPIUM),
    "terminateApp": (("stop_app()",), _APPIUM),
    "clearState": (("clear_app()",), _MAESTRO),
    "clear_state": (("clear_app()",), _MAESTRO),
    "reset": (("clear_app()",), _APPIUM),
    "takeScreenshot": (("screenshot()",), _MAESTRO),
    "take_screenshot": (("screenshot()",), _MAESTRO),
    "get_screenshot_as_file": (("screenshot()",), _APPIUM),
    "save_screenshot": (("screenshot()",), _APPIUM),
    "assertVisible": (('assert_text("text")', 'wait_text("text")'), _MAESTRO),
    "waitForText": (('wait_text("text")',), _APPIUM),
    "wait_for_text": (('wait_text("text")',), _APPIUM),
    "extendedWaitUntil": (('wait_text("text")',), _MAESTRO),
    "waitForAnimationToEnd": (("sleep(1)",), _MAESTRO),
    "wait": (("sleep(1)",), _BOTH),
    "runFlow": (('run_flow("flow.tap")',), _MAESTRO),
    "run_flow": (('run_flow("flow.tap")',), _MAESTRO),
}

_TABLES = {Namespace.ELEMENT: _ELEMENT_WORDS, Namespace.GLOBAL: _GLOBAL_WORDS}


def foreign(word: str, namespace: Namespace) -> Foreign | None:
    """The Tapir call a foreign ``word`` (an element method, or a global call) stands for, when
    the word is known and the registry has the call; else None."""
    found = _TABLES.get(namespace, {}).get(word)
    if found is None:
        return None
    candidates, origin = found
    for call in candidates:
        name = call.split("(", 1)[0]
        if name == word:
            continue
        present = (REGISTRY.element_method(name) if namespace is Namespace.ELEMENT
                   else REGISTRY.get(Namespace.GLOBAL, name) or REGISTRY.builtin(name))
        if present is not None:
            return Foreign(name, call, origin)
    return None
