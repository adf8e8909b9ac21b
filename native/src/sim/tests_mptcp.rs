//! Multi-plane fabrics, plane choice, MPTCP and chained (request-response) flows.

use super::config::{
    LoadBalancing, MptcpParams, PlaneChoice, SimConfig, SubflowPaths, TransportKind,
};
use super::engine::{FlowSpec, Simulator, NO_FLOW};
use super::mptcp::Mptcp;
use super::network::NetworkSpec;
use super::tests::{assert_conserved, config, fabric, run, two_layer_ring, US};

/// Every accounting identity of the run holds (the measured tests below print figures the
/// simulator page quotes, which a run breaking one would not support).
fn assert_invariants(sim: &Simulator) {
    for invariant in sim.invariants() {
        assert!(invariant.holds, "{}: {}", invariant.name, invariant.detail);
    }
}

/// `planes` copies of one switch graph; host h sits on switch `host_on[h]` of every plane.
fn planes_of(planes: usize, nr: usize, edges: &[(u32, u32)], host_on: &[u32]) -> NetworkSpec {
    let all: Vec<(u32, u32)> = (0..planes as u32)
        .flat_map(|p| {
            edges
                .iter()
                .map(move |&(a, b)| (a + p * nr as u32, b + p * nr as u32))
        })
        .collect();
    let mut spec = fabric(planes * nr, &all, &[], 10.0);
    spec.planes = planes;
    spec.host_switch = host_on
        .iter()
        .flat_map(|&s| (0..planes as u32).map(move |p| s + p * nr as u32))
        .collect();
    spec.host_gbps = vec![10.0; spec.host_switch.len()];
    spec
}

fn mptcp(subflows_per_plane: u8) -> SimConfig {
    SimConfig {
        mptcp: MptcpParams {
            subflows_per_plane,
            ..MptcpParams::default()
        },
        ..config(TransportKind::Mptcp, LoadBalancing::Ecmp)
    }
}

fn flow(src: u32, dst: u32, size: u64, start: u64) -> FlowSpec {
    FlowSpec {
        src,
        dst,
        size,
        start,
    }
}

/// Goodput (bits per second) of a lone 20 MB flow between two hosts with one NIC per plane,
/// each plane a single 10 Gb/s link between their switches.
fn lone_flow_goodput(cfg: SimConfig) -> f64 {
    let spec = planes_of(2, 2, &[(0, 1)], &[0, 1]);
    let size = 20_000_000;
    let sim = run(&spec, &[flow(0, 1, size, 0)], cfg);
    assert_conserved(&sim);
    assert_invariants(&sim);
    let fct = sim.flows()[0].finish;
    assert!(fct > 0 && fct != u64::MAX);
    size as f64 * 8.0 / (fct as f64 * 1e-12)
}

#[test]
fn mptcp_over_two_disjoint_planes_doubles_one_path() {
    let tcp = lone_flow_goodput(config(TransportKind::Tcp, LoadBalancing::Ecmp));
    let both = lone_flow_goodput(mptcp(1));
    let ratio = both / tcp;
    // Printed for the simulator page (`cargo test --release tests_mptcp -- --nocapture`).
    eprintln!("two planes: MPTCP {ratio:.3}x one-plane TCP");
    // Measured 2.00 (1.97 before the host NIC and NDP pulls changed).
    assert!(
        (1.85..=2.02).contains(&ratio),
        "MPTCP {both:.3e} / TCP {tcp:.3e} = {ratio}"
    );
    // One path alone is near line rate, so the doubling is the second plane's.
    assert!(tcp > 0.9 * 10e9 * 1500.0 / 1564.0, "{tcp:.3e}");
}

/// Share of one 10 Gb/s link (100 ms) taken by one host's `subflows` paths against the other
/// host's single TCP flow, over queue sizes, with and without pacing, and with the two hosts'
/// roles swapped (drop-tail NewReno shares swing from run to run, and the host whose packets the
/// switch happens to queue first on a tie gets more; the mean over both does not). `coupled`:
/// one MPTCP connection with that many subflows; otherwise that many independent TCP flows.
fn mean_share(subflows: usize, dctcp: bool, coupled: bool) -> f64 {
    let spec = fabric(2, &[(0, 1)], &[2, 2], 10.0);
    let mut shares = Vec::new();
    for queue in [100, 200, 300] {
        for pacing in [false, true] {
            for multipath_host in [0, 1] {
                let mut cfg = mptcp(1);
                cfg.mptcp.dctcp_subflows = dctcp;
                cfg.ecn_threshold_packets = if dctcp { 20 } else { 0 };
                cfg.queue_packets = queue;
                cfg.tcp_pacing = pacing;
                shares.push(share(&spec, cfg, subflows, coupled, multipath_host));
            }
        }
    }
    shares.iter().sum::<f64>() / shares.len() as f64
}

