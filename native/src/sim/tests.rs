//! Engine-level checks on small hand-built fabrics (no Python involved).

use super::config::{LoadBalancing, SimConfig, TransportKind};
use super::engine::{FlowSpec, Simulator};
use super::layer_choice::LayerPolicy;
use super::network::NetworkSpec;
use super::packet::NO_TIME;
use crate::routing::layer_forwarding;
use crate::support::graph::neighbours;

pub(super) const US: u64 = 1_000_000;

/// One layer with all links; `hosts[s]` hosts on switch s; every link at `gbps`, 1 us.
pub(super) fn fabric(nr: usize, edges: &[(u32, u32)], hosts: &[usize], gbps: f64) -> NetworkSpec {
    let adj = neighbours(nr, edges);
    let (dist_ts, next_ts) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(7), None);
    // The routing kernel returns [destination][switch]; the simulator reads [switch][destination].
    let mut dist = vec![0u8; nr * nr];
    let mut next_hop = vec![0i32; nr * nr];
    for t in 0..nr {
        for s in 0..nr {
            dist[s * nr + t] = dist_ts[t * nr + s];
            next_hop[s * nr + t] = next_ts[t * nr + s];
        }
    }
    let host_switch: Vec<u32> = hosts
        .iter()
        .enumerate()
        .flat_map(|(s, &n)| std::iter::repeat_n(s as u32, n))
        .collect();
    NetworkSpec {
        planes: 1,
        n_switches: nr,
        host_gbps: vec![gbps; host_switch.len()],
        host_switch,
        host_latency: US,
        link_a: edges.iter().map(|e| e.0).collect(),
        link_b: edges.iter().map(|e| e.1).collect(),
        link_gbps: vec![gbps; edges.len()],
        link_latency: US,
        layer_links: vec![1; edges.len()],
        dist,
        next_hop,
        multipath: vec![true],
    }
}

pub(super) fn config(transport: TransportKind, lb: LoadBalancing) -> SimConfig {
    SimConfig {
        transport,
        load_balancing: lb,
        mtu: 1500,
        header: 64,
        queue_packets: if transport == TransportKind::Ndp {
            8
        } else {
            100
        },
        ecn_threshold_packets: if transport == TransportKind::Dctcp {
            20
        } else {
            0
        },
        initial_window: if transport == TransportKind::Ndp {
            30
        } else {
            10
        },
        min_rto: 1_000 * US,
        ..SimConfig::default()
    }
}

pub(super) fn run(spec: &NetworkSpec, flows: &[FlowSpec], cfg: SimConfig) -> Simulator {
    let mut sim = Simulator::new(spec, flows, cfg).expect("valid scenario");
    sim.run_until(u64::MAX);
    sim
}

pub(super) fn assert_conserved(sim: &Simulator) {
    let c = sim.counters();
    assert_eq!(
        c.payload_injected,
        c.payload_delivered
            + c.payload_duplicate
            + c.payload_trimmed
            + c.payload_dropped
            + sim.payload_in_network(),
        "{c:?}"
    );
}

#[test]
fn lone_flow_takes_serialisation_plus_propagation() {
    // host0 - s0 - s1 - host1: three links, three store-and-forward serialisations of the
    // last packet, the whole flow serialised once at the NIC.
    let spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    let size = 20 * 1500;
    let sim = run(
        &spec,
        &[FlowSpec {
            src: 0,
            dst: 1,
            size,
            start: 0,
        }],
        config(TransportKind::Ndp, LoadBalancing::Ecmp),
    );
    let pkt_ps = (1500 + 64) * 8 * 100; // 10 Gb/s: 800 ps per byte
    let expected = 20 * pkt_ps + 2 * pkt_ps + 3 * US;
    let fct = sim.flows()[0].finish;
    assert_eq!(fct, expected);
    assert_eq!(sim.counters().trims, 0);
    assert_conserved(&sim);
}

