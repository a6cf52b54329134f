"""Task suites: what ``tapir eval`` runs. The format is described in ``docs/eval.md``.

A suite is a folder with ``suite.yaml`` (its apps and task files) or a DroidTask ``tasks.json``
folder (``tapir.eval.droidtask``); ``load_suite`` takes either::

    suite = load_suite("samples/suite")            # raises SuiteError listing every problem
    suite.tasks[0].id, suite.tasks[0].difficulty   # 'clock/open_alarms', 'easy'
    easy = suite.select(levels=["easy"], apps=["music"])

Each task has its text (what a model is asked), its app (document and simulated device), a start
state (a fresh app, plus optional setup statements), a difficulty level, the number of actions a
person needs (ground truth for the reversed redundancy ratio), a reference script and its success
checks: expressions on the app's final state (``tapir.eval.checks``) and/or actions that must all
appear in the run's action log (the DroidTask rule).
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from tapir.core.diagnostics import Diagnostic, render_diagnostics
from tapir.core.document import AppDocument
from tapir.core.errors import DocumentError, UsageError
from tapir.core.nesting import compose_yaml
from tapir.core.safety import normalize_token
from tapir.eval.checks import CheckExpression, CheckSyntaxError, compile_check

#: Difficulty levels, easiest first (see docs/eval.md for what each one means).
LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
SUITE_FILE = "suite.yaml"
FORMAT_VERSION = 1

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Location:
    """Where something was written: ``file:line:col`` (1-based)."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True)
class Check:
    """One success check on the app's final state."""

    expression: CheckExpression
    where: Location

    @property
    def text(self) -> str:
        return self.expression.text


@dataclass(frozen=True)
class AppSpec:
    """An app of the suite: its document and the simulated device that runs it."""

    name: str
    document: AppDocument
    #: ``sim:music``, ``sim:/path/to/recording``...: what a simulator slot starts for its tasks.
    device: str
    document_path: str


@dataclass(frozen=True)
class Task:
    id: str
    app: str
    #: What the user asks for (the model's prompt); a reference script does it by hand.
    text: str
    difficulty: str
    #: Actions a person needs (taps, long taps, text entries, back/enter; scrolls not counted).
    steps: int | None
    reference: str | None
    #: File name used in the reference's error messages.
    reference_file: str | None
    #: Statements run before the task on the same device; their actions are not counted.
    setup: str | None
    checks: tuple[Check, ...]
    #: The DroidTask rule: each must appear in the action log (``tap: <label>``...).
    actions: tuple[str, ...]
    where: Location
    #: Remarks from loading (e.g. ground-truth steps a replay reference could not express).
    notes: tuple[str, ...] = ()
    #: What the person who asks for the task allows its script to do (``docs/safety.md``): the
    #: task "Delete the note X" allows ``delete``; a generated script cannot allow itself anything.
    allow: tuple[str, ...] = ()
    #: The simulated device this task runs on when not its app's (``AppSpec.device``): a DroidTask
    #: replay started where the task's recorded trace starts (``sim:DIR#task4``).
    device: str | None = None

    @property
    def needs_state(self) -> bool:
        """True when a check reads the app's state, which only a simulated app exposes."""
        return bool(self.checks)


