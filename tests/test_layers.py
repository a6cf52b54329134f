"""The layer rule: grammar -> dsl -> runtime.hierarchy -> docgen -> service -> runtime -> codegen, lsp, repl, runner
-> eval -> synth -> cli.

Nothing imports upward. ``runtime.hierarchy`` (reading UI dumps) sits below the documents so that
documents can be built from recorded hierarchies; ``service`` is the language service (workspace,
configuration) that the command line, the server, the REPL and the code generator share;
``runner`` runs test scripts on device pools (``tapir test``, the pytest plugin), ``eval``
shares its device pool, and ``synth`` (training-data synthesis) judges pairs the way ``eval`` does.

``runtime.sim``, the simulated phone, sits under everything and imports nothing of Tapir: it may
only offer what a phone offers (adb services, dumps, screenshots), so that Tapir is tested
against a device, not against itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each layer may import itself and the layers listed before it; top-level layers are peers
# that must not import each other.
# A dotted key is a sub-layer of its package: the longest key that prefixes a module decides.
RANK: dict[str, float] = {
    "runtime.sim": -1, "grammar": 0, "dsl": 1, "runtime.hierarchy": 1.5, "docgen": 2, "service": 2.5, "runtime": 3,
    "codegen": 4, "lsp": 4, "repl": 4, "runner": 4, "eval": 4.5, "synth": 4.75, "cli": 5,
}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tapir" or len(parts) < 2:
        return None
    for n in range(len(parts) - 1, 0, -1):
        key = ".".join(parts[1 : n + 1])
        if key in RANK:
            return key
    return None


def _layer_of_path(path: Path) -> str | None:
    rel = path.relative_to(ROOT).with_suffix("")
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
    out: list[tuple[str, Path]] = []
    for top in sorted({key.split(".")[0] for key in RANK}):
        folder = ROOT / top
        if folder.is_dir():
            out += [(layer, p) for p in sorted(folder.rglob("*.py")) if (layer := _layer_of_path(p))]
    return out


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


def test_sub_layers_are_told_apart() -> None:
    assert _layer_of("tapir.runtime.hierarchy.parse") == "runtime.hierarchy"
    assert _layer_of("tapir.runtime.grounding") == "runtime"
    assert _layer_of_path(ROOT / "runtime" / "hierarchy" / "model.py") == "runtime.hierarchy"
    assert _layer_of_path(ROOT / "cli" / "run.py") == "cli"


def test_the_simulator_imports_nothing_of_tapir_but_itself() -> None:
    """Stated on its own (the rank above implies it): a phone knows nothing of Tapir."""
    outside = []
    for path in sorted((ROOT / "runtime" / "sim").rglob("*.py")):
        for lineno, module in _imports(path):
            if module.split(".")[0] == "tapir" and not module.startswith("tapir.runtime.sim"):
                outside.append(f"{path.relative_to(ROOT)}:{lineno}: {module}")
    assert not outside, "the simulator imports Tapir:\n" + "\n".join(outside)
    assert _layer_of("tapir.runtime.sim.launch") == "runtime.sim"
    assert RANK["runtime.sim"] < min(rank for layer, rank in RANK.items() if layer != "runtime.sim")
