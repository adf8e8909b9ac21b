//! Switch-side routing schemes: which path a packet takes, decided by the switch it enters.
//!
//! The engine forwards every packet towards a *target* switch over the candidates of the
//! forwarding table; a scheme only says which layer's table is read, whether the packet first
//! heads for an intermediate switch (Valiant), and which virtual channel (PFC priority) it
//! occupies on each hop. The schemes follow the SC'15 diameter-two study (Kathareios et al.,
//! "Cost-Effective Diameter-Two Topologies"): MIN, INR (Valiant) and UGAL-L, generic and with a
//! threshold. They decide once per packet, at the packet's first switch (injection).

use std::collections::HashMap;

use super::network::{NetworkSpec, UNREACHABLE};
use super::packet::{Time, NO_TIME};
use super::random::SimRng;

/// A packet with no intermediate switch (MIN, or past its intermediate).
pub const NO_VIA: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoutingKind {
    /// The compiled layers as they are: the packet's layer picks the table (FatPaths).
    Layers,
    /// Minimal paths of layer 1 (every equal-cost next hop, picked by the packet's entropy).
    Min,
    /// Indirect random routing (Valiant): minimal to a random intermediate switch, then minimal
    /// to the destination.
    Inr,
    /// UGAL-L: per packet at injection, the minimal path unless an indirect candidate is cheaper.
    UgalL,
    /// UGAL-L that routes minimally while the minimal output queue is below the threshold.
    UgalLThreshold,
    /// Switch-based adaptive routing on a two-level Clos (Zahavi et al.): the input switch
    /// picks a middle switch per flow and re-picks it when notified of congestion.
    Adaptive,
}

impl RoutingKind {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "layers" => Some(RoutingKind::Layers),
            "min" => Some(RoutingKind::Min),
            "inr" => Some(RoutingKind::Inr),
            "ugal-l" => Some(RoutingKind::UgalL),
            "ugal-l-threshold" => Some(RoutingKind::UgalLThreshold),
            "adaptive" => Some(RoutingKind::Adaptive),
            _ => None,
        }
    }

    /// Whether the scheme routes over layer 1's minimal paths (and needs all of them).
    pub fn minimal_layer_only(self) -> bool {
        self != RoutingKind::Layers
    }
}

/// UGAL-L's parameters, named as in the SC'15 paper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UgalParams {
    /// n_I: random indirect candidates compared with the minimal path per packet.
    pub n_i: u32,
    /// c: weight of an indirect path's cost (c > 1 favours minimal routing).
    pub c: f64,
    /// T: minimal routing while the minimal queue holds less than this fraction of its buffer.
    pub threshold: f64,
}

impl Default for UgalParams {
    fn default() -> Self {
        // n_I = 4 and c = 1 sit inside the ranges the paper sweeps; T = 10% is its threshold.
        UgalParams {
            n_i: 4,
            c: 1.0,
            threshold: 0.1,
        }
    }
}

/// Adaptive routing's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveParams {
    /// A switch-to-switch queue above this many bytes is a congested link.
    pub threshold_bytes: u64,
    /// Time for a congestion notification to reach the flow's input switch.
    pub notify_delay: Time,
}

impl Default for AdaptiveParams {
    fn default() -> Self {
        AdaptiveParams {
            threshold_bytes: 4 * 9064,
            notify_delay: 1_000_000,
        }
    }
}

/// A packet entering the fabric at `switch`, bound for `target`.
#[derive(Clone, Copy, Debug)]
pub struct Injection {
    pub switch: u32,
    pub target: u32,
    pub entropy: u32,
    pub flow: u32,
    pub now: Time,
}

/// What a scheme may read at the switch that injects a packet.
pub trait SwitchView {
    /// The output port from `switch` towards `target`, over the scheme's layer, that `entropy`
    /// selects among the equal-cost candidates.
    fn port_for(&self, switch: u32, target: u32, entropy: u32) -> Option<u32>;
    /// Bytes waiting in output port `port` (every priority).
    fn queued_bytes(&self, port: u32) -> u64;
    /// Buffer of one output port, in bytes (the scale of the UGAL threshold).
    fn buffer_bytes(&self) -> u64;
}

