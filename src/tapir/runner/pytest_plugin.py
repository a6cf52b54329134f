"""The pytest plugin: ``.tap`` scripts as test items, and fixtures for Python tests on devices.

Installed with Tapir (the ``pytest11`` entry point ``tapir``), so ``.tap`` scripts and Python
tests on the typed page objects run in one suite, one report::

    pytest flows/                      # every flows/**/*.tap is a test item, beside the test_*.py
    pytest flows/ -n 4                 # pytest-xdist: four workers, four simulators at once
    pytest flows/ -n 2 --tapir-device emulator-5554 --tapir-device emulator-5556   # one phone each
    pytest flows/ -m smoke             # `# tags: smoke` header lines are markers

When scripts are collected: a ``.tap`` file is collected when it lies under a path given on the
command line (``pytest flows/``, ``pytest flows/play.tap``), or everywhere with ``--tapir`` or
the ini setting ``tapir_scripts = true``. A plain ``pytest`` that runs the ``testpaths`` collects
none, so a project's own test suite does not start driving devices by accident; ``generated/``
folders are never searched.

Each script is one item: checked as ``tapir check`` checks it (errors fail it before any device
starts), run on a fresh simulator or on this worker's phone, its failure reported as the Tapir
error (``file:line:col``, the line, a caret) with no Python traceback, and its screenshot, last
hierarchy dump and trace kept under ``--tapir-artifacts`` (default ``tapir-artifacts/``), as are
the files its ``screenshot()`` calls saved, passing or not. ``# skip: reason`` skips it;
``--tapir-param NAME=VALUE`` (and ``tapir.toml``'s ``[test.params]``) is what ``param()`` reads.

Fixtures for Python tests (``tapir_runtime`` is the one most tests want)::

    import music_pages                                   # tapir compile samples/music/music.yaml

    @pytest.mark.tapir_document("samples/music/music.yaml")
    def test_dark_theme(tapir_runtime):
        app = music_pages.connect(tapir_runtime)          # a DeviceRuntime on this worker's device
        app.main_menu.settings_item.tap()

* ``tapir_device``: this worker's device (a ``Slot``: ``.device`` is ``sim`` or a serial);
* ``tapir_document``: the ``AppDocument`` the test's ``tapir_document`` mark (or the ini setting
  ``tapir_document``) names, relative to the rootdir;
* ``tapir_runtime``: a ``DeviceRuntime`` for that document on that device (a fresh simulator with
  the app in front; on a phone the app is force-stopped first, or cleared with
  ``--tapir-reset``), closed after the test; a failed test keeps its screenshot and dump in the
  artifacts folder too. Outside pytest, ``tapir.runtime.open_runtime`` gives the same runtime.

Devices come from ``--tapir-device`` (repeatable), else ``tapir.toml``'s ``[device] default``,
else ``sim``. With xdist, worker ``gwN`` takes the N-th serial (more workers than phones is an
error); simulators are started per script, so ``-n 4`` means four at once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["TapirScriptItem", "TapirScriptFile"]

_DOCUMENT_MARK = "tapir_document"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tapir", "Tapir scripts and devices")
    group.addoption("--tapir", action="store_true", dest="tapir_collect",
                    help="collect .tap scripts under every path searched (by default only under paths given)")
    group.addoption("--tapir-device", action="append", default=[], metavar="SERIAL|sim[:APP]",
                    help="where scripts and tapir_runtime run: sim (a fresh simulator per test; the default) or "
                         "an adb serial; repeat to give each xdist worker its own phone")
    group.addoption("--tapir-artifacts", metavar="DIR", default=None,
                    help="where failed tests keep their screenshot, dump and trace (default: tapir-artifacts)")
    group.addoption("--tapir-reset", action="store_true", default=None,
                    help="clear the app's data (pm clear) before each script and tapir_runtime")
    group.addoption("--tapir-param", action="append", default=[], metavar="NAME=VALUE",
                    help="a parameter every script reads with param('NAME'), as `tapir test --param` (repeatable; "
                         "wins over tapir.toml [test.params])")
    group.addoption("--tapir-retries", type=int, default=None, metavar="N",
                    help="run a failed script again up to N times (passing then: reported as flaky in its output)")
    group.addoption("--tapir-allow", action="append", default=[], metavar="WHAT",
                    help="allow scripts what the guards refuse (docs/safety.md): 'sensitive', a word such as "
                         "'delete', an element, or 'secrets'; besides tapir.toml [safety] and `# allow:` lines")
    group.addoption("--tapir-secrets", metavar="FILE", default=None,
                    help="NAME=value lines scripts read with secret('NAME') (else $TAPIR_SECRET_NAME)")
    parser.addini("tapir_scripts", type="bool", default=False,
                  help="collect .tap scripts under every path searched, testpaths included")
    parser.addini("tapir_document", default="", help="the app document of tapir_document/tapir_runtime "
                  "when a test has no tapir_document mark (relative to the rootdir)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{_DOCUMENT_MARK}(path): the app document of the tapir_runtime fixture")
    config.addinivalue_line("markers", "tapir: a Tapir script (.tap)")
    _params(config)  # a malformed --tapir-param stops the run before anything is collected
    if config.getoption("tapir_allow", None) or config.getoption("tapir_secrets", None):
        _session(config).safety()  # a malformed --tapir-allow or secrets file: a usage error before collection


def _params(config: pytest.Config) -> dict[str, str]:
    """The ``--tapir-param`` values, or a ``pytest.UsageError`` saying which one is malformed."""
    from tapir.core.errors import UsageError
    from tapir.dsl.inputs import ScriptInputs

    try:
        return dict(ScriptInputs.from_options(config.getoption("tapir_param", None) or ()).params)
    except UsageError as exc:
        raise pytest.UsageError(exc.in_words("--tapir-param" if exc.setting == "param" else None)) from None


# ---------------------------------------------------------------------------------------------
# This worker's devices, workspace and artifacts


class _Session:
    """What one pytest process (an xdist worker, or pytest alone) shares between its tests."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._pool: Any = None
        self._slot: Any = None
        self._ws: Any = None
        self._work: Path | None = None
        self._project: Any = None
        self._project_read = False

    @property
    def project(self) -> Any:
        if not self._project_read:
            from tapir.service import ConfigError, Workspace

            self._project_read = True
            try:
                self._project = Workspace().config_for(Path(str(self.config.rootpath)) / "x.tap")
            except ConfigError as exc:
                raise pytest.UsageError(f"{exc.path} is invalid: {exc.problems[0].message}") from None
        return self._project

    def devices(self) -> list[str]:
        given = list(self.config.getoption("tapir_device") or [])
        if not given and self.project is not None:
            given = list(self.project.device.default)
        return given or ["sim"]

    def slot(self) -> Any:
        """This worker's slot (its adb server started on first use)."""
        if self._slot is None:
            from tapir.runner.pool import DevicePool
            from tapir.sim.launch import check_sim_spec, is_sim_spec

            devices = self.devices()
            for d in devices:
                check_sim_spec(d)
            worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
            index = int(worker[2:]) if worker[2:].isdigit() else 0
            serials = [d for d in devices if not is_sim_spec(d)]
            if serials and len(devices) == len(serials):
                workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
                if workers > len(serials):
                    raise pytest.UsageError(f"{workers} xdist workers for {len(serials)} devices: each phone runs one "
                                            f"test at a time; use -n {len(serials)} or give more --tapir-device")
                device = serials[index]
            else:
                device = devices[index % len(devices)]
            self._pool = DevicePool([device], 1).__enter__()
            self._slot = self._pool.slots()[0]
        return self._slot

    @property
    def workspace(self) -> Any:
        if self._ws is None:
            from tapir.service import Workspace

            self._ws = Workspace(Path(str(self.config.rootpath)))
        return self._ws

    @property
    def work(self) -> Path:
        if self._work is None:
            self._work = Path(tempfile.mkdtemp(prefix="tapir-pytest-"))
        return self._work

    def artifacts(self) -> Path:
        given = self.config.getoption("tapir_artifacts")
        if given:
            return Path(given)
        if self.project is not None and self.project.report.artifacts is not None:
            return Path(self.project.report.artifacts)
        return Path(str(self.config.invocation_params.dir)) / "tapir-artifacts"

    def reset(self) -> bool:
        given = self.config.getoption("tapir_reset")
        return bool(given if given is not None else (self.project is not None and self.project.test.reset))

    def retries(self) -> int:
        given = self.config.getoption("tapir_retries")
        if given is not None:
            return int(given)
        return int(self.project.test.retries or 0) if self.project is not None else 0

    def params(self) -> dict[str, str]:
        return _params(self.config)

    def safety(self) -> Any:
        """``--tapir-allow``/``--tapir-secrets`` (a malformed one: a usage error, once)."""
        from tapir.core.errors import UsageError
        from tapir.core.safety import SafetyOptions

        options = SafetyOptions(allow=tuple(self.config.getoption("tapir_allow") or ()),
                                secrets_file=self.config.getoption("tapir_secrets"))
        try:
            options.safety()
        except UsageError as exc:
            raise pytest.UsageError(exc.message) from None
        return options

    def budgets(self) -> Any:
        from tapir.dsl.budget import Budgets

        return self.project.budgets.apply(Budgets()) if self.project is not None else Budgets()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.__exit__(None, None, None)
            self._pool = None
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None


