"""``tapir synth``: validated (task, script) training pairs from app documents, as chat-format JSONL."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tapir.cli.common import Subparsers, signals_ignored, stop_signals, stopped_name, stopped_status
from tapir.core.errors import UsageError

#: The sample apps ``--samples`` takes: ``samples/<app>/<app>.yaml`` on ``sim:<app>``.
SAMPLE_APPS = ("music", "clock", "contacts", "notes", "weather")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "synth",
        help="synthesise validated task/script pairs for fine-tuning (chat-format JSONL and a data card)",
        description=(
            "Sample walks of the app document's transition graph (1 to --max-complexity actions), turn\n"
            "each into a task text (templates; --model rephrases them) and a Tapir script, run the script\n"
            "on a fresh simulated app, repair what fails (depth-first, within --repair-budget), and keep\n"
            "only pairs that run and whose effect shows in the app's final state. Duplicates (same script\n"
            "or same task text) are dropped. Writes OUT (JSONL: system, user = the runtime prompt of\n"
            "`tapir gen` + the task, assistant = the answer) and the data card OUT.card.json/.card.md\n"
            "(pairs per app and complexity, rejections per reason, duplicates, seed). docs/synth.md has\n"
            "the format and a recipe to fine-tune a small model on the file.\n\n"
            "On a replayed DroidBot recording (--droidtask FOLDER, or --device sim:DIR) a pair is kept when\n"
            "the recording follows every tap and typed text of its run and the run ends on another recorded\n"
            "screen; walks it cannot follow are rejected as not-recorded. A DroidTask suite's own task\n"
            "texts (and near-copies) are never made into pairs.\n\n"
            "Each pair is appended to OUT as soon as it is kept (whole lines only), so a run stopped by\n"
            "Ctrl-C or SIGTERM keeps its pairs: it writes the data card (marked interrupted) and exits\n"
            "with 130 (143 for SIGTERM); --resume continues it.\n\n"
            "  tapir synth --doc samples/music/music.yaml --device sim:music -o music.jsonl --count 100\n"
            "  tapir synth --samples -o data/synth.jsonl --count 400 --seed 1\n"
            "  tapir synth --droidtask ../shared/upstream/droidtask --app clock -o clock.jsonl --count 50\n"
            "  tapir synth --droidtask ../shared/upstream/droidtask --app clock -o clock.jsonl --count 50 --resume"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--doc", action="append", metavar="APP.yaml", default=[],
                   help="an app document (repeat for several apps; pair each with a --device)")
    p.add_argument("--device", action="append", metavar="sim[:APP]", default=[],
                   help="the simulator that validates the pairs of each --doc: sim, sim:APP or sim:DIR (a DroidBot "
                        "recording replayed; default: sim:<the document's app>); given once, it serves every --doc")
    p.add_argument("--droidtask", metavar="FOLDER",
                   help="the apps of a DroidTask folder (tasks.json beside apps/), each on its recording replayed, "
                        "with the document the replay suite uses (tapir eval FOLDER); --app picks some")
    p.add_argument("--app", action="append", default=[], metavar="APP",
                   help="with --droidtask: this app only (repeatable; default: every app with a recording)")
    p.add_argument("--samples", nargs="?", const="samples", metavar="FOLDER",
                   help=f"every sample app of FOLDER (default samples/): {', '.join(SAMPLE_APPS)}")
    p.add_argument("-o", "--output", required=False, metavar="OUT.jsonl", help="the JSONL to write (required)")
    p.add_argument("--count", type=int, default=300, help="validated pairs wanted over all apps (default 300)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling (same seed, same file; default 0)")
    p.add_argument("--max-complexity", type=int, default=5,
                   help="most actions in one task (walks have 1 to this many; default 5)")
    p.add_argument("--max-candidates", type=int, default=6, metavar="FACTOR",
                   help="walks drawn at most per app, as a multiple of the pairs wanted from it (default 6)")
    p.add_argument("--repair-depth", type=int, default=2, help="levels of the depth-first repair search (default 2)")
    p.add_argument("--repair-budget", type=int, default=4,
                   help="repaired versions validated at most per walk (default 4; 0: no repair)")
    p.add_argument("--model", metavar="SPEC",
                   help="rephrase the template task texts with this model (as tapir gen --model takes it)")
    p.add_argument("--resume", action="store_true",
                   help="continue OUT (an interrupted run's): keep its pairs, count them towards --count and make "
                        "only new ones (their duplicates are skipped); give the same apps. Without it OUT is "
                        "rewritten")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (pairs kept, walks tried, elapsed time)")
    p.add_argument("--in-process", action="store_true",
                   help="validate each script in this process, without the child process and OS limits of "
                        "tapir run (for debugging)")
    p.set_defaults(handler=_run)


def _apps(args: argparse.Namespace) -> list[Any]:
    if args.droidtask:
        if args.doc or args.samples or args.device:
            raise UsageError("--droidtask names the apps and their devices: give it without --doc, --samples, --device")
        return _droidtask_apps(Path(args.droidtask), args.app)
    if args.app:
        raise UsageError("--app picks apps of a --droidtask folder")
    docs: list[str] = list(args.doc)
    if args.samples:
        folder = Path(args.samples)
        found = [folder / app / f"{app}.yaml" for app in SAMPLE_APPS if (folder / app / f"{app}.yaml").is_file()]
        if not found:
            raise UsageError(f"--samples: no sample app document under {folder} (looked for <app>/<app>.yaml)")
        docs += [str(f) for f in found]
    if not docs:
        raise UsageError("give --doc APP.yaml (repeatable) or --samples")
    for doc in docs:
        if not Path(doc).is_file():
            raise UsageError(f"--doc: {doc} does not exist")
    devices: list[str] = list(args.device)
    if len(devices) not in (0, 1, len(docs)):
        raise UsageError(f"{len(devices)} --device for {len(docs)} documents: give one, one per --doc, or none")
    if len(devices) == 1:
        devices = devices * len(docs)
    if not devices:
        devices = [_default_device(doc) for doc in docs]
    return list(zip(docs, devices, strict=True))


def _droidtask_apps(folder: Path, apps: list[str]) -> list[Any]:
    """A ``SynthApp`` per app of the DroidTask suite: its document and replay as ``tapir eval``
    loads them, every task text of the suite held out (no pair copies one)."""
    import json

    from tapir.eval.droidtask import load_droidtask_suite
    from tapir.synth import SynthApp

    tasks_json = folder if folder.suffix == ".json" else folder / "tasks.json"
    if not tasks_json.is_file():
        raise UsageError(f"--droidtask: no tasks.json at {tasks_json} (give the DroidTask folder)")
    suite = load_droidtask_suite(tasks_json, apps or None)
    listed = json.loads(tasks_json.read_text(encoding="utf-8"))
    texts = tuple(str(t.get("task", "")) for by_app in listed.values() for t in by_app.values()
                  if isinstance(t, dict) and t.get("task"))
    return [SynthApp(spec.document_path or name, spec.device, spec.document, texts)
            for name, spec in suite.apps.items()]


def _default_device(doc: str) -> str:
    """``sim:<app>`` for a sample app's document (its package names it), else ``sim``."""
    from tapir.docgen.loader import load_document
    from tapir.sim.launch import known_app_names, resolve_app

    package = load_document(doc).app.package
    for name in known_app_names():
        if resolve_app(name).package == package:
            return f"sim:{name}"
    return "sim"


