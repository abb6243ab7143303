"""Two builds of the pinned llama.cpp in two different folders give the same bytes.

Builds ``llama-server`` and ``llama-quantize`` twice from the pinned sdist (``artifact.toolchain``),
each into its own empty cache and with its own temporary build folder (``TMPDIR``), one after the
other, and compares the sha256 of each binary. Prints both digests and the compiler, exits 1 when
they differ. Takes two toolchain builds (about 2 x 12 minutes on 2 cores).

Usage: ``python scripts/check_toolchain_reproducible.py [--jobs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(into: Path, jobs: int) -> dict[str, str]:
    """One build in a fresh cache under ``into`` (its own TMPDIR); the stamp's digests."""
    cache, tmp = into / "cache", into / "tmp"
    tmp.mkdir(parents=True)
    env = {**os.environ, "SPECDEC_CACHE": str(cache), "TMPDIR": str(tmp)}
    code = ("import sys; from artifact import toolchain as t; "
            f"t.ensure_llama(jobs={jobs}); print(t.llama_dir())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    stamp = json.loads((Path(out) / "stamp.json").read_text())
    print(f"  {into.name}: compiler {stamp.get('compiler')}")
    return dict(stamp["sha256"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="specdec-repro-") as d:
        a = build(Path(d) / "first-path", args.jobs)
        b = build(Path(d) / "second-path-longer-name", args.jobs)
    same = a == b
    for t in sorted(a):
        print(f"{t}: {a[t]} | {b.get(t)} {'same' if a[t] == b.get(t) else 'DIFFERENT'}")
    print("the two builds are byte-identical" if same else "the two builds differ")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
