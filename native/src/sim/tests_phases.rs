//! Flows in barrier-separated phases (an application loop): ordering, timing, determinism.

use super::config::{LoadBalancing, TransportKind};
use super::engine::{FlowSpec, Simulator, NO_FLOW};
use super::packet::NO_TIME;
use super::tests::{assert_conserved, config, fabric, US};

const COMPUTE: u64 = 7 * US;

/// A ring of four switches with two hosts each; every iteration each host sends `size` bytes
/// to the host two ahead and two behind (a 1-D stencil), `COMPUTE` after the barrier.
fn stencil(iterations: u32, size: u64) -> (Vec<FlowSpec>, Vec<u32>) {
    let hosts = 8u32;
    let mut flows = Vec::new();
    let mut phase = Vec::new();
    for k in 0..iterations {
        for h in 0..hosts {
            for peer in [(h + 2) % hosts, (h + hosts - 2) % hosts] {
                flows.push(FlowSpec {
                    src: h,
                    dst: peer,
                    size,
                    start: COMPUTE,
                });
                phase.push(k);
            }
        }
    }
    (flows, phase)
}

fn run(transport: TransportKind, lb: LoadBalancing, iterations: u32, size: u64) -> Simulator {
    let spec = fabric(4, &[(0, 1), (1, 2), (2, 3), (3, 0)], &[2, 2, 2, 2], 10.0);
    let (flows, phase) = stencil(iterations, size);
    let mut sim = Simulator::scheduled(&spec, &flows, &[], &phase, config(transport, lb)).unwrap();
    sim.run_until(u64::MAX);
    sim
}

#[test]
fn an_iteration_starts_compute_time_after_the_last_flow_of_the_previous_one() {
    for transport in [TransportKind::Tcp, TransportKind::Ndp] {
        let sim = run(transport, LoadBalancing::Ecmp, 4, 30_000);
        assert_conserved(&sim);
        assert!(sim.invariants().iter().all(|i| i.holds), "{transport:?}");
        let flows = sim.flows();
        assert!(flows.iter().all(|f| f.finish != NO_TIME));
        let per = flows.len() / 4;
        let mut barrier = 0;
        for k in 0..4 {
            let iteration = &flows[k * per..(k + 1) * per];
            // Every flow of iteration k starts exactly at the barrier plus the compute time,
            // so none starts before all of iteration k - 1 finished.
            for f in iteration {
                assert_eq!(f.start, barrier + COMPUTE, "{transport:?} iteration {k}");
            }
            barrier = iteration.iter().map(|f| f.finish).max().unwrap();
        }
        assert_eq!(sim.counters().flows_started, flows.len() as u64);
    }
}

#[test]
fn completion_is_at_least_iterations_times_compute_plus_serialisation() {
    let size = 60_000u64;
    let sim = run(TransportKind::Tcp, LoadBalancing::Ecmp, 5, size);
    let last = sim.flows().iter().map(|f| f.finish).max().unwrap();
    // Each host sends two flows per iteration through one 10 Gb/s NIC: 800 ps per byte.
    let serialisation = 2 * size * 800;
    assert!(last >= 5 * (COMPUTE + serialisation), "{last}");
}

#[test]
fn a_phased_run_is_deterministic() {
    let a = run(TransportKind::Tcp, LoadBalancing::FatPaths, 3, 45_000);
    let b = run(TransportKind::Tcp, LoadBalancing::FatPaths, 3, 45_000);
    let finish = |s: &Simulator| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(finish(&a), finish(&b));
    assert_eq!(a.counters().events, b.counters().events);
}

#[test]
fn phases_and_chains_together_or_gaps_are_refused() {
    let spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    let flow = FlowSpec {
        src: 0,
        dst: 1,
        size: 1500,
        start: 0,
    };
    let cfg = || config(TransportKind::Tcp, LoadBalancing::Ecmp);
    let both = Simulator::scheduled(&spec, &[flow, flow], &[NO_FLOW, 0], &[0, 1], cfg());
    assert!(both.err().unwrap().contains("not both"));
    let gap = Simulator::scheduled(&spec, &[flow, flow], &[], &[0, 2], cfg());
    assert!(gap.err().unwrap().contains("phase"));
}
