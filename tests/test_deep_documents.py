"""Documents nested deep: every loader path ends in the same clean document error (issue 22).

A JSON or YAML file nested thousands of levels deep used to reach ``RecursionError`` in the JSON
decoder and PyYAML's composer (``tapir run``/``check`` exited 70 with "internal error", the
language server answered null), and libyaml's C composer overflows the C stack at ~200,000 levels.
The command-line cases run in a subprocess under an address-space limit and a timeout, so a
segfault or a runaway shows up as a failed test, not a dead test run.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tapir.core.errors import DocumentError
from tapir.core.nesting import MAX_DEPTH, load_json
from tapir.docgen.loader import load_document, loads_document
from tapir.docgen.symbols import load_symbols
from tapir.docgen.upstream import import_file
from tapir.dsl.symbols import SymbolTable
from tapir.inspector.doc_edit import DocumentEditor, EditRefused
from tapir.service.workspace import Workspace

APP = '"app": {"package": "org.x", "name": "X", "start_screen": "main"}'


_SHAPES: dict[str, Callable[[int], str]] = {
    "lists.json": lambda n: "{" + APP + ', "screens": ' + "[" * n + "]" * n + "}",
    "mappings.json": lambda n: '{"app": ' + '{"a": ' * n + "1" + "}" * n + ', "screens": {}}',
    "one-line.json": lambda n: '{"screens": ' + "[" * n + "]" * n + "}",
    "flow.yaml": lambda n: "app: " + "[" * n + "]" * n + "\nscreens: {}\n",
    # (quadratic in size: kept to a few thousand levels)
    "block.yaml": lambda n: "app: {}\nscreens:\n" + "".join("  " * i + "  - \n" for i in range(min(n, 3000))),
    "compact.yaml": lambda n: "app: {}\nscreens:\n  " + "- " * n + "1\n",
}
SHAPES = sorted(_SHAPES)


def _deep(n: int, name: str) -> str:
    """A whole document of the shape ``name``, nested ``n`` levels deep."""
    return _SHAPES[name](n)


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_is_refused_by_the_loader_with_a_document_problem(name: str) -> None:
    result = loads_document(_deep(2000, name), source=name)
    assert result.document is None
    assert [p.code for p in result.errors] == ["too-deep"]
    assert f"nested more than {MAX_DEPTH} levels" in result.errors[0].message


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_is_refused_with_the_file_named_by_load_document(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(_deep(3000, name), encoding="utf-8")
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert info.value.filename == str(path) and "nested more than" in info.value.render()


def test_nesting_at_the_limit_is_read_and_one_past_it_is_refused() -> None:
    inner = '{"x": ' * (MAX_DEPTH - 3) + "1" + "}" * (MAX_DEPTH - 3)
    ok = "{" + APP + ', "notes": null, "screens": {"main": ' + inner + "}}"
    assert "too-deep" not in [p.code for p in loads_document(ok).problems]
    assert load_json(json.dumps([[1]] * 3)) == [[1]] * 3
    with pytest.raises(DocumentError, match="nested more than 3 levels"):
        load_json("[[[[1]]]]", limit=3, filename="f.json")
    assert load_json("[[[1]]]", limit=3) == [[[1]]]


def test_a_real_document_with_many_brackets_and_dashes_is_not_refused() -> None:
    xpath = "//node[@resource-id='org.x:id/a-b-c' and @text='[[[x]]] - - - : : ?']"
    text = ("app: {package: org.x, name: X, start_screen: main}\nscreens:\n  main:\n    description: d\n"
            "    signature: {activity: .Main}\n    elements:\n      main__b:\n        kind: button\n"
            f"        description: '-- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- -- --'\n"
            f"        identifiers: {json.dumps([xpath] * 60)}\n")
    result = loads_document(text)
    assert result.document is not None, result.problems


def test_the_other_loaders_refuse_it_the_same_way(tmp_path: Path) -> None:
    deep = "[" * 5000 + "]" * 5000
    compiled = tmp_path / "app.symbols.json"
    compiled.write_text('{"format": ' + deep + "}", encoding="utf-8")
    with pytest.raises(DocumentError, match="nested more than"):
        load_symbols(compiled)
    with pytest.raises(ValueError, match="nested more than"):
        SymbolTable.from_json('{"format": ' + deep + "}")
    upstream = tmp_path / "upstream.json"
    upstream.write_text('{"main": {"skeleton": "", "elements": ' + deep + "}}", encoding="utf-8")
    with pytest.raises(DocumentError) as info:
        import_file(upstream)
    assert info.value.filename == str(upstream)
    for name, text in (("a.yaml", "app: " + "[" * 5000 + "]" * 5000 + "\n"), ("a.json", '{"app": ' + deep + "}")):
        doc = tmp_path / name
        doc.write_text(text, encoding="utf-8")
        with pytest.raises(EditRefused, match="nested more than"):
            DocumentEditor(doc).add_identifier("main__b", "//x")


def test_eval_suites_recordings_and_traces_refuse_it(tmp_path: Path) -> None:
    from tapir.eval.suite import load_suite
    from tapir.runtime.trace import read_trace

    suite = tmp_path / "suite.yaml"
    suite.write_text("apps: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(Exception) as info:
        load_suite(suite)
    assert not isinstance(info.value, RecursionError) and "nested more than" in str(getattr(info.value, "render",
                                                                                             info.value.__str__)())
    trace = tmp_path / "run.jsonl"
    trace.write_text('{"a": 1}\n' + "[" * 5000 + "]" * 5000 + "\n{}\n", encoding="utf-8")
    with pytest.raises(DocumentError) as deep:
        read_trace(trace)
    assert deep.value.filename == str(trace)


def test_the_language_service_reports_it_on_the_doc_line(tmp_path: Path) -> None:
    (tmp_path / "app.json").write_text(_deep(2000, "lists.json"), encoding="utf-8")
    script = tmp_path / "s.tap"
    script.write_text("# doc: app.json\nprint(1)\n", encoding="utf-8")
    ws = Workspace(tmp_path)
    result = ws.check(script)
    messages = [d.message for d in result.diagnostics]
    assert any("nested more than" in m for m in messages), messages
    assert ws.complete(script, (3, 1))  # the script's own names are still offered


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _tapir(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapir", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, preexec_fn=_limit_memory)


@pytest.mark.parametrize("how", ["doc-line", "--doc"])
@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("name,levels", [("lists.json", 2000), ("flow.yaml", 2000), ("flow.yaml", 250_000),
                                          ("lists.json", 250_000)])
def test_run_and_check_end_in_a_document_error_not_an_internal_one(tmp_path: Path, command: str, how: str,
                                                                   name: str, levels: int) -> None:
    (tmp_path / name).write_text(_deep(levels, name), encoding="utf-8")
    script = tmp_path / "s.tap"
    if how == "doc-line":
        script.write_text(f"# doc: {name}\nprint(1)\n", encoding="utf-8")
        done = _tapir(command, "s.tap", cwd=tmp_path)
    else:
        script.write_text("print(1)\n", encoding="utf-8")
        done = _tapir(command, "--doc", name, "s.tap", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode not in (70, -11), out[-2000:]  # no internal error, no segfault
    assert done.returncode != 0 and "nested more than" in out and "Traceback" not in out, out[-2000:]
    assert "internal error" not in out


@pytest.mark.parametrize("name", ["lists.json", "flow.yaml"])
def test_doc_validate_says_the_same(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(_deep(2000, name), encoding="utf-8")
    done = _tapir("doc", "validate", name, cwd=tmp_path)
    assert done.returncode == 1 and "nested more than" in done.stdout + done.stderr


def test_the_language_server_answers_requests_on_the_script(tmp_path: Path) -> None:
    from test_lsp_robustness import SERVER, Peer

    (tmp_path / "app.json").write_text(_deep(3000, "lists.json"), encoding="utf-8")
    script = tmp_path / "s.tap"
    text = "# doc: app.json\nx = 1\nprint(x)\n"
    script.write_text(text, encoding="utf-8")
    proc = subprocess.Popen([*SERVER, "--log-file", str(tmp_path / "server.log")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit_memory)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        peer = Peer(proc.stdout, proc.stdin)
        peer.initialize(tmp_path)
        peer.open(script.as_uri(), text)
        answer = peer.hover(5, script.as_uri(), 2, 6)
        assert "(variable) x" in answer["result"]["contents"]["value"]
        log = (tmp_path / "server.log").read_text(encoding="utf-8")
        assert "RecursionError" not in log and "Traceback" not in log
    finally:
        proc.kill()
        proc.wait(10)
        assert proc.stderr is not None
        assert b"Traceback" not in proc.stderr.read()

