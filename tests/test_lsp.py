"""The language server end to end: the real `tapir lsp` in a subprocess, driven by pytest-lsp's
client over stdio, one test per feature (the service's answers themselves are tested in
tests/test_service.py; these check that they reach an editor, in its positions and types)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client
from test_service import DOC, cursor

SERVER = [sys.executable, "-m", "tapir.cli", "lsp", "--debounce", "20"]
pytestmark = pytest.mark.asyncio(loop_scope="module")


class Recorder:
    """What the server sent besides answers: every publishDiagnostics (with its version) and
    every capability it registered."""

    def __init__(self) -> None:
        self.published: list[T.PublishDiagnosticsParams] = []
        self.registrations: list[T.Registration] = []


def make_client() -> LanguageClient:
    client = make_test_lsp_client()
    record = Recorder()
    original = client.protocol.fm.features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def on_publish(params: T.PublishDiagnosticsParams) -> None:
        record.published.append(params)
        original(params)

    client.protocol.fm.features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish

    @client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: T.RegistrationParams) -> None:
        record.registrations += params.registrations

    client.record = record  # type: ignore[attr-defined]
    return client


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "shop.yaml").write_text(DOC, encoding="utf-8")
    return root


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def client(lsp_client: LanguageClient, project: Path) -> AsyncIterator[None]:
    result = await lsp_client.initialize_session(T.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=project.as_uri(),
        workspace_folders=[T.WorkspaceFolder(project.as_uri(), "project")]))
    lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def recorder(client: LanguageClient) -> Recorder:
    found: Recorder = client.record  # type: ignore[attr-defined]
    return found


async def published(client: LanguageClient, uri: str, version: int | None = None, after: int = 0,
                    timeout: float = 20) -> list[T.Diagnostic]:
    """The diagnostics the server publishes for ``uri`` (at ``version``), waiting for them;
    ``after`` skips what was published before (an index into the record)."""
    record = recorder(client)
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for params in record.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return list(params.diagnostics)
        assert asyncio.get_running_loop().time() < deadline, f"no diagnostics for {uri} v{version}"
        await asyncio.sleep(0.02)


def open_script(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "tapir", version, text)))
    return uri


def doc_id(uri: str) -> T.TextDocumentIdentifier:
    return T.TextDocumentIdentifier(uri)


def pos(at: tuple[int, int]) -> T.Position:
    """A 1-based (line, column) as an LSP position (ASCII text: columns are UTF-16 units)."""
    return T.Position(at[0] - 1, at[1] - 1)


def replace_all(uri: str, version: int, text: str) -> T.DidChangeTextDocumentParams:
    return T.DidChangeTextDocumentParams(T.VersionedTextDocumentIdentifier(version=version, uri=uri),
                                         [T.TextDocumentContentChangeWholeDocument(text=text)])


# ---------------------------------------------------------------------------------------------
# Capabilities


async def test_the_server_announces_every_feature_with_utf16_positions(client: LanguageClient) -> None:
    caps: T.ServerCapabilities = client.server_capabilities  # type: ignore[attr-defined]
    assert caps.position_encoding in (None, T.PositionEncodingKind.Utf16)
    assert caps.completion_provider is not None
    assert set(caps.completion_provider.trigger_characters or []) >= {"$", ".", '"', "_"}
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_symbol_provider and caps.document_formatting_provider
    assert caps.signature_help_provider is not None and "(" in (caps.signature_help_provider.trigger_characters or [])
    assert caps.code_action_provider
    assert caps.semantic_tokens_provider is not None
    sync = caps.text_document_sync
    assert isinstance(sync, T.TextDocumentSyncOptions) and sync.change == T.TextDocumentSyncKind.Incremental


async def test_the_server_asks_to_be_told_of_document_and_tapir_toml_changes(client: LanguageClient) -> None:
    for _ in range(400):
        if recorder(client).registrations:
            break
        await asyncio.sleep(0.05)
    (reg,) = recorder(client).registrations
    assert reg.method == T.WORKSPACE_DID_CHANGE_WATCHED_FILES
    watchers = reg.register_options["watchers"] if isinstance(reg.register_options, dict) else \
        reg.register_options.watchers  # type: ignore[union-attr]
    globs = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers]
    assert globs == ["**/{*.yaml,*.yml,*.json,tapir.toml}"]


# ---------------------------------------------------------------------------------------------
# Diagnostics


async def test_diagnostics_on_open_name_the_mistake_with_its_range_and_hint(client: LanguageClient,
                                                                           project: Path) -> None:
    uri = open_script(client, project / "open.tap", "# doc: shop.yaml\n$home__serch.set_text('x')\nif x\n")
    found = await published(client, uri, 1)
    by_code = {d.code: d for d in found}
    unknown = by_code["unknown-element"]
    assert unknown.range == T.Range(T.Position(1, 0), T.Position(1, 12))
    assert "home__search" in unknown.message and unknown.source == "tapir"
    assert unknown.severity == T.DiagnosticSeverity.Error
    assert by_code["syntax"].message.startswith("expected ':' after the if condition")


async def test_diagnostics_follow_changes_and_only_the_latest_version_is_published(client: LanguageClient,
                                                                                  project: Path) -> None:
    uri = open_script(client, project / "change.tap", "# doc: shop.yaml\n$home__go.tap()\n")
    assert await published(client, uri, 1) == []
    start = len(recorder(client).published)
    for version in range(2, 12):  # typed faster than the debounce: one check, of the last version
        text = f"# doc: shop.yaml\n$home__go{'x' * version}.tap()\n"
        client.text_document_did_change(replace_all(uri, version, text))
    found = await published(client, uri, 11, after=start)
    assert [d.code for d in found] == ["unknown-element"]
    await asyncio.sleep(0.3)
    versions = [p.version for p in recorder(client).published[start:] if p.uri == uri]
    # (on an idle machine only version 11; a loaded one may read the changes slower than the debounce)
    assert versions[-1] == 11 and versions == sorted(versions) and len(versions) < 10
    # an incremental change (a range) is applied like an editor's
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        T.VersionedTextDocumentIdentifier(version=12, uri=uri),
        [T.TextDocumentContentChangePartial(range=T.Range(T.Position(1, 9), T.Position(1, 20)), text="")]))
    assert await published(client, uri, 12) == []


async def test_a_document_that_fails_to_load_is_a_diagnostic_on_the_script_naming_the_problem(
        client: LanguageClient, project: Path) -> None:
    (project / "broken.yaml").write_text("app: {package: x, name: X, start_screen: s}\nscreens:\n  s:\n"
                                         "    elements:\n      s__a: {kind: teleporter}\n", encoding="utf-8")
    uri = open_script(client, project / "broken.tap", "# doc: broken.yaml\n$s__a.tap()\n")
    (problem,) = [d for d in await published(client, uri, 1) if d.code == "document"]
    assert problem.range.start.line == 0 and problem.range.start.character == 7  # the path on the `# doc:` line
    assert "broken.yaml is invalid: 6 errors" in problem.message and "(first at line" in problem.message
    related = problem.related_information or []
    assert related and {r.location.uri for r in related} == {(project / "broken.yaml").as_uri()}
    assert any("lacks the required field 'identifiers'" in r.message for r in related)
    # the document's own problems are shown in the document, where they are
    in_document = await published(client, (project / "broken.yaml").as_uri())
    assert len(in_document) == 6
    assert {d.range.start.line for d in in_document} >= {r.location.range.start.line for r in related}
    missing = open_script(client, project / "missing.tap", "# doc: nowhere.yaml\n$s__a.tap()\n")
    (problem,) = [d for d in await published(client, missing, 1) if d.code == "document-missing"]
    assert "nowhere.yaml does not exist" in problem.message


async def test_a_changed_document_checks_again_the_open_scripts_that_use_it(client: LanguageClient,
                                                                           project: Path) -> None:
    doc = project / "grows.yaml"
    doc.write_text(DOC, encoding="utf-8")
    uri = open_script(client, project / "grows.tap", "# doc: grows.yaml\n$home__cart.tap()\n")
    assert [d.code for d in await published(client, uri, 1)] == ["unknown-element"]
    # saved on disk, reported by the client's file watcher
    cart = ("      home__cart:\n        kind: button\n        description: The cart.\n"
            "        identifiers: [\"//node[@text='Cart']\"]\n")
    doc.write_text(DOC.replace("      home__go:", cart + "      home__go:"), encoding="utf-8")
    start = len(recorder(client).published)
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(
        [T.FileEvent(doc.as_uri(), T.FileChangeType.Changed)]))
    assert await published(client, uri, 1, after=start) == []
    # edited (not saved) in the editor: the unsaved text is what counts
    start = len(recorder(client).published)
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(
        doc.as_uri(), "yaml", 1, DOC)))
    assert [d.code for d in await published(client, uri, 1, after=start)] == ["unknown-element"]
    start = len(recorder(client).published)
    client.text_document_did_close(T.DidCloseTextDocumentParams(doc_id(doc.as_uri())))
    assert await published(client, uri, 1, after=start) == []


async def test_a_changed_tapir_toml_checks_every_open_script_again(client: LanguageClient, project: Path) -> None:
    sub = project / "flows"
    sub.mkdir()
    uri = open_script(client, sub / "mapped.tap", "$home__go.tap()\n")
    assert [d.code for d in await published(client, uri, 1)] == ["no-document"]
    (project / "tapir.toml").write_text('[documents]\n"flows/*.tap" = "shop.yaml"\n', encoding="utf-8")
    start = len(recorder(client).published)
    client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(
        [T.FileEvent((project / "tapir.toml").as_uri(), T.FileChangeType.Created)]))
    assert await published(client, uri, 1, after=start) == []
    (project / "tapir.toml").unlink()


# ---------------------------------------------------------------------------------------------
# Queries


async def test_completion_of_elements_methods_options_and_names(client: LanguageClient, project: Path) -> None:
    text, at = cursor("# doc: shop.yaml\ntotal = 0\n$results__|\n")
    uri = open_script(client, project / "complete.tap", text)
    answer = await client.text_document_completion_async(T.CompletionParams(doc_id(uri), pos(at)))
    assert isinstance(answer, T.CompletionList)
    labels = {i.label: i for i in answer.items}
    assert set(labels) == {"$results__items", "$results__price", "$results__sort"}
    item = labels["$results__items"]
    assert item.kind == T.CompletionItemKind.Field and item.detail == "list of button · results"
    assert isinstance(item.documentation, T.MarkupContent) and "One row per product." in item.documentation.value
    assert item.text_edit is not None and item.text_edit.range == T.Range(T.Position(2, 0), T.Position(2, 10))

    async def complete(snippet: str, version: int) -> list[T.CompletionItem]:
        text, at = cursor(snippet)
        client.text_document_did_change(replace_all(uri, version, text))
        got = await client.text_document_completion_async(T.CompletionParams(doc_id(uri), pos(at)))
        assert isinstance(got, T.CompletionList)
        return list(got.items)

    screens = await complete("# doc: shop.yaml\n$res|\n", 2)
    assert [i.label for i in screens if i.kind == T.CompletionItemKind.Module] == ["$results__"]
    methods = {i.label: i for i in await complete("# doc: shop.yaml\n$results__items.|\n", 3)}
    assert {"match", "scroll", "tap"} <= set(methods) and "set_text" not in methods
    assert methods["match"].kind == T.CompletionItemKind.Method
    options = await complete("# doc: shop.yaml\n$results__items.match(\"|\n", 4)
    assert [i.label for i in options] == ["Red shoes", "Blue hat", "Green scarf"]
    assert all(i.kind == T.CompletionItemKind.Value for i in options)
    names = {i.label: i for i in await complete("# doc: shop.yaml\ntotal = 0\nprint(to|\n", 5)}
    assert names["total"].kind == T.CompletionItemKind.Variable
    names = {i.label: i for i in await complete("# doc: shop.yaml\nle|\n", 6)}
    assert names["len"].kind == T.CompletionItemKind.Function and "len(obj" in (names["len"].detail or "")


async def test_hover_shows_the_element_from_the_document(client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "hover.tap", "# doc: shop.yaml\nrow = $results__items.match('Red shoes')\n")
    found = await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(1, 9)))
    assert found is not None and isinstance(found.contents, T.MarkupContent)
    assert found.contents.kind == T.MarkupKind.Markdown
    assert "**$results__items** — list of button · results" in found.contents.value
    assert "**Reached by:** `home__go.tap()`" in found.contents.value
    assert found.range == T.Range(T.Position(1, 6), T.Position(1, 21))
    method = await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(1, 24)))
    assert method is not None and "$list.match(query: str | dict) -> item" in method.contents.value  # type: ignore
    nothing = await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(0, 2)))
    assert nothing is None


async def test_definition_goes_to_the_element_in_the_document_and_names_to_their_binding(
        client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "define.tap",
                      "# doc: shop.yaml\ndef pick(name):\n    return $results__items.match(name)\nrow = pick('a')\n")
    (loc,) = await client.text_document_definition_async(T.DefinitionParams(doc_id(uri), T.Position(2, 16)))
    assert isinstance(loc, T.Location) and loc.uri == (project / "shop.yaml").as_uri()
    line = DOC.splitlines()[loc.range.start.line]
    assert line[loc.range.start.character : loc.range.end.character] == "results__items"
    (fn,) = await client.text_document_definition_async(T.DefinitionParams(doc_id(uri), T.Position(3, 7)))
    assert isinstance(fn, T.Location) and fn.uri == uri
    assert fn.range == T.Range(T.Position(1, 4), T.Position(1, 8))


async def test_references_list_every_use(client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "refs.tap", "row = 1\nprint(row)\nrow = row + 1\n")
    found = await client.text_document_references_async(T.ReferenceParams(
        context=T.ReferenceContext(include_declaration=True), text_document=doc_id(uri), position=T.Position(1, 7)))
    assert [(r.range.start.line, r.range.start.character) for r in found or []] == [(0, 0), (1, 6), (2, 0), (2, 6)]
    found = await client.text_document_references_async(T.ReferenceParams(
        context=T.ReferenceContext(include_declaration=False), text_document=doc_id(uri), position=T.Position(1, 7)))
    assert [(r.range.start.line, r.range.start.character) for r in found or []] == [(1, 6), (2, 6)]


async def test_document_symbols_outline_functions_and_variables(client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "outline.tap",
                      "total = 0\ndef pick(name, exact=False):\n    found = name\n    return found\n")
    symbols = await client.text_document_document_symbol_async(T.DocumentSymbolParams(doc_id(uri)))
    assert symbols is not None
    outline = [(s.name, s.kind) for s in symbols]  # type: ignore[union-attr]
    assert outline == [("total", T.SymbolKind.Variable), ("pick", T.SymbolKind.Function)]
    pick = symbols[1]
    assert isinstance(pick, T.DocumentSymbol) and pick.detail == "def pick(name, exact=False)"
    assert [c.name for c in pick.children or []] == ["name", "exact", "found"]
    assert pick.range.start.line == 1 and pick.range.end.line == 3
    assert pick.selection_range == T.Range(T.Position(1, 4), T.Position(1, 8))


async def test_signature_help_shows_the_call_and_the_active_parameter(client: LanguageClient,
                                                                      project: Path) -> None:
    text, at = cursor("# doc: shop.yaml\ndef pick(name, exact=False):\n    pass\npick('a', |)\n")
    uri = open_script(client, project / "signature.tap", text)
    found = await client.text_document_signature_help_async(T.SignatureHelpParams(doc_id(uri), pos(at)))
    assert found is not None and found.active_parameter == 1
    (sig,) = found.signatures
    assert sig.label == "def pick(name, exact=False)"
    assert [p.label for p in sig.parameters or []] == ["name", "exact=False"]


async def test_semantic_tokens_classify_elements_functions_and_keywords(client: LanguageClient,
                                                                        project: Path) -> None:
    uri = open_script(client, project / "tokens.tap", "def go(n):\n    $results__items.scroll('down')\n")
    caps: T.ServerCapabilities = client.server_capabilities  # type: ignore[attr-defined]
    legend = caps.semantic_tokens_provider.legend  # type: ignore[union-attr]
    tokens = await client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(doc_id(uri)))
    assert tokens is not None
    data = list(tokens.data)
    decoded: list[tuple[int, int, int, str, list[str]]] = []
    line = start = 0
    for i in range(0, len(data), 5):
        d_line, d_start, length, typ, mods = data[i : i + 5]
        line, start = line + d_line, (start + d_start if d_line == 0 else d_start)
        decoded.append((line, start, length, legend.token_types[typ],
                        [m for b, m in enumerate(legend.token_modifiers) if mods & (1 << b)]))
    assert (0, 0, 3, "keyword", []) in decoded
    assert (0, 4, 2, "function", ["declaration"]) in decoded
    assert (0, 7, 1, "parameter", ["declaration"]) in decoded
    assert (1, 4, 8, "namespace", []) in decoded  # `$results`
    assert (1, 14, 5, "variable", ["readonly"]) in decoded  # `items`
    assert (1, 20, 6, "method", []) in decoded
    assert (1, 27, 6, "string", []) in decoded


async def test_code_actions_replace_an_unknown_element_with_the_closest_names(client: LanguageClient,
                                                                              project: Path) -> None:
    uri = open_script(client, project / "fix.tap", "# doc: shop.yaml\n$results__itemz.tap()\n")
    diagnostics = await published(client, uri, 1)
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        doc_id(uri), T.Range(T.Position(1, 3), T.Position(1, 3)), T.CodeActionContext(diagnostics=diagnostics)))
    assert actions
    best = actions[0]
    assert isinstance(best, T.CodeAction)
    assert best.title == "Replace with $results__items" and best.is_preferred
    assert best.kind == T.CodeActionKind.QuickFix
    (edit,) = (best.edit.changes or {})[uri]  # type: ignore[union-attr]
    assert edit.range == T.Range(T.Position(1, 0), T.Position(1, 15)) and edit.new_text == "$results__items"
    assert best.diagnostics and best.diagnostics[0].code == "unknown-element"


async def test_formatting_is_tapir_fmt_and_leaves_broken_scripts_alone(client: LanguageClient,
                                                                       project: Path) -> None:
    uri = open_script(client, project / "fmt.tap", "x=1 # note\nif x :\n  print( x )\n")
    options = T.FormattingOptions(tab_size=4, insert_spaces=True)
    (edit,) = await client.text_document_formatting_async(T.DocumentFormattingParams(doc_id(uri), options)) or []
    assert edit.new_text == "x = 1  # note\nif x:\n    print(x)\n"
    assert edit.range == T.Range(T.Position(0, 0), T.Position(3, 0))
    broken = open_script(client, project / "fmt_broken.tap", "x=1\nif x\n")
    assert not await client.text_document_formatting_async(T.DocumentFormattingParams(doc_id(broken), options))


async def test_positions_are_utf16_after_an_emoji(client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "emoji.tap", "# doc: shop.yaml\nnote = '🎵'; $home__gox.tap()\n")
    (problem,) = await published(client, uri, 1)
    # '🎵' is one column to Python and two UTF-16 units to the editor
    assert problem.range == T.Range(T.Position(1, 13), T.Position(1, 23))
    found = await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(1, 16)))
    assert found is not None and "$home__gox" in found.contents.value  # type: ignore[union-attr]
    assert found.range == problem.range


async def test_a_script_too_large_to_analyse_gets_one_diagnostic_and_the_server_goes_on(
        client: LanguageClient, project: Path) -> None:
    big = "x = 1\n" * 400_000  # 2.4 MB
    uri = open_script(client, project / "huge.tap", big)
    (warning,) = await published(client, uri, 1)
    assert warning.code == "too-large" and warning.severity == T.DiagnosticSeverity.Warning
    assert await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(0, 0))) is None
    small = open_script(client, project / "after_huge.tap", "y = 2\nprint(y)\n")
    found = await client.text_document_hover_async(T.HoverParams(doc_id(small), T.Position(1, 6)))
    assert found is not None


async def test_a_failing_handler_is_logged_and_answered_and_the_server_goes_on(client: LanguageClient,
                                                                             project: Path) -> None:
    folder = project / "a_folder.tap"
    folder.mkdir()
    before = len(client.log_messages)
    answer = await client.text_document_hover_async(T.HoverParams(doc_id(folder.as_uri()), T.Position(0, 0)))
    assert answer is None
    logged = [m.message for m in client.log_messages[before:]]
    assert any("on_hover failed" in m and "is a directory" in m for m in logged), logged
    uri = open_script(client, project / "still.tap", "z = 3\nprint(z)\n")
    assert await client.text_document_hover_async(T.HoverParams(doc_id(uri), T.Position(1, 6))) is not None


async def test_closing_a_script_clears_its_diagnostics(client: LanguageClient, project: Path) -> None:
    uri = open_script(client, project / "close.tap", "print(nothing)\n")
    assert await published(client, uri, 1)
    start = len(recorder(client).published)
    client.text_document_did_close(T.DidCloseTextDocumentParams(doc_id(uri)))
    assert await published(client, uri, after=start) == []

