"""The Tapir REPL: statements run live on a device, with the language service as you type.

    tapir repl --device sim:music                      # the sample document of the music app
    tapir repl --device SERIAL --doc app.yaml          # a phone

    from tapir.repl import ReplSession
    session = ReplSession(device="sim:music", document=Path("samples/music/music.yaml"))
    session.handle('$songs_screen__song_list.match("Lanterns").tap()')
    session.handle(":save play.tap")
    session.close()

``session`` holds the state of one session (one interpreter environment, the device runtime made
once, the statements that ran); ``terminal`` reads input with prompt-toolkit (multi-line input,
completion, highlighting, history) and ``lines`` reads it line by line from a pipe; ``meta`` has
the ``:commands``; ``interrupts`` makes Ctrl-C stop a statement between two device commands;
``device`` links the session to its device and keeps the last calls for ``:trace``;
``screen_report`` prints ``:screen``, ``:tree`` and ``:find``. docs/repl.md is the user's guide.
"""

from tapir.repl.device import DeviceLink, RecentCalls
from tapir.repl.interrupts import GuardedDevice, Interrupts
from tapir.repl.lines import run_lines
from tapir.repl.meta import COMMANDS, MetaCommand, run_meta
from tapir.repl.session import REPL_BUDGETS, ReplSession, session_document
from tapir.repl.terminal import make_prompt, run_terminal
from tapir.repl.transcript import Transcript

__all__ = [
    "COMMANDS", "REPL_BUDGETS", "DeviceLink", "GuardedDevice", "Interrupts", "MetaCommand", "RecentCalls",
    "ReplSession", "Transcript", "make_prompt", "run_lines", "run_meta", "run_terminal", "session_document",
]
