"""A runtime lent to the interpreter without giving it away.

The interpreter closes its runtime when a script ends. Code that must use the session after the
script (the test runner saves a failed script's screenshot and last dump; the evaluation
harness runs a task's setup and its script in one session and then reads the app's state) hands
the interpreter this view, whose ``close`` does nothing, and closes the runtime itself. The run
API does this for its callers (``tapir.run.Runner.run(..., finish=...)`` and ``Runner.session()``)::

    run = Runner(document, "sim:music").run(source, "s.tap", finish=lambda rt, result: save(rt))
"""

from __future__ import annotations

from typing import Any

from tapir.dsl.values import ElementHandle

__all__ = ["Borrowed"]


class Borrowed:
    """A view of a runtime whose ``close`` does nothing (see the module docstring)."""

    def __init__(self, runtime: Any) -> None:
        self._rt = runtime

    def tap(self, handle: ElementHandle, child: ElementHandle | None, span: Any) -> None:
        self._rt.tap(handle, child, span)

    def long_tap(self, handle: ElementHandle, child: ElementHandle | None, span: Any) -> None:
        self._rt.long_tap(handle, child, span)

    def set_text(self, handle: ElementHandle, text: str, span: Any) -> None:
        self._rt.set_text(handle, text, span)

    def scroll(self, handle: ElementHandle, direction: str, span: Any) -> bool:
        return bool(self._rt.scroll(handle, direction, span))

    def get_text(self, handle: ElementHandle, child: ElementHandle | None, span: Any) -> str:
        return str(self._rt.get_text(handle, child, span))

    def get_attributes(self, handle: ElementHandle, child: ElementHandle | None, span: Any) -> dict[str, Any]:
        return dict(self._rt.get_attributes(handle, child, span))

    def item_count(self, handle: ElementHandle, span: Any) -> int:
        return int(self._rt.item_count(handle, span))

    def item(self, handle: ElementHandle, index: int, span: Any) -> ElementHandle:
        return self._rt.item(handle, index, span)  # type: ignore[no-any-return]

    def match(self, handle: ElementHandle, query: str | dict[str, Any], span: Any) -> ElementHandle:
        return self._rt.match(handle, query, span)  # type: ignore[no-any-return]

    def back(self, span: Any) -> None:
        self._rt.back(span)

    def enter(self, span: Any) -> None:
        self._rt.enter(span)

    def close(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:  # whatever the runtime protocol grows later
        return getattr(self._rt, name)
