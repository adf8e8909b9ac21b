"""Order statistics of result arrays, without numpy's masked-array module.

`np.median` and `np.percentile` import `numpy.ma` (a few percent of a small run's CPU); a sort
and numpy's own interpolation give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def median(values: npt.ArrayLike) -> float:
    """The median as `np.median` gives it (NaN when any value is NaN); `values` non-empty."""
    ordered = np.sort(np.asarray(values, dtype=np.float64), axis=None)
    if np.isnan(ordered[-1]):
        return float("nan")
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return float((ordered[mid - 1] + ordered[mid]) / 2)


def percentile(values: npt.ArrayLike, q: float) -> float:
    """`np.percentile(values, q)` (linear), bit for bit; `np.percentile` reaches `numpy.ma`
    too. `values` non-empty."""
    ordered = np.sort(np.asarray(values, dtype=np.float64), axis=None)
    if np.isnan(ordered[-1]):
        return float("nan")
    virtual = (len(ordered) - 1) * (np.float64(q) / 100)
    below = int(np.floor(virtual))
    above = min(below + 1, len(ordered) - 1)
    gamma = virtual - below
    a, b = ordered[below], ordered[above]
    diff = b - a
    # numpy's lerp: from the nearer end, so the result stays within [a, b].
    return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)
