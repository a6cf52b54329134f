"""The REPL's meta commands: lines that start with ``:``.

    run_meta(session, ":screen")          # True when the command did its work
    COMMANDS["find"].usage                # ':find XPATH'

Each command is a ``MetaCommand`` (name, usage, one line of help, handler) in ``COMMANDS``, the
one table ``:help``, completion and the docs are made from. Commands that look at the device go
through the session's device runtime (connecting it if need be) with Ctrl-C armed, so a slow dump
can be stopped like a statement.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapir.core.errors import Interrupted, TapirError, UsageError
from tapir.dsl.registry import REGISTRY
from tapir.repl.screen_report import find_report, screen_report, tree_report
from tapir.repl.session import ReplSession
from tapir.repl.transcript import Statement
from tapir.service import format_source
from tapir.service.describe import entry_markdown

__all__ = ["COMMANDS", "MetaCommand", "run_meta"]


@dataclass(frozen=True)
class MetaCommand:
    name: str
    usage: str
    help: str
    handler: Callable[[ReplSession, str], bool]
    #: Whether the argument is a file path (completion offers files).
    takes_path: bool = False


def run_meta(session: ReplSession, line: str) -> bool:
    """Run the ``:command args`` on ``line``; errors are shown, never raised."""
    word, _, arg = line[1:].strip().partition(" ")
    name = word.lower()
    force = name.endswith("!")
    name = name.rstrip("!")
    command = COMMANDS.get(name) or COMMANDS.get(_ALIASES.get(name, ""))
    if command is None:
        close = [c for c in COMMANDS if c.startswith(name[:2])] if name else []
        hint = f"did you mean :{close[0]}? " if close else ""
        session.error(f"unknown command :{word}; {hint}:help lists the commands")
        return False
    if force and command.name != "save":
        session.error(f":{command.name} takes no '!'")
        return False
    try:
        with session.interrupts.armed():
            if command.name == "save":
                return _save(session, arg.strip(), force=force)
            return command.handler(session, arg.strip())
    except Interrupted:
        session.link.forget_screen()
        session.error(f":{command.name}: interrupted")
        return False
    except UsageError as exc:
        session.error(f":{command.name}: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
        return False
    except TapirError as exc:
        session.error(f":{command.name}: {exc.render()}" if exc.location() is None else exc.render())
        return False


# -- the commands ------------------------------------------------------------------------------------------


def _help(session: ReplSession, arg: str) -> bool:
    if arg:
        command = COMMANDS.get(arg.lstrip(":"))
        if command is None:
            raise UsageError(f"no command :{arg.lstrip(':')}")
        session.write(f"{command.usage}\n    {command.help}")
        return True
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = ["Statements run on the device as you type them; an expression's value is printed.",
             "Enter runs complete input (a block ends with an empty line); Tab completes; Ctrl-C stops",
             "the running statement between two device commands; Ctrl-D leaves.", ""]
    lines += [f"  {c.usage.ljust(width)}  {c.help}" for c in COMMANDS.values()]
    session.write("\n".join(lines))
    return True


def _screen(session: ReplSession, arg: str) -> bool:
    _no_argument("screen", arg)
    session.write(screen_report(session.link.runtime()))
    return True


def _tree(session: ReplSession, arg: str) -> bool:
    if arg not in ("", "all"):
        raise UsageError(":tree takes nothing, or 'all' for every view with its bounds")
    session.write(tree_report(session.link.runtime(), full=arg == "all"))
    return True


def _find(session: ReplSession, arg: str) -> bool:
    if not arg:
        raise UsageError("usage: :find XPATH, e.g. :find //node[@text='Settings']")
    session.write(find_report(session.link.runtime(), _unquote(arg)))
    return True


def _doc(session: ReplSession, arg: str) -> bool:
    if not arg:
        raise UsageError("usage: :doc $screen__element (or a function, method or variable name)")
    name = arg.split()[0]
    symbols = session.symbols
    if name.startswith("$") and symbols is not None and symbols.element(name[1:]) is None:
        close = difflib.get_close_matches(name[1:], [e.name for e in symbols.elements], n=1, cutoff=0.8)
        raise UsageError(f"the document has no element {name}" + (f"; did you mean ${close[0]}?" if close else ""))
    found = session.hover(name, 1 if name.startswith("$") else 0)
    text = found.contents if found is not None else None
    if text is None:
        entry = REGISTRY.element_method(name.lstrip("."))
        text = entry_markdown(entry) if entry is not None else None
    if text is None:
        what = "element" if name.startswith("$") else "name"
        hint = " (this session has no document: :document APP.yaml)" if name.startswith("$") and \
            session.symbols is None else ""
        raise UsageError(f"no {what} {name} is known here{hint}")
    session.write(_markdown(text))
    return True


def _trace(session: ReplSession, arg: str) -> bool:
    try:
        n = int(arg) if arg else 10
    except ValueError:
        raise UsageError(f":trace takes a number of calls, not {arg!r}") from None
    records = session.calls.last(n)
    if not records:
        session.write("no device calls yet")
        return True
    session.write("\n".join(format_record(r) for r in records))
    return True


def _save(session: ReplSession, arg: str, *, force: bool) -> bool:
    if not arg:
        raise UsageError("usage: :save FILE.tap (:save! FILE.tap replaces an existing file)")
    path = _path(session, arg)
    if path.is_dir():
        raise UsageError(f"{arg} is a directory")
    if path.exists() and not force:
        raise UsageError(f"{arg} exists; :save! {arg} replaces it")
    if not path.parent.is_dir():
        raise UsageError(f"the folder of {arg} does not exist")
    n = len(session.transcript)
    if not n:
        raise UsageError("nothing to save: no statement has run to the end yet")
    doc_line = None
    if session.document_path is not None:
        doc_line = f"# doc: {Path(os.path.relpath(session.document_path, path.parent.resolve())).as_posix()}"
    where = f" on {session.device}" if session.device else ""
    kept, left_out = _replayable(session, path, doc_line)
    if not kept:
        raise UsageError("nothing to save: no statement that ran can be replayed on its own")
    n = len(kept)
    header = f"Saved from a tapir repl session{where}: the {n} statement{'s' if n != 1 else ''} that ran."
    raw = session.transcript.script(doc_line, header, kept)
    text = format_source(raw).text or raw
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {arg}: {exc.strerror or exc}") from None
    checked = session.ws.check(path, text)
    problems = checked.render()
    if problems:
        session.error(problems)
    verdict = f"tapir check: {len(checked.errors)} error(s)" if checked.errors else "tapir check: clean"
    session.write(f"saved {n} statement{'s' if n != 1 else ''} to {arg} ({verdict})")
    for statement, why in left_out:
        first, *more = statement.text.split("\n")
        session.write(f"  left out: {first}{' ...' if more else ''}  ({why})")
    return not checked.errors


def _replayable(session: ReplSession, path: Path, doc_line: str | None) -> tuple[list[Statement], list[tuple[
        Statement, str]]]:
    """The statements that ran, less those a script could not run on its own: a statement that
    uses a name only a stopped statement bound (the stopped one is not saved), and then those
    that need what it bound, until the script checks clean."""
    kept = list(session.transcript.statements)
    left_out: list[tuple[Statement, str]] = []
    for _ in range(len(kept)):
        text, ranges = session.transcript.lines(doc_line, None, kept)
        errors = [d for d in session.ws.check(path, text).errors if d.span is not None]
        bad: dict[int, str] = {}
        for d in errors:
            assert d.span is not None
            for i, (first, last) in enumerate(ranges):
                if first <= d.span.line <= last:
                    bad.setdefault(i, d.message.split(";")[0])
        if not bad:
            break
        left_out += [(kept[i], why) for i, why in sorted(bad.items())]
        kept = [st for i, st in enumerate(kept) if i not in bad]
    return kept, left_out


def _load(session: ReplSession, arg: str) -> bool:
    if not arg:
        raise UsageError("usage: :load FILE.tap")
    path = _path(session, arg)
    source = session.ws.text_of(path)
    ref = session.ws.document_for(path, source)
    if ref is not None:
        if session.document_path is None:
            session.use_document(ref.path)
            session.write(f"document: {_shown_path(session, ref.path)} (named by {arg})")
        elif ref.path.resolve() != session.document_path:
            raise UsageError(f"{arg} is written against {_shown_path(session, ref.path)}, this session uses "
                             f"{_shown_path(session, session.document_path)} (:document FILE switches)")
    before = len(session.transcript)
    ok = session.run_code(source, origin=arg, echo=False)
    ran = len(session.transcript) - before
    session.write(f"{arg}: {ran} statement{'s' if ran != 1 else ''} ran" + ("" if ok else ", then it failed"))
    return ok


def _document(session: ReplSession, arg: str) -> bool:
    if arg:
        session.use_document(_path(session, arg))
    if session.document_path is None:
        session.write("no document: :document APP.yaml loads one")
        return True
    doc = session.loaded.document if session.loaded is not None else None
    if doc is not None:
        counts = doc.counts()
        session.write(f"document {_shown_path(session, session.document_path)}: {doc.app.name or doc.app.package} "
                      f"({doc.app.package}), {counts.get('screens', 0)} screens, {counts.get('elements', 0)} elements")
    return True


def _vars(session: ReplSession, arg: str) -> bool:
    _no_argument("vars", arg)
    variables = session.interp.variables()
    if not variables:
        session.write("no variables yet")
        return True
    width = max(len(k) for k in variables)
    session.write("\n".join(f"  {k.ljust(width)} = {v}" for k, v in sorted(variables.items())))
    return True


def _quit(session: ReplSession, arg: str) -> bool:
    session.quit_requested = True
    return True


# -- helpers -------------------------------------------------------------------------------------------------


def _no_argument(name: str, arg: str) -> None:
    if arg:
        raise UsageError(f":{name} takes no argument")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and text.count(text[0]) == 2:
        return text[1:-1]
    return text


def _path(session: ReplSession, arg: str) -> Path:
    path = Path(os.path.expanduser(_unquote(arg)))
    return path if path.is_absolute() else session.cwd / path


def _shown_path(session: ReplSession, path: Path) -> str:
    """``path`` relative to the session's folder when it is inside it, else as it is."""
    resolved = path.resolve()
    return str(resolved.relative_to(session.cwd)) if resolved.is_relative_to(session.cwd) else str(path)


