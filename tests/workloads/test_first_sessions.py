"""Issue 45: a reproduction of a study of sessions may rerun each run's first N sessions; the cut
is taken in play order, so it is a prefix of what the whole run played on every side."""

from __future__ import annotations

from artifact.workloads import Inputs, PlannedSession, PlannedTurn, RunPlan


def _session(sid: str, side: str, order: int, turns: int = 2) -> PlannedSession:
    return PlannedSession(session_id=sid, side=side, order=order, system=None, prefix_tokens=0,
                          users=["u"] * turns, replies=["r"] * turns,
                          turns=[PlannedTurn(turn=t, prompt_tokens=9, prompt_chars=30,
                                             n_predict=4) for t in range(turns)])


def _plan(*sessions: PlannedSession) -> RunPlan:
    return RunPlan(inputs=Inputs(name="realism", sha256="0" * 64, n=4), sessions=list(sessions))


def test_the_first_sessions_are_taken_in_play_order_not_by_id() -> None:
    # the id lock's order (a, b, c, d) is not the play order (c, a, d, b)
    p = _plan(_session("a", "real-a", 1), _session("b", "real-a", 3), _session("c", "real-a", 0),
              _session("d", "real-a", 2))
    cut = p.first_sessions(2)
    assert cut.session_ids == ["c", "a"]
    assert cut.keys == {("real-a:c", 0), ("real-a:c", 1), ("real-a:a", 0), ("real-a:a", 1)}
    assert p.first_sessions(None) is p and p.first_sessions(9).keys == p.keys


def test_every_side_of_a_kept_session_is_kept() -> None:
    # an interleaved plan plays each session side after side: a session is kept on every side
    p = _plan(_session("a", "real", 0), _session("a", "synthetic", 1),
              _session("b", "synthetic", 2), _session("b", "real", 3))
    cut = p.first_sessions(1)
    assert cut.session_ids == ["a"] and {s.side for s in cut.sessions} == {"real", "synthetic"}
