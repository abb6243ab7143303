"""Read ``summary.json`` (:mod:`artifact.contract.summary`) into the views the renderers need.

Nothing here computes a statistic: it selects, orders and labels what the analysis wrote.

Exceptions::

    RenderError            a configuration or input mistake; one clear line
    └── SummaryError       summary.json is missing, unreadable or off-schema (names file, field)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact.contract import summary as contract
from artifact.contract.summary import RunEntry
from artifact.errors import RenderError as RenderError
from artifact.errors import SummaryError as SummaryError

DOMAIN_ORDER = ("code", "chat", "math")
DRAFTER_ORDER = (
    "none", "draft-simple", "ngram-simple", "ngram-mod", "ngram-map-k", "ngram-map-k4v",
    "ngram-cache",
)


@dataclass(frozen=True, kw_only=True)
class Config:
    """One run's configuration, as the tables and figures label it."""

    run_id: str
    family: str
    label: str
    target: str
    target_quant: str
    drafter: str
    draft_model: str | None
    draft_quant: str | None
    k: int | None
    ctx_size: int

    @property
    def uses_draft_model(self) -> bool:
        return self.draft_model is not None

    @property
    def display(self) -> str:
        """A short label for tables and figures, built from the configuration's fields.

        The analysis's ``label`` names the draft model file; a reader needs the drafter, the
        draft's quantization and the draft length (absent: the server's default).

        >>> Config(run_id="r", family="ksweep", label="x", target="t", target_quant="Q4_1",
        ...        drafter="draft-simple", draft_model="t-q2_k", draft_quant="Q2_K", k=4,
        ...        ctx_size=4096).display
        'draft model Q2_K k=4'
        >>> Config(run_id="r", family="final", label="x", target="t", target_quant="Q4_1",
        ...        drafter="none", draft_model=None, draft_quant=None, k=None,
        ...        ctx_size=2048).display
        'no draft'
        """
        if self.drafter == "none":
            name = "no draft"
        elif self.uses_draft_model:
            name = f"draft model {self.draft_quant}" if self.draft_quant else "draft model"
            if self.draft_quant == self.target_quant:  # the target drafting for itself
                name += " (self)"
        else:
            name = self.drafter
        return name if self.k is None else f"{name} k={self.k}"

    @property
    def drafter_key(self) -> str:
        """The drafter configuration without the target, e.g. ``draft-simple Q2_K k=4``.

        >>> Config(run_id="r", family="final", label="x", target="t", target_quant="Q4_1",
        ...        drafter="draft-simple", draft_model="t", draft_quant="Q2_K", k=4,
        ...        ctx_size=4096).drafter_key
        'draft-simple Q2_K k=4'
        """
        parts = [self.drafter]
        if self.draft_quant:
            parts.append(self.draft_quant)
        if self.k is not None:
            parts.append(f"k={self.k}")
        return " ".join(parts)

    def sort_key(self) -> tuple[Any, ...]:
        rank = DRAFTER_ORDER.index(self.drafter) if self.drafter in DRAFTER_ORDER else 99
        return (self.target_quant, rank, self.drafter, self.draft_quant or "",
                -1 if self.k is None else self.k, self.run_id)


@dataclass(frozen=True)
class Summary:
    """A loaded summary: the validated JSON plus ordered views of its runs."""

    raw: contract.Summary
    configs: Mapping[str, Config]
    source: str = "summary.json"

    def ordered(self, ids: Iterable[str]) -> list[str]:
        """Run ids in the study's order: target quant, drafter, draft quant, k."""
        return sorted(ids, key=lambda r: self.configs[r].sort_key())

    def label(self, run_id: str) -> str:
        """The readable label of a run; the target's quantization is added when runs differ
        in it, so that no two configurations of a table share a label."""
        c = self.configs[run_id]
        quants = {x.target_quant for x in self.configs.values()}
        return c.display if len(quants) <= 1 else f"{c.display} ({c.target_quant} target)"

    def nothing_drafted(self, run_id: str, domain: str | None = None) -> bool:
        """True when a drafter's final run proposed no draft at all (overall or in one domain).

        Its acceptance is null there, so its speedup measures run-to-run variation, not
        drafting: tables and figures mark such cells.
        """
        if self.configs[run_id].drafter == "none":
            return False
        entry = self.raw["final"].get(run_id)
        if entry is None:
            return False
        st = entry["overall"] if domain is None else entry["by_domain"].get(domain)
        if not st or not st["n"]:
            return False
        return st["alpha"] is None or st["alpha"]["mean"] is None

    @property
    def final_ids(self) -> list[str]:
        return self.ordered(self.raw["final"])

    @property
    def speedup_ids(self) -> list[str]:
        return self.ordered(self.raw["speedup"])

    @property
    def curve_ids(self) -> list[str]:
        return self.ordered(r for r, p in self.raw["positions"].items() if p["all"])

    @property
    def breakeven_ids(self) -> list[str]:
        return self.ordered(self.raw["breakeven"])

    @property
    def domains(self) -> list[str]:
        """Domains present anywhere in the results, known ones first."""
        seen: set[str] = set()
        for sections in (self.raw["final"], self.raw["speedup"], self.raw["breakeven"],
                         self.raw["positions"]):
            for entry in sections.values():
                seen.update(entry["by_domain"])
        known = [d for d in DOMAIN_ORDER if d in seen]
        return known + sorted(seen - set(DOMAIN_ORDER))


def _config(run_id: str, run: RunEntry) -> Config:
    return Config(
        run_id=run_id, family=run["family"], label=run["label"], target=run["target"],
        target_quant=run["target_quant"], drafter=run["drafter"],
        draft_model=run["draft_model"], draft_quant=run["draft_quant"], k=run["k"],
        ctx_size=run["ctx_size"],
    )


def from_json(raw: Any, source: str = "summary.json") -> Summary:
    """Validate a parsed summary against the contract and index its runs."""
    data = contract.validate(raw, source=source, error=SummaryError)
    configs = {r: _config(r, run) for r, run in data["runs"].items()}
    return Summary(data, configs, source)


def load(path: Path) -> Summary:
    """Read and validate ``summary.json`` (one line naming the file and field if it is off)."""
    data = contract.read(path, error=SummaryError)
    return Summary(data, {r: _config(r, run) for r, run in data["runs"].items()}, str(path))
