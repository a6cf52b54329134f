"""A small ``/system/bin/sh`` (mksh) for the simulated device.

ADB clients talk to a device through shell command lines: adbutils sends
``rm -f F; uiautomator dump F && echo success`` and ``CMD; echo X4EXIT:$?``; people type
``dumpsys window | grep mCurrentFocus``. This module parses and runs that subset of the shell
language: words with single/double quotes and backslashes, ``$?``/``$VAR``/``${VAR}``,
``VAR=value`` prefixes, ``;`` ``&&`` ``||`` ``|`` ``!`` newlines and comments, and the
redirections ``> >> < 2>&1``. Control flow (``if``, loops, functions), subshells, command
substitution and globbing are refused with a message that says so, instead of being run wrongly.

Commands are plain functions ``(Ctx) -> int``; the generic ones (``echo cat rm ls grep``...)
live here, the Android ones in ``commands/``, bound to the phone by ``device.py``. Output keeps stdout and stderr
apart but in order, as shell v2 needs both and v1/``exec:`` need them merged.
"""

from __future__ import annotations

import errno
import hashlib
import posixpath
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tapir.sim.files import FileSystem, FsError

SH = "/system/bin/sh"
_BIN_DIRS = ("/system/bin", "/system/xbin", "/vendor/bin", "/bin", "/product/bin")
_RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until",
             "for", "function", "select", "{", "}", "[[", "]]", "time"}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ShellSyntaxError(Exception):
    """The line is not valid shell, or uses a construct the simulated shell does not run."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


# --------------------------------------------------------------------------------------------
# Syntax


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, or a parameter (``var``) to expand when run."""

    text: str
    quoted: bool
    var: bool = False


