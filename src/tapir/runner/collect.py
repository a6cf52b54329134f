"""Which scripts a test run runs: paths and globs, header tags, ``--include/--exclude``, shards.

    found = collect(["flows/", "smoke/*.tap"])             # sorted, generated/ folders skipped
    chosen = select(found, include=["smoke"], exclude=["slow"], shard=(0, 4))
    chosen.scripts, chosen.deselected, chosen.other_shards

A script's header is the comment lines it starts with (blank lines allowed, up to the first line
of code); two of them are read here::

    # doc: music.yaml
    # tags: smoke, music
    # skip: the sort dialog is being redesigned (issue 42)

Tags are words separated by commas or spaces, compared without case; ``--include``/``--exclude``
take shell patterns (``music*``). A script runs when it has a tag that an include names (or no
include is given) and no tag that an exclude names. ``# skip:`` reports the script as skipped
with the reason, without running it.

Sharding splits what remains after the tag filter: shard ``i`` of ``n`` (counted from 0, as
CircleCI's ``CIRCLE_NODE_INDEX``) takes every n-th script of the sorted list starting at the
i-th, so shards differ in size by at most one and together run every script once.
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tapir.core.errors import UsageError

__all__ = ["Header", "Selection", "collect", "read_header", "select"]

_HEADER_KEY = re.compile(r"#\s*(tags|skip)\s*:(.*)$", re.IGNORECASE)
_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Header:
    """What a script's leading comments say to the runner."""

    tags: tuple[str, ...] = ()
    #: Why the script is skipped (``# skip: ...``); None when it runs.
    skip: str | None = None


def read_header(source: str) -> Header:
    """The ``# tags:`` and ``# skip:`` lines of ``source``'s leading comment block."""
    tags: list[str] = []
    skip: str | None = None
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        m = _HEADER_KEY.match(stripped)
        if m is None:
            continue
        if m.group(1).lower() == "tags":
            tags += [t.lower() for t in re.split(r"[,\s]+", m.group(2)) if t]
        else:
            skip = m.group(2).strip() or "skipped by its header"
    return Header(tuple(dict.fromkeys(tags)), skip)


def is_flow(path: Path) -> bool:
    """A script other scripts run (``run_flow``), not a test: its name, or a folder's it is in,
    starts with ``_`` (``_login.tap``, ``_flows/login.tap``). Named alone, it is collected."""
    return any(part.startswith("_") for part in path.parts)


def collect(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.tap`` files named, found under the folders named, or matching the globs named
    (``flows/**/*_smoke.tap``), in the order given, each folder's sorted; ``generated/`` folders
    and flows (``_login.tap``, ``_flows/``: scripts that ``run_flow`` runs) are skipped. Raises
    ``UsageError`` for a path that names nothing or no script at all."""
    paths = list(paths)
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(p for p in sorted(path.rglob("*.tap")) if "generated" not in p.parts
                       and not is_flow(p.relative_to(path)))
        elif path.is_file():
            if path.suffix != ".tap":
                raise UsageError(f"not a test script (*.tap): {raw}")
            out.append(path)
        elif _GLOB_CHARS.search(str(raw)):
            matched = sorted(Path(m) for m in globlib.glob(str(raw), recursive=True))
            scripts = [p for p in matched if p.is_file() and p.suffix == ".tap" and "generated" not in p.parts
                       and not is_flow(Path(p.parent.name, p.name))]
            if not scripts:
                raise UsageError(f"no test scripts (*.tap) match {raw}")
            out.extend(scripts)
        else:
            raise UsageError(f"no such file or folder: {raw}")
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    if not unique:
        raise UsageError("no test scripts (*.tap) found in " + ", ".join(str(p) for p in paths))
    return unique


@dataclass
class Selection:
    """The scripts a run takes, with their headers, and what it leaves out."""

    scripts: list[Path] = field(default_factory=list)
    headers: dict[Path, Header] = field(default_factory=dict)
    #: Left out by the tag filter.
    deselected: list[Path] = field(default_factory=list)
    #: Selected, but run by another shard.
    other_shards: list[Path] = field(default_factory=list)


def _matches(tags: Sequence[str], patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(tag, pattern.lower()) for tag in tags for pattern in patterns)


def split_tags(values: Iterable[str]) -> list[str]:
    """``--include smoke,music --include slow`` -> ['smoke', 'music', 'slow']."""
    return [t for v in values for t in re.split(r"[,\s]+", v.strip()) if t]


def select(
    scripts: Sequence[Path],
    *,
    headers: dict[Path, Header],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    shard: tuple[int, int] | None = None,
) -> Selection:
    """Apply the tag filter, then the shard (see the module docstring)."""
    out = Selection(headers=headers)
    kept: list[Path] = []
    for script in scripts:
        tags = headers[script].tags if script in headers else ()
        if (include and not _matches(tags, include)) or (exclude and _matches(tags, exclude)):
            out.deselected.append(script)
        else:
            kept.append(script)
    if shard is not None:
        index, total = shard
        if total < 1:
            raise UsageError("must be at least 1", setting="shard_total")
        if not 0 <= index < total:
            raise UsageError(f"must be from 0 to {total - 1} for {total} shards in all, not {index}",
                             setting="shard_index",
                             hint="shards are counted from 0, as CircleCI's CIRCLE_NODE_INDEX"
                                  " (GitLab's CI_NODE_INDEX counts from 1: pass $((CI_NODE_INDEX - 1)))")
        out.scripts = kept[index::total]
        out.other_shards = [p for i, p in enumerate(kept) if i % total != index]
    else:
        out.scripts = kept
    return out
