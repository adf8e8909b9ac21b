"""The initial RTO on a path whose round trip exceeds it: the set-up of
tests/test_sim_trust.py (two switches 400 us apart, about 1.6 ms per round trip, 8 hosts each,
10 Gb/s, 200 KB flows at 1,000 flows/s per host for 5 ms, ECMP, 200 us minimum RTO), run with
the default initial RTO (1 ms) and with RFC 6298's 1 s, for TCP, DCTCP and MPTCP.

Prints one line per run: spurious retransmissions against data packets sent, timeouts, and the
median and maximum FCT. The test asserts the direction; this prints the figures the simulator
page quotes. Every run's invariants must hold (exit 1 otherwise).

    python benchmarks/sim_initial_rto.py
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from fatpaths_cfg.sim import SimConfig, make_workload, network_from_edges, simulate

US = 1_000_000  # picoseconds
TRANSPORTS = ("tcp", "dctcp", "mptcp")
# The default (SimConfig.initial_rto_us) and RFC 6298's.
INITIAL_RTOS_US = (1_000.0, 1_000_000.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    net = network_from_edges("pair", 2, [(0, 1)], [8, 8], link_gbps=10.0, link_latency_ps=400 * US)
    work = make_workload(
        net, "uniform", "200KB", seed=args.seed, arrival_rate=1000, duration_ps=5000 * US
    )
    broken = 0
    for transport in TRANSPORTS:
        for initial in INITIAL_RTOS_US:
            config = SimConfig(
                transport=transport,
                load_balancing="ecmp",
                min_rto_us=200,
                initial_rto_us=initial,
                seed=args.seed,
            )
            result = simulate(net, work, config)
            c = result.counters
            finish = result.flows["finish_ps"]
            done = finish >= 0
            fct_ms = (finish[done] - result.flows["start_ps"][done]) / 1e9
            bad = [f"{i.name}: {i.detail}" for i in result.invariants if not i.holds]
            broken += len(bad)
            print(
                f"{transport:>5} initial RTO {initial / 1000:g} ms: "
                f"{c['spurious_retransmissions']:,} spurious retransmissions of "
                f"{c['data_packets_sent']:,} data packets, {c['timeouts']:,} timeouts; "
                f"{int(done.sum())}/{len(finish)} flows finished, FCT median "
                f"{np.median(fct_ms):.2f} ms, max {fct_ms.max():.2f} ms; invariants "
                + ("hold" if not bad else "BROKEN: " + "; ".join(bad)),
                flush=True,
            )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