@dataclass(frozen=True)
class Word:
    parts: tuple[Part, ...]

    def literal(self) -> str | None:
        """The text when the word has no expansions and no quoting, else None."""
        if all(not p.var and not p.quoted for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None


@dataclass(frozen=True)
class Op:
    op: str
    fd: int | None = None  # the IO number of a redirection (``2>``)


@dataclass(frozen=True)
class Redirect:
    fd: int
    op: str  # '>', '>>', '<', '>&', '<&'
    target: Word


@dataclass(frozen=True)
class Command:
    assigns: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    negate: bool = False


@dataclass(frozen=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]


def tokenize(src: str) -> list[Word | Op]:
    """Split a command line into words and operators, keeping quoting for later expansion."""
    tokens: list[Word | Op] = []
    parts: list[Part] = []
    in_word = False
    i, n = 0, len(src)

    def add(text: str, quoted: bool) -> None:
        nonlocal in_word
        in_word = True
        if parts and not parts[-1].var and parts[-1].quoted == quoted:
            parts[-1] = Part(parts[-1].text + text, quoted)
        else:
            parts.append(Part(text, quoted))

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            tokens.append(Word(tuple(parts)))
        parts.clear()
        in_word = False

    def read_param(j: int, quoted: bool) -> int:
        """Parse ``$...`` at src[j] == '$'; returns the index after it."""
        nonlocal in_word
        k = j + 1
        if k < n and src[k] == "(":
            raise ShellSyntaxError("command substitution $(...) is not supported by the simulated shell", 2)
        if k < n and src[k] == "{":
            close = src.find("}", k)
            if close < 0:
                raise ShellSyntaxError("missing '}'")
            name = src[k + 1:close]
            if not (_NAME_RE.fullmatch(name) or name in ("?", "$", "#", "!", "-") or name.isdigit()):
                raise ShellSyntaxError(f"${{{name}}}: parameter operators are not supported by the simulated shell", 2)
            parts.append(Part(name, quoted, var=True))
            in_word = True
            return close + 1
        if k < n and (src[k] in "?$#!-" or src[k].isdigit()):
            parts.append(Part(src[k], quoted, var=True))
            in_word = True
            return k + 1
        m = _NAME_RE.match(src, k)
        if m:
            parts.append(Part(m.group(0), quoted, var=True))
            in_word = True
            return m.end()
        add("$", quoted)
        return k

    while i < n:
        c = src[i]
        if c in " \t":
            end_word()
            i += 1
        elif c == "\n":
            end_word()
            tokens.append(Op("\n"))
            i += 1
        elif c == "#" and not in_word:
            while i < n and src[i] != "\n":
                i += 1
        elif c == "\\":
            if i + 1 < n:
                if src[i + 1] != "\n":  # a backslash-newline joins lines
                    add(src[i + 1], True)
                i += 2
            else:
                add("\\", False)
                i += 1
        elif c == "'":
            close = src.find("'", i + 1)
            if close < 0:
                raise ShellSyntaxError("no closing quote")
            add(src[i + 1:close], True)
            i = close + 1
        elif c == '"':
            i += 1
            in_word = True
            if not parts:
                parts.append(Part("", True))
            while True:
                if i >= n:
                    raise ShellSyntaxError("no closing quote")
                d = src[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < n and src[i + 1] in '$`"\\\n':
                    if src[i + 1] != "\n":
                        add(src[i + 1], True)
                    i += 2
                elif d == "$":
                    i = read_param(i, True)
                elif d == "`":
                    raise ShellSyntaxError("command substitution `...` is not supported by the simulated shell", 2)
                else:
                    add(d, True)
                    i += 1
        elif c == "$":
            i = read_param(i, False)
        elif c == "`":
            raise ShellSyntaxError("command substitution `...` is not supported by the simulated shell", 2)
        elif c in ";&|":
            end_word()
            two = src[i:i + 2]
            if two in ("&&", "||"):
                tokens.append(Op(two))
                i += 2
            elif two == ";;":
                raise ShellSyntaxError("syntax error: ';;' unexpected")
            else:
                tokens.append(Op(c))
                i += 1
        elif c in "<>":
            fd: int | None = None
            if in_word and len(parts) == 1 and not parts[0].quoted and not parts[0].var \
                    and parts[0].text.isdigit():
                fd = int(parts[0].text)
                parts.clear()
                in_word = False
            end_word()
            for op in (">>", ">&", "<&", ">|", ">", "<"):
                if src.startswith(op, i):
                    tokens.append(Op(">" if op == ">|" else op, fd))
                    i += len(op)
                    break
        elif c in "()":
            raise ShellSyntaxError("subshells and ( ) groups are not supported by the simulated shell", 2)
        else:
            add(c, False)
            i += 1
    end_word()
    return tokens


def _shown(tok: Word | Op | None) -> str:
    if isinstance(tok, Op):
        return "newline" if tok.op == "\n" else tok.op
    if isinstance(tok, Word):
        return "".join(p.text for p in tok.parts)
    return "newline"


def parse(src: str) -> list[AndOr]:
    """Parse a command line into and-or lists (``;``/``&``/newline separated)."""
    tokens = tokenize(src)
    pos = 0
    out: list[AndOr] = []

    def peek() -> Word | Op | None:
        return tokens[pos] if pos < len(tokens) else None

    def parse_command() -> Command:
        nonlocal pos
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            tok = peek()
            if isinstance(tok, Word):
                pos += 1
                first = tok.parts[0] if tok.parts else None
                if not words and first is not None and not first.quoted and not first.var \
                        and "=" in first.text and _NAME_RE.fullmatch(first.text.split("=", 1)[0]):
                    name, _, rest = first.text.partition("=")
                    value_parts = ((Part(rest, False),) if rest else ()) + tok.parts[1:]
                    assigns.append((name, Word(value_parts)))
                    continue
                if not words and tok.literal() in _RESERVED:
                    raise ShellSyntaxError(
                        f"'{tok.literal()}': compound commands are not supported by the simulated shell", 2)
                words.append(tok)
            elif isinstance(tok, Op) and tok.op in (">", ">>", "<", ">&", "<&"):
                pos += 1
                target = peek()
                if not isinstance(target, Word):
                    raise ShellSyntaxError(f"syntax error: '{_shown(target)}' unexpected")
                pos += 1
                default_fd = 0 if tok.op.startswith("<") else 1
                redirects.append(Redirect(default_fd if tok.fd is None else tok.fd, tok.op, target))
            else:
                break
        if not words and not assigns and not redirects:
            tok = peek()
            raise ShellSyntaxError(f"syntax error: '{_shown(tok)}' unexpected")
        return Command(tuple(assigns), tuple(words), tuple(redirects))

    def parse_pipeline() -> Pipeline:
        nonlocal pos
        negate = False
        tok = peek()
        if isinstance(tok, Word) and tok.literal() == "!":
            negate = True
            pos += 1
        commands = [parse_command()]
        while isinstance(peek(), Op) and peek().op == "|":  # type: ignore[union-attr]
            pos += 1
            skip_newlines()
            commands.append(parse_command())
        return Pipeline(tuple(commands), negate)

    def skip_newlines() -> None:
        nonlocal pos
        while isinstance(peek(), Op) and peek().op == "\n":  # type: ignore[union-attr]
            pos += 1

    while True:
        skip_newlines()
        if peek() is None:
            break
        first = parse_pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while isinstance(peek(), Op) and peek().op in ("&&", "||"):  # type: ignore[union-attr]
            op = peek().op  # type: ignore[union-attr]
            pos += 1
            skip_newlines()
            rest.append((op, parse_pipeline()))
        out.append(AndOr(first, tuple(rest)))
        tok = peek()
        if tok is None:
            break
        if isinstance(tok, Op) and tok.op in (";", "&", "\n"):
            # `cmd &` runs in the background on a device; here it simply runs to completion.
            pos += 1
            continue
        raise ShellSyntaxError(f"syntax error: '{_shown(tok)}' unexpected")
    return out


# --------------------------------------------------------------------------------------------
# Running


@dataclass(frozen=True)
class ShellResult:
    """What a command line printed, in order, and its exit status."""

    chunks: tuple[tuple[int, bytes], ...]  # (1 = stdout | 2 = stderr, bytes)
    exit_code: int

    @property
    def stdout(self) -> bytes:
        return b"".join(d for fd, d in self.chunks if fd == 1)

    @property
    def stderr(self) -> bytes:
        return b"".join(d for fd, d in self.chunks if fd == 2)

    @property
    def output(self) -> bytes:
        """stdout and stderr interleaved as written, as a v1 shell or ``exec:`` delivers them."""
        return b"".join(d for _, d in self.chunks)

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


class Sink:
    def write(self, data: bytes) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _Terminal(Sink):
    def __init__(self, chunks: list[tuple[int, bytes]], fd: int) -> None:
        self.chunks, self.fd = chunks, fd

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self.chunks and self.chunks[-1][0] == self.fd:
            self.chunks[-1] = (self.fd, self.chunks[-1][1] + data)
        else:
            self.chunks.append((self.fd, data))


class _Buffer(Sink):
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data


class _Null(Sink):
    def write(self, data: bytes) -> None:
        pass


@dataclass
class Ctx:
    """Everything a command sees: its arguments, environment, streams and the device's files."""

    argv: list[str]
    env: dict[str, str]
    stdout: Sink
    stderr: Sink
    shell: Shell
    stdin_source: Callable[[], bytes] = field(default=lambda: b"")

    @property
    def name(self) -> str:
        return self.argv[0]

    @property
    def args(self) -> list[str]:
        return self.argv[1:]

    @property
    def fs(self) -> FileSystem:
        return self.shell.fs

    def read_stdin(self) -> bytes:
        return self.stdin_source()

    def out(self, data: str | bytes) -> None:
        self.stdout.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)

    def err(self, data: str | bytes) -> None:
        self.stderr.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)

    def fail(self, message: str, status: int = 1) -> int:
        self.err(f"{self.name}: {message}\n")
        return status

    def path(self, p: str) -> str:
        return posixpath.normpath(posixpath.join(self.shell.cwd, p))

    def write_file(self, path: str, data: bytes) -> None:
        """Write a file the way a device program would: ``/dev/tty`` is this command's stdout."""
        if path == "/dev/tty":
            self.out(data)
        else:
            self.fs.write(self.path(path), data)


