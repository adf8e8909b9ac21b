"""fatpaths: a FatPaths layered-routing configuration compiler for Ethernet fabrics."""

import os
import sys

# fatpaths does no floating-point matrix products (its LPs are HiGHS', its matrices sparse or
# integer), so OpenBLAS's thread pool is never used; starting a thread per core costs about
# 50 ms of CPU at numpy's import on a 2-core machine, a third of a tiny simulation's process.
# Set only when numpy is not imported yet and the user has not chosen.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