_SESSION = pytest.StashKey[_Session]()


def _session(config: pytest.Config) -> _Session:
    found = config.stash.get(_SESSION, None)
    if found is None:
        found = _Session(config)
        config.stash[_SESSION] = found
    return found


def pytest_unconfigure(config: pytest.Config) -> None:
    found = config.stash.get(_SESSION, None)
    if found is not None:
        found.close()


# ---------------------------------------------------------------------------------------------
# Collecting .tap scripts


def _given_paths(config: pytest.Config) -> list[Path]:
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    base = Path(str(config.invocation_params.dir))
    out = []
    for arg in config.args:
        path = arg.split("::")[0]
        if path and not path.startswith("-"):
            out.append((base / path).resolve())
    return out


def _wanted(file_path: Path, config: pytest.Config) -> bool:
    if file_path.suffix != ".tap" or "generated" in file_path.parts:
        return False
    from tapir.runner.collect import is_flow

    if config.getoption("tapir_collect") or config.getini("tapir_scripts"):
        return not is_flow(Path(file_path.parent.name, file_path.name))
    here = file_path.resolve()
    # a flow (``_login.tap``, ``_flows/``) runs from the scripts that call it, unless named alone
    return any(here == given or (given in here.parents and not is_flow(here.relative_to(given)))
               for given in _given_paths(config))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _wanted(file_path, parent.config):
        return TapirScriptFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]
    return None


