"""The device runtime's guards: what keeps a script inside what it was allowed to do
(``docs/safety.md``).

* ``confinement``: the run stays in its document's app (and the apps it allows); another app in
  front is left (BACK, relaunch) or stops the run.
* ``sensitive``: a tap that deletes, sends, pays or answers a payment, permission or warning
  dialog needs permission (``--allow``, ``allow()``), or a yes in the REPL; ``lexicon`` has the
  dialog words in six languages.
* secrets (``Guards.check_secret``, ``Guards.mask``): a ``secret()`` is typed only into password
  fields unless allowed, and its value is masked in the trace, the errors and what reads return.

    guards = Guards(document, screen, safety, trace.write)
    guards.confinement.ensure(call, span)
    guards.sensitive.check("tap", node, obs, element=el, shown="$x", item=False, span=span)
    guards.check_secret(secret, target, "$login__password", span)

``Safety`` (``tapir.core.safety``) is what they read; the front end makes it from its options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.core.document import AppDocument
from tapir.core.errors import SecretRefused, Span, TapirError, UsageError
from tapir.core.safety import ALLOW_SECRETS, Safety
from tapir.core.secrets import Secret
from tapir.hierarchy.model import UINode
from tapir.runtime.guards.confinement import Confinement, describe_package
from tapir.runtime.guards.lexicon import declines, dialog_category
from tapir.runtime.guards.sensitive import SensitiveGate, SensitiveReason, is_dialog
from tapir.runtime.screen_cache import ScreenCache
from tapir.runtime.session_model import ResolvedTarget, editable_node

__all__ = [
    "Confinement", "Guards", "SensitiveGate", "SensitiveReason", "check_tokens", "declines", "describe_package",
    "dialog_category", "is_dialog",
]


def check_tokens(safety: Safety, document: AppDocument) -> None:
    """Elements named by ``--allow`` (or ``# allow:``, ``tapir.toml``) must be the document's: a
    typo would otherwise allow nothing, silently. ``UsageError`` with "did you mean"."""
    import difflib

    names = {e.name for e in document.elements}
    for token, origin in safety.allowed.items():
        if "__" in token and token not in names:
            close = difflib.get_close_matches(token, sorted(names), n=1)
            raise UsageError(f"{origin}: ${token} is not an element of the app document"
                             + (f"; did you mean ${close[0]}?" if close else ""))


class Guards:
    """The three guards of one runtime (see the module docstring)."""

    def __init__(self, document: AppDocument, screen: ScreenCache, safety: Safety,
                 write: Callable[[dict[str, Any]], None]) -> None:
        self.document = document
        self.safety = safety
        self._write = write
        self._elapsed = screen.elapsed
        self.sensitive = SensitiveGate(document, safety, write, screen.elapsed)
        self.confinement = Confinement(document, screen, safety, write)

    @property
    def redactor(self) -> Any:
        return self.safety.secrets.redactor

    @property
    def notices(self) -> list[str]:
        return self.confinement.notices

    def check_tokens(self) -> None:
        """``check_tokens(safety, document)`` for this runtime's (see there)."""
        check_tokens(self.safety, self.document)

    def check_secret(self, text: str | Secret, t: ResolvedTarget, shown: str, span: Span | None) -> None:
        """A secret goes only into a password field, unless ``--allow secrets``."""
        if not isinstance(text, Secret):
            return
        field = editable_node(t.obs.tree, t.node)
        if field is None:
            return  # not editable: type_into says so
        self.check_secret_field(text, field, t.obs.screen, shown, span)

    def check_secret_field(self, text: str | Secret, field: UINode, screen: str | None, shown: str,
                           span: Span | None) -> None:
        """``check_secret`` for a text field itself (``type_text`` into the focused field)."""
        if not isinstance(text, Secret) or field.password:
            return  # a password field is where it belongs
        record = {"event": "guard", "guard": "secret", "name": text.name, "target": shown, "screen": screen,
                  "t": self._elapsed()}
        origin = self.safety.allowed.get(ALLOW_SECRETS)  # 'sensitive' does not cover it: another risk
        if origin is not None:
            self._write({**record, "decision": "allowed", "allowed_by": origin})
            return
        self._write({**record, "decision": "refused"})
        how = "--allow secrets" + (", or allow('secrets') in the script" if self.safety.trust_script else "")
        raise SecretRefused(
            f"secret({text.name!r}) was not typed into {shown}: it is not a password field (the screen shows what is "
            "typed there, and dumps and screenshots keep it); nothing was typed", span,
            hint=f"type secrets into password fields; if this field is meant for one (a PIN, a one-time code), "
                 f"allow it with {how}")

    def mask(self, text: str) -> str:
        """``text`` with the run's secret values masked."""
        return self.redactor.mask(text)

    def mask_value(self, value: Any) -> Any:
        return self.redactor.mask_value(value)

    def mask_error(self, exc: TapirError) -> None:
        """Mask secret values in an error's message and hint (a device error quoting typed text)."""
        if not self.redactor:
            return
        exc.message = self.redactor.mask(exc.message)
        if exc.hint:
            exc.hint = self.redactor.mask(exc.hint)
        exc.args = (exc.message,)
