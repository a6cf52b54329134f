"""The VS Code extension (editors/vscode): manifest, language configuration, client, package.

The language configuration's patterns are run by node as VS Code compiles them and compared with
Python's reading of the samples (where a block opens, where `else` closes one); the client's
launch and restart logic has node unit tests (test/*.test.js); the sources are type-checked
against the VS Code and language client typings; ``vsce package`` must produce a .vsix holding
exactly what VS Code loads. The packaged client itself runs in node against a stand-in for the
`vscode` module (test/fake-vscode.js) and a real language server process
(tests/lsp_stub_server.py behind a `tapir` script): it starts the server, shows its diagnostics,
restarts it when it is killed, gives up after too many deaths, and explains failures.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tokenize
import zipfile
from pathlib import Path
from typing import Any

import pytest
from vscode_support import REPO, VSCODE, probe, run_node

SAMPLES = sorted((REPO / "samples").glob("**/*.tap"))
PACKAGE = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    return npm


# ---------------------------------------------------------------------------------------------
# The manifest


def test_manifest_declares_the_language_grammar_and_client() -> None:
    contributes = PACKAGE["contributes"]
    (language,) = contributes["languages"]
    assert language["id"] == "tapir" and language["extensions"] == [".tap"]
    assert (VSCODE / language["configuration"]).is_file()
    (grammar,) = contributes["grammars"]
    assert grammar["language"] == "tapir" and grammar["scopeName"] == "source.tapir"
    assert json.loads((VSCODE / grammar["path"]).read_text(encoding="utf-8"))["scopeName"] == "source.tapir"
    assert PACKAGE["main"] == "./dist/extension.js"
    assert "onLanguage:tapir" in PACKAGE["activationEvents"]
    assert "vscode-languageclient" in PACKAGE["dependencies"]
    # the typings must not promise an API newer than the VS Code versions the extension accepts
    engine = PACKAGE["engines"]["vscode"].lstrip("^~")
    assert PACKAGE["devDependencies"]["@types/vscode"].lstrip("^~") <= engine


def test_every_command_is_registered_and_every_setting_is_read() -> None:
    source = (VSCODE / "src" / "extension.js").read_text(encoding="utf-8")
    for command in PACKAGE["contributes"]["commands"]:
        assert f'registerCommand("{command["command"]}"' in source, command
    for key in PACKAGE["contributes"]["configuration"]["properties"]:
        if key == "tapir.trace.server":  # read by vscode-languageclient itself, from the client id
            assert 'const CLIENT_ID = "tapir"' in source
            continue
        assert key.startswith("tapir.server.")
        assert f'config.get("{key.removeprefix("tapir.server.")}"' in source, key


def test_every_setting_and_command_is_documented() -> None:
    readme = (VSCODE / "README.md").read_text(encoding="utf-8")
    guide = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    for key in PACKAGE["contributes"]["configuration"]["properties"]:
        assert f"`{key}`" in readme and f"`{key}`" in guide, key
    for command in PACKAGE["contributes"]["commands"]:
        assert command["command"] in readme and command["title"] in guide, command


def test_settings_that_choose_what_runs_are_restricted_in_untrusted_workspaces() -> None:
    restricted = set(PACKAGE["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"])
    assert restricted == {"tapir.server.path", "tapir.server.args", "tapir.server.env"}
    properties = PACKAGE["contributes"]["configuration"]["properties"]
    assert all(properties[key]["scope"] == "machine-overridable" for key in restricted)


# ---------------------------------------------------------------------------------------------
# The language configuration, against Python's reading of the samples


def _block_lines(text: str) -> tuple[set[int], set[int], set[int]]:
    """0-based lines that open a block (a one-line header followed by an indented body), that
    start with `elif`/`else`, and that end a block's flow (`return`, `break`, `continue`, `pass`)."""
    opens, continues, leaves = set(), set(), set()
    toks = list(tokenize.generate_tokens(io.StringIO(text.replace("$", "Ж")).readline))
    logical: list[tokenize.TokenInfo] = []
    for i, t in enumerate(toks):
        if t.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            words = [x for x in logical if x.type not in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL,
                                                          tokenize.COMMENT)]
            if words:
                first, last, line = words[0], words[-1], words[0].start[0] - 1
                one_line = first.start[0] == last.end[0]
                following = next((x for x in toks[i + 1:] if x.type not in (tokenize.NL, tokenize.COMMENT)), None)
                if one_line and last.string == ":" and following is not None and following.type == tokenize.INDENT:
                    opens.add(line)
                if first.string in ("elif", "else") and last.string == ":":
                    continues.add(line)
                if first.string in ("return", "break", "continue", "pass") and first.start[1] > 0:
                    leaves.add(line)
            logical = []
        else:
            logical.append(t)
    return opens, continues, leaves