class TapirScriptFile(pytest.File):
    """A ``.tap`` file: one item, the script."""

    def collect(self) -> Iterator[pytest.Item]:
        from tapir.runner.collect import read_header

        try:
            header = read_header(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            header = None
        item = TapirScriptItem.from_parent(self, name=self.path.name)
        item.add_marker("tapir")
        if header is not None and header.skip is not None:
            item.add_marker(pytest.mark.skip(reason=header.skip))  # reported at the script, not here
        for tag in header.tags if header is not None else ():
            if tag.isidentifier():  # a tag `pytest -m` can name
                self.config.addinivalue_line("markers", f"{tag}: Tapir tag")
                item.add_marker(tag)
        yield item


class TapirScriptFailed(Exception):
    """A script failed; ``report`` is what pytest shows (the Tapir error, no traceback)."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


class TapirScriptItem(pytest.Item):
    """One script: checked, then run on this worker's device (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Plugins written for function items read ``funcargs`` (pytest-lsp's runtest_call
        # wrapper fails to yield without it); a script has no fixtures.
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        from tapir.runner.execute import PreparedScript
        from tapir.runner.suite import RunOptions, prepare_script, run_prepared, script_slug

        session = _session(self.config)
        # errors name the script as the command line would: relative to where pytest was started
        here = Path(str(self.config.invocation_params.dir))
        name = Path(os.path.relpath(self.path, here)) if self.path.is_relative_to(here) else self.path
        prepared = prepare_script(session.workspace, name)
        if not isinstance(prepared, PreparedScript):
            if prepared.status == "skipped":
                pytest.skip(prepared.reason or "skipped by its header")
            raise TapirScriptFailed(prepared.error or "not run")
        slug = script_slug(name)
        options = RunOptions(budgets=session.budgets(), retries=session.retries(), reset=session.reset(),
                             artifacts=session.artifacts(), params=session.params(),
                             project_params=session.project.test.params if session.project is not None else None,
                             safety=session.safety())
        result = run_prepared(prepared, session.slot(), options, session.work, slug)
        last = result.last
        if last is not None:
            from tapir.core.terminal import terminal_safe

            for line in last.printed:
                print(terminal_safe(line))
        if result.status == "flaky":
            print(f"flaky: passed on attempt {len(result.attempts)}; earlier failure:\n{result.error}")
        if result.artifacts is not None:
            self.user_properties.append(("tapir_artifacts", str(result.artifacts)))
        if not result.ok:
            where = f"\nartifacts: {result.artifacts}" if result.artifacts is not None else ""
            raise TapirScriptFailed(f"{result.error}{where}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, TapirScriptFailed):
            return excinfo.value.report
        from tapir.core.errors import TapirError

        if isinstance(excinfo.value, TapirError):
            return excinfo.value.render()
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"tapir script {self.path.name}"


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def tapir_device(request: pytest.FixtureRequest) -> Any:
    """This worker's device slot (``.device``: ``sim`` or a serial; ``.name``; ``.adb_port``)."""
    return _session(request.config).slot()


@pytest.fixture
def tapir_document(request: pytest.FixtureRequest) -> Any:
    """The app document of the test: its ``@pytest.mark.tapir_document(path)`` (else the ini
    setting ``tapir_document``), relative to the rootdir, loaded."""
    from tapir.docgen.loader import load_document

    mark = request.node.get_closest_marker(_DOCUMENT_MARK)
    given = (mark.args[0] if mark and mark.args else mark.kwargs.get("path") if mark else None) \
        or request.config.getini("tapir_document")
    if not given:
        raise pytest.UsageError(f"{request.node.nodeid}: no app document: mark the test with "
                                f"@pytest.mark.{_DOCUMENT_MARK}('app.yaml') or set the ini option tapir_document")
    path = Path(str(given))
    if not path.is_absolute():
        path = Path(str(request.config.rootpath)) / path
    return load_document(path)


@pytest.fixture
def tapir_runtime(request: pytest.FixtureRequest, tapir_device: Any, tapir_document: Any) -> Iterator[Any]:
    """A ``DeviceRuntime`` for ``tapir_document`` on ``tapir_device``, closed after the test;
    give it to the generated page objects (``music_pages.connect(tapir_runtime)``)."""
    from tapir.run import Prepare, Runner, RunOptions
    from tapir.runtime.trace import MemoryTrace

    session = _session(request.config)
    trace = MemoryTrace()
    prepare: Prepare = "reset" if session.reset() else (None if tapir_device.is_sim else "stop")
    runner = Runner(tapir_document, tapir_device.device, RunOptions(adb_port=tapir_device.adb_port,
                                                                    adb_host=tapir_device.adb_host, prepare=prepare))
    runtime = runner.connect(filename=request.node.nodeid, trace=trace)  # the test drives it itself
    try:
        yield runtime
        report = getattr(request.node, "_tapir_call_report", None)
        if report is not None and report.failed:
            _keep_failure(runtime, trace, session.artifacts(), request.node)
    finally:
        runtime.close()


def _keep_failure(runtime: Any, trace: Any, artifacts: Path, node: pytest.Item) -> None:
    """A failed Python test's screen, last dump and trace, as a failed script's are kept."""
    import json

    from tapir.core.errors import TapirError

    folder = artifacts / "".join(c if c.isalnum() or c in "._-" else "_" for c in node.nodeid)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trace.records), encoding="utf-8")
        if runtime.screen.last_xml:
            (folder / "hierarchy.xml").write_text(runtime.failure_dump() or "", encoding="utf-8")  # secrets masked
        (folder / "screenshot.png").write_bytes(runtime.device.screenshot_png())
    except (TapirError, OSError):
        pass
    node.user_properties.append(("tapir_artifacts", str(folder)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item._tapir_call_report = report  # type: ignore[attr-defined]
    return report
