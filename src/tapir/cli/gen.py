"""``tapir gen``: a task in words to a Tapir script, written by a local model (and run, with repair)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tapir.cli.common import (
    Subparsers,
    adb_server,
    add_adb_flags,
    add_safety_flags,
    check_device_flag,
    check_positive,
    device_on_server,
    project_config,
)

#: ``tapir.codegen.prompt.PROMPT_STYLES``, written here so that the command line starts without
#: importing the code generator (a test keeps the two equal).
PROMPT_STYLES = ("auto", "described", "names", "focused")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "gen",
        help="write a script for a task in words with a local model (and run it, repairing on errors)",
        description=(
            "One model call writes the whole script against the app document; the answer is constrained\n"
            "to scripts that parse and name only the document's elements. The script is checked, and with\n"
            "--run executed on --device; errors go back to the model (--rounds, --token-budget), and so\n"
            "does a run that finished without doing what its plan names (post-run checks, --no-postchecks).\n"
            "A run one step short (a dialog's OK never tapped) gets that step appended, and a toggle tapped\n"
            "the wrong way for the task's words ('tick', 'switch off') gets its line set right, and runs again\n"
            "before the model is asked (--no-completion); a run that stopped on a .match() on a list the\n"
            "document does not give the item to has that line rewritten on the list it does (one stopped by\n"
            "a permission prompt gets it answered first; one that passed by the option the task names gets\n"
            "the pick before the line; $list.match(item) in a loop over $list becomes item), and runs again\n"
            "(--no-correction).\n"
            "When a repair does worse (it breaks a script that ran to its end), that earlier script is kept.\n"
            "Only the script goes to stdout; the plan, each round and the token accounting go to stderr.\n\n"
            "Model output is untrusted code (docs/safety.md): before each run the script is shown and,\n"
            "outside CI and with a terminal, you are asked (--yes: do not ask). It may do nothing sensitive\n"
            "(delete, send, pay...) unless --allow says so, and cannot give itself permissions.\n\n"
            "examples:\n"
            "  tapir gen \"Play the song Lanterns\" --doc samples/music/music.yaml\n"
            "  tapir gen \"Turn off vibration\" --doc samples/clock/clock.yaml --run --device sim:clock\n"
            "  tapir gen \"...\" --doc app.yaml --url http://127.0.0.1:8080/v1   # an OpenAI-compatible server"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("task", help="what the script should do, in words")
    p.add_argument("--doc", required=True, metavar="APP.yaml", help="the app document the script is written against")
    p.add_argument("--model", metavar="PATH.gguf|NAME",
                   help="a GGUF file or an installed model name (default: $TAPIR_MODEL, else the best installed; "
                        "see `tapir model list`)")
    p.add_argument("--url", metavar="URL", help="use an OpenAI-compatible server instead of a local model "
                                                "(e.g. http://127.0.0.1:8080/v1)")
    p.add_argument("--remote-model", metavar="NAME", help="the model name to ask the server for (--url)")
    p.add_argument("--api-key-env", metavar="VAR", default="OPENAI_API_KEY",
                   help="environment variable holding the server's API key (default: OPENAI_API_KEY)")
    p.add_argument("--grammar-field", default="grammar", choices=("grammar", "guided_grammar", "none"),
                   help="how the server takes the grammar: llama.cpp servers 'grammar', vLLM 'guided_grammar', "
                        "'none' for servers without grammar support (the answer is checked afterwards)")
    p.add_argument("--device", metavar="SERIAL|sim[:APP]",
                   help="a device: its current screen goes into the prompt; with --run the script runs there "
                        "(an adb serial, HOST:PORT/SERIAL, sim or sim:APP)")
    add_adb_flags(p)
    p.add_argument("--run", action="store_true", help="run the script on --device and repair it on errors")
    p.add_argument("--in-process", action="store_true",
                   help="with --run, run each attempt in this process rather than in a child process under OS "
                        "limits (for debugging)")
    p.add_argument("-y", "--yes", action="store_true",
                   help="with --run: run each script without asking (it is still shown; CI never asks)")
    add_safety_flags(p)
    p.add_argument("--rounds", type=int, default=3, metavar="N",
                   help="scripts written and checked at most, repairs included (3; a repeat asked again, "
                        "--resamples, is in its round)")
    p.add_argument("--token-budget", type=int, default=20_000, metavar="N",
                   help="prompt tokens computed plus tokens generated, over all rounds (20,000)")
    p.add_argument("--max-tokens", type=int, default=400, metavar="N", help="tokens one answer may have (400)")
    p.add_argument("--prefix-examples", type=int, default=8, metavar="N",
                   help="examples (examples/*.yaml|jsonl beside the document) kept in the cached prompt prefix (8)")
    p.add_argument("--examples", type=int, default=2, metavar="K",
                   help="more examples retrieved per task by similarity, from the rest of the pool (2)")
    p.add_argument("--prompt-style", default="auto", choices=PROMPT_STYLES,  # (tapir.codegen.prompt's)
                   help="auto (the default): the largest form that fits the model's context; described: every "
                        "element with its description; names: names only (the paper's compressed form); focused: "
                        "only the screens relevant to the task")
    p.add_argument("--examples-file", action="append", default=[], metavar="FILE.jsonl",
                   help="more examples to retrieve from, e.g. `tapir synth` output (pairs that do not check "
                        "against --doc are left out); repeatable")
    p.add_argument("--retrieval", default="minilm", choices=("minilm", "tf-idf"),
                   help="how examples are retrieved (minilm: sentence embeddings, when installed)")
    p.add_argument("--no-loop-stop", action="store_true",
                   help="let an answer that repeats itself run on to the token limit")
    p.add_argument("--resamples", type=int, default=2, metavar="N",
                   help="ask a repair that repeats the failed script word for word again, sampled, up to N times "
                        "(default 2; 0: keep the repeated answer)")
    p.add_argument("--no-postchecks", action="store_true",
                   help="with --run: do not send a run that finished without doing what its plan names back "
                        "for repair (post-run checks: an element of the plan never acted on, a text typed and "
                        "never confirmed; as in `tapir eval --model`)")
    p.add_argument("--no-completion", action="store_true",
                   help="with --run: do not append the one step a post-run check names (a dialog's OK, a screen's "
                        "Save) to a run that finished one step short; the model is asked instead")
    p.add_argument("--no-correction", action="store_true",
                   help="with --run: do not set right the line a run stopped on when the document says how (a "
                        ".match() on a list that lacks the item, rewritten on the list the document gives it to; a "
                        "permission prompt in the way, answered; the option the task names, passed by, picked "
                        "before the line); the model is asked instead")
    p.add_argument("--no-grammar", action="store_true", help="do not constrain the answer")
    p.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0: greedy, the default)")
    p.add_argument("--threads", type=int, metavar="N", help="CPU threads for the local model")
    p.add_argument("--no-drafts", action="store_true",
                   help="a local model decodes a token at a time, without drafts copied from the prompt (the "
                        "answer is the model's either way, but a batch is computed with other kernels, so not "
                        "bit for bit)")
    p.add_argument("--ctx", type=int, metavar="N",
                   help="the model's context size in tokens, to which prompts are fitted: a local model's "
                        "(default 6144), or with --url the server's (default: asked of the server; llama.cpp and "
                        "vLLM say it, llama-cpp-python's server does not)")
    p.add_argument("--cache-dir", metavar="DIR", help="where prefix states are kept (default ~/.cache/tapir/prefix)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write prefix states on disk")
    p.add_argument("-o", "--output", metavar="FILE.tap",
                   help="also write the script to FILE.tap, with a `# doc:` first line for `tapir run`")
    p.add_argument("--report", metavar="FILE.json",
                   help="write every round (prompt sizes, answer, failure, diff) as JSON")
    p.set_defaults(handler=_cmd_gen)


def _backend(args: argparse.Namespace) -> Any:
    from pathlib import Path

    from tapir.core.errors import UsageError

    if args.url:
        import os

        from tapir.codegen.http_backend import HttpBackend

        if args.model:
            raise UsageError("--model and --url exclude each other (--remote-model names the server's model)")
        return HttpBackend(args.url, model=args.remote_model, api_key=os.environ.get(args.api_key_env),
                           grammar_field=None if args.grammar_field == "none" else args.grammar_field,
                           n_ctx=args.ctx)
    import os

    from tapir.codegen.llama_backend import LlamaCppBackend
    from tapir.codegen.models import PREFERENCE, default_model, resolve_model

    if args.model:
        path = resolve_model(args.model)
    else:
        found = default_model()
        if found is None:
            raise UsageError("no model is installed", hint="tapir model install qwen2.5-coder-1.5b "
                                                           "(or --model PATH.gguf, or --url for a model server)")
        name, path = found
        # which model, and why: a person waiting on it should know what to change
        why = "$TAPIR_MODEL" if os.environ.get("TAPIR_MODEL") else \
            "the best installed (tried in the order " + ", ".join(PREFERENCE) + ")"
        print(f"model: {name} ({why}; --model NAME picks another; `tapir model list`)", file=sys.stderr)
    cache: Any = True
    if args.no_cache:
        cache = False
    elif args.cache_dir:
        cache = Path(args.cache_dir) / "prefix"
    from tapir.codegen.backend import DEFAULT_CTX
    from tapir.codegen.lookup import DRAFT_TOKENS

    return LlamaCppBackend(path, n_ctx=args.ctx or DEFAULT_CTX, n_threads=args.threads, cache_dir=cache,
                           draft_tokens=0 if args.no_drafts else DRAFT_TOKENS)


def _embedder(retrieval: str) -> Any:
    """MiniLM for example retrieval (None: TF-IDF, by choice or when it is not installed)."""
    if retrieval != "minilm":
        return None
    from tapir.runtime.grounding import default_embedder

    return default_embedder()


def _cmd_gen(args: argparse.Namespace) -> int:
    import json
    from dataclasses import replace
    from pathlib import Path

    from tapir.cli.confirm import confirm_run
    from tapir.codegen import language as L
    from tapir.codegen.examples import NO_PLAN, ExampleStore
    from tapir.codegen.generate import Budget, GenConfig, Generator, Round
    from tapir.core.errors import UsageError
    from tapir.core.safety import Safety
    from tapir.service import Workspace

    check_positive(rounds=args.rounds, token_budget=args.token_budget, max_tokens=args.max_tokens,
                   threads=args.threads, ctx=args.ctx)
    check_device_flag(args.device)
    adb_host, adb_port = adb_server(args, project_config(args.doc))
    if args.run and not args.device:
        raise UsageError("--run needs a device (--device SERIAL, sim or sim:APP)")
    if args.examples < 0 or args.prefix_examples < 0:
        raise UsageError("--examples and --prefix-examples must be 0 or more")
    if args.resamples < 0:
        raise UsageError(f"must be 0 or more, not {args.resamples}", setting="resamples")
    if not args.task.strip():
        raise UsageError("the task is empty: say in words what the script should do")
    doc_path = Path(args.doc)
    if not doc_path.is_file():
        raise UsageError(f"--doc: no such file: {args.doc}")
    doc = L.load_document(doc_path)
    # a generated script may do only what the person allows: flags and tapir.toml [safety], not its own allow()
    safety = Safety.from_options(allow=args.allow, allow_apps=args.allow_app, foreign_app=args.foreign_app,
                                 secrets_file=args.secrets, trust_script=False,
                                 project=Workspace().safety_config(doc_path))
    backend = _backend(args)
    config = GenConfig(max_tokens=args.max_tokens, examples=args.examples, prefix_examples=args.prefix_examples,
                       temperature=args.temperature,
                       constrained=not args.no_grammar, style=args.prompt_style)
    for f in args.examples_file:
        if not Path(f).exists():
            raise UsageError(f"--examples-file: no such file or folder: {f}")
    examples = ExampleStore.for_document(doc_path, L.symbols(doc), extra=args.examples_file, app=doc.app.name,
                                         embedder=_embedder(args.retrieval))
    config = replace(config, stop_loops=not args.no_loop_stop, postchecks=not args.no_postchecks,
                     resamples=args.resamples, completions=0 if args.no_completion else config.completions,
                     corrections=0 if args.no_correction else config.corrections)
    gen = Generator(doc, backend, examples=examples, config=config)
    device = None
    if args.device:
        from tapir.codegen.device import DeviceSession

        # generated code is untrusted: with --run each attempt runs in a child process under OS
        # limits, after confirm_run showed it (and, outside CI, asked)
        device = DeviceSession(
            doc_path, device_on_server(args.device, adb_host, adb_port) or args.device, adb_port=adb_port,
            isolated=not args.in_process, safety=safety,
            confirm=(lambda script: confirm_run(script, task=args.task, device=args.device, yes=args.yes))
            if args.run else None)

    if hasattr(backend, "on_cold"):
        # Minutes of silence read as a hang: when the prompt's prefix is computed (no copy cached),
        # say so before the model's first token; a warm run says nothing
        backend.on_cold = lambda: print(
            f"{backend.name}: computing the prompt prefix of this document (minutes on a CPU, once; "
            "later runs reuse it)", file=sys.stderr, flush=True)

    def show(r: Round) -> None:
        a = r.generation.answer
        if r.index == 1 and (a.plan or a.elements):
            # a plan copied from examples that have none of their own tells the user nothing
            plan = f"plan: {a.plan}\n" if a.plan and a.plan != NO_PLAN else ""
            print(f"{plan}elements: {', '.join('$' + e for e in a.elements)}", file=sys.stderr)
        print(r.summary(), file=sys.stderr)
        for f in r.findings[1:]:  # the first is the round's failure; the rest are not sent back
            print(f"    also ({f.check}): {f.message}", file=sys.stderr)
        for line in r.diff[2:]:  # what the repair changed (the ---/+++ header left out)
            if not line.startswith("@@"):
                print(f"    {line}", file=sys.stderr)

    try:
        if args.run:
            from tapir.codegen.device import RunDeclined

            try:
                result = gen.solve(args.task, device=device, budget=Budget(args.rounds, args.token_budget),
                                   on_round=show, output=lambda line: print(f"[script] {line}", file=sys.stderr))
            except RunDeclined:
                return 1  # confirm_run said "not run"; the script was shown
        else:
            screen = device.screen() if device is not None else None
            result = gen.solve(args.task, screen=screen, budget=Budget(args.rounds, args.token_budget), on_round=show)
    finally:
        if device is not None:
            device.close()
        backend.close()
    total = sum(r.generation.usage.generated_tokens for r in result.rounds)
    print(f"{backend.name}: {len(result.rounds)} round{'s' if len(result.rounds) != 1 else ''}, "
          f"{total} tokens generated; {_outcome(result, ran=args.run, postchecks=not args.no_postchecks)}",
          file=sys.stderr)
    sys.stdout.write(result.script)
    sys.stdout.flush()
    if args.output:
        out = Path(args.output)
        rel = Path(doc_path.resolve()).relative_to(out.resolve().parent) if doc_path.resolve().is_relative_to(
            out.resolve().parent) else doc_path.resolve()
        out.write_text(f"# doc: {rel}\n# task: {' '.join(args.task.split())}\n{result.script}", encoding="utf-8")
    if args.report:
        Path(args.report).write_text(json.dumps(_report(result, postchecks=args.run and not args.no_postchecks),
                                                indent=2) + "\n", encoding="utf-8")
    return 0 if result.ok else 1


def _outcome(result: Any, *, ran: bool, postchecks: bool = True) -> str:
    """How the last round ended, in words that do not claim more than was checked: a script that
    ran without error may still not do the task (nothing checks what a free-text task wanted; the
    post-run checks catch only a plan left undone)."""
    if not result.ok:
        best = result.best
        kept = best.failure if best is not None else None
        if best is not None and best.index != len(result.rounds):
            return (f"stopped by {result.stopped}: kept round {best.index}'s script, which ran to its end without "
                    "doing what its plan names (the repairs after it did worse)")
        if result.stopped == "refused" and kept is not None:
            at = f" on line {kept.line}" if kept.line else ""
            return (f"stopped: a guard refused an action{at}, which is yours to allow, not the model's to work "
                    f"around: {kept.message}")
        if result.stopped == "stood-by":
            return ("stopped: the model wrote the same script again after the post-run check's finding; it ran "
                    "to its end, and the check doubts it did what its plan names (read it and its output)")
        if kept is not None and kept.stage == "postcheck":
            return f"stopped by {result.stopped}: the last script ran to its end without doing what its plan names"
        return f"stopped by {result.stopped}"
    if ran and postchecks:
        return ("ran without error; the post-run checks found nothing of its plan undone (no check says it "
                "did the task: read the script and its output)")
    if ran:
        return "ran without error (no check says it did the task: read the script and its output)"
    return "passed the checker (not run: --run --device runs it)"


def _report(result: Any, *, postchecks: bool = False) -> dict[str, Any]:
    return {
        "task": result.task, "ok": result.ok, "stopped": result.stopped, "postchecks": postchecks,
        "kept_round": result.best.index if result.best is not None else None,
        "rounds": [{
            "round": r.index, "plan": r.generation.answer.plan, "elements": list(r.generation.answer.elements),
            "script": r.generation.script, "ran": r.ran, "usage": r.generation.usage.as_dict(),
            "failure": None if r.failure is None else {
                "category": r.failure.category, "stage": r.failure.stage, "message": r.failure.message,
                "line": r.failure.line, "check": r.failure.check,
                "screen": None if r.failure.screen is None else r.failure.screen.describe()},
            "findings": [{"check": f.check, "message": f.message} for f in r.findings],
            "completed": [{"check": f.check, "statement": f.fix} for f in r.completed],
            "corrected": [{"check": c.check, "line": c.line, "statement": c.statement} for c in r.corrected],
            "diff": list(r.diff),
        } for r in result.rounds],
    }