def _run(args: argparse.Namespace) -> int:
    from tapir.synth import PairWriter, SynthConfig, SynthInterrupted, synthesize

    if not args.output:
        raise UsageError("give -o OUT.jsonl (where the pairs are written)")
    for flag in ("count", "max_complexity", "max_candidates", "repair_depth"):
        if getattr(args, flag) < (0 if flag == "repair_depth" else 1):
            raise UsageError(f"--{flag.replace('_', '-')} must be at least {0 if flag == 'repair_depth' else 1}")
    if args.repair_budget < 0:
        raise UsageError("--repair-budget must be 0 or more")
    apps = _apps(args)
    rephrase = _rephraser(args.model) if args.model else None
    config = SynthConfig(count=args.count, seed=args.seed, max_complexity=args.max_complexity,
                         max_candidates_factor=args.max_candidates, repair_depth=args.repair_depth,
                         repair_budget=args.repair_budget, rephrase=rephrase, in_process=args.in_process)
    from rich.console import Console

    err = Console(file=sys.stderr, highlight=False)
    with PairWriter(args.output, resume=args.resume) as writer, stop_signals() as stopped_by:
        if writer.resumed:
            print(f"resuming {args.output}: {len(writer.resumed)} pairs kept", file=sys.stderr)
        elif args.resume:
            # not an error: the first run of a loop that always passes --resume starts the file
            state = "holds no pairs" if Path(args.output).is_file() else "does not exist yet"
            print(f"nothing to resume: {args.output} {state}; starting it", file=sys.stderr)
        try:
            with _SynthProgress(err, args.count, quiet=args.quiet,
                                done=Counter(p.app for p in writer.resumed)) as progress:
                run = synthesize(apps, config, on_progress=progress.update, on_pair=writer.write,
                                 resume=writer.resumed)
        except SynthInterrupted as stop:
            with signals_ignored():  # a second Ctrl-C must not lose the card
                files = writer.finish(stop.run)
            signame = stopped_name(stopped_by)
            print(f"tapir synth: interrupted ({signame}) after {len(stop.run.pairs)} of {args.count} pairs; wrote "
                  f"{', '.join(str(f) for f in files)}; continue with --resume", file=sys.stderr)
            return stopped_status(stopped_by)
        with signals_ignored():
            files = writer.finish(run)
    card = run.card()
    rejected = ", ".join(f"{k} {v}" for k, v in card["rejected"].items()) or "none"
    print(f"{card['pairs']} pairs from {card['candidates']} walks in {card['wall_s']} s "
          f"({card['duplicates']} duplicates, {card['repaired']} repaired); rejected {card['rejected_total']}: "
          f"{rejected}")
    print("wrote " + ", ".join(str(f) for f in files))
    if card["pairs"] < args.count:
        print(f"only {card['pairs']} of the {args.count} pairs wanted: raise --max-candidates or --max-complexity",
              file=sys.stderr)
        return 1
    return 0


