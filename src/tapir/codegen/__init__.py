"""From a task in words to a running script, with a small local model (``tapir gen``).

    from tapir.codegen import Generator, ExampleStore, DeviceSession, find_model
    from tapir.codegen import language as L
    from tapir.codegen.llama_backend import LlamaCppBackend

    doc = L.load_document("samples/music/music.yaml")
    gen = Generator(doc, LlamaCppBackend(find_model("qwen2.5-coder-1.5b")),
                    examples=ExampleStore.for_document("samples/music/music.yaml", L.symbols(doc)))
    result = gen.solve("Play the song Lanterns", device=DeviceSession("samples/music/music.yaml", "sim:music"))
    print(result.ok, result.script)

Modules: ``language`` (the one adapter to the registry, checker and documents), ``gbnf`` and
``script_grammar`` (the constrained answer grammar), ``prompt`` and ``examples`` (the prompt and
its in-context examples), ``backend``, ``llama_backend``, ``http_backend`` (models behind one
interface), ``prefix_cache`` (the prompt prefix's KV state on disk), ``kept_states`` (the last
prompts' states in memory), ``lookup`` (drafts copied from
the prompt, checked by the local model in one batch), ``generate`` (generation and
the repair loop), ``device`` (running on a device), ``models`` (installing models), ``tokens``
(token counts with the model's tokenizer), ``source`` (the generator as ``tapir eval``'s script
source: ``script_source(spec)``).
``LlamaCppBackend`` is not part of this face: import it from ``tapir.codegen.llama_backend``
(see below). llama-cpp-python itself is imported only when a model is loaded (it is optional).
"""

from tapir.codegen.backend import Backend, Completion, Request, ScriptedBackend, Usage
from tapir.codegen.device import DeviceSession
from tapir.codegen.examples import Example, ExampleStore
from tapir.codegen.generate import Budget, Failure, GenConfig, Generation, Generator, Round, SolveResult
from tapir.codegen.http_backend import HttpBackend
from tapir.codegen.models import MODELS, find_model, install, resolve_model
from tapir.codegen.prompt import PROMPT_VERSION, Prompt, ScreenInfo, build_prompt
from tapir.codegen.script_grammar import answer_grammar, split_answer
from tapir.codegen.source import ModelSource, SourceAnswer, SourceTokens, script_source

__all__ = [
    "MODELS", "PROMPT_VERSION", "Backend", "Budget", "Completion", "DeviceSession", "Example", "ExampleStore",
    "Failure", "GenConfig", "Generation", "Generator", "HttpBackend", "Prompt", "Request",
    "ModelSource", "Round", "ScreenInfo", "ScriptedBackend", "SolveResult", "SourceAnswer", "SourceTokens", "Usage",
    "answer_grammar", "build_prompt", "find_model", "install", "resolve_model", "script_source", "split_answer",
]


# Not here: ``LlamaCppBackend`` (``tapir.codegen.llama_backend``). Importing that module sets
# OMP_WAIT_POLICY=PASSIVE for the whole process (it must precede the first OpenMP runtime), which
# would also change how torch's threads wait in any program that merely imports ``tapir.codegen``.