CommandFn = Callable[[Ctx], int]


def _constant(data: bytes) -> Callable[[], bytes]:
    """A stdin source that gives ``data`` (the output of the previous pipeline stage, a file)."""
    return lambda: data


class Shell:
    """One ``sh -c`` invocation: a working directory, variables and the last exit status."""

    def __init__(self, fs: FileSystem, commands: Mapping[str, CommandFn],
                 env: Mapping[str, str] | None = None,
                 before_command: Callable[[str], None] | None = None) -> None:
        self.fs = fs
        self.commands = commands
        self.env: dict[str, str] = dict(env or {})
        self.cwd = "/"
        self.status = 0
        self.before_command = before_command

    def run(self, source: str, stdin: Callable[[], bytes] | None = None) -> ShellResult:
        chunks: list[tuple[int, bytes]] = []
        out, err = _Terminal(chunks, 1), _Terminal(chunks, 2)
        try:
            program = parse(source)
        except ShellSyntaxError as exc:
            err.write(f"{SH}: {exc}\n".encode())
            return ShellResult(tuple(chunks), exc.status)
        stdin_source = stdin or (lambda: b"")
        try:
            for and_or in program:
                self.status = self._run_pipeline(and_or.first, out, err, stdin_source)
                for op, pipeline in and_or.rest:
                    if (op == "&&") == (self.status == 0):
                        self.status = self._run_pipeline(pipeline, out, err, stdin_source)
        except _Exit as exc:
            self.status = exc.status
        except ShellSyntaxError as exc:
            err.write(f"{SH}: {exc}\n".encode())
            self.status = exc.status
        return ShellResult(tuple(chunks), self.status & 0xFF)

    # -- expansion ---------------------------------------------------------------------------

    def _param(self, name: str) -> str:
        special = {"?": str(self.status), "$": "4242", "#": "0", "0": SH, "!": "", "-": "hi"}
        if name in special:
            return special[name]
        if name.isdigit():
            return ""
        return self.env.get(name, "")

    def expand(self, word: Word) -> list[str]:
        """Expand parameters and split unquoted expansions into fields (no globbing)."""
        fields: list[str] = []
        current: str | None = None  # None: no field started yet
        for part in word.parts:
            if not part.var:
                current = (current or "") + part.text
                continue
            value = self._param(part.text)
            if part.quoted:
                current = (current or "") + value
                continue
            pieces = value.split()
            if not pieces:
                continue
            if value[0].isspace() and current is not None:
                fields.append(current)
                current = None
            current = (current or "") + pieces[0]
            for piece in pieces[1:]:
                fields.append(current)
                current = piece
            if value[-1].isspace():
                fields.append(current)
                current = None
        if current is not None:
            fields.append(current)
        return fields

    def expand_one(self, word: Word) -> str:
        return " ".join(self.expand(word))

    # -- execution ---------------------------------------------------------------------------

    def _run_pipeline(self, pipeline: Pipeline, out: Sink, err: Sink,
                      stdin_source: Callable[[], bytes]) -> int:
        status = 0
        source = stdin_source
        for i, command in enumerate(pipeline.commands):
            last = i == len(pipeline.commands) - 1
            sink: Sink = out if last else _Buffer()
            status = self._run_command(command, sink, err, source)
            if isinstance(sink, _Buffer):
                source = _constant(bytes(sink.data))
        if pipeline.negate:
            status = 0 if status else 1
        return status

    def _run_command(self, command: Command, out: Sink, err: Sink, stdin_source: Callable[[], bytes]) -> int:
        argv: list[str] = []
        for word in command.words:
            argv.extend(self.expand(word))
        assigns = {name: self.expand_one(value) for name, value in command.assigns}
        if not argv:
            self.env.update(assigns)
        stdout, stderr = out, err
        pending: list[tuple[_Buffer, str, bool]] = []
        for r in command.redirects:
            target = self.expand_one(r.target)
            if r.op in (">&", "<&"):
                if target == "-":
                    sink: Sink = _Null()
                elif target in ("1", "2"):
                    sink = stdout if target == "1" else stderr
                else:
                    err.write(f"{SH}: {target}: bad file descriptor\n".encode())
                    return 1
            elif r.op == "<":
                try:
                    data = self.fs.read(posixpath.join(self.cwd, target))
                except FsError as exc:
                    err.write(f"{SH}: can't open {target}: {exc.reason}\n".encode())
                    return 1
                stdin_source = _constant(data)
                continue
            elif target == "/dev/tty":
                sink = out
            elif target in ("/dev/null", "/dev/zero"):
                sink = _Null()
            else:
                path = posixpath.join(self.cwd, target)
                try:
                    # The shell opens (and truncates) the file before the command runs.
                    self.fs.write(path, b"", append=r.op == ">>")
                except FsError as exc:
                    err.write(f"{SH}: can't create {target}: {exc.reason}\n".encode())
                    return 1
                buf = _Buffer()
                pending.append((buf, path, True))
                sink = buf
            if r.fd == 1:
                stdout = sink
            elif r.fd == 2:
                stderr = sink
        if not argv:
            status = 0
        else:
            status = self._exec(argv, {**self.env, **assigns}, stdout, stderr, stdin_source)
        for buf, path, append in pending:
            try:
                self.fs.write(path, bytes(buf.data), append=append)
            except FsError as exc:
                err.write(f"{SH}: can't create {path}: {exc.reason}\n".encode())
                status = 1
        return status

    def _exec(self, argv: list[str], env: dict[str, str], stdout: Sink, stderr: Sink,
              stdin_source: Callable[[], bytes]) -> int:
        name = argv[0]
        if "/" in name and posixpath.dirname(name) in _BIN_DIRS:
            name = posixpath.basename(name)
        fn = self.commands.get(name)
        if fn is None:
            stderr.write(f"{SH}: {argv[0]}: inaccessible or not found\n".encode("utf-8", "surrogateescape"))
            return 127
        if self.before_command is not None:
            self.before_command(name)
        ctx = Ctx([name, *argv[1:]], env, stdout, stderr, self, stdin_source)
        try:
            return fn(ctx)
        except (_Exit, ShellSyntaxError):
            raise
        except Exception as exc:  # a bug in an app or a command: say so, as Android prints a crash
            stderr.write(f"{name}: simulator error: {type(exc).__name__}: {exc}\n".encode("utf-8", "replace"))
            return 1


