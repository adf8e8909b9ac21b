"""htsim connection matrices, so a scenario can run in both simulators.

Format (csg-htsim `connection_matrix.cpp`): a `Nodes N` line, a `Connections C` line, then one
line per flow, `src->dst id I start T size B`, with T in picoseconds. Lines starting with `#`
are comments. Triggers and failures are htsim-only features and are rejected here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from fatpaths_cfg.support.memory import available_memory, cpu_time, gib

from . import budget
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
    # Imported when a matrix is written: the output module is not needed to read or simulate.
    from fatpaths_cfg.support.output import write_owned_file

    write_owned_file(Path(path), text, MATRIX_SIGNATURE, force)


# Simulated time is picoseconds on an unsigned 64-bit clock (see simulate's MAX_TIME_PS), and
# a flow's bytes must stay exact as a float (the statistics divide them).
MAX_START_PS = 2**62
MAX_FLOW_BYTES = 2**53
# Hosts a matrix may declare: far above any fabric, low enough to refuse a typo up front.
MAX_NODES = 2**31 - 1


# A connection line fatpaths writes is under 80 bytes and htsim's are alike; a line this long
# is no matrix's (it is how `/dev/zero` or a binary file shows), and reading stops there.
MAX_LINE_BYTES = 4096
# Bytes a matrix may spend per flow it can hold (comments and blank lines included): with the
# flow cap, the largest file read at all, refused by its size before a byte is read.
BYTES_PER_FLOW_LINE = 256


@dataclass(frozen=True)
class MatrixCaps:
    """The caps a matrix is read under: `--max-flows` and `--max-packets` (None: the defaults
    of `budget`), and the payload bytes a full packet carries."""

    max_flows: int | None = None
    max_packets: int | None = None
    mtu: int = 9000

    def flow_cap(self) -> int:
        return budget.default_max_flows() if self.max_flows is None else self.max_flows

    def packet_cap(self) -> int:
        return budget.default_max_packets() if self.max_packets is None else self.max_packets


def read_connection_matrix(
    path: str | Path, hosts: int | None = None, caps: MatrixCaps | None = None
) -> tuple[int, Workload]:
    """Returns (number of nodes, workload); flows keep the file's order. Every problem is a
    ConnectionMatrixError naming the file and line; `hosts`: the fabric's, which `Nodes`
    must equal. The caps hold while reading: a file too large for them is refused by its size
    before reading, and reading stops at the first line beyond one."""
    where = Path(path)
    caps = caps or MatrixCaps()
    try:
        with where.open("rb") as stream:
            _check_file_size(where, os.fstat(stream.fileno()).st_size, caps)
            return _read_lines(where, stream, hosts, caps)
    except OSError as exc:
        raise ConnectionMatrixError(f"{where}: cannot read it: {exc.strerror}") from None


def _check_file_size(where: Path, size: int, caps: MatrixCaps) -> None:
    flow_cap = caps.flow_cap()
    most = (flow_cap + 1) * BYTES_PER_FLOW_LINE
    if size > most:
        raise ConnectionMatrixError(
            f"{where}: {size:,} bytes, more than a matrix of at most {flow_cap:,} flows "
            f"(--max-flows) holds at {BYTES_PER_FLOW_LINE} bytes a line (fewer flows, or "
            f"--max-flows {-(-size // BYTES_PER_FLOW_LINE)} to try anyway)"
        )


def _lines(stream: BinaryIO) -> Iterator[bytes | None]:
    """The file's lines as `bytes.splitlines` splits them, read one at a time; None for a line
    longer than MAX_LINE_BYTES (where reading stops)."""
    while chunk := stream.readline(MAX_LINE_BYTES + 1):
        if len(chunk) > MAX_LINE_BYTES:
            yield None
            return
        yield from chunk.splitlines() or [b""]


def _read_lines(
    where: Path, stream: BinaryIO, hosts: int | None, caps: MatrixCaps
) -> tuple[int, Workload]:
    flow_cap, packet_cap = caps.flow_cap(), caps.packet_cap()
    packets = 0
    nodes: int | None = None
    declared: int | None = None
    # Lines of the Nodes and Connections lines and of each connection, for later errors.
    nodes_line = declared_line = 0
    lines: list[int] = []
    src: list[int] = []
    dst: list[int] = []
    start: list[int] = []
    size: list[int] = []
    for number, raw_bytes in enumerate(_lines(stream), start=1):

        def fail(message: str, line: int = number) -> ConnectionMatrixError:
            return ConnectionMatrixError(f"{where}:{line}: {message}")

        if raw_bytes is None:
            raise fail(f"a line of more than {MAX_LINE_BYTES:,} bytes (not a connection matrix)")
        try:
            raw = raw_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise fail("not UTF-8 text") from None
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue  # comments may say anything in any language
        if not raw.isascii():
            raise fail(f"unexpected character in {raw.strip()!r} (only comments may hold them)")
        head = tokens[0]
        if head == "Nodes" and len(tokens) == 2:
            if nodes is not None:
                raise fail("a second 'Nodes' line")
            nodes = _count(tokens[1], "Nodes", 1, MAX_NODES, fail)
            nodes_line = number
            if hosts is not None and nodes != hosts:
                raise fail(f"Nodes {nodes}, the fabric has {hosts} hosts")
        elif head == "Connections" and len(tokens) == 2:
            if declared is not None:
                raise fail("a second 'Connections' line")
            declared = _count(tokens[1], "Connections", 0, MAX_NODES, fail)
            declared_line = number
        elif "->" in head:
            a, _, b = head.partition("->")
            fields = dict(zip(tokens[1::2], tokens[2::2], strict=False))
            unknown = set(fields) - {"id", "start", "size", "prio"}
            if unknown:
                raise fail(f"unsupported field(s) {', '.join(sorted(unknown))} (triggers?)")
            if "start" not in fields or "size" not in fields:
                raise fail("a connection needs 'start T' and 'size B'")
            if len(src) == flow_cap:
                raise fail(_beyond_flow_cap(flow_cap, caps.max_flows is None))
            src.append(_count(a, "source", 0, MAX_NODES, fail))
            dst.append(_count(b, "destination", 0, MAX_NODES, fail))
            if src[-1] == dst[-1]:
                raise fail(f"host {src[-1]} sends to itself")
            start.append(_start(fields["start"], fail))
            size.append(_count(fields["size"], "size", 1, MAX_FLOW_BYTES, fail))
            packets += -(-size[-1] // caps.mtu)
            if packets > packet_cap:
                raise fail(_beyond_packet_cap(packets, packet_cap, len(src)))
            lines.append(number)
        else:
            raise fail(f"unexpected line {raw.strip()!r}")
    if nodes is None:
        raise ConnectionMatrixError(f"{where}:1: no 'Nodes N' line (htsim's first line)")
    if declared is not None and declared != len(src):
        raise ConnectionMatrixError(
            f"{where}:{declared_line}: 'Connections {declared}' but {len(src)} connection "
            f"line{'s' if len(src) != 1 else ''}"
        )
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    outside = np.flatnonzero(np.maximum(s, d) >= nodes)
    if len(outside):
        line = lines[int(outside[0])]
        raise ConnectionMatrixError(
            f"{where}:{line}: host ids must lie in 0..{nodes - 1} ('Nodes {nodes}' on line "
            f"{nodes_line})"
        )
    workload = Workload(
        src=s.astype(np.int32),
        dst=d.astype(np.int32),
        size=np.asarray(size, dtype=np.int64),
        start_ps=np.asarray(start, dtype=np.int64),
        description={"pattern": "htsim-connection-matrix", "source": str(where)},
    )
    return nodes, workload


def _beyond_flow_cap(cap: int, default: bool) -> str:
    memory = f"about {gib(cap * budget.BYTES_PER_FLOW)} of memory"
    if default:
        memory += f", half of the {gib(available_memory())} available"
    return (
        f"a flow beyond the cap of {cap:,} flows, which need {memory} (fewer flows, or a "
        f"--max-flows above {cap} to try anyway)"
    )


def _beyond_packet_cap(packets: int, cap: int, flows: int) -> str:
    seconds = flows * budget.CPU_SECONDS_PER_FLOW + packets * budget.CPU_SECONDS_PER_PACKET
    return (
        f"{flows:,} flow{'s' if flows != 1 else ''} up to this line, about {packets:,} data "
        f"packets, beyond the cap of {cap:,}: about {cpu_time(seconds)} to simulate (fewer or "
        f"smaller flows, or --max-packets {packets} to try anyway)"
    )


def _count(
    text: str, what: str, least: int, most: int, fail: Callable[[str], ConnectionMatrixError]
) -> int:
    """A whole number in least..most: `Nodes twelve`, `size 1e30` and `size -1` are errors."""
    try:
        value = int(text)
    except ValueError:
        raise fail(f"{what} {text!r} is not a whole number") from None
    if not least <= value <= most:
        raise fail(f"{what} {text} is out of range (expected {least}..{most})")
    return value


def _start(text: str, fail: Callable[[str], ConnectionMatrixError]) -> int:
    """A start time in picoseconds (htsim writes them as floats too): finite, in range."""
    try:
        value = float(text)
    except ValueError:
        raise fail(f"start {text!r} is not a number of picoseconds") from None
    if not math.isfinite(value) or not 0 <= value < MAX_START_PS:
        raise fail(f"start {text} is out of range (expected 0 <= start < {MAX_START_PS} ps)")
    return round(value)
