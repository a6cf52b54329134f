"""The words that make a dialog sensitive, and the answers that decline it, in English, French,
German, Spanish, Italian and Portuguese.

A dialog whose texts ask for a **permission** (or a default-app role: "Set Dialer as your default
phone app?"), a **payment** (or warn of charges), or **warn** that something will be lost (delete,
overwrite, permanently, cannot be undone, are you sure...) makes its answers sensitive: any
button but one that declines (Cancel, Not now, Deny, Keep editing...) needs permission to be
tapped (``tapir.runtime.guards.sensitive``). Matching is on whole words and phrases, ignoring
case and the form of apostrophes; the first category that matches wins, in the order below.

    dialog_category(["Delete note?", "“Shopping list” will be deleted permanently."])  # ('warning', 'delete')
    dialog_category(["Allow Notes to access your contacts?"])                         # ('permission', 'allow')
    dialog_category(["Voulez-vous payer 4,99 € ?"])                                   # ('payment', 'payer')
    declines("Don't allow"), declines("Abbrechen"), declines("Delete")                # True, True, False

The words of a control's own label (``Delete``, ``Send``, ``Pay``, ``Call``...) are the danger
policy's (``tapir.docgen.build.policy.DANGEROUS``), which ``tapir explore`` and ``tapir docgen``
use too, so a hand-written document is guarded as a generated one is marked.

Lists are tested one by one in ``tests/test_guards_lexicon.py``; a word added here needs a case there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["CATEGORIES", "DECLINE", "LANGUAGES", "declines", "dialog_category", "normalize"]

LANGUAGES = ("en", "fr", "de", "es", "it", "pt")

#: Phrases that make a dialog sensitive, by category (in order of precedence) and language.
CATEGORIES: dict[str, dict[str, tuple[str, ...]]] = {
    "permission": {
        "en": ("permission", "permissions", "allow access", "access to your", "to access your", "wants to access",
               "grant access", "while using the app", "only this time", "allow", "grant", "as your default"),
        "fr": ("autorisation", "autorisations", "autoriser", "accéder à", "accès à", "uniquement cette fois",
               "comme application par défaut"),
        "de": ("berechtigung", "berechtigungen", "zulassen", "zugriff auf", "erlauben", "nur dieses mal",
               "als standard-app"),
        "es": ("permiso", "permisos", "permitir", "acceder a", "acceso a", "solo esta vez",
               "como aplicación predeterminada"),
        "it": ("autorizzazione", "autorizzazioni", "consenti", "consentire", "accedere a", "solo questa volta",
               "come app predefinita"),
        "pt": ("permissão", "permissões", "permitir", "acessar", "acesso a", "apenas esta vez", "como app padrão"),
    },
    "payment": {
        "en": ("pay", "payment", "purchase", "buy", "buy now", "checkout", "check out", "place order", "order now",
               "subscribe", "subscription", "billing", "card number", "charges"),
        "fr": ("payer", "paiement", "acheter", "achat", "commander", "abonnement", "s'abonner", "facturation",
               "carte bancaire", "frais"),
        "de": ("bezahlen", "zahlung", "kaufen", "kauf", "bestellen", "abonnement", "abonnieren", "kreditkarte",
               "gebühren"),
        "es": ("pagar", "pago", "comprar", "compra", "suscripción", "suscribirse", "tarjeta de crédito", "cargos"),
        "it": ("pagare", "paga", "pagamento", "acquista", "acquisto", "ordina", "abbonamento", "abbonati",
               "carta di credito", "addebiti"),
        "pt": ("pagar", "pagamento", "comprar", "compra", "assinar", "assinatura", "cartão de crédito", "cobranças"),
    },
    "warning": {
        "en": ("delete", "deleted", "remove", "removed", "erase", "clear", "cleared", "forget", "forgotten",
               "discard", "permanently", "cannot be undone", "can't be undone", "can not be undone", "irreversible",
               "are you sure", "warning", "will be lost", "reset", "sign out", "log out", "uninstall", "overwrite",
               "overwritten"),
        "fr": ("supprimer", "supprimé", "supprimée", "supprimés", "effacer", "définitivement", "irréversible",
               "êtes-vous sûr", "êtes-vous sûre", "avertissement", "seront perdues", "sera perdu", "réinitialiser",
               "se déconnecter", "écraser"),
        "de": ("löschen", "gelöscht", "entfernen", "endgültig", "unwiderruflich", "rückgängig", "sind sie sicher",
               "warnung", "verwerfen", "verloren", "zurücksetzen", "abmelden", "überschreiben"),
        "es": ("eliminar", "eliminado", "borrar", "permanentemente", "irreversible", "deshacer", "¿estás seguro",
               "¿está seguro", "advertencia", "descartar", "se perderán", "restablecer", "cerrar sesión",
               "sobrescribir"),
        "it": ("elimina", "eliminare", "eliminato", "cancella", "definitivamente", "irreversibile", "sei sicuro",
               "avviso", "scarta", "andranno persi", "andranno perse", "ripristina", "sovrascrivere"),
        "pt": ("excluir", "excluído", "apagar", "remover", "permanentemente", "irreversível", "tem certeza",
               "aviso", "descartar", "serão perdidas", "redefinir", "sair da conta", "substituir"),
    },
}

#: Answers that decline: tapping one of them is never sensitive. A label is one of these whole,
#: or starts with one of those marked ``…`` followed by more words ("Deny & don't ask again").
#: "Cancel" is whole only: "Cancel subscription" is an action, not a refusal.
DECLINE: dict[str, tuple[str, ...]] = {
    "en": ("cancel", "no", "not now…", "later", "maybe later", "remind me later", "deny…", "don't allow…",
           "do not allow…", "dismiss", "close", "keep", "keep editing", "go back", "back", "skip", "never",
           "no thanks", "no, thanks", "not yet", "decline", "reject"),
    "fr": ("annuler", "non", "pas maintenant", "plus tard", "refuser…", "ne pas autoriser…", "fermer", "conserver",
           "garder", "ignorer", "non merci", "retour"),
    "de": ("abbrechen", "nein", "nicht jetzt", "später", "ablehnen…", "nicht zulassen…", "schließen", "behalten",
           "überspringen", "nein danke", "zurück"),
    "es": ("cancelar", "no", "ahora no", "más tarde", "denegar…", "no permitir…", "rechazar", "cerrar",
           "conservar", "omitir", "no, gracias", "volver"),
    "it": ("annulla", "no", "non ora", "più tardi", "nega…", "non consentire…", "rifiuta", "chiudi", "mantieni",
           "salta", "no, grazie", "indietro"),
    "pt": ("cancelar", "não", "agora não", "mais tarde", "negar…", "não permitir…", "recusar", "fechar", "manter",
           "pular", "não, obrigado", "voltar"),
}


def normalize(text: str) -> str:
    """Case-folded, one space between words, typographic apostrophes as ``'``."""
    text = unicodedata.normalize("NFC", text).replace("’", "'").replace("‘", "'").replace("ʼ", "'")
    return " ".join(text.casefold().split())