# --------------------------------------------------------------------------------------------
# Generic commands (shell builtins and toybox)


def _echo(ctx: Ctx) -> int:
    args = ctx.args
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    ctx.out(text + ("\n" if newline else ""))
    return 0


def _exit(ctx: Ctx) -> int:
    if ctx.args:
        try:
            raise _Exit(int(ctx.args[0]) & 0xFF)
        except ValueError:
            ctx.err(f"{SH}: exit: {ctx.args[0]}: bad number\n")
            raise _Exit(2) from None
    raise _Exit(ctx.shell.status)


def _cd(ctx: Ctx) -> int:
    target = ctx.path(ctx.args[0] if ctx.args else "/")
    if not ctx.fs.is_dir(target):
        ctx.err(f"{SH}: cd: {ctx.args[0] if ctx.args else '/'}: No such file or directory\n")
        return 2
    ctx.shell.cwd = target
    return 0


def _pwd(ctx: Ctx) -> int:
    ctx.out(ctx.shell.cwd + "\n")
    return 0


def _export(ctx: Ctx) -> int:
    for arg in ctx.args:
        name, sep, value = arg.partition("=")
        if sep:
            ctx.shell.env[name] = value
    return 0


def _unset(ctx: Ctx) -> int:
    for arg in ctx.args:
        ctx.shell.env.pop(arg, None)
    return 0


