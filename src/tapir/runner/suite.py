"""``tapir test``'s engine: check every script, run the runnable ones on a pool of devices with
retries, keep failure artifacts, and return a ``TestRun``.

    options = RunOptions(devices=("sim",), jobs=2, retries=1, artifacts=Path("tapir-artifacts"))
    run = run_tests(collect(["samples/"]), options)
    run.summary()            # '80 passed in 19.2 s'

Every script is first checked by the language service exactly as ``tapir check`` checks it, in
the calling thread before any device starts: one with errors is an ``error`` result that never
reaches a device, and its warnings are reported with its result. ``# skip:`` scripts are
``skipped``. The others run on ``DevicePool`` slots (``tapir.runner.pool``): a fresh simulator per
attempt on a simulator slot, the app force-stopped (or, with ``reset``, cleared) on a phone. A
failed attempt is retried up to ``retries`` times on the same slot; a script that then passes
is ``flaky``.

Each failed attempt's files (``error.txt``, ``screenshot.png``, ``hierarchy.xml``,
``trace.jsonl``, ``shots/``, ``script.tap``) are kept under ``artifacts/<script>/`` (an earlier
failed attempt of a retried script under ``artifacts/<script>/attempt-N/``), and so are the files
the script's ``screenshot("name")`` calls saved, whether it passed or failed; everything else is
written to a temporary folder and removed. The folder a script's artifacts go to is emptied when
the script runs again (``prepare_artifacts``), so what is there belongs to the last run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tapir.core.errors import TapirError, UsageError
from tapir.core.safety import SafetyOptions
from tapir.dsl.budget import Budgets
from tapir.dsl.inputs import ScriptInputs
from tapir.runner.collect import Header, read_header
from tapir.runner.execute import AttemptOptions, PreparedScript, StepListener, run_attempt
from tapir.runner.pool import DevicePool, Slot
from tapir.runner.results import Attempt, ScriptResult, TestRun

if TYPE_CHECKING:
    from tapir.service import Workspace
    from tapir.service.run_settings import ScriptParams

__all__ = [
    "ARTIFACTS_MARKER", "Listener", "RunOptions", "prepare_artifacts", "prepare_script", "run_prepared", "run_tests",
    "script_slug", "unique_slugs",
]

#: The file that marks a folder as made by ``tapir test`` (so a later run may empty it).
ARTIFACTS_MARKER = ".tapir-artifacts"


@dataclass(frozen=True)
class RunOptions:
    #: ``--device`` values: simulator specs and/or adb serials.
    devices: tuple[str, ...] = ("sim",)
    #: Simulators at once.
    jobs: int = 1
    #: ``--doc``: one document for every script (else each script's own).
    doc: str | None = None
    budgets: Budgets = field(default_factory=Budgets)
    retries: int = 0
    reset: bool = False
    #: A screenshot after each step, kept with a failed script's artifacts.
    screenshots: bool = False
    #: Thumbnails of the screenshots for the HTML report (``report_html`` shows them).
    thumbnails: bool = False
    #: Where failed scripts' files are kept; None: nowhere (tests of the runner).
    artifacts: Path | None = None
    #: Keep every script's trace as ``<trace_dir>/<script>.jsonl``.
    trace_dir: Path | None = None
    #: An adb server the simulators share (None: a private one for the run), and the phones'
    #: server (None: ``$ANDROID_ADB_SERVER_PORT``, else 5037) unless their spec names one.
    adb_port: int | None = None
    #: The phones' adb server host (None: ``$ANDROID_ADB_SERVER_HOST``, else 127.0.0.1).
    adb_host: str | None = None
    #: ``--param NAME=VALUE``: what ``param()`` reads in every script (wins over ``project_params``).
    params: Mapping[str, str] = field(default_factory=dict)
    #: ``tapir.toml``'s ``[test.params]``: parameters for every script and per script glob.
    project_params: ScriptParams | None = None
    #: Run each script in this process, not in a child process under OS limits (for debugging).
    in_process: bool = False
    #: What every script may do besides its project's ``[safety]`` and its ``# allow:`` lines.
    safety: SafetyOptions = field(default_factory=SafetyOptions)

    def inputs_for(self, script: Path) -> ScriptInputs:
        """What ``param()`` reads in ``script``: the project's parameters, the command line's over them."""
        found = self.project_params.for_script(script) if self.project_params is not None else {}
        return ScriptInputs(MappingProxyType({**found, **self.params}))


class Listener:
    """What a run tells its console as it goes; every method may be left as it is here.
    ``step`` is called from worker threads, the others from the calling thread."""

    def planned(self, total: int, slots: Sequence[str]) -> None:
        return None

    def step(self, script: str, record: dict[str, Any]) -> None:
        return None

    def finished(self, result: ScriptResult) -> None:
        return None


def script_slug(path: Path) -> str:
    """A folder name for a script: its path from the working folder, ``/`` as ``__``, no ``.tap``."""
    try:
        rel = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        rel = Path(*path.resolve().parts[1:])
    return "__".join(rel.with_suffix("").parts) or "script"


def prepare_artifacts(folder: Path, slugs: Sequence[str]) -> None:
    """Make ``folder`` ready for this run: the folders an earlier run left for the scripts about
    to run are removed (only those holding ``.tapir-artifacts``, which this runner writes: nothing
    else in the folder is touched). The folder itself is made when a script fails."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"artifacts folder {folder} is a file")
    if not folder.is_dir():
        return
    try:
        for slug in slugs:
            old = folder / slug
            if (old / ARTIFACTS_MARKER).is_file() and not old.is_symlink():
                shutil.rmtree(old)
    except OSError as exc:
        raise UsageError(f"cannot prepare the artifacts folder {folder}: {exc.strerror or exc}") from None