#[test]
fn ndp_incast_of_32_completes_without_collapse() {
    let spec = fabric(1, &[], &[33], 10.0);
    let size = 100_000u64;
    let flows: Vec<FlowSpec> = (1..33)
        .map(|s| FlowSpec {
            src: s,
            dst: 0,
            size,
            start: 0,
        })
        .collect();
    let sim = run(
        &spec,
        &flows,
        config(TransportKind::Ndp, LoadBalancing::Spray),
    );
    assert!(sim
        .flows()
        .iter()
        .all(|f| f.finish != NO_TIME && f.sender_done != NO_TIME));
    assert!(
        sim.counters().trims > 0,
        "an incast of 32 full windows must trim"
    );
    // The receiver's link is the bottleneck: the last flow cannot beat the ideal, and with
    // NDP it should stay within a few percent of it (no collapse, no timeouts).
    let wire_bytes = 32 * (size + 67 * 64);
    let ideal = wire_bytes * 800;
    let last = sim.flows().iter().map(|f| f.finish).max().unwrap();
    assert!(last >= ideal, "{last} < {ideal}");
    assert!(
        (last as f64) < ideal as f64 * 1.15 + 20.0 * US as f64,
        "{last} vs {ideal}"
    );
    assert_eq!(sim.counters().timeouts, 0);
    assert_conserved(&sim);
}

#[test]
fn two_tcp_flows_share_a_bottleneck() {
    // Two senders on s0, two receivers on s1, one s0-s1 link as the bottleneck.
    let spec = fabric(2, &[(0, 1)], &[2, 2], 10.0);
    for transport in [TransportKind::Tcp, TransportKind::Dctcp] {
        let flows = [
            FlowSpec {
                src: 0,
                dst: 2,
                size: 500_000_000,
                start: 0,
            },
            FlowSpec {
                src: 1,
                dst: 3,
                size: 500_000_000,
                start: 0,
            },
        ];
        let mut sim =
            Simulator::new(&spec, &flows, config(transport, LoadBalancing::Ecmp)).unwrap();
        sim.run_until(100_000 * US);
        let (a, b) = (
            sim.flows()[0].delivered as f64,
            sim.flows()[1].delivered as f64,
        );
        let share = a / (a + b);
        assert!(
            (0.45..=0.55).contains(&share),
            "{transport:?}: share {share}"
        );
        // Together they keep the 10 Gb/s link busy (>= 90%) over 100 ms: NewReno needs several
        // sawtooth cycles (each several ms here) before the shares even out.
        assert!(
            a + b > 0.9 * 10e9 / 8.0 * 0.1 * 1500.0 / 1564.0,
            "{transport:?}: {}",
            a + b
        );
        if transport == TransportKind::Dctcp {
            assert!(sim.counters().ecn_marks > 0);
        }
        assert_conserved(&sim);
    }
}

/// Four switches in a ring with one chord, four hosts on each, 10 Gb/s.
fn square_with_chord() -> NetworkSpec {
    fabric(
        4,
        &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
        &[4, 4, 4, 4],
        10.0,
    )
}

/// Host s of 16 sends `size` bytes to host s + 5, the flows starting `gap` apart.
fn shifted_flows(size: u64, gap: u64) -> Vec<FlowSpec> {
    (0..16)
        .map(|s| FlowSpec {
            src: s,
            dst: (s + 5) % 16,
            size,
            start: s as u64 * gap,
        })
        .collect()
}

#[test]
fn same_seed_same_run() {
    let spec = square_with_chord();
    let flows = shifted_flows(200_000, US);
    let a = run(
        &spec,
        &flows,
        config(TransportKind::Ndp, LoadBalancing::Spray),
    );
    let b = run(
        &spec,
        &flows,
        config(TransportKind::Ndp, LoadBalancing::Spray),
    );
    let finish = |s: &Simulator| {
        s.flows()
            .iter()
            .map(|f| (f.finish, f.trims))
            .collect::<Vec<_>>()
    };
    assert_eq!(finish(&a), finish(&b));
    assert_eq!(a.counters().events, b.counters().events);
    let mut other = config(TransportKind::Ndp, LoadBalancing::Spray);
    other.seed = 99;
    let c = run(&spec, &flows, other);
    assert_ne!(
        finish(&a),
        finish(&c),
        "a different seed sprays differently"
    );
}