def _rephraser(spec: str) -> Any:
    """A function that asks the model ``spec`` (a name ``tapir model`` installed, or a GGUF path)
    to rephrase a template task text; the template is kept when the answer drops a quoted value."""
    from tapir.codegen.backend import Request
    from tapir.codegen.llama_backend import LlamaCppBackend
    from tapir.codegen.models import resolve_model

    backend = LlamaCppBackend(resolve_model(spec), cache_dir=False)

    def rephrase(document: Any, text: str) -> str:
        request = Request(
            system="You rewrite instructions for a phone app the way a user would say them.",
            user_prefix=f"App: {document.app.name}\n",
            user_rest=f"Rewrite in one sentence, keeping every quoted name and value exactly:\n{text}\n",
            max_tokens=80, cache_label="synth-rephrase")
        lines = backend.complete(request).text.strip().splitlines()
        line = lines[0].strip().strip('"') if lines else ""
        quoted = text.split('"')[1::2]
        return line if line and all(q in line for q in quoted) else text

    return rephrase


class _SynthProgress:
    """Pairs kept of those wanted, walks tried and the time so far, on stderr: a bar on a terminal,
    a line every ``every_s`` seconds otherwise (a log of a long run); nothing with ``quiet``."""

    def __init__(self, console: Any, total: int, *, quiet: bool = False, done: Mapping[str, int] | None = None,
                 every_s: float = 30.0) -> None:
        self.console, self.total, self.quiet, self.every_s = console, total, quiet, every_s
        self.done = dict(done or {})  # pairs resumed, per app
        self._bar: Any = None
        self._kept: dict[str, int] = {}
        self._walks = 0
        self._started = self._printed = time.monotonic()

    def __enter__(self) -> _SynthProgress:
        if self.console.is_terminal and not self.quiet:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("synth {task.fields[app]}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[walks]} walks"), TimeElapsedColumn(),
                                 console=self.console, transient=True)
            self._bar.start()
            self._id = self._bar.add_task("synth", total=self.total, app="", walks=0, completed=self._done())
        return self

    def update(self, app: str, kept: int, wanted: int) -> None:
        # synthesize calls this once per walk drawn: the calls count the walks
        first = app not in self._kept
        self._kept[app] = kept
        self._walks += 1
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.update(self._id, completed=self._done(), app=app, walks=self._walks)
            return
        if first:
            self.console.print(f"synth {app}: {wanted} pairs wanted")
        now = time.monotonic()
        if now - self._printed >= self.every_s:
            self._printed = now
            self.console.print(f"synth {app}: {self._done()}/{self.total} pairs kept, {self._walks} walks tried, "
                               f"{now - self._started:.0f} s")

    def _done(self) -> int:
        # an app's own count starts from its resumed pairs
        return sum({**self.done, **self._kept}.values())

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
