"""The workload path against the real llama-server (marked ``server``): the generator on the
real tokenizer, and a tiny workload run end to end through the runner."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from artifact import records
from artifact.campaign import runner
from artifact.campaign.server import Server, ServerFiles
from artifact.campaign.tokenizer import ServerTokenizer
from artifact.spec import load_campaign
from artifact.workloads import sessions as S
from artifact.workloads import synthetic as Y
from artifact.workloads.sessionplan import CPT_TOLERANCE, plan_sessions
from tests.workload_corpus import tiny_session_set

pytestmark = pytest.mark.server

TOML = """
[campaign]
name = "wl-test"
[defaults]
target = "m"
family = "workload"
prompt_set = "tiny"
drafter = "ngram-mod"
k = 4
n_predict = 4
ctx_size = 1024
threads = 1
concurrency = 2
warmup = 1
timeout_s = 120
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "wl-code-prefix"
workload = { condition = "code+prefix", style = "code", prefix_tokens = 32, block = 16 }
"""


@pytest.fixture(scope="module")
def tokenizer(real_toolchain: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[ServerTokenizer]:
    tmp = tmp_path_factory.mktemp("tok")
    camp_file = tmp / "c.toml"
    camp_file.write_text(TOML)
    spec = load_campaign(camp_file).runs[0]
    binary, model = real_toolchain
    server = Server(ServerFiles(binary=Path(binary), model=Path(model), draft_model=None), spec,
                    tmp / "server.log")
    server.start()
    tok = ServerTokenizer(server.base_url)
    yield tok
    tok.close()
    server.stop()


@pytest.mark.parametrize("style", Y.STYLES)
def test_exact_token_counts_on_the_real_tokenizer(tokenizer: ServerTokenizer, style: str) -> None:
    for n in (1, 5, 17, 64, 150):
        text = Y.exact_text(
            lambda c, n=n: Y.filler_text(style, 0.2, c, random.Random(n)), n, tokenizer)
        assert len(tokenizer.pieces(text)) == n


@pytest.mark.parametrize(("style", "target"), [("english", 4.3), ("english", 3.0),
                                               ("code", 3.5)])
def test_calibrated_chars_per_token_within_tolerance(tokenizer: ServerTokenizer, style: str,
                                                     target: float) -> None:
    density, got = Y.calibrate(style, target, tokenizer)
    assert 0 < density < 1
    assert got == pytest.approx(target, rel=CPT_TOLERANCE)
    # and on fresh text of the same density, cut to exact counts like the plan does
    texts = [Y.exact_text(lambda c, i=i: Y.filler_text(style, density, c, random.Random(i)),
                          40 + 7 * i, tokenizer) for i in range(20)]
    assert Y.chars_per_token(texts, tokenizer) == pytest.approx(target, rel=CPT_TOLERANCE)


def test_plan_on_the_real_template_keeps_prompt_tokens(tokenizer: ServerTokenizer) -> None:
    def conv(sid: str, topic: str) -> S.Conversation:
        return S.Conversation(id=sid, n_turns_full=5, turns=tuple(
            S.Turn(user=S.clip(f"Question {t}: how do I {topic} in Python? " * 3, 200),
                   reply=S.clip(f"Answer {t}: use sorted(xs) or a loop over {topic}. " * 4, 200))
            for t in range(5)))

    convs = [conv("x1", "sort a list"), conv("x2", "read a file")]
    for knobs in (Y.Knobs(style="english"), Y.Knobs(style="code", prefix_tokens=32),
                  Y.Knobs(recurrent=True)):
        p = plan_sessions(convs, tokenizer, knobs, ctx_size=2048, cap=16, seed=3)
        for sid in ("x1", "x2"):
            real, synth = (next(s for s in p.sessions if s.side == side and s.session_id == sid)
                           for side in ("real", "synthetic"))
            assert [t.prompt_tokens for t in synth.turns] == \
                [t.prompt_tokens for t in real.turns]


def test_a_tiny_workload_run_end_to_end(real_toolchain: tuple[str, str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_session_set(tmp_path, monkeypatch, "[sets.tiny]\nseed = 1\nclip_chars = 120\n"
                     "max_turns = 3\nstrata = [[2, 3, 1]]\n", extra_ids=("no-such-id",))
    camp_file = tmp_path / "c.toml"
    camp_file.write_text(TOML)
    camp = load_campaign(camp_file)
    said: list[str] = []
    m = runner.run(camp, camp.runs[0], runs_root=tmp_path / "runs", show_progress=False,
                   say=said.append)
    run = tmp_path / "runs" / "wl-code-prefix"
    turns, bad = records.read_turns(run)
    assert m.complete and bad == 0 and m.n_results == m.n_expected == len(turns) > 0
    assert any("unknown session id 'no-such-id'" in s for s in said)
    assert {t.side for t in turns} == {"real", "synthetic"}
    assert {t.session_id for t in turns if t.side == "real"} == \
        {t.session_id for t in turns if t.side == "synthetic"}
    for t in turns:
        assert t.output_tokens == t.n_predict  # ignore_eos: exactly what was asked
        assert t.cached_tokens + t.timings.prompt_n == t.prompt_tokens
        assert t.condition == "code+prefix"
    later = [t for t in turns if t.turn > 0]
    assert later and all(t.cached_tokens > 0 for t in later)  # the session kept its slot
    # a rerun finds the run complete and measures nothing more
    again = runner.run(camp, camp.runs[0], runs_root=tmp_path / "runs", show_progress=False,
                       say=said.append)
    assert again.complete and len(records.read_turns(run)[0]) == len(turns)
