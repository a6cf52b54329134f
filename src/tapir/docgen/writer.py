"""Write app documents as readable, deterministic YAML.

Used by ``tapir doc import``; ``document_to_dict`` is the inverse of the loader, so a loaded
document can be written back (tests use it for a load -> write -> load round trip).
"""

from __future__ import annotations

from typing import Any

import yaml

from tapir.core.document import AppDocument, Dialect, Element, Identifier, Screen, Signature, Watcher
from tapir.core.watchers import DEFAULT_LIMIT
from tapir.dsl.api import Kind

try:
    _BaseDumper: type = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - pure-Python PyYAML build
    _BaseDumper = yaml.SafeDumper


class FlowList(list[Any]):
    """A list written on one line (``[a, b]``): dependency paths stay one path per line."""


class _Dumper(_BaseDumper):  # type: ignore[misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _flow(dumper: yaml.SafeDumper, value: FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(FlowList, _flow)


def to_yaml(data: dict[str, Any], header: str | None = None) -> str:
    """``data`` in document order as block YAML; ``header`` lines become leading comments."""
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)
    if not header:
        return str(body)
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comments + str(body)


def identifier_to_data(ident: Identifier, default: Dialect) -> Any:
    return ident.xpath if ident.dialect == default else {ident.dialect.value: ident.xpath}


def signature_to_data(sig: Signature, default: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if sig.activity:
        out["activity"] = sig.activity
    if sig.all_of:
        out["all"] = [identifier_to_data(i, default) for i in sig.all_of]
    if sig.none_of:
        out["none"] = [identifier_to_data(i, default) for i in sig.none_of]
    if sig.skeleton:
        out["skeleton"] = sig.skeleton
    return out


def element_to_data(e: Element, default: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": e.kind.value, "description": e.description}
    out["identifiers"] = [identifier_to_data(i, default) for i in e.identifiers]
    if e.options:
        out["options"] = list(e.options)
    if e.effect:
        out["effect"] = e.effect
    if e.leads_to:
        out["leads_to"] = e.leads_to
    if e.item_of:
        out["item_of"] = e.item_of
    if e.is_list and e.item_kind != Kind.OTHER:
        out["item_kind"] = e.item_kind.value
    if e.paths:
        out["paths"] = [FlowList(str(s) for s in p) for p in e.paths]
    if e.sensitive:
        out["sensitive"] = True
    if e.notes:
        out["notes"] = e.notes
    return out


def screen_to_data(s: Screen, default: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {"description": s.description, "signature": signature_to_data(s.signature, default)}
    if s.notes:
        out["notes"] = s.notes
    out["elements"] = {e.name: element_to_data(e, default) for e in s.elements}
    return out


def document_to_dict(doc: AppDocument) -> dict[str, Any]:
    app: dict[str, Any] = {"package": doc.app.package, "name": doc.app.name}
    if doc.app.version:
        app["version"] = doc.app.version
    app["start_screen"] = doc.app.start_screen
    app["dialect"] = doc.app.dialect.value
    if doc.app.allow_apps:
        app["allow_apps"] = list(doc.app.allow_apps)
    out: dict[str, Any] = {"format": 1, "app": app}
    if doc.notes:
        out["notes"] = doc.notes
    out["screens"] = {s.name: screen_to_data(s, doc.app.dialect) for s in doc.screens}
    if doc.watchers:
        out["watchers"] = {w.name: watcher_to_data(w) for w in doc.watchers}
    return out


def watcher_to_data(w: Watcher) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if w.description:
        out["description"] = w.description
    if w.when is not None:
        out["when"] = w.when
    if w.when_text is not None:
        out["when_text"] = w.when_text
    if w.tap is not None:
        out["tap"] = w.tap
    if w.tap_text is not None:
        out["tap_text"] = w.tap_text
    if w.limit != DEFAULT_LIMIT:
        out["limit"] = w.limit
    return out
