"""What a run is allowed to do: the permissions its guards read (``docs/safety.md``).

A script, often written by a model, acts on a person's phone. The device runtime's guards
(``tapir.runtime.guards``) stop it where it would do more than it was allowed to: tap something
sensitive (delete, send, pay; a payment, permission or warning dialog), work in another app than
its own, or type a secret where the phone would show it. ``Safety`` is what they read, shared by
the front end, the interpreter (``allow()``, ``secret()``) and the runtime:

    safety = Safety.from_options(allow=["delete"], allow_apps=["com.android.chrome"],
                                 secrets_file=".secrets", foreign_app="return")
    inputs = ScriptInputs.from_options(["user=ada"], safety=safety)       # the interpreter's
    Connection(device="sim:notes", document=doc, safety=safety)            # the runtime's

Permissions are *tokens*, granted by the command line (``--allow TOKEN``), ``tapir.toml``
(``[safety] allow = [...]``), a first-line comment of the script (``# allow: delete``) or the
script itself (``allow("delete")``):

* ``sensitive``: every sensitive action;
* a word of the guards' lexicon that made an action sensitive (``delete``, ``send``, ``call``,
  ``payment``, ``permission``, ``warning``...): the actions it names;
* an element, ``$screen__element`` (the ``$`` may be left out): actions on that element;
* ``secrets``: typing a ``secret()`` into a field that is not a password field.

A script from an untrusted source (``tapir gen --run``: ``trust_script=False``) cannot grant
itself anything: its ``allow()`` calls fail and its ``# allow:`` lines are ignored.

The two API functions, ``secret(name)`` and ``allow(what)``, are implemented here
(``secret_impl``, ``allow_impl``) and registered with the rest of the API in ``tapir.dsl.api``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tapir.core.errors import SafetyError, ScriptError, Span, UsageError
from tapir.core.secrets import SecretStore

__all__ = [
    "ALLOW_ALL", "ALLOW_SECRETS", "FOREIGN_APP_POLICIES", "Confirm", "Safety", "SafetyOptions", "header_allowances",
    "normalize_token",
]

#: The token that allows every sensitive action.
ALLOW_ALL = "sensitive"
#: The token that allows secrets in fields that are not password fields.
ALLOW_SECRETS = "secrets"
#: What a run does when another app comes to the front: go back to its app, or stop.
FOREIGN_APP_POLICIES = ("return", "stop")

#: Asks the person a yes/no question and returns the answer.
Confirm = Callable[[str], bool]

_TOKEN = re.compile(r"[\w][\w .'-]*", re.UNICODE)
_HEADER = re.compile(r"#\s*allow\s*:(.*)", re.IGNORECASE)


def normalize_token(raw: str) -> str:
    """A permission token in its one form: an element without ``$``, a word lower case with
    single spaces; ``ValueError`` (in words) for one that is neither."""
    text = " ".join(raw.strip().split())
    if text.startswith("$"):
        text = text[1:]
    if not text or not _TOKEN.fullmatch(text):
        raise ValueError(f"{raw!r} is not something to allow: give 'sensitive', a word such as 'delete', an "
                         "element such as $screen__element, or 'secrets'")
    return text if "__" in text else text.casefold()


def header_allowances(source: str) -> list[tuple[str, int]]:
    """The tokens of ``# allow: a, b`` comment lines before the script's first statement (a
    docstring counts as a statement), with their line numbers."""
    out: list[tuple[str, int]] = []
    for number, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        m = _HEADER.fullmatch(stripped)
        if m is not None:
            out.extend((t.strip(), number) for t in m.group(1).split(",") if t.strip())
    return out


@dataclass
class Safety:
    """The permissions and settings of one run (see the module docstring). Mutable: the script's
    ``allow()`` adds to it while the run goes on."""

    #: Granted tokens, each with where it was granted (shown when it lets an action through).
    allowed: dict[str, str] = field(default_factory=dict)
    #: Packages besides the document's app the run may be in (``--allow-app``, ``tapir.toml``).
    apps: tuple[str, ...] = ()
    #: ``return`` (BACK, then relaunch the app) or ``stop`` when another app comes to the front.
    foreign_app: str = "return"
    #: Asks the person before a sensitive action (the REPL); None: refuse without asking.
    confirm: Confirm | None = None
    #: False for model output: the script's own ``allow()`` and ``# allow:`` lines are refused.
    trust_script: bool = True
    secrets: SecretStore = field(default_factory=SecretStore)
    #: Header lines a script could not use because it is not trusted (named in refusals).
    ignored_header: list[str] = field(default_factory=list)

    @classmethod
    def from_options(cls, *, allow: Iterable[str] | None = None, allow_apps: Iterable[str] | None = None,
                     foreign_app: str | None = None, secrets_file: str | None = None,
                     confirm: Confirm | None = None, trust_script: bool = True,
                     project: Any = None, origin: str = "--allow") -> Safety:
        """A run's safety from command-line options (``UsageError`` for a malformed one), on top
        of the project's ``[safety]`` settings (``project``: a ``tapir.service.config.SafetyConfig``)."""
        safety = cls(confirm=confirm, trust_script=trust_script, secrets=SecretStore.from_file(secrets_file))
        apps: list[str] = []
        if project is not None:
            for token in project.allow:
                safety.grant(token, "tapir.toml")
            apps += list(project.allow_apps)
            safety.foreign_app = project.foreign_app
        for token in allow or ():
            safety.grant(token, f"{origin} {token.strip()}")
        for pkg in allow_apps or ():
            pkg = pkg.strip()
            if not re.fullmatch(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+", pkg):
                raise UsageError(f"{pkg!r} is not an Android package name (such as com.android.chrome)",
                                 setting="allow_apps")
            apps.append(pkg)
        safety.apps = tuple(dict.fromkeys(apps))
        if foreign_app is not None:
            if foreign_app not in FOREIGN_APP_POLICIES:
                raise UsageError(f"must be one of {', '.join(FOREIGN_APP_POLICIES)}, not {foreign_app!r}",
                             setting="foreign_app")
            safety.foreign_app = foreign_app
        return safety

    def grant(self, raw: str, origin: str) -> str:
        """Allow ``raw`` (a token, see the module docstring) from now on; ``UsageError`` when it
        is malformed. Returns the token's normal form."""
        try:
            token = normalize_token(raw)
        except ValueError as exc:
            raise UsageError(f"{origin}: {exc}") from None
        self.allowed.setdefault(token, origin)
        return token

    def grant_from_script(self, raw: str, origin: str, span: Span | None) -> str:
        """The script's ``allow()``: refused for an untrusted script, ``ScriptError`` when malformed."""
        if not self.trust_script:
            raise SafetyError(
                f"allow({raw!r}) is refused: this script comes from a model, and a generated script cannot give "
                "itself permissions", span,
                hint=f"if the task needs it, pass --allow {normalize_safely(raw)} to the command that runs the script",
            )
        try:
            token = normalize_token(raw)
        except ValueError as exc:
            raise ScriptError(f"allow(): {exc}", span) from None
        self.allowed.setdefault(token, origin)
        return token

    def apply_header(self, source: str | None) -> None:
        """Grant the tokens of the script's ``# allow:`` lines (ignored, and remembered for the
        refusals' hints, when the script is not trusted). A malformed token is a ``UsageError``."""
        if not source:
            return
        for raw, line in header_allowances(source):
            if not self.trust_script:
                self.ignored_header.append(f"# allow: {raw} (line {line})")
                continue
            try:
                token = normalize_token(raw)
            except ValueError as exc:
                raise UsageError(f"the script's `# allow:` line {line}: {exc}") from None
            self.allowed.setdefault(token, f"# allow: {raw} (line {line})")

    def allowed_by(self, tokens: Iterable[str]) -> str | None:
        """Where the first of ``tokens`` (or ``sensitive``) was granted, or None: not allowed."""
        for token in (*tokens, ALLOW_ALL):
            origin = self.allowed.get(token)
            if origin is not None:
                return origin
        return None


@dataclass(frozen=True)
class SafetyOptions:
    """The safety flags of a command that runs many scripts (``tapir test``, the pytest plugin),
    kept as data: each run makes its own ``Safety`` from them (``safety``), so that one script's
    ``allow()`` or ``# allow:`` line never reaches the next."""

    allow: tuple[str, ...] = ()
    allow_apps: tuple[str, ...] = ()
    foreign_app: str | None = None
    secrets_file: str | None = None

    def safety(self, project: Any = None) -> Safety:
        """A fresh ``Safety`` on top of the project's ``[safety]`` (``UsageError`` when malformed)."""
        return Safety.from_options(allow=self.allow, allow_apps=self.allow_apps, foreign_app=self.foreign_app,
                                   secrets_file=self.secrets_file, project=project)


def normalize_safely(raw: str) -> str:
    try:
        return normalize_token(raw)
    except ValueError:
        return ALLOW_ALL
