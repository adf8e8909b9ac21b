"""One sweep task: compile a routing point in memory, then analyse or simulate it, as one row.

`run_task` is a pure function of its payload (see `spec.py`): it reads no file and writes
none, so any worker of any cluster can run it, and running it twice gives the same row (up to
`seconds`, the one column that measures the run rather than the fabric).
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from fatpaths_cfg.compiled import CompiledFabric
from fatpaths_cfg.errors import UserErrors

# Every column of the dataset, in order, with its type. Parameters first, then costs (known
# from the compile alone), then the metrics of either task kind; a row leaves the other
# kind's metrics empty.
COLUMNS: dict[str, type] = {
    "key": str,
    "sweep": str,
    "topology": str,
    "topology_source": str,
    "switches": int,
    "hosts": int,
    "links": int,
    "layers": int,
    "rho": float,
    "algorithm": str,
    "seed": int,
    "acyclic": bool,
    "ecmp_within_layer": bool,
    "encoding": str,
    "task": str,
    "traffic": str,
    "scheme": str,
    "task_params": str,
    "status": str,
    "error": str,
    "routes_per_switch": int,
    "address_bits": int,
    "vlans": int,
    "deadlock_free_layers": int,
    "mat": float,
    "mean_minimal_length": float,
    "mean_distinct_layer_paths": float,
    "mean_disjoint_layer_paths": float,
    "share_single_shortest_path": float,
    "flows": int,
    "flows_finished": int,
    "fct_mean_us": float,
    "fct_p50_us": float,
    "fct_p99_us": float,
    "throughput_mean_gbps": float,
    "seconds": float,
}
# Measures the run, not the fabric: left out when rows are compared across runs.
TIMING_COLUMNS = ("seconds",)


def run_task(payload: dict[str, Any]) -> dict[str, Any]:
    """The row of one task; a failure becomes a row with status "error" and its message."""
    started = time.perf_counter()
    row = parameter_row(payload)
    try:
        compiled = compile_point(payload)
        row.update(cost_metrics(compiled))
        if payload["task"] == "analyze":
            row.update(analyze_metrics(compiled, payload["params"], payload["routing"]["seed"]))
        else:
            row.update(simulate_metrics(compiled, payload["params"], payload["routing"]["seed"]))
        row["status"] = "ok"
    except UserErrors as exc:
        row.update(status="error", error=str(exc))
    # A sweep records what went wrong at a point and goes on with the others.
    except Exception as exc:
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - started, 4)
    return row


def failed_row(payload: dict[str, Any], message: str) -> dict[str, Any]:
    """The row of a task the engine could not run (its workers kept dying, say)."""
    return {**parameter_row(payload), "status": "error", "error": message}


def parameter_row(payload: dict[str, Any]) -> dict[str, Any]:
    from fatpaths_cfg.sweep.spec import canonical_json, task_key

    topology, routing, params = payload["topology"], payload["routing"], payload["params"]
    analyze = payload["task"] == "analyze"
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        key=task_key(payload),
        sweep=payload["sweep"],
        topology=topology["name"],
        topology_source=topology["source"],
        switches=topology["switches"],
        hosts=topology["hosts"],
        links=topology["links"],
        layers=routing["layers"],
        rho=routing["rho"],
        algorithm=routing["algorithm"],
        seed=routing["seed"],
        acyclic=routing["acyclic"],
        ecmp_within_layer=routing["ecmp_within_layer"],
        encoding=topology["inventory"]["addressing"]["encoding"],
        task=payload["task"],
        traffic=params["traffic"] if analyze else params["workload"],
        scheme=params["scheme"] if analyze else params["lb"],
        task_params=canonical_json(params),
    )
    return row


def compile_point(payload: dict[str, Any]) -> CompiledFabric:
    from fatpaths_cfg.sweep.spec import canonical_json

    topology = payload["topology"]
    return _compiled(
        canonical_json(topology["inventory"]), topology["file"], canonical_json(payload["routing"])
    )


# A worker often gets several tasks (traffic patterns, schemes) of the same routing point; the
# compile is a pure function of its arguments, so a small per-process memo saves repeating it.
@lru_cache(maxsize=4)
def _compiled(inventory_json: str, file: str, routing_json: str) -> CompiledFabric:
    import json

    from fatpaths_cfg.api import compile_loaded
    from fatpaths_cfg.inventory.load import LoadedInventory
    from fatpaths_cfg.inventory.schema import InventorySpec, RoutingSpec
    from fatpaths_cfg.inventory.yaml_source import SourceMap

    spec = InventorySpec.model_validate(json.loads(inventory_json), strict=False)
    loaded = LoadedInventory(spec, SourceMap(file), Path(file))
    return compile_loaded(loaded, RoutingSpec.model_validate(json.loads(routing_json)))


def cost_metrics(compiled: CompiledFabric) -> dict[str, Any]:
    """What the routing point costs the switches: table entries, address bits, VLAN ids."""
    widths = compiled.address_plan.widths
    vlan = compiled.addressing_spec.encoding == "vlan"
    return {
        "routes_per_switch": int(max(compiled.route_counts, default=0)),
        "address_bits": widths.v4_bits,
        "vlans": len(compiled.layers) if vlan else 0,
        "deadlock_free_layers": int(sum(compiled.deadlock_free)),
    }


def analyze_metrics(compiled: CompiledFabric, params: dict[str, Any], seed: int) -> dict[str, Any]:
    from fatpaths_cfg.analysis.run import analyze
    from fatpaths_cfg.compiled import view_of

    result = analyze(
        view_of(compiled), [params["traffic"]], [params["scheme"]], params["pairs"], seed
    )
    diversity = result["diversity"]
    return {
        "mat": result["max_achievable_throughput"][params["traffic"]][params["scheme"]],
        **{
            key: diversity[key]
            for key in (
                "mean_minimal_length",
                "mean_distinct_layer_paths",
                "mean_disjoint_layer_paths",
                "share_single_shortest_path",
            )
        },
    }


def simulate_metrics(compiled: CompiledFabric, params: dict[str, Any], seed: int) -> dict[str, Any]:
    """Simulate the task's settings (any `fatpaths simulate` setting, as the command line
    builds the run) at the routing point's seed."""
    from fatpaths_cfg.compiled import view_of
    from fatpaths_cfg.sim.network import SimNetwork, network_of
    from fatpaths_cfg.sim.options import SimOptions
    from fatpaths_cfg.sim.prepare import latency_ps, prepare_run
    from fatpaths_cfg.sim.run import simulate

    def fabric(run: SimOptions) -> tuple[SimNetwork, str]:
        return network_of(view_of(compiled), link_latency_ps=latency_ps(run)), ""

    prepared = prepare_run(SimOptions(**params, seed=seed), fabric, check_budget=False)
    network, workload = prepared.network, prepared.flows
    config = prepared.config.with_lb(params["lb"])
    result = simulate(network, workload, config)
    fct = result.fct_ps()
    done = fct[np.isfinite(fct)] / 1e6
    throughput = result.throughput_gbps()
    throughput = throughput[np.isfinite(throughput)]
    return {
        "flows": int(workload.n_flows),
        "flows_finished": len(done),
        "fct_mean_us": _rounded(np.mean(done)) if len(done) else None,
        "fct_p50_us": _rounded(np.median(done)) if len(done) else None,
        "fct_p99_us": _rounded(np.percentile(done, 99)) if len(done) else None,
        "throughput_mean_gbps": _rounded(np.mean(throughput)) if len(throughput) else None,
    }


def _rounded(value: Any) -> float:
    return round(float(value), 4)
