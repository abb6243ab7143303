"""Synthetic twins: exact token targets, calibrated density, the block-aligned shared prefix,
source locking, the context rule (with a toy tokenizer; the real one in test_workload_server)."""

from __future__ import annotations

import random

import pytest

from artifact.workloads import synthetic as Y
from artifact.workloads.sessionplan import plan_sessions, session_from_json, session_to_json
from artifact.workloads.sessions import Conversation, Turn
from tests.workloads.toytok import ToyTokenizer


@pytest.mark.parametrize("style", Y.STYLES)
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
def test_exact_text_hits_every_target(style: str, density: float) -> None:
    tok = ToyTokenizer()
    for n in [1, 2, 3, 7, 31, 64, 200]:
        text = Y.exact_text(lambda c, n=n: Y.filler_text(style, density, c, random.Random(n)),
                            n, tok)
        assert len(tok.pieces(text)) == n
        assert text == text.strip()


def test_filler_is_deterministic_and_prefix_stable() -> None:
    a = Y.filler_text("code", 0.3, 500, random.Random(3))
    b = Y.filler_text("code", 0.3, 2000, random.Random(3))
    assert b.startswith(a) and a == Y.filler_text("code", 0.3, 500, random.Random(3))


def test_density_moves_characters_per_token_and_calibration_finds_a_target() -> None:
    tok = ToyTokenizer()
    lo = Y.chars_per_token([Y.filler_text("english", 1.0, 3000, random.Random(0))], tok)
    hi = Y.chars_per_token([Y.filler_text("english", 0.0, 3000, random.Random(0))], tok)
    assert lo < hi
    target = (lo + hi) / 2
    d, got = Y.calibrate("english", target, tok)
    assert 0 < d < 1 and got == pytest.approx(target, rel=0.03)
    assert Y.calibrate("english", hi * 2, tok, sample_chars=3000) == (0.0, pytest.approx(hi))


def test_unknown_style_is_one_line() -> None:
    with pytest.raises(Y.SynthError, match="style: expected one of english, code, got 'xml'"):
        Y.filler_text("xml", 0.0, 10, random.Random(0))


def test_block_prefix_is_whole_blocks() -> None:
    assert Y.block_prefix_tokens(64, 16, 1000) == 64
    assert Y.block_prefix_tokens(64, 16, 47) == 32
    with pytest.raises(Y.SynthError, match="not a multiple of the block size 16"):
        Y.block_prefix_tokens(60, 16, 100)


def sessions() -> list[Conversation]:
    rng = random.Random(5)

    def words(n: int) -> str:
        return " ".join(rng.choice(["alpha", "be", "gamma", "do", "x"]) for _ in range(n))

    return [Conversation(id=f"s{i}", n_turns_full=k, turns=tuple(
        Turn(user=words(5 + 3 * t + 40 * (t == 0)), reply=words(12 + t)) for t in range(k)))
        for i, k in enumerate([1, 3, 6])]


@pytest.mark.parametrize("knobs", [
    Y.Knobs(style="english"),
    Y.Knobs(style="code", chars_per_token=2.5),
    Y.Knobs(style="code", prefix_tokens=32, block=16),
    Y.Knobs(recurrent=True),
], ids=["english", "code", "code+prefix", "recurrent"])
def test_plan_keeps_every_turns_token_counts_and_locks_ids(knobs: Y.Knobs) -> None:
    tok = ToyTokenizer()
    p = plan_sessions(sessions(), tok, knobs, ctx_size=4096, cap=8, seed=1)
    real = {s.session_id: s for s in p.sessions if s.side == "real"}
    synth = {s.session_id: s for s in p.sessions if s.side == "synthetic"}
    assert set(real) == set(synth) == {"s0", "s1", "s2"}  # source locking
    assert p.summary["id_jaccard"] == 1.0
    for sid, r in real.items():
        y = synth[sid]
        assert [t.prompt_tokens for t in y.turns] == [t.prompt_tokens for t in r.turns]
        assert [t.n_predict for t in y.turns] == [t.n_predict for t in r.turns]
        assert all(1 <= t.n_predict <= 8 for t in r.turns)
        assert y.users != r.users
        for a, b in zip(y.replies, r.replies, strict=True):
            assert len(tok.pieces(a)) == len(tok.pieces(b))
    assert sorted(s.order for s in p.sessions) == list(range(6))  # one interleaved order
    assert p.summary["prompt_token_mismatch_max"] == 0
    if knobs.prefix_tokens:
        prefixes = {s.system for s in synth.values()}
        assert len(prefixes) == 1  # one shared prefix
        (text,) = prefixes
        assert text is not None and len(tok.pieces(text)) == 32
        assert all(s.prefix_tokens % 16 == 0 for s in synth.values())
    if knobs.chars_per_token and not knobs.recurrent:
        got = p.summary["chars_per_token"]["synthetic"]
        assert got == pytest.approx(knobs.chars_per_token, rel=0.1)


