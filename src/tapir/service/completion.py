"""Completion at a point of a script: what may be typed there, with kinds and documentation.

    items = complete(view, view.at(4, 12))
    items[0].label, items[0].kind, items[0].detail   # '$songs_screen__song_list', ELEMENT, 'list of button · ...'

What is offered depends on what is being typed:

* ``$`` and a name: elements of the document, narrowed by the screen prefix typed (``$songs_``
  offers the screens starting so and their elements; ``$songs_screen__`` that screen's elements);
* after ``.``: the methods legal for the receiver (an element's kind decides, an item's its list's
  item kind; str/list/dict methods for those values);
* inside a string argument: the values it takes (``match("`` offers the list's options,
  ``scroll("`` the directions);
* elsewhere: the variables and functions in scope there, the builtins and API functions, the
  keywords, and the keyword arguments of the call the cursor is in.

``replace`` is the span of what was typed, so that an editor replaces it with the item.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tapir.core.positions import Position, Span
from tapir.dsl.registry import REGISTRY, Entry, Namespace
from tapir.dsl.symbols import SymbolTable
from tapir.dsl.tokens import KEYWORDS
from tapir.service.context import CallSite, Chain, CursorContext, cursor_context
from tapir.service.describe import element_detail, element_markdown, entry_markdown, function_signature
from tapir.service.infer import callee_entry, methods_of, type_at
from tapir.service.script import ScriptView

__all__ = ["CompletionItem", "CompletionKind", "complete"]


class CompletionKind(StrEnum):
    ELEMENT = "element"
    SCREEN = "screen"
    METHOD = "method"
    FUNCTION = "function"  #: a def of the script
    BUILTIN = "builtin"  #: a builtin or API function of the language
    VARIABLE = "variable"
    PARAMETER = "parameter"
    KEYWORD = "keyword"
    VALUE = "value"  #: a string value (an option, a direction)
    ARGUMENT = "argument"  #: a keyword argument name=


@dataclass(frozen=True)
class CompletionItem:
    label: str
    kind: CompletionKind
    #: One line shown beside the label (a kind, a signature).
    detail: str = ""
    #: Markdown.
    documentation: str = ""
    #: What to insert (the label when None).
    insert_text: str | None = None
    #: The span of the text typed so far, which the insertion replaces.
    replace: Span | None = None
    #: Orders items (editors sort by it, then by label).
    sort_text: str | None = None


_STATEMENT_KEYWORDS = ("if", "elif", "else", "while", "for", "def", "return", "pass", "break", "continue", "assert")


def complete(view: ScriptView, at: Position) -> list[CompletionItem]:
    """The completion items at ``at`` (see the module docstring)."""
    ctx = cursor_context(view, at.offset)
    if ctx.in_comment:
        return []
    if ctx.string is not None:
        return _string_values(view, at, ctx.call, ctx.string.start, ctx.string.typed)
    if ctx.in_string:
        return []  # a triple-quoted string: prose, not code
    if ctx.element is not None:
        typed = ctx.element
        return _elements(view, typed, view.index.span(at.offset - len(typed) - 1, at.offset))
    replace = view.index.span(ctx.typed_start, at.offset)
    if ctx.after_dot:
        return _methods(view, at, ctx.receiver, ctx.typed, replace)
    if ctx.after_number:
        return []
    return _names(view, at, ctx, replace)


def _elements(view: ScriptView, typed: str, replace: Span) -> list[CompletionItem]:
    symbols = view.symbols
    if symbols is None:
        return []
    typed = typed.replace(":", "__", 1)
    low = typed.lower()
    items: list[CompletionItem] = []
    if "__" in typed:
        screen, local = typed.split("__", 1)
        pool = [e for e in symbols.elements if e.screen == screen and e.local_name.lower().startswith(local.lower())]
    else:
        for s in symbols.screens:
            if s.name.lower().startswith(low):
                items.append(CompletionItem(f"${s.name}__", CompletionKind.SCREEN,
                                            f"screen · {len(s.elements)} elements", s.description, replace=replace,
                                            sort_text=f"0{s.name}"))
        pool = [e for e in symbols.elements if e.name.lower().startswith(low) or e.local_name.lower().startswith(low)]
    for e in pool:
        items.append(CompletionItem(f"${e.name}", CompletionKind.ELEMENT, element_detail(e),
                                    element_markdown(e, view.document, symbols), replace=replace,
                                    sort_text=f"1{e.name}"))
    return items


def _methods(view: ScriptView, at: Position, receiver: Chain | None, typed: str,
             replace: Span) -> list[CompletionItem]:
    if receiver is None:
        return []
    ty = type_at(view, receiver, at)
    out = []
    for entry in methods_of(view, ty):
        if entry.name.startswith(typed):
            order = f"{entry.namespace != Namespace.ELEMENT:d}{entry.name}"  # element methods first
            out.append(CompletionItem(entry.name, CompletionKind.METHOD, entry.signature(), entry_markdown(entry),
                                      replace=replace, sort_text=order))
    return out


def _names(view: ScriptView, at: Position, ctx: CursorContext, replace: Span) -> list[CompletionItem]:
    items: list[CompletionItem] = []
    seen: set[str] = set()
    typed, call = ctx.typed, ctx.call
    if call is not None and call.keyword is None:
        for item in _keyword_arguments(view, at, call, typed, replace):
            items.append(item)
    scope = view.analysis.scope_at(at)
    for name, binding in scope.visible(at).items():
        if not name.startswith(typed) or name in seen:
            continue
        seen.add(name)
        if binding.kind == "function" and binding.scope is not None:
            fn = binding.scope.functions.get(name)
            detail = function_signature(fn) if fn is not None else "function"
            doc = (fn.docstring or "") if fn is not None else ""
            items.append(CompletionItem(name, CompletionKind.FUNCTION, detail, doc, replace=replace,
                                        sort_text=f"1{name}"))
        else:
            kind = CompletionKind.PARAMETER if binding.kind == "parameter" else CompletionKind.VARIABLE
            detail = binding.type.describe() if binding.type.tag != "unknown" else binding.kind
            items.append(CompletionItem(name, kind, detail, replace=replace, sort_text=f"1{name}"))
    for name in REGISTRY.global_names():
        if name.startswith(typed) and name not in seen:
            seen.add(name)
            entry = REGISTRY.get(Namespace.GLOBAL, name) or REGISTRY.builtin(name) or REGISTRY.global_function(name)
            assert entry is not None
            shown = entry.signature(None) if entry.namespace != Namespace.ELEMENT else _legacy_signature(entry)
            items.append(CompletionItem(name, CompletionKind.BUILTIN, shown, entry_markdown(entry), replace=replace,
                                        sort_text=f"2{name}"))
    for word in sorted(KEYWORDS):
        if word.startswith(typed) and (ctx.at_statement_start or word not in _STATEMENT_KEYWORDS):
            items.append(CompletionItem(word, CompletionKind.KEYWORD, "keyword", replace=replace, sort_text=f"3{word}"))
    return items


def _legacy_signature(entry: Entry) -> str:
    params = ", ".join(["element: element", *(p.render() for p in entry.params)])
    return f"{entry.name}({params}) -> {entry.returns}"


def _keyword_arguments(view: ScriptView, at: Position, call: CallSite, typed: str,
                       replace: Span) -> list[CompletionItem]:
    entry, _ = callee_entry(view, at, call)
    if entry is None:
        return []
    out = []
    for name in entry.keywords:
        if name.startswith(typed) and name not in call.used_keywords:
            param = entry.param(name)
            out.append(CompletionItem(f"{name}=", CompletionKind.ARGUMENT, param.render() if param else name,
                                      param.doc if param else "", replace=replace, sort_text=f"0{name}"))
    return out


def _string_values(view: ScriptView, at: Position, call: CallSite | None, quote: int,
                   typed: str) -> list[CompletionItem]:
    """Values for the string argument being typed: a list's options for ``match``, the closed
    choices of a parameter (scroll directions)."""
    if call is None:
        return []
    entry, legacy = callee_entry(view, at, call)
    if entry is None:
        return []
    index = call.arg_index - (1 if legacy else 0)
    param = entry.param(call.keyword) if call.keyword else (
        entry.params[index] if 0 <= index < len(entry.params) else None)
    if param is None:
        return []
    replace = view.index.span(quote + 1, at.offset)
    values: list[tuple[str, str]] = [(c, f"{entry.name}() {param.name}") for c in param.choices]
    if entry.name == "match" and param.name == "query" and view.symbols is not None:
        values += _options(view, at, call, legacy)
    return [CompletionItem(v, CompletionKind.VALUE, detail, replace=replace, sort_text=f"{i:04d}")
            for i, (v, detail) in enumerate(values) if v.lower().startswith(typed.lower())]


def _options(view: ScriptView, at: Position, call: CallSite, legacy: bool) -> list[tuple[str, str]]:
    """The options the document lists for the list a ``match`` is called on."""
    symbols: SymbolTable | None = view.symbols
    if symbols is None or call.receiver is None:
        return []
    ty = type_at(view, call.receiver, at)
    sym = symbols.element(ty.element) if ty.element else None
    if sym is None:
        return []
    return [(o, f"an option of ${sym.name}") for o in sym.options]
