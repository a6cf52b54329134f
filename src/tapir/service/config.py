"""``tapir.toml``: a project's settings, read from the nearest enclosing folder that has one.

    config = find_config(Path("flows/music/play.tap"))   # ProjectConfig, or None without a file
    config.document_for(Path("flows/music/play.tap"))      # Path('docs/music.yaml') (absolute)
    config.warnings                                       # 'warn' | 'error' | 'ignore'

The schema (docs/language-service.md has it with examples)::

    [documents]                      # which app document each script is written against
    "flows/music/**/*.tap" = "docs/music.yaml"   # globs relative to tapir.toml; first match wins
    "*.tap" = "app.yaml"                         # '*' stays in one folder, '**/' spans any

    [check]
    warnings = "warn"                # what tapir run/test do with warnings: "warn" (show them,
                                     # go on), "error" (refuse, like errors) or "ignore"

    [safety]                         # what runs may do (docs/safety.md); flags add to it
    allow = ["delete"]               # permission tokens, as --allow takes them
    allow_apps = ["com.android.chrome"]   # other apps runs may be in, as --allow-app
    foreign_app = "return"           # another app in front: "return" (BACK, relaunch) or "stop"

A script's own ``# doc:`` first line wins over ``[documents]``; ``--doc`` wins over both. The
tables about running scripts, ``[device]``, ``[budgets]``, ``[test]`` and ``[report]``, are read
by ``run_settings`` (``config.device``, ``config.budgets``, ``config.test``, ``config.report``);
``[safety]`` is ``config.safety``; every other top-level table is kept as read
(``ProjectConfig.tables``). Unknown keys of these tables, and values of the wrong type, are
problems reported with their line, by every command and the language server alike.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from tapir.core.diagnostics import Diagnostic
from tapir.service.run_settings import (
    BudgetSettings,
    DeviceSettings,
    ReportSettings,
    TestSettings,
    read_run_settings,
)

__all__ = [
    "CONFIG_NAME", "BudgetSettings", "ConfigError", "DeviceSettings", "DocumentRule", "ProjectConfig",
    "ReportSettings", "SafetyConfig", "TestSettings", "find_config", "load_config",
]

CONFIG_NAME = "tapir.toml"
_WARNINGS = ("warn", "error", "ignore")
#: Tables this version reads; their keys are checked.
_KNOWN = {"documents", "check", "safety"}
_CHECK_KEYS = {"warnings"}
_SAFETY_KEYS = {"allow", "allow_apps", "foreign_app"}
_FOREIGN_APP = ("return", "stop")


class ConfigError(Exception):
    """``tapir.toml`` cannot be used: ``problems`` say where and why."""

    def __init__(self, path: Path, problems: list[Diagnostic], text: str | None = None) -> None:
        super().__init__(f"{path}: {problems[0].message if problems else 'invalid'}")
        self.path = path
        self.problems = problems
        self.text = text


@dataclass(frozen=True)
class DocumentRule:
    """``"glob" = "document"`` of ``[documents]``."""

    glob: str
    document: str
    line: int | None = None

    def matches(self, relative: PurePosixPath) -> bool:
        return _glob_regex(self.glob).fullmatch(relative.as_posix()) is not None


@dataclass(frozen=True)
class SafetyConfig:
    """``[safety]``: what every run of the project may do (``tapir.core.safety.Safety.from_options``)."""

    allow: tuple[str, ...] = ()
    allow_apps: tuple[str, ...] = ()
    foreign_app: str = "return"


@dataclass(frozen=True)
class ProjectConfig:
    """What ``tapir.toml`` says; paths in it are relative to ``root`` (its folder)."""

    path: Path
    root: Path
    documents: tuple[DocumentRule, ...] = ()
    #: What ``tapir run`` and ``tapir test`` do with warnings: ``warn``, ``error`` or ``ignore``.
    warnings: str = "warn"
    #: Every top-level table as read, for settings later commands add.
    tables: dict[str, Any] = field(default_factory=dict)
    #: ``[device]``: the default ``--device`` and ``-j``.
    device: DeviceSettings = field(default_factory=DeviceSettings)
    #: ``[budgets]``: limits per script.
    budgets: BudgetSettings = field(default_factory=BudgetSettings)
    #: ``[test]``: what ``tapir test`` runs and how.
    test: TestSettings = field(default_factory=TestSettings)
    #: ``[report]``: the reports every ``tapir test`` run writes.
    report: ReportSettings = field(default_factory=ReportSettings)
    #: ``[safety]``: what every run may do besides what its flags allow.
    safety: SafetyConfig = field(default_factory=SafetyConfig)

    def document_for(self, script: Path) -> tuple[Path, DocumentRule] | None:
        """The document ``[documents]`` assigns to ``script`` (the first matching glob)."""
        try:
            relative = PurePosixPath(script.resolve().relative_to(self.root.resolve()).as_posix())
        except ValueError:
            return None  # a script outside the project
        for rule in self.documents:
            if rule.matches(relative):
                return (self.root / rule.document), rule
        return None


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """A glob as a regular expression: ``*`` and ``?`` stay within a folder, ``**/`` spans any
    number of folders (none included), a trailing ``**`` anything."""
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out))


def _line_of(text: str, needle: str) -> int | None:
    """The first line of ``text`` that mentions ``needle`` (TOML parsing keeps no positions)."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


