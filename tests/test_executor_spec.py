"""The [executor] table: campaign file, site file laid over it, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact import executor_spec
from artifact.executor_spec import SlurmSettings, parse_executor, sbatch_options
from artifact.spec import SpecError, load_campaign

CAMPAIGN = """
[campaign]
name = "c"
[defaults]
target = "m"
prompt_set = "kick"
family = "final"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "r"
drafter = "none"
"""


@pytest.fixture(autouse=True)
def no_site(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A developer's own experiments/site.toml must not change what these tests see."""
    monkeypatch.delenv("SPECDEC_SITE", raising=False)
    monkeypatch.setattr(executor_spec, "SITE_FILE", tmp_path / "no-site.toml")


def write(tmp_path: Path, extra: str) -> Path:
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN + extra)
    return f


def test_local_is_the_default(tmp_path: Path) -> None:
    camp = load_campaign(write(tmp_path, ""))
    assert camp.executor.kind == "local" and camp.pool_mixed_hardware is False


def test_slurm_settings_from_the_campaign(tmp_path: Path) -> None:
    camp = load_campaign(write(tmp_path, """
[executor]
kind = "slurm"
[executor.slurm]
partition = "gpu"
account = "lab"
time = "1:30:00"
cpus_per_task = 8
mem = "32G"
gres = "gpu:a100:1"
constraint = "a100"
exclusive = true
extra = ["--qos=high"]
setup = ["module load cuda"]
runs_dir = "shared/runs"
"""))
    s = camp.executor.slurm
    assert camp.executor.kind == "slurm"
    assert (s.partition, s.account, s.time, s.cpus_per_task, s.mem, s.gres) == (
        "gpu", "lab", "1:30:00", 8, "32G", "gpu:a100:1")
    assert s.runs_dir == str((tmp_path / "shared/runs").resolve())
    assert sbatch_options(s) == {
        "partition": "gpu", "account": "lab", "time": "1:30:00", "cpus-per-task": "8",
        "mem": "32G", "gres": "gpu:a100:1", "constraint": "a100", "exclusive": True,
        "requeue": True, "qos": "high"}


def test_site_file_is_laid_over_the_campaign(tmp_path: Path) -> None:
    site = tmp_path / "site.toml"
    site.write_text('[executor]\nkind = "slurm"\n[executor.slurm]\npartition = "a100"\n')
    ex = parse_executor({"slurm": {"partition": "cpu", "account": "lab"}}, where="c.toml",
                        base=tmp_path, site=site)
    assert ex.kind == "slurm"
    assert (ex.slurm.partition, ex.slurm.account) == ("a100", "lab")
    assert "site.toml" in ex.source
    # the command line's choice wins over both
    assert parse_executor({}, where="c.toml", base=tmp_path, site=site,
                          override_kind="local").kind == "local"


@pytest.mark.parametrize(("table", "field"), [
    ('kind = "pbs"', "executor.kind"),
    ("[executor.slurm]\ntime = \"soon\"", "executor.slurm.time"),
    ("[executor.slurm]\ncpus_per_task = 0", "executor.slurm.cpus_per_task"),
    ("[executor.slurm]\nexclusive = \"yes\"", "executor.slurm.exclusive"),
    ("[executor.slurm]\nextra = [\"-p gpu\"]", "executor.slurm.extra[0]"),
    ("[executor.slurm]\npartion = \"gpu\"", "executor.slurm.partion"),
    ("[executor.slurm]\ngres = \"gpu:1\"\ngpus_per_node = 1", "executor.slurm.gpus_per_node"),
    ("colour = 1", "executor.colour"),
])
def test_mistakes_are_one_line_naming_the_field(tmp_path: Path, table: str, field: str) -> None:
    with pytest.raises(SpecError) as err:
        load_campaign(write(tmp_path, "[executor]\n" + table + "\n"))
    msg = str(err.value)
    assert "\n" not in msg and "c.toml" in msg
    assert f": {field}: " in msg


def test_a_site_file_holds_only_the_executor(tmp_path: Path) -> None:
    site = tmp_path / "site.toml"
    site.write_text("[campaign]\nname = 'x'\n")
    with pytest.raises(SpecError, match=r"site.toml: campaign: unknown table"):
        parse_executor({}, where="c.toml", base=tmp_path, site=site)


def test_a_named_site_file_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECDEC_SITE", str(tmp_path / "nope.toml"))
    with pytest.raises(SpecError, match=r"nope\.toml: file not found"):
        load_campaign(write(tmp_path, ""))


def test_pool_mixed_hardware_is_a_boolean(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.replace('name = "c"', 'name = "c"\npool_mixed_hardware = 1'))
    with pytest.raises(SpecError, match=r"campaign\.pool_mixed_hardware: expected true or false"):
        load_campaign(f)


def test_defaults_ask_sbatch_for_requeue_only() -> None:
    assert sbatch_options(SlurmSettings()) == {"requeue": True}
    assert sbatch_options(SlurmSettings(requeue=False, gpus_per_node=2)) == {
        "gpus-per-node": "2", "no-requeue": True}


HOSTILE = ["a b", "x;id", "$(id)", "`id`", "x\nid", "x\rid", "x\x00y", "ünï", "x\u2028y",
           "x\u202ey", "#x", "x\\y", "-x", ""]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("key", ["partition", "account", "constraint", "mem", "gres", "time",
                                 "job_name", "extra", "setup", "cache_dir", "runs_dir",
                                 "log_dir"])
def test_hostile_values_are_refused_at_reading_or_kept_literally(tmp_path: Path, key: str,
                                                                  value: str) -> None:
    """Names, options and control characters: one line naming the field. Folders: as written."""
    raw = {"extra": [f"--qos={value}"], "setup": [f"module load {value}"]}.get(key, value)
    toml = json.dumps(raw)  # a JSON string or list of strings is a TOML value too
    f = write(tmp_path, f"[executor]\nkind = \"slurm\"\n[executor.slurm]\n{key} = {toml}\n")
    control = executor_spec.control_char(value) is not None
    kept = (key == "setup" and not control) or (
        key.endswith("_dir") and value and not control
        and not (key != "cache_dir" and "\\" in value))
    if kept:
        s = load_campaign(f).executor.slurm
        got = s.setup[0] if key == "setup" else getattr(s, key)
        assert got.endswith(value)
        return
    field = f"executor.slurm.{key}" + ("[0]" if key in ("extra", "setup") else "")
    with pytest.raises(SpecError) as err:
        load_campaign(f)
    msg = str(err.value)
    assert "\n" not in msg and "\r" not in msg and "\x00" not in msg
    assert f"c.toml: {field}: expected " in msg
