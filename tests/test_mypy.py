"""mypy, with the project's configuration (pyproject.toml), passes on the language (dsl/), the
language service (service/) and the language server (lsp/): their types are what the tools
and editors build on."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_passes_on_dsl_service_and_lsp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    # mypy cannot follow the editable install's import hook: it is shown the sources as `tapir`
    # through MYPYPATH (as tests/test_docgen_pages.py does), with the project's own config.
    (tmp_path / "tapir").symlink_to(REPO, target_is_directory=True)
    monkeypatch.setenv("MYPYPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out, err, status = mypy_api.run([
        "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"),
        "-p", "tapir.dsl", "-p", "tapir.service", "-p", "tapir.lsp",
    ])
    assert status == 0, out + err
    assert "Success: no issues found" in out


@pytest.mark.slow
def test_mypy_passes_on_repl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The REPL (repl/, cli/repl.py) is mypy clean; the runtime below it is not yet, so the
    modules it imports are read for their types but their own errors are not reported here."""
    mypy_api = pytest.importorskip("mypy.api")
    (tmp_path / "tapir").symlink_to(REPO, target_is_directory=True)
    monkeypatch.setenv("MYPYPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out, err, status = mypy_api.run([
        "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"),
        "--follow-imports", "silent", "-p", "tapir.repl", "-m", "tapir.cli.repl",
    ])
    assert status == 0, out + err
    assert "Success: no issues found" in out


#: Modules of the test runner (issue 10), checked in the files they own: mypy follows their
#: imports into the runtime, whose simulator toolkit does not pass yet (tapir/runtime/sim/).
RUNNER_FILES = ("tapir/runner/", "tapir/cli/test.py", "tapir/cli/common.py", "tapir/runtime/screenshots.py",
                "tapir/runtime/borrowed.py", "tapir/runtime/connect.py", "tapir/runtime/call_trace.py",
                "tapir/service/run_settings.py")


@pytest.mark.slow
def test_mypy_passes_on_the_test_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    (tmp_path / "tapir").symlink_to(REPO, target_is_directory=True)
    monkeypatch.setenv("MYPYPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out, err, status = mypy_api.run([
        "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"),
        "-p", "tapir.runner", "-m", "tapir.cli.test", "-m", "tapir.runtime.screenshots",
        "-m", "tapir.runtime.borrowed",
    ])
    assert "Success" in out or "Found" in out, out + err  # it ran to its end
    ours = [line for line in out.splitlines() if line.startswith(RUNNER_FILES)]
    assert not ours, "\n".join(ours)


@pytest.mark.slow
def test_mypy_passes_on_the_inspector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inspector and recorder (inspector/, cli/inspect.py, cli/record.py) and what they added to
    the runtime (getevent parsing) are mypy clean; the modules they import are read for their
    types only, as for the REPL."""
    mypy_api = pytest.importorskip("mypy.api")
    pytest.importorskip("starlette")
    (tmp_path / "tapir").symlink_to(REPO, target_is_directory=True)
    monkeypatch.setenv("MYPYPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out, err, status = mypy_api.run([
        "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"),
        "--follow-imports", "silent", "-p", "tapir.inspector", "-m", "tapir.cli.inspect", "-m", "tapir.cli.record",
        "-m", "tapir.runtime.input_events",
    ])
    assert status == 0, out + err
    assert "Success: no issues found" in out
