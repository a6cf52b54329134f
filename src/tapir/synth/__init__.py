"""Training-data synthesis (``tapir synth``): validated (task, script) pairs from app documents.

    from tapir.synth import SynthConfig, synthesize, write_outputs

    run = synthesize([("samples/music/music.yaml", "sim:music")], SynthConfig(count=50, seed=1))
    write_outputs(run, "music.jsonl")     # chat-format JSONL + music.card.json / music.card.md
    run.card()["rejected"]                # {'navigation': 12, 'effect-not-confirmed': 9, ...}

A replayed DroidTask recording validates too (``SynthApp(path, "sim:DIR", document)``: the walks
the recording cannot follow are rejected as ``not-recorded``).

Modules: ``graph`` (the document's transition graph, walks on it, template task texts and
scripts), ``validate`` (running a script on a fresh simulated app, categorising its failure,
confirming its effect on the app's state), ``pipeline`` (sampling, depth-first repair,
deduplication, the JSONL and the data card) and ``stream`` (the JSONL written pair by pair as
they are kept, so an interrupted run keeps them and ``--resume`` continues it). The format and
a fine-tuning recipe are in ``docs/synth.md``; ``tapir synth`` is the command.
"""

from tapir.synth.graph import Action, TransitionGraph, Walk, normalise_script, normalise_text
from tapir.synth.pipeline import (
    FORMAT,
    Pair,
    Rejection,
    SynthApp,
    SynthConfig,
    SynthInterrupted,
    SynthRun,
    chat_record,
    synthesize,
    write_card,
    write_outputs,
)
from tapir.synth.stream import PairWriter, read_pairs
from tapir.synth.validate import CATEGORIES, Outcome, Validator, categorise

__all__ = [
    "CATEGORIES",
    "FORMAT",
    "Action",
    "Outcome",
    "Pair",
    "PairWriter",
    "Rejection",
    "SynthApp",
    "SynthConfig",
    "SynthInterrupted",
    "SynthRun",
    "TransitionGraph",
    "Validator",
    "Walk",
    "categorise",
    "chat_record",
    "normalise_script",
    "normalise_text",
    "read_pairs",
    "synthesize",
    "write_card",
    "write_outputs",
]
