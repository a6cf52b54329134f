"""Which elements are dangerous to touch: deleting, sending, paying, signing out.

One policy serves exploration (``tapir explore`` never taps what it marks) and document building
(elements it marks are written with ``sensitive: true``, so a script writer and the runtime can
ask before acting on them). Words are matched on the element's text, content description and
resource id, case-insensitively and as whole words (``delete`` matches "Delete song" and
``delete_button``, not "undeleted").

    policy = DangerPolicy.default().extended(["archive"])
    policy.reason("Delete playlist")     # 'delete'
    policy.reason("Playlists")           # None
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The default dangerous words and phrases: English, then the verbs of French, German, Spanish,
#: Italian and Portuguese apps (the runtime's guards read the same list, ``tapir.runtime.guards``).
DANGEROUS = (
    # "format" alone is a date or number format ("Use 24-hour format"): only formatting storage counts
    "delete", "remove", "erase", "clear all", "clear data", "wipe", "reset", "factory", "format storage",
    "format card", "format sd card",
    "clear history", "clear call history", "clear browsing data",
    "uninstall", "send", "pay", "buy", "purchase", "checkout", "order now", "subscribe", "donate",
    "transfer", "sign out", "log out", "logout", "signout", "deactivate", "close account", "call",
    "dial", "discard", "block", "report",
    # fr
    "supprimer", "effacer", "envoyer", "payer", "acheter", "appeler", "se déconnecter", "réinitialiser",
    # de
    "löschen", "entfernen", "senden", "bezahlen", "kaufen", "anrufen", "abmelden", "zurücksetzen",
    # es
    "eliminar", "borrar", "enviar", "pagar", "comprar", "llamar", "cerrar sesión", "restablecer",
    # it
    "elimina", "rimuovi", "invia", "paga", "acquista", "chiama", "ripristina",
    # pt
    "excluir", "apagar", "remover", "redefinir",
)

#: Phrases where a dangerous word is a noun naming a place or a setting, not an action: the "Call
#: history" tab, "Add call" (opens the dialpad), a speed-dial slot. A dangerous word found only
#: inside one of these does not count ("Clear call history" still does, by "clear call history").
NOT_ACTIONS = ("call history", "call log", "call logs", "add call", "missed call", "missed calls", "speed dial",
               "journal d'appels", "anrufliste", "historial de llamadas", "registro chiamate")


@dataclass(frozen=True)
class DangerPolicy:
    words: tuple[str, ...]

    @classmethod
    def default(cls) -> DangerPolicy:
        return cls(DANGEROUS)

    @classmethod
    def none(cls) -> DangerPolicy:
        """Nothing is dangerous (exploring a throw-away device)."""
        return cls(())

    def extended(self, words: Iterable[str]) -> DangerPolicy:
        extra = tuple(w.strip().lower() for w in words if w.strip())
        return DangerPolicy(self.words + tuple(w for w in extra if w not in self.words))

    def _pattern(self) -> re.Pattern[str] | None:
        if not self.words:
            return None
        alternatives = "|".join(re.escape(w).replace(r"\ ", r"[\s_]+") for w in sorted(self.words, key=len,
                                                                                          reverse=True))
        # resource ids join words with _ and camelCase; split them so whole-word matching works
        return re.compile(rf"(?<![a-z])(?:{alternatives})(?![a-z])", re.IGNORECASE)

    def reason(self, *labels: str) -> str | None:
        """The dangerous word found in any of ``labels``, or None."""
        pattern = _compiled(self)
        if pattern is None:
            return None
        for label in labels:
            if not label:
                continue
            spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", label.rsplit("/", 1)[-1] if ":id/" in label else label)
            text = spaced.replace("_", " ")
            nouns = [m.span() for m in _NOT_ACTIONS.finditer(text)]
            for m in pattern.finditer(text):
                if not any(a <= m.start() and m.end() <= b for a, b in nouns):
                    return m.group(0).lower()
        return None


_CACHE: dict[tuple[str, ...], re.Pattern[str] | None] = {}
_NOT_ACTIONS = re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(w).replace(r"\ ", r"[\s_]+") for w in NOT_ACTIONS)
                          + r")(?![a-z])", re.IGNORECASE)


def _compiled(policy: DangerPolicy) -> re.Pattern[str] | None:
    if policy.words not in _CACHE:
        _CACHE[policy.words] = policy._pattern()
    return _CACHE[policy.words]
