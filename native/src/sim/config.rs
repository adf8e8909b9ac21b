//! Run parameters shared by the engine and the transports.

use super::layer_choice::LayerPolicy;
use super::packet::Time;
use super::switch_routing::{AdaptiveParams, RoutingKind, UgalParams};
use super::transport::TCP_INITIAL_RTO;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// Receiver-driven NDP: full first window, trimming switches, paced pulls.
    Ndp,
    /// TCP NewReno over lossy queues (`DropPolicy`).
    Tcp,
    /// DCTCP: NewReno plus ECN-proportional window reduction.
    Dctcp,
    /// Multipath TCP: TCP or DCTCP subflows over several planes and paths, with coupled
    /// congestion avoidance (`mptcp` module).
    Mptcp,
}

impl TransportKind {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "ndp" => Some(TransportKind::Ndp),
            "tcp" => Some(TransportKind::Tcp),
            "dctcp" => Some(TransportKind::Dctcp),
            "mptcp" => Some(TransportKind::Mptcp),
            _ => None,
        }
    }
}

/// What a full (non-trimming, lossy) switch queue does with data packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    /// Drop the arriving packet.
    Tail,
    /// Drop the oldest waiting packets until the arrival fits: the loss sits at the head of the
    /// queue, so the receiver sees the gap (and the sender its duplicate ACKs) a queue earlier.
    Front,
    /// Random early drop on the instantaneous queue: an arrival finding `red_min_packets` or
    /// more packets queued is dropped with a probability rising linearly to 1 at the capacity.
    Red,
}

impl DropPolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "tail" => Some(DropPolicy::Tail),
            "front" => Some(DropPolicy::Front),
            "red" => Some(DropPolicy::Red),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadBalancing {
    /// One path per flow: switches hash the flow over equal-cost next hops (layer 1).
    Ecmp,
    /// A fresh random next hop at every switch for every packet (layer 1).
    Spray,
    /// A fresh random path per flowlet (layer 1).
    LetFlow,
    /// The source picks a layer per flowlet; NDP receivers ask for another layer on trims.
    FatPaths,
}

impl LoadBalancing {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "ecmp" => Some(LoadBalancing::Ecmp),
            "spray" => Some(LoadBalancing::Spray),
            "letflow" => Some(LoadBalancing::LetFlow),
            "fatpaths" => Some(LoadBalancing::FatPaths),
            _ => None,
        }
    }
}

/// How a single-path flow on a host with one NIC per plane picks its plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaneChoice {
    /// A hash of the flow (ECMP across planes).
    Hash,
    /// Each source host cycles through its planes, flow after flow in start order.
    RoundRobin,
    /// The plane with the fewest switch hops between the two hosts' switches (ties by hash).
    FewestHops,
}

impl PlaneChoice {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "hash" => Some(PlaneChoice::Hash),
            "round-robin" => Some(PlaneChoice::RoundRobin),
            "fewest-hops" => Some(PlaneChoice::FewestHops),
            _ => None,
        }
    }
}

/// The path of each MPTCP subflow inside its plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowPaths {
    /// The k-th subflow of a plane takes the k-th of the minimal paths that consecutive
    /// entropy values enumerate (distinct while the plane has that many equal-cost paths).
    KShortest,
    /// The k-th subflow of a plane takes FatPaths layer k (cycling through the allowed layers).
    Layers,
}

impl SubflowPaths {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "kshortest" => Some(SubflowPaths::KShortest),
            "layers" => Some(SubflowPaths::Layers),
            _ => None,
        }
    }
}

/// MPTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MptcpParams {
    pub subflows_per_plane: u8,
    pub paths: SubflowPaths,
    /// Subflows react to ECN marks as DCTCP does (else NewReno).
    pub dctcp_subflows: bool,
}