def test_recurrent_filler_is_other_sessions_text() -> None:
    tok = ToyTokenizer()
    vocab = [("alpha", "beta"), ("gamma", "delta"), ("omega", "sigma")]
    convs = [Conversation(id=f"s{i}", n_turns_full=2, turns=tuple(
        Turn(user=" ".join([a, b] * (10 + t)), reply=" ".join([b, a] * (8 + t)))
        for t in range(2))) for i, (a, b) in enumerate(vocab)]
    p = plan_sessions(convs, tok, Y.Knobs(recurrent=True), ctx_size=4096, cap=8, seed=1)
    for s in p.sessions:
        if s.side != "synthetic":
            continue
        i = int(s.session_id[1:])
        pool = [m for c in convs if c.id != s.session_id
                for m in [t.user for t in c.turns] + [t.reply for t in c.turns]]
        others = "\n\n".join(pool + pool)  # the draw wraps around the pool
        for m in s.users + s.replies:
            while m.endswith(Y.PAD):  # padded to the exact count
                m = m.removesuffix(Y.PAD)
            head = m.rsplit(None, 1)[0] if " " in m else ""
            assert head in others  # real text of the other sessions, cut at a token edge
            assert not set(m.split()) & set(vocab[i])


def test_prefix_too_long_for_a_short_first_turn_gets_fewer_blocks() -> None:
    tok = ToyTokenizer()
    short = [Conversation(id="s", n_turns_full=1, turns=(Turn(user="alpha " * 6,
                                                              reply="be do"),))]
    p = plan_sessions(short, tok, Y.Knobs(prefix_tokens=64, block=16), ctx_size=4096, cap=8, seed=1)
    y = next(s for s in p.sessions if s.side == "synthetic")
    r = next(s for s in p.sessions if s.side == "real")
    # 13 toy tokens of user text: a 16-token system prompt adds 8 beyond the default; 32 would
    # add 24, more than the first message has
    assert y.prefix_tokens == 16
    assert y.turns[0].prompt_tokens == r.turns[0].prompt_tokens


def test_a_session_that_cannot_fit_at_turn_zero_is_left_out_with_one_line() -> None:
    tok = ToyTokenizer()
    convs = sessions()
    big = Conversation(id="huge", n_turns_full=1, turns=(Turn(user="alpha " * 400, reply="x"),))
    p = plan_sessions([big, *convs], tok, Y.Knobs(), ctx_size=300, cap=8, seed=1)
    assert {s.session_id for s in p.sessions} == {"s0", "s1", "s2"}
    assert len(p.problems) == 1
    assert p.problems[0].startswith("session 'huge': turn 0 needs ")
    assert "more than the context of 300" in p.problems[0]


def test_context_rule_truncates_long_sessions() -> None:
    tok = ToyTokenizer()
    p = plan_sessions(sessions(), tok, Y.Knobs(), ctx_size=150, cap=8, seed=1)
    for s in p.sessions:
        assert all(t.prompt_tokens + t.n_predict <= 150 for t in s.turns)
    assert max(len(s.turns) for s in p.sessions) < 6


def test_plan_round_trips_through_json() -> None:
    p = plan_sessions(sessions(), ToyTokenizer(), Y.Knobs(prefix_tokens=16), ctx_size=4096,
                      cap=8, seed=1)
    assert [session_from_json(session_to_json(s)) for s in p.sessions] == p.sessions
