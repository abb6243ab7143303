"""Time a full build of the paper from summary.json, and a no-op rebuild.

Copies what the rendering half needs (``artifact/``, ``templates/``, ``manuscript/`` sources,
``experiments/claims.toml``) into a temporary directory with a summary (the real
``experiments/analysis/summary.json`` by default, another with ``--summary``, the test fixture
with ``--fixture``), then runs
``doit`` there twice: the first run builds everything (tables, figures, vars, tex, html, pdf,
report, manifest), the second must find nothing to do. Goal: full < 30 s, no-op < 1 s.

    python benchmarks/bench_build.py [--summary PATH | --fixture] [--keep]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DODO = '''\
from artifact.render.tasks import (  # noqa: F401
    task_figures, task_manifest, task_manuscript, task_tables, task_verify,
)
DOIT_CONFIG = {"backend": "sqlite3", "dep_file": ".doit.db", "verbosity": 0}
'''


def stage(dest: Path, summary: Path | None) -> None:
    """A minimal copy of the repository with a summary in place."""
    for d in ("artifact", "templates"):
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "manuscript").mkdir()
    for f in ("paper.md", "references.bib"):
        shutil.copy2(ROOT / "manuscript" / f, dest / "manuscript" / f)
    shutil.copytree(ROOT / "manuscript" / "defaults", dest / "manuscript" / "defaults")
    (dest / "experiments" / "analysis").mkdir(parents=True)
    shutil.copy2(ROOT / "experiments" / "claims.toml", dest / "experiments" / "claims.toml")
    target = dest / "experiments" / "analysis" / "summary.json"
    if summary is not None:
        shutil.copy2(summary, target)
    else:
        sys.path.insert(0, str(ROOT))
        from tests.render.fixture import write_summary

        write_summary(target)
    (dest / "dodo.py").write_text(DODO, encoding="utf-8")


def doit(cwd: Path, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", *args], cwd=cwd, check=True,
                   env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin",
                        **_passthrough()})
    return time.perf_counter() - t0


def _passthrough() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items()
            if k in ("HOME", "SPECDEC_PDF_ENGINE", "LANG", "LC_ALL")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--summary", type=Path, default=None,
                    help="summary.json to build from (default: experiments/analysis/summary.json)")
    ap.add_argument("--fixture", action="store_true", help="build from the test fixture")
    ap.add_argument("--keep", action="store_true", help="keep the build directory")
    args = ap.parse_args()
    summary = args.summary
    if summary is None and not args.fixture:
        real = ROOT / "experiments" / "analysis" / "summary.json"
        summary = real if real.is_file() else None
    tmp = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        stage(tmp, summary)
        print(f"summary: {summary if summary is not None else 'test fixture'}")
        doit(tmp, "list")  # warm-up: byte-compile the package, start the interpreter once
        full = doit(tmp)
        noop = doit(tmp)
        engine = (tmp / "manuscript" / "build" / "engine.txt").read_text().strip()
        print(f"full build: {full:.2f} s (pdf: {engine})")
        print(f"no-op:      {noop:.2f} s")
        if args.keep:
            print(f"kept: {tmp}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
