# Type stub of the Rust extension module built from native/ (tests/test_native_stub.py checks it).
from typing import Any

import numpy as np
import numpy.typing as npt

# "pgo" when built with a profile of its training run (.ci/pgo_build.py), else "plain".
BUILD: str

def layer_forwarding(
    nr: int,
    edge_u: npt.NDArray[np.int32],
    edge_v: npt.NDArray[np.int32],
    seed: int,
    rank: npt.NDArray[np.int32] | None = None,
    keys: npt.NDArray[np.uint64] | None = None,
    prefer: npt.NDArray[np.int32] | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32]]: ...
def layer_distances(
    nr: int, edge_u: npt.NDArray[np.int32], edge_v: npt.NDArray[np.int32]
) -> npt.NDArray[np.uint8]: ...
def layer_forwarding_into(
    nr: int,
    edge_u: npt.NDArray[np.int32],
    edge_v: npt.NDArray[np.int32],
    seed: int,
    rank: npt.NDArray[np.int32] | None,
    dist_out: npt.NDArray[np.uint8],
    next_out: npt.NDArray[np.int32],
    keys: npt.NDArray[np.uint64] | None = None,
    prefer: npt.NDArray[np.int32] | None = None,
) -> None: ...
def overlap_layers(
    nr: int,
    edge_u: npt.NDArray[np.int32],
    edge_v: npt.NDArray[np.int32],
    permutations: npt.NDArray[np.int32],
    paths_per_layer: int,
    seed: int,
    max_length: int | None = None,
) -> tuple[
    npt.NDArray[np.bool_], npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int32]
]: ...
def layers_are_deadlock_free(
    next_hop: npt.NDArray[np.int32], endpoints: npt.NDArray[np.bool_] | None = None
) -> list[bool]: ...
def route_dependencies(
    nr: int,
    layers: int,
    layer: npt.NDArray[np.uint16],
    switch: npt.NDArray[np.int32],
    dest: npt.NDArray[np.int32],
    hop: npt.NDArray[np.int32],
    endpoints: npt.NDArray[np.bool_] | None = None,
) -> list[npt.NDArray[np.int64]]: ...
def dependency_cycle(pairs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]: ...
def route_text(
    head: str,
    middle: str,
    tail: str,
    prefix_data: bytes,
    prefix_offsets: npt.NDArray[np.int64],
    prefix_ids: npt.NDArray[np.int64],
    hop_data: bytes,
    hop_offsets: npt.NDArray[np.int64],
    hop_ids: npt.NDArray[np.int64],
) -> str: ...
def route_faults(
    table: npt.NDArray[np.int32],
    switch: npt.NDArray[np.int32],
    dest: npt.NDArray[np.int32],
    hop: npt.NDArray[np.int32],
    link: npt.NDArray[np.int32],
    link_a: npt.NDArray[np.int32],
    link_b: npt.NDArray[np.int32],
    plane: npt.NDArray[np.int32] | None,
    layer_links: npt.NDArray[np.bool_] | None,
    dist: npt.NDArray[np.int16],
    model: npt.NDArray[np.int32] | None,
) -> npt.NDArray[np.int8]: ...
def primary_tables(
    table: npt.NDArray[np.int32],
    switch: npt.NDArray[np.int32],
    dest: npt.NDArray[np.int32],
    hop: npt.NDArray[np.int32],
    tables: int,
    nr: int,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
def walk_failures(
    hop: npt.NDArray[np.int32],
    row: npt.NDArray[np.int64],
    fault: npt.NDArray[np.int8],
    routed: npt.NDArray[np.bool_],
    rank: npt.NDArray[np.int64] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def read_route_lines(
    paths: list[str],
) -> tuple[
    list[str],
    list[str],
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    npt.NDArray[np.uint32],
    list[tuple[int, int, str]],
    list[int],
]: ...
def read_shell_addresses(
    path: str,
) -> (
    tuple[list[tuple[int, str, str]], list[tuple[int, str, str]], list[tuple[int, str]]] | None
): ...
def read_host_plans(paths: list[str]) -> list[list[tuple[int, str, str]] | None]: ...
def load_plain_yaml(
    text: str, max_nesting: int
) -> tuple[Any, dict[tuple[str | int, ...], int], list[tuple[str | int, ...]]] | None: ...

class PacketSimulator:
    def __init__(
        self, network: dict[str, object], flows: dict[str, object], config: dict[str, object]
    ) -> None: ...
    def run_until(self, horizon_ps: int) -> bool: ...
    @property
    def now_ps(self) -> int: ...
    @property
    def events_processed(self) -> int: ...
    def flow_results(self) -> dict[str, npt.NDArray[np.int64] | npt.NDArray[np.uint64]]: ...
    def counters(self) -> dict[str, int]: ...
    def check_deadlock(self) -> list[tuple[int, int]] | None: ...
    def invariants(self) -> list[tuple[str, bool, str]]: ...
