"""The reproduction commands: ``reproduce`` (rerun, then compare) and ``compare A B``.

Both end with the side-by-side report (``comparison.md``/``.html``, ``claims.png`` and the
``comparison.json`` they are made from) and print one line per verdict class. Under ``strict``
a hardware-independent or qualitative claim that fails anywhere, or any claim that fails on the
same hardware, makes the command fail (:class:`~artifact.errors.StrictError`, exit status 1);
any other expected error is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from artifact import claims, files, paths
from artifact.contract.comparison import Comparison
from artifact.errors import PlanError, ReproduceError, StrictError, cli
from artifact.log import Log, stderr
from artifact.reproduce import budget, document, plan, runsets, studies
from artifact.reproduce.execute import Interrupted, reproduce

REPORT = "report"
_COMPARE: Log = stderr("compare")
_REPRODUCE: Log = stderr("reproduce")


def default_out(a: Path, b: Path) -> Path:
    """A reproduction's own ``report/``; for two plain run folders, one under reproductions."""
    if (b / plan.MANIFEST).exists():
        return b / REPORT
    return paths.REPRODUCTIONS / "_comparisons" / f"{a.resolve().name}-vs-{b.resolve().name}"


def compare_sets(a: Path, b: Path, *, out: Path | None = None, ledger: Path = paths.CLAIMS,
                 strict: bool = False, names: tuple[str, str] | None = None,
                 say: Log = _COMPARE) -> Comparison:
    """Compare run set ``b`` with ``a`` under the ledger; write and render the comparison."""
    from artifact.render import comparison

    if out is not None:  # before the analysis of both sets: a file is one line now
        files.folder(out, what="--out", error=ReproduceError)
    out = out or default_out(a, b)
    ref, rep = runsets.pair_of(a, b, names=names)
    doc = document.build(ref, rep, claims.load(ledger), ledger_path=ledger)
    path = document.write(doc, out)
    md, html, _ = comparison.write(path, out)
    c = doc["counts"]
    hw = doc["hardware"]
    say(f"B {rep.hardware.describe()} vs A {ref.hardware.describe()}: hardware "
        f"{hw['verdict']} ({hw['why']})")
    say(", ".join(f"{n} {v}" for v, n in c.items() if n))
    for x in doc["claims"]:
        say(f"  {x['verdict']:22s} {x['id']}: A {x['a']}, B {x['b']} ({x['why']})")
    shown = md.relative_to(paths.ROOT) if md.is_relative_to(paths.ROOT) else md
    say(f"report {shown} (and {html.name})")
    if strict and doc["strict_failures"]:
        raise StrictError(f"--strict: {len(doc['strict_failures'])} claim(s) fail: "
                             + ", ".join(doc["strict_failures"]))
    return doc


def run_and_compare(*, selection: plan.Selection, campaign_file: Path = paths.STUDY,
                    reference: Path = paths.RUNS, root: Path = paths.REPRODUCTIONS,
                    into: Path | None = None, strict: bool = False, dry_run: bool = False,
                    show_progress: bool = True, wait: bool = True, say: Log = _COMPARE,
                    progress: Log = _REPRODUCE, study: str = "first") -> Path:
    """Rerun the selection into its folder (resuming), then compare it with ``reference``.

    ``wait=False``: if another measurement holds this host's lock, fail at once
    (:class:`~artifact.errors.HostLockBusy`) instead of waiting for it.
    """
    out = reproduce(campaign_file=campaign_file, selection=selection, reference=reference,
                    root=root, into=into, dry_run=dry_run, show_progress=show_progress,
                    wait=wait, say=progress, study=study)
    if dry_run:
        return out.folder
    if not out.complete:
        raise ReproduceError(f"{out.folder}: incomplete; rerun the same command to resume")
    compare_sets(reference, out.folder, strict=strict,
                 names=("committed", out.folder.name), say=say)
    return out.folder


def _selection(args: argparse.Namespace, campaign_file: Path,
               study: studies.Study | None = None) -> plan.Selection:
    from artifact.spec import load_campaign

    camp = load_campaign(campaign_file)
    return plan.select([r.run_id for r in camp.runs], patterns=args.runs, kick=args.kick,
                       prompts_per_domain=args.prompts_per_domain, study=study,
                       windows=args.windows, window_of={r.run_id: r.window for r in camp.runs},
                       sessions=args.sessions)


