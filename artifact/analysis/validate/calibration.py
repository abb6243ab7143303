"""A reproduction's calibration (``reproduction.json: calibration``), read by one rule set.

The calibration times a few requests of the study's no-draft run on the reproducing machine and
stores the sums (``here_ms``, ``committed_ms``) beside their ratio (``scale``). The ratio decides
whether two run sets can be "the same hardware" (:func:`artifact.reproduce.host.judge`), so the
stored ``scale`` is never taken on its own word:

- ``here_ms`` and ``committed_ms``: null, or finite and above 0;
- ``scale``: a finite number above 0 (a skipped calibration stores 1.0 and says why in
  ``skipped``); 0, a negative or a non-finite value is refused, never read as 1.0 or as "no
  calibration";
- where both times are stored, ``scale`` must be their ratio (to the 4 decimals it is stored
  with): a stored 1.0 whose own times give 3.45 is refused.

Each refusal is one line naming the file and the field (``error``, given by the reader).

>>> from artifact.errors import ArtifactError
>>> check({"here_ms": 300.0, "committed_ms": 200.0, "scale": 1.5}, "r.json", ArtifactError)
1.5
>>> check({"here_ms": 690.0, "committed_ms": 200.0, "scale": 1.0}, "r.json", ArtifactError)
Traceback (most recent call last):
...
artifact.errors.ArtifactError: r.json: field 'calibration.scale': expected here_ms / \
committed_ms = 690 / 200 = 3.45, got 1.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from artifact.errors import ArtifactError

FIELD = "calibration"
# stored: the times to 0.1 ms, the ratio to 4 decimals; two requests take seconds, so the
# recomputed ratio agrees with the stored one far inside this
REL_TOLERANCE = 1e-3


def _number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _positive(c: Mapping[str, Any], key: str, file: str, error: type[ArtifactError],
              *, optional: bool) -> float | None:
    v = c.get(key)
    if v is None and optional:
        return None
    if not _number(v) or not math.isfinite(v) or v <= 0:
        said = "null or a finite number above 0" if optional else "a finite number above 0"
        raise error(f"{file}: field '{FIELD}.{key}': expected {said}, got {v!r}")
    return float(v)


def check(c: Mapping[str, Any], file: str, error: type[ArtifactError]) -> float:
    """The calibration's scale, checked (the module's rules); ``error`` otherwise."""
    here = _positive(c, "here_ms", file, error, optional=True)
    committed = _positive(c, "committed_ms", file, error, optional=True)
    scale = _positive(c, "scale", file, error, optional=False)
    assert scale is not None
    if here is not None and committed is not None:
        ratio = here / committed
        if not math.isclose(scale, ratio, rel_tol=REL_TOLERANCE):
            raise error(f"{file}: field '{FIELD}.scale': expected here_ms / committed_ms = "
                        f"{here:g} / {committed:g} = {ratio:.4g}, got {c['scale']!r}")
    return scale


def speed_ratio(c: Any) -> float | None:
    """The calibrated speed ratio of a checked calibration; ``None`` when there is none (no
    calibration, or one skipped).

    >>> speed_ratio({"scale": 1.0, "skipped": "no committed records"}) is None
    True
    >>> speed_ratio({"scale": 2.5, "here_ms": 5.0, "committed_ms": 2.0})
    2.5
    """
    if not isinstance(c, Mapping) or c.get("skipped"):
        return None
    scale = c.get("scale")
    return float(scale) if _number(scale) else None