@dataclass(frozen=True)
class Suite:
    name: str
    path: str
    #: ``tapir`` (suite.yaml) or ``droidtask`` (a tasks.json with recordings).
    kind: str
    apps: Mapping[str, AppSpec]
    tasks: tuple[Task, ...]
    #: What loading left out and why (e.g. DroidTask apps without a recording).
    notes: tuple[str, ...] = ()
    #: Hash of the task definitions, references and documents (reports record it).
    digest: str = field(default="", compare=False)
    #: The texts of the suite's tasks that ``select`` left out: still the suite's, so a model's
    #: examples never include them either (a run of one app must not see another's tasks).
    unselected: tuple[str, ...] = field(default=(), compare=False)

    def select(self, *, ids: Iterable[str] = (), apps: Iterable[str] = (), levels: Iterable[str] = ()) -> Suite:
        """The tasks whose id matches one of ``ids`` (shell patterns: ``music/*``), of one of
        ``apps`` and one of ``levels``; an empty filter keeps everything. Raises ``UsageError``
        for an unknown app or level, or when nothing is left."""
        ids, apps, levels = list(ids), list(apps), list(levels)
        for app in apps:
            if app not in self.apps:
                raise UsageError(f"the suite has no app {app!r} (it has {', '.join(self.apps)})")
        for level in levels:
            if level not in LEVELS:
                raise UsageError(f"unknown difficulty {level!r} (levels: {', '.join(LEVELS)})")
        kept = tuple(
            t for t in self.tasks
            if (not ids or any(fnmatch.fnmatchcase(t.id, p) or t.id == p for p in ids))
            and (not apps or t.app in apps) and (not levels or t.difficulty in levels)
        )
        if not kept:
            raise UsageError("no task of the suite matches the selection")
        dropped = tuple(t.text for t in self.tasks if t not in kept)
        return replace(self, tasks=kept, unselected=self.unselected + dropped)


class SuiteError(DocumentError):
    """A suite that cannot be loaded; every problem found is listed, each at its file and line."""

    code = "suite"

    def __init__(self, message: str, problems: list[tuple[str, Diagnostic]]) -> None:
        super().__init__(message, [p for _, p in problems], filename=problems[0][0] if problems else None)
        self.located = list(problems)

    def render(self) -> str:
        by_file: dict[str, list[Diagnostic]] = {}
        for filename, problem in self.located:
            by_file.setdefault(filename, []).append(problem)
        if not by_file:
            return f"{self.filename or '<suite>'}: {self.category}: {self.message}"
        blocks = [render_diagnostics(problems, _source_of(filename), filename, summary=False)
                  for filename, problems in by_file.items()]
        return f"{self.message}\n" + "\n".join(blocks)


def _source_of(filename: str) -> str | None:
    """The text of a suite file, to quote the line of a problem (None when it cannot be read)."""
    try:
        return Path(filename).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# ---------------------------------------------------------------------------------------------
# Loading


def load_suite(path: str | Path) -> Suite:
    """A suite from a folder or file: ``suite.yaml`` (or its folder), or a DroidTask ``tasks.json``
    (or its folder), whose apps with a recording and a document become a replay suite."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"no such suite: {path}")
    if p.is_dir():
        if (p / SUITE_FILE).is_file():
            return _SuiteReader().read(p / SUITE_FILE)
        if (p / "tasks.json").is_file():
            from tapir.eval.droidtask import load_droidtask_suite

            return load_droidtask_suite(p / "tasks.json")
        raise UsageError(f"{path} has neither {SUITE_FILE} nor a DroidTask tasks.json (the suite format is in "
                         "docs/eval.md)")
    if p.name == "tasks.json" or p.suffix == ".json":
        from tapir.eval.droidtask import load_droidtask_suite

        return load_droidtask_suite(p)
    return _SuiteReader().read(p)


def suite_digest(tasks: Iterable[Task], documents: Iterable[bytes]) -> str:
    """A short stable hash of what decides a run's outcome: tasks, references and documents."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(json.dumps([t.id, t.app, t.text, t.difficulty, t.steps, t.reference, t.setup,
                             [c.text for c in t.checks], list(t.actions)], ensure_ascii=False).encode())
    for data in documents:
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _column(node: yaml.Node) -> int:
    return int(node.start_mark.column) + 1