def _studies(args: argparse.Namespace) -> list[tuple[studies.Study, Path, Path]]:
    """The studies to reproduce, each with its campaign file and reference runs: ``--study``'s
    (default: the first study), or a campaign file given by ``--campaign`` (with the reference
    of the study it belongs to, unless ``--reference`` says otherwise)."""
    if args.study is not None and args.campaign is not None:
        raise PlanError(f"--campaign: --study {args.study} names its own campaign file; "
                        "give one or the other")
    if args.campaign is not None:
        known = [s for s in studies.STUDIES.values()
                 if s.campaign.resolve() == args.campaign.resolve()]
        study = known[0] if known else studies.STUDIES["first"]
        return [(study, args.campaign, args.reference or (
            study.reference if known else paths.RUNS))]
    chosen = studies.chosen(args.study or "first")
    if len(chosen) > 1:
        for flag, given in (("--runs", args.runs), ("--windows", args.windows),
                            ("--prompts-per-domain", args.prompts_per_domain),
                            ("--sessions", args.sessions), ("--into", args.into),
                            ("--reference", args.reference)):
            if given:
                raise PlanError(f"{flag}: names runs or a folder of one study; with --study "
                                f"all give only --kick, --dry-run, --strict or --no-wait")
    return [(s, s.campaign, args.reference or s.reference) for s in chosen]


def _plan_line(study: studies.Study, campaign_file: Path, ledger: Path) -> str:
    """What a study reproduces and the claims it puts to the test."""
    from artifact.spec import load_campaign

    ids = [r.run_id for r in load_campaign(campaign_file).runs]
    served = studies.claims_of(claims.load(ledger), ids)
    return (f"study {study.name} ({study.description}): {paths.shown(campaign_file)}; "
            f"claims: {', '.join(c.id for c in served) or 'none'}")


def _budgeted(args: argparse.Namespace) -> None:
    """``--budget``: plan the runs testing the most claims within it, print the plan, then
    (unless ``--dry-run``) reproduce each study's share of it."""
    from artifact.reproduce.host import this_machine
    from artifact.spec import load_campaign

    seconds = budget.parse(args.budget)
    for flag, given in (("--runs", args.runs), ("--windows", args.windows),
                        ("--kick", args.kick), ("--prompts-per-domain", args.prompts_per_domain),
                        ("--sessions", args.sessions), ("--campaign", args.campaign)):
        if given:
            raise PlanError(f"{flag}: --budget chooses the runs and prompts itself; give one "
                            "or the other")
    chosen = _studies(args)
    ledger = claims.load(paths.CLAIMS)
    offers = [budget.study_runs(s, [r.run_id for r in load_campaign(camp).runs], ledger, ref)
              for s, camp, ref in chosen]
    slug = this_machine().slug
    known = budget.known_scale(slug)
    scale, source = (known[0], f"this machine ({slug}) took x{known[0]:.2f} the committed "
                     f"runs' time when last calibrated ({known[1]})") if known else (
        1.0, f"no calibration on this machine ({slug}) yet: ETAs at the committed runs' "
        "time (the reproduction calibrates before it measures)")
    planned = budget.make(offers, seconds, scale=scale, scale_source=source)
    for line in budget.lines(planned):
        _REPRODUCE(line)
    if args.dry_run:
        return
    for study, camp, reference in chosen:
        selection = planned.selections.get(study.name)
        if selection is not None:
            run_and_compare(selection=selection, campaign_file=camp, reference=reference,
                            into=args.into, strict=args.strict, wait=not args.no_wait,
                            study=study.name)