def load_config(path: Path, text: str | None = None) -> ProjectConfig:
    """Read ``tapir.toml`` at ``path`` (or ``text``, an editor's unsaved copy of it); raises
    ``ConfigError`` listing every problem."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(path, [Diagnostic.at_line(f"cannot read {CONFIG_NAME}: {exc}", None,
                                                        code="config")]) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+), column (\d+)", str(exc))
        line, column = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        raise ConfigError(path, [Diagnostic.at_line(f"not valid TOML: {exc}", line, column, code="config")],
                          text) from exc
    problems: list[Diagnostic] = []

    def problem(message: str, needle: str) -> None:
        problems.append(Diagnostic.at_line(message, _line_of(text, needle), code="config"))

    rules: list[DocumentRule] = []
    documents = data.get("documents", {})
    if not isinstance(documents, dict):
        problem("[documents] must be a table of \"script glob\" = \"document path\"", "documents")
    else:
        for glob, document in documents.items():
            if not isinstance(document, str) or not document.strip():
                problem(f"[documents] {glob!r} must name a document path (a string)", glob)
                continue
            rules.append(DocumentRule(glob, document, _line_of(text, glob)))
    check = data.get("check", {})
    warnings = "warn"
    if not isinstance(check, dict):
        problem("[check] must be a table", "check")
    else:
        for key in check:
            if key not in _CHECK_KEYS:
                problem(f"[check] has no setting {key!r} (known: {', '.join(sorted(_CHECK_KEYS))})", key)
        value = check.get("warnings", "warn")
        if value not in _WARNINGS:
            problem(f"[check] warnings must be one of {', '.join(_WARNINGS)}, not {value!r}", "warnings")
        else:
            warnings = value
    device, budgets, test, report = read_run_settings(data, path.parent, problem)
    safety = _safety(data.get("safety", {}), problem)
    if problems:
        problems.sort(key=lambda p: p.line or 0)
        raise ConfigError(path, problems, text)
    return ProjectConfig(path, path.parent, tuple(rules), warnings, data, device, budgets, test, report, safety)


def _safety(table: Any, problem: Any) -> SafetyConfig:
    if not isinstance(table, dict):
        problem("[safety] must be a table", "safety")
        return SafetyConfig()
    for key in table:
        if key not in _SAFETY_KEYS:
            problem(f"[safety] has no setting {key!r} (known: {', '.join(sorted(_SAFETY_KEYS))})", key)
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("allow", "allow_apps"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            problem(f"[safety] {key} must be a list of strings", key)
            value = []
        lists[key] = tuple(v.strip() for v in value)
    foreign = table.get("foreign_app", "return")
    if foreign not in _FOREIGN_APP:
        problem(f"[safety] foreign_app must be one of {', '.join(_FOREIGN_APP)}, not {foreign!r}", "foreign_app")
        foreign = "return"
    return SafetyConfig(lists["allow"], lists["allow_apps"], foreign)


def find_config(start: Path) -> Path | None:
    """The ``tapir.toml`` of the nearest folder at or above ``start`` (a file or a folder)."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None
