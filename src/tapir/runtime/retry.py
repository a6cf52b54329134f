"""Bounded retries for device commands.

Devices fail in two ways. Some failures pass on their own: ``uiautomator dump`` answers
``ERROR: could not get idle state.`` while an animation runs, the accessibility bridge
briefly has no root node, a USB or TCP link drops a connection. Those are retried a few
times with growing pauses. Anything else, or a transient failure that outlasts the policy,
becomes one ``DeviceError`` naming the device and the command.

A command that changes the screen (a tap, typed text) must not run twice, so when it is not
idempotent only failures that happened *before* the command reached the device are retried.
"""

from __future__ import annotations

import errno
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from tapir.core.errors import DeviceError

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying: the device said something that passes (idle state, no root)."""


class NotSent(Exception):
    """The command never reached the device (connecting or opening the service failed).

    ``__cause__`` holds the underlying error; retrying cannot repeat the command's effect.
    """

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.__cause__ = cause


class AdbServerError(Exception):
    """The adb server answered ``FAIL`` with this message (``device offline``, ``device 'x' not
    found``...); classified by its text, like adbutils' ``AdbError``."""


class FailureKind(Enum):
    #: safe to retry any command
    NOT_SENT = "not-sent"
    #: may pass if retried; the command may or may not have run
    TRANSIENT = "transient"
    #: retrying will not help
    FATAL = "fatal"


# Text of adb server/adbd errors that clear up when the link comes back.
_TRANSIENT_TEXT = ("offline", "connection reset", "connection closed", "closed", "timeout", "timed out",
                   "broken pipe", "eof")
# Text that means "stop now": no such device, not authorised, no adb at all.
_FATAL_TEXT = ("not found", "unauthorized", "no adb exe", "no devices", "permission denied")


def _adb_error_types() -> tuple[type[BaseException], ...]:
    # Only an adbutils that is already loaded can have raised its errors; importing it here would
    # cost ~80 ms (it pulls in requests and PIL) on the first failure of a run that never used it.
    errors = sys.modules.get("adbutils.errors")
    error = getattr(errors, "AdbError", None)
    return (error,) if isinstance(error, type) and issubclass(error, BaseException) else ()


def classify(exc: BaseException) -> FailureKind:
    """How to treat a failure: retry it whatever the command, retry only idempotent ones, or give up."""
    if isinstance(exc, NotSent):
        cause = exc.__cause__
        if cause is not None and classify(cause) is FailureKind.FATAL:
            return FailureKind.FATAL
        return FailureKind.NOT_SENT
    if isinstance(exc, TransientError):
        return FailureKind.TRANSIENT
    if isinstance(exc, (ConnectionError, TimeoutError, EOFError)):  # socket.timeout is TimeoutError
        return FailureKind.TRANSIENT
    if isinstance(exc, OSError) and exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT,
                                                   errno.ECONNABORTED):
        return FailureKind.TRANSIENT
    if isinstance(exc, (AdbServerError, *_adb_error_types())):
        text = str(exc).lower()
        if any(t in text for t in _FATAL_TEXT):
            return FailureKind.FATAL
        if type(exc).__name__ in ("AdbTimeout", "AdbConnectionError") or any(t in text for t in _TRANSIENT_TEXT):
            return FailureKind.TRANSIENT
    return FailureKind.FATAL


@dataclass(frozen=True)
class RetryPolicy:
    """Pauses between attempts; ``len(delays) + 1`` attempts in all.

    The default waits 0.2 s, 0.5 s and 1 s (four attempts, 1.7 s of waiting at most): long
    enough for an animation to settle, short enough that a dead device is reported quickly.
    """

    delays: tuple[float, ...] = (0.2, 0.5, 1.0)

    @property
    def attempts(self) -> int:
        return len(self.delays) + 1

    @classmethod
    def none(cls) -> RetryPolicy:
        """Fail on the first error (useful in tests and for probing)."""
        return cls(())


DEFAULT_RETRY = RetryPolicy()


def call_with_retry(
    fn: Callable[[], T],
    *,
    serial: str,
    command: str,
    policy: RetryPolicy = DEFAULT_RETRY,
    idempotent: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``fn`` under ``policy``; a persistent or fatal failure becomes one ``DeviceError``."""
    last: BaseException | None = None
    attempt = 0
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except DeviceError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified, none escapes raw
            last = exc
            kind = classify(exc)
            retry = kind is FailureKind.NOT_SENT or (kind is FailureKind.TRANSIENT and idempotent)
            if not retry or attempt == policy.attempts:
                break
            sleep(policy.delays[attempt - 1])
    assert last is not None
    reason = _describe(last)
    tries = f" after {attempt} attempts" if attempt > 1 else ""
    raise DeviceError(
        f"device {serial}: `{command}` failed{tries}: {reason}",
        hint=_hint(last),
    ) from last


def _describe(exc: BaseException) -> str:
    if isinstance(exc, NotSent) and exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if len(text) < 300 else text[:300] + "..."


def _hint(exc: BaseException) -> str | None:
    text = str(exc.__cause__ if isinstance(exc, NotSent) and exc.__cause__ else exc).lower()
    if "unauthorized" in text:
        return "accept the 'Allow USB debugging' prompt on the phone, then try again"
    if "not found" in text:
        return "check the serial with `adb devices`; the device may have been unplugged"
    if "offline" in text:
        return "the device is offline: reconnect it (or `adb reconnect`) and try again"
    if "idle state" in text:
        return "the screen never settled (an endless animation?); disable animations in developer options"
    if "connect to adb server" in text or "connection refused" in text:
        return "is the adb server running? `adb start-server`"
    return None
