"""Time a full build of the paper from the analysis outputs, and a no-op rebuild.

Copies what the rendering half needs (``artifact/``, ``templates/``, ``manuscript/`` sources,
``experiments/claims.toml``) into a temporary directory with every analysis output the render
tasks read (``summary.json`` and each study's JSON, :data:`needed`): the real ones of
``experiments/analysis`` by default (``--summary`` replaces the summary), or with ``--fixture``
the test fixtures (``costmodel.json`` is computed from the committed step costs), then runs
``doit`` there twice: the first run builds everything (tables, figures, vars, tex, html, pdf,
report, manifest), the second must find nothing to do. Goal: full < 30 s, no-op < 1 s.
``--quick`` checks the benchmark works in seconds: the fixtures, tables and vars.json only.

    python benchmarks/bench_build.py [--summary PATH | --fixture] [--keep] [--quick]
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


def needed() -> list[Path]:
    """Every analysis output a render task reads (the catalogue's data files, the summary)."""
    sys.path.insert(0, str(ROOT))
    from artifact import paths
    from artifact.render import catalogue

    data = {e.data for e in (*catalogue.TABLES, *catalogue.FIGURES)}
    rest = data | {paths.ACCSPLIT, paths.WORKLOAD, paths.COSTMODEL, paths.REALISM, paths.CORE}
    return [paths.SUMMARY, *sorted(rest - {paths.SUMMARY})]  # the cost model reads the summary


def write_fixture(target: Path) -> None:
    """The test fixture for one analysis output, at ``target`` (named as in experiments/)."""
    sys.path.insert(0, str(ROOT))
    from artifact import paths

    if target.name == paths.SUMMARY.name:
        from tests.render.fixture import write_summary

        write_summary(target)
    elif target.name == paths.ACCSPLIT.name:
        from tests.render.accsplit_fixture import write_accsplit

        write_accsplit(target)
    elif target.name == paths.WORKLOAD.name:
        from tests.workload_corpus import write_workload_fixture

        if not target.exists():  # the summary's fixture writes it too
            write_workload_fixture(target)
    elif target.name == paths.REALISM.name:  # no fixture: the committed realism runs
        from artifact.analysis.realism import write_realism

        write_realism(paths.REALISM_RUNS, target)
    elif target.name == paths.COSTMODEL.name:  # no fixture: the committed step costs
        from artifact.analysis.costmodel import write

        write(paths.COST_RUNS, paths.RUNS, target.parent / paths.SUMMARY.name, target)
    elif target.name == paths.CORE.name:  # no fixture: the committed core runs
        from artifact.analysis.core import write as write_core

        write_core(paths.CORE_RUNS, target, paths.CORE_PREDICTIONS)
    else:
        raise SystemExit(f"bench_build: no fixture for {target.name}: add one to write_fixture")


def stage(dest: Path, summary: Path | None, analysis: Path | None) -> None:
    """A minimal copy of the repository with the analysis outputs in place: ``summary`` (or
    the fixture's), the other outputs from ``analysis`` (or the fixtures)."""
    for d in ("artifact", "templates"):
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "manuscript").mkdir()
    for f in ("paper.md", "references.bib"):
        shutil.copy2(ROOT / "manuscript" / f, dest / "manuscript" / f)
    shutil.copytree(ROOT / "manuscript" / "defaults", dest / "manuscript" / "defaults")
    (dest / "experiments" / "analysis").mkdir(parents=True)
    shutil.copy2(ROOT / "experiments" / "claims.toml", dest / "experiments" / "claims.toml")
    for out in needed():
        target = dest / out.relative_to(ROOT)
        source = summary if out.name == "summary.json" else (
            analysis / out.name if analysis is not None else None)
        if source is None:
            write_fixture(target)
        elif source.is_file():
            shutil.copy2(source, target)
        else:
            raise SystemExit(f"bench_build: {source}: not found (build it with `doit analysis "
                             "accsplit workload realism costmodel core`, or use --fixture)")
    shutil.rmtree(dest / "experiments" / "analysis" / "_workload_runs", ignore_errors=True)
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
    ap.add_argument("--quick", action="store_true",
                    help="check the benchmark works: the fixtures, tables and vars.json only")
    args = ap.parse_args()
    real = ROOT / "experiments" / "analysis"
    fixture = args.fixture or args.quick or not (real / "summary.json").is_file()
    analysis = None if fixture else real
    summary = args.summary or (real / "summary.json" if analysis is not None else None)
    tasks = ["tables", "manuscript:vars"] if args.quick else []
    tmp = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        stage(tmp, summary, analysis)
        print(f"summary: {summary if summary is not None else 'test fixture'}; other analysis "
              f"outputs: {analysis if analysis is not None else 'test fixtures'}")
        doit(tmp, "list")  # warm-up: byte-compile the package, start the interpreter once
        full = doit(tmp, *tasks)
        noop = doit(tmp, *tasks)
        if args.quick:
            print(f"quick: tables and vars.json built in {full:.2f} s, no-op {noop:.2f} s "
                  "(a check that the benchmark works, not a measurement)")
        else:
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
