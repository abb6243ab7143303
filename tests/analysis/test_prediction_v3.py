"""Cost model v3 (issue 44): the lookup priced per drafter, the post-hoc predictions of the
committed core cells, and a second family predicted from its own calibration runs alone
(Gemma 3's names, on a folder made from the committed SmolLM2 calibration runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from artifact import paths, records
from artifact.analysis import loops
from artifact.analysis import prediction as P
from artifact.analysis.validate import predictions as screen_predictions

KS = (1, 4, 16)  # the family's k list is whatever cost-<target>-k<k> runs are present


def _gemma_runs(root: Path) -> Path:
    """SmolLM2's calibration runs under Gemma's names (q4_1 -> q4_k_m), three k's only, and
    the first study pilot's no-draft output made a loop (the others made plainly not)."""
    names = {"q4_1": "q4_k_m", "q8_0": "q8_0", "f16": "f16"}
    for run in sorted(paths.CORE_RUNS.glob("cost-*")) + sorted(paths.CORE_RUNS.glob("pilot-*")):
        parts = run.name.split("-")
        if parts[0] == "cost":
            if parts[2].startswith("k") and int(parts[2][1:]) not in KS:
                continue
            parts[1] = names[parts[1]]
        dest = root / "-".join(parts)
        dest.mkdir(parents=True)
        for f in (records.CONFIG, records.RESULTS):
            shutil.copy(run / f, dest / f)
    none = root / "pilot-study-none" / records.RESULTS
    rows = [json.loads(line) for line in none.read_text().splitlines()]
    for i, r in enumerate(rows):  # exactly one output loops: the first
        n = len(r["event_text"])
        r["event_text"] = (([" all", " work", " and", " no", " play", "."] * n)[:n] if i == 0
                           else [f" w{j}" for j in range(n)])
    none.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _gemma_runs(tmp_path_factory.mktemp("gemma") / "runs-gemma")


def test_a_second_family_is_predicted_from_its_own_runs_and_passes_the_reader(
        gemma: Path, tmp_path: Path) -> None:
    out = tmp_path / "gemma-predictions.json"
    assert P.main(["--family", "gemma3", "--runs", str(gemma), "--out", str(out)]) == 0
    cells, meta = screen_predictions.read(out, targets=P.GEMMA3.targets)
    assert meta is not None and len(cells) == 3 * 2 * 4
    doc = json.loads(out.read_text())
    assert doc["cost_model"] == "v3" and doc["family"] == "gemma3"
    assert set(doc["costs"]) == {"q4_k_m", "q8_0", "f16"}
    # the k's present, no others (k = 1 left no rounds in these runs: a width is listed where
    # its requests made rounds)
    assert {"4", "16"} <= set(doc["costs"]["f16"]["per_k"]) <= {str(k) for k in KS}
    assert doc["costs"]["q4_k_m"]["c1_ms"] > 0
    # every n-gram drafter's lookup is priced from the pilots' undrafted prompts
    assert set(doc["lookup"]) == {"ngram-mod", "ngram-mod-k16", "ngram-simple"}
    assert all(p["n_prompts"] >= 1 for p in doc["lookup"].values())
    for c in doc["cells"]:
        assert (c["lookup_ms_per_token"] is None) == (c["drafter"] == P.MODEL_DRAFTER)
        assert c["pilot_measured_q4_k_m"] is None or c["target"] == "q4_k_m"
        strata = c["strata"]
        assert (strata["looping"]["n_pilot_prompts"] + strata["not_looping"]["n_pilot_prompts"]
                == c["n_pilot_prompts"])
    study = doc["loops"]["by_task"]["study"]
    assert study["summary"]["looping"] == 1 and doc["loops"]["rule"].startswith(
        f"self-repetition >= {loops.LOOP_SHARE}")
    # the looping stratum holds the one looping pilot prompt: a point, no interval
    (c,) = [c for c in doc["cells"] if (c["target"], c["task"], c["drafter"])
            == ("f16", "study", "ngram-mod")]
    assert c["strata"]["looping"]["n_pilot_prompts"] == 1
    assert c["strata"]["looping"]["lo"] is None


def test_the_lookup_lowers_every_n_gram_prediction_and_leaves_the_draft_model(
        gemma: Path) -> None:
    v2 = {(c["target"], c["task"], c["drafter"]): c
          for c in P.build(gemma, P.GEMMA3, model="v2")["cells"]}
    v3 = P.build(gemma, P.GEMMA3)
    for c in v3["cells"]:
        was = v2[(c["target"], c["task"], c["drafter"])]["predicted"]
        if c["drafter"] == P.MODEL_DRAFTER:
            assert c["predicted"] == was
        else:
            assert c["predicted"] < was


def test_a_family_with_one_width_has_no_line(gemma: Path, tmp_path: Path) -> None:
    from artifact.errors import AnalysisError

    root = tmp_path / "runs"
    shutil.copytree(gemma, root)
    for k in KS[1:]:
        shutil.rmtree(root / f"cost-q8_0-k{k}")
    with pytest.raises(AnalysisError, match=r"cost-q8_0-k<k>: expected synthetic rounds at two"):
        P.build(root, P.GEMMA3)


def test_the_posthoc_predictions_price_the_lookup_and_keep_the_committed_ones() -> None:
    committed = {(c["target"], c["task"], c["drafter"]): c for c in json.loads(
        paths.CORE_PREDICTIONS.read_text())["cells"]}
    post = P.posthoc_cells(paths.CORE_RUNS)
    assert post.keys() == committed.keys()
    for key, p in post.items():
        assert p["method"] == "v3-posthoc" and p["lo"] <= p["predicted"] <= p["hi"]
        assert p["sign"] == ("pays" if p["predicted"] > 1 else "loses")
        if key[2] == P.MODEL_DRAFTER:
            assert p["lookup_ms_per_token"] is None
            assert p["predicted"] == committed[key]["predicted"]
        else:
            assert p["lookup_ms_per_token"] > 0
            assert p["predicted"] < committed[key]["predicted"]