def _markdown(text: str) -> str:
    """Hover Markdown as plain text for a terminal: code fences dropped, emphasis marks kept
    light (``**x**`` -> ``x``)."""
    out = []
    for line in text.splitlines():
        if line.strip().startswith("```"):
            continue
        out.append(line.replace("**", "").replace("`", ""))
    return "\n".join(out).strip()


def format_record(r: dict[str, Any]) -> str:
    """One trace record as one line: ``[3] <repl>:1 tap $x  identifier 0 'Label'  a -> b  120 ms  ok``."""
    event = r.get("event")
    where = f"[{r.get('input', '?')}] {r.get('origin', '<repl>')}"
    if r.get("line"):
        where += f":{r['line']}"
    if event == "repeat":
        return f"{where}  ... the {r.get('call')} above {r.get('count')} more time(s)"
    if event == "navigation":
        how = f"  {r['grounded']}" if r.get("grounded") else ""
        return (f"    navigation: {r.get('step')}{how}  {r.get('screen_before')} -> {r.get('screen_after')}"
                f"  {r.get('ms', '?')} ms")
    if event == "scroll":
        return f"    scroll {r.get('element')} {r.get('direction')}{'' if r.get('moved') else ' (at the end)'}"
    call = f"{r.get('call')} {r.get('element') or ''}".strip()
    if r.get("args"):
        call += " " + ", ".join(f"{k}={v!r}" for k, v in r["args"].items())
    parts = [where, call]
    if r.get("grounded"):
        label = f" {r['label']!r}" if r.get("label") else ""
        parts.append(f"{r['grounded']}{label}")
    if r.get("screen_before") or r.get("screen_after"):
        parts.append(f"{r.get('screen_before')} -> {r.get('screen_after')}")
    ms = r.get("ms")
    if isinstance(ms, dict) and "total" in ms:
        parts.append(f"{ms['total']:.0f} ms")
    if r.get("ok"):
        result = r.get("result")
        parts.append(f"ok -> {result!r}" if result is not None else "ok")
    else:
        error = r.get("error") or {}
        parts.append(f"{error.get('category', 'error')}: {error.get('message', '')}")
    return "  ".join(parts)


