from __future__ import annotations

from pathlib import Path

import pytest

from artifact.spec import SpecError, load_campaign

HEAD = """
[campaign]
name = "t"
[defaults]
target = "m"
prompt_set = "kick"
family = "final"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
"""


def write(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "c.toml"
    f.write_text(HEAD + body)
    return f


def test_valid_campaign_resolves_defaults(tmp_path: Path) -> None:
    camp = load_campaign(write(tmp_path, '[[run]]\nid = "a"\ndrafter = "ngram-mod"\nk = 4\n'))
    (run,) = camp.runs
    assert run.run_id == "a" and run.k == 4 and run.ctx_size == 2048
    assert run.target == "smollm2-135m" and run.target_quant == "Q4_1"
    assert run.sha256 == load_campaign(tmp_path / "c.toml").runs[0].sha256


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('[[run]]\nid = "a"\ndrafter = "ngram-mod"\nbogus = 1\n', "run[0].bogus: unknown key"),
        ('[[run]]\nid = "a"\ndrafter = "ngram-mod"\nk = "four"\n', "run[0].k: expected a positive"),
        ('[[run]]\nid = "a"\ndrafter = "eagle9"\n', "run[0].drafter: unknown drafter 'eagle9'"),
        ('[[run]]\nid = "a"\ndrafter = "draft-simple"\n', "run[0].draft_model: drafter"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nk = 2\n', "run[0].k: drafter none"),
        ('[[run]]\nid = "a"\ndrafter = "ngram-cache"\nk = 2\n', "run[0].k: drafter ngram-cache"),
        ('[[run]]\nid = "a"\ndrafter = "none"\ntemperature = -1\n', "run[0].temperature"),
        ('[[run]]\nid = "a"\ndrafter = "none"\n[[run]]\nid = "a"\ndrafter = "none"\n',
         "run[1].id: duplicate"),
        ('[[run]]\nid = "a b"\ndrafter = "none"\n', "run[0].id: expected letters"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nfamily = "x"\n', "run[0].family"),
        ('[models.p]\npath = "nope.gguf"\nfamily = "f"\nquant = "Q"\n'
         '[[run]]\nid = "a"\ndrafter = "none"\n', "models.p.path: file not found"),
        ('[server]\nbinary = "nope"\n[[run]]\nid = "a"\ndrafter = "none"\n',
         "server.binary: file not found"),
        ('[extra]\n[[run]]\nid = "a"\ndrafter = "none"\n', "extra: unknown table"),
        # run ids and prompt-set names become folder and file names: nothing that escapes
        ('[[run]]\nid = ".."\ndrafter = "none"\n', "run[0].id: expected letters"),
        ('[[run]]\nid = "."\ndrafter = "none"\n', "run[0].id: expected letters"),
        ('[[run]]\nid = "_kick"\ndrafter = "none"\n', "run[0].id: expected letters"),
        ('[[run]]\nid = "a/b"\ndrafter = "none"\n', "run[0].id: expected letters"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nprompt_set = "../x"\n',
         "run[0].prompt_set: expected letters"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nprompt_set = "nosuch"\n',
         "run[0].prompt_set: unknown prompt set 'nosuch'"),
        # non-finite numbers
        ('[[run]]\nid = "a"\ndrafter = "none"\ntemperature = nan\n',
         "run[0].temperature: expected a finite number"),
        ('[[run]]\nid = "a"\ndrafter = "none"\ntimeout_s = inf\n',
         "run[0].timeout_s: expected a finite number"),
        ('[defaults]\n', "not valid TOML (Cannot declare ('defaults',) twice"),
        ('[models.a]\nderive = "b"\nquant = "Q2_K"\nfamily = "f"\n'
         '[models.b]\nderive = "a"\nquant = "Q3_K"\nfamily = "f"\n'
         '[[run]]\nid = "a"\ndrafter = "none"\n', "models.a.derive: cycle: a -> b -> a"),
        ('[[run]]\nid = "a"\ndrafter = "none"\n[[run]]\n', "run[1].id: missing"),
    ],
)
def test_bad_campaigns_fail_with_one_line_naming_file_and_field(
        tmp_path: Path, body: str, where: str) -> None:
    with pytest.raises(SpecError) as err:
        load_campaign(write(tmp_path, body))
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(str(tmp_path / "c.toml")) or msg.startswith("c.toml")
    assert where in msg


def test_non_utf8_and_folder_campaign_files(tmp_path: Path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_bytes(HEAD.encode() + b'[[run]]\nid = "\xff"\n')
    with pytest.raises(SpecError, match="not UTF-8"):
        load_campaign(bad)
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(SpecError, match="is a folder"):
        load_campaign(tmp_path / "d.toml")


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        load_campaign(tmp_path / "none.toml")
    bad = tmp_path / "b.toml"
    bad.write_text("[campaign\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_campaign(bad)


def test_committed_campaigns_are_valid() -> None:
    from artifact.spec import campaign_files

    files = campaign_files()
    assert {f.name for f in files} >= {"cpu-study.toml", "kick.toml"}
    for f in files:
        assert load_campaign(f).runs


def test_later_fields_parse_and_enter_the_hash_only_when_set(tmp_path: Path) -> None:
    plain = load_campaign(write(tmp_path, '[[run]]\nid = "a"\ndrafter = "none"\n')).runs[0]
    set_ = load_campaign(write(tmp_path, '[[run]]\nid = "a"\ndrafter = "none"\n'
                               'ignore_eos = true\nseed_per_repeat = true\n'
                               'metrics_per_request = true\nwindow = "w1"\n')).runs[0]
    assert (set_.ignore_eos, set_.seed_per_repeat, set_.metrics_per_request, set_.window) == (
        True, True, True, "w1")
    assert set_.sha256 != plain.sha256
    # at their defaults they leave the hash as it was before they existed
    import hashlib
    import json

    from artifact.spec import LATER_FIELDS

    legacy = {k: v for k, v in plain.as_dict().items() if k not in LATER_FIELDS}
    want = hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()
    assert plain.sha256 == want
    assert (plain.request_seed(3), set_.request_seed(3)) == (plain.seed, set_.seed + 3)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('[[run]]\nid = "a"\ndrafter = "none"\nignore_eos = 1\n',
         "run[0].ignore_eos: expected true or false"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nwindow = 3\n', "run[0].window: expected a"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nmetrics_per_request = true\nconcurrency = 2\n',
         "run[0].metrics_per_request: needs concurrency = 1"),
        ('[[run]]\nid = "a"\ndrafter = "ngram-cache"\nngram_match = 4\n',
         "run[0].ngram_match: only the n-gram drafters"),
        ('[[run]]\nid = "a"\ndrafter = "ngram-simple"\nsynthetic_accept = true\n',
         "run[0].synthetic_accept: needs a drafter and its draft length k"),
        ('[[run]]\nid = "a"\ndrafter = "none"\nsynthetic_accept = true\n',
         "run[0].synthetic_accept: needs a drafter"),
        ('[[run]]\nid = "a"\ndrafter = "ngram-simple"\nk = 4\nsynthetic_accept = "yes"\n',
         "run[0].synthetic_accept: expected true or false"),
    ],
)
def test_bad_later_fields_fail_with_one_line(tmp_path: Path, body: str, where: str) -> None:
    with pytest.raises(SpecError, match=where.replace("[", r"\[").replace("]", r"\]")):
        load_campaign(write(tmp_path, body))


def test_measured_runs_stay_current_for_their_recorded_spec_hash() -> None:
    """Adding spec fields must not make a committed run stale (its hash is recomputed here)."""
    from artifact import paths, records

    camp = load_campaign(paths.CAMPAIGNS / "cpu-study.toml")
    for spec in camp.runs:
        config = paths.RUNS / spec.run_id / records.CONFIG
        if config.exists():
            assert records.read_json(config)["spec_sha256"] == spec.sha256, spec.run_id


def test_accsplit_campaign_shape() -> None:
    from artifact import paths

    camp = load_campaign(paths.CAMPAIGNS / "accsplit.toml")
    windows = {r.window for r in camp.runs}
    first_date = {"w1", "w2", "w3", "w4", "w5"}
    second_date = {"w6", "w7", "w8"}  # issue 18: a second date, with a long budget
    assert windows == first_date | second_date
    for r in camp.runs:
        assert r.temperature == 1.0 and r.ignore_eos and r.seed_per_repeat and r.threads == 1
        assert r.metrics_per_request == (r.concurrency == 1)
    drafters = {"none", "ngram-mod", "draft-simple"}
    for w in windows:  # every window holds the short-budget batch-1 cells
        assert {r.drafter for r in camp.runs
                if r.window == w and r.concurrency == 1 and r.n_predict == 128} == drafters
    assert {r.n_predict for r in camp.runs} == {128, 256, 1024}
    batches = {r.concurrency: {x.window for x in camp.runs if x.concurrency == r.concurrency}
               for r in camp.runs}
    assert batches == {1: windows, 2: {"w2", "w6"}, 4: {"w3", "w7"}}
    # the long budgets beside the short one, same seed, in three windows each
    assert {r.window for r in camp.runs if r.n_predict == 256} == {"w1", "w4", "w5"}
    assert {r.window for r in camp.runs if r.n_predict == 1024} == second_date
    assert {r.drafter for r in camp.runs if r.n_predict == 1024} == drafters - {"none"}
    # batch strata: the drafters only on the first date; with a no-draft control on the second
    for w, expected in (("w2", drafters - {"none"}), ("w3", drafters - {"none"}),
                        ("w6", drafters), ("w7", drafters)):
        assert {r.drafter for r in camp.runs if r.window == w and r.concurrency > 1} == expected
    seeds = {w: {r.seed for r in camp.runs if r.window == w} for w in windows}
    assert all(len(s) == 1 for s in seeds.values())
    assert len(set.union(*seeds.values())) == len(windows)


def test_core_campaign_shape() -> None:
    """Issue 29: one interleave group per (target, task), six runs each (five drafters and a
    control), three passes, per-request counters; the calibration on held-out prompts only."""
    from artifact import paths
    from artifact.campaign.runner import runs_root

    camp = load_campaign(paths.CAMPAIGNS / "core.toml")
    groups: dict[str, list[str]] = {}
    for r in camp.runs:
        assert r.interleave is not None
        groups.setdefault(r.interleave, []).append(r.run_id)
        assert (r.repeats, r.threads, r.temperature, r.metrics_per_request) == (3, 1, 0.0, True)
        assert r.prompt_set in ("study", "edit") and not r.synthetic_accept
    assert len(groups) == 6 and all(len(v) == 6 for v in groups.values())
    assert {r.target_quant for r in camp.runs} == {"Q4_1", "Q8_0", "F16"}
    assert runs_root(camp) == paths.CORE_RUNS
    cal = load_campaign(paths.CAMPAIGNS / "core-calibration.toml")
    assert {r.prompt_set for r in cal.runs} == {"edit-pilot", "study-pilot"}
    assert runs_root(cal) == paths.CORE_RUNS
    assert {r.run_id for r in cal.runs}.isdisjoint(r.run_id for r in camp.runs)
    for r in cal.runs:
        assert r.synthetic_accept == (r.family == "cost" and r.drafter != "none")
