"""End to end: the realism study's kick (r3-main: none and ngram-mod on REAL-A, REAL-B and
English, the first 2 sessions in play order), with the real llama-server, compared with the
committed runs cut to the same runs and sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact import paths, records
from artifact.reproduce import calibrate as cal
from artifact.reproduce import command, plan, studies
from artifact.spec import load_campaign
from tests.reproduce.test_kick_reproduction import tree_digest

pytestmark = pytest.mark.server
STUDY = studies.STUDIES["realism"]
# the claims whose runs the kick reruns: their quantities come from 2 sessions as from 40
COMPARED = ("rl-exact-ngram", "rl-floor-e2e-none", "rl-acc-real-ngram", "rl-acc-english-ngram",
            "rl-gap-english-ngram")


def test_the_realism_kick_reruns_the_first_sessions_and_compares_the_rl_claims(
        real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    before = tree_digest(paths.REALISM_RUNS)
    selection = plan.select([r.run_id for r in load_campaign(STUDY.campaign).runs], kick=True,
                            study=STUDY)
    lines: list[str] = []
    folder = command.run_and_compare(selection=selection, campaign_file=STUDY.campaign,
                                     reference=STUDY.reference, root=tmp_path,
                                     show_progress=False, say=lines.append, study="realism")
    assert tree_digest(paths.REALISM_RUNS) == before, "the committed runs changed"
    assert folder.name.endswith("-realism-kick")

    manifest = records.read_json(folder / plan.MANIFEST)
    assert manifest["complete"] and manifest["selection"]["sessions"] == 2
    first = [s.session_id for s in cal.committed_plan(STUDY.reference / STUDY.kick_runs[0])][:2]
    c = manifest["calibration"]  # the no-draft run's same sessions, here and committed
    assert c["run_id"] == "r3-main-none-real-a" and c["session_ids"] == first
    assert c["turns"] == 12 and c["scale"] > 0
    for rid in STUDY.kick_runs:
        run = folder / plan.RUNS / rid
        config = records.read_json(run / records.CONFIG)
        assert config["sessions"] == 2 and config["session_ids"] == first
        turns, _ = records.read_turns(run, keep_events=False)
        assert {t.session_id for t in turns} == set(first) and len(turns) >= 12

    doc = json.loads((folder / command.REPORT / "comparison.json").read_text())
    assert doc["b"]["reproduction"]["selection"]["sessions"] == 2
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    contended = any(t.contended for rid in STUDY.kick_runs
                    for t in records.read_turns(folder / plan.RUNS / rid)[0])
    for cid in COMPARED:
        # a turn contended on one server is dropped from every server: on a machine so busy
        # that every turn was, no value (said as missing, never as wrong)
        assert verdicts[cid] not in ("not run", "failed", "violated"), (cid, verdicts[cid])
        assert verdicts[cid] != "missing" or contended, cid
    if not contended:
        # greedy decoding on a prefix of the committed history: the same acceptance
        for cid in ("rl-exact-ngram", "rl-acc-real-ngram", "rl-acc-english-ngram"):
            assert verdicts[cid] == "reproduced", cid
    assert verdicts["rl-acc-real-draft"] == "not run"  # its runs are not in the kick
    assert any(line.startswith("report ") for line in lines)

    # a second call resumes: nothing is measured again
    sizes = {rid: (folder / plan.RUNS / rid / records.RESULTS).stat().st_size
             for rid in STUDY.kick_runs}
    again = command.run_and_compare(selection=selection, campaign_file=STUDY.campaign,
                                    reference=STUDY.reference, root=tmp_path,
                                    show_progress=False, say=lambda _: None, study="realism")
    assert again == folder
    assert sizes == {rid: (folder / plan.RUNS / rid / records.RESULTS).stat().st_size
                     for rid in STUDY.kick_runs}
