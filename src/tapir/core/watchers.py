"""Watchers: "when this appears, tap that" (uiautomator2's watchers), for the interruptions an
app throws up on its own: a rating prompt, a permission dialog, a what's-new sheet.

An app document declares them in its ``watchers:`` section (``docs/app-document.md``) and a script
with ``watch()``; the device runtime checks them when it cannot find an element (before it
navigates, and before it gives up) and while it waits, taps the watcher's target when its trigger
is on the screen, and counts and traces every firing (``docs/runtime.md``).

    Watcher("rate_prompt", tap="rate_dialog__not_now_button", when="rate_dialog__title")
    Watcher("close_tips", tap="tips_sheet__close_button")               # trigger: the button itself
    Watcher("whats_new", tap="whats_new__close_button", when_text="What's new")
    Watcher("allow", tap_text="While using the app")                    # a system dialog: by its text
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
    """One rule. What is tapped is ``tap`` (an element of the document) or ``tap_text`` (the view
    showing a text: system dialogs are no element of the app's document). The trigger is ``when``
    (an element), or ``when_text`` (a text on the screen), or, when neither is given, what is
    tapped. Texts are compared whole, ignoring case and surrounding space."""

    #: What traces and counts call it (a document's key; ``watch($x)`` names it after ``$x``).
    name: str
    #: The element to tap when the trigger shows (a document element name, without ``$``).
    tap: str | None = None
    tap_text: str | None = None
    when: str | None = None
    when_text: str | None = None
    #: Firings allowed in one run.
    limit: int = DEFAULT_LIMIT
    description: str | None = None
    #: Where the document declares it (None for a script's ``watch()``).
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if (self.tap is None) == (self.tap_text is None):
            raise ValueError(f"watcher {self.name!r}: give `tap` (an element) or `tap_text` (a text), one of them")
        if self.when is not None and self.when_text is not None:
            raise ValueError(f"watcher {self.name!r}: give `when` or `when_text`, not both")
        if self.limit < 1:
            raise ValueError(f"watcher {self.name!r}: limit must be at least 1, not {self.limit}")

    @property
    def trigger(self) -> str | None:
        """The element whose presence fires it (None for a text trigger)."""
        if self.when_text is not None:
            return None
        return self.when or self.tap

    @property
    def trigger_text(self) -> str | None:
        """The text whose presence fires it (None for an element trigger)."""
        if self.when is not None:
            return None
        return self.when_text if self.when_text is not None else (self.tap_text if self.tap is None else None)

    def describe(self) -> str:
        """``when $a appears, tap $b`` / ``when 'Rate us' shows, tap $b`` / ``tap 'Allow' when it shows``."""
        target = f"${self.tap}" if self.tap is not None else repr(self.tap_text)
        if self.when is None and self.when_text is None:
            return f"tap {target} when it shows"
        trigger = f"${self.when} appears" if self.when is not None else f"{self.when_text!r} shows"
        return f"when {trigger}, tap {target}"
