"""The registry's calls carried out on the runtime Protocol.

``bind_api`` checks a call's arguments against its ``api.ApiEntry`` (count, keywords, types,
closed choices such as scroll directions); ``API_IMPLEMENTATIONS`` maps each registry entry to
the ``UIRuntime`` method that performs it and checks what comes back, so only script values
ever reach a script. Every entry of ``api.ELEMENT_METHODS`` and ``api.GLOBALS`` must have an
implementation here (checked at import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tapir.dsl import api
from tapir.dsl.errors import ScriptError, Span
from tapir.dsl.runtime_api import UIRuntime
from tapir.dsl.safeops import short_repr
from tapir.dsl.values import QUERY_SCALARS, ElementHandle, type_name


def expect_handle(v: Any, span: Span) -> ElementHandle:
    if type(v) is not ElementHandle:
        raise ScriptError(f"internal error: the device runtime returned {type(v).__name__}, not an element", span)
    return v


def _api_scroll(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> bool:
    r = rt.scroll(h, v.get("direction") or "down", span)
    if type(r) is not bool:
        raise ScriptError(f"internal error: scroll() returned {type(r).__name__}, not bool", span)
    return r


def _api_get_text(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> str:
    r = rt.get_text(h, v.get("child"), span)
    if r is None:
        return ""
    if type(r) is not str:
        raise ScriptError(f"internal error: get_text() returned {type(r).__name__}, not str", span)
    return r


def _api_get_attributes(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> dict[str, Any]:
    r = rt.get_attributes(h, v.get("child"), span)
    if type(r) is not dict or not all(type(k) is str and type(x) in QUERY_SCALARS for k, x in r.items()):
        raise ScriptError("internal error: get_attributes() must return a dict of str to str/bool", span)
    return dict(r)


def _api_tap(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.tap(h, v.get("child"), span)


def _api_long_tap(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.long_tap(h, v.get("child"), span)


def _api_set_text(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.set_text(h, v["text"], span)


def _api_back(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.back(span)


def _api_enter(rt: UIRuntime, h: Any, v: dict[str, Any], span: Span) -> None:
    rt.enter(span)


#: How each registry entry is carried out on the runtime Protocol (results checked: only
#: script values come back).
API_IMPLEMENTATIONS: dict[str, Callable[[UIRuntime, Any, dict[str, Any], Span], Any]] = {
    "tap": _api_tap,
    "long_tap": _api_long_tap,
    "set_text": _api_set_text,
    "scroll": _api_scroll,
    "get_text": _api_get_text,
    "get_attributes": _api_get_attributes,
    "match": lambda rt, h, v, span: expect_handle(rt.match(h, v["query"], span), span),
    "back": _api_back,
    "enter": _api_enter,
}

_missing_impl = (set(api.ELEMENT_METHODS) | set(api.GLOBALS)) - set(API_IMPLEMENTATIONS)
if _missing_impl:  # the registry is the one list of API calls; each must be implemented here
    raise ImportError(f"API entries without an implementation: {sorted(_missing_impl)}")

_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "element": (ElementHandle,), "str": (str,), "dict": (dict,), "int": (int, bool), "bool": (bool,),
    "float": (float, int, bool),
}


def bind_api(entry: api.ApiEntry, args: list[Any], kwargs: dict[str, Any], span: Span) -> dict[str, Any]:
    """Bind and check call arguments against the registry entry."""
    params = entry.params
    if len(args) > len(params):
        raise ScriptError(
            f"{entry.name}() takes at most {len(params)} argument{'s' if len(params) != 1 else ''} "
            f"({len(args)} given)", span, hint=f"signature: {entry.signature()}",
        )
    values: dict[str, Any] = {p.name: a for p, a in zip(params, args, strict=False)}
    names = {p.name for p in params}
    for k, v in kwargs.items():
        if k not in names:
            raise ScriptError(f"{entry.name}() got an unexpected keyword argument '{k}'", span,
                              hint=f"signature: {entry.signature()}")
        if k in values:
            raise ScriptError(f"{entry.name}() got multiple values for argument '{k}'", span)
        values[k] = v
    for p in params:
        if p.name not in values:
            if not p.optional:
                raise ScriptError(f"{entry.name}() missing required argument '{p.name}'", span,
                                  hint=f"signature: {entry.signature()}")
            continue
        v = values[p.name]
        if p.optional and v is None:
            continue
        allowed = tuple(t for part in p.type.split("|") for t in _PARAM_TYPES.get(part.strip(), ()))
        if allowed and type(v) not in allowed:
            raise ScriptError(f"{entry.name}() argument '{p.name}' must be {p.type}, not {type_name(v)}", span)
        if p.choices and v not in p.choices:
            raise ScriptError(f"{entry.name}() argument '{p.name}' must be one of "
                              + ", ".join(repr(c) for c in p.choices) + f"; got {short_repr(v)}", span)
        if type(v) is dict:
            for k, x in v.items():
                if type(k) is not str or type(x) not in QUERY_SCALARS:
                    raise ScriptError(f"{entry.name}() query keys must be str and values str, bool or numbers",
                                      span)
            values[p.name] = dict(v)
    return values