EXTRA_LINES = """\
def f(a, b=1):
    if x:  # note: the comment has a colon
        return a
    elif y:
        pass
    else:
        break
x = {"a": 1}
if x  # note: not a header
passed = 1
"""


def test_indentation_rules_open_and_close_blocks_where_python_does(npm_deps: Path) -> None:
    texts = [p.read_text(encoding="utf-8") for p in SAMPLES] + [EXTRA_LINES]
    lines = [line for text in texts for line in text.split("\n")]
    answer = probe("language-configuration", {"lines": lines})
    offset = 0
    for text in texts:
        n = text.count("\n") + 1
        if text is EXTRA_LINES:  # not Python (the 'if' without ':'): expected by hand
            opens, continues, leaves = {0, 1, 3, 5}, {3, 5}, {2, 4, 6}
        else:
            opens, continues, leaves = _block_lines(text)
        for i in range(n):
            line = lines[offset + i]
            assert answer["increase"][offset + i] == (i in opens), f"increaseIndentPattern on {line!r}"
            assert answer["decrease"][offset + i] == (i in continues), f"decreaseIndentPattern on {line!r}"
            assert answer["outdentAfter"][offset + i] == (i in leaves), f"outdent onEnterRule on {line!r}"
        offset += n
    assert sum(answer["increase"]) >= 15  # the samples have blocks enough for this to mean something


def test_word_pattern_keeps_element_references_whole(npm_deps: Path) -> None:
    cases = {
        "tap($songs_screen__song_list)": ["tap", "$songs_screen__song_list"],
        "$settings__font_size_150%.tap()": ["$settings__font_size_150%", "tap"],
        "tap($home:search_box)": ["tap", "$home:search_box"],
        "for x in $list: pass": ["for", "x", "in", "$list", "pass"],
        "$écran__bouton.tap()": ["$écran__bouton", "tap"],
        "x = 1.5 + count_2": ["x", "1.5", "count_2"],
    }
    element = re.compile(r"\$[\w%]+(?::[^\W\d][\w%]*)?")
    sample_lines = [line for p in SAMPLES for line in p.read_text(encoding="utf-8").split("\n") if "$" in line]
    answer = probe("language-configuration", {"lines": [], "words": list(cases) + sample_lines})
    assert answer["words"][: len(cases)] == list(cases.values())
    for line, words in zip(sample_lines, answer["words"][len(cases):], strict=True):
        for ref in element.findall(line):
            assert ref in words, (line, words)


def test_f_string_fields_are_code_for_brackets_and_quotes(npm_deps: Path) -> None:
    """package.json's tokenTypes makes a field `other`, so VS Code matches brackets and closes
    quotes there as in code; the rest of the string stays a string, a comment a comment."""
    text = 'x = f"items: {len(xs)}"  # done'
    (line,) = probe("token-types", {"texts": [{"name": "a", "text": text}]})["a"]
    starts = [start for start, _ in line]

    def type_at(col: int) -> int:
        return line[max(i for i, s in enumerate(starts) if s <= col)][1]

    assert type_at(text.index("items")) == 2
    assert type_at(text.index("len")) == 0 and type_at(text.index("xs")) == 0
    assert type_at(text.index("done")) == 1
    assert type_at(0) == 0


