"""Load an app document from YAML or JSON, keeping the line of everything for error messages.

Both forms go through PyYAML's composer (JSON is valid YAML), which gives every node its
position, so a problem in a JSON document is reported at its line too. The node tree is turned
into ``tapir.core.document`` dataclasses here; cross-references are checked by
``tapir.docgen.validate``. Every problem of a document is collected and raised together as one
``DocumentError``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from tapir.core.diagnostics import Diagnostic
from tapir.core.document import AppDocument, AppInfo, Dialect, Element, Identifier, Screen, Signature, Step, Watcher
from tapir.core.errors import DocumentError, Span
from tapir.core.nesting import compose_yaml
from tapir.core.watchers import DEFAULT_LIMIT
from tapir.dsl.api import Kind

try:  # libyaml's composer is several times faster on large imported documents
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pure-Python PyYAML build
    _Loader = yaml.SafeLoader

FORMAT_VERSION = 1
DEFAULT_WATCH_LIMIT = DEFAULT_LIMIT

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"

_STEP = re.compile(
    r"^\s*(?:(?P<target>[A-Za-z_][\w%]*)(?:\.match\((?P<query>'[^']*'|\"[^\"]*\")\))?\.)?"
    r"(?P<action>[A-Za-z_]\w*)\((?P<args>.*)\)\s*$",
    re.S,
)


@dataclass(frozen=True)
class LoadResult:
    """A document (None when it has errors) and every problem found, warnings included."""

    document: AppDocument | None
    problems: tuple[Diagnostic, ...]

    @property
    def errors(self) -> list[Diagnostic]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [p for p in self.problems if p.severity == "warning"]


def load_document(path: str | Path) -> AppDocument:
    """Load and validate ``path``; raise ``DocumentError`` listing every error found."""
    result = load_document_report(path)
    if result.document is None:
        raise DocumentError("invalid app document", list(result.errors), filename=str(path))
    return result.document


def load_document_report(path: str | Path) -> LoadResult:
    """Load ``path`` and return the document with all problems (warnings do not stop loading)."""
    return loads_document(read_document_text(path), source=str(path))


#: What app documents (and compiled symbol tables) are named: any other path is refused unread,
#: so a script's `# doc:` line cannot make Tapir read /proc/self/environ or a private key.
DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json")
#: The largest document read (real ones are well under a megabyte).
MAX_DOCUMENT_BYTES = 16 << 20


def read_document_text(path: str | Path) -> str:
    """The text of the app document at ``path``; a ``DocumentError`` (that quotes nothing of the
    file) when it is not a regular file named .yaml/.yml/.json, is too large, or is not UTF-8."""
    import os
    import stat

    p = Path(path)
    where = str(path)
    target = p.resolve()
    if p.suffix.lower() not in DOCUMENT_SUFFIXES or target.suffix.lower() not in DOCUMENT_SUFFIXES:
        raise DocumentError(f"{p} is not an app document: documents are .yaml, .yml or .json files",
                            filename=where)
    try:
        st = os.stat(target)
        if not stat.S_ISREG(st.st_mode):
            raise DocumentError(f"{p} is not an app document: it is not a regular file", filename=where)
        if st.st_size > MAX_DOCUMENT_BYTES:
            raise DocumentError(f"{p} is too large to be an app document ({st.st_size:,} bytes; at most "
                                f"{MAX_DOCUMENT_BYTES:,})", filename=where)
        with open(target, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise DocumentError(f"cannot read the document: {exc.strerror or exc}", filename=where) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"{p} is too large to be an app document (more than {MAX_DOCUMENT_BYTES:,} bytes)",
                            filename=where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DocumentError(f"the document is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})",
                            filename=where) from None


#: A top-level key every app document has: text without one is not a document, and problems
#: found in it are reported without quoting it (it may be any file: a config, credentials).
_DOCUMENT_KEY = re.compile(r"""^\s*["']?(?:app|screens|format)["']?\s*:""", re.M)


def _foreign(what: str, code: str = "not-a-document") -> LoadResult:
    return LoadResult(None, (Diagnostic.at_line(
        f"this is not an app document: {what}", None, code=code,
        hint="an app document is YAML or JSON with the fields app and screens (docs/app-document.md)"),))


def loads_document(text: str, source: str | None = None) -> LoadResult:
    """Load a document from its text (YAML or JSON)."""
    from tapir.docgen.validate import validate

    looks_like_one = _DOCUMENT_KEY.search(text) is not None
    try:
        root = compose_yaml(text, _Loader, filename=source)
    except DocumentError as exc:  # nested past the limit: refused before it is composed
        if not looks_like_one:  # the same refusal, quoting nothing of what may be any file
            return LoadResult(None, tuple(Diagnostic("too-deep", p.severity, None, p.message) for p in exc.problems))
        return LoadResult(None, tuple(exc.problems))
    except yaml.MarkedYAMLError as exc:
        if not looks_like_one:
            return _foreign("it is not valid YAML or JSON")
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = Diagnostic.at_line(f"not valid YAML/JSON: {exc.problem or exc}", line, code="syntax")
        return LoadResult(None, (problem,))
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a control character)
        line = text.count("\n", 0, exc.position) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        problem = Diagnostic.at_line(f"not valid YAML/JSON: the character {char!r} is not allowed ({exc.reason})",
                                     line, code="syntax")
        return LoadResult(None, (problem,))
    except UnicodeEncodeError as exc:  # a lone surrogate (text from an editor, not from a file)
        line = text.count("\n", 0, exc.start) + 1
        problem = Diagnostic.at_line(f"not valid YAML/JSON: the text is not Unicode ({exc.reason})", line,
                                     code="syntax")
        return LoadResult(None, (problem,))
    except yaml.YAMLError:  # any other refusal by the reader
        return _foreign("it is not YAML or JSON text")
    if root is not None and not isinstance(root, yaml.MappingNode):
        return _foreign("the document must be a mapping", "bad-type")
    if isinstance(root, yaml.MappingNode) and not _looks_upstream(root) and not any(
            isinstance(k, yaml.ScalarNode) and k.value in ("app", "screens", "format") for k, _ in root.value):
        return _foreign("it has none of the fields app and screens")
    builder = _NodeReader(source)
    doc = builder.build(root)
    problems = list(builder.problems)
    if doc is not None:
        problems += validate(doc)
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    has_errors = any(p.severity == "error" for p in problems)
    return LoadResult(None if has_errors else doc, tuple(problems))


