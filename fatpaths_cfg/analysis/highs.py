"""One way to make a HiGHS solver, shared by every LP and ILP of the analyses.

HiGHS runs every solver of a process on one global thread scheduler, sized by the first solver
that runs; since highspy 1.16 a later solver asking for another thread count fails its `run()`
with status "Not Set". So all of them ask for the same count: one thread, which also makes the same
sample give the same answer on any machine and leaves the other cores to sweep workers.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator

import highspy
import numpy as np
import scipy.sparse as sp


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """File descriptor 1 pointed at /dev/null for the duration (C++ output included, flushed
    before it is restored)."""
    sys.stdout.flush()
    saved = os.dup(1)
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(sink, 1)
        yield
    finally:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        os.close(sink)


# Per column or row, or one number for all.
Bound = np.ndarray | float


def new_solver() -> highspy.Highs:
    with _quiet_stdout():
        # HiGHS prints its banner and copyright from the constructor, before any option can
        # turn output off: on stdout it would break `analyze ... | ...` (one line per result).
        solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    return solver


def column_lp(
    matrix: sp.csc_matrix,
    cost: np.ndarray,
    col_bounds: tuple[Bound, Bound],
    row_bounds: tuple[Bound, Bound],
    maximise: bool = True,
) -> highspy.HighsLp:
    """An LP over a column-wise constraint matrix; a bound may be one number for all."""
    n_rows, n_cols = matrix.shape
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = n_rows
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_, lp.col_upper_ = (_highs_bound(b, n_cols) for b in col_bounds)
    lp.row_lower_, lp.row_upper_ = (_highs_bound(b, n_rows) for b in row_bounds)
    lp.sense_ = highspy.ObjSense.kMaximize if maximise else highspy.ObjSense.kMinimize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
    lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
    lp.a_matrix_.value_ = matrix.data.astype(float)
    return lp


def _highs_bound(bound: Bound, size: int) -> np.ndarray:
    # highspy's kHighsInf is IEEE infinity: numpy's infinite bounds pass as they are.
    return np.ascontiguousarray(np.broadcast_to(np.asarray(bound, dtype=float), (size,)))
