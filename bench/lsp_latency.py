"""Language server latency, through the real `tapir lsp` over stdio: a 1,000-line script against
a 300-element document.

    python bench/lsp_latency.py [--lines 1000] [--elements 300] [--samples 40] [--debounce MS]

A pygls client starts `python -m tapir.cli lsp`, opens the script and then, for each sample,
sends an edit of one line in the middle (an incremental change, as editors send) and measures:

* ``diagnostics_after_edit``: from sending the change to receiving the diagnostics of that
  version (the server's debounce, printed beside it, included);
* ``complete_element`` / ``complete_method`` / ``complete_name``: a change that types
  ``x = $s3__e`` (or ``x = $s0__e3.``, ``x = hel``) followed at once by a completion request
  there, from sending the request to the answer (so the re-analysis of the changed text is
  paid by the completion, as in an editor);
* ``hover`` and ``signature_help`` on the unchanged script.

Prints JSON: p50/p95/max in milliseconds as the client waits for them, the first check of the
script (``open``), and the targets (completion p95 under 50 ms, diagnostics p95 under 200 ms).
``server_cpu`` is what the same checks and completions cost the server in CPU time (its own
``tapir/stats`` request): on a busy machine the wall time is that plus waiting for a core, so
the machine's load average is printed too. The files are generated
in a temporary folder (by bench/language_service.py's generators).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from language_service import document, script  # noqa: E402  (the same files as the in-process bench)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2),
            "max_ms": round(ordered[-1] * 1000, 2)}


class Client(LanguageClient):
    """A client that records when each version's diagnostics arrive."""

    def __init__(self) -> None:
        super().__init__("tapir-bench", "1")
        self.arrived: dict[tuple[str, int | None], float] = {}
        self.waiters: dict[tuple[str, int | None], asyncio.Future[float]] = {}

        @self.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: T.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            now = time.perf_counter()
            self.arrived[key] = now
            waiter = self.waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(now)

        @self.feature(T.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: T.RegistrationParams) -> None:
            return None

        @self.feature(T.WINDOW_LOG_MESSAGE)
        def on_log(params: T.LogMessageParams) -> None:
            print(params.message, file=sys.stderr)

    async def diagnostics(self, uri: str, version: int, timeout: float = 30) -> float:
        key = (uri, version)
        if key in self.arrived:
            return self.arrived[key]
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters[key] = future
        return await asyncio.wait_for(future, timeout)


def change(uri: str, version: int, line: int, old_length: int, text: str) -> T.DidChangeTextDocumentParams:
    rng = T.Range(T.Position(line, 0), T.Position(line, old_length))
    return T.DidChangeTextDocumentParams(
        T.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [T.TextDocumentContentChangePartial(range=rng, text=text)])


async def server_cpu(client: Client) -> dict[str, list[float]]:
    """The CPU seconds of each handler's calls so far, as the server counts them (tapir/stats)."""
    stats = await client.protocol.send_request_async("tapir/stats", {})
    table = stats.handler_cpu_seconds._asdict()  # (pygls answers an unknown method with named tuples)
    return {name: list(times) for name, times in table.items()}


def cpu_since(before: dict[str, list[float]], after: dict[str, list[float]], name: str) -> list[float]:
    return after.get(name, [])[len(before.get(name, [])):]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="tapir-lsp-bench-"))
    (folder / "app.yaml").write_text(document(args.elements), encoding="utf-8")
    path = folder / "big.tap"
    base = script(args.lines, args.elements)
    path.write_text(base, encoding="utf-8")
    uri = path.as_uri()
    lines = base.splitlines()
    middle = len(lines) // 2

    client = Client()
    await client.start_io(sys.executable, "-m", "tapir.cli", "lsp", "--debounce", str(args.debounce))
    await client.initialize_async(T.InitializeParams(capabilities=T.ClientCapabilities(), root_uri=folder.as_uri(),
                                                     process_id=None))
    client.initialized(T.InitializedParams())
    start = time.perf_counter()
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "tapir", 1, base)))
    opened = await client.diagnostics(uri, 1, timeout=120) - start
    version = 1
    current = lines[middle]

    def edit(text: str) -> T.DidChangeTextDocumentParams:
        nonlocal version, current
        version += 1
        params = change(uri, version, middle, len(current), text)
        current = text
        return params

    results: dict[str, Any] = {"lines": len(lines), "elements": args.elements, "debounce_ms": args.debounce,
                               "open_ms": round(opened * 1000, 1)}
    samples = []
    before = await server_cpu(client)
    for i in range(args.samples):
        sent = time.perf_counter()
        client.text_document_did_change(edit(f"edit_{i} = {i}"))
        samples.append(await client.diagnostics(uri, version) - sent)
    results["diagnostics_after_edit"] = percentiles(samples)
    results["diagnostics_after_edit"]["server_cpu"] = percentiles(cpu_since(before, await server_cpu(client), "check"))

    probes = {"complete_element": "x = $s3__e", "complete_method": "x = $s0__e3.", "complete_name": "x = hel"}
    # (each sample names another variable, so that nothing is left cached from the one before)
    for name, prefix in probes.items():
        samples = []
        count = 0
        before = await server_cpu(client)
        for i in range(args.samples):
            client.text_document_did_change(edit(prefix.replace("x =", f"x{i} =")))
            sent = time.perf_counter()
            answer = await client.text_document_completion_async(T.CompletionParams(
                T.TextDocumentIdentifier(uri), T.Position(middle, len(current))))
            samples.append(time.perf_counter() - sent)
            count = len(answer.items) if isinstance(answer, T.CompletionList) else len(answer or [])
            await client.diagnostics(uri, version)
        results[name] = {**percentiles(samples), "items": count,
                         "server_cpu": percentiles(cpu_since(before, await server_cpu(client), "on_completion"))}

    client.text_document_did_change(edit(lines[middle]))
    await client.diagnostics(uri, version)
    target = next(n for n, ln in enumerate(lines) if ln.startswith("for row in"))
    for name, request in (
        ("hover", lambda: client.text_document_hover_async(T.HoverParams(T.TextDocumentIdentifier(uri),
                                                                        T.Position(target, 12)))),
        ("signature_help", lambda: client.text_document_signature_help_async(T.SignatureHelpParams(
            T.TextDocumentIdentifier(uri), T.Position(target + 2, 12)))),
    ):
        samples = []
        for _ in range(args.samples):
            sent = time.perf_counter()
            await request()
            samples.append(time.perf_counter() - sent)
        results[name] = percentiles(samples)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    results["targets"] = {"completion_p95_ms": 50, "diagnostics_p95_ms": 200}
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    results["cpus"] = os.cpu_count()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--elements", type=int, default=300)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--debounce", type=float, default=50, help="the server's --debounce (ms)")
    args = ap.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
