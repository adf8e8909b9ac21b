"""htsim connection matrices, so a scenario can run in both simulators.

Format (csg-htsim `connection_matrix.cpp`): a `Nodes N` line, a `Connections C` line, then one
line per flow, `src->dst id I start T size B`, with T in picoseconds. Lines starting with `#`
are comments. Triggers and failures are htsim-only features and are rejected here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fatpaths_cfg.output import write_owned_file

from .workloads import Workload, WorkloadError


class ConnectionMatrixError(WorkloadError):
    """A connection-matrix line this reader cannot use; the message names file and line."""


# The first line of a matrix fatpaths writes (a comment to htsim): what lets a later run
# replace the file, and refuse any other.
MATRIX_SIGNATURE = "# htsim connection matrix written by fatpaths simulate --save-matrix"


def connection_matrix_text(workload: Workload, n_hosts: int) -> str:
    lines = [MATRIX_SIGNATURE, f"Nodes {n_hosts}", f"Connections {workload.n_flows}"]
    for i in range(workload.n_flows):
        lines.append(
            f"{int(workload.src[i])}->{int(workload.dst[i])} id {i + 1} "
            f"start {int(workload.start_ps[i])} size {int(workload.size[i])}"
        )
    return "\n".join(lines) + "\n"


def write_connection_matrix(
    workload: Workload, n_hosts: int, path: str | Path, force: bool = False
) -> None:
    """Write the matrix atomically; an existing file only if fatpaths wrote it (or --force)."""
    text = connection_matrix_text(workload, n_hosts)
    write_owned_file(Path(path), text, MATRIX_SIGNATURE, force)


def read_connection_matrix(path: str | Path) -> tuple[int, Workload]:
    """Returns (number of nodes, workload); flows keep the file's order."""
    where = Path(path)
    nodes: int | None = None
    declared: int | None = None
    src: list[int] = []
    dst: list[int] = []
    start: list[int] = []
    size: list[int] = []
    for number, raw in enumerate(where.read_text(encoding="ascii").splitlines(), start=1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue

        def fail(message: str, line: int = number) -> ConnectionMatrixError:
            return ConnectionMatrixError(f"{where}:{line}: {message}")

        head = tokens[0]
        if head == "Nodes" and len(tokens) == 2:
            nodes = int(tokens[1])
        elif head == "Connections" and len(tokens) == 2:
            declared = int(tokens[1])
        elif "->" in head:
            a, _, b = head.partition("->")
            fields = dict(zip(tokens[1::2], tokens[2::2], strict=False))
            unknown = set(fields) - {"id", "start", "size", "prio"}
            if unknown:
                raise fail(f"unsupported field(s) {', '.join(sorted(unknown))} (triggers?)")
            if "start" not in fields or "size" not in fields:
                raise fail("a connection needs 'start T' and 'size B'")
            try:
                src.append(int(a))
                dst.append(int(b))
                start.append(round(float(fields["start"])))
                size.append(int(fields["size"]))
            except ValueError as exc:
                raise fail(f"cannot read {raw.strip()!r}: {exc}") from exc
        else:
            raise fail(f"unexpected line {raw.strip()!r}")
    if nodes is None:
        raise ConnectionMatrixError(f"{where}: missing 'Nodes N' line")
    if declared is not None and declared != len(src):
        raise ConnectionMatrixError(
            f"{where}: 'Connections {declared}' but {len(src)} connection lines"
        )
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    if len(s) and (s.min() < 0 or d.min() < 0 or max(s.max(), d.max()) >= nodes):
        raise ConnectionMatrixError(f"{where}: host ids must lie in 0..{nodes - 1}")
    workload = Workload(
        src=s.astype(np.int32),
        dst=d.astype(np.int32),
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.asarray(start, dtype=np.int64),
        description={"pattern": "htsim-connection-matrix", "source": str(where)},
    )
    return nodes, workload