def parse_step(text: str) -> Step | None:
    """``screen__element.action('arg', ...)``, ``screen.back()`` or ``back()``; None if malformed."""
    m = _STEP.match(text)
    if m is None:
        return None
    args: tuple[str, ...] = ()
    raw = m.group("args").strip()
    if raw:
        try:
            value = ast.literal_eval(f"({raw},)")
        except (ValueError, SyntaxError):
            return None
        if not all(isinstance(a, str) for a in value):
            return None
        args = tuple(value)
    query = ast.literal_eval(m.group("query")) if m.group("query") else None
    return Step(m.group("target"), m.group("action"), args, match=query)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _span(node: yaml.Node) -> Span:
    """Where a node is, from the start of its first line to its end (offsets included)."""
    a, b = node.start_mark, node.end_mark
    if b.line != a.line and b.column == 0:  # a block node ends at the start of the next line
        return Span(a.line + 1, a.column + 1, a.line + 1, 0, a.index, -1)
    return Span(a.line + 1, a.column + 1, b.line + 1, b.column + 1, a.index, b.index)


class _NodeReader:
    """Walks the composed node tree; records a problem for everything malformed and goes on."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.problems: list[Diagnostic] = []
        self.dialect = Dialect.UIAUTOMATOR

    def problem(self, node: yaml.Node | None, message: str, code: str, severity: str = "error") -> None:
        span = _span(node) if node is not None else None
        self.problems.append(Diagnostic(code, severity, span, message))

    # -- typed access ---------------------------------------------------------------------------

    def mapping(self, node: yaml.Node, what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """Keys in order; duplicate keys are reported (YAML and JSON loaders silently keep one)."""
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{what} must be a mapping", "bad-type")
            return {}
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                self.problem(key, f"{what}: keys must be plain names", "bad-type")
                continue
            if key.value in out:
                first = _line(out[key.value][0])
                self.problem(key, f"duplicate name {key.value!r} in {what} (first at line {first})", "duplicate-name")
                continue
            out[key.value] = (key, value)
        return out

    def fields(
        self, node: yaml.Node, what: str, required: tuple[str, ...], optional: tuple[str, ...]
    ) -> dict[str, yaml.Node]:
        items = self.mapping(node, what)
        known = set(required) | set(optional)
        for name, (key, _) in items.items():
            if name not in known:
                self.problem(key, f"unknown field {name!r} in {what} (known: {', '.join(sorted(known))})",
                             "unknown-field")
        if isinstance(node, yaml.MappingNode):
            for name in required:
                if name not in items:
                    self.problem(node, f"{what} lacks the required field {name!r}", "missing-field")
        return {name: value for name, (_, value) in items.items() if name in known}

    def text(self, node: yaml.Node | None, what: str, *, allow_null: bool = False) -> str | None:
        if node is None:
            return None
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _NULL and allow_null:
                return None
            if node.tag in (_STR, _INT, "tag:yaml.org,2002:float"):
                return str(node.value)
        self.problem(node, f"{what} must be text", "bad-type")
        return None

    def flag(self, node: yaml.Node | None, what: str) -> bool:
        if node is None:
            return False
        if isinstance(node, yaml.ScalarNode) and node.value.lower() in ("true", "false"):
            return node.value.lower() == "true"
        self.problem(node, f"{what} must be true or false", "bad-type")
        return False

    def sequence(self, node: yaml.Node | None, what: str) -> list[yaml.Node]:
        if node is None:
            return []
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL:
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.problem(node, f"{what} must be a list", "bad-type")
            return []
        return list(node.value)

    def kind(self, node: yaml.Node | None, what: str, default: Kind | None) -> Kind | None:
        value = self.text(node, what)
        if value is None:
            return default
        try:
            return Kind(value.strip().lower())
        except ValueError:
            known = ", ".join(k.value for k in Kind)
            self.problem(node, f"unknown kind {value!r} for {what} (known: {known})", "unknown-kind")
            return None

    def dialect_of(self, node: yaml.Node, value: str) -> Dialect | None:
        try:
            return Dialect(value)
        except ValueError:
            self.problem(node, f"unknown identifier dialect {value!r} (known: uiautomator, html)", "unknown-dialect")
            return None

    # -- the document ---------------------------------------------------------------------------

    def build(self, root: yaml.Node | None) -> AppDocument | None:
        if root is None:
            self.problems.append(Diagnostic.at_line("the document is empty", 1, code="missing-field"))
            return None
        if isinstance(root, yaml.MappingNode) and _looks_upstream(root):
            self.problem(root, "this is an AutoDroid-V2 document; convert it first with "
                               "`tapir doc import FILE.json -o app.yaml`", "upstream-format")
            return None
        top = self.fields(root, "the document", ("app", "screens"), ("format", "notes", "watchers"))
        if "format" in top:
            fmt = top["format"]
            if not (isinstance(fmt, yaml.ScalarNode) and fmt.value == str(FORMAT_VERSION)):
                self.problem(fmt, f"unsupported format {getattr(fmt, 'value', '?')!r} (this Tapir reads "
                                  f"format {FORMAT_VERSION})", "bad-format")
        if "app" not in top or "screens" not in top:
            return None
        app = self.app_info(top["app"])
        screens = [self.screen(name, key, value) for name, (key, value) in
                   self.mapping(top["screens"], "screens").items()]
        if isinstance(top["screens"], yaml.MappingNode) and not top["screens"].value:
            self.problem(top["screens"], "the document has no screens", "missing-field")
        if app is None:
            return None
        notes = self.text(top.get("notes"), "notes", allow_null=True)
        watchers = self.watchers(top.get("watchers"))
        return AppDocument(app, tuple(s for s in screens if s is not None), notes, self.source, watchers)

    def watchers(self, node: yaml.Node | None) -> tuple[Watcher, ...]:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return ()
        out: list[Watcher] = []
        for name, (key, value) in self.mapping(node, "watchers").items():
            what = f"watcher {name!r}"
            f = self.fields(value, what, (), ("tap", "tap_text", "when", "when_text", "limit", "description"))
            tap = self.text(f.get("tap"), f"{what}: tap", allow_null=True)
            tap_text = self.text(f.get("tap_text"), f"{what}: tap_text", allow_null=True)
            if (tap is None) == (tap_text is None) and isinstance(value, yaml.MappingNode):
                self.problem(value, f"{what}: give `tap` (an element to tap) or `tap_text` (the text of the view "
                                    "to tap), one of them", "missing-field" if tap is None else "bad-watcher")
                continue
            when = self.text(f.get("when"), f"{what}: when", allow_null=True)
            when_text = self.text(f.get("when_text"), f"{what}: when_text", allow_null=True)
            if when is not None and when_text is not None:
                self.problem(f["when_text"], f"{what}: give `when` (an element) or `when_text` (a text), not both",
                             "bad-watcher")
                when_text = None
            if when_text is not None and not when_text.strip():
                self.problem(f["when_text"], f"{what}: when_text is empty", "bad-watcher")
                when_text = None
            limit = DEFAULT_WATCH_LIMIT
            if "limit" in f:
                raw = f["limit"]
                if isinstance(raw, yaml.ScalarNode) and raw.tag == _INT and int(raw.value) >= 1:
                    limit = int(raw.value)
                else:
                    self.problem(raw, f"{what}: limit must be a whole number of times, at least 1", "bad-type")
            description = self.text(f.get("description"), f"{what}: description", allow_null=True)
            if isinstance(value, yaml.MappingNode):
                out.append(Watcher(name, tap=tap.strip() if tap else None, tap_text=tap_text,
                                   when=when.strip() if when else None, when_text=when_text, limit=limit,
                                   description=description, line=_line(key)))
        return tuple(out)

    def app_info(self, node: yaml.Node) -> AppInfo | None:
        f = self.fields(node, "app", ("package", "name", "start_screen"), ("version", "dialect", "allow_apps"))
        package = self.text(f.get("package"), "app.package")
        name = self.text(f.get("name"), "app.name")
        start = self.text(f.get("start_screen"), "app.start_screen")
        version = self.text(f.get("version"), "app.version", allow_null=True)
        if "dialect" in f:
            value = self.text(f["dialect"], "app.dialect")
            d = self.dialect_of(f["dialect"], value) if value else None
            if d is not None:
                self.dialect = d
        allow_apps = tuple(a for a in (self.text(n, "app.allow_apps: package")
                                       for n in self.sequence(f.get("allow_apps"), "app.allow_apps")) if a)
        if package is None or name is None or start is None:
            return None
        return AppInfo(package, name, start, version, self.dialect, _line(f["start_screen"]), allow_apps)

    def screen(self, name: str, key: yaml.Node, node: yaml.Node) -> Screen | None:
        what = f"screen {name!r}"
        # A missing signature is reported by validation ("no-signature"), with the other screen checks.
        f = self.fields(node, what, ("description", "elements"), ("signature", "notes"))
        description = self.text(f.get("description"), f"{what}: description") or ""
        signature = self.signature(f.get("signature"), what) if "signature" in f else Signature()
        elements: list[Element] = []
        if "elements" in f:
            for ename, (ekey, evalue) in self.mapping(f["elements"], f"{what}: elements").items():
                element = self.element(ename, ekey, evalue)
                if element is not None:
                    elements.append(element)
        notes = self.text(f.get("notes"), f"{what}: notes", allow_null=True)
        return Screen(name, description, signature, tuple(elements), notes, _line(key))

    def signature(self, node: yaml.Node | None, what: str) -> Signature:
        if node is None:
            return Signature()
        f = self.fields(node, f"{what}: signature", (), ("activity", "all", "none", "skeleton"))
        return Signature(
            activity=self.text(f.get("activity"), f"{what}: signature.activity", allow_null=True),
            all_of=self.identifiers(f.get("all"), f"{what}: signature.all"),
            none_of=self.identifiers(f.get("none"), f"{what}: signature.none"),
            skeleton=self.text(f.get("skeleton"), f"{what}: signature.skeleton", allow_null=True),
        )

    def identifiers(self, node: yaml.Node | None, what: str) -> tuple[Identifier, ...]:
        out: list[Identifier] = []
        for item in self.sequence(node, what):
            if isinstance(item, yaml.ScalarNode) and item.tag == _STR:
                out.append(Identifier(item.value, self.dialect, _line(item)))
            elif isinstance(item, yaml.MappingNode) and len(item.value) == 1:
                key, value = item.value[0]
                dialect = self.dialect_of(key, str(key.value))
                xpath = self.text(value, f"{what}: XPath")
                if dialect is not None and xpath is not None:
                    out.append(Identifier(xpath, dialect, _line(value)))
            else:
                self.problem(item, f"{what}: an identifier is an XPath string, or a mapping "
                                   "{uiautomator: XPATH} / {html: XPATH}", "bad-type")
        return tuple(out)

    def element(self, name: str, key: yaml.Node, node: yaml.Node) -> Element | None:
        what = f"element {name!r}"
        f = self.fields(
            node, what, ("kind", "description", "identifiers"),
            ("options", "effect", "leads_to", "item_of", "item_kind", "paths", "sensitive", "notes"),
        )
        kind = self.kind(f.get("kind"), what, None) if "kind" in f else None
        description = self.text(f.get("description"), f"{what}: description") or ""
        identifiers = self.identifiers(f.get("identifiers"), f"{what}: identifiers")
        options = tuple(
            o for o in (self.text(n, f"{what}: option") for n in self.sequence(f.get("options"), f"{what}: options"))
            if o is not None
        )
        paths: list[tuple[Step, ...]] = []
        for pnode in self.sequence(f.get("paths"), f"{what}: paths"):
            steps: list[Step] = []
            for snode in self.sequence(pnode, f"{what}: a path"):
                raw = self.text(snode, f"{what}: a path step")
                if raw is None:
                    continue
                step = parse_step(raw)
                if step is None:
                    self.problem(snode, f"{what}: malformed path step {raw!r} (expected e.g. "
                                        "'main_screen__menu_button.tap()' or 'back()')", "bad-step")
                    continue
                steps.append(Step(step.target, step.action, step.args, _line(snode), step.match))
            paths.append(tuple(steps))
        item_kind = self.kind(f.get("item_kind"), f"{what}: item_kind", Kind.OTHER) if "item_kind" in f else Kind.OTHER
        # A missing or unknown kind is already reported; keep the element (as `other`) so the paths
        # that name it are not reported again as naming an unknown element.
        return Element(
            name=name,
            kind=kind or Kind.OTHER,
            description=description,
            identifiers=identifiers,
            options=options,
            effect=self.text(f.get("effect"), f"{what}: effect", allow_null=True),
            leads_to=self.text(f.get("leads_to"), f"{what}: leads_to", allow_null=True),
            item_of=self.text(f.get("item_of"), f"{what}: item_of", allow_null=True),
            item_kind=item_kind or Kind.OTHER,
            paths=tuple(paths),
            notes=self.text(f.get("notes"), f"{what}: notes", allow_null=True),
            line=_line(key),
            sensitive=self.flag(f.get("sensitive"), f"{what}: sensitive"),
        )


def _looks_upstream(root: yaml.MappingNode) -> bool:
    """AutoDroid-V2 documents are ``{screen: {skeleton, elements}}`` with no ``app`` key."""
    keys = {k.value for k, _ in root.value if isinstance(k, yaml.ScalarNode)}
    if "app" in keys or not root.value:
        return False
    first = root.value[0][1]
    if not isinstance(first, yaml.MappingNode):
        return False
    inner = {k.value for k, _ in first.value if isinstance(k, yaml.ScalarNode)}
    return "elements" in inner and "skeleton" in inner
