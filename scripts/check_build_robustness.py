"""Concurrent builds and kill -9 mid-build leave no corrupt output that doit would not repair.

In a private copy of the repository (the working tree is never touched):

1. a reference build: ``doit`` from the committed runs, its ``MANIFEST.sha256`` kept;
2. concurrency: the outputs removed, three ``doit`` started at once; each must succeed, and
   every file must match the manifest, which must equal the reference;
3. kill -9: ``--trials`` times, the outputs removed (or one input touched), ``doit`` started and
   its whole process group killed with SIGKILL after a random delay, then ``doit`` run again:
   the manifest must equal the reference and every file must match it.

Prints one line per step and exits non-zero on the first failure. CI runs it (``.ci/run``).
Usage: ``python scripts/check_build_robustness.py [--trials N] [--seed S]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = Path("manuscript/build/MANIFEST.sha256")


def tracked_copy(dest: Path) -> None:
    """The tracked files of the repository (what a clean clone has), copied to ``dest``."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def doit(root: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    return subprocess.Popen([sys.executable, "-m", "doit", *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def finish(proc: subprocess.Popen[bytes], what: str) -> None:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"FAIL {what}: doit exited {proc.returncode}\n{out.decode()[-2000:]}")


def check_files(root: Path, reference: str, what: str) -> None:
    text = (root / MANIFEST).read_text(encoding="utf-8")
    if text != reference:
        sys.exit(f"FAIL {what}: MANIFEST.sha256 differs from the reference build")
    for line in text.splitlines():
        digest, name = line.split("  ", 1)
        if hashlib.sha256((root / name).read_bytes()).hexdigest() != digest:
            sys.exit(f"FAIL {what}: {name} does not match MANIFEST.sha256 (corrupt output)")


def wipe_outputs(root: Path) -> None:
    shutil.rmtree(root / "manuscript" / "build", ignore_errors=True)
    (root / "experiments" / "analysis" / "summary.json").unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=6, help="kill -9 trials (default 6)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill delays")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="specdec-robust-") as tmp:
        root = Path(tmp)
        tracked_copy(root)
        t0 = time.monotonic()
        finish(doit(root), "reference build")
        build_s = time.monotonic() - t0
        reference = (root / MANIFEST).read_text(encoding="utf-8")
        print(f"ok   reference build ({build_s:.1f} s, {len(reference.splitlines())} files)")

        wipe_outputs(root)
        procs = [doit(root) for _ in range(3)]
        for i, p in enumerate(procs):
            finish(p, f"concurrent build {i + 1} of 3")
        check_files(root, reference, "three concurrent builds")
        again = doit(root)
        out, _ = again.communicate()
        if again.returncode != 0 or "\n.  " in "\n" + out.decode():
            sys.exit("FAIL after concurrent builds: a further doit did work or failed:\n"
                     + out.decode()[-2000:])
        print("ok   three concurrent builds: one at a time, outputs whole, then up to date")

        for trial in range(1, args.trials + 1):
            if trial % 2:
                wipe_outputs(root)
            else:  # an input edited: only part of the graph reruns
                paper = root / "manuscript" / "paper.md"
                paper.write_text(paper.read_text(encoding="utf-8") + "\n", encoding="utf-8")
            delay = rng.uniform(0.2, max(0.5, build_s))
            p = doit(root)
            time.sleep(delay)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            if trial % 2 == 0:
                paper.write_text(paper.read_text(encoding="utf-8")[:-1], encoding="utf-8")
            finish(doit(root), f"rebuild after kill -9 (trial {trial})")
            check_files(root, reference, f"kill -9 trial {trial} at {delay:.1f} s")
            print(f"ok   kill -9 trial {trial} at {delay:.1f} s: rebuilt to identical bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
