"""The layer rule: one layer per package, each importing only the layers below it.

    sim -> core -> grammar, hierarchy -> dsl -> docgen -> service -> runtime -> run
        -> codegen, lsp, repl, runner, inspector -> eval -> synth -> cli

``sim``, the simulated phone, sits under everything and imports nothing of Tapir: it may only
offer what a phone offers (adb services, dumps, screenshots), so that Tapir is tested against a
device, not against itself. ``core`` is what every layer shares: errors, diagnostics, positions,
the app document model, element kinds, safety settings and secrets. ``hierarchy`` reads UI dumps
(below the documents, so that documents can be built from recordings); ``dsl`` is the language;
``docgen`` loads, imports and builds documents; ``service`` is the language service that the
command line, the server, the REPL and the code generator share; ``runtime`` drives a device;
``run`` is the one way to run a script (``tapir.run.Runner``), which every front end above it
calls; ``eval`` shares the runner's device pool, and ``synth`` judges pairs the way ``eval`` does.

Layers of the same rank are peers: they must not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "tapir"

RANK: dict[str, int] = {
    "sim": 0, "core": 1, "grammar": 2, "hierarchy": 2, "dsl": 3, "docgen": 4, "service": 5, "runtime": 6, "run": 7,
    "codegen": 8, "lsp": 8, "repl": 8, "runner": 8, "inspector": 8, "eval": 9, "synth": 10, "cli": 11,
}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tapir" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in RANK else None


def _layer_of_path(path: Path) -> str | None:
    rel = path.relative_to(PACKAGE).with_suffix("")
    return _layer_of("tapir." + ".".join(rel.parts))


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _files() -> list[tuple[str, Path]]:
    return [(layer, p) for p in sorted(PACKAGE.rglob("*.py")) if (layer := _layer_of_path(p))]


def test_every_package_is_a_layer() -> None:
    """No package escapes the rule: each folder under ``src/tapir`` is a layer of its own."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders == set(RANK), f"packages without a rank: {folders - set(RANK)}; ranks without a package: " \
                                 f"{set(RANK) - folders}"


def test_layers_import_only_downward() -> None:
    violations = []
    for layer, path in _files():
        for lineno, module in _imports(path):
            target = _layer_of(module)
            if target is None or target == layer:
                continue
            if RANK[target] >= RANK[layer]:
                violations.append(f"{path.relative_to(ROOT)}:{lineno}: {layer} imports {module}")
    assert not violations, "imports against the layer rule:\n" + "\n".join(violations)


def test_no_relative_imports_cross_layers() -> None:
    """Relative imports would hide layer crossings from the check above, so none may climb out."""
    bad = []
    for _, path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 1:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "relative imports that leave their package: " + ", ".join(bad)


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    """Guard against a vacuous check: an upward import in a sample file is detected."""
    sample = tmp_path / "x.py"
    sample.write_text("from tapir.runtime import device\n")
    assert [m for _, m in _imports(sample) if _layer_of(m) == "runtime"]
    assert RANK["runtime"] > RANK["core"]


def test_layers_are_packages() -> None:
    assert _layer_of("tapir.hierarchy.parse") == "hierarchy"
    assert _layer_of("tapir.runtime.grounding") == "runtime"
    assert _layer_of_path(PACKAGE / "hierarchy" / "model.py") == "hierarchy"
    assert _layer_of_path(PACKAGE / "cli" / "run.py") == "cli"
    assert all(isinstance(rank, int) for rank in RANK.values())


def test_the_simulator_imports_nothing_of_tapir_but_itself() -> None:
    """Stated on its own (the rank above implies it): a phone knows nothing of Tapir."""
    outside = []
    for path in sorted((PACKAGE / "sim").rglob("*.py")):
        for lineno, module in _imports(path):
            if module.split(".")[0] == "tapir" and not module.startswith("tapir.sim"):
                outside.append(f"{path.relative_to(ROOT)}:{lineno}: {module}")
    assert not outside, "the simulator imports Tapir:\n" + "\n".join(outside)
    assert RANK["sim"] < min(rank for layer, rank in RANK.items() if layer != "sim")
