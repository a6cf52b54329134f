"""What the command modules share: reading scripts, printing document problems, flag checks, the
project's ``tapir.toml``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tapir.dsl.diagnostics import Diagnostic
from tapir.dsl.errors import UsageError

if TYPE_CHECKING:
    from tapir.service import ProjectConfig

#: The ``sub`` argument each command module's ``register`` receives.
Subparsers = argparse._SubParsersAction  # type: ignore[type-arg]


def read_script(name: str) -> str:
    """The text of a script file, or a UsageError saying in words why it cannot be read."""
    from pathlib import Path

    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{name} is a directory, not a script file")
    if not path.is_file():
        raise UsageError(f"no such file: {name}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{name} is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line}"
                         " (save the script as UTF-8)") from None


def print_problems(problems: Sequence[Diagnostic], filename: str, source: str | None = None) -> None:
    """Document problems (or any diagnostics of one file) as every error is shown, then a count."""
    from pathlib import Path

    from tapir.dsl.diagnostics import render_diagnostics

    if source is None:
        try:
            source = Path(filename).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            source = None
    print(render_diagnostics(problems, source, filename), file=sys.stderr)


def check_device_flag(device: str | None) -> None:
    # an empty value (e.g. an unset shell variable) must not silently mean "no device" or "sim"
    if device is not None and not device.strip():
        raise UsageError("--device is empty: give an adb serial, sim or sim:APP")


def project_devices(project: ProjectConfig) -> tuple[str, ...]:
    """``tapir.toml``'s ``[device] default``, a ``sim:APP`` naming no known app refused now as the
    file's mistake (a user who gave no --device would not know where 'sim:nope' came from)."""
    from tapir.runtime.sim.errors import SimUsageError
    from tapir.runtime.sim.launch import check_sim_spec

    for spec in project.device.default:
        try:
            check_sim_spec(spec)
        except SimUsageError as exc:
            raise UsageError(f"{project.path}: [device] default: {exc}") from None
    return project.device.default


def check_positive(**flags: float | None) -> None:
    """Refuse zero or negative budget flags (``check_positive(max_actions=args.max_actions)``)."""
    for name, value in flags.items():
        if value is not None and value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")


def project_config(path: str | None) -> ProjectConfig | None:
    """The ``tapir.toml`` that governs ``path`` (the working folder when None), or None; a
    ``UsageError`` showing every problem with its line when the file is invalid."""
    from pathlib import Path

    from tapir.service import ConfigError, Workspace

    try:
        return Workspace().config_for(Path(path) if path else Path.cwd() / "x.tap")
    except ConfigError as exc:
        shown = "\n".join(p.render(exc.text, str(exc.path)) for p in exc.problems)
        raise UsageError(f"{exc.path} is invalid:\n{shown}") from None
