"""Print a run's plan without a server (python -m artifact.workloads plan CAMPAIGN --run ID).

A prompt run's plan is read from its written prompt set (``doit prompts`` draws one). A workload
run's turns are counted on the server's own tokenizer, which this command never starts: it
prints the plan the campaign recorded for the same spec (``<runs>/<run>/sessions.jsonl``), or
says in one line that there is none yet.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from artifact import paths, records
from artifact.errors import SessionError, SpecError, cli
from artifact.spec import Campaign, RunSpec, load_campaign
from artifact.workloads.runplan import Inputs, RunPlan, inputs, plan, round_order
from artifact.workloads.sessionplan import session_from_json

# Where the campaign writes runs by default, and where the study keeps its workload runs.
RUN_FOLDERS = (paths.RUNS, paths.WORKLOAD_RUNS, paths.REALISM_RUNS)
SHORT = 60  # characters of text shown without --full


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.workloads",
                                 description="Workload planning: what a run sends, in order.")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="print a run's plan: its requests in order, with ids, "
                       "budgets and text", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("campaign", type=Path, help="campaign file, e.g. experiments/campaigns/"
                   "cpu-study.toml")
    p.add_argument("--run", required=True, metavar="ID", help="the run whose plan to print")
    p.add_argument("--full", action="store_true", help="every text whole (default: the first "
                   f"{SHORT} characters, on one line)")
    p.add_argument("--runs-dir", type=Path, action="append", default=None, metavar="DIR",
                   help="workload runs: where to look for the recorded plan (repeatable; "
                   "default: " + ", ".join(paths.shown(f) for f in RUN_FOLDERS) + ")")
    args = ap.parse_args(argv)
    camp = load_campaign(args.campaign)
    try:
        spec = camp.run(args.run)
    except KeyError:
        raise SpecError(f"{paths.shown(args.campaign)}: no run {args.run!r} (runs: "
                        f"{', '.join(r.run_id for r in camp.runs)})") from None
    if spec.workload is None:
        got = plan(spec)
    else:
        got = recorded_plan(spec, args.runs_dir or list(RUN_FOLDERS))
    for line in lines(camp, spec, got, full=args.full):
        print(line)
    return 0


def recorded_plan(spec: RunSpec, folders: list[Path]) -> RunPlan:
    """The plan a workload run recorded for this very spec (its ``sessions.jsonl``), from the
    first of ``folders`` that holds one; else one line saying why none can be printed."""
    for root in folders:
        run = root / spec.run_id
        try:
            config = records.read_json(run / records.CONFIG)
        except records.RecordError:
            continue
        if config.get("spec_sha256") != spec.sha256 or not (run / records.SESSIONS).exists():
            continue
        read = records.read_jsonl(run / records.SESSIONS)
        summary = {"read_from": paths.shown(run / records.SESSIONS)}
        return RunPlan(inputs=inputs(spec), sessions=[session_from_json(r) for r in read.rows],
                       summary=summary)
    raise SessionError(
        f"run {spec.run_id}: a workload run's turns are planned on the server's tokenizer "
        "(their token counts), which this command does not start: the campaign plans it when "
        "the run starts, into <runs>/<run>/sessions.jsonl, and none is recorded for this spec "
        f"under {', '.join(paths.shown(f) for f in folders)} (--runs-dir DIR looks elsewhere)")


def _short(text: str) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= SHORT else flat[:SHORT - 1] + "…"


def _set(i: Inputs, what: str) -> str:
    return f"{what} {i.name} (sha256 {i.sha256[:12]}, {i.n} in the set)"


def _pos(spec: RunSpec, group: list[str], repeat: int, prompt_id: str) -> str:
    """This run's place in the seeded round of its interleave group, e.g. ``3/9``."""
    if not group or spec.interleave is None:
        return "-"
    order = round_order(spec.interleave, spec.seed, repeat, prompt_id, group)
    return f"{order.index(spec.run_id) + 1}/{len(group)}"


def lines(campaign: Campaign, spec: RunSpec, p: RunPlan, *, full: bool = False) -> Iterator[str]:
    """The plan as text: a header, then one line per request (or per turn) in the order sent,
    its text cut short; with ``full``, each text whole under its line (a turn's: every message
    it sends)."""
    if spec.workload is None:
        group = [s.run_id for s in campaign.runs
                 if spec.interleave is not None and s.interleave == spec.interleave]
        yield (f"# run {spec.run_id}: {_set(p.inputs, 'prompt set')}, {spec.repeats} "
               f"repeat(s): {len(p.requests)} requests")
        if group:
            yield (f"# interleave group {spec.interleave}: each request goes to the group's "
                   f"{len(group)} runs in a seeded order; pos = this run's place in it")
        yield f"{'#':>4}  {'id':34s} {'rep':>3} {'n_predict':>9} {'seed':>6} {'pos':>5}  text"
        for i, r in enumerate(p.requests, 1):
            head = (f"{i:4d}  {r.prompt.id:34s} {r.repeat:3d} {r.n_predict:9d} {r.seed:6d} "
                    f"{_pos(spec, group, r.repeat, r.prompt.id):>5}")
            yield f"{head}\n{r.prompt.text}\n" if full else f"{head}  {_short(r.prompt.text)}"
        return
    sides = [name for name, _ in spec.workload.played()]
    n_turns = sum(len(s.turns) for s in p.sessions)
    yield (f"# run {spec.run_id}: {_set(p.inputs, 'session set')}, sides {', '.join(sides)}: "
           f"{len(p.sessions)} sessions, {n_turns} turns (recorded: {p.summary['read_from']})")
    yield (f"{'#':>4}  {'side:session':40s} {'turn':>4} {'prompt_tok':>10} {'n_predict':>9}  "
           "text (the turn's user message)")
    i = 0
    for s in sorted(p.sessions, key=lambda s: s.order):
        for t in s.turns:
            i += 1
            head = f"{i:4d}  {s.key:40s} {t.turn:4d} {t.prompt_tokens:10d} {t.n_predict:9d}"
            if not full:
                yield f"{head}  {_short(s.users[t.turn])}"
                continue
            yield head
            for m in s.messages(t.turn):
                yield f"[{m['role']}] {m['content']}"
            yield ""


if __name__ == "__main__":
    sys.exit(main())