def _sleep(ctx: Ctx) -> int:
    try:
        seconds = float(ctx.args[0]) if ctx.args else 0.0
    except ValueError:
        return ctx.fail(f"invalid number '{ctx.args[0]}'")
    time.sleep(min(max(seconds, 0.0), 60.0))
    return 0


def _split_flags(args: list[str], known: str) -> tuple[set[str], list[str]] | str:
    """Single-letter flags (``-rf``) before the operands; returns the bad flag as a str."""
    flags: set[str] = set()
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        arg = rest.pop(0)
        if arg == "--":
            break
        for ch in arg[1:]:
            if ch not in known:
                return ch
            flags.add(ch)
    return flags, rest


def _cat(ctx: Ctx) -> int:
    status = 0
    if not ctx.args:
        ctx.out(ctx.read_stdin())
        return 0
    for arg in ctx.args:
        if arg == "-":
            ctx.out(ctx.read_stdin())
            continue
        try:
            ctx.out(ctx.fs.read(ctx.path(arg)))
        except FsError as exc:
            ctx.err(f"cat: {arg}: {exc.reason}\n")
            status = 1
    return status


def _rm(ctx: Ctx) -> int:
    parsed = _split_flags(ctx.args, "rRfvdi")
    if isinstance(parsed, str):
        return ctx.fail(f"Unknown option '{parsed}'")
    flags, operands = parsed
    force, recursive = "f" in flags, bool(flags & {"r", "R"})
    if not operands and not force:
        return ctx.fail("Need 1 argument")
    status = 0
    for arg in operands:
        try:
            ctx.fs.remove(ctx.path(arg), recursive=recursive)
        except FsError as exc:
            if force and exc.code == errno.ENOENT:
                continue
            ctx.err(f"rm: {arg}: {exc.reason}\n")
            status = 1
    return status


