"""The Slurm executor on a real two-node cluster (``scripts/slurm-cluster``), marked ``slurm``.

The cluster is Debian's slurm-wlm started by hand on this host: slurmctld and two slurmd
(``node1``, ``node2``), by ``bash scripts/slurm-cluster start`` (CI does, before the tests);
without a running cluster every test here skips, saying so.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from artifact import paths, records
from artifact.campaign import runner
from artifact.executors import ledger
from artifact.executors.slurm import ALIVE, squeue
from artifact.spec import load_campaign
from tests import measured

pytestmark = pytest.mark.slurm

SCRIPT = paths.ROOT / "scripts" / "slurm-cluster"
STATE = Path(os.environ.get("SPECDEC_SLURM_DIR", "/tmp/specdec-slurm"))

FAULT_TOML = """
[campaign]
name = "slurm-fault"
[executor]
kind = "slurm"
[defaults]
target = "m"
prompt_set = "kick"
family = "final"
n_predict = 96
repeats = {repeats}
warmup = 1
threads = 1
timeout_s = 120
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "fault"
drafter = "none"
"""


def _cluster(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          check=False, timeout=180)


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """SLURM_CONF of the running test cluster; the tests skip, saying why, without one."""
    if shutil.which("slurmctld") is None or shutil.which("sbatch") is None:
        pytest.skip("Slurm is not installed (`bash scripts/slurm-cluster start` installs it "
                    "from Debian's slurm-wlm and munge, and starts the test cluster)")
    conf = str(STATE / "slurm.conf")
    env = {**os.environ, "SLURM_CONF": conf}
    up = subprocess.run(["sinfo", "-h"], env=env, capture_output=True, check=False).returncode
    if up != 0 or not Path(conf).is_file():
        pytest.skip(f"no test Slurm cluster running ({conf}): `bash scripts/slurm-cluster "
                    "start` starts it (CI does)")
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = conf
    try:
        yield env
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old


@pytest.fixture(autouse=True)
def cancel_leftover_jobs(tmp_path: Path) -> Iterator[None]:
    """A test that fails mid-way leaves no job of its own queued or running."""
    yield
    jobs = {str(r.get("job_id")) for f in tmp_path.rglob(ledger.LEDGER) for r in ledger.read(
        f.parent)}
    if jobs and shutil.which("scancel"):
        subprocess.run(["scancel", *sorted(jobs)], capture_output=True, check=False)


def campaign_cli(toml: Path, runs: Path, *extra: str,
                 timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artifact.campaign", str(toml), "--executor",
                           "slurm", "--runs-dir", str(runs), *extra], cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def wait_for(pred: object, what: str, timeout_s: float = 240.0) -> None:
    assert callable(pred)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def n_results(run: Path) -> int:
    return len(records.read_results(run)[0])


one_record_per_request = measured.one_record_per_request


def last_job(run: Path) -> ledger.JobView:
    return ledger.jobs(ledger.read(run))[-1]


def job_state(job_id: str) -> str | None:
    st = squeue([job_id]).get(job_id)
    return st.state if st else None


def kill_tree(pid: int) -> None:
    """SIGKILL a process and every descendant (a node that dies takes its processes along)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    todo, tree = [pid], []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    for p in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def stepd_pids(job_id: str) -> list[int]:
    """The slurmstepd processes of one job (``slurmstepd: [<job>.batch]`` and its steps)."""
    out = []
    for cmd in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmd.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text.startswith(f"slurmstepd: [{job_id}."):
            out.append(int(cmd.parent.name))
    return out


def fault_campaign(tmp_path: Path, repeats: int = 3) -> Path:
    f = tmp_path / "fault.toml"
    f.write_text(FAULT_TOML.format(repeats=repeats))
    return f


def test_a_node_without_the_toolchain_fails_fast_in_one_line(cluster: dict[str, str],
                                                             tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\necho 'libcudart.so.12: cannot open shared object file' >&2\n"
                      "exit 127\n")
    binary.chmod(0o755)
    toml = fault_campaign(tmp_path)
    toml.write_text(toml.read_text().replace("[defaults]",
                                             f'[server]\nbinary = "{binary}"\n[defaults]'))
    runs = tmp_path / "runs"
    done = campaign_cli(toml, runs)
    assert done.returncode == 1, done.stderr
    failed = [ln for ln in done.stdout.splitlines() if ln.startswith("FAILED")]
    assert len(failed) == 1, done.stdout
    line = failed[0]
    assert "--version failed (exit 127): libcudart.so.12: cannot open shared object file" in line
    log = Path(line.rsplit("; log: ", 1)[1])
    assert log.is_file() and "libcudart.so.12" in log.read_text()
    run = runs / "fault"
    assert not (run / records.RESULTS).exists() and not (run / records.CONFIG).exists()


