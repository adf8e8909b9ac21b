//! TCP's fidelity options (initial ssthresh, timeout grid) and the drop policies of lossy
//! queues, on hand-built fabrics.

use super::config::{DropPolicy, LoadBalancing, SimConfig, TransportKind};
use super::engine::{FlowSpec, Simulator};
use super::tests::{assert_conserved, config, fabric, run, US};

/// host0 at 100 Gb/s into a 10 Gb/s switch link: a window sent at line rate piles up at s0.
fn fast_host_slow_link() -> super::network::NetworkSpec {
    let mut spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    spec.host_gbps = vec![100.0, 100.0];
    spec
}

fn one_flow(size: u64) -> Vec<FlowSpec> {
    vec![FlowSpec {
        src: 0,
        dst: 1,
        size,
        start: 0,
    }]
}

fn tcp(queue_packets: u32) -> SimConfig {
    SimConfig {
        queue_packets,
        ..config(TransportKind::Tcp, LoadBalancing::Ecmp)
    }
}

#[test]
fn initial_ssthresh_ends_slow_start() {
    // 400 packets on an empty path: slow start doubles the window every RTT, congestion
    // avoidance from 2 packets adds one per RTT and takes many more round trips.
    let mut spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    // 50 us per link: a bandwidth-delay product of about 250 packets.
    (spec.link_latency, spec.host_latency) = (50 * US, 50 * US);
    let fct = |ssthresh: u32| {
        let cfg = SimConfig {
            initial_window: 1,
            initial_ssthresh: ssthresh,
            ..tcp(100)
        };
        run(&spec, &one_flow(400 * 1500), cfg).flows()[0].finish
    };
    let (unbounded, low) = (fct(0), fct(2));
    assert!(
        low > 2 * unbounded,
        "ssthresh 2: {low} ps, unbounded: {unbounded} ps"
    );
}

fn timeout_run(rto_granularity: u64) -> Simulator {
    // A 1-packet queue (2 x mtu holds one packet with its header) behind a 100 Gb/s host keeps 2 of the first 10 packets: too few
    // duplicate ACKs for fast retransmit, so the flow waits for its timeout.
    let cfg = SimConfig {
        min_rto: 1_000 * US,
        rto_granularity,
        ..tcp(2)
    };
    run(&fast_host_slow_link(), &one_flow(10 * 1500), cfg)
}

#[test]
fn a_finer_timeout_grid_fires_timeouts_sooner() {
    let coarse = timeout_run(0);
    let fine = timeout_run(US);
    assert!(coarse.counters().timeouts > 0);
    assert_eq!(fine.counters().timeouts, coarse.counters().timeouts);
    let (f, c) = (fine.flows()[0].finish, coarse.flows()[0].finish);
    // The default grid is a quarter of the minimum RTO (250 us): each timeout may fire up to
    // that much late; on a 1 us grid at most 1 us late.
    assert!(f < c, "1 us grid: {f} ps, default grid: {c} ps");
    assert!(
        f <= 1_000 * US * coarse.counters().timeouts + 100 * US,
        "1 us grid: {f} ps"
    );
}

#[test]
fn front_drop_keeps_the_newest_packets() {
    let run_with = |policy: DropPolicy| {
        let cfg = SimConfig {
            drop_policy: policy,
            ..tcp(2)
        };
        run(&fast_host_slow_link(), &one_flow(10 * 1500), cfg)
    };
    let (tail, front) = (run_with(DropPolicy::Tail), run_with(DropPolicy::Front));
    for sim in [&tail, &front] {
        assert_eq!(sim.counters().flows_finished, 1);
        assert!(sim.counters().data_drops > 0);
        assert_conserved(sim);
    }
    // Tail drop keeps the head of the burst, which arrives in order; front drop keeps its end,
    // which overtakes the holes left before it.
    let (t, f) = (tail.flows()[0].out_of_order, front.flows()[0].out_of_order);
    assert!(f > t, "out of order: front {f}, tail {t}");
}

#[test]
fn random_early_drop_drops_before_the_queue_is_full() {
    // Four flows of 10-packet windows into one host: 40 packets fit a 100-packet queue, so
    // tail drop loses nothing, while RED from 2 queued packets does.
    let spec = fabric(1, &[], &[5], 10.0);
    let flows: Vec<FlowSpec> = (1..5)
        .map(|src| FlowSpec {
            src,
            dst: 0,
            size: 30 * 1500,
            start: 0,
        })
        .collect();
    let run_with = |policy: DropPolicy| {
        let cfg = SimConfig {
            drop_policy: policy,
            red_min_packets: 2,
            ..tcp(100)
        };
        run(&spec, &flows, cfg)
    };
    let (tail, red) = (run_with(DropPolicy::Tail), run_with(DropPolicy::Red));
    assert_eq!(tail.counters().data_drops, 0);
    assert!(red.counters().data_drops > 0);
    assert_eq!(red.counters().flows_finished, 4);
    assert_conserved(&red);
}
