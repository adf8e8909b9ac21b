"""One way to make a HiGHS solver, shared by every LP and ILP of the analyses.

HiGHS runs every solver of a process on one global thread scheduler, sized by the first solver
that runs; since highspy 1.16 a later solver asking for another thread count fails its `run()`
with status "Not Set". So all of them ask for the same count: one thread, which also makes the same
sample give the same answer on any machine and leaves the other cores to sweep workers.
"""

from __future__ import annotations

import highspy


def new_solver() -> highspy.Highs:
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    return solver
