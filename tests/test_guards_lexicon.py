"""The guards' lexicon (runtime/guards/lexicon.py) and the danger words it shares with docgen:
payment, permission and warning dialogs and declining answers in six languages, whole words
only, and the danger policy's verbs in every language."""

from __future__ import annotations

import pytest

from tapir.docgen.build.policy import DangerPolicy
from tapir.runtime.guards.lexicon import CATEGORIES, DECLINE, LANGUAGES, declines, dialog_category

# One real-looking dialog per category and language: (title and message, the category).
DIALOGS = [
    # permission
    (["Allow Notes to access your contacts?"], "permission", "en"),
    (["Autoriser Notes à accéder à vos contacts ?"], "permission", "fr"),
    (["Notes den Zugriff auf deine Kontakte erlauben?"], "permission", "de"),
    (["¿Permitir que Notas acceda a tus contactos?"], "permission", "es"),
    (["Consentire a Note di accedere ai tuoi contatti?"], "permission", "it"),
    (["Permitir que o Notas acesse seus contatos?"], "permission", "pt"),
    # payment
    (["Confirm your purchase", "Premium, 4.99 € a month"], "payment", "en"),
    (["Confirmer votre achat", "Payer 4,99 € par mois"], "payment", "fr"),
    (["Jetzt kaufen", "4,99 € pro Monat bezahlen"], "payment", "de"),
    (["Confirmar la compra", "Pagar 4,99 € al mes"], "payment", "es"),
    (["Conferma l'acquisto", "Paga 4,99 € al mese"], "payment", "it"),
    (["Confirmar compra", "Pagar 4,99 € por mês"], "payment", "pt"),
    # warning
    (["Delete note?", "“Shopping list” will be deleted permanently."], "warning", "en"),
    (["Supprimer la note ?", "Cette action est irréversible."], "warning", "fr"),
    (["Notiz löschen?", "Dies kann nicht rückgängig gemacht werden."], "warning", "de"),
    (["¿Eliminar la nota?", "Esta acción no se puede deshacer."], "warning", "es"),
    (["Eliminare la nota?", "L'operazione è irreversibile."], "warning", "it"),
    (["Excluir nota?", "Esta ação é irreversível."], "warning", "pt"),
    (["Discard changes?", "Your changes to this note will be lost."], "warning", "en"),
    (["Clear search history?", "3 searches will be forgotten."], "warning", "en"),
]


@pytest.mark.parametrize(("texts", "category", "language"), DIALOGS, ids=lambda v: str(v)[:30])
def test_a_sensitive_dialog_is_recognised_in_each_language(texts: list[str], category: str, language: str) -> None:
    found = dialog_category(texts)
    assert found is not None and found[0] == category, found
    assert found[1] in CATEGORIES[category][language] or any(found[1] in ps for ps in CATEGORIES[category].values())


@pytest.mark.parametrize("texts", [
    ["Sort by", "Title", "Date modified"], ["Enjoying Notes?", "Tap Rate now to leave a review in the store."],
    ["New playlist", "Name"], ["Theme", "Light", "Dark"], ["Set alarm", "07:30"],
    # whole words only: "payday", "deleted_at", "undeletable" and "clearly" are not sensitive words
    ["Payday is on Friday"], ["Undeletable"], ["Clearly the best"],
])
def test_ordinary_dialogs_are_not(texts: list[str]) -> None:
    assert dialog_category(texts) is None


def test_every_language_has_every_category_and_declining_answers() -> None:
    for category, languages in CATEGORIES.items():
        assert set(languages) == set(LANGUAGES), category
        assert all(languages[lang] for lang in LANGUAGES)
    assert set(DECLINE) == set(LANGUAGES)


@pytest.mark.parametrize("label", [
    "Cancel", "CANCEL", "No", "Not now", "Don't allow", "Don’t allow", "Deny & don't ask again", "Keep editing",
    "Annuler", "Ne pas autoriser", "Abbrechen", "Nicht zulassen", "Cancelar", "Ahora no", "Annulla", "Non ora",
    "Agora não", "Não permitir",
])
def test_declining_answers(label: str) -> None:
    assert declines(label)


@pytest.mark.parametrize("label", ["Delete", "Allow", "OK", "Pay now", "Cancel subscription", "Close account",
                                   "Supprimer", "Zulassen", "Permitir", "Continue", ""])
def test_other_answers_do_not_decline(label: str) -> None:
    assert not declines(label)


@pytest.mark.parametrize(("label", "word"), [
    ("Delete", "delete"), ("Send SMS", "send"), ("Call", "call"), ("Sign out", "sign out"),
    ("delete_note", "delete"), ("Supprimer la note", "supprimer"), ("Löschen", "löschen"), ("Eliminar", "eliminar"),
    ("Enviar mensaje", "enviar"), ("Elimina", "elimina"), ("Excluir", "excluir"), ("Format SD card", "format sd card"),
])
def test_the_danger_policy_names_controls_in_several_languages(label: str, word: str) -> None:
    assert DangerPolicy.default().reason(label) == word


@pytest.mark.parametrize("label", ["Use 24-hour format", "Callum", "recall", "Settings", "Eliminate noise",
                                   "Add to favourites"])
def test_the_danger_policy_leaves_ordinary_labels_alone(label: str) -> None:
    assert DangerPolicy.default().reason(label) is None