/// One run of `mean_share`: host `multipath_host` (0 or 1) sends over `subflows` paths to host
/// 2 + `multipath_host`, the other host one TCP flow to its peer.
fn share(
    spec: &NetworkSpec,
    mut cfg: SimConfig,
    subflows: usize,
    coupled: bool,
    multipath_host: u32,
) -> f64 {
    let size = 500_000_000;
    let single_host = 1 - multipath_host;
    let multipath = flow(multipath_host, multipath_host + 2, size, 0);
    let single = flow(single_host, single_host + 2, size, 0);
    let mut sim = if coupled {
        let mut counts = [1, 1];
        counts[multipath_host as usize] = subflows;
        let mut flows = [single, single];
        flows[multipath_host as usize] = multipath;
        let transport = Mptcp::new(&counts, cfg.mptcp, vec![0], cfg.seed);
        Simulator::with_transport(spec, &flows, cfg, Box::new(transport)).unwrap()
    } else {
        // Flows in host order, so that any advantage of position is the same as coupled.
        let mut flows = vec![single];
        flows.extend((0..subflows).map(|_| multipath));
        flows.sort_by_key(|f| f.src);
        cfg.transport = if cfg.mptcp.dctcp_subflows {
            TransportKind::Dctcp
        } else {
            TransportKind::Tcp
        };
        Simulator::new(spec, &flows, cfg).unwrap()
    };
    sim.run_until(100_000 * US);
    assert_conserved(&sim);
    assert_invariants(&sim);
    let total: f64 = sim.flows().iter().map(|f| f.delivered as f64).sum();
    // Five NewReno flows with 10 ms timeouts leave the link idle at times: 85% at worst.
    assert!(total > 0.8 * 10e9 / 8.0 * 0.1 * 1500.0 / 1564.0, "{total}");
    let single_delivered: f64 = sim
        .flows()
        .iter()
        .filter(|f| f.src == single_host)
        .map(|f| f.delivered as f64)
        .sum();
    1.0 - single_delivered / total
}

#[test]
fn coupled_subflows_take_no_more_than_one_tcp_at_a_shared_bottleneck() {
    // The set-up itself is fair: one TCP against one TCP, over both positions, splits evenly.
    let single = mean_share(1, false, false);
    eprintln!("shared bottleneck: one TCP against one TCP takes {single:.3}");
    assert!((0.49..=0.51).contains(&single), "one TCP took {single}");
    for dctcp in [false, true] {
        for subflows in [2, 4] {
            let coupled = mean_share(subflows, dctcp, true);
            let independent = mean_share(subflows, dctcp, false);
            let what = format!("{subflows} subflows, DCTCP {dctcp}: {coupled} vs {independent}");
            eprintln!(
                "shared bottleneck: {subflows} subflows, DCTCP {dctcp}: coupled {coupled:.3}, \
                 independent {independent:.3}"
            );
            // Measured: NewReno 0.551 (2 subflows) and 0.508 (4), where one TCP in the same
            // place takes 0.500; DCTCP 0.408 and 0.156, whose marks cut every subflow at once
            // while LIA still shares out one flow's increase. Independent flows take 0.734 and
            // 0.899 for NewReno (drop-tail favours the host with more flows over n / (n + 1) =
            // 0.667, 0.8), and 0.676, 0.802 for DCTCP. LIA's own fluid model gives a
            // coupled NewReno pair about 0.52 (a loss halves one subflow, a quarter of the whole).
            assert!(coupled <= 0.56, "{what}");
            assert!(independent >= coupled + 0.14, "{what}");
        }
    }
}

