"""Per-request observations of the acceptance-split study, from what a run directory keeps.

Sources, and which figure comes from which (a record's ``sources`` says it per request):

- **accepted, drafted, verification rounds, accepted per position**: at batch 1 the runner
  reads ``/metrics`` before and after every request, so the request's own counter deltas are the
  source (``metrics``). With concurrent requests counters cannot be split by request; then
  accepted and drafted come from the reply's ``timings`` and rounds and per-position counts
  from the server log's per-request lines (``log``): rounds = accepted / (mean len - 1), the
  printed mean length being 1 + accepted / rounds.
- Every source is cross-checked against the others where both exist (:func:`cross_check`).
- **answer and prompt tokens, server decode time**: the reply's ``timings``.
- **steps, tokens per step, step gaps, client decode tok/s**: the stream's event arrival times
  (:mod:`.steps`), ESTIMATED.
- **code and prose segments**: the streamed text (:mod:`.segments`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from artifact.analysis import segments as _seg
from artifact.analysis import steps as _steps
from artifact.analysis.logs import LogEntry
from artifact.analysis.runs import RunDescription
from artifact.records import Result

M_ACCEPTED = "spec_decode_num_accepted_tokens_total"
M_DRAFTED = "spec_decode_num_draft_tokens_total"
M_ROUNDS = "spec_decode_num_drafts_total"
M_POS = "spec_decode_num_accepted_tokens_per_pos_total"


def config_label(d: RunDescription) -> str:
    """Short name of a configuration: ``no draft``, ``ngram-mod k=4``, ``draft Q2_K k=4``.

    >>> from artifact.analysis.runs import Sampling
    >>> base = dict(run_id="r", campaign="c", family="accsplit", target="t", target_model=None,
    ...     target_quant="Q4_1", draft_model=None, draft_quant=None, k=4, p_min=None,
    ...     ctx_size=1, n_predict=1, prompt_set="p", prompt_set_sha256="s", concurrency=1,
    ...     repeats=1, environment={}, sampling=Sampling(temperature=1, top_k=1, top_p=1, seed=1))
    >>> config_label(RunDescription(drafter="ngram-mod", **base))
    'ngram-mod k=4'
    >>> config_label(RunDescription(**{**base, "drafter": "draft-simple", "draft_quant": "Q2_K"}))
    'draft Q2_K k=4'
    """
    if d.drafter == "none":
        return "no draft"
    name = f"draft {d.draft_quant}" if d.drafter.startswith("draft-") else d.drafter
    return f"{name} k={d.k}" if d.k is not None else name


@dataclass(frozen=True, kw_only=True)
class Segment:
    """One segment kind (code or prose) of one answer: tokens, steps started in it, time."""

    tokens: int  # tokens after the first (the prefill's)
    steps: int  # client steps after the first whose first token is in this segment
    ms: float  # arrival gaps of its tokens (each gap belongs to the token it brings)

    @property
    def tok_per_s(self) -> float:
        return self.tokens / self.ms * 1000.0 if self.ms > 0 else math.nan

    @property
    def accepted_per_step(self) -> float:
        """ESTIMATED: tokens per client step - 1, within the segment."""
        return self.tokens / self.steps - 1.0 if self.steps else math.nan


@dataclass(frozen=True, kw_only=True)
class Obs:
    """One completed request of the study."""

    run_id: str
    config: str
    drafter: str
    window: str | None
    utc_date: str | None
    batch: int
    budget: int
    prompt_id: str
    domain: str
    repeat: int
    seed: int | None
    answer_tokens: int
    prompt_tokens: int
    predicted_ms: float
    # server counters (MEASURED); None when nothing was drafted or the source is missing
    accepted: int | None
    drafted: int | None
    rounds: int | None
    pos_accepted: tuple[float, ...] | None  # accepted at draft position i, over the request
    source: str  # "metrics" | "log" | "none" (no drafter)
    # the other sources, for the cross-check
    accepted_reply: int | None
    drafted_reply: int | None
    accepted_log: int | None
    drafted_log: int | None
    rounds_log: int | None
    # client (ESTIMATED)
    steps: _steps.Steps
    est: _steps.Estimates
    code: Segment
    prose: Segment
    text: str
    contended: bool | None = None  # the record's verdict; None where no contention was recorded
    quiet_window: bool = True  # its window's timings are quiet (set by the study's loader)
    k: int | None = None  # the drafter's draft depth

    @property
    def accepted_per_round(self) -> float | None:
        if self.accepted is None or not self.rounds:
            return None
        return self.accepted / self.rounds

    @property
    def server_steps(self) -> int:
        """Target forward passes of the answer: each step adds one token the target sampled."""
        return self.answer_tokens - (self.accepted or 0)

    @property
    def ms_per_step(self) -> float:
        return self.predicted_ms / self.server_steps if self.server_steps > 0 else math.nan


def rounds_from_log(e: LogEntry, k: int | None, drafter: str) -> int | None:
    """Verification rounds of one log entry: accepted / (mean len - 1), rounded.

    With nothing accepted the mean length says nothing; ngram-mod with ``n_min = n_max = k``
    drafts exactly k tokens per round, so there rounds = drafted / k.

    >>> rounds_from_log(LogEntry(accepted=32, generated=40, alpha=0.8, mean_len=7.4,
    ...                          acc_per_pos=None), 8, "ngram-mod")
    5
    >>> rounds_from_log(LogEntry(accepted=0, generated=12, alpha=0.0, mean_len=1.0,
    ...                          acc_per_pos=None), 4, "ngram-mod")
    3
    """
    if e.accepted > 0 and e.mean_len is not None and e.mean_len > 1.0:
        return round(e.accepted / (e.mean_len - 1.0))
    if drafter == "ngram-mod" and k and e.generated % k == 0:
        return e.generated // k
    return None


def _token_events(r: Result) -> tuple[list[float], list[str]]:
    """Arrival times and texts of the token events (the final stop event carries no token)."""
    times = list(r.event_ms)
    texts = list(r.event_text) if r.event_text is not None else [""] * len(times)
    n = min(len(times), r.timings.predicted_n)
    return times[:n], texts[:n]


def _segments(times: Sequence[float], texts: Sequence[str], starts: Sequence[int],
              ) -> tuple[Segment, Segment]:
    """Tokens, steps and time per segment kind. The first token (the prefill's, a step but
    no drafting round) is counted in neither: every token counted arrived after a gap."""
    kinds = _seg.locate(texts)
    start_set = set(starts)
    tok = {_seg.CODE: 0, _seg.PROSE: 0}
    st = {_seg.CODE: 0, _seg.PROSE: 0}
    ms = {_seg.CODE: 0.0, _seg.PROSE: 0.0}
    for i, kind in enumerate(kinds):
        if i == 0:
            continue
        tok[kind] += 1
        if i in start_set:
            st[kind] += 1
        ms[kind] += times[i] - times[i - 1]
    return (Segment(tokens=tok[_seg.CODE], steps=st[_seg.CODE], ms=ms[_seg.CODE]),
            Segment(tokens=tok[_seg.PROSE], steps=st[_seg.PROSE], ms=ms[_seg.PROSE]))


def _pos_from_metrics(delta: Mapping[str, float]) -> tuple[float, ...]:
    pos: dict[int, float] = {}
    for key, v in delta.items():
        if key.startswith(M_POS + "{") and '"' in key:
            pos[int(key.split('"')[1])] = v
    return tuple(pos[i] for i in sorted(pos))


def observe(desc: RunDescription, r: Result, entry: LogEntry | None) -> Obs:
    """The observation of one record (``entry``: its paired server-log line, if any)."""
    times, texts = _token_events(r)
    st = _steps.group_steps(times)
    code, prose = _segments(times, texts, st.starts)
    t = r.timings
    rounds_log = rounds_from_log(entry, desc.k, desc.drafter) if entry else None
    pos_log = (tuple(p * rounds_log for p in entry.acc_per_pos)
               if entry and entry.acc_per_pos and rounds_log is not None else None)
    accepted: int | None
    drafted: int | None
    rounds: int | None
    pos: tuple[float, ...] | None
    if desc.drafter == "none":
        source, accepted, drafted, rounds, pos = "none", None, None, None, None
    elif r.metrics_delta:
        d = r.metrics_delta
        source = "metrics"
        accepted, drafted = int(d.get(M_ACCEPTED, 0.0)), int(d.get(M_DRAFTED, 0.0))
        rounds = int(d.get(M_ROUNDS, 0.0))
        pos = _pos_from_metrics(d) or None
    else:
        source = "log"
        accepted = t.draft_n_accepted if t.draft_n is not None else 0
        drafted = t.draft_n if t.draft_n is not None else 0
        rounds = rounds_log if t.draft_n else 0
        pos = pos_log
    return Obs(
        run_id=desc.run_id, config=config_label(desc), drafter=desc.drafter,
        window=r.window, utc_date=r.utc_date, batch=desc.concurrency, budget=desc.n_predict,
        prompt_id=r.prompt_id, domain=r.domain, repeat=r.repeat, seed=r.seed,
        answer_tokens=t.predicted_n, prompt_tokens=t.prompt_n, predicted_ms=t.predicted_ms,
        accepted=accepted, drafted=drafted, rounds=rounds, pos_accepted=pos, source=source,
        accepted_reply=t.draft_n_accepted, drafted_reply=t.draft_n,
        accepted_log=entry.accepted if entry else None,
        drafted_log=entry.generated if entry else None, rounds_log=rounds_log,
        steps=st, est=_steps.estimates(st), code=code, prose=prose, text="".join(texts),
        contended=r.contended, k=desc.k,
    )
