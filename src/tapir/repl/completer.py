"""Completion as you type, from the language service, on the session's text.

    SessionCompleter(session)     # a prompt_toolkit Completer

The service completes the input in the context of every statement that ran before it
(``ReplSession.complete``), so ``song.`` offers an item's methods when ``song`` was bound to a
list item three inputs ago: elements after ``$`` (narrowed by the screen typed), methods after
``.``, a list's options inside ``match("``, builtins, API functions, keywords and the session's
variables and functions. While typing, the menu opens only where something is being typed (a
name, ``$``, ``.``, a quote); Tab asks for everything. Meta commands complete their names,
elements for ``:doc`` and file paths for ``:save``, ``:load`` and ``:document``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from tapir.repl.session import ReplSession

__all__ = ["SessionCompleter"]

_TRIGGERS = frozenset("$._\"'")


class SessionCompleter(Completer):
    def __init__(self, session: ReplSession) -> None:
        self.session = session
        self._paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text, cursor = document.text, document.cursor_position
        if text.lstrip().startswith(":"):
            yield from self._meta(document, complete_event)
            return
        before = text[cursor - 1] if cursor else ""
        if complete_event.text_inserted and not (before.isalnum() or before in _TRIGGERS):
            return
        yield from self._code(text, cursor)

    def _code(self, text: str, cursor: int, shift: int = 0) -> Iterable[Completion]:
        try:
            items = self.session.complete(text, cursor)
        except Exception:  # noqa: BLE001 - a completion bug must never cost the person their typing
            return
        items.sort(key=lambda i: (i.sort_text or i.label, i.label))
        for item in items:
            start = item.replace.offset - cursor if item.replace is not None and item.replace.offset >= 0 else 0
            yield Completion(item.insert_text or item.label, start_position=min(start, 0), display=item.label,
                             display_meta=item.detail or item.kind.value)

    def _meta(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        from tapir.repl.meta import COMMANDS

        line = document.text_before_cursor.lstrip()
        word, space, arg = line[1:].partition(" ")
        if not space:
            for name, command in COMMANDS.items():
                if name.startswith(word.lower()):
                    yield Completion(name, start_position=-len(word), display=command.usage,
                                     display_meta=command.help)
            return
        named = COMMANDS.get(word.rstrip("!").lower())
        if named is None:
            return
        command = named
        if command.takes_path:
            yield from self._paths.get_completions(Document(arg, len(arg)), event)
        elif command.name == "doc":
            yield from self._code(arg, len(arg))
        elif command.name == "help":
            yield from (Completion(n, start_position=-len(arg)) for n in COMMANDS if n.startswith(arg))
        elif command.name == "tree" and "all".startswith(arg):
            yield Completion("all", start_position=-len(arg))
