"""``python -m artifact.workloads plan``: a run's plan printed without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

import artifact.workloads as W
from artifact import paths
from artifact.workloads import prompts as P
from artifact.workloads.__main__ import main

KICK = paths.CAMPAIGNS / "kick.toml"
WORKLOAD = paths.CAMPAIGNS / "workload.toml"


def test_the_interface_names_what_it_exports() -> None:
    assert sorted(W.__all__) == W.__all__
    assert all(hasattr(W, n) for n in W.__all__)


@pytest.fixture()
def kick_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[P.Prompt]:
    """A two-prompt ``kick`` set written where prompt sets go (a scratch folder here)."""
    monkeypatch.setattr(paths, "PROMPTS", tmp_path)
    texts = ["<|im_start|>user\nfirst\nline<|im_end|>\n", "second " * 20]
    prompts = [P.Prompt(id=f"code/p{i}", domain="code", source="s", text=t,
                        sha256=P._sha(t)) for i, t in enumerate(texts)]
    P.write_prompt_set(prompts, P.prompt_set_path("kick"))
    return prompts


def test_a_prompt_run_prints_its_requests_in_order(kick_set: list[P.Prompt],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(KICK), "--run", "kick-none"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# run kick-none: prompt set kick (sha256 ")
    rows = out[2:]
    assert [r.split()[1] for r in rows] == ["code/p0", "code/p1"]
    assert all(r.split()[2:5] == ["0", "48", "42"] for r in rows)  # repeat, n_predict, seed
    assert "first\\nline" in rows[0] and rows[1].endswith("…")  # cut short, on one line


def test_full_prints_each_text_whole(kick_set: list[P.Prompt],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(KICK), "--run", "kick-none", "--full"]) == 0
    out = capsys.readouterr().out
    assert kick_set[0].text in out and kick_set[1].text in out


def test_an_unknown_run_is_one_line_naming_the_known_ones(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(KICK), "--run", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run 'nope'" in err
    assert "kick-none, kick-ngram-mod-c2, kick-draft-self" in err


def test_a_set_not_drawn_yet_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(paths, "PROMPTS", tmp_path)
    assert main(["plan", str(KICK), "--run", "kick-none"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not drawn yet" in err and "doit prompts" in err


def test_a_workload_run_prints_the_plan_recorded_for_its_spec(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(WORKLOAD), "--run", "workload-code"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "sessions.jsonl" in out[0] and "sides real, synthetic" in out[0]
    assert len(out) > 2 and out[2].split()[1].split(":")[0] in {"real", "synthetic"}


def test_a_workload_run_without_a_recorded_plan_says_why_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(WORKLOAD), "--run", "workload-code", "--runs-dir",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "server's tokenizer" in err


def test_help_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["plan", "--help"])
    assert done.value.code == 0
    assert "--full" in capsys.readouterr().out
