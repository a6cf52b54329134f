"""Precision and recall of the sensitive-action guard on real apps; prints JSON (``docs/safety.md``).

    python bench/guards_precision.py [--labels tests/data/guard_labels.json]
                                     [--upstream ../shared/upstream] [--apps notes,dialer] [--all-errors]

``tests/data/guard_labels.json`` names views of the 11 DroidTask recordings
(``<upstream>/droidtask/apps/<app>/states/<state>``, the view by ``temp_id``, checked against its
resource id and label) and says, by a person's judgment of what tapping it does, whether the tap is
sensitive (deleting, paying, sending, calling, granting a permission...) or not. Each view is put
to ``SensitiveGate.reason`` as the runtime would on that dump (no app document, ``element=None``,
``item=False``). Printed: per app and overall, the counts (true/false positives and negatives),
precision and recall, the information dialogs refused (a dialog whose only answer is this button
must never be), and the misclassified views with the label's reason and the gate's. A view that
cannot be found any more (a recording changed) is listed under ``missing`` and left out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "tests" / "data" / "guard_labels.json"
UPSTREAM = Path(os.environ.get("TAPIR_UPSTREAM") or REPO.parent / "shared" / "upstream")


def _scores(c: dict[str, int]) -> dict[str, Any]:
    tp, fp, fn = c["tp"], c["fp"], c["fn"]
    return {**c, "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None}


def evaluate(labels_path: Path = LABELS, upstream: Path = UPSTREAM, apps: set[str] | None = None,
             all_errors: bool = True) -> dict[str, Any]:
    """Runs the gate on every labelled view; the report ``main`` prints."""
    from tapir.core.safety import Safety
    from tapir.docgen.loader import load_document
    from tapir.hierarchy import load_tree
    from tapir.runtime.guards.sensitive import SensitiveGate
    from tapir.runtime.session_model import action_label
    from tapir.runtime.settle import Observation

    labels = json.loads(labels_path.read_text(encoding="utf-8"))["labels"]
    # obs.screen is None: the document is never consulted (any one will do)
    document = load_document(REPO / "samples" / "notes" / "notes.yaml")
    gate = SensitiveGate(document, Safety(), lambda r: None, lambda: 0.0)
    trees: dict[Path, Any] = {}
    per_app: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
    wrong: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    info_refused: list[dict[str, Any]] = []
    for lab in labels:
        if apps and lab["app"] not in apps:
            continue
        path = upstream / "droidtask" / "apps" / lab["app"] / "states" / lab["state"]
        if path not in trees:
            trees[path] = load_tree(path) if path.is_file() else None
        tree = trees[path]
        node = tree.nodes[lab["temp_id"]] if tree is not None and lab["temp_id"] < len(tree.nodes) else None
        rid = node.resource_id.rsplit("/", 1)[-1] if node is not None and node.resource_id else ""
        if node is None or rid != lab["resource_id"] or action_label(tree, node).strip()[:40] != lab["text"]:
            missing.append({k: lab[k] for k in ("app", "state", "temp_id", "resource_id", "text")})
            continue
        obs = Observation(tree, None, "labelled", tree.package, 1)
        reason = gate.reason(node, obs, element=None, item=False)
        said = reason is not None
        key = ("t" if said == lab["sensitive"] else "f") + ("p" if said else "n")
        per_app[lab["app"]][key] += 1
        view = {"app": lab["app"], "state": lab["state"], "temp_id": lab["temp_id"], "resource_id": lab["resource_id"],
                "text": lab["text"], "labelled": "sensitive" if lab["sensitive"] else "not sensitive",
                "label_reason": lab["reason"], "gate": reason.why if reason else None}
        if said != lab["sensitive"]:
            wrong.append(view)
        if said and lab.get("dialog") == "information":
            info_refused.append(view)
    total = {k: sum(c[k] for c in per_app.values()) for k in ("tp", "fp", "fn", "tn")}
    return {
        "labels": str(labels_path.relative_to(REPO)) if labels_path.is_relative_to(REPO) else str(labels_path),
        "views": sum(total.values()),
        "sensitive": total["tp"] + total["fn"],
        "overall": _scores(total),
        "per_app": {app: _scores(per_app[app]) for app in sorted(per_app)},
        "information_dialogs_refused": info_refused,
        "misclassified": wrong if all_errors else wrong[:20],
        "missing": missing,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--upstream", type=Path, default=UPSTREAM)
    ap.add_argument("--apps", default="", help="comma-separated apps (default: all labelled)")
    ap.add_argument("--all-errors", action="store_true", help="list every misclassified view (default: 20)")
    args = ap.parse_args(argv)
    if not (args.upstream / "droidtask" / "apps").is_dir():
        print(f"no recordings under {args.upstream}/droidtask/apps", file=sys.stderr)
        return 2
    apps = {a.strip() for a in args.apps.split(",") if a.strip()} or None
    print(json.dumps(evaluate(args.labels.resolve(), args.upstream, apps, args.all_errors), indent=2,
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
