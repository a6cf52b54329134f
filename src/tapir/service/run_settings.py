"""The ``tapir.toml`` tables about running scripts: ``[device]``, ``[budgets]``, ``[test]``, ``[report]``.

    config = find_config(...) and load_config(...)
    config.device.default          # ('sim',): what --device means when it is not given
    config.budgets.apply(Budgets()) # the project's limits over the defaults (flags then win)
    config.test.retries, config.report.junit   # 0, Path('/project/reports/junit.xml')
    config.test.params.for_script(Path("flows/admin/login.tap"))   # {'user': 'root', 'lang': 'en'}

The schema (docs/testing.md has it with examples)::

    [device]
    default = "sim"          # or "emulator-5554", or a list: tapir test runs on each at once
    jobs = 2                 # simulators at once for `tapir test` (its -j)
    adb_host = "10.0.0.2"    # the adb server of devices that name none (--adb-host, --adb-port)
    adb_port = 5037

    [budgets]                # per script: tapir run, tapir test, the REPL, the pytest plugin
    max_actions = 50
    max_steps = 1000000
    timeout = 60             # seconds

    [test]
    paths = ["flows"]        # what `tapir test` runs when no PATH is given
    include = ["smoke"]      # tags (shell patterns): only scripts with one of them
    exclude = ["slow"]       # never scripts with one of these
    retries = 1              # a failed script runs again up to N times (passing then: flaky)
    reset = true             # clear the app's data before each script (pm clear)

    [test.params]            # what param("NAME") reads in every script tapir test runs (--param wins)
    user = "ada"
    lang = "en"
    [test.params."flows/admin/*.tap"]   # scripts matching the glob (relative to tapir.toml) get
    user = "root"                       # these over the ones above (the first matching glob wins)

    [report]                 # written by every `tapir test` run (flags win)
    junit = "reports/junit.xml"
    json = "reports/tapir.json"
    html = "reports/tapir.html"
    artifacts = "tapir-artifacts"   # failed scripts' screenshot, last dump, trace (the default)

Paths are relative to the folder of ``tapir.toml``. Every flag of the command line wins over
the file; a value of the wrong type or an unknown key is a problem reported with its line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapir.dsl.budget import Budgets

__all__ = ["BudgetSettings", "DeviceSettings", "ReportSettings", "ScriptParams", "TestSettings", "read_run_settings"]


@dataclass(frozen=True)
class DeviceSettings:
    #: ``--device`` values when none is given (``sim``, ``sim:APP`` or adb serials); () when unset.
    default: tuple[str, ...] = ()
    #: Simulators at once for ``tapir test`` (``-j``); None when unset.
    jobs: int | None = None
    #: The adb server of every device that names none (``--adb-host``/``--adb-port``); None when unset.
    adb_host: str | None = None
    adb_port: int | None = None

    @property
    def first(self) -> str | None:
        """The device of a one-device command (``tapir run``, the REPL): the first one named."""
        return self.default[0] if self.default else None


@dataclass(frozen=True)
class BudgetSettings:
    max_actions: int | None = None
    max_steps: int | None = None
    #: Seconds.
    timeout: float | None = None

    def apply(self, budgets: Budgets) -> Budgets:
        """``budgets`` with the limits the project sets (unset ones keep their value)."""
        return budgets.replace(max_actions=self.max_actions, max_steps=self.max_steps, timeout_s=self.timeout)


@dataclass(frozen=True)
class ScriptParams:
    """``[test.params]``: parameters for every script, and per script glob."""

    #: The folder of ``tapir.toml`` (globs are relative to it); None when there is no file.
    root: Path | None = None
    #: ``NAME = "value"``: every script's.
    common: tuple[tuple[str, str], ...] = ()
    #: ``[test.params."GLOB"]`` tables, in file order.
    rules: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def for_script(self, script: Path) -> dict[str, str]:
        """The parameters ``script`` gets: the common ones, under those of each glob it matches
        (for a name several globs set, the first of them in the file)."""
        # the same glob language as [documents] (imported here: config.py imports this module)
        from tapir.service.config import _glob_regex

        out = dict(self.common)
        if self.rules and self.root is not None:
            try:
                relative = script.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return out  # a script outside the project
            for glob, values in reversed(self.rules):  # reversed: the first matching glob is applied last
                if _glob_regex(glob).fullmatch(relative):
                    out.update(values)
        return out


@dataclass(frozen=True)
class TestSettings:
    __test__ = False  # not a pytest test class, whatever its name

    #: Absolute paths ``tapir test`` runs when no PATH is given; () when unset.
    paths: tuple[Path, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    retries: int | None = None
    reset: bool | None = None
    #: ``[test.params]``: what ``param()`` reads (``--param`` wins).
    params: ScriptParams = field(default_factory=ScriptParams)


@dataclass(frozen=True)
class ReportSettings:
    junit: Path | None = None
    json: Path | None = None
    html: Path | None = None
    artifacts: Path | None = None


Problem = Callable[[str, str], None]


def _table(data: dict[str, Any], name: str, keys: set[str], problem: Problem) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        problem(f"[{name}] must be a table", name)
        return {}
    for key in table:
        if key not in keys:
            problem(f"[{name}] has no setting {key!r} (known: {', '.join(sorted(keys))})", key)
    return {k: v for k, v in table.items() if k in keys}


def _strings(value: Any) -> tuple[str, ...] | None:
    """A string or a list of non-empty strings as a tuple; None when it is neither."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(v.strip() for v in value)
    return None


