"""The sbatch script of one Slurm job: written here and nowhere else, every value checked or quoted.

submitit used to write the script from loose parameters, putting ``setup`` lines and option
values in verbatim, so a ``cache_dir`` with a space broke every job and one with ``;`` or
``$(...)`` ran on the node. :func:`job_script` writes the whole script from typed settings:

- ``#SBATCH`` lines are read by sbatch, not by the shell; their values pass
  :func:`~artifact.executor_spec.slurm_problems` (no control characters, so a newline cannot
  end the line and start a shell one; Slurm's syntax for names) and are quoted the way sbatch
  reads quotes (``shlex.quote``; sbatch also takes a backslash as an escape, so none is allowed);
- shell words (``SPECDEC_CACHE``, the log path, the Python and the job folder given to ``srun``)
  are ``shlex.quote``-d, and hold no control character either;
- ``setup`` lines are shell by design and go in as written, one line each.

The script keeps what submitit's does (``--signal=USR2@<delay>`` for its checkpoint and requeue,
``--open-mode=append``, the log file names its job objects look for), so submitit still submits,
watches and requeues the job.

>>> s = SlurmSettings(partition="gpu", cache_dir="/shared/my cache", time="1:30:00")
>>> print(job_script(s, job_name="specdec-r", folder=Path("/runs/_slurm/logs/r"),
...                  chdir=Path("/repo"), python="/usr/bin/python3"))  # doctest: +ELLIPSIS
#!/bin/bash
<BLANKLINE>
# Parameters
#SBATCH --chdir=/repo
#SBATCH --job-name=specdec-r
#SBATCH --nodes=1
#SBATCH --open-mode=append
#SBATCH --output=/runs/_slurm/logs/r/%j_0_log.out
#SBATCH --partition=gpu
#SBATCH --requeue
#SBATCH --signal=USR2@120
#SBATCH --time=1:30:00
#SBATCH --wckey=submitit
<BLANKLINE>
# setup
export SPECDEC_CACHE='/shared/my cache'
<BLANKLINE>
# command
export SUBMITIT_EXECUTOR=slurm
srun --unbuffered --output /runs/_slurm/logs/r/%j_%t_log.out /usr/bin/python3 -u -m ...
"""

from __future__ import annotations

import shlex
from pathlib import Path

from submitit.core.utils import JobPaths
from submitit.slurm.slurm import SlurmJobEnvironment

from artifact.executor_spec import (
    ExecutorSpecError,
    SlurmSettings,
    control_char,
    sbatch_options,
    slurm_problem,
    slurm_problems,
)


class JobScriptError(ExecutorSpecError):
    """A value cannot be written safely into the job script; one line naming it."""


def _checked(what: str, value: str, *, sbatch: bool) -> str:
    bad = control_char(value)
    if bad is not None:
        raise JobScriptError(f"slurm job script: {what}: expected no control characters, "
                             f"got {bad} in {value!r}")
    if sbatch and "\\" in value:
        raise JobScriptError(f"slurm job script: {what}: sbatch reads a backslash as an escape, "
                             f"got {value!r}")
    return value


def _sbatch_line(name: str, value: str | bool) -> str:
    if value is True:
        return f"#SBATCH --{name}"
    return f"#SBATCH --{name}={shlex.quote(_checked(f'--{name}', str(value), sbatch=True))}"


def job_script(s: SlurmSettings, *, job_name: str, folder: Path, chdir: Path,
               python: str) -> str:
    """The sbatch script that runs submitit's job pickled in ``folder``, from ``chdir``."""
    own = [("job name", slurm_problem("job_name", job_name)),
           ("job folder", slurm_problem("log_dir", str(folder)))]
    for what, problem in [*((f"executor.slurm.{f}", p) for f, p in slurm_problems(s)), *own]:
        if problem is not None:
            raise JobScriptError(f"slurm job script: {what}: {problem}")
    stdout = str(JobPaths(folder=folder).stdout)  # <folder>/%j_%t_log.out, as submitit reads it
    opts: dict[str, str | bool] = {
        "job-name": job_name, "chdir": _checked("checkout", str(chdir), sbatch=True),
        "output": stdout.replace("%t", "0"), "open-mode": "append", "nodes": "1",
        "wckey": "submitit", "signal": f"{SlurmJobEnvironment.USR_SIG}@{s.signal_delay_s}",
    }
    opts.update(sbatch_options(s))  # after ours: `extra` cannot name ours (MANAGED_OPTIONS)
    lines = ["#!/bin/bash", "", "# Parameters"]
    lines += [_sbatch_line(name, opts[name]) for name in sorted(opts)]
    setup = [f"export SPECDEC_CACHE={shlex.quote(s.cache_dir)}"] if s.cache_dir else []
    setup += list(s.setup)
    if setup:
        lines += ["", "# setup", *setup]
    argv = ["srun", "--unbuffered", "--output", stdout,
            _checked("python", python, sbatch=False), "-u", "-m", "submitit.core._submit",
            str(folder)]
    lines += ["", "# command", "export SUBMITIT_EXECUTOR=slurm", shlex.join(argv), ""]
    return "\n".join(lines)


__all__ = ["JobScriptError", "job_script"]