COMMANDS: dict[str, MetaCommand] = {c.name: c for c in (
    MetaCommand("screen", ":screen", "the document screen showing now, and which of its elements ground, with how",
                _screen),
    MetaCommand("tree", ":tree [all]", "the current view hierarchy, compact (all: every view, with bounds)", _tree),
    MetaCommand("find", ":find XPATH", "the views an XPath selects on the current screen (either dialect)", _find),
    MetaCommand("doc", ":doc NAME", "what the document says of $element, or the docs of a function or method", _doc),
    MetaCommand("trace", ":trace [N]", "the last N device calls (default 10): grounding, screens, time", _trace),
    MetaCommand("save", ":save FILE", "write the statements that ran as a script (:save! replaces a file)",
                lambda s, a: _save(s, a, force=False), takes_path=True),
    MetaCommand("load", ":load FILE", "run a script into the session (its variables and functions stay)", _load,
                takes_path=True),
    MetaCommand("document", ":document [FILE]", "show the session's app document, or switch to another", _document,
                takes_path=True),
    MetaCommand("vars", ":vars", "the session's variables and their values", _vars),
    MetaCommand("help", ":help [COMMAND]", "this list, or one command's help", _help),
    MetaCommand("quit", ":quit", "leave the session (as Ctrl-D does)", _quit),
)}
_ALIASES = {"exit": "quit", "q": "quit", "h": "help", "?": "help", "ls": "tree", "doc!": "doc"}