def _mkdir(ctx: Ctx) -> int:
    parsed = _split_flags(ctx.args, "pvm")
    if isinstance(parsed, str):
        return ctx.fail(f"Unknown option '{parsed}'")
    flags, operands = parsed
    status = 0
    for arg in operands:
        try:
            ctx.fs.mkdir(ctx.path(arg), parents="p" in flags)
        except FsError as exc:
            ctx.err(f"mkdir: {arg}: {exc.reason}\n")
            status = 1
    return status


def _touch(ctx: Ctx) -> int:
    status = 0
    for arg in [a for a in ctx.args if not a.startswith("-")]:
        try:
            if not ctx.fs.exists(ctx.path(arg)):
                ctx.fs.write(ctx.path(arg), b"")
        except FsError as exc:
            ctx.err(f"touch: {arg}: {exc.reason}\n")
            status = 1
    return status


def _ls(ctx: Ctx) -> int:
    parsed = _split_flags(ctx.args, "laA1dRhFtrS")
    if isinstance(parsed, str):
        return ctx.fail(f"Unknown option '{parsed}'")
    flags, operands = parsed
    status = 0
    for arg in operands or ["."]:
        st = ctx.fs.stat(ctx.path(arg))
        if st is None:
            ctx.err(f"ls: {arg}: No such file or directory\n")
            status = 1
            continue
        entries = [(arg, st)] if (not st.is_dir or "d" in flags) else ctx.fs.listdir(ctx.path(arg))
        for name, est in entries:
            if "l" in flags:
                kind = "d" if est.is_dir else "-"
                stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(est.mtime))
                ctx.out(f"{kind}rw-rw---- 1 shell shell {est.size:>8} {stamp} {name}\n")
            else:
                ctx.out(name + "\n")
    return status


def _md5sum(ctx: Ctx) -> int:
    status = 0
    for arg in ctx.args:
        try:
            digest = hashlib.md5(ctx.fs.read(ctx.path(arg))).hexdigest()
            ctx.out(f"{digest}  {arg}\n")
        except FsError as exc:
            ctx.err(f"md5sum: {arg}: {exc.reason}\n")
            status = 1
    return status


def _input_lines(ctx: Ctx, files: list[str]) -> tuple[list[bytes], int]:
    if not files:
        return ctx.read_stdin().splitlines(keepends=True), 0
    lines: list[bytes] = []
    status = 0
    for f in files:
        try:
            lines += ctx.fs.read(ctx.path(f)).splitlines(keepends=True)
        except FsError as exc:
            ctx.err(f"{ctx.name}: {f}: {exc.reason}\n")
            status = 2
    return lines, status


def _grep(ctx: Ctx) -> int:
    args = list(ctx.args)
    flags: set[str] = set()
    pattern: str | None = None
    files: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-e" and args:
            pattern = args.pop(0)
        elif arg.startswith("-") and len(arg) > 1 and pattern is None and not files:
            bad = set(arg[1:]) - set("ivcqoEFnlw")
            if bad:
                return ctx.fail(f"Unknown option '{sorted(bad)[0]}'", 2)
            flags |= set(arg[1:])
        elif pattern is None:
            pattern = arg
        else:
            files.append(arg)
    if pattern is None:
        return ctx.fail("Need 1 argument", 2)
    if "F" in flags:
        regex = re.escape(pattern)
    elif "E" in flags:
        regex = pattern
    else:  # basic regular expressions: \| \( \) \+ are operators, the bare forms are literal
        regex = re.sub(r"\\([|()+?{}])|([|()+?{}])",
                       lambda m: m.group(1) if m.group(1) else "\\" + m.group(2), pattern)
    if "w" in flags:
        regex = rf"\b(?:{regex})\b"
    try:
        compiled = re.compile(regex.encode("utf-8", "surrogateescape"), re.IGNORECASE if "i" in flags else 0)
    except re.error as exc:
        return ctx.fail(f"bad regex '{pattern}': {exc}", 2)
    lines, status = _input_lines(ctx, files)
    matched = 0
    for number, line in enumerate(lines, 1):
        hit = compiled.search(line)
        if bool(hit) == ("v" in flags):
            continue
        matched += 1
        if "q" in flags or "c" in flags or "l" in flags:
            continue
        prefix = f"{number}:".encode() if "n" in flags else b""
        if "o" in flags and hit:
            for m in compiled.finditer(line):
                ctx.out(prefix + m.group(0) + b"\n")
        else:
            ctx.out(prefix + line + (b"" if line.endswith(b"\n") else b"\n"))
    if "c" in flags:
        ctx.out(f"{matched}\n")
    if "l" in flags and matched:
        ctx.out("(standard input)\n" if not files else "\n".join(files) + "\n")
    if status:
        return status
    return 0 if matched else 1


