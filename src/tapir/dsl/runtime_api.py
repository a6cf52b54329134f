"""The narrow interface between the interpreter and whatever performs UI calls.

The interpreter never touches a device: every element method of the registry, ``len``,
indexing and iteration of list elements, ``back()``, ``enter()``, the waits, ``sleep()``, app
control, screenshots and watchers become one call on a ``UIRuntime``. The device runtime
(grounding on a real or simulated phone) and the in-memory ``FakeRuntime`` used by tests and dry
runs both implement it.

Rules every implementation follows:

* ``span`` is the span of the script construct making the call (the call expression, or the
  ``for``/subscript/``len`` expression); use it for traces and put it on raised errors.
* Raise only ``TapirError`` subclasses: ``UnknownElement`` (name not in the document),
  ``ElementNotFound`` (right screen, element absent), ``ScreenNotReached`` (could not get to the
  element's screen), ``ActionError`` (illegal action, index out of range, no item matches),
  ``DeviceError`` (the device failed). Anything else is reported as an internal error.
* Return only the documented types; the interpreter checks them and refuses anything else.
* Items: ``item_count``, ``item`` and iteration (``item_count`` once, then ``item(h, i)`` for
  each ``i``) use the same notion of the items of a list element.
* Kind checks (``set_text`` only on inputs...) are done by the interpreter from the symbol table
  when it has one; a runtime may check again but need not.
* Waiting passes the runtime's time: a runtime whose clock is simulated (the simulator's) offers
  ``simulated_seconds()``, the seconds its waits and sleeps have passed without the host's clock
  moving, and the interpreter counts them against the time budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from tapir.core.errors import Span
from tapir.core.watchers import Watcher
from tapir.dsl.values import ElementHandle

#: What ``UIRuntime.app`` does to the document's app.
APP_ACTIONS = ("launch", "stop", "clear")


@runtime_checkable
class UIRuntime(Protocol):
    """What the interpreter asks of a device. ``child`` is a document element inside the item
    (or element) ``handle`` selects, e.g. ``$list[2].tap($list_item_title)``."""

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None: ...

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> None: ...

    def set_text(self, handle: ElementHandle, text: str, span: Span) -> None: ...

    def scroll(self, handle: ElementHandle, direction: str, span: Span) -> bool:
        """Scroll ``handle`` in ``direction`` (one of ``api.SCROLL_DIRECTIONS``); True when
        nothing moved, i.e. the end was reached."""
        ...

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> str: ...

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Span) -> dict[str, Any]:
        """Keys as documented in the registry; values are str or bool."""
        ...

    def item_count(self, handle: ElementHandle, span: Span) -> int:
        """How many items the list has. A runtime may also offer ``iter_items(handle, span)``, an
        iterator of item handles fetched one at a time; the interpreter's ``for`` loops use it
        when present (so ``for x in $list: ... break`` reads one item), ``item_count`` and
        ``item`` otherwise."""
        ...

    def item(self, handle: ElementHandle, index: int, span: Span) -> ElementHandle:
        """The item at ``index`` (0 <= index; the interpreter normalises negative indexes with
        ``item_count``). Usually ``handle.at(index)``; raises ``ActionError`` when out of range."""
        ...

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Span) -> ElementHandle:
        """The item matching ``query`` (text, or attributes that must all be equal); usually
        ``handle.matching(query)``; raises ``ActionError`` when nothing matches."""
        ...

    def back(self, span: Span) -> None: ...

    def enter(self, span: Span) -> None: ...

    def wait_for(self, target: ElementHandle | str, gone: bool, timeout: float, span: Span, *,
                 watchers: bool = True, must: bool = False) -> bool:
        """Whether ``target`` (an element, a list item chosen by ``match``, or a text shown on the
        screen) is on the current screen (``gone``: is not), looking again at every settle
        interval until it is or ``timeout`` seconds have passed (0: look once). Never navigates
        and never scrolls; ``watchers``: declared watchers may dismiss an interruption meanwhile
        (False: nothing is sent to the device at all). False when the time ran out, or with
        ``must`` a ``WaitTimeout`` that says what the device shows."""
        ...

    def sleep(self, seconds: float, span: Span) -> None:
        """Let ``seconds`` pass on the device (simulated time on a simulator)."""
        ...

    def app(self, action: str, extras: dict[str, Any] | None, span: Span) -> None:
        """``launch`` (``extras``: the launch intent's extras), ``stop`` or ``clear`` (its data)
        the document's app (``APP_ACTIONS``)."""
        ...

    def screenshot(self, name: str | None, span: Span) -> str:
        """Save a screenshot with the run's artifacts; return where (a path)."""
        ...

    def watch(self, watcher: Watcher, span: Span) -> None:
        """Add a watcher for the rest of the run (one of the same name is replaced)."""
        ...

    def close(self) -> None:
        """Release the device; called once when the run (or the REPL session) ends."""
        ...


#: Makes the runtime; called once, on the first call that needs the device (so a script with no
#: UI call runs without any device). May raise ``DeviceError``.
RuntimeFactory = Callable[[], UIRuntime]