/// Where a packet heads and on which channel: the per-packet state a scheme keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteTag {
    /// Intermediate switch still to visit, or `NO_VIA`.
    pub via: u32,
    /// Switch-to-switch hops taken so far.
    pub hops: u8,
}

impl Default for RouteTag {
    fn default() -> Self {
        RouteTag {
            via: NO_VIA,
            hops: 0,
        }
    }
}

/// A routing scheme: switch-side path choice and the virtual channel of every hop.
pub trait RoutingScheme: Send + Sync {
    /// The layer whose forwarding table the packet follows.
    fn layer(&self, packet_layer: u8) -> u8;
    /// At the packet's first switch: the intermediate switch to visit, or `NO_VIA`.
    fn inject(&mut self, view: &dyn SwitchView, at: Injection) -> u32;
    /// The virtual channel (PFC priority, 0..8) of a packet about to take its hop number
    /// `hops` (0-based) between switches.
    fn channel(&self, packet_layer: u8, hops: u8) -> u8;
    /// Whether the scheme wants `on_queued` (it costs a call per hop).
    fn watches_queues(&self) -> bool {
        false
    }
    /// A data packet of `flow` joined the queue of link `from -> to`, which now holds `queued`
    /// bytes.
    fn on_queued(&mut self, _flow: u32, _from: u32, _to: u32, _queued: u64, _now: Time) {}
    /// The scheme's own counters, reported with the run's (-1 for a time that never came).
    fn counters(&self) -> Vec<(&'static str, i64)> {
        Vec::new()
    }
    /// Whether `inject` may name an intermediate switch without hosts (the forwarding table
    /// then has to lead to every switch, not only to those with hosts).
    fn vias_without_hosts(&self) -> bool {
        false
    }
    /// For plain layered routing (the packet's own layer, no intermediate, a priority per
    /// layer): that priority per layer, so that the datapath can skip the calls on every hop.
    fn layer_priorities(&self) -> Option<&[u8]> {
        None
    }
}

/// The channel plain layered routing gives a packet of `layer`: its layer's priority (0 for
/// layers without one), whatever the hop.
#[inline]
pub fn layer_channel(layer_priority: &[u8], layer: u8) -> u8 {
    layer_priority.get(layer as usize).copied().unwrap_or(0)
}

/// Switch distances in layer 1 and the switches that may serve as intermediates.
struct MinimalPaths {
    nr: usize,
    dist: Vec<u8>,
    /// Host-attached switches: the only intermediates the paper allows on MLFM and OFT, and on
    /// Slim Fly every switch is one.
    intermediates: Vec<u32>,
}

impl MinimalPaths {
    fn new(spec: &NetworkSpec) -> Self {
        let nr = spec.n_switches;
        let mut attached = vec![false; nr];
        for &s in &spec.host_switch {
            attached[s as usize] = true;
        }
        MinimalPaths {
            nr,
            dist: spec.dist[..nr * nr].to_vec(),
            intermediates: (0..nr as u32).filter(|&s| attached[s as usize]).collect(),
        }
    }

    fn hops(&self, s: u32, t: u32) -> Option<u32> {
        match self.dist[s as usize * self.nr + t as usize] {
            UNREACHABLE => None,
            d => Some(d as u32),
        }
    }

    /// A uniformly random intermediate other than `s` and `t`, or `NO_VIA` when none exists.
    fn random_intermediate(&self, rng: &mut SimRng, s: u32, t: u32) -> u32 {
        let n = self.intermediates.len() as u32;
        let excluded = self
            .intermediates
            .iter()
            .filter(|&&v| v == s || v == t)
            .count() as u32;
        if n <= excluded {
            return NO_VIA;
        }
        // Rejection keeps the draw uniform over the allowed switches and its cost bounded:
        // at most two of them are excluded.
        loop {
            let v = self.intermediates[rng.below(n) as usize];
            if v != s && v != t {
                return v;
            }
        }
    }
}

/// Hop-count virtual channels: hop i uses channel i, the last channel for every hop beyond.
fn hop_channel(hops: u8, channels: u8) -> u8 {
    hops.min(channels.max(1) - 1)
}