#[test]
fn kshortest_subflows_take_distinct_equal_cost_paths() {
    // Four parallel two-hop 10 Gb/s paths from switch 0 to switch 5 (via 1..4) in one plane,
    // between hosts with 40 Gb/s NICs: only subflows on distinct paths can fill the NICs.
    let edges = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 5),
        (2, 5),
        (3, 5),
        (4, 5),
    ];
    let mut spec = planes_of(1, 6, &edges, &[0, 5]);
    spec.host_gbps = vec![40.0; 2];
    let size = 20_000_000;
    let fct = |k: u8, seed: u64| {
        let mut cfg = mptcp(k);
        cfg.seed = seed;
        let sim = run(&spec, &[flow(0, 1, size, 0)], cfg);
        assert_conserved(&sim);
        assert_invariants(&sim);
        assert_eq!(sim.counters().unroutable, 0);
        sim.flows()[0].finish as f64
    };
    for seed in [1, 2, 3] {
        let speedup = fct(1, seed) / fct(4, seed);
        eprintln!("four parallel paths, seed {seed}: 4 kshortest subflows {speedup:.3}x one");
        // Measured 3.977 for each seed.
        assert!(speedup >= 3.6, "seed {seed}: 4 subflows {speedup}x one");
    }
}

#[test]
fn same_seed_same_mptcp_run() {
    let spec = planes_of(
        2,
        4,
        &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
        &[0, 1, 2, 3, 0, 1, 2, 3],
    );
    // Switches 1 and 3 are two hops apart over two equal-cost paths, in both planes.
    let flows: Vec<FlowSpec> = (0..8)
        .map(|s| flow(s, (s + 2) % 8, 300_000, s as u64 * US))
        .collect();
    let finish = |seed: u64| {
        let mut cfg = mptcp(1);
        cfg.seed = seed;
        let sim = run(&spec, &flows, cfg);
        assert_conserved(&sim);
        assert_eq!(sim.counters().flows_finished, 8);
        let out: Vec<_> = sim
            .flows()
            .iter()
            .map(|f| (f.finish, f.retransmits))
            .collect();
        (out, sim.counters().events)
    };
    assert_eq!(finish(1), finish(1));
    assert_ne!(finish(1).0, finish(7).0, "another seed picks other paths");
}

/// Three planes from host 0's switch to host 1's: 2 hops, 1 hop, 3 hops.
fn uneven_planes() -> NetworkSpec {
    // Plane p has switches 4p..4p+4; host 0 on local switch 0, host 1 on local switch 1.
    let mut spec = planes_of(3, 4, &[], &[0, 1]);
    let local = [
        vec![(0, 2), (2, 1)],
        vec![(0, 1)],
        vec![(0, 2), (2, 3), (3, 1)],
    ];
    let edges: Vec<(u32, u32)> = local
        .iter()
        .enumerate()
        .flat_map(|(p, e)| {
            e.iter()
                .map(move |&(a, b)| (a + 4 * p as u32, b + 4 * p as u32))
        })
        .collect();
    let rebuilt = fabric(12, &edges, &[], 10.0);
    spec.link_a = rebuilt.link_a;
    spec.link_b = rebuilt.link_b;
    spec.link_gbps = rebuilt.link_gbps;
    spec.layer_links = rebuilt.layer_links;
    spec.dist = rebuilt.dist;
    spec.next_hop = rebuilt.next_hop;
    spec
}

fn planes_taken(choice: PlaneChoice, flows: &[FlowSpec]) -> Vec<u8> {
    let spec = uneven_planes();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::Ecmp);
    cfg.plane_choice = choice;
    let sim = run(&spec, flows, cfg);
    assert_conserved(&sim);
    assert_eq!(sim.counters().flows_finished, flows.len() as u64);
    sim.flows().iter().map(|f| f.plane).collect()
}

#[test]
fn fewest_hops_takes_the_shortest_plane() {
    let flows: Vec<FlowSpec> = (0..6)
        .map(|i| flow(i % 2, 1 - i % 2, 50_000, i as u64 * US))
        .collect();
    assert_eq!(planes_taken(PlaneChoice::FewestHops, &flows), vec![1; 6]);
    // And the packets did take one hop.
    let spec = uneven_planes();
    let mut cfg = config(TransportKind::Tcp, LoadBalancing::Ecmp);
    cfg.plane_choice = PlaneChoice::FewestHops;
    let sim = run(&spec, &flows[..1], cfg);
    assert_eq!(sim.counters().data_hops, sim.counters().data_packets_sent);
}

