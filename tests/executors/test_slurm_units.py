"""The Slurm executor's parts that need no cluster: ledger, node checks, status lines."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from artifact import records
from artifact.executors import RunStatus, ledger, slurm_job
from artifact.executors.slurm import SlurmCampaign, SlurmError
from artifact.spec import load_campaign

CAMPAIGN = """
[campaign]
name = "c"
{pool}
{server}
[defaults]
target = "m"
prompt_set = "kick"
family = "final"
[models.m]
{model}
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "r"
drafter = "none"
"""


def campaign(tmp_path: Path, *, server: str = "", model: str = 'builtin = "smollm2-135m-q4_1"',
             pool: str = "") -> Path:
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(server=server, model=model, pool=pool))
    return f


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_ledger_views_jobs_in_submission_order(tmp_path: Path) -> None:
    run = tmp_path / "r"
    ledger.append(run, ledger.submitted("7", 100.0, 0.05, "logs/7_0_log.out"))
    ledger.append(run, ledger.started("7", "node1", 0, {"cpu_model": "x"}))
    ledger.append(run, ledger.event("checkpoint", "7", "node1"))
    ledger.append(run, ledger.started("7", "node2", 1, {"cpu_model": "x"}))
    ledger.append(run, ledger.failed("7", "node2", "node node2: no binary"))
    ledger.append(run, ledger.submitted("9", 200.0, 0.04, "logs/9_0_log.out"))
    ledger.append(run, ledger.started("9", "node1", 0, {}))
    ledger.append(run, ledger.finished("9", "node1", True))
    jobs = ledger.jobs(ledger.read(run))
    assert [j.job_id for j in jobs] == ["7", "9"]
    assert jobs[0].nodes == ["node1", "node2"] and jobs[0].submitted_unix_s == 100.0
    assert jobs[0].failed == "node node2: no binary" and jobs[0].finished is None
    assert jobs[1].finished is True and jobs[1].log == "logs/9_0_log.out"
    assert (run / ledger.LEDGER).read_text().count("\n") == 8


def test_a_failed_job_is_one_line_with_its_log() -> None:
    st = RunStatus("r", "failed", "12", "node2", 2, 3, why="Slurm state CANCELLED",
                   log="experiments/runs/_slurm/logs/r/12_0_log.out")
    line = st.failure()
    assert "\n" not in line
    assert line == ("r: job 12 failed on node2 after 2/3 requests: Slurm state CANCELLED; "
                    "log: experiments/runs/_slurm/logs/r/12_0_log.out")


def test_node_without_the_binary_fails_fast(tmp_path: Path) -> None:
    binary = script(tmp_path / "llama-server", "exit 0")
    camp = load_campaign(campaign(tmp_path, server=f'[server]\nbinary = "{binary}"'))
    binary.unlink()
    with pytest.raises(slurm_job.NodeError, match=r"^node n1: llama-server not found at "):
        slurm_job.check_node(camp, camp.runs[0], "n1")


def test_node_whose_binary_does_not_start_fails_fast(tmp_path: Path) -> None:
    binary = script(tmp_path / "llama-server",
                    "echo 'error while loading shared libraries: libcuda.so.1' >&2; exit 127")
    camp = load_campaign(campaign(tmp_path, server=f'[server]\nbinary = "{binary}"'))
    with pytest.raises(slurm_job.NodeError) as err:
        slurm_job.check_node(camp, camp.runs[0], "n1")
    assert str(err.value) == (f"node n1: {binary} --version failed (exit 127): error while "
                              "loading shared libraries: libcuda.so.1")


def test_node_without_a_model_file_fails_fast(tmp_path: Path) -> None:
    binary = script(tmp_path / "llama-server", "echo version: 1")
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    camp = load_campaign(campaign(tmp_path, server=f'[server]\nbinary = "{binary}"',
                                  model=f'path = "{model}"'))
    model.unlink()
    with pytest.raises(slurm_job.NodeError, match=r"^node n1: model m: file not found: "):
        slurm_job.check_node(camp, camp.runs[0], "n1")


def test_node_without_the_pinned_build_names_the_cache(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDEC_CACHE", str(tmp_path / "empty-cache"))
    camp = load_campaign(campaign(tmp_path))
    with pytest.raises(slurm_job.NodeError) as err:
        slurm_job.check_node(camp, camp.runs[0], "n1")
    assert "pinned llama-server is not built in the toolchain cache" in str(err.value)
    assert str(tmp_path / "empty-cache") in str(err.value) and "\n" not in str(err.value)


def _begun_on(run: Path, **env: object) -> None:
    run.mkdir(parents=True)
    records.write_json(run / records.CONFIG, {"environment": env})


def test_a_run_resumes_only_on_the_hardware_it_began_on(tmp_path: Path) -> None:
    camp = load_campaign(campaign(tmp_path))
    here = slurm_job.node_hardware()
    _begun_on(tmp_path / "same", **here)
    slurm_job.check_same_hardware(camp, tmp_path / "same", "n1")
    _begun_on(tmp_path / "other", **{**here, "gpu": "GPU 0: NVIDIA H200 (UUID: GPU-1)"})
    with pytest.raises(slurm_job.NodeError, match=r"run other was begun on other hardware "
                       r"\(gpu 'NVIDIA H200' there"):
        slurm_job.check_same_hardware(camp, tmp_path / "other", "n1")
    pooled = load_campaign(campaign(tmp_path, pool="pool_mixed_hardware = true"))
    slurm_job.check_same_hardware(pooled, tmp_path / "other", "n1")


def test_the_run_lock_lets_one_holder_at_a_time(tmp_path: Path) -> None:
    said: list[str] = []
    with slurm_job.run_lock(tmp_path, "r", said.append):
        pid = os.fork()
        if pid == 0:  # a second job of the same run: must not get the lock now
            import fcntl

            with (tmp_path / "r.lock").open("a+") as f:
                try:
                    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    os._exit(1)
                except OSError:
                    os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
    with slurm_job.run_lock(tmp_path, "r", said.append):
        pass
    assert said == []


def test_without_slurm_a_submission_is_one_line(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    camp = load_campaign(campaign(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SlurmError, match=r"^scontrol not found: the Slurm executor needs"):
        SlurmCampaign(camp, tmp_path / "runs").submit(camp.runs[0], print)
    assert not (tmp_path / "runs").exists()  # nothing recorded, nothing to collect later


def test_the_job_pickles_by_its_import_path() -> None:
    """submitit pickles the job; the node unpickles it by the class's import path."""
    import pickle

    import cloudpickle

    job = slurm_job.MeasureJob("c.toml", "r", "/runs", "/locks")
    blob = cloudpickle.dumps(job)
    assert b"artifact.executors.slurm_job" in blob
    back = pickle.loads(blob)
    assert type(back) is slurm_job.MeasureJob and vars(back) == vars(job)
