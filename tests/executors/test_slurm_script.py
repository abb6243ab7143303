"""The sbatch script under hostile values of every field: refused in one line, or quoted.

A value is either refused (one line naming the field) or reaches the job exactly as written:
the script passes ``bash -n``; its ``#SBATCH`` lines read, by sbatch's own rules, as the
intended options; run by bash with a probe ``srun`` on the PATH, it exports the literal cache
folder, calls srun with the literal log and job folders, and runs nothing else.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from artifact import executor_spec, paths
from artifact.executor_spec import SlurmSettings
from artifact.executors.slurm import SlurmCampaign
from artifact.executors.slurm_script import JobScriptError, job_script
from artifact.spec import load_campaign

from .test_slurm_units import campaign

# Each would run something, split a word or end a line if it were written unquoted.
HOSTILE = [
    "a b", "x;touch pwned-semicolon", "$(touch pwned-subst)", "`touch pwned-backtick`",
    "x\ntouch pwned-newline", "x\rtouch pwned-cr", "x\x00y", "ünï", "x'y\"z", "x\u2028y",
    "x\u202ey", "x\x85y", "#x", "x\\y", "$HOME", "x|touch pwned-pipe", "x&&touch pwned-and",
    "--x", "*", "%j", "x>pwned-redirect", "",
]
CONTROL = {v for v in HOSTILE if executor_spec.control_char(v) is not None}
NAME_FIELDS = ["partition", "account", "constraint", "mem", "gres", "time", "job_name"]
PATH_FIELDS = ["cache_dir", "runs_dir", "log_dir"]
ROOT = Path("/repo")
FOLDER = Path("/runs/_slurm/logs/r")


def sbatch_args(script: str) -> list[str]:
    """The options sbatch reads from the script's ``#SBATCH`` lines (the rules of its opt.c:
    whitespace separates, quotes group, a backslash escapes even inside quotes, ``#`` ends)."""
    out: list[str] = []
    for line in script.split("\n")[1:]:
        if not line.strip():
            continue
        if not line.startswith("#"):
            break  # the first command ends the options
        if not line.startswith("#SBATCH"):
            continue
        rest, i = line[len("#SBATCH"):], 0
        while i < len(rest):
            while i < len(rest) and rest[i].isspace():
                i += 1
            arg, quote, escape = "", "", False
            while i < len(rest) and (quote or not rest[i].isspace()):
                c, i = rest[i], i + 1
                if escape:
                    escape = False
                elif c == "\\":
                    escape = True
                    continue
                elif quote:
                    if c == quote:
                        quote = ""
                        continue
                elif c in "\"'":
                    quote = c
                    continue
                elif c == "#":
                    i = len(rest)
                    break
                arg += c
            if arg:
                out.append(arg)
    return out