class _SuiteReader:
    """Reads suite.yaml and its task files from YAML nodes, keeping every node's position.

    (Like ``docgen.loader``'s builder, which is private to documents, it records a problem and
    goes on, so that one run shows every mistake of the suite.)
    """

    def __init__(self) -> None:
        self.problems: list[tuple[str, Diagnostic]] = []
        self.file = ""
        self.loaded_documents: dict[str, bytes] = {}

    # -- reporting --------------------------------------------------------------------------------

    def problem(self, node: yaml.Node | None, message: str, code: str = "suite", *, column: int | None = None,
                line: int | None = None) -> None:
        ln = line if line is not None else (_line(node) if node is not None else None)
        col = column if column is not None else (_column(node) if node is not None else None)
        self.problems.append((self.file, Diagnostic.at_line(message, ln, col, code=code)))

    def where(self, node: yaml.Node) -> Location:
        return Location(self.file, _line(node), _column(node))

    # -- typed access -------------------------------------------------------------------------------

    def compose(self, path: Path) -> yaml.Node | None:
        self.file = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problem(None, f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "io")
            return None
        try:
            node = compose_yaml(text, yaml.SafeLoader, filename=str(path))
        except DocumentError as exc:  # nested past the limit: refused before it is composed
            first = exc.problems[0]
            self.problem(None, first.message, "too-deep", line=first.line)
            return None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            self.problem(None, f"not valid YAML: {exc.problem or exc}", "syntax",
                         line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None)
            return None
        if node is None:
            self.problem(None, "the file is empty", "syntax")
        return node

    def fields(self, node: yaml.Node, what: str, required: tuple[str, ...],
               optional: tuple[str, ...]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{what} must be a mapping", "bad-type")
            return {}
        out: dict[str, yaml.Node] = {}
        known = (*required, *optional)
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name not in known:
                close = difflib.get_close_matches(str(name), known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
                self.problem(key, f"unknown field {name!r} in {what} ({hint})", "unknown-field")
                continue
            assert name is not None
            if name in out:
                self.problem(key, f"duplicate field {name!r} in {what}", "duplicate")
                continue
            out[name] = value
        for name in required:
            if name not in out:
                self.problem(node, f"{what} lacks the required field {name!r}", "missing-field")
        return out

    def text(self, node: yaml.Node | None, what: str) -> str | None:
        if node is None:
            return None
        if isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null":
            if node.tag in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
                return str(node.value)
        self.problem(node, f"{what} must be text", "bad-type")
        return None

    def integer(self, node: yaml.Node | None, what: str) -> int | None:
        if node is None:
            return None
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int":
            value = int(node.value)
            if value >= 1:
                return value
        self.problem(node, f"{what} must be a whole number of at least 1", "bad-type")
        return None

    def texts(self, node: yaml.Node | None, what: str) -> list[tuple[str, yaml.Node]]:
        """A text or a list of texts, each with its node."""
        if node is None:
            return []
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out = []
        for item in items:
            value = self.text(item, what)
            if value is not None:
                out.append((value, item))
        return out

    # -- suite.yaml -------------------------------------------------------------------------------

    def read(self, path: Path) -> Suite:
        root = self.compose(path)
        suite_file = self.file
        name = path.parent.name if path.name == SUITE_FILE else path.stem
        apps: dict[str, AppSpec] = {}
        tasks: list[Task] = []
        if root is not None:
            self.refuse_task_file(root, path)
            f = self.fields(root, "the suite", ("tasks",), ("format", "name", "description", "apps"))
            if "format" in f:
                fmt = self.text(f["format"], "format")
                if fmt is not None and fmt != str(FORMAT_VERSION):
                    self.problem(f["format"], f"unsupported suite format {fmt} (this Tapir reads format "
                                              f"{FORMAT_VERSION})", "format")
            name = self.text(f.get("name"), "name") or name
            if "apps" in f:
                apps = self.apps(f["apps"], path.parent)
            tasks_node = f.get("tasks")
            if tasks_node is not None:
                tasks = self.task_list(tasks_node, path.parent, apps, suite_file)
        self.file = suite_file
        seen: dict[str, Task] = {}
        for t in tasks:
            if t.id in seen:
                self.problems.append((t.where.file, Diagnostic.at_line(
                    f"duplicate task id {t.id!r} (first at {seen[t.id].where})", t.where.line, t.where.column,
                    code="duplicate")))
            seen.setdefault(t.id, t)
        if not tasks and not self.problems:
            self.problem(root, "the suite has no tasks", "empty")
        if self.problems:
            n = len(self.problems)
            raise SuiteError(f"cannot load the suite {path} ({n} problem{'s' if n != 1 else ''})", self.problems)
        return Suite(name=name, path=str(path), kind="tapir", apps=apps, tasks=tuple(tasks),
                     digest=suite_digest(tasks, self.loaded_documents.values()))

    def refuse_task_file(self, root: yaml.Node, path: Path) -> None:
        """A task file given where its suite is expected: say which suite to run instead."""
        keys = {k.value for k, _ in root.value} if isinstance(root, yaml.MappingNode) else set()
        if "app" not in keys or "apps" in keys:
            return
        owner = next((p for p in path.resolve().parents if (p / SUITE_FILE).is_file()), None)
        hint = (f"run its suite, {os.path.relpath(owner)}, with --app or --task to choose tasks" if owner is not None
                else f"a suite is a {SUITE_FILE} that lists task files (see docs/eval.md)")
        raise UsageError(f"{path} is a task file, not a suite: {hint}")

    def apps(self, node: yaml.Node, base: Path) -> dict[str, AppSpec]:
        from tapir.docgen.loader import load_document_report
        from tapir.sim.launch import check_sim_spec

        out: dict[str, AppSpec] = {}
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, "apps must map app names to their document and device", "bad-type")
            return out
        for key, value in node.value:
            name = str(key.value)
            f = self.fields(value, f"app {name!r}", ("document",), ("device",))
            doc_text = self.text(f.get("document"), "document")
            device = self.text(f.get("device"), "device") or f"sim:{name}"
            if "device" in f:
                try:
                    check_sim_spec(device)
                except UsageError as exc:
                    self.problem(f["device"], exc.message, "device")
                    continue
                if not device.startswith("sim"):
                    self.problem(f["device"], "an app's device must be a simulator (sim:APP or sim:replay:DIR); "
                                              "real devices are chosen with --device", "device")
                    continue
            if doc_text is None:
                continue
            doc_path = (base / doc_text).resolve()
            try:
                data = doc_path.read_bytes()
                report = load_document_report(doc_path)
            except (OSError, DocumentError) as exc:
                why = exc.message if isinstance(exc, DocumentError) else (exc.strerror or str(exc))
                self.problem(f["document"], f"cannot load the document {doc_text}: {why}", "document")
                continue
            if report.document is None:
                first = report.errors[0]
                self.problem(f["document"], f"the document {doc_text} is invalid: {doc_path}:{first.line}: "
                                            f"{first.message} (run `tapir doc validate {doc_path}`)", "document")
                continue
            self.loaded_documents[str(doc_path)] = data
            out[name] = AppSpec(name, report.document, device, str(doc_path))
        return out

    # -- tasks ------------------------------------------------------------------------------------

    def task_list(self, node: yaml.Node, base: Path, apps: dict[str, AppSpec], owner: str,
                  default_app: str | None = None) -> list[Task]:
        if not isinstance(node, yaml.SequenceNode):
            self.problem(node, "tasks must be a list of task files or tasks", "bad-type")
            return []
        out: list[Task] = []
        for item in node.value:
            self.file = owner
            if isinstance(item, yaml.ScalarNode):
                out += self.task_file(item, base, apps)
            else:
                task = self.task(item, base, apps, default_app)
                if task is not None:
                    out.append(task)
        return out

    def task_file(self, node: yaml.ScalarNode, base: Path, apps: dict[str, AppSpec]) -> list[Task]:
        path = base / str(node.value)
        if not path.is_file():
            self.problem(node, f"no task file {node.value} (looked for {path})", "io")
            return []
        owner = self.file
        root = self.compose(path)
        if root is None:
            return []
        f = self.fields(root, "a task file", ("tasks",), ("app",))
        app = self.text(f.get("app"), "app")
        if app is not None and app not in apps:
            self.problem(f["app"], self._unknown_app(app, apps), "unknown-app")
            app = None
        tasks = self.task_list(f["tasks"], path.parent, apps, self.file, app) if "tasks" in f else []
        self.file = owner
        return tasks

    def _unknown_app(self, app: str, apps: Mapping[str, AppSpec]) -> str:
        close = difflib.get_close_matches(app, list(apps), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"the suite's apps: {', '.join(apps) or 'none'}"
        return f"unknown app {app!r} ({hint})"

    def task(self, node: yaml.Node, base: Path, apps: dict[str, AppSpec], default_app: str | None) -> Task | None:
        f = self.fields(node, "a task", ("id", "task", "difficulty"),
                        ("app", "steps", "reference", "setup", "check", "actions", "notes", "allow"))
        if not f:
            return None
        ident = self.text(f.get("id"), "id")
        if ident is not None and not _ID.match(ident):
            self.problem(f["id"], f"task id {ident!r} must be letters, digits, '_', '-' or '.'", "bad-id")
        app = self.text(f.get("app"), "app") or default_app
        if app is None:
            self.problem(node, "the task names no app (give `app:` here or in its task file)", "missing-field")
        elif app not in apps:
            self.problem(f.get("app", node), self._unknown_app(app, apps), "unknown-app")
        text = self.text(f.get("task"), "task")
        level = self.text(f.get("difficulty"), "difficulty")
        if level is not None and level not in LEVELS:
            self.problem(f["difficulty"], f"unknown difficulty {level!r} (levels: {', '.join(LEVELS)})", "bad-level")
        steps = self.integer(f.get("steps"), "steps")
        reference, reference_file = self.reference(f, base, ident)
        setup = self.text(f.get("setup"), "setup")
        checks = tuple(self.check(value, item) for value, item in self.texts(f.get("check"), "a check"))
        actions = tuple(v.strip().lower() for v, _ in self.texts(f.get("actions"), "an action"))
        if "check" not in f and "actions" not in f:
            self.problem(node, "the task has no success check: give `check:` (state) or `actions:` "
                               "(the DroidTask rule)", "missing-field")
        if ident is None or app is None or app not in apps or text is None or level not in LEVELS:
            return None
        if any(c is None for c in checks):
            return None
        notes = tuple(v for v, _ in self.texts(f.get("notes"), "a note"))
        allow: list[str] = []
        for value, item in self.texts(f.get("allow"), "a permission"):
            try:
                allow.append(normalize_token(value))
            except ValueError as exc:
                self.problem(item, f"allow: {exc}", "bad-allow")
        return Task(id=f"{app}/{ident}", app=app, text=" ".join(text.split()), difficulty=level or "", steps=steps,
                    reference=reference, reference_file=reference_file, setup=setup,
                    checks=tuple(c for c in checks if c is not None), actions=actions, where=self.where(node),
                    notes=notes, allow=tuple(allow))

    def reference(self, f: dict[str, yaml.Node], base: Path, ident: str | None) -> tuple[str | None, str | None]:
        """The reference script: the file named by ``reference:``, else ``<id>.tap`` beside the task
        file when it exists (a task may have none: then it cannot run with --oracle)."""
        if "reference" in f:
            name = self.text(f["reference"], "reference")
            if name is None:
                return None, None
            path = base / name
            if not path.is_file():
                self.problem(f["reference"], f"no reference script {name} (looked for {path})", "io")
                return None, None
        elif ident is not None and (base / f"{ident}.tap").is_file():
            path = base / f"{ident}.tap"
        else:
            return None, None
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            self.problem(f.get("reference"), f"cannot read the reference script {path}: {exc}", "io")
            return None, None

    def check(self, value: str, node: yaml.Node) -> Check | None:
        try:
            expression = compile_check(value)
        except CheckSyntaxError as exc:
            # a plain one-line scalar starts at its node; elsewhere point at the node itself
            plain = isinstance(node, yaml.ScalarNode) and node.style is None and "\n" not in value.strip()
            column = _column(node) + exc.column - 1 if plain else _column(node)
            self.problem(node, f"check: {exc.message}", "check", column=column)
            return None
        return Check(expression, self.where(node))


__all__ = ["LEVELS", "AppSpec", "Check", "Location", "Suite", "SuiteError", "Task", "load_suite", "suite_digest"]