@cli
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m artifact.reproduce [run|compare|readme]``; exit 1 when ``--strict`` fails."""
    ap = argparse.ArgumentParser(
        prog="python -m artifact.reproduce",
        description="Rerun the study (or part of it) beside the committed runs and compare; "
                    "or compare two run sets (`compare A B`).")
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="rerun and compare (the default)")
    r.add_argument("--study", choices=studies.NAMES, default=None,
                   help="the study to reproduce, with its own campaign file, committed "
                   "reference runs, plan and claims: " + "; ".join(
                       f"{s.name}: {paths.shown(s.campaign)} against "
                       f"{paths.shown(s.reference)}, subsets by {s.unit}"
                       for s in studies.STUDIES.values())
                   + "; all: each in turn (default: first)")
    r.add_argument("--runs", action="append", default=[], metavar="PATTERN",
                   help="reproduce only these runs (glob, repeatable), e.g. 'final-*'")
    r.add_argument("--windows", action="append", default=[], metavar="W",
                   help="only the runs of this measurement window (repeatable), e.g. w6 "
                   "(accsplit)")
    r.add_argument("--kick", action="store_true",
                   help="the study's smallest run set that still goes through its whole "
                   "pipeline (first: 3 runs, 1 prompt per domain)")
    r.add_argument("--prompts-per-domain", type=int, default=None, metavar="N",
                   help="only the first N prompts of each domain (studies of prompts)")
    r.add_argument("--sessions", type=int, default=None, metavar="N",
                   help="only the first N sessions of each run, in play order, the same on "
                   "every side (realism)")
    r.add_argument("--into", type=Path, default=None, help="reproduction folder (default: "
                   "experiments/reproductions/<hardware>-<date>[-<study>][-<label>])")
    r.add_argument("--campaign", type=Path, default=None,
                   help="another campaign file (default: the study's)")
    r.add_argument("--reference", type=Path, default=None,
                   help="the committed runs to compare with (default: the study's)")
    r.add_argument("--budget", default=None, metavar="DURATION",
                   help="the evaluator's hour: choose, from this machine's calibrated ETA, the "
                   "runs (and prompts per domain) that test the most claims within DURATION "
                   "(e.g. 45m, 1h, 90s), print that plan with the claims each run serves, then "
                   "run it (with --dry-run: only print it)")
    r.add_argument("--strict", action="store_true", help="fail on a failed, violated or "
                   "missing claim")
    r.add_argument("--dry-run", action="store_true", help="calibrate and print the plan "
                   "and ETA, measure nothing else")
    r.add_argument("--no-wait", action="store_true", help="if another measurement holds "
                   "this host's lock, fail at once instead of waiting for it")
    c = sub.add_parser("compare", help="compare run set B with run set A")
    c.add_argument("a", type=Path, help="reference: a runs folder or a reproduction folder")
    c.add_argument("b", type=Path, help="the other run set")
    c.add_argument("--out", type=Path, default=None)
    c.add_argument("--strict", action="store_true")
    c.add_argument("--ledger", type=Path, default=paths.CLAIMS)
    sub.add_parser("readme", help="regenerate the example table of docs/reproducing.md "
                   "(linked from the README) from the comparison.json its marker names")
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in ("run", "compare", "readme", "-h", "--help"):
        args_list = ["run", *args_list]  # `run` is the default command
    args = ap.parse_args(args_list)
    try:
        if args.cmd == "compare":
            compare_sets(args.a, args.b, out=args.out, ledger=args.ledger, strict=args.strict)
        elif args.cmd == "readme":
            from artifact.render.comparison import EXAMPLE_PAGE, update_example

            source = update_example(paths.ROOT / EXAMPLE_PAGE, root=paths.ROOT)
            shown = source.relative_to(paths.ROOT) if source else None
            print(f"{EXAMPLE_PAGE.as_posix()}: example table from {shown}" if source else
                  f"{EXAMPLE_PAGE.as_posix()}: no reproduction-example marker")
        elif args.budget is not None:
            _budgeted(args)
        else:
            chosen = _studies(args)
            selections = [_selection(args, camp, study) for study, camp, _ in chosen]
            for (study, camp, reference), selection in zip(chosen, selections, strict=True):
                if args.dry_run or len(chosen) > 1:  # the plan: which claims it tests
                    _REPRODUCE(_plan_line(study, camp, paths.CLAIMS))
                run_and_compare(selection=selection, campaign_file=camp, reference=reference,
                                into=args.into, strict=args.strict, dry_run=args.dry_run,
                                wait=not args.no_wait, study=study.name)
    except StrictError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except Interrupted as err:
        print(f"[reproduce] {err}", file=sys.stderr, flush=True)
        return 130
    except KeyboardInterrupt:  # outside the measuring loop: calibration, toolchain, report
        print("[reproduce] interrupted: every request measured so far is kept; rerun the "
              "same command to resume", file=sys.stderr, flush=True)
        return 130
    return 0