def _refused(name: str, header: Header, message: str, category: str, warnings: str | None = None,
             source: str | None = None, line: int | None = None) -> ScriptResult:
    attempt = Attempt(number=1, ok=False, seconds=0.0, error=message, category=category, kind="error", line=line)
    return ScriptResult(name, "error", (attempt,), header.tags, warnings, source=source)


def prepare_script(ws: Workspace, path: Path, header: Header | None = None, doc: str | None = None
                   ) -> PreparedScript | ScriptResult:
    """Check ``path`` as ``tapir check`` does: a ``PreparedScript`` to run, or the result of one
    that will not run (``skipped`` by its header, or an ``error``: refused by the check, no
    document)."""
    name = str(path)
    try:
        source = ws.text_of(path)
    except TapirError as exc:
        return _refused(name, header or Header(), exc.render(), "UsageError")
    header = header or read_header(source)
    if header.skip is not None:
        return ScriptResult(name, "skipped", (), header.tags, reason=header.skip, source=source)
    checked = ws.check(path, source, doc=doc)
    policy = ws.warnings_policy(path)
    shown = [d for d in checked.shown(policy) if not d.is_error]
    warnings = "\n".join(d.render(checked.source, name) for d in shown) or None
    blocking = checked.blocking(policy)
    if blocking:
        # refused before any device is started, exactly as `tapir check` reports it
        first = next((d.span.line for d in blocking if d.span is not None), None)
        return _refused(name, header, checked.render(policy), "check", warnings, source, first)
    if checked.document is None:
        return _refused(name, header, f"{name}: no app document: pass --doc APP.yaml, start the script with a "
                        "comment such as `# doc: app.yaml`, or map it in tapir.toml [documents]", "UsageError",
                        warnings, source)
    loaded = ws.load_document(checked.document.path)
    if loaded.document is None:
        return _refused(name, header, f"{checked.document.path} is a compiled symbol table: a device run needs "
                        "the app document itself (its identifiers and paths)", "UsageError", warnings, source)
    return PreparedScript(path, name, source, loaded.document, checked.symbols, header, warnings,
                          ws.safety_config(path))


def _keep(attempt: Attempt, folder: Path, source: str) -> Attempt:
    """Copy a failed attempt's files to ``folder`` (with ``error.txt`` and the script); the attempt
    pointing there."""
    if attempt.folder is None:
        return attempt
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(attempt.folder, folder, dirs_exist_ok=True)
    (folder / "error.txt").write_text((attempt.error or "") + "\n", encoding="utf-8")
    (folder / "script.tap").write_text(source, encoding="utf-8")
    (folder / ARTIFACTS_MARKER).write_text("made by tapir test; replaced by its next run of this script\n",
                                           encoding="utf-8")
    return replace(attempt, folder=folder)


def _keep_saved(attempt: Attempt, folder: Path) -> Attempt:
    """Copy what a passed attempt's ``screenshot()`` calls saved to ``folder``; the attempt
    pointing there (its other files, trace and step screenshots, are not kept)."""
    assert attempt.folder is not None
    folder.mkdir(parents=True, exist_ok=True)
    for name in attempt.saved:
        shutil.copyfile(attempt.folder / name, folder / name)
    (folder / ARTIFACTS_MARKER).write_text("made by tapir test; replaced by its next run of this script\n",
                                           encoding="utf-8")
    return replace(attempt, folder=folder, trace=None, screenshot=None, hierarchy=None)


