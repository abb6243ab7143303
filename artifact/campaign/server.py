"""The ``llama-server`` process: argv from a spec (never a shell), start, health, stop.

The server is bound to 127.0.0.1 on a free port, with ``--metrics`` and ``-lv 4`` (the verbosity
that prints per-request ``draft acceptance`` and ``acc per pos`` lines), its output appended to
the run's ``server.log``. On Linux it is tied to its parent with ``PR_SET_PDEATHSIG`` so that a
killed runner never leaves a server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from artifact.errors import ServerError as ServerError
from artifact.spec import RunSpec

LOG_VERBOSITY = 4


@dataclass(frozen=True, kw_only=True)
class ServerFiles:
    """What one run's server needs on disk."""

    binary: Path
    model: Path
    draft_model: Path | None


def build_argv(files: ServerFiles, spec: RunSpec, port: int) -> list[str]:
    """The server's argv for a run; each slot gets ``spec.ctx_size`` tokens of context.

    >>> from artifact.spec import RunSpec
    >>> s = RunSpec(run_id="r", campaign="c", family="final", target_model="m", target="t",
    ...     target_quant="Q4_1", drafter="ngram-mod", draft_model=None, draft_quant=None, k=4,
    ...     p_min=None, ctx_size=2048, temperature=0.0, top_k=40, top_p=1.0, seed=1,
    ...     n_predict=64, prompt_set="kick", concurrency=2, repeats=1, threads=2,
    ...     n_gpu_layers=0, warmup=1, timeout_s=60.0)
    >>> argv = build_argv(ServerFiles(binary=Path("ls"), model=Path("m.gguf"),
    ...     draft_model=None), s, 8080)
    >>> " ".join(argv[1:])  # doctest: +NORMALIZE_WHITESPACE
    '-m m.gguf --host 127.0.0.1 --port 8080 -c 4096 -np 2 -t 2 -ngl 0 --metrics -lv 4
     --no-webui --spec-type ngram-mod --spec-ngram-mod-n-max 4 --spec-ngram-mod-n-min 4'
    """
    argv = [
        str(files.binary),
        "-m", str(files.model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "-c", str(spec.ctx_size * slots(spec)),
        "-np", str(slots(spec)),
        "-t", str(spec.threads),
        "-ngl", str(spec.n_gpu_layers),
        "--metrics",
        "-lv", str(LOG_VERBOSITY),
        "--no-webui",
    ]
    if spec.drafter != "none":
        argv += ["--spec-type", spec.drafter]
    if files.draft_model is not None:
        argv += ["-md", str(files.draft_model), "-ngld", str(spec.n_gpu_layers)]
    if spec.k is not None:
        argv += draft_length_flags(spec.drafter, spec.k)
    if spec.p_min is not None:
        argv += ["--spec-draft-p-min", f"{spec.p_min:g}"]
    if spec.ngram_match is not None:
        argv += lookup_length_flags(spec.drafter, spec.ngram_match)
    if spec.synthetic_accept and spec.k is not None:
        argv += ["--spec-synth-rates", ",".join(["1"] * spec.k)]
    if spec.workload is not None and spec.workload.interleaved:
        # The server-wide prompt cache in RAM would let one side load another side's saved
        # state of the same conversation (REAL-B reusing REAL-A): off, so each side's slot
        # holds the only cache that side can use.
        argv += ["--cache-ram", "0"]
    return argv


def slots(spec: RunSpec) -> int:
    """Server slots of a run: one per client stream; a workload run gives each stream one slot
    per side (REAL, SYNTHETIC; or every side of the interleaved design), so that each side's
    slot keeps that side's cache."""
    return spec.concurrency * (len(spec.workload.played()) if spec.workload is not None else 1)


def draft_length_flags(drafter: str, k: int) -> list[str]:
    """The flags that set the draft length k; each drafter family has its own.

    ``--spec-draft-n-max`` only reaches the draft-model drafters: the n-gram drafters ignore it
    (ngram-mod drafts 48 to 64 tokens by default, the ngram-map/simple ones up to a 48-token
    m-gram, ngram-cache a fixed length). For ngram-mod both bounds are set, so every draft has
    exactly k tokens, as its default drafts only long matches.

    >>> draft_length_flags("ngram-mod", 4)
    ['--spec-ngram-mod-n-max', '4', '--spec-ngram-mod-n-min', '4']
    >>> draft_length_flags("ngram-map-k", 8)
    ['--spec-ngram-map-k-size-m', '8']
    """
    if drafter.startswith("draft-"):
        return ["--spec-draft-n-max", str(k)]
    if drafter == "ngram-mod":
        return ["--spec-ngram-mod-n-max", str(k), "--spec-ngram-mod-n-min", str(k)]
    if drafter in ("ngram-simple", "ngram-map-k", "ngram-map-k4v"):
        return [f"--spec-{drafter}-size-m", str(k)]
    raise ValueError(f"drafter {drafter} has no draft-length flag")


def lookup_length_flags(drafter: str, n: int) -> list[str]:
    """The flags that set an n-gram drafter's lookup length (the n-gram it matches).

    >>> lookup_length_flags("ngram-mod", 24), lookup_length_flags("ngram-simple", 4)
    (['--spec-ngram-mod-n-match', '24'], ['--spec-ngram-simple-size-n', '4'])
    """
    if drafter == "ngram-mod":
        return ["--spec-ngram-mod-n-match", str(n)]
    if drafter in ("ngram-simple", "ngram-map-k", "ngram-map-k4v"):
        return [f"--spec-{drafter}-size-n", str(n)]
    raise ValueError(f"drafter {drafter} has no lookup-length flag")


def argv_template(spec: RunSpec) -> list[str]:
    """The argv of a run with placeholders for the machine's paths and the port.

    Recorded in ``config.json``: a run is current only if it was measured with the argv that
    the code builds now, so a change in how a spec maps to flags reruns the runs it touches.
    """
    files = ServerFiles(binary=Path("llama-server"), model=Path("TARGET.gguf"),
                        draft_model=Path("DRAFT.gguf") if spec.draft_model else None)
    return build_argv(files, spec, 0)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Server:
    """One ``llama-server`` process for one run (restartable)."""

    def __init__(self, files: ServerFiles, spec: RunSpec, log_path: Path) -> None:
        self.files = files
        self.spec = spec
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mark(self, line: str) -> None:
        """Append one line of our own to the server log (runner markers)."""
        with self.log_path.open("a", encoding="utf-8") as f:
            f.write(line.rstrip("\n") + "\n")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout_s: float = 180.0) -> float:
        """Start and wait until ``/health`` answers 200; return the seconds it took."""
        self.stop()
        self.port = free_port()
        argv = build_argv(self.files, self.spec, self.port)
        t0 = time.perf_counter()
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        deadline = t0 + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while time.perf_counter() < deadline:
                if not self.alive():
                    code = self.proc.returncode if self.proc else None
                    raise ServerError(f"llama-server exited with {code} while starting; "
                                      f"see {self.log_path.name}: {self._log_tail()}")
                try:
                    if client.get(f"{self.base_url}/health").status_code == 200:
                        return time.perf_counter() - t0
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        self.stop()
        raise ServerError(f"llama-server not healthy after {timeout_s:.0f} s; "
                          f"see {self.log_path.name}")

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in lines[-3:])

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after 10 s."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
