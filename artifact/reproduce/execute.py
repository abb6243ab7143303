"""Run a reproduction: calibrate, plan, rerun each selected run into its own folder, resume.

The runs of one interleave group (:mod:`artifact.campaign.interleave`) are measured together,
prompt by prompt, as the campaign measured them: a ratio between two runs of a group (a speedup,
the noise control) then compares requests seconds apart, not runs minutes apart.

Nothing here writes under the committed runs' folder: every run goes to
``<reproduction>/runs/<run>/`` through the campaign runner (append + fsync per request, resume
after any interruption), and the reproduction's own ``reproduction.json`` is rewritten
atomically after each step. Rerunning the same command resumes the unfinished reproduction of
the same selection on the same hardware, whatever the day. The whole reproduction holds this
host's measurement lock (:mod:`artifact.hostlock`), so no other measurement slips in between
its calibration and its runs.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import paths, records
from artifact.campaign import runner
from artifact.campaign.interleave import groups, run_group
from artifact.errors import ReproduceError
from artifact.hostlock import measuring
from artifact.log import Log, stderr
from artifact.reproduce import calibrate as cal
from artifact.reproduce import plan
from artifact.reproduce.host import Hardware, load_sample, this_machine
from artifact.spec import Campaign, RunSpec, load_campaign
from artifact.workloads import ensure_prompt_set, inputs

_say: Log = stderr("reproduce")


@dataclass(frozen=True, kw_only=True)
class Outcome:
    folder: Path
    complete: bool
    manifest: dict[str, Any]


class Interrupted(ReproduceError):
    """The reproduction was interrupted (Ctrl-C); what was measured is kept (the message says
    where and how to resume)."""


def find_folder(root: Path, hw: Hardware, selection: plan.Selection, campaign: str,
                today: dt.date, study: str = "first") -> Path:
    """Today's folder, or an unfinished reproduction of the same selection on this hardware."""
    if root.is_dir():
        for cand in sorted(root.glob(f"{hw.slug}-*"), reverse=True):
            m = plan.read_manifest(cand) if (cand / plan.MANIFEST).exists() else None
            if (m is not None and not m.get("complete")
                    and (m.get("hardware") or {}).get("slug") == hw.slug
                    and m.get("selection") == selection.as_dict()
                    and m.get("campaign") == campaign):
                return cand
    return root / plan.folder_name(hw.slug, today, selection, study)


def _baseline(camp: Campaign, selection: plan.Selection) -> RunSpec:
    """The no-draft run the calibration repeats: the selection's own, else the campaign's."""
    specs = [camp.run(r) for r in selection.runs] + list(camp.runs)
    for s in specs:
        if s.drafter == "none":
            return s
    return specs[0]


def reproduce(*, campaign_file: Path = paths.STUDY, selection: plan.Selection,
              reference: Path = paths.RUNS, root: Path = paths.REPRODUCTIONS,
              into: Path | None = None, dry_run: bool = False, show_progress: bool = True,
              wait: bool = True, say: Log = _say, study: str = "first") -> Outcome:
    """Rerun ``selection`` of ``campaign_file`` into a reproduction folder; return where.

    Under this host's measurement lock; ``wait=False`` (``--no-wait``): fail at once with
    :class:`~artifact.errors.HostLockBusy` if another measurement holds it. An interrupt
    (Ctrl-C) while measuring is :class:`Interrupted`, one line saying what was kept.
    """
    if into is not None:  # before the lock and the toolchain: a wrong folder is one line now
        plan.check_into(into)
    plan.check_reference(reference)
    with measuring(f"reproduce {selection.label}", wait=wait, say=say):
        return _reproduce(campaign_file=campaign_file, selection=selection, reference=reference,
                          root=root, into=into, dry_run=dry_run, show_progress=show_progress,
                          say=say, study=study)


