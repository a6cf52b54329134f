"""Signature help: the signature of the call the cursor is in, and which parameter it is at.

    help = signature_help(view, view.at(3, 27))
    help.signatures[0].label       # "$element.scroll(direction: str = 'down') -> bool"
    help.active_parameter          # 0

Calls of the registry (element methods, API functions, builtins, str/list/dict methods) and of
the script's own functions are known; the legacy form ``scroll($x, "up")`` shows the element as
its first parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapir.core.positions import Position
from tapir.dsl import ast as A
from tapir.dsl.registry import Entry, ParamKind
from tapir.service.context import cursor_context
from tapir.service.describe import function_signature
from tapir.service.infer import callee_entry
from tapir.service.script import ScriptView

__all__ = ["ParameterInfo", "SignatureHelp", "SignatureInfo", "signature_help"]


@dataclass(frozen=True)
class ParameterInfo:
    #: The parameter as it appears in the signature's label.
    label: str
    documentation: str = ""


@dataclass(frozen=True)
class SignatureInfo:
    label: str
    #: Markdown.
    documentation: str
    parameters: tuple[ParameterInfo, ...]


@dataclass(frozen=True)
class SignatureHelp:
    signatures: tuple[SignatureInfo, ...]
    active_signature: int = 0
    #: The parameter the cursor is at (None: past the last one).
    active_parameter: int | None = None


def _from_entry(entry: Entry, legacy: bool) -> SignatureInfo:
    params = [ParameterInfo(p.render(), p.doc) for p in entry.params]
    if legacy:
        first = ParameterInfo("element: element", "the element to act on")
        label = f"{entry.name}({', '.join([first.label, *entry.parameter_labels()])}) -> {entry.returns}"
        return SignatureInfo(label, entry.doc, (first, *params))
    return SignatureInfo(entry.signature(), entry.doc, tuple(params))


def _active(entry_params: list[tuple[str, ParamKind]], index: int, keyword: str | None) -> int | None:
    if keyword is not None:
        for i, (name, _) in enumerate(entry_params):
            if name == keyword:
                return i
        return None
    positional = [i for i, (_, kind) in enumerate(entry_params)
                  if kind in (ParamKind.POSITIONAL, ParamKind.EITHER, ParamKind.VAR_POSITIONAL)]
    if index < len(positional):
        return positional[index]
    star = [i for i, (_, kind) in enumerate(entry_params) if kind == ParamKind.VAR_POSITIONAL]
    return star[0] if star else None


def signature_help(view: ScriptView, at: Position) -> SignatureHelp | None:
    """The signature of the innermost call around ``at``, or None outside calls and for
    callees that are not known."""
    call = cursor_context(view, at.offset).call
    if call is None:
        return None
    if call.receiver is None:
        scope = view.analysis.scope_at(at)
        binding = scope.visible(at).get(call.name)
        if binding is not None and isinstance(binding.node, A.FunctionDef):
            fn = binding.node
            labels = [function_signature(fn)[len(f"def {fn.name}("):-1].split(", ")] if fn.params else [[]]
            params = tuple(ParameterInfo(label) for label in labels[0])
            info = SignatureInfo(function_signature(fn), fn.docstring or "", params)
            names = [(p.name, ParamKind.EITHER) for p in fn.params]
            return SignatureHelp((info,), 0, _active(names, call.arg_index, call.keyword))
        if binding is not None:
            return None  # a variable holding something unknown
    entry, legacy = callee_entry(view, at, call)
    if entry is None:
        return None
    info = _from_entry(entry, legacy)
    names = [(p.name, p.kind) for p in entry.params]
    if legacy:
        names.insert(0, ("element", ParamKind.POSITIONAL))
    return SignatureHelp((info,), 0, _active(names, call.arg_index, call.keyword))
