"""Model output is untrusted code: show a generated script and ask before running it.

``tapir gen --run`` runs what a model wrote on a person's phone. Before each run the script is
shown (numbered, with what it would ask for: sensitive permissions it may not grant itself,
secrets it reads) and, outside CI, the person is asked; ``--yes`` skips the question. In CI (the
``CI`` environment variable set) or without a terminal the script is shown and runs: nobody is
there to answer, and the run is still bounded by its budgets and guarded (``docs/safety.md``).

    from tapir.cli.confirm import confirm_run, untrusted_safety
    if not confirm_run(script, task="Turn off vibration", device="sim:clock", yes=args.yes):
        return 1                                        # the person said no: nothing ran
    safety = untrusted_safety(allow=args.allow)          # the script's own allow() is refused

Nothing here runs the script; ``tapir.run.Runner(..., RunOptions(safety=safety))`` does, as for
any run.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TextIO

from tapir.core.safety import Safety

__all__ = ["confirm_run", "in_ci", "script_summary", "untrusted_safety"]

_ALLOW = re.compile(r"^\s*#\s*allow\s*:|\ballow\s*\(", re.IGNORECASE)
_SECRET = re.compile(r"\bsecret\s*\(\s*['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]")


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """``CI`` is set to something other than empty, ``0`` or ``false`` (GitHub, GitLab, most CIs)."""
    value = (environ if environ is not None else os.environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def script_summary(script: str) -> list[str]:
    """What a person should notice before running ``script``: the lines where it tries to give
    itself permissions (refused), and the secrets it reads."""
    notes: list[str] = []
    for number, line in enumerate(script.splitlines(), 1):
        if _ALLOW.search(line):
            notes.append(f"line {number} asks for a permission ({line.strip()}): refused, a generated script "
                         "cannot give itself permissions")
    secrets = sorted(set(_SECRET.findall(script)))
    if secrets:
        notes.append("it reads the secret" + ("s " if len(secrets) > 1 else " ") + ", ".join(secrets)
                     + " (typed into password fields only, never shown)")
    return notes


def confirm_run(script: str, *, task: str | None = None, device: str | None = None, yes: bool = False,
                stream: TextIO | None = None, ask: Callable[[str], bool] | None = None,
                environ: Mapping[str, str] | None = None, interactive: bool | None = None) -> bool:
    """Show ``script`` on ``stream`` (stderr) and return whether to run it (see the module
    docstring): True with ``yes``, in CI and without a terminal; else the person's answer to
    ``ask`` (default: a y/N question on the terminal; no answer, Ctrl-C or Ctrl-D is no)."""
    out = stream if stream is not None else sys.stderr
    where = f" on {device}" if device else ""
    head = f"the model's script for: {task}" if task else "the model's script"
    out.write(f"{head}\n")
    lines = script.rstrip("\n").splitlines() or [""]
    width = len(str(len(lines)))
    for number, line in enumerate(lines, 1):
        out.write(f"  {number:>{width}} | {line}\n")
    for note in script_summary(script):
        out.write(f"  note: {note}\n")
    if yes:
        out.write(f"running it{where} (--yes)\n")
        return True
    if in_ci(environ):
        out.write(f"running it{where} without asking: CI is set\n")
        return True
    if interactive is None:
        interactive = sys.stdin.isatty() and out.isatty()
    if not interactive:
        out.write(f"running it{where} without asking: no terminal to ask on (--yes says so explicitly)\n")
        return True
    out.flush()
    question = f"Run this script{where}?"
    answer = (ask or _ask_in_terminal)(question)
    if not answer:
        out.write("not run\n")
    return bool(answer)


def untrusted_safety(*, allow: Iterable[str] | None = None, allow_apps: Iterable[str] | None = None,
                     secrets_file: str | None = None, foreign_app: str | None = None) -> Safety:
    """The ``Safety`` of a generated script: what the person allows on the command line, and
    nothing the script would allow itself."""
    return Safety.from_options(allow=allow, allow_apps=allow_apps, secrets_file=secrets_file,
                               foreign_app=foreign_app, trust_script=False)


def _ask_in_terminal(question: str) -> bool:
    try:
        answer = input(f"{question} [y/N] ")
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")