def _reproduce(*, campaign_file: Path, selection: plan.Selection, reference: Path, root: Path,
               into: Path | None, dry_run: bool, show_progress: bool, say: Log,
               study: str) -> Outcome:
    camp = load_campaign(campaign_file)
    campaign = paths.shown(campaign_file)
    hw = this_machine()
    folder = into or find_folder(root, hw, selection, campaign, dt.datetime.now(dt.UTC).date(),
                                 study)
    resuming = plan.resumable(folder, selection, campaign)
    manifest = (plan.read_manifest(folder) if resuming else None) or {
        "schema": plan.SCHEMA, "campaign": campaign, "reference": paths.shown(reference),
        "selection": selection.as_dict(), "hardware": hw.as_dict(), "started": plan.utc_now(),
        "finished": None, "complete": False, "runs": {}, "load": [],
        "cpu_count": hw.cpu_cores, "study": study,
    }
    say(f"{'resuming' if resuming else 'new'} reproduction of the {study} study in "
        f"{paths.shown(folder)} ({selection.label}: {len(selection.runs)} runs"
        + (f", {selection.prompts_per_domain} prompt(s) per domain" if
           selection.prompts_per_domain else "")
        + (f", {selection.sessions} session(s) per run" if selection.sessions else "")
        + f") on {hw.describe()}")
    runs_root = folder / plan.RUNS
    folder.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        records.write_json(folder / plan.MANIFEST, manifest)

    def sample(event: str) -> None:
        manifest["load"].append({"at": plan.utc_now(), "event": event, **load_sample()})

    # Prompt subsets (a session study: sessions) and reference durations, per run
    subsets: dict[str, frozenset[str] | None] = {}
    n_prompts: dict[str, int | None] = {}
    share: dict[str, float] = {}  # the part of the committed run's measurement rerun
    for rid in selection.runs:
        spec = camp.run(rid)
        if spec.workload is not None:  # sessions, from the session set's id lock
            n_all = inputs(spec).n
            n = n_prompts[rid] = min(selection.sessions or n_all, n_all)
            subsets[rid] = None
            share[rid] = n / n_all if n_all else 1.0
            continue
        files = runner.server_files(camp, spec)
        prompts, _ = ensure_prompt_set(spec.prompt_set, files.model)
        ids = plan.prompt_subset([(p.id, p.domain) for p in prompts],
                                 selection.prompts_per_domain)
        subsets[rid] = frozenset(ids) if ids is not None else None
        n = n_prompts[rid] = len(ids) if ids is not None else len(prompts)
        share[rid] = n / len(prompts) if prompts else 1.0

    if "calibration" not in manifest:
        sample("calibration")
        manifest["calibration"] = _calibrate(camp, selection, reference, folder, say)
        save()
    scale = float(manifest["calibration"].get("scale") or 1.0)
    expected = {}
    for rid in selection.runs:
        try:
            ref = records.read_json(reference / rid / records.METRICS)
        except (records.RecordError, ValueError, FileNotFoundError):
            ref = {}  # no committed run to time it by: no ETA for it (shown as 0:00)
        n_all = int(ref.get("n_expected") or 0)
        expected[rid] = plan.expected_seconds(ref, round(n_all * share[rid]) or None, scale) \
            if ref else 0.0
    manifest["expected_s"] = {r: round(s, 1) for r, s in expected.items()}
    save()
    done = {r: float(v["wall_s"]) for r, v in manifest["runs"].items() if v.get("complete")}
    skipped = manifest["calibration"].get("skipped")
    say((f"calibration skipped ({skipped}): ETA at the committed runs' time; " if skipped else
         f"calibration: this machine takes x{scale:.2f} the committed runs' time; ")
        + f"estimated {plan.clock(plan.eta_seconds(expected, done))} for "
        f"{len(selection.runs) - len(done)} run(s) left")
    for rid in selection.runs:
        state = "done" if rid in done else f"~{plan.clock(expected[rid])}"
        unit = "sessions" if camp.run(rid).workload is not None else "prompts"
        say(f"  {rid:36s} {n_prompts[rid]:3d} {unit:8s}  {state}")
    if dry_run:
        return Outcome(folder=folder, complete=False, manifest=manifest)

    sample("start")
    save()
    try:
        _measure(camp, selection, manifest, runs_root, subsets, expected, done,
                 show_progress, say, save, sample)
    except KeyboardInterrupt:
        kept = sum(_kept(runs_root / rid) for rid in selection.runs)
        raise Interrupted(f"interrupted: {kept} measured request(s) kept in "
                          f"{paths.shown(folder)}; rerun the same command to resume") from None
    manifest["complete"] = all(manifest["runs"].get(r, {}).get("complete")
                               for r in selection.runs)
    manifest["finished"] = plan.utc_now() if manifest["complete"] else None
    save()
    total = sum(float(v["wall_s"]) for v in manifest["runs"].values())
    say(f"{'complete' if manifest['complete'] else 'incomplete'}: {paths.shown(folder)}, "
        f"{plan.clock(total)} of runs (estimated {plan.clock(sum(expected.values()))})")
    return Outcome(folder=folder, complete=bool(manifest["complete"]), manifest=manifest)


def _kept(run: Path) -> int:
    """The measured records a run folder holds (after an interrupt: what was kept)."""
    if not (run / records.RESULTS).is_file():
        return 0
    recs, _ = records.read_results(run, keep_events=False)
    return len(recs)