/// The compiled layers, each layer on the priority `layer_priority` gives it.
pub struct Layered {
    layer_priority: Vec<u8>,
}

impl RoutingScheme for Layered {
    fn layer(&self, packet_layer: u8) -> u8 {
        packet_layer
    }

    fn inject(&mut self, _: &dyn SwitchView, _: Injection) -> u32 {
        NO_VIA
    }

    fn channel(&self, packet_layer: u8, _: u8) -> u8 {
        layer_channel(&self.layer_priority, packet_layer)
    }

    fn layer_priorities(&self) -> Option<&[u8]> {
        Some(&self.layer_priority)
    }
}

/// MIN, INR and UGAL-L over layer 1's minimal paths, with hop-count virtual channels.
pub struct Diameter2 {
    kind: RoutingKind,
    paths: MinimalPaths,
    ugal: UgalParams,
    channels: u8,
    rng: SimRng,
}

impl Diameter2 {
    /// UGAL-L's choice at `s` for a packet to `t`: `NO_VIA` (minimal) or an intermediate.
    fn ugal(&mut self, view: &dyn SwitchView, s: u32, t: u32, entropy: u32) -> u32 {
        let (Some(port_m), Some(l_m)) = (view.port_for(s, t, entropy), self.paths.hops(s, t))
        else {
            return NO_VIA;
        };
        let q_m = view.queued_bytes(port_m);
        if self.kind == RoutingKind::UgalLThreshold
            && (q_m as f64) < self.ugal.threshold * view.buffer_bytes() as f64
        {
            return NO_VIA;
        }
        // Costs as in the paper's Slim Fly variant: occupancy of the first output port times
        // path length, the indirect ones weighted by c; ties keep the minimal path.
        let mut best = (q_m as f64 * l_m as f64, NO_VIA);
        for _ in 0..self.ugal.n_i {
            let v = self.paths.random_intermediate(&mut self.rng, s, t);
            let (Some(a), Some(b)) = (self.paths.hops(s, v), self.paths.hops(v, t)) else {
                continue;
            };
            let Some(port_i) = view.port_for(s, v, entropy) else {
                continue;
            };
            let cost = self.ugal.c * view.queued_bytes(port_i) as f64 * (a + b) as f64;
            if cost < best.0 {
                best = (cost, v);
            }
        }
        best.1
    }
}

impl RoutingScheme for Diameter2 {
    fn layer(&self, _: u8) -> u8 {
        0
    }

    fn inject(&mut self, view: &dyn SwitchView, at: Injection) -> u32 {
        match self.kind {
            RoutingKind::Inr => self
                .paths
                .random_intermediate(&mut self.rng, at.switch, at.target),
            RoutingKind::UgalL | RoutingKind::UgalLThreshold => {
                self.ugal(view, at.switch, at.target, at.entropy)
            }
            _ => NO_VIA,
        }
    }

    fn channel(&self, _: u8, hops: u8) -> u8 {
        hop_channel(hops, self.channels)
    }
}

/// Switch-based adaptive routing on a two-level Clos, after Zahavi et al.: each flow's input
/// switch picks a middle switch (an up-port) at random and keeps it until a congestion
/// notification for that middle switch reaches it, then re-picks another at random. A queue
/// above the threshold on the flow's path sends the notification; it arrives after the
/// notification delay and takes effect on the flow's next packet.
pub struct Adaptive {
    dist: MinimalPaths,
    neighbours: Vec<Vec<u32>>,
    attached: Vec<bool>,
    params: AdaptiveParams,
    channels: u8,
    rng: SimRng,
    /// Per flow: its middle switch, input and output switch.
    choice: HashMap<u32, (u32, u32, u32)>,
    /// Per flow: when a pending notification reaches its input switch.
    notified: HashMap<u32, Time>,
    /// Flows assigned to each directed link.
    load: HashMap<(u32, u32), u32>,
    /// Flows a link carries without exceeding its capacity (link rate / host rate).
    capacity: u32,
    /// Links carrying more than `capacity` flows.
    over: u32,
    converged_at: Time,
    repicks: u64,
    notifications: u64,
}