impl Default for MptcpParams {
    fn default() -> Self {
        MptcpParams {
            subflows_per_plane: 1,
            paths: SubflowPaths::KShortest,
            dctcp_subflows: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub transport: TransportKind,
    pub load_balancing: LoadBalancing,
    /// Payload bytes of a full data packet (htsim's `-mtu`).
    pub mtu: u32,
    /// Header bytes on the wire of a data packet; also the size of a trimmed packet.
    pub header: u32,
    /// Bytes on the wire of an ACK, NACK or PULL.
    pub ack_bytes: u32,
    /// Switch output queue capacity, in MTU-sized packets.
    pub queue_packets: u32,
    /// ECN marking threshold in packets queued (DCTCP); 0 disables marking.
    pub ecn_threshold_packets: u32,
    /// What full data queues drop (TCP, DCTCP; NDP trims and lossless queues pause instead).
    pub drop_policy: DropPolicy,
    /// `DropPolicy::Red`: queued packets from which arrivals may be dropped.
    pub red_min_packets: u32,
    /// Initial window in packets (NDP's first full-rate window, TCP's initial cwnd).
    pub initial_window: u32,
    /// TCP/DCTCP slow-start threshold at the start of a flow, in packets; 0: unbounded.
    pub initial_ssthresh: u32,
    /// Minimum retransmission timeout: the floor of the timeout computed from RTT samples.
    pub min_rto: Time,
    /// TCP's (DCTCP's, MPTCP subflows') retransmission timeout before the flow's first RTT
    /// sample (RFC 6298: 1 s); `min_rto` still floors it. NDP keeps its own
    /// (`transport::NDP_INITIAL_RTO`).
    pub initial_rto: Time,
    /// Period of the retransmission-timeout scan, so timeouts fire up to this late; 0: a
    /// quarter of `min_rto`.
    pub rto_granularity: Time,
    /// Idle gap that starts a new flowlet (LetFlow, FatPaths).
    pub flowlet_gap: Time,
    /// NDP pull pacing as a fraction of the receiver's NIC rate.
    pub pull_rate: f64,
    /// Layers FatPaths may pick from (indices; layer 0 is the minimal layer).
    pub fatpaths_layers: Vec<u8>,
    /// TCP/DCTCP: space a window's packets over one smoothed RTT instead of sending them back
    /// to back (no effect before the first RTT sample).
    pub tcp_pacing: bool,
    /// How FatPaths picks layers and reacts to congestion (`layer_choice` module).
    pub layer_policy: LayerPolicy,
    pub seed: u64,
    /// Switch-side routing scheme.
    pub routing: RoutingKind,
    pub ugal: UgalParams,
    pub adaptive: AdaptiveParams,
    /// Hop-count virtual channels of MIN, INR and UGAL-L (PFC priorities 0..channels).
    pub channels: u8,
    /// PFC priority of each layer under `RoutingKind::Layers`.
    pub layer_priority: Vec<u8>,
    /// PFC on every port instead of drop-tail or trimming queues.
    pub lossless: bool,
    /// Bytes one ingress priority may buffer before its upstream is paused.
    pub pfc_xoff_bytes: u64,
    /// Bytes below which a paused upstream is resumed.
    pub pfc_xon_bytes: u64,
    /// Plane of single-path flows on multi-plane fabrics.
    pub plane_choice: PlaneChoice,
    pub mptcp: MptcpParams,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            transport: TransportKind::Ndp,
            load_balancing: LoadBalancing::Spray,
            mtu: 9000,
            header: 64,
            ack_bytes: 64,
            queue_packets: 8,
            ecn_threshold_packets: 0,
            drop_policy: DropPolicy::Tail,
            red_min_packets: 4,
            initial_window: 8,
            initial_ssthresh: 0,
            min_rto: 1_000_000_000,
            initial_rto: TCP_INITIAL_RTO,
            rto_granularity: 0,
            flowlet_gap: 50_000_000,
            pull_rate: 0.99,
            fatpaths_layers: vec![0],
            tcp_pacing: false,
            layer_policy: LayerPolicy::Adaptive,
            seed: 1,
            routing: RoutingKind::Layers,
            ugal: UgalParams::default(),
            adaptive: AdaptiveParams::default(),
            channels: 1,
            layer_priority: vec![0],
            lossless: false,
            pfc_xoff_bytes: 8 * 9000,
            pfc_xon_bytes: 4 * 9000,
            plane_choice: PlaneChoice::Hash,
            mptcp: MptcpParams::default(),
        }
    }
}