def _measure(camp: Campaign, selection: plan.Selection, manifest: dict[str, Any],
             runs_root: Path, subsets: dict[str, frozenset[str] | None],
             expected: dict[str, float], done: dict[str, float], show_progress: bool,
             say: Log, save: Callable[[], None], sample: Callable[[str], None]) -> None:
    """Measure the selection's units not yet done, one after another (resumable)."""
    t_all = time.perf_counter()
    specs = [camp.run(rid) for rid in selection.runs]
    for unit in groups(specs):
        todo = [s for s in unit if s.run_id not in done]
        if not todo:
            continue
        rids = tuple(s.run_id for s in todo)
        i = selection.runs.index(rids[0]) + 1
        eta = plan.eta_seconds(expected, done)
        say(f"run {i}/{len(selection.runs)} {rids[0]}"
            + (f" interleaved with {', '.join(rids[1:])}" if len(rids) > 1 else "")
            + f": elapsed {plan.clock(time.perf_counter() - t_all)}, ETA {plan.clock(eta)}")
        entries = {rid: manifest["runs"].setdefault(rid, {"wall_s": 0.0}) for rid in rids}
        for entry in entries.values():
            entry.update(started=entry.get("started") or plan.utc_now(), complete=False)
        save()
        t0 = time.perf_counter()
        suffix = _overall(i, len(selection.runs), rids, expected, done)
        try:
            # a study of sessions: each run's first sessions in play order (all: None)
            first = selection.sessions if todo[0].workload is not None else None
            if todo[0].interleave is not None:  # measured together, as the campaign does
                ms = run_group(camp, todo, runs_root=runs_root, show_progress=show_progress,
                               say=say, prompt_ids=subsets[rids[0]], progress_suffix=suffix,
                               sessions=first)
            else:
                ms = {rids[0]: runner.run(camp, todo[0], runs_root=runs_root,
                                         show_progress=show_progress, say=say,
                                         prompt_ids=subsets[rids[0]], progress_suffix=suffix,
                                         sessions=first)}
        finally:
            _share_wall(entries, time.perf_counter() - t0, expected)
            save()
        for rid, m in ms.items():
            entries[rid].update(complete=m.complete, finished=plan.utc_now(),
                                n_results=m.n_results, n_errors=m.n_errors,
                                expected_s=round(expected[rid], 1))
            if m.complete:
                done[rid] = entries[rid]["wall_s"]
        sample(f"after {', '.join(rids)}")
        save()


def _share_wall(entries: dict[str, dict[str, Any]], wall: float,
                expected: dict[str, float]) -> None:
    """Add ``wall`` seconds to the runs measured in them, each its share by expected time
    (an interleaved group's runs alternate request by request)."""
    total = sum(expected[rid] for rid in entries)
    for rid, entry in entries.items():
        share = expected[rid] / total if total > 0 else 1.0 / len(entries)
        entry["wall_s"] = round(float(entry["wall_s"]) + wall * share, 2)


def _overall(i: int, n: int, rids: tuple[str, ...], expected: dict[str, float],
             done: dict[str, float]) -> Callable[[float], str]:
    """The whole reproduction's place and ETA, for the running runs' progress line."""
    def suffix(fraction: float) -> str:
        left = plan.eta_seconds(expected, done, running=rids, running_fraction=fraction)
        return f"  | run {i}/{n}, reproduction ETA {plan.clock(left)}"

    return suffix


def _calibrate(camp: Campaign, selection: plan.Selection, reference: Path, folder: Path,
               say: Log) -> dict[str, Any]:
    spec = _baseline(camp, selection)
    if spec.workload is not None:  # its requests are turns of sessions: time those
        return _calibrate_sessions(camp, spec, selection, reference, folder, say)
    ref = reference / spec.run_id
    committed = cal.committed_e2e(ref) if ref.is_dir() else {}
    files = runner.server_files(camp, spec)
    prompts, _ = ensure_prompt_set(spec.prompt_set, files.model)
    chosen = cal.choose(prompts, committed)
    if not chosen:
        say(f"calibration skipped: no committed records of {spec.run_id} to compare with")
        return {"run_id": spec.run_id, "scale": 1.0, "skipped": "no committed records"}
    say(f"calibrating: {len(chosen)} request(s) of {spec.run_id} on this machine")
    c = cal.calibrate(files, spec, chosen, committed, folder)
    return c.as_dict()


def _calibrate_sessions(camp: Campaign, spec: RunSpec, selection: plan.Selection,
                        reference: Path, folder: Path, say: Log) -> dict[str, Any]:
    """The no-draft run's first selected sessions here against the committed run's same
    sessions (:func:`artifact.reproduce.calibrate.calibrate_sessions`)."""
    ref = reference / spec.run_id
    committed = cal.committed_turns(ref) if ref.is_dir() else {}
    n = min(selection.sessions or cal.N_SESSIONS, cal.N_SESSIONS)
    chosen = cal.choose_sessions(cal.committed_plan(ref) if ref.is_dir() else [], committed, n)
    if not chosen:
        say(f"calibration skipped: no committed records of {spec.run_id}'s sessions in "
            f"{paths.shown(reference)} to compare with")
        return {"run_id": spec.run_id, "scale": 1.0,
                "skipped": "no committed records of the same sessions"}
    say(f"calibrating: {len(chosen)} session(s) of {spec.run_id} "
        f"({sum(len(s.turns) for s in chosen)} turns) on this machine")
    files = runner.server_files(camp, spec)
    return cal.calibrate_sessions(files, spec, chosen, committed, folder).as_dict()