def _positive(value: Any, *, integer: bool) -> bool:
    if isinstance(value, bool):  # TOML's true is no number of anything
        return False
    if isinstance(value, int) or (not integer and isinstance(value, float)):
        return value > 0
    return False


def _param_values(table: dict[str, Any], where: str, problem: Problem) -> tuple[tuple[str, str], ...]:
    from tapir.dsl.inputs import PARAM_NAME

    out = []
    for name, value in table.items():
        if not PARAM_NAME.fullmatch(name):
            problem(f"{where} {name!r} is not a parameter name (letters, digits, '_', '.', '-'; not starting with "
                    "a digit)", name)
        elif isinstance(value, bool) or not isinstance(value, str | int | float):
            problem(f"{where} {name} must be text (a string or a number), not {value!r}", name)
        else:
            out.append((name, str(value)))  # parameters are text, as --param gives them
    return tuple(out)


def _params(value: Any, root: Path, problem: Problem) -> ScriptParams:
    """``[test.params]``: ``NAME = "value"`` for every script, ``[test.params."GLOB"]`` tables per glob."""
    if value is None:
        return ScriptParams()
    if not isinstance(value, dict):
        problem("[test] params must be a table of NAME = \"value\" (and of \"script glob\" tables)", "params")
        return ScriptParams()
    common = _param_values({k: v for k, v in value.items() if not isinstance(v, dict)}, "[test.params]", problem)
    rules = tuple((glob, _param_values(table, f"[test.params.{glob!r}]", problem))
                  for glob, table in value.items() if isinstance(table, dict))
    return ScriptParams(root, common, rules)


def read_run_settings(data: dict[str, Any], root: Path, problem: Problem
                      ) -> tuple[DeviceSettings, BudgetSettings, TestSettings, ReportSettings]:
    """The four tables of ``data`` (a parsed ``tapir.toml``); ``problem(message, needle)`` is
    called for each problem (``needle``: text on the line to point at)."""
    t = _table(data, "device", {"default", "jobs", "adb_host", "adb_port"}, problem)
    default: tuple[str, ...] = ()
    if "default" in t:
        found = _strings(t["default"])
        if found is None:
            problem("[device] default must be a device (\"sim\", \"sim:APP\" or an adb serial) or a list of them",
                    "default")
        else:
            default = found
    jobs = t.get("jobs")
    if jobs is not None and not _positive(jobs, integer=True):
        problem(f"[device] jobs must be a positive whole number, not {jobs!r}", "jobs")
        jobs = None
    adb_host = t.get("adb_host")
    if adb_host is not None and not (isinstance(adb_host, str) and adb_host.strip()):
        problem(f"[device] adb_host must be a host name or address (a string), not {adb_host!r}", "adb_host")
        adb_host = None
    adb_port = t.get("adb_port")
    if adb_port is not None and (not _positive(adb_port, integer=True) or adb_port >= 65535):
        problem(f"[device] adb_port must be a port between 1 and 65534, not {adb_port!r}", "adb_port")
        adb_port = None
    device = DeviceSettings(default, jobs, adb_host.strip() if adb_host else None, adb_port)

    t = _table(data, "budgets", {"max_actions", "max_steps", "timeout"}, problem)
    limits: dict[str, Any] = {}
    for key, integer in (("max_actions", True), ("max_steps", True), ("timeout", False)):
        if key in t:
            if _positive(t[key], integer=integer):
                limits[key] = float(t[key]) if not integer else t[key]
            else:
                what = "a positive whole number" if integer else "a positive number of seconds"
                problem(f"[budgets] {key} must be {what}, not {t[key]!r}", key)
    budgets = BudgetSettings(**limits)

    t = _table(data, "test", {"paths", "include", "exclude", "retries", "reset", "params"}, problem)
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("paths", "include", "exclude"):
        if key in t:
            found = _strings(t[key])
            if found is None:
                problem(f"[test] {key} must be a string or a list of strings", key)
            else:
                lists[key] = found
    retries = t.get("retries")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        problem(f"[test] retries must be a whole number, 0 or more, not {retries!r}", "retries")
        retries = None
    reset = t.get("reset")
    if reset is not None and not isinstance(reset, bool):
        problem(f"[test] reset must be true or false, not {reset!r}", "reset")
        reset = None
    test = TestSettings(tuple(root / p for p in lists.get("paths", ())), lists.get("include", ()),
                        lists.get("exclude", ()), retries, reset, _params(t.get("params"), root, problem))

    t = _table(data, "report", {"junit", "json", "html", "artifacts"}, problem)
    paths: dict[str, Path] = {}
    for key, value in t.items():
        if isinstance(value, str) and value.strip():
            paths[key] = root / value.strip()
        else:
            problem(f"[report] {key} must be a file or folder path (a string), not {value!r}", key)
    report = ReportSettings(**paths)
    return device, budgets, test, report
