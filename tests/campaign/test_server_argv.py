from __future__ import annotations

from pathlib import Path

import pytest

from artifact import paths
from artifact.campaign.server import (
    ServerFiles,
    argv_template,
    build_argv,
    draft_length_flags,
    free_port,
)
from artifact.spec import load_campaign


def spec(run_id: str):
    return load_campaign(paths.CAMPAIGNS / "cpu-study.toml").run(run_id)


def test_argv_is_a_list_bound_to_loopback_with_metrics_and_verbose_log() -> None:
    argv = build_argv(ServerFiles(binary=Path("/b/llama-server"), model=Path("t.gguf"),
                                  draft_model=Path("d.gguf")), spec("curves-draft-q2k-k8"), 9000)
    joined = " ".join(argv)
    assert argv[0] == "/b/llama-server"
    assert "--host 127.0.0.1 --port 9000" in joined
    assert "--metrics" in argv and "-lv 4" in joined
    assert "--spec-type draft-simple -md d.gguf" in joined
    assert "--spec-draft-n-max 8" in joined


def test_no_draft_run_has_no_spec_flags() -> None:
    argv = build_argv(ServerFiles(binary=Path("s"), model=Path("t.gguf"), draft_model=None),
                      spec("final-none"), 1)
    assert not any(a.startswith("--spec") or a == "-md" for a in argv)


def test_slots_follow_concurrency_and_context_is_per_slot() -> None:
    s = load_campaign(paths.CAMPAIGNS / "kick.toml").run("kick-ngram-mod-c2")
    argv = build_argv(ServerFiles(binary=Path("s"), model=Path("t"), draft_model=None), s, 1)
    assert argv[argv.index("-np") + 1] == "2"
    assert argv[argv.index("-c") + 1] == str(2 * s.ctx_size)


def test_free_port_is_usable() -> None:
    assert 0 < free_port() < 65536


def test_draft_length_reaches_each_drafter_by_its_own_flag() -> None:
    files = ServerFiles(binary=Path("s"), model=Path("t"), draft_model=None)
    mod = " ".join(build_argv(files, spec("ksweep-ngram-mod-k16"), 1))
    assert "--spec-ngram-mod-n-max 16 --spec-ngram-mod-n-min 16" in mod
    assert "--spec-draft-n-max" not in mod  # the n-gram drafters ignore it
    with pytest.raises(ValueError, match="ngram-cache"):
        draft_length_flags("ngram-cache", 4)


def test_recorded_argv_template_has_no_machine_paths_or_port() -> None:
    t = argv_template(spec("curves-draft-q2k-k8"))
    assert t[:3] == ["llama-server", "-m", "TARGET.gguf"]
    assert "DRAFT.gguf" in t and t[t.index("--port") + 1] == "0"


def test_ngram_mod_lookup_length_reaches_its_flag() -> None:
    s = load_campaign(paths.CAMPAIGNS / "accsplit.toml").run("w1-b1-n128-ngram-mod")
    argv = " ".join(argv_template(s))
    assert "--spec-ngram-mod-n-max 4 --spec-ngram-mod-n-min 4" in argv
    assert "--spec-ngram-mod-n-match 8" in argv
    assert "n-match" not in " ".join(argv_template(spec("final-ngram-mod")))


def test_synthetic_acceptance_and_lookup_length_reach_the_server() -> None:
    """Issue 29's cost runs: ngram-simple with a 4-token lookup drafts k tokens and the
    server's synthetic acceptance accepts all k (one rate of 1 per position)."""
    camp = load_campaign(paths.CAMPAIGNS / "core-calibration.toml")
    argv = " ".join(argv_template(camp.run("cost-q4_1-k8")))
    assert "--spec-type ngram-simple" in argv and "--spec-ngram-simple-size-m 8" in argv
    assert "--spec-ngram-simple-size-n 4" in argv
    assert "--spec-synth-rates 1,1,1,1,1,1,1,1" in argv
    core = load_campaign(paths.CAMPAIGNS / "core.toml")
    assert "--spec-synth" not in " ".join(argv_template(core.run("q4_1-edit-ngram-mod")))
