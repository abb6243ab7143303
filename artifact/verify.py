"""``python -m artifact.verify``: the claims ledger's command line, above the ledger and the
renderer both (:func:`artifact.render.report.main`).

    python -m artifact.verify [--strict] [--print-current] [--ledger F] [--summary F] [--vars F]

Prints each claim's status, recomputed from the committed runs; ``--strict`` fails when one is
not reproduced; ``--print-current`` prints the current values as TOML lines for a human to paste
into ``experiments/claims.toml``. The ledger (:mod:`artifact.claims`) knows no rendering and
imports nothing of ``render/``; this module is where the two meet.
"""

from __future__ import annotations

from artifact.render.report import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