impl Adaptive {
    fn new(spec: &NetworkSpec, params: AdaptiveParams, channels: u8, seed: u64) -> Self {
        let nr = spec.n_switches;
        let mut neighbours = vec![Vec::new(); nr];
        for (&a, &b) in spec.link_a.iter().zip(&spec.link_b) {
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
        let mut attached = vec![false; nr];
        for &s in &spec.host_switch {
            attached[s as usize] = true;
        }
        let link = spec.link_gbps.iter().copied().fold(f64::INFINITY, f64::min);
        let host = spec.host_gbps.iter().copied().fold(0.0, f64::max);
        Adaptive {
            dist: MinimalPaths::new(spec),
            neighbours,
            attached,
            params,
            channels,
            rng: SimRng::new(seed ^ 0xADA9_7170),
            choice: HashMap::new(),
            notified: HashMap::new(),
            load: HashMap::new(),
            capacity: ((link / host) + 1e-9).floor().max(1.0) as u32,
            over: 0,
            converged_at: NO_TIME,
            repicks: 0,
            notifications: 0,
        }
    }

    /// Middle switches on a minimal path from `s` to `t`.
    fn middles(&self, s: u32, t: u32) -> Vec<u32> {
        let Some(d) = self.dist.hops(s, t) else {
            return Vec::new();
        };
        self.neighbours[s as usize]
            .iter()
            .copied()
            .filter(|&n| n != t && self.dist.hops(n, t).is_some_and(|e| e + 1 == d))
            .collect()
    }

    fn add_load(&mut self, link: (u32, u32), delta: i32) {
        let count = self.load.entry(link).or_insert(0);
        let was_over = *count > self.capacity;
        *count = (*count as i32 + delta) as u32;
        match (was_over, *count > self.capacity) {
            (false, true) => self.over += 1,
            (true, false) => self.over -= 1,
            _ => {}
        }
    }

    fn assign(&mut self, flow: u32, route: (u32, u32, u32), delta: i32) {
        let (mid, s, t) = route;
        self.add_load((s, mid), delta);
        self.add_load((mid, t), delta);
        if delta > 0 {
            self.choice.insert(flow, route);
        }
    }

    /// Records when the assignment last became free of links over capacity.
    fn note_convergence(&mut self, now: Time) {
        if self.over > 0 {
            self.converged_at = NO_TIME;
        } else if self.converged_at == NO_TIME {
            self.converged_at = now;
        }
    }
}

impl RoutingScheme for Adaptive {
    fn layer(&self, _: u8) -> u8 {
        0
    }

    fn inject(&mut self, _: &dyn SwitchView, at: Injection) -> u32 {
        let current = self.choice.get(&at.flow).copied();
        let due = self.notified.get(&at.flow).is_some_and(|&t| t <= at.now);
        if let (Some(c), false) = (current, due) {
            return c.0;
        }
        let mut options = self.middles(at.switch, at.target);
        if let Some(old) = current {
            self.notified.remove(&at.flow);
            if options.len() > 1 {
                options.retain(|&m| m != old.0);
            }
            self.assign(at.flow, old, -1);
            self.repicks += 1;
        }
        if options.is_empty() {
            return NO_VIA;
        }
        let mid = options[self.rng.below(options.len() as u32) as usize];
        self.assign(at.flow, (mid, at.switch, at.target), 1);
        self.note_convergence(at.now);
        mid
    }

    fn channel(&self, _: u8, hops: u8) -> u8 {
        hop_channel(hops, self.channels)
    }

    fn watches_queues(&self) -> bool {
        true
    }

    // A Clos fabric's spines, which carry no hosts, are the intermediates.
    fn vias_without_hosts(&self) -> bool {
        true
    }

    fn on_queued(&mut self, flow: u32, from: u32, to: u32, queued: u64, now: Time) {
        if queued <= self.params.threshold_bytes || self.notified.contains_key(&flow) {
            return;
        }
        let mid = if !self.attached[from as usize] {
            from
        } else if !self.attached[to as usize] {
            to
        } else {
            return;
        };
        // Packets still queued on a path the flow has left say nothing about its new one.
        if self.choice.get(&flow).is_some_and(|c| c.0 == mid) {
            self.notified.insert(flow, now + self.params.notify_delay);
            self.notifications += 1;
        }
    }

