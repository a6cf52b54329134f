"""Secrets: values a script may type but never see, print or leak.

``secret("PASSWORD")`` in a script returns a ``Secret``: a value of its own type whose text is
always ``*****`` (``print``, ``str``, f-strings, ``repr``, the REPL's echo, a run's variables).
The only thing that uses the real value is typing it: ``$login__password.set_text(pw)`` (a
password field; other fields need ``--allow secrets``). Every other operation on it is refused
(``+``, ``%``, ``len``, indexing, comparisons with text, methods): the interpreter knows no
operation on the type, so the value cannot be taken apart, measured or compared to guess it.

Where the value comes from (``SecretStore``), in order:

1. a file the person names (``tapir run --secrets FILE``): dotenv lines ``NAME=value``
   (``export NAME=value``, quotes, ``#`` comments); never echoed, even in its errors;
2. the environment: ``TAPIR_SECRET_<NAME>`` (only that prefix: a script cannot read the host's
   other variables, such as cloud credentials, by naming them).

    store = SecretStore.from_file(Path(".secrets"))      # UsageError naming file:line, no value
    pw = store.get("PASSWORD", span)                     # Secret; str(pw) == '*****'
    store.redactor.mask("typed hunter2")                 # 'typed *****' once the value was read

Every value handed out is added to the store's ``Redactor``, which the device runtime's trace,
its errors and its reads pass through (``tapir.runtime.trace.MaskedTrace``): a value that shows
up in plain text anywhere the run writes (a field that echoes it, a device error quoting the
typed command) is replaced by ``*****``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tapir.core.errors import ScriptError, Span, UsageError

__all__ = ["ENV_PREFIX", "MASK", "SECRET_NAME", "Redactor", "Secret", "SecretStore", "parse_dotenv"]

#: What a secret shows wherever it is printed.
MASK = "*****"
#: The environment variable of secret NAME is ENV_PREFIX + NAME.
ENV_PREFIX = "TAPIR_SECRET_"
#: Beginnings of a secret this long or longer are masked too (a message that cuts a long text).
PREFIX = 8
#: A secret's name: letters, digits and '_', not starting with a digit (as an environment variable).
SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Secret:
    """A secret value (see the module docstring): its text is ``*****``; ``reveal()`` is for the
    device runtime typing it, and nothing a script can call reaches it."""

    __slots__ = ("name", "_value")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self._value = value

    def reveal(self) -> str:
        """The value itself (the runtime types it; nothing else should ask)."""
        return self._value

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return MASK

    def __reduce__(self) -> Any:
        # a secret is not written to disk or sent to another process by pickling it by accident
        raise TypeError("a secret cannot be pickled")


class Redactor:
    """Replaces known secret values in text with ``*****``.

    Every non-empty value is masked wherever it occurs, however short: a short secret makes the
    text it masks harder to read, never leaks."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for v in values:
            self.add(v)

    def add(self, value: str) -> None:
        """Mask ``value`` from now on, and the forms a message may quote it in: escaped as ``repr``
        and XML escape it, and cut short (device errors quote typed text cut to 40 characters, ``:tree``
        to 37): every beginning of it of ``PREFIX`` characters or more is masked too."""
        cuts = {value[:n] for n in range(PREFIX, len(value))}
        forms = {value, *cuts, repr(value)[1:-1], *(repr(c)[1:-1] for c in cuts)}
        # as a hierarchy dump escapes it (a field showing it, saved with a failure's artifacts)
        forms |= {f.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
                  for f in (value, *cuts)}
        new = {f for f in forms if f and f not in self._values}
        if new:
            self._values |= new
            ordered = sorted(self._values, key=len, reverse=True)  # a longer value first: no half-masked rest
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def __bool__(self) -> bool:
        return bool(self._values)

    def mask(self, text: str) -> str:
        """``text`` with every known value replaced by ``*****``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def mask_value(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, tuples, strings) with every ``Secret`` replaced by
        ``*****`` and every string masked; other values as they are. Returns ``value`` itself when
        nothing had to change."""
        if isinstance(value, Secret):
            return MASK
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            out = {k: self.mask_value(v) for k, v in value.items()}
            return value if all(out[k] is value[k] for k in value) else out
        if isinstance(value, list | tuple):
            items = [self.mask_value(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return type(value)(items) if isinstance(value, tuple) else items
        return value


def parse_dotenv(text: str, where: str) -> dict[str, str]:
    """``NAME=value`` lines (``export NAME=value``, single or double quotes, ``#`` comments and
    blank lines); a malformed line is a ``UsageError`` naming ``where:line`` and never its text."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not SECRET_NAME.fullmatch(name):
            raise UsageError(f"{where}:{number}: expected NAME=value (a name of letters, digits and '_'); "
                             "the line is not shown, it may hold a secret")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            quote, value = value[0], value[1:-1]
            if quote == '"':  # as dotenv tools read it: escapes in double quotes, none in single
                value = value.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()  # an unquoted value ends at a comment
        if name in values:
            raise UsageError(f"{where}:{number}: {name} is given twice")
        values[name] = value
    return values


class SecretStore:
    """Where a run's secrets come from (see the module docstring)."""

    def __init__(self, values: Mapping[str, str] | None = None, *, source: str | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})
        #: The file the values came from (named in errors), if any.
        self.source = source
        self._environ = environ
        #: Every value handed out so far (the runtime's trace and errors pass through it).
        self.redactor = Redactor()

    @classmethod
    def from_file(cls, path: str | Path | None, *, environ: Mapping[str, str] | None = None) -> SecretStore:
        """The store of ``--secrets FILE`` (None: the environment only); ``UsageError`` when the
        file cannot be read or a line is malformed."""
        if path is None:
            return cls(environ=environ)
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
            raise UsageError(f"cannot read {p}: {why}", setting="secrets") from None
        return cls(parse_dotenv(text, str(p)), source=str(p), environ=environ)

    def names(self) -> list[str]:
        """The names the file gives (the environment's are not listed)."""
        return sorted(self._values)

    def lookup(self, name: str) -> str | None:
        """The value of ``name``, or None (no redaction side effect; for tests and tools)."""
        if name in self._values:
            return self._values[name]
        env = self._environ if self._environ is not None else os.environ
        return env.get(ENV_PREFIX + name)

    def get(self, name: str, span: Span | None = None) -> Secret:
        """The secret ``name``; a ``ScriptError`` that says where it is looked for when it is not
        set. The value joins the redactor."""
        if not SECRET_NAME.fullmatch(name):
            raise ScriptError(f"secret() needs a name of letters, digits and '_' (as an environment variable), "
                              f"not {name!r}", span)
        value = self.lookup(name)
        if value is None:
            where = f"not in {self.source}, and no" if self.source else "no"
            raise ScriptError(
                f"the secret {name!r} is not set: {where} environment variable {ENV_PREFIX}{name}", span,
                hint=f"export {ENV_PREFIX}{name}=... before the run, or put {name}=... in a file named with "
                     "--secrets FILE",
            )
        self.redactor.add(value)
        return Secret(name, value)