def run_prepared(script: PreparedScript, slot: Slot, options: RunOptions, work: Path, slug: str,
                 on_step: StepListener | None = None) -> ScriptResult:
    """Run a checked script on ``slot``, retried up to ``options.retries`` times; its files go
    under ``work/<slug>/`` and, for failed attempts, ``options.artifacts/<slug>/``."""
    attempts: list[Attempt] = []
    settings = AttemptOptions(options.budgets, options.reset, options.screenshots, options.thumbnails,
                              inputs=options.inputs_for(script.path), in_process=options.in_process,
                              safety=options.safety)
    for number in range(1, options.retries + 2):
        attempt = run_attempt(script, slot, number, settings, work / slug / f"attempt-{number}", on_step)
        attempts.append(attempt)
        if attempt.ok:
            break
    final = attempts[-1]
    if final.ok:
        status = "passed" if len(attempts) == 1 else "flaky"
    else:
        status = "failed" if final.kind == "failure" else "error"
    if options.trace_dir is not None and final.folder is not None and final.trace:
        shutil.copyfile(final.folder / final.trace, options.trace_dir / f"{slug}.jsonl")
    kept: Path | None = None
    if options.artifacts is not None and not all(a.ok for a in attempts):
        kept = options.artifacts / slug
        attempts = [_keep(a, kept if a is final else kept / f"attempt-{a.number}", script.source)
                    if not a.ok else a for a in attempts]
    if options.artifacts is not None and final.ok and final.saved:
        kept = options.artifacts / slug
        attempts[-1] = _keep_saved(final, kept)
    # what was not kept is removed with the run's temporary folder
    attempts = [a if kept is not None and (not a.ok or a.saved) else replace(a, folder=None) for a in attempts]
    return ScriptResult(script.name, status, tuple(attempts), script.header.tags, script.warnings, artifacts=kept,
                        source=script.source)


def run_tests(
    scripts: Sequence[Path],
    options: RunOptions | None = None,
    *,
    headers: dict[Path, Header] | None = None,
    listener: Listener | None = None,
) -> TestRun:
    """Run ``scripts`` (see the module docstring); results in the order given."""
    options = options or RunOptions()
    listener = listener or Listener()
    if options.retries < 0:
        raise UsageError("must be 0 or more", setting="retries")
    if options.jobs < 1:
        raise UsageError("-j must be at least 1")
    for device in options.devices:
        if not device.strip():
            raise UsageError("is empty: give an adb serial, sim or sim:APP", setting="device")
        from tapir.sim.launch import check_sim_spec

        check_sim_spec(device)
    options.safety.safety()  # a malformed --allow or secrets file: a usage error before anything runs
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    started = time.monotonic()
    if options.trace_dir is not None:
        try:
            options.trace_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            reason = exc.strerror or exc
            raise UsageError(f"cannot make the folder {options.trace_dir}: {reason}", setting="trace_dir") from None
    from tapir.service import Workspace

    ws = Workspace()
    prepared = [prepare_script(ws, path, (headers or {}).get(path), options.doc) for path in scripts]
    runnable = [p for p in prepared if isinstance(p, PreparedScript)]
    slugs = unique_slugs([p.path for p in runnable])
    if options.artifacts is not None:
        prepare_artifacts(options.artifacts, list(slugs.values()))
    run = TestRun(started=started_at)
    with tempfile.TemporaryDirectory(prefix="tapir-test-") as tmp, \
            DevicePool(options.devices, options.jobs, adb_port=options.adb_port,
                       adb_host=options.adb_host) as pool:
        run.devices = tuple(pool.names) if runnable else ()
        listener.planned(len(prepared), run.devices)
        for p in prepared:
            if isinstance(p, ScriptResult):
                listener.finished(p)

        def job(script: PreparedScript, slot: Slot) -> ScriptResult:
            return run_prepared(script, slot, options, Path(tmp), slugs[script.path], listener.step)

        def crashed(script: PreparedScript, slot: Slot, trace: str) -> ScriptResult:
            attempt = Attempt(number=1, ok=False, seconds=0.0, device=slot.name,
                              error=f"{script.name}: internal error (a bug in Tapir):\n{trace}",
                              category="InternalError", kind="error")
            return ScriptResult(script.name, "error", (attempt,), script.header.tags, script.warnings,
                                source=script.source)

        done = pool.run(runnable, job, on_result=listener.finished, on_crash=crashed)
    by_path = {r.script: r for r in done.results}
    for p in prepared:
        if isinstance(p, ScriptResult):
            run.results.append(p)
        elif p.name in by_path:
            run.results.append(by_path[p.name])
        else:
            run.results.append(ScriptResult(p.name, "skipped", (), p.header.tags, p.warnings,
                                            reason="not run: the run was interrupted", source=p.source))
    run.interrupted = done.interrupted
    run.wall_s = round(time.monotonic() - started, 3)
    if options.artifacts is not None and any(r.artifacts for r in run.results):
        run.artifacts = options.artifacts
    return run


def unique_slugs(paths: Sequence[Path]) -> dict[Path, str]:
    out: dict[Path, str] = {}
    used: set[str] = set()
    for path in paths:
        slug = base = script_slug(path)
        n = 2
        while slug in used:
            slug, n = f"{base}-{n}", n + 1
        used.add(slug)
        out[path] = slug
    return out