def _head_tail(ctx: Ctx) -> int:
    args = list(ctx.args)
    count = 10
    files: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "-n" and args:
            value = args.pop(0)
        elif arg.startswith("-n"):
            value = arg[2:]
        elif re.fullmatch(r"-\d+", arg):
            value = arg[1:]
        else:
            files.append(arg)
            continue
        try:
            count = int(value.lstrip("+"))
        except ValueError:
            return ctx.fail(f"Invalid number '{value}'")
    lines, status = _input_lines(ctx, files)
    chosen = lines[:count] if ctx.name == "head" else (lines[-count:] if count else [])
    ctx.out(b"".join(chosen))
    return 1 if status else 0


def _wc(ctx: Ctx) -> int:
    parsed = _split_flags(ctx.args, "lwc")
    if isinstance(parsed, str):
        return ctx.fail(f"Unknown option '{parsed}'")
    flags, files = parsed
    lines, status = _input_lines(ctx, files)
    data = b"".join(lines)
    counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
    shown = [str(counts[f]) for f in "lwc" if f in flags] or [str(counts[f]) for f in "lwc"]
    ctx.out(" ".join(shown) + "\n")
    return 1 if status else 0


def _id(ctx: Ctx) -> int:
    ctx.out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),"
            "1015(sdcard_rw),1028(sdcard_r),3003(inet) context=u:r:shell:s0\n")
    return 0


def _whoami(ctx: Ctx) -> int:
    ctx.out("shell\n")
    return 0


def _which(ctx: Ctx) -> int:
    status = 0
    for arg in ctx.args:
        if arg in ctx.shell.commands:
            ctx.out(f"/system/bin/{arg}\n")
        else:
            status = 1
    return status


def _toybox(ctx: Ctx) -> int:
    if not ctx.args:
        ctx.out(" ".join(sorted(n for n in ctx.shell.commands if n in TOYBOX)) + "\n")
        return 0
    fn = ctx.shell.commands.get(ctx.args[0]) if ctx.args[0] in TOYBOX else None
    if fn is None:
        return ctx.fail(f"Unknown command {ctx.args[0]}")
    return fn(Ctx(ctx.args, ctx.env, ctx.stdout, ctx.stderr, ctx.shell, ctx.stdin_source))


TOYBOX = {"cat", "rm", "ls", "mkdir", "touch", "md5sum", "grep", "head", "tail", "wc", "id", "whoami",
          "which", "sleep", "echo", "true", "false", "pwd"}

GENERIC_COMMANDS: dict[str, CommandFn] = {
    "echo": _echo,
    "true": lambda ctx: 0,
    "false": lambda ctx: 1,
    ":": lambda ctx: 0,
    "exit": _exit,
    "cd": _cd,
    "pwd": _pwd,
    "export": _export,
    "unset": _unset,
    "sleep": _sleep,
    "cat": _cat,
    "rm": _rm,
    "mkdir": _mkdir,
    "touch": _touch,
    "ls": _ls,
    "md5sum": _md5sum,
    "grep": _grep,
    "head": _head_tail,
    "tail": _head_tail,
    "wc": _wc,
    "id": _id,
    "whoami": _whoami,
    "which": _which,
    "toybox": _toybox,
}
