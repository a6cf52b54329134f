"""Watchers: "when this appears, tap that" (uiautomator2's watchers), for the interruptions an
app throws up on its own: a rating prompt, a permission dialog, a what's-new sheet.

An app document declares them in its ``watchers:`` section (``docs/app-document.md``) and a script
with ``watch()``; the device runtime checks them when it cannot find an element (before it
navigates, and before it gives up) and while it waits, taps the watcher's target when its trigger
is on the screen, and counts and traces every firing (``docs/runtime.md``).

    Watcher("rate_prompt", tap="rate_dialog__not_now_button", when="rate_dialog__title")
    Watcher("allow", tap="permission_dialog__allow_button")          # trigger: the button itself
    Watcher("whats_new", tap="whats_new__close_button", when_text="What's new")
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_LIMIT", "Watcher"]

#: How many times one watcher may fire in a run unless it says otherwise: an interruption that
#: keeps coming back after being dismissed is a bug of the app or of the watcher, not a loop to
#: feed forever.
DEFAULT_LIMIT = 5


@dataclass(frozen=True)
class Watcher:
    """One rule. The trigger is ``when`` (an element of the document), or ``when_text`` (a text
    on the screen, compared whole, ignoring case and surrounding space), or, when neither is
    given, the ``tap`` element itself."""

    #: What traces and counts call it (a document's key; ``watch($x)`` names it after ``$x``).
    name: str
    #: The element to tap when the trigger shows (a document element name, without ``$``).
    tap: str
    when: str | None = None
    when_text: str | None = None
    #: Firings allowed in one run.
    limit: int = DEFAULT_LIMIT
    description: str | None = None
    #: Where the document declares it (None for a script's ``watch()``).
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.when is not None and self.when_text is not None:
            raise ValueError(f"watcher {self.name!r}: give `when` or `when_text`, not both")
        if self.limit < 1:
            raise ValueError(f"watcher {self.name!r}: limit must be at least 1, not {self.limit}")

    @property
    def trigger(self) -> str:
        """The element whose presence fires it (None for a text trigger)."""
        return self.when or self.tap

    def describe(self) -> str:
        """``when $a appears, tap $b`` / ``when 'Rate us' shows, tap $b``."""
        if self.when_text is not None:
            return f"when {self.when_text!r} shows, tap ${self.tap}"
        return f"when ${self.trigger} appears, tap ${self.tap}"