#[test]
fn multipath_layers_run_the_same_without_next_hops() {
    let spec = square_with_chord();
    let flows = shifted_flows(100_000, 0);
    let cfg = config(TransportKind::Ndp, LoadBalancing::Spray);
    let mut bare = spec.clone();
    bare.next_hop.clear();
    let (a, b) = (
        run(&spec, &flows, cfg.clone()),
        run(&bare, &flows, cfg.clone()),
    );
    let finish = |s: &Simulator| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_eq!(finish(&a), finish(&b));
    assert_eq!(a.counters().events, b.counters().events);
    // A single-path layer forwards by its next hops: without them the network is refused.
    bare.multipath = vec![false];
    let refused = Simulator::new(&bare, &flows, cfg).err().expect("refused");
    assert!(refused.contains("next_hop"), "{refused}");
}

#[test]
fn tail_drop_losses_are_repaired() {
    // Eight TCP senders into one receiver with 100-packet queues: drops, then recovery.
    let spec = fabric(1, &[], &[9], 10.0);
    let flows: Vec<FlowSpec> = (1..9)
        .map(|s| FlowSpec {
            src: s,
            dst: 0,
            size: 1_000_000,
            start: 0,
        })
        .collect();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::Ecmp);
    cfg.queue_packets = 20;
    let sim = run(&spec, &flows, cfg);
    assert!(sim.counters().data_drops > 0);
    assert!(sim
        .flows()
        .iter()
        .all(|f| f.finish != NO_TIME && f.delivered == f.size));
    assert_conserved(&sim);
}

#[test]
fn fatpaths_uses_several_layers() {
    // A ring of 6 with a second layer that drops one link; FatPaths must use both layers.
    let mut spec = fabric(
        6,
        &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)],
        &[2; 6],
        10.0,
    );
    let second = fabric(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], &[2; 6], 10.0);
    spec.layer_links.extend([1, 1, 1, 1, 1, 0]);
    spec.dist.extend(&second.dist);
    spec.next_hop.extend(&second.next_hop);
    spec.multipath.push(false);
    let flows: Vec<FlowSpec> = (0..12)
        .map(|s| FlowSpec {
            src: s,
            dst: (s + 6) % 12,
            size: 300_000,
            start: 0,
        })
        .collect();
    let mut cfg = config(TransportKind::Ndp, LoadBalancing::FatPaths);
    cfg.fatpaths_layers = vec![0, 1];
    let sim = run(&spec, &flows, cfg);
    let used = sim.flows().iter().fold(0u64, |acc, f| acc | f.layers_used);
    assert_eq!(used, 0b11);
    assert!(sim.flows().iter().all(|f| f.finish != NO_TIME));
    assert_eq!(sim.counters().unroutable, 0);
    assert_conserved(&sim);
}

/// Two flows forced onto one minimal link of a ring, with a second layer around the other way.
pub(super) fn two_layer_ring() -> NetworkSpec {
    let mut spec = fabric(
        6,
        &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)],
        &[2; 6],
        10.0,
    );
    // Layer 2 lacks link 0-1, so from switch 0 to 1 it goes the long way round.
    let second = fabric(6, &[(1, 2), (2, 3), (3, 4), (4, 5), (5, 0)], &[2; 6], 10.0);
    spec.layer_links.extend([0, 1, 1, 1, 1, 1]);
    spec.dist.extend(&second.dist);
    spec.next_hop.extend(&second.next_hop);
    spec.multipath = vec![false, false];
    spec
}

fn tcp_fatpaths_layer_changes(policy: LayerPolicy) -> u64 {
    let spec = two_layer_ring();
    // Four hosts of switches 0 and 5 all send to switch 1's hosts: the 0-1 link overflows.
    let flows: Vec<FlowSpec> = [0u32, 1, 10, 11]
        .iter()
        .map(|&s| FlowSpec {
            src: s,
            dst: 2 + s % 2,
            size: 600_000,
            start: 0,
        })
        .collect();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::FatPaths);
    cfg.fatpaths_layers = vec![0, 1];
    cfg.queue_packets = 10;
    cfg.layer_policy = policy;
    let sim = run(&spec, &flows, cfg);
    assert!(sim.flows().iter().all(|f| f.finish != NO_TIME));
    assert_conserved(&sim);
    sim.counters().layer_changes
}

#[test]
fn tcp_fatpaths_moves_layers_on_window_cuts() {
    // Back-to-back ACK clocking leaves no 50 us gap, so only congestion can move these flows.
    assert_eq!(tcp_fatpaths_layer_changes(LayerPolicy::Uniform), 0);
    assert!(tcp_fatpaths_layer_changes(LayerPolicy::Adaptive) > 0);
}

