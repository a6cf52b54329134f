"""Edits to an app document file in place: a new element, one more identifier, ``sensitive: true``.

    editor = DocumentEditor("music.yaml")
    editor.add_element("songs_screen", "sort_button", kind="button", description="Sorts the songs.",
                       identifiers=["//node[@resource-id='org.x:id/sort']"])
    editor.add_identifier("songs_screen__sort_button", "//node[@content-desc='Sort']")
    editor.set_sensitive("songs_screen__delete_button")
    # each returns an Edit: the new document (loaded and validated), the line changed, warnings

A document is a file people write and keep under version control, so an edit changes only the
lines it adds (or the one value it sets): comments, blank lines, key order, quoting and
indentation elsewhere stay byte for byte. The places to edit are found with PyYAML's composer,
which knows each node's line and column (the loader's own positions); the new lines copy the
indentation the document already uses. ``tapir.docgen.writer`` regenerates a whole document and
is not used here.

Every edit is checked before the file is touched: the new text is loaded and validated as
``tapir doc validate`` would, and an edit that adds an error (a name already taken, an XPath
lxml cannot compile) is refused with ``EditRefused`` listing the problems, the file unchanged.
A document that already had errors may still be edited, as long as the edit adds none. The file
is replaced atomically (a temporary file renamed over it), keeping its permissions. JSON documents
(which have no comments) are edited as JSON, key order kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tapir.core.diagnostics import Diagnostic, render_diagnostics
from tapir.core.document import AppDocument, Dialect
from tapir.core.errors import DocumentError, TapirError
from tapir.core.nesting import compose_yaml, load_json
from tapir.docgen.loader import LoadResult, loads_document
from tapir.dsl.api import Kind
from tapir.inspector.files import write_atomic

__all__ = ["DocumentEditor", "Edit", "EditRefused"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_Pair = tuple[yaml.Node, yaml.Node]


class EditRefused(TapirError):
    """An edit that would make the document invalid, or that cannot be made; the file is unchanged.

    ``problems`` are the errors the edit would have added (rendered against the new text)."""

    code = "edit-refused"

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass(frozen=True)
class Edit:
    """A change written to the document: what it was, the line it is on, and the document as it
    now loads (warnings included)."""

    what: str
    line: int
    document: AppDocument
    warnings: tuple[str, ...] = ()


def _scalar(value: str) -> str:
    """``value`` as a YAML scalar on one line: plain when YAML allows it, else quoted."""
    if "\n" in value or "\r" in value:
        return yaml.safe_dump(value, default_style='"', allow_unicode=True, width=10**9).strip()
    out = yaml.safe_dump(value, allow_unicode=True, width=10**9)
    return out.removesuffix("\n...\n").strip()


def _get(mapping: yaml.Node | None, key: str) -> _Pair | None:
    if not isinstance(mapping, yaml.MappingNode):
        return None
    for k, v in mapping.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


def _is_empty(node: yaml.Node) -> bool:
    if isinstance(node, yaml.ScalarNode):
        return node.tag.endswith(":null") or node.value in ("", "~", "null")
    return isinstance(node, yaml.CollectionNode) and not node.value


class DocumentEditor:
    """In-place edits of one document file (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    # -- the edits ---------------------------------------------------------------------------

    def add_element(self, screen: str, name: str, *, kind: str | Kind, description: str,
                    identifiers: Sequence[str], item_of: str | None = None, sensitive: bool = False) -> Edit:
        """Add ``<screen>__<name>`` at the end of ``screen``'s elements. ``name`` is the part after
        ``screen__`` (a full name with that prefix is accepted too)."""
        kind = kind if isinstance(kind, Kind) else self._kind(kind)
        name = name.strip().removeprefix(f"{screen}__")
        if not _NAME.match(name) or "__" in name:
            raise EditRefused(f"{name!r} is not an element name: use lower-case words joined by single "
                              "underscores, such as sort_button")
        description = " ".join(description.split())
        if not description:
            raise EditRefused("an element needs a description: what it is for, in a few words")
        if not identifiers:
            raise EditRefused("an element needs at least one identifier")
        full = f"{screen}__{name}"
        text = self._read()
        if self._is_json(text):
            return self._json_edit(text, f"added ${full}", lambda data: self._json_add_element(
                data, screen, full, kind, description, identifiers, item_of, sensitive))
        root = self._compose(text)
        screens = _get(root, "screens")
        target = _get(screens[1], screen) if screens is not None else None
        if target is None or not isinstance(target[1], yaml.MappingNode):
            raise EditRefused(f"the document has no screen {screen!r}")
        lines = text.splitlines(keepends=True)
        style = self._style(root, lines)
        dialect = self._dialect(root)
        screen_map = target[1]
        elements = _get(screen_map, "elements")
        field_col = screen_map.value[0][0].start_mark.column if screen_map.value else target[0].start_mark.column + 2
        block: list[str] = []
        if elements is None or _is_empty(elements[1]):
            el_col = field_col + style.step
            if elements is None:
                at = self._end_line(screen_map, lines, field_col)
                block.append(" " * field_col + "elements:\n")
            else:
                key_line = elements[0].start_mark.line
                lines[key_line] = " " * field_col + "elements:\n"  # drop a `{}` or `null`
                at = key_line + 1
        else:
            if not isinstance(elements[1], yaml.MappingNode):
                raise EditRefused(f"the elements of {screen} are not a mapping")
            if isinstance(elements[1], yaml.MappingNode) and elements[1].flow_style:
                raise EditRefused(f"the elements of {screen} are written on one line: write them as a block first")
            el_col = elements[1].value[0][0].start_mark.column
            at = self._end_line(elements[1], lines, el_col)
        f = " " * (el_col + style.step)
        block.append(" " * el_col + f"{full}:\n")
        block.append(f"{f}kind: {kind.value}\n")
        block.append(f"{f}description: {_scalar(description)}\n")
        block.append(f"{f}identifiers:\n")
        block += [f"{f}{' ' * style.seq_indent}- {self._identifier(x, dialect)}\n" for x in identifiers]
        if item_of:
            block.append(f"{f}item_of: {_scalar(item_of)}\n")
        if sensitive:
            block.append(f"{f}sensitive: true\n")
        lines[at:at] = block
        changed = at + (2 if elements is None else 1)
        return self._commit(text, "".join(lines), f"added ${full}", changed)

    def add_identifier(self, element: str, xpath: str, *, first: bool = False) -> Edit:
        """Add ``xpath`` to the element's identifier queue: last (a fallback), or ``first``."""
        xpath = xpath.strip()
        if not xpath:
            raise EditRefused("the identifier is empty")
        text = self._read()
        if self._is_json(text):
            return self._json_edit(text, f"added an identifier to ${element}",
                                   lambda data: self._json_add_identifier(data, element, xpath, first))
        root = self._compose(text)
        el = self._element(root, element)
        idents = _get(el, "identifiers")
        lines = text.splitlines(keepends=True)
        value = self._identifier(xpath, self._dialect(root))
        if idents is None or _is_empty(idents[1]):
            raise EditRefused(f"${element} has no identifiers to add to; add the element again instead")
        seq = idents[1]
        if not isinstance(seq, yaml.SequenceNode):
            raise EditRefused(f"the identifiers of ${element} are not a list")
        if seq.flow_style:
            # `identifiers: [a, b]`: insert into the brackets on their own line(s)
            node = seq.value[0] if first else seq.value[-1]
            line, col = (node.start_mark.line, node.start_mark.column) if first else (
                node.end_mark.line, node.end_mark.column)
            insert = f"{value}, " if first else f", {value}"
            lines[line] = lines[line][:col] + insert + lines[line][col:]
            return self._commit(text, "".join(lines), f"added an identifier to ${element}", line + 1)
        item = seq.value[0]
        prefix = self._dash_prefix(lines, item)
        if first:
            at = item.start_mark.line
        else:
            at = self._end_line(seq, lines, len(prefix) - 1)
        lines[at:at] = [f"{prefix}{value}\n"]
        return self._commit(text, "".join(lines), f"added an identifier to ${element}", at + 1)

    def set_sensitive(self, element: str, value: bool = True) -> Edit:
        """Set the element's ``sensitive`` field (written as ``sensitive: true``)."""
        text = self._read()
        word = "true" if value else "false"
        what = f"marked ${element} {'sensitive' if value else 'not sensitive'}"
        if self._is_json(text):
            return self._json_edit(text, what, lambda data: self._json_set(data, element, "sensitive", value))
        root = self._compose(text)
        el = self._element(root, element)
        lines = text.splitlines(keepends=True)
        found = _get(el, "sensitive")
        if found is not None:
            node = found[1]
            if node.start_mark.line != node.end_mark.line:
                raise EditRefused(f"the sensitive field of ${element} spans lines: edit it by hand")
            line = node.start_mark.line
            lines[line] = lines[line][:node.start_mark.column] + word + lines[line][node.end_mark.column:]
            return self._commit(text, "".join(lines), what, line + 1)
        assert isinstance(el, yaml.MappingNode)
        col = el.value[0][0].start_mark.column
        at = self._end_line(el, lines, col)
        lines[at:at] = [" " * col + f"sensitive: {word}\n"]
        return self._commit(text, "".join(lines), what, at + 1)

    # -- reading and writing -----------------------------------------------------------------

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EditRefused(f"cannot read {self.path}: {getattr(exc, 'strerror', None) or exc}") from None

    @staticmethod
    def _is_json(text: str) -> bool:
        return text.lstrip().startswith("{")

    def _compose(self, text: str) -> yaml.Node:
        try:
            root = compose_yaml(text, yaml.SafeLoader, filename=str(self.path))
        except DocumentError as exc:  # nested past the limit
            raise EditRefused(exc.message) from None
        except yaml.YAMLError as exc:
            raise EditRefused(f"{self.path} is not valid YAML now ({exc}); fix it before editing from the page") \
                from None
        if not isinstance(root, yaml.MappingNode):
            raise EditRefused(f"{self.path} is not an app document (no mapping at the top)")
        return root

    def _element(self, root: yaml.Node, element: str) -> yaml.Node:
        screen = element.split("__", 1)[0]
        screens = _get(root, "screens")
        scr = _get(screens[1], screen) if screens is not None else None
        els = _get(scr[1], "elements") if scr is not None else None
        found = _get(els[1], element) if els is not None else None
        if found is None or not isinstance(found[1], yaml.MappingNode):
            raise EditRefused(f"the document has no element ${element}")
        if found[1].flow_style:
            raise EditRefused(f"${element} is written on one line: write it as a block first")
        return found[1]

    @staticmethod
    def _dialect(root: yaml.Node) -> Dialect:
        app = _get(root, "app")
        d = _get(app[1], "dialect") if app is not None else None
        return Dialect.HTML if d is not None and getattr(d[1], "value", "") == "html" else Dialect.UIAUTOMATOR

    @staticmethod
    def _identifier(xpath: str, dialect: Dialect) -> str:
        # the inspector's identifiers are uiautomator XPaths; a document whose plain strings are
        # HTML-dialect names the dialect of this one
        return _scalar(xpath) if dialect == Dialect.UIAUTOMATOR else f"uiautomator: {_scalar(xpath)}"

    @staticmethod
    def _kind(value: str) -> Kind:
        try:
            return Kind(value)
        except ValueError:
            raise EditRefused(f"unknown kind {value!r}: one of {', '.join(k.value for k in Kind)}") from None

    @dataclass(frozen=True)
    class _Style:
        #: Indentation of a mapping inside its key.
        step: int = 2
        #: Spaces between a sequence's key column and its dashes (0: ``key:\n- a``).
        seq_indent: int = 2

    def _style(self, root: yaml.Node, lines: list[str]) -> _Style:
        """The indentation the document uses, read from its first element."""
        screens = _get(root, "screens")
        if screens is None or not isinstance(screens[1], yaml.MappingNode):
            return self._Style()
        for _, scr in screens[1].value:
            els = _get(scr, "elements")
            if els is None or not isinstance(els[1], yaml.MappingNode) or not els[1].value:
                continue
            key, el = els[1].value[0]
            if not isinstance(el, yaml.MappingNode) or not el.value or el.flow_style:
                continue
            step = el.value[0][0].start_mark.column - key.start_mark.column
            idents = _get(el, "identifiers")
            seq_indent = 2
            if idents is not None and isinstance(idents[1], yaml.SequenceNode) and idents[1].value \
                    and not idents[1].flow_style:
                dash = len(self._dash_prefix(lines, idents[1].value[0])) - 2
                seq_indent = max(0, dash - idents[0].start_mark.column)
            return self._Style(step if step > 0 else 2, seq_indent)
        return self._Style()

    @staticmethod
    def _dash_prefix(lines: list[str], item: yaml.Node) -> str:
        """The text before a block sequence item's value: ``'      - '``."""
        line = lines[item.start_mark.line]
        head = line[:item.start_mark.column]
        return head if head.strip() == "-" else " " * max(0, item.start_mark.column - 2) + "- "

    @staticmethod
    def _end_line(node: yaml.Node, lines: list[str], inner_col: int) -> int:
        """The line index right after ``node``'s last line of content, where a new entry goes.

        A block collection ends where the next token starts, after any blank lines and comments;
        those that are indented less than ``inner_col`` belong to what follows and stay after the
        new entry, those indented as the node's own entries stay before it."""
        end = node.end_mark.line
        if end >= len(lines) or not lines[end][:node.end_mark.column].strip():
            end -= 1  # the mark is where the next token starts: that line is not the node's
        while end > node.start_mark.line:
            stripped = lines[end].strip()
            if stripped and not (stripped.startswith("#") and len(lines[end]) - len(lines[end].lstrip()) < inner_col):
                break
            end -= 1
        return end + 1

    def _commit(self, old: str, new: str, what: str, line: int) -> Edit:
        if old and not old.endswith("\n") and not new.endswith("\n"):
            new += "\n"
        before = loads_document(old, source=str(self.path))
        after = loads_document(new, source=str(self.path))
        added = self._new_errors(before, after)
        if added or after.document is None:
            shown = [render_diagnostics([p], new, str(self.path)) for p in (added or after.errors)]
            raise EditRefused(f"not written: the edit would make {self.path.name} invalid", shown)
        self._write(new)
        warnings = tuple(render_diagnostics([w], new, str(self.path)) for w in after.warnings
                         if w.line is not None and abs(w.line - line) <= 12)
        return Edit(what, line, after.document, warnings)

    @staticmethod
    def _new_errors(before: LoadResult, after: LoadResult) -> list[Diagnostic]:
        known: dict[tuple[str | None, str], int] = {}
        for p in before.errors:
            key = (p.code, p.message)
            known[key] = known.get(key, 0) + 1
        added = []
        for p in after.errors:
            key = (p.code, p.message)
            if known.get(key):
                known[key] -= 1
            else:
                added.append(p)
        return added

    def _write(self, text: str) -> None:
        write_atomic(self.path, text)

    # -- JSON documents ----------------------------------------------------------------------

    def _json_edit(self, text: str, what: str, change: Any) -> Edit:
        try:
            data = load_json(text, filename=str(self.path))
        except DocumentError as exc:  # nested past the limit
            raise EditRefused(exc.message) from None
        except json.JSONDecodeError as exc:
            raise EditRefused(f"{self.path} is not valid JSON now ({exc}); fix it before editing from the page") \
                from None
        line = change(data)
        indent = 2
        m = re.search(r"\n( +)\S", text)
        if m:
            indent = len(m.group(1))
        new = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
        return self._commit(text, new, what, line)

    @staticmethod
    def _json_screen(data: Any, screen: str) -> dict[str, Any]:
        scr = data.get("screens", {}).get(screen) if isinstance(data, dict) else None
        if not isinstance(scr, dict):
            raise EditRefused(f"the document has no screen {screen!r}")
        return scr

    def _json_element(self, data: Any, element: str) -> dict[str, Any]:
        scr = self._json_screen(data, element.split("__", 1)[0])
        el = scr.get("elements", {}).get(element)
        if not isinstance(el, dict):
            raise EditRefused(f"the document has no element ${element}")
        return el

    def _json_add_element(self, data: Any, screen: str, full: str, kind: Kind, description: str,
                          identifiers: Sequence[str], item_of: str | None, sensitive: bool) -> int:
        scr = self._json_screen(data, screen)
        entry: dict[str, Any] = {"kind": kind.value, "description": description, "identifiers": list(identifiers)}
        if item_of:
            entry["item_of"] = item_of
        if sensitive:
            entry["sensitive"] = True
        scr.setdefault("elements", {})[full] = entry
        return 1

    def _json_add_identifier(self, data: Any, element: str, xpath: str, first: bool) -> int:
        el = self._json_element(data, element)
        idents = el.setdefault("identifiers", [])
        idents.insert(0, xpath) if first else idents.append(xpath)
        return 1

    def _json_set(self, data: Any, element: str, key: str, value: Any) -> int:
        self._json_element(data, element)[key] = value
        return 1
