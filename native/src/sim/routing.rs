//! Switch-side routing schemes: which path a packet takes, decided by the switch it enters.
//!
//! The engine forwards every packet towards a *target* switch over the candidates of the
//! forwarding table; a scheme only says which layer's table is read, whether the packet first
//! heads for an intermediate switch (Valiant), and which virtual channel (PFC priority) it
//! occupies on each hop. The schemes follow the SC'15 diameter-two study (Kathareios et al.,
//! "Cost-Effective Diameter-Two Topologies"): MIN, INR (Valiant) and UGAL-L, generic and with a
//! threshold. They decide once per packet, at the packet's first switch (injection).

use super::network::{NetworkSpec, UNREACHABLE};
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
}

impl RoutingKind {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "layers" => Some(RoutingKind::Layers),
            "min" => Some(RoutingKind::Min),
            "inr" => Some(RoutingKind::Inr),
            "ugal-l" => Some(RoutingKind::UgalL),
            "ugal-l-threshold" => Some(RoutingKind::UgalLThreshold),
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
    fn inject(&mut self, view: &dyn SwitchView, switch: u32, target: u32, entropy: u32) -> u32;
    /// The virtual channel (PFC priority, 0..8) of a packet about to take its hop number
    /// `hops` (0-based) between switches.
    fn channel(&self, packet_layer: u8, hops: u8) -> u8;
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

    fn inject(&mut self, _: &dyn SwitchView, _: u32, _: u32, _: u32) -> u32 {
        NO_VIA
    }

    fn channel(&self, packet_layer: u8, _: u8) -> u8 {
        self.layer_priority
            .get(packet_layer as usize)
            .copied()
            .unwrap_or(0)
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

    fn inject(&mut self, view: &dyn SwitchView, switch: u32, target: u32, entropy: u32) -> u32 {
        match self.kind {
            RoutingKind::Inr => self
                .paths
                .random_intermediate(&mut self.rng, switch, target),
            RoutingKind::UgalL | RoutingKind::UgalLThreshold => {
                self.ugal(view, switch, target, entropy)
            }
            RoutingKind::Min | RoutingKind::Layers => NO_VIA,
        }
    }

    fn channel(&self, _: u8, hops: u8) -> u8 {
        hop_channel(hops, self.channels)
    }
}

/// Builds the scheme a run asked for. `channels` is the number of hop-count virtual channels
/// (ignored by `Layers`, whose priorities come from `layer_priority`).
pub fn scheme_for(
    kind: RoutingKind,
    spec: &NetworkSpec,
    ugal: UgalParams,
    channels: u8,
    layer_priority: &[u8],
    seed: u64,
) -> Box<dyn RoutingScheme> {
    match kind {
        RoutingKind::Layers => Box::new(Layered {
            layer_priority: layer_priority.to_vec(),
        }),
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
            n_switches: nr,
            host_switch: hosts_on.to_vec(),
            dist,
            ..NetworkSpec::default()
        }
    }

    fn scheme(kind: RoutingKind, hosts_on: &[u32]) -> Box<dyn RoutingScheme> {
        scheme_for(kind, &spec(hosts_on), UgalParams::default(), 4, &[], 7)
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
            seen[inr.inject(&view, 0, 3, 0) as usize] += 1;
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
        assert!((0..100).all(|_| inr.inject(&view, 0, 3, 0) == 2));
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
        assert_eq!(ugal.inject(&idle, 0, 2, 0), NO_VIA);
        // Intermediates for 0 -> 2 are 1 and 3; via 3 the first hop is port 20 as well.
        let mut via_one = 0;
        for _ in 0..50 {
            let v = ugal.inject(&loaded, 0, 2, 0);
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
        assert!((0..50).all(|_| th.inject(&below, 0, 2, 0) == NO_VIA));
        let above = Line {
            loaded_port: 20,
            load: 11_000,
        };
        assert!((0..50).any(|_| th.inject(&above, 0, 2, 0) == 1));
    }
}
