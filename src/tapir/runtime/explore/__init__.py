"""Exploring apps on a device: ``tapir explore``.

    from tapir.runtime.explore import ExploreConfig, explore

    result = explore("sim:music", ExploreConfig("org.tapir.music", max_steps=150), "music-trace/")
    print(result.summary())

Modules: ``explorer`` (the loop, budgets, restarts, recording), ``actions`` (what can be done on a
screen, plausible text), ``strategy`` (depth-first and random). The trace format and the document
builder that reads it are in ``tapir.docgen.build``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tapir.core.errors import UsageError
from tapir.docgen.build.trace import TraceWriter
from tapir.runtime.explore.actions import Candidate, candidates, plausible_text
from tapir.runtime.explore.explorer import ExploreConfig, ExploreProgress, Explorer, ExploreResult
from tapir.runtime.explore.strategy import STRATEGIES, DepthFirst, RandomWalk, make_strategy

__all__ = [
    "STRATEGIES",
    "Candidate",
    "DepthFirst",
    "ExploreConfig",
    "ExploreProgress",
    "ExploreResult",
    "Explorer",
    "RandomWalk",
    "candidates",
    "explore",
    "make_strategy",
    "plausible_text",
    "sim_package",
]


def sim_package(spec: str) -> str | None:
    """The package of the only app a ``sim:APP`` device value installs (None when several)."""
    from tapir.sim.launch import apps_for_spec

    apps = apps_for_spec(spec)
    return apps[0].package if len(apps) == 1 else None


def explore(
    device: str | None,
    config: ExploreConfig,
    output: str | Path,
    *,
    on_progress: Callable[[ExploreProgress], None] | None = None,
    adb_port: int | None = None,
) -> ExploreResult:
    """Open the device (``sim``/``sim:APP`` starts the simulator), explore, record into ``output``.

    The trace directory is created first, so a bad ``output`` fails before anything starts.
    """
    from tapir.runtime.device import AdbDevice, open_device
    from tapir.sim.launch import apps_for_spec, check_sim_spec, is_sim_spec, start_sim

    TraceWriter.check_target(output)  # before a device or simulator is started
    meta = {"device": device or "default", "strategy": config.strategy, "seed": config.seed}
    if device is not None and is_sim_spec(device):
        check_sim_spec(device)
        apps = apps_for_spec(device)
        installed = sorted(a.package for a in apps)
        if config.package not in installed:
            raise UsageError(f"the simulated device {device!r} does not have {config.package} "
                             f"(it has {', '.join(installed) or 'nothing'})")
        sim = start_sim(apps, adb_port=adb_port)
        try:
            dev = AdbDevice(sim.serial, client=sim.adb_client())
            writer = TraceWriter.create(output, app=config.package, source="explore", **meta)
            return Explorer(dev, config, writer, on_progress=on_progress).run()
        finally:
            sim.stop()
    dev = open_device(device, adb_port=adb_port)  # (a device spec naming its server wins)
    writer = TraceWriter.create(output, app=config.package, source="explore", **meta)
    return Explorer(dev, config, writer, on_progress=on_progress).run()