def _other_study_run(rel: str) -> bool:
    """A committed run of another study than the one the kick campaign stands in for (the
    acceptance split): the paper build needs them, and they leave summary.json alone."""
    config = paths.RUNS / rel.split("/")[2] / records.CONFIG
    return config.is_file() and records.read_json(config)["spec"].get("family") == "accsplit"


@pytest.mark.server
def test_kick_campaign_through_slurm_on_two_nodes_then_the_paper_builds(
        cluster: dict[str, str], real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    # A copy of the repository whose runs are the kick campaign measured through Slurm: the
    # committed runs are never touched, and `doit` then builds the paper from those runs.
    repo = tmp_path / "repo"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=paths.ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for rel in filter(None, tracked):
        if not (paths.ROOT / rel).is_file() or (
                rel.startswith("experiments/runs/") and not _other_study_run(rel)):
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(paths.ROOT / rel, repo / rel)
    for prompts in (paths.PROMPTS).glob("*"):
        (repo / "experiments" / "prompts").mkdir(parents=True, exist_ok=True)
        shutil.copy2(prompts, repo / "experiments" / "prompts" / prompts.name)
    runs = repo / "experiments" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    env = {**cluster, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
    doit = [sys.executable, "-m", "doit", "--db-file", str(tmp_path / "doit.db")]
    camp = subprocess.run([*doit, "campaign", "--file", "experiments/campaigns/kick.toml",
                           "--executor", "slurm"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=1800, check=False)
    assert camp.returncode == 0, camp.stdout + camp.stderr
    kick = load_campaign(paths.CAMPAIGNS / "kick.toml")
    nodes = set()
    for spec in kick.runs:
        run = runs / spec.run_id
        assert runner.run_is_current(spec, runs), spec.run_id
        assert len(one_record_per_request(run)) == 3
        job = last_job(run)
        nodes.update(job.nodes)
        config = records.read_json(run / records.CONFIG)
        assert config["executor"]["name"] == "slurm"
        assert config["executor"]["job_id"] == job.job_id
        assert config["executor"]["node"] == job.nodes[-1]
        assert re.search(rf"^{spec.run_id}: 3/3 requests, \d+ errors, .* complete=True$",
                         camp.stdout, re.M), camp.stdout  # the local campaign's summary
    assert nodes == {"node1", "node2"}, "the campaign did not spread over both nodes"

    # The same run measured by the local executor has the same shape.
    local = tmp_path / "local"
    runner.run(kick, kick.run("kick-none"), runs_root=local, show_progress=False)
    a, b = local / "kick-none", runs / "kick-none"
    # (errors.jsonl exists only where a request failed: on a loaded machine, in either)
    files_a = {p.name for p in a.iterdir()} - {records.ERRORS}
    files_b = {p.name for p in b.iterdir()} - {records.ERRORS}
    assert files_b == files_a | {ledger.LEDGER}
    ca, cb = (records.read_json(d / records.CONFIG) for d in (a, b))
    assert set(ca) == set(cb) and set(ca["environment"]) == set(cb["environment"])
    assert ca["spec_sha256"] == cb["spec_sha256"] and ca["server_argv"] == cb["server_argv"]
    assert set(records.read_json(a / records.METRICS)) == set(
        records.read_json(b / records.METRICS))
    ra, rb = (json.loads((d / records.RESULTS).read_text().splitlines()[0]) for d in (a, b))
    assert set(ra) == set(rb) and set(ra["timings"]) == set(rb["timings"])

    # A second `doit campaign` finds every run current and submits nothing.
    again = subprocess.run([*doit, "campaign", "--file", "experiments/campaigns/kick.toml",
                            "--executor", "slurm"], cwd=repo, env=env, capture_output=True,
                           text=True, timeout=300, check=False)
    assert again.returncode == 0 and "submitted as job" not in again.stderr
    assert all(len(ledger.jobs(ledger.read(runs / s.run_id))) == 1 for s in kick.runs)

    # The paper builds from the runs measured through Slurm (and measures nothing).
    paper = subprocess.run([*doit], cwd=repo, env=env, capture_output=True, text=True,
                           timeout=900, check=False)
    out = paper.stdout + paper.stderr
    busy = [s.run_id for s in kick.runs
            if all(r.contended for r in records.read_results(runs / s.run_id)[0])]
    if paper.returncode != 0 and busy:
        # On a machine so busy that every request of a run was contended, that run has no
        # timing statistic and the paper's numbers that need it are null: the build stops with
        # one line saying which, never a traceback (the tests may run beside other work).
        assert "is null" in out and "Traceback" not in out, out[-3000:]
        return
    assert paper.returncode == 0, out[-6000:]
    assert (repo / "manuscript" / "build" / "paper.pdf").stat().st_size > 10_000
    summary = json.loads((repo / "experiments" / "analysis" / "summary.json").read_text())
    assert set(summary["final"]) == {s.run_id for s in kick.runs}


@pytest.mark.server
def test_scancel_mid_run_then_resubmit_gives_one_record_per_request(
        cluster: dict[str, str], real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    toml = fault_campaign(tmp_path)
    runs = tmp_path / "runs"
    run = runs / "fault"
    sub = campaign_cli(toml, runs, "--no-wait")
    assert sub.returncode == 0, sub.stderr
    wait_for(lambda: n_results(run) >= 1, "a first record")
    job = last_job(run).job_id

    # A second `doit campaign` while the job runs submits nothing.
    doit = [sys.executable, "-m", "doit", "--db-file", str(tmp_path / "doit.db"), "campaign",
            "--file", str(toml), "--runs-dir", str(runs), "--no-wait"]
    second = subprocess.run(doit, cwd=paths.ROOT, env=cluster, capture_output=True, text=True,
                            timeout=120, check=False)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"job {job} is running; not submitted again" in second.stderr
    assert len(ledger.jobs(ledger.read(run))) == 1

    subprocess.run(["scancel", job], check=True, env=cluster)
    wait_for(lambda: job_state(job) not in ALIVE, f"job {job} to end")
    partial = one_record_per_request(run)
    assert 1 <= len(partial) < 9
    listed = campaign_cli(toml, runs, "--list")
    assert "failed" in listed.stdout, listed.stdout

    done = campaign_cli(toml, runs)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = one_record_per_request(run)
    assert len(keys) == 9 and set(partial) <= set(keys)
    assert records.read_json(run / records.METRICS)["complete"] is True
    assert ledger.jobs(ledger.read(run))[0].job_id == job
    assert len(ledger.jobs(ledger.read(run))) == 2


@pytest.mark.server
def test_a_node_lost_mid_run_requeues_its_job_which_resumes(
        cluster: dict[str, str], real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    toml = fault_campaign(tmp_path)
    runs = tmp_path / "runs"
    run = runs / "fault"
    assert campaign_cli(toml, runs, "--no-wait").returncode == 0
    wait_for(lambda: n_results(run) >= 1, "a first record")
    job = last_job(run)
    node = job.nodes[-1]
    # The node dies: its slurmd and every process of the job on it.
    pid = int((STATE / f"slurmd-{node}.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    for stepd in stepd_pids(job.job_id):
        kill_tree(stepd)
    partial = one_record_per_request(run)
    try:
        # Slurm marks the node down, requeues the batch job (JobRequeue=1), which starts again
        # on the other node and resumes the run.
        wait_for(lambda: len(last_job(run).nodes) >= 2, "the requeued job to start again",
                 timeout_s=300)
        assert last_job(run).job_id == job.job_id
    finally:
        assert _cluster("restart-node", node).returncode == 0
    done = campaign_cli(toml, runs)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = one_record_per_request(run)
    assert len(keys) == 9 and set(partial) <= set(keys)
    assert len(ledger.jobs(ledger.read(run))) == 1  # the same job, requeued: no resubmission


@pytest.mark.server
def test_a_signalled_job_checkpoints_requeues_itself_and_resumes(
        cluster: dict[str, str], real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    # Before a time limit (--signal=USR2@<signal_delay_s>) and on preemption Slurm sends the job
    # USR2: the job checkpoints, requeues itself (scontrol requeue) and, started again, resumes.
    toml = fault_campaign(tmp_path)
    runs = tmp_path / "runs"
    run = runs / "fault"
    assert campaign_cli(toml, runs, "--no-wait").returncode == 0
    wait_for(lambda: n_results(run) >= 1, "a first record")
    job = last_job(run).job_id
    subprocess.run(["scancel", "--signal=USR2", job], check=True, env=cluster)
    wait_for(lambda: "checkpoint" in [r["event"] for r in ledger.read(run)], "a checkpoint")
    partial = one_record_per_request(run)
    done = campaign_cli(toml, runs)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = one_record_per_request(run)
    assert len(keys) == 9 and set(partial) <= set(keys)
    events = [r["event"] for r in ledger.read(run)]
    assert events.count("started") == 2 and events[-1] == "finished", events
    assert len(ledger.jobs(ledger.read(run))) == 1  # the same job, requeued by itself
