"""Parse every synthetic upstream script and print a JSON summary.

    python bench/parse_corpus.py [--upstream ../shared/upstream] [--show REASON-SUBSTRING]

Prints {total, parsed, rejected, by_reason, seconds}: `by_reason` counts rejections by message
(with numbers and quoted names blanked so similar messages group). `--show` also prints the
rendered errors whose message contains the given text, to read rejections by eye.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

from tapir.core.errors import TapirSyntaxError
from tapir.dsl.parser import parse

DEFAULT_UPSTREAM = Path(__file__).resolve().parent.parent.parent / "shared" / "upstream"


def load_solutions(upstream: Path) -> list[tuple[str, str]]:
    """(name, script) for every `solution` in synthetic/*.jsonl; name is file:line."""
    out = []
    for path in sorted((upstream / "synthetic").glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append((f"{path.name}:{i}", json.loads(line)["solution"]))
    return out


def reason(message: str) -> str:
    """A rejection message with its specifics blanked, so that similar ones count together."""
    message = re.sub(r"\d+:\d+", "L:C", message)
    message = re.sub(r"(found|after) (name|number|string|element) .*", r"\1 \2", message)
    return re.sub(r"line \d+", "line N", message)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", type=Path, default=DEFAULT_UPSTREAM)
    ap.add_argument("--show", default=None, help="print rejections whose message contains this text")
    args = ap.parse_args(argv)
    scripts = load_solutions(args.upstream)
    if not scripts:
        print(f"no synthetic scripts under {args.upstream}", file=sys.stderr)
        return 1
    parse("x = 1\n")  # load the grammar outside the timed loop
    by_reason: Counter[str] = Counter()
    shown = []
    start = time.perf_counter()
    for name, source in scripts:
        try:
            parse(source, name)
        except TapirSyntaxError as exc:
            by_reason[f"{exc.category}: {reason(exc.message)}"] += 1
            if args.show is not None and args.show in exc.message:
                shown.append(exc.render())
    seconds = time.perf_counter() - start
    rejected = sum(by_reason.values())
    for text in shown:
        print(text, file=sys.stderr)
        print(file=sys.stderr)
    print(json.dumps({
        "total": len(scripts),
        "parsed": len(scripts) - rejected,
        "rejected": rejected,
        "by_reason": dict(by_reason.most_common()),
        "seconds": round(seconds, 3),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
