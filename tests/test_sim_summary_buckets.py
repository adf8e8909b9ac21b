"""Throughput per flow by size bucket and latency in a run's summary: each figure is what the
per-flow arrays give by hand, and latency covers exactly the one-packet flows."""

from __future__ import annotations

import numpy as np
import pytest

from fatpaths_cfg.sim import SimConfig, Workload, network_from_edges, simulate
from fatpaths_cfg.sim.results import SIZE_BUCKETS
from fatpaths_cfg.sim.stats import percentile


def mixed_run() -> object:
    # Two switches, four hosts each; flows of one packet, of a few packets and of many.
    net = network_from_edges("dumbbell", 2, [(0, 1)], [4, 4], link_gbps=10.0)
    sizes = [1_000, 9_000, 9_001, 50_000, 50_000, 400_000, 2_000_000, 2_000_000]
    n = len(sizes)
    work = Workload(
        src=np.array([i % 4 for i in range(n)], dtype=np.int32),
        dst=np.array([4 + (i * 3) % 4 for i in range(n)], dtype=np.int32),
        size=np.array(sizes, dtype=np.int64),
        start_ps=np.arange(n, dtype=np.int64) * 1_000_000,
    )
    return simulate(net, work, SimConfig(transport="ndp", mtu=9000))


def test_throughput_by_size_is_size_over_fct_per_bucket() -> None:
    result = mixed_run()
    summary = result.summary()  # type: ignore[attr-defined]
    sizes = result.workload.size  # type: ignore[attr-defined]
    gbps = sizes * 8 / (result.fct_ps() / 1e12) / 1e9  # type: ignore[attr-defined]
    buckets = summary["throughput_by_size_gbps"]
    seen = 0
    for name, lo, hi in SIZE_BUCKETS:
        sel = (sizes >= lo) & (sizes < (hi if hi is not None else np.inf))
        if not sel.any():
            assert name not in buckets
            continue
        figures = buckets[name]
        assert figures["count"] == int(sel.sum())
        assert figures["mean"] == pytest.approx(float(np.mean(gbps[sel])))
        assert figures["median"] == pytest.approx(float(np.median(gbps[sel])))
        assert figures["p1"] == pytest.approx(percentile(gbps[sel], 1))
        assert figures["p1"] <= figures["median"]
        seen += int(sel.sum())
    assert seen == len(sizes)


def test_latency_is_the_fct_of_one_packet_flows() -> None:
    result = mixed_run()
    latency = result.summary()["latency"]  # type: ignore[attr-defined]
    fct_us = result.fct_ps() / 1e6  # type: ignore[attr-defined]
    one_packet = result.workload.size <= 9000  # type: ignore[attr-defined]
    assert latency["mtu"] == 9000 and "one-packet" in latency["definition"]
    assert latency["count"] == 2  # 1,000 and 9,000 bytes; 9,001 takes two packets
    assert latency["median_us"] == pytest.approx(float(np.median(fct_us[one_packet])))
    assert latency["max_us"] < float(np.min(fct_us[~one_packet]))
