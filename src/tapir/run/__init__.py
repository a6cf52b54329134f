"""The one way to run a script: ``Runner`` owns the pipeline (connect, interpret, trace, release)
that every front end calls; ``RunOptions`` are its settings; ``ScriptRun`` what one script did.

    from tapir.run import Runner, RunOptions
    run = Runner(document, "sim:music", RunOptions(isolation="inline")).run(source, "play.tap")
"""

from tapir.run.options import Isolation, Prepare, RunOptions
from tapir.run.runner import DeviceStats, Finish, Runner, ScriptRun, Session

__all__ = ["DeviceStats", "Finish", "Isolation", "Prepare", "RunOptions", "Runner", "ScriptRun", "Session"]