    fn counters(&self) -> Vec<(&'static str, i64)> {
        let converged = if self.converged_at == NO_TIME {
            -1
        } else {
            self.converged_at as i64
        };
        vec![
            ("adaptive_converged_at_ps", converged),
            ("adaptive_repicks", self.repicks as i64),
            ("adaptive_notifications", self.notifications as i64),
            ("adaptive_links_over_capacity", self.over as i64),
        ]
    }
}

/// Builds the scheme a run asked for. `channels` is the number of hop-count virtual channels
/// (ignored by `Layers`, whose priorities come from `layer_priority`).
pub fn scheme_for(
    kind: RoutingKind,
    spec: &NetworkSpec,
    ugal: UgalParams,
    adaptive: AdaptiveParams,
    channels: u8,
    layer_priority: &[u8],
    seed: u64,
) -> Box<dyn RoutingScheme> {
    match kind {
        RoutingKind::Layers => Box::new(Layered {
            layer_priority: layer_priority.to_vec(),
        }),
        RoutingKind::Adaptive => Box::new(Adaptive::new(spec, adaptive, channels, seed)),
        _ => Box::new(Diameter2 {
            kind,
            paths: MinimalPaths::new(spec),
            ugal,
            channels,
            // Its own stream, so choosing a scheme does not shift the engine's random draws.
            rng: SimRng::new(seed ^ 0x5EED_F00D),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path 0 - 1 - 2 - 3 with a chord 0 - 2: from 0, port 10 leads to 1 and port 20 to 2.
    struct Line {
        loaded_port: u32,
        load: u64,
    }

    impl SwitchView for Line {
        fn port_for(&self, switch: u32, target: u32, _: u32) -> Option<u32> {
            assert_eq!(switch, 0);
            Some(if target == 1 { 10 } else { 20 })
        }

        fn queued_bytes(&self, port: u32) -> u64 {
            if port == self.loaded_port {
                self.load
            } else {
                0
            }
        }

        fn buffer_bytes(&self) -> u64 {
            100_000
        }
    }

    fn spec(hosts_on: &[u32]) -> NetworkSpec {
        let nr = 4;
        let dist: Vec<u8> = vec![
            0, 1, 1, 2, //
            1, 0, 1, 2, //
            1, 1, 0, 1, //
            2, 2, 1, 0,
        ];
        NetworkSpec {
            planes: 1,
            n_switches: nr,
            host_switch: hosts_on.to_vec(),
            dist,
            ..NetworkSpec::default()
        }
    }

    fn at(switch: u32, target: u32) -> Injection {
        Injection {
            switch,
            target,
            entropy: 0,
            flow: 0,
            now: 0,
        }
    }

    fn scheme(kind: RoutingKind, hosts_on: &[u32]) -> Box<dyn RoutingScheme> {
        scheme_for(
            kind,
            &spec(hosts_on),
            UgalParams::default(),
            AdaptiveParams::default(),
            4,
            &[],
            7,
        )
    }

    #[test]
    fn valiant_picks_host_attached_intermediates_at_random() {
        let view = Line {
            loaded_port: 0,
            load: 0,
        };
        let mut inr = scheme(RoutingKind::Inr, &[0, 1, 2, 3]);
        let mut seen = [0u32; 4];
        for _ in 0..400 {
            seen[inr.inject(&view, at(0, 3)) as usize] += 1;
        }
        assert_eq!(
            (seen[0], seen[3]),
            (0, 0),
            "never the source or destination"
        );
        assert!(
            seen[1] > 150 && seen[2] > 150,
            "uniform over the others: {seen:?}"
        );
        // Switch 1 carries no host (an MLFM or OFT global switch): never an intermediate.
        let mut inr = scheme(RoutingKind::Inr, &[0, 2, 3]);
        assert!((0..100).all(|_| inr.inject(&view, at(0, 3)) == 2));
    }

    #[test]
    fn ugal_l_goes_indirect_only_when_the_minimal_queue_is_loaded() {
        // Minimal 0 -> 2 leaves over port 20; the indirect path via 1 over port 10 (length 2).
        let idle = Line {
            loaded_port: 20,
            load: 0,
        };
        let loaded = Line {
            loaded_port: 20,
            load: 50_000,
        };
        let mut ugal = scheme(RoutingKind::UgalL, &[0, 1, 2, 3]);
        assert_eq!(ugal.inject(&idle, at(0, 2)), NO_VIA);
        // Intermediates for 0 -> 2 are 1 and 3; via 3 the first hop is port 20 as well.
        let mut via_one = 0;
        for _ in 0..50 {
            let v = ugal.inject(&loaded, at(0, 2));
            assert!(v == 1 || v == NO_VIA, "{v}");
            via_one += (v == 1) as u32;
        }
        assert!(via_one > 40, "{via_one}");
        // Hop-count channels: hop i on channel i, capped at the last one.
        assert_eq!(
            (ugal.channel(0, 0), ugal.channel(0, 3), ugal.channel(0, 9)),
            (0, 3, 3)
        );
    }

    #[test]
    fn ugal_l_threshold_stays_minimal_below_t() {
        let mut th = scheme(RoutingKind::UgalLThreshold, &[0, 1, 2, 3]);
        let below = Line {
            loaded_port: 20,
            load: 9_000, // 9% of the buffer, T = 10%
        };
        assert!((0..50).all(|_| th.inject(&below, at(0, 2)) == NO_VIA));
        let above = Line {
            loaded_port: 20,
            load: 11_000,
        };
        assert!((0..50).any(|_| th.inject(&above, at(0, 2)) == 1));
    }

    /// Clos(n=1, r=2, m=3): leaves 0 and 1 (one host each), middle switches 2, 3, 4.
    fn clos() -> NetworkSpec {
        let (a, b): (Vec<u32>, Vec<u32>) = [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
            .into_iter()
            .unzip();
        let mut dist = vec![2u8; 25];
        for s in 0..5 {
            dist[s * 5 + s] = 0;
        }
        for (&x, &y) in a.iter().zip(&b) {
            dist[x as usize * 5 + y as usize] = 1;
            dist[y as usize * 5 + x as usize] = 1;
        }
        NetworkSpec {
            planes: 1,
            n_switches: 5,
            host_switch: vec![0, 1],
            host_gbps: vec![100.0; 2],
            link_gbps: vec![100.0; 6],
            link_a: a,
            link_b: b,
            dist,
            ..NetworkSpec::default()
        }
    }

    #[test]
    fn adaptive_keeps_a_flow_on_its_middle_switch_until_notified() {
        let params = AdaptiveParams {
            threshold_bytes: 1000,
            notify_delay: 500,
        };
        let mut adaptive = Adaptive::new(&clos(), params, 2, 3);
        let view = Line {
            loaded_port: 0,
            load: 0,
        };
        let at = |now| Injection {
            switch: 0,
            target: 1,
            entropy: 0,
            flow: 9,
            now,
        };
        let first = adaptive.inject(&view, at(0));
        assert!((2..5).contains(&first));
        assert_eq!(
            adaptive.inject(&view, at(10)),
            first,
            "per flow, not per packet"
        );
        // A queue below the threshold, or on a middle switch the flow does not use, is ignored.
        adaptive.on_queued(9, first, 1, 1000, 20);
        let other = if first == 2 { 3 } else { 2 };
        adaptive.on_queued(9, other, 1, 5000, 20);
        assert_eq!(adaptive.inject(&view, at(30)), first);
        // A congested link of its path: the input switch re-picks once the notification lands.
        adaptive.on_queued(9, first, 1, 5000, 40);
        assert_eq!(adaptive.inject(&view, at(539)), first);
        let second = adaptive.inject(&view, at(540));
        assert!(second != first && (2..5).contains(&second));
        assert_eq!(adaptive.repicks, 1);
        assert_eq!(adaptive.over, 0);
        assert_eq!(adaptive.converged_at, 0);
    }
}