#[test]
fn round_robin_cycles_through_planes_per_source() {
    // Host 0's flows in start order (listed out of order), then host 1's.
    let flows = [
        flow(0, 1, 50_000, 3 * US),
        flow(0, 1, 50_000, 0),
        flow(1, 0, 50_000, 0),
        flow(0, 1, 50_000, US),
        flow(0, 1, 50_000, 2 * US),
        flow(1, 0, 50_000, US),
    ];
    assert_eq!(
        planes_taken(PlaneChoice::RoundRobin, &flows),
        vec![0, 0, 0, 1, 2, 1]
    );
}

#[test]
fn hash_spreads_flows_over_planes_and_repeats() {
    let flows: Vec<FlowSpec> = (0..30)
        .map(|i| flow(i % 2, 1 - i % 2, 20_000, i as u64 * US))
        .collect();
    let planes = planes_taken(PlaneChoice::Hash, &flows);
    for p in 0..3 {
        assert!(planes.contains(&p), "{planes:?}");
    }
    assert_eq!(planes, planes_taken(PlaneChoice::Hash, &flows));
}

#[test]
fn ping_pong_round_takes_one_rtt_plus_serialisation() {
    // host0 - s0 - s1 - host1; three rounds of a one-packet request and a one-packet response.
    let spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    let mut flows = Vec::new();
    let mut after = Vec::new();
    for round in 0..3u32 {
        flows.push(flow(0, 1, 1500, 0));
        after.push(if round == 0 { NO_FLOW } else { 2 * round - 1 });
        flows.push(flow(1, 0, 1500, 0));
        after.push(2 * round);
    }
    for transport in [TransportKind::Tcp, TransportKind::Ndp, TransportKind::Mptcp] {
        let cfg = config(transport, LoadBalancing::Ecmp);
        let mut sim = Simulator::chained(&spec, &flows, &after, cfg).unwrap();
        sim.run_until(u64::MAX);
        assert_conserved(&sim);
        let pkt_ps = (1500 + 64) * 8 * 100;
        // Each way: three store-and-forward serialisations and three 1 us links.
        let one_way = 3 * pkt_ps + 3 * US;
        let f = sim.flows();
        for round in 0..3 {
            let (request, response) = (&f[2 * round], &f[2 * round + 1]);
            // The server ACKs the request before the response leaves, and from the second
            // round on the client ACKs the last response before the request: a header each.
            let acks = if round == 0 { 1 } else { 2 };
            let ack_ps = 64 * 8 * 100;
            assert_eq!(
                response.finish - request.start,
                2 * one_way + acks * ack_ps,
                "{transport:?}"
            );
            assert_eq!(response.start, request.finish);
        }
    }
}

#[test]
fn chains_must_name_existing_flows_once() {
    let spec = fabric(2, &[(0, 1)], &[1, 1], 10.0);
    let flows = [
        flow(0, 1, 1500, 0),
        flow(1, 0, 1500, 0),
        flow(1, 0, 1500, 0),
    ];
    let cfg = || config(TransportKind::Tcp, LoadBalancing::Ecmp);
    assert!(Simulator::chained(&spec, &flows, &[NO_FLOW, 0, 0], cfg()).is_err());
    assert!(Simulator::chained(&spec, &flows, &[NO_FLOW, 5, NO_FLOW], cfg()).is_err());
    assert!(Simulator::chained(&spec, &flows, &[NO_FLOW, 0, 1], cfg()).is_ok());
}

#[test]
fn layer_subflows_take_one_layer_each() {
    // Switch 0 to 1 of a six-ring: one hop in layer 1, five the other way round in layer 2.
    let spec = two_layer_ring();
    let mut cfg = mptcp(2);
    cfg.mptcp.paths = SubflowPaths::Layers;
    cfg.fatpaths_layers = vec![0, 1];
    let sim = run(&spec, &[flow(0, 2, 3_000_000, 0)], cfg);
    assert_conserved(&sim);
    assert_eq!(sim.flows()[0].layers_used, 0b11);
    let c = sim.counters();
    // Every packet took one hop or five; both kinds were sent.
    assert!(c.data_hops > c.data_packets_sent && c.data_hops < 5 * c.data_packets_sent);
    assert_eq!(c.unroutable, 0);
}