def probe_run(script: str, tmp_path: Path) -> tuple[list[str], set[str]]:
    """Run ``script`` with bash and a probe srun; its srun argv (first: $SPECDEC_CACHE or
    '<unset>') and the files it left in its working folder."""
    work, bin_ = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_.mkdir()
    probe = tmp_path / "probe"
    srun = bin_ / "srun"
    srun.write_text('#!/bin/bash\nprintf \'%s\\0\' "${SPECDEC_CACHE-<unset>}" "$@" > "$PROBE"\n')
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    file = tmp_path / "job.sh"
    file.write_text(script)
    check = subprocess.run(["bash", "-n", str(file)], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, check.stderr
    env = {"PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "PROBE": str(probe),
           "HOME": str(tmp_path)}
    proc = subprocess.run(["bash", str(file)], cwd=work, env=env, capture_output=True,
                          text=True, check=False, timeout=30)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return probe.read_bytes().decode().split("\0")[:-1], {p.name for p in work.iterdir()}


def test_the_script_reads_as_intended(tmp_path: Path) -> None:
    s = SlurmSettings(partition="gpu,gpu2", account="lab", time="1:30:00", cpus_per_task=8,
                      mem="32G", gres="gpu:a100:1", constraint="[a100*2&ib]|h100",
                      exclusive=True, extra=("--qos=high", "--mail-user=me@lab.org"),
                      cache_dir="/shared/cache")
    text = job_script(s, job_name="specdec-r", folder=FOLDER, chdir=ROOT, python="/py")
    assert sbatch_args(text) == [
        "--account=lab", "--chdir=/repo", "--constraint=[a100*2&ib]|h100",
        "--cpus-per-task=8", "--exclusive", "--gres=gpu:a100:1", "--job-name=specdec-r",
        "--mail-user=me@lab.org", "--mem=32G", "--nodes=1", "--open-mode=append",
        f"--output={FOLDER}/%j_0_log.out", "--partition=gpu,gpu2", "--qos=high", "--requeue",
        "--signal=USR2@120", "--time=1:30:00", "--wckey=submitit"]
    argv, left = probe_run(text, tmp_path)
    assert argv == ["/shared/cache", "--unbuffered", "--output", f"{FOLDER}/%j_%t_log.out",
                    "/py", "-u", "-m", "submitit.core._submit", str(FOLDER)]
    assert left == set()


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("field", NAME_FIELDS)
def test_a_hostile_slurm_name_is_refused_in_one_line(field: str, value: str) -> None:
    s = replace(SlurmSettings(), **{field: value})
    with pytest.raises(JobScriptError) as err:
        job_script(s, job_name="specdec-r", folder=FOLDER, chdir=ROOT, python="/py")
    msg = str(err.value)
    assert "\n" not in msg and "\r" not in msg and "\x00" not in msg
    assert msg.startswith(f"slurm job script: executor.slurm.{field}: expected ")


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_extra_option_is_refused_in_one_line(value: str) -> None:
    for opt in (f"--qos={value}", f"--{value}=1", value):
        s = SlurmSettings(extra=("--qos=high", opt))
        with pytest.raises(JobScriptError, match=r"^slurm job script: executor\.slurm\."
                           r"extra\[1\]: expected [^\n\r\x00]*$"):
            job_script(s, job_name="specdec-r", folder=FOLDER, chdir=ROOT, python="/py")


@pytest.mark.parametrize("opt", ["--output=/tmp/x", "--chdir=/", "--signal=KILL@1",
                                 "--job-name=x", "--wrap=id"])
def test_extra_cannot_replace_what_the_executor_sets(opt: str) -> None:
    with pytest.raises(JobScriptError, match=r"is set by the executor itself"):
        job_script(SlurmSettings(extra=(opt,)), job_name="j", folder=FOLDER, chdir=ROOT,
                   python="/py")


@pytest.mark.parametrize("value", sorted(set(HOSTILE) - {""}))
def test_a_hostile_cache_folder_is_exported_literally_or_refused(value: str,
                                                                  tmp_path: Path) -> None:
    s = SlurmSettings(cache_dir=f"/shared/{value}/cache")
    if value in CONTROL:
        with pytest.raises(JobScriptError, match=r"^slurm job script: executor\.slurm\."
                           r"cache_dir: expected a value without control characters, got U\+"):
            job_script(s, job_name="j", folder=FOLDER, chdir=ROOT, python="/py")
        return
    text = job_script(s, job_name="j", folder=FOLDER, chdir=ROOT, python="/py")
    argv, left = probe_run(text, tmp_path)
    assert argv[0] == f"/shared/{value}/cache"
    assert left == set()  # nothing ran: no pwned-* file, no redirect target


@pytest.mark.parametrize("value", sorted(set(HOSTILE) - {""}))
def test_a_hostile_job_folder_reaches_sbatch_and_srun_literally_or_is_refused(
        value: str, tmp_path: Path) -> None:
    folder = Path(f"/runs/{value}/_slurm/logs/r")
    checkout = Path(f"/home/{value}/repo")
    python = f"/opt/{value}/python"
    if value in CONTROL or "%" in value or "\\" in value:
        with pytest.raises(JobScriptError) as err:
            job_script(SlurmSettings(), job_name="j", folder=folder, chdir=checkout,
                       python=python)
        assert "\n" not in str(err.value)
        assert str(err.value).startswith("slurm job script: job folder: expected ")
        return
    text = job_script(SlurmSettings(), job_name="j", folder=folder, chdir=checkout,
                      python=python)
    args = sbatch_args(text)
    assert f"--output={folder}/%j_0_log.out" in args and f"--chdir={checkout}" in args
    argv, left = probe_run(text, tmp_path)
    assert argv == ["<unset>", "--unbuffered", "--output", f"{folder}/%j_%t_log.out", python,
                    "-u", "-m", "submitit.core._submit", str(folder)]
    assert left == set()


@pytest.mark.parametrize("value", sorted(CONTROL))
def test_a_checkout_or_python_with_a_control_character_is_refused(value: str) -> None:
    with pytest.raises(JobScriptError, match=r"^slurm job script: checkout: "):
        job_script(SlurmSettings(), job_name="j", folder=FOLDER, chdir=Path(f"/r{value}"),
                   python="/py")
    with pytest.raises(JobScriptError, match=r"^slurm job script: python: "):
        job_script(SlurmSettings(), job_name="j", folder=FOLDER, chdir=ROOT,
                   python=f"/py{value}")


def test_a_checkout_with_a_backslash_is_refused() -> None:
    with pytest.raises(JobScriptError, match=r"^slurm job script: checkout: sbatch reads a "
                       r"backslash as an escape"):
        job_script(SlurmSettings(), job_name="j", folder=FOLDER, chdir=Path("/r\\x"),
                   python="/py")


@pytest.mark.parametrize("value", sorted(CONTROL - {"\t"}))
def test_a_setup_line_is_one_line(value: str) -> None:
    with pytest.raises(JobScriptError, match=r"^slurm job script: executor\.slurm\.setup\[0\]: "
                       r"expected one shell line without control characters"):
        job_script(SlurmSettings(setup=(f"module load {value}",)), job_name="j",
                   folder=FOLDER, chdir=ROOT, python="/py")


def test_setup_lines_are_shell_and_come_after_the_cache(tmp_path: Path) -> None:
    s = SlurmSettings(cache_dir="/c $(x)", setup=('export SPECDEC_CACHE="$SPECDEC_CACHE/sub"',))
    argv, _ = probe_run(job_script(s, job_name="j", folder=FOLDER, chdir=ROOT, python="/py"),
                        tmp_path)
    assert argv[0] == "/c $(x)/sub"


def test_the_executor_submits_the_script_job_script_writes(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """SlurmCampaign hands submitit this module's script, for a hostile runs folder too."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_ / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    camp = load_campaign(campaign(tmp_path))
    runs = tmp_path / "runs $(touch pwned) `id`; 'q\" ünï"
    s = SlurmSettings(partition="gpu", time="90", cache_dir="/c;id")
    ex = SlurmCampaign(camp, runs, s)._executor("r")
    folder = runs / "_slurm" / "logs" / "r"
    assert ex._make_submission_file_text("ignored", "uid") == job_script(
        s, job_name="specdec-r", folder=folder, chdir=paths.ROOT, python=sys.executable)
    assert ex.parameters["time"] == 90  # submitit's own time-out count
    refused = SlurmCampaign(camp, tmp_path / "r%j", s)
    with pytest.raises(JobScriptError, match=r"^slurm job script: job folder: "):
        refused._executor("r")
    assert shutil.which("srun") == str(bin_ / "srun")
