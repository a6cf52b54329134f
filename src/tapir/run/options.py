"""What a run is given besides the script: budgets, safety, where it runs and what it keeps.

    options = RunOptions(budgets=Budgets(max_actions=20), trace="run.jsonl", isolation="inline")

Every field names a *setting*, not a command-line flag: the CLI maps its flags onto these (and
names the flag when one is wrong), the test runner and the evaluation harness their own options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tapir.core.safety import Safety
from tapir.dsl.budget import Budgets
from tapir.dsl.interpreter import Output, print_line
from tapir.runtime.session_model import SessionConfig
from tapir.runtime.trace import TraceSink

if TYPE_CHECKING:
    from tapir.runtime.session import DeviceRuntime

__all__ = ["Isolation", "Prepare", "RunOptions"]

#: ``process``: the script runs in a child process under OS limits on memory and CPU time
#: (``tapir.dsl.isolation``), killed at the time budget plus a grace whatever it is doing; the
#: device is connected there (a session's stays here and the child reaches it through adb).
#: ``inline``: in this process, with the interpreter's checks only (no wall against one long
#: C-level operation, such as a ``dict`` of colliding keys): for your own scripts and debugging.
Isolation = Literal["process", "inline"]
#: Before the script: ``stop`` the app (a phone then starts from its launch screen), ``reset`` it
#: (``pm clear``, then launch it), or leave it as it is (None).
Prepare = Literal["stop", "reset"] | None


@dataclass(frozen=True)
class RunOptions:
    """The settings of a run (see the module docstring)."""

    budgets: Budgets = field(default_factory=Budgets)
    #: What the run may do (guards, secrets). None: nothing sensitive, no secrets.
    safety: Safety | None = None
    #: The script's parameters (``param('NAME')``).
    params: Mapping[str, str] = field(default_factory=dict)
    isolation: Isolation = "process"
    #: A JSON-lines file for the trace, written as the run goes (in the process where it runs).
    trace: str | Path | None = None
    #: Another sink for trace records (the REPL's recent calls, a live console).
    trace_sink: TraceSink | None = None
    #: Called in this process with each trace record as it is written, wherever the run is (the
    #: record as the trace file holds it: JSON values).
    on_record: Callable[[dict[str, Any]], None] | None = None
    #: Called where the runtime lives with each device runtime as soon as it is connected, before
    #: the script's first UI call goes on (the test runner reserves a file name in its artifacts).
    on_connect: Callable[[DeviceRuntime], None] | None = None
    #: A folder for a screenshot at the start and after each call that sent input or failed.
    screenshots: str | Path | None = None
    #: Where ``screenshot()`` saves its files (None: ``tapir-artifacts/<script name>/``).
    artifacts: str | Path | None = None
    #: Where a run that fails on the device keeps the screen (``screenshot.png``), the last dump
    #: (``hierarchy.xml``), its trace (``trace.jsonl``) and the error (``error.txt``); None: nowhere
    #: (``tapir run`` gives ``tapir.runtime.artifacts.failure_folder(script)``; the test runner
    #: keeps its own through ``finish``).
    failure_artifacts: str | Path | None = None
    #: The adb server's port (None: a private server for a simulator; ``$ANDROID_ADB_SERVER_PORT``,
    #: else 5037, for a phone).
    adb_port: int | None = None
    #: The adb server's host for a phone (None: ``$ANDROID_ADB_SERVER_HOST``, else 127.0.0.1); a
    #: simulator always attaches to a server on this machine. A device spec that names its server
    #: (``HOST:PORT/SERIAL``) wins over ``adb_host`` and ``adb_port``.
    adb_host: str | None = None
    prepare: Prepare = None
    #: The runtime's settings (settling, navigation bounds); None: the defaults for the device.
    session: SessionConfig | None = None
    #: Where ``print()`` goes (None: nowhere; the result keeps what was printed either way).
    output: Output | None = print_line
    #: Keep the interpreter's own traceback on an internal error (``--debug``).
    debug: bool = False