fn tcp_incast_drops(pacing: bool) -> (u64, u64) {
    // Eight senders into one receiver behind a 20-packet queue.
    let spec = fabric(2, &[(0, 1)], &[8, 1], 10.0);
    let flows: Vec<FlowSpec> = (0..8)
        .map(|s| FlowSpec {
            src: s,
            dst: 8,
            size: 1_500_000,
            start: 0,
        })
        .collect();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::Ecmp);
    cfg.queue_packets = 20;
    cfg.tcp_pacing = pacing;
    let sim = run(&spec, &flows, cfg);
    assert!(sim.flows().iter().all(|f| f.finish != NO_TIME));
    assert_conserved(&sim);
    (sim.counters().data_drops, sim.counters().timeouts)
}

#[test]
fn tcp_pacing_loses_fewer_packets_than_bursts() {
    let (bursty, _) = tcp_incast_drops(false);
    let (paced, _) = tcp_incast_drops(true);
    assert!(paced < bursty, "paced {paced} vs bursty {bursty}");
}

#[test]
fn tcp_first_window_queued_past_the_rto_floor_does_not_time_out() {
    // One host starts eight flows of ten jumbo frames at once: its NIC sends them in turn, so
    // the last flow's first packet leaves after about 500 us, beyond a 200 us RTO floor.
    let spec = fabric(2, &[(0, 1)], &[1, 8], 10.0);
    let flows: Vec<FlowSpec> = (0..8)
        .map(|s| FlowSpec {
            src: 0,
            dst: 1 + s,
            size: 90_000,
            start: 0,
        })
        .collect();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::Ecmp);
    cfg.mtu = 9000;
    cfg.min_rto = 200 * US;
    let sim = run(&spec, &flows, cfg);
    assert!(sim.flows().iter().all(|f| f.finish != NO_TIME));
    assert_eq!(sim.counters().timeouts, 0);
    assert!(sim.flows().iter().any(|f| f.finish > 500 * US));
}

#[test]
fn a_short_flow_does_not_wait_behind_a_long_flows_backlog_at_its_nic() {
    // Host 0 starts a long flow to host 1, then a one-packet flow to host 2: served round
    // robin, the short one waits for one packet of the long flow at the NIC, not for its whole
    // first window (30 packets under NDP, 10 under TCP) as it did behind one FIFO.
    let spec = fabric(2, &[(0, 1)], &[1, 2], 10.0);
    let flows = [
        FlowSpec {
            src: 0,
            dst: 1,
            size: 300 * 1500,
            start: 0,
        },
        FlowSpec {
            src: 0,
            dst: 2,
            size: 1500,
            start: US,
        },
    ];
    let pkt_ps = (1500 + 64) * 8 * 100;
    for transport in [TransportKind::Ndp, TransportKind::Tcp] {
        let sim = run(&spec, &flows, config(transport, LoadBalancing::Ecmp));
        assert!(sim.flows().iter().all(|f| f.finish != NO_TIME));
        let short = &sim.flows()[1];
        // At most the packet on the wire and one more of the long flow ahead of it at the
        // NIC, then its own three store-and-forward serialisations and three links.
        let bound = 2 * pkt_ps + 3 * pkt_ps + 3 * US;
        assert!(
            short.finish - short.start <= bound,
            "{transport:?}: {} > {bound}",
            short.finish - short.start
        );
        assert_conserved(&sim);
    }
}

#[test]
fn ack_bytes_size_the_acknowledgements_not_the_data() {
    // A lone flow over three links: the data's timing stays; the last ACK crosses three
    // store-and-forward serialisations, each 24 bytes shorter with 40-byte ACKs.
    let spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    let flow = [FlowSpec {
        src: 0,
        dst: 1,
        size: 20 * 1500,
        start: 0,
    }];
    for transport in [TransportKind::Ndp, TransportKind::Tcp] {
        let mut cfg = config(transport, LoadBalancing::Ecmp);
        let wide = run(&spec, &flow, cfg.clone());
        cfg.ack_bytes = 40;
        let narrow = run(&spec, &flow, cfg);
        let (w, n) = (&wide.flows()[0], &narrow.flows()[0]);
        assert_eq!(w.finish, n.finish, "{transport:?}");
        assert_eq!(w.sender_done - n.sender_done, 3 * 24 * 800, "{transport:?}");
    }
}