# ---------------------------------------------------------------------------------------------
# The client and the package


def test_client_unit_tests_pass(npm_deps: Path) -> None:
    tests = sorted(str(p.relative_to(VSCODE)) for p in (VSCODE / "test").glob("*.test.js"))
    assert tests
    out = run_node(["--test", *tests], timeout=120).stdout
    passed = int(re.search(r"^# pass (\d+)$", out, re.M).group(1))  # type: ignore[union-attr]
    failed = int(re.search(r"^# fail (\d+)$", out, re.M).group(1))  # type: ignore[union-attr]
    assert passed >= 10 and failed == 0, out[-3000:]


def test_sources_type_check_against_the_vscode_api(npm_deps: Path) -> None:
    done = subprocess.run(["node", "node_modules/typescript/bin/tsc", "-p", "."], cwd=VSCODE, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def vsix(npm_deps: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vsix") / "tapir.vsix"
    done = subprocess.run([_npm(), "run", "package", "--", "--out", str(out)], cwd=VSCODE, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_vsce_packs_exactly_what_vscode_loads(vsix: Path) -> None:
    assert vsix.is_file()
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        assert names == {
            "[Content_Types].xml",
            "extension.vsixmanifest",
            "extension/package.json",
            "extension/readme.md",
            "extension/LICENSE.txt",
            "extension/language-configuration.json",
            "extension/syntaxes/tapir.tmLanguage.json",
            "extension/dist/extension.js",
        }
        packed = json.loads(z.read("extension/package.json"))
        assert packed["contributes"] == PACKAGE["contributes"] and packed["main"] == PACKAGE["main"]
        grammar = "syntaxes/tapir.tmLanguage.json"
        assert z.read(f"extension/{grammar}") == (VSCODE / grammar).read_bytes()
        manifest = z.read("extension.vsixmanifest").decode()
        assert f'Id="{PACKAGE["name"]}"' in manifest and f'Version="{PACKAGE["version"]}"' in manifest
        bundle = z.read("extension/dist/extension.js").decode()
    # the language client is bundled in; `vscode` is the only module left to the host
    assert "vscode-languageclient" not in re.findall(r'require\("([^"]+)"\)', bundle)
    assert set(re.findall(r'require\("(vscode[^"]*)"\)', bundle)) == {"vscode"}
    assert vsix.stat().st_size < 1_000_000


# ---------------------------------------------------------------------------------------------
# The packaged client, run against a stand-in `vscode` module and a real server process

STUB = Path(__file__).resolve().parent / "lsp_stub_server.py"
DOCUMENT = "$songs_screen__song_list.tap()\n$songs_screen__nope.tap()\n"


@pytest.fixture(scope="module")
def packaged(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension folder as VS Code unpacks it from the .vsix."""
    folder = tmp_path_factory.mktemp("installed")
    with zipfile.ZipFile(vsix) as z:
        z.extractall(folder)
    return folder / "extension"


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A workspace whose .venv/bin/tapir runs the stand-in server."""
    tapir = tmp_path / ".venv" / "bin" / "tapir"
    tapir.parent.mkdir(parents=True)
    tapir.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STUB}" "$@"\n', encoding="utf-8")
    tapir.chmod(0o755)
    return tmp_path


def host(scenario: str, packaged: Path, workspace: Path, settings: dict[str, Any]) -> dict[str, Any]:
    request = {
        "extension": str(packaged), "workspace": str(workspace), "settings": settings,
        "document": {"path": str(workspace / "play.tap"), "text": DOCUMENT},
        "serverLog": str(workspace / "server.jsonl"),
    }
    done = subprocess.run(["node", "test/fake-host.js", scenario], cwd=VSCODE, input=json.dumps(request),
                          capture_output=True, text=True, timeout=180)
    report: dict[str, Any] = json.loads(done.stdout) if done.stdout.startswith("{") else {}
    assert done.returncode == 0 and "error" not in report, (done.stderr[-3000:], report.get("output", [])[-20:])
    return report


def test_the_client_starts_restarts_gives_up_and_stops(packaged: Path, workspace: Path) -> None:
    settings = {"tapir.server.path": ".venv/bin/tapir",
                "tapir.server.env": {"TAPIR_STUB_LOG": str(workspace / "server.jsonl"), "TAPIR_STUB_MARK": "set"}}
    report = host("lifecycle", packaged, workspace, settings)
    steps = {s["name"]: s for s in report["steps"]}
    first = report["starts"][0]
    # `tapir lsp` exactly (no `--stdio`), from the workspace-relative path, in the workspace, with the env
    assert first["argv"] == ["lsp"] and Path(first["cwd"]) == workspace and first["mark"] == "set"
    assert steps["ready"]["status"] == {"text": "Tapir: ready", "severity": 0}
    assert steps["diagnostics"]["diagnostics"] == [
        {"line": 1, "character": 0, "message": "unknown element $songs_screen__nope", "severity": 0}]
    for crash in range(1, 6):  # killed: started again, and the open document checked again
        step = steps[f"restarted after crash {crash}"]
        assert step["starts"] == 1 + crash and step["diagnostics"] == 1 and step["messages"] == 0
    gave_up = steps["gave up"]  # the sixth death within three minutes
    assert gave_up["status"] == {"text": "Tapir: server stopped", "severity": 2} and gave_up["starts"] == 6
    assert gave_up["lastMessage"]["level"] == "error" and "6 times" in gave_up["lastMessage"]["text"]
    assert gave_up["lastMessage"]["items"] == ["Restart", "Open Settings", "Show Output"]
    assert steps["restarted by command"]["starts"] == 7
    assert steps["restarted for new settings"]["argv"] == ["lsp", "--changed"]
    assert steps["unrelated setting"]["starts"] == 8
    assert steps["deactivated"]["serverAlive"] is False
    assert len(report["messages"]) == 1  # only the give-up was worth interrupting the user for


def _listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port, from the kernel's table (Linux)."""
    table = Path("/proc/net/tcp")
    if not table.is_file():
        pytest.skip("needs /proc/net/tcp")
    rows = [line.split() for line in table.read_text().splitlines()[1:]]
    return any(r[1].endswith(f":{port:04X}") and r[3] == "0A" for r in rows)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("settings", "expected"), [
    ({"tapir.server.path": "/nonexistent/tapir"}, r"'/nonexistent/tapir' was not found.*tapir\.server\.path"),
    ({"tapir.server.args": "--verbose"}, r"tapir\.server\.args must be a list of strings"),
    ({"tapir.server.path": "${env:TAPIR_NO_SUCH_VARIABLE}/bin/tapir"}, r"'/bin/tapir' was not found"),
    ({"tapir.server.tcpPort": "PORT"}, r"Nothing is listening on port \d+: start the server with `tapir lsp --tcp"),
], ids=["missing-executable", "bad-args", "empty-variable", "nothing-on-port"])
def test_a_server_that_cannot_start_gets_one_clear_message(packaged: Path, workspace: Path,
                                                            settings: dict[str, Any], expected: str) -> None:
    settings = {k: (_free_port() if v == "PORT" else v) for k, v in settings.items()}
    report = host("fails-to-start", packaged, workspace, settings)
    (message,) = report["messages"]
    assert message["level"] == "error" and re.search(expected, message["text"]), message
    assert message["items"] == ["Restart", "Open Settings", "Show Output"]
    assert report["steps"][0]["status"] == {"text": "Tapir: server stopped", "severity": 2}
    assert report["starts"] == []


def test_the_server_can_be_switched_off(packaged: Path, workspace: Path) -> None:
    report = host("disabled", packaged, workspace, {"tapir.server.enabled": False,
                                                    "tapir.server.path": ".venv/bin/tapir"})
    assert report["steps"][0]["status"]["text"] == "Tapir: server off"
    assert report["messages"] == [] and report["starts"] == []


def test_the_client_attaches_to_a_server_listening_on_tcp(packaged: Path, workspace: Path) -> None:
    port = _free_port()
    log = workspace / "server.jsonl"
    server = subprocess.Popen([sys.executable, str(STUB), "lsp", "--tcp", str(port)], cwd=workspace,
                              env={**os.environ, "TAPIR_STUB_LOG": str(log)}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _listening(port):  # not by connecting: pygls serves one connection, then exits
            assert time.monotonic() < deadline and server.poll() is None, "the stand-in server did not listen"
            time.sleep(0.1)
        report = host("tcp", packaged, workspace, {"tapir.server.tcpPort": port})
    finally:
        server.kill()
        server.wait(10)
    steps = {s["name"]: s for s in report["steps"]}
    assert steps["ready"]["status"]["text"] == "Tapir: ready"
    assert steps["diagnostics"]["diagnostics"][0]["message"] == "unknown element $songs_screen__nope"
    assert [s["argv"] for s in report["starts"]] == [["lsp", "--tcp", str(port)]]  # nothing started by VS Code
    gone = steps["server gone"]  # the user's server stopped: said once, not restarted
    assert gone["starts"] == 1 and gone["lastMessage"]["text"].endswith(f"port {port} closed the connection.")
    assert len(report["messages"]) == 1


# ---------------------------------------------------------------------------------------------
# The packaged client against the real server


@pytest.fixture()
def real_workspace(tmp_path: Path) -> Path:
    """A workspace whose .venv/bin/tapir runs the real `tapir lsp` (logging each start for the
    host, which finds the process to kill that way), with tapir.toml naming the music document."""
    tapir = tmp_path / ".venv" / "bin" / "tapir"
    tapir.parent.mkdir(parents=True)
    tapir.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "with open(os.environ['TAPIR_STUB_LOG'], 'a') as log:\n"
        "    log.write(json.dumps({'pid': os.getpid(), 'argv': sys.argv[1:], 'cwd': os.getcwd(),\n"
        "                          'mark': os.environ.get('TAPIR_STUB_MARK')}) + '\\n')\n"
        # the host's settings change adds `--changed`; the real server gets a real flag in its place
        "args = ['--debounce=40' if a == '--changed' else a for a in sys.argv[1:]]\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'tapir.cli', *args])  # (the same pid)\n",
        encoding="utf-8")
    tapir.chmod(0o755)
    shutil.copy(REPO / "samples" / "music" / "music.yaml", tmp_path / "music.yaml")
    (tmp_path / "tapir.toml").write_text('[documents]\n"*.tap" = "music.yaml"\n', encoding="utf-8")
    return tmp_path


def test_the_client_starts_restarts_and_stops_the_real_server(packaged: Path, real_workspace: Path) -> None:
    settings = {"tapir.server.path": ".venv/bin/tapir",
                "tapir.server.env": {"TAPIR_STUB_LOG": str(real_workspace / "server.jsonl"), "TAPIR_STUB_MARK": "set"}}
    report = host("lifecycle", packaged, real_workspace, settings)
    steps = {s["name"]: s for s in report["steps"]}
    assert report["starts"][0]["argv"] == ["lsp"]
    assert steps["ready"]["status"] == {"text": "Tapir: ready", "severity": 0}
    (diagnostic,) = steps["diagnostics"]["diagnostics"]
    assert (diagnostic["line"], diagnostic["character"], diagnostic["severity"]) == (1, 0, 0)
    assert "songs_screen__nope" in diagnostic["message"]
    for crash in range(1, 6):
        step = steps[f"restarted after crash {crash}"]
        assert step["starts"] == 1 + crash and step["diagnostics"] == 1 and step["messages"] == 0
    assert steps["gave up"]["status"] == {"text": "Tapir: server stopped", "severity": 2}
    assert steps["restarted by command"]["starts"] == 7
    assert steps["restarted for new settings"]["argv"] == ["lsp", "--changed"]
    assert steps["deactivated"]["serverAlive"] is False
