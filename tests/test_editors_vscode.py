"""The VS Code extension (editors/vscode): manifest, language configuration, client, package.

The language configuration's patterns are run by node as VS Code compiles them and compared with
Python's reading of the samples (where a block opens, where `else` closes one); the client's
launch and restart logic has node unit tests (test/*.test.js); the sources are type-checked
against the VS Code and language client typings; ``vsce package`` must produce a .vsix holding
exactly what VS Code loads.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tokenize
import zipfile
from pathlib import Path

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