def _phrase(p: str) -> str:
    return r"\s+".join(re.escape(w) for w in p.split())


@lru_cache(maxsize=1)
def _category_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for category, languages in CATEGORIES.items():
        phrases = sorted({p for ps in languages.values() for p in ps}, key=len, reverse=True)
        out.append((category, re.compile(r"(?<!\w)(?:" + "|".join(_phrase(p) for p in phrases) + r")(?!\w)")))
    return tuple(out)


def dialog_category(texts: Iterable[str]) -> tuple[str, str] | None:
    """``(category, the phrase found)`` when the dialog's ``texts`` ask for a permission or a
    payment, or warn (see the module docstring); None otherwise."""
    joined = " \n ".join(normalize(t) for t in texts if t)
    for category, pattern in _category_patterns():
        m = pattern.search(joined)
        if m is not None:
            return category, " ".join(m.group(0).split())
    return None


@lru_cache(maxsize=1)
def _decline_sets() -> tuple[frozenset[str], tuple[str, ...]]:
    whole: set[str] = set()
    prefixes: list[str] = []
    for phrases in DECLINE.values():
        for p in phrases:
            word = p.rstrip("…")
            whole.add(word)
            if p.endswith("…"):
                prefixes.append(word)
    return frozenset(whole), tuple(sorted(set(prefixes), key=len, reverse=True))


def declines(label: str) -> bool:
    """Whether a button labelled ``label`` declines what its dialog asks (see the module docstring)."""
    text = normalize(label).strip(" .!?¡¿:")
    if not text:
        return False
    whole, prefixes = _decline_sets()
    if text in whole:
        return True
    return any(text.startswith(p) and not text[len(p)].isalnum() for p in prefixes if len(text) > len(p))
