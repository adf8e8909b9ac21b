//! The engine: the event loop, and the datapath it drives (packets, flows, output queues,
//! forwarding). Transports plug in through `transport::Transport` and see the datapath only
//! through `transport::Host`.
//!
//! Packets live in an arena and move around as u32 indices; queues are ring buffers of those
//! indices. A port schedules a `TxDone` only while it has a backlog: a packet that finds its
//! port idle is put on the wire at once, which halves the events on lightly loaded links.

use super::config::{LoadBalancing, PlaneChoice, SimConfig, SubflowPaths, TransportKind};
use super::copies::CopyLedger;
use super::events::{EventKind, EventQueue, MAX_OPERAND};
use super::invariants::{self, InNetwork, Invariant};
use super::layer_choice::{starts_flowlet, LayerChoice, LayerSignal};
use super::mptcp::Mptcp;
use super::ndp::Ndp;
use super::network::{build_ports, ForwardingTable, NetworkSpec, PortSpec, PortTable, UNREACHABLE};
use super::packet::{flags, Packet, PacketKind, Time, NO_TIME};
use super::phases::Phases;
use super::queues::lossless::{PfcCounters, PfcFrame, NO_INGRESS, PRIORITIES};
use super::queues::{
    prefetch, with_discipline, Arrival, Effects, Fate, NicLane, QueueDiscipline, Queued, Queues,
};
use super::random::SimRng;
use super::switch_routing::{
    layer_channel, scheme_for, Injection, RouteTag, RoutingScheme, SwitchView, NO_VIA,
};
use super::tcp::Tcp;
use super::transport::{Host, SubflowPath, Transport};

/// How many events ahead `prefetch_ahead` looks; about one cache-miss latency of work.
const PREFETCH_DISTANCE: usize = 4;

/// A flow's description, its path-choice state and its outcome.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub n_packets: u32,
    pub last_payload: u32,
    /// When the receiver held every byte.
    pub finish: Time,
    /// When the sender learnt that every byte was acknowledged.
    pub sender_done: Time,
    pub trims: u32,
    pub drops: u32,
    pub retransmits: u32,
    /// Retransmissions sent while an earlier copy was queued, travelling or delivered.
    pub spurious: u32,
    pub packets_sent: u32,
    /// Unique payload bytes the receiver holds.
    pub delivered: u64,
    pub layers_used: u64,
    pub layer: u8,
    pub entropy: u32,
    pub spray_cursor: u32,
    pub spray_deck: [u8; SPRAY_DECK],
    pub last_send: Time,
    /// One more than the highest packet number that reached the receiver whole (0: none).
    pub highest_arrived: u32,
    /// Data packets that reached the receiver after a higher-numbered one.
    pub out_of_order: u32,
    /// Plane a single-path flow sends in.
    pub plane: u8,
    /// A flow that starts `start` after this one finished at its receiver (`NO_FLOW`: none).
    pub successor: u32,
    /// Whether the flow waits for another to finish before it starts.
    pub waiting: bool,
}

/// "No flow", for flows without a successor.
pub const NO_FLOW: u32 = u32::MAX;

/// Entropy values a spraying flow cycles through before reshuffling.
pub const SPRAY_DECK: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub events: u64,
    pub data_packets_sent: u64,
    pub control_packets_sent: u64,
    pub payload_injected: u64,
    pub payload_delivered: u64,
    pub payload_duplicate: u64,
    pub payload_trimmed: u64,
    pub payload_dropped: u64,
    pub trims: u64,
    pub data_drops: u64,
    pub header_drops: u64,
    pub control_drops: u64,
    pub unroutable: u64,
    pub ecn_marks: u64,
    pub layer_changes: u64,
    pub timeouts: u64,
    pub flows_started: u64,
    pub flows_finished: u64,
    /// Switch-to-switch hops taken by data packets (path length, summed).
    pub data_hops: u64,
    /// Packets the routing scheme sent via an intermediate switch.
    pub indirect_packets: u64,
    /// Data packets that reached their receiver after a higher-numbered one of their flow.
    pub out_of_order: u64,
    /// Retransmissions sent while an earlier copy was queued, travelling or delivered.
    pub spurious_retransmissions: u64,
    /// Data packets that reached their receiver with their payload, and trimmed ones (headers).
    pub data_arrivals: u64,
    pub header_arrivals: u64,
}

/// A simulation of one workload on one fabric.
pub struct Simulator {
    net: Datapath,
    transport: Box<dyn Transport<Datapath>>,
    /// Started flows whose sender has not finished; scanned for retransmission timeouts.
    active: Vec<u32>,
    rto_scan_pending: bool,
    /// A cycle of paused queues seen at the previous deadlock check, with its ports' progress.
    suspect: Option<PausedCycle>,
}

/// Paused (port, priority) queues forming a cycle, sorted, and the bytes each port had sent.
type PausedCycle = (Vec<(u32, u8)>, Vec<u64>);

/// What the routing scheme and the lossless queues track per packet, beside the packet.
#[derive(Clone, Copy, Debug)]
struct PacketTag {
    route: RouteTag,
    /// Priority (virtual channel) of the hop the packet is queued for.
    prio: u8,
    /// Port the packet arrived over at its current switch, and the priority it arrived with.
    ingress: u32,
    in_prio: u8,
}

/// A packet and its tag, kept in one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Slot {
    pkt: Packet,
    tag: PacketTag,
}

/// The packets in flight, indexed by the `u32` handles `Datapath::alloc_packet` gives out.
///
/// A handle indexes the arena without a bounds check: every handle an event or a queue holds
/// was given out by `alloc_packet` (a slot it pushed, or a freed one it took back), and the
/// arena never shrinks, so every handle is below its length. Debug builds check it. The checks
/// cost 10 instructions per event on the k=16 benchmark (132 M, 3%).
#[derive(Default)]
struct Arena(Vec<Slot>);

impl std::ops::Index<u32> for Arena {
    type Output = Slot;
    #[inline(always)]
    fn index(&self, pkt: u32) -> &Slot {
        debug_assert!((pkt as usize) < self.0.len());
        // SAFETY: see the type's comment: every handle is below the arena's length.
        unsafe { self.0.get_unchecked(pkt as usize) }
    }
}

impl std::ops::IndexMut<u32> for Arena {
    #[inline(always)]
    fn index_mut(&mut self, pkt: u32) -> &mut Slot {
        debug_assert!((pkt as usize) < self.0.len());
        // SAFETY: as `index`.
        unsafe { self.0.get_unchecked_mut(pkt as usize) }
    }
}

const NEW_TAG: PacketTag = PacketTag {
    route: RouteTag {
        via: NO_VIA,
        hops: 0,
    },
    prio: 0,
    ingress: NO_INGRESS,
    in_prio: 0,
};

/// Hosts' NICs, switch queues, links and forwarding, with the packets and flows they carry.
/// Transports reach it only through its `Host` implementation.
pub struct Datapath {
    /// What a port's discipline acts on, apart from the queues (`split`).
    core: Core,
    cfg: SimConfig,
    nr: u32,
    planes: u32,
    /// NIC `plane` of host h is attached to switch `host_switch[h * planes + plane]`.
    host_switch: Vec<u32>,
    fib: ForwardingTable,
    /// A switch port's data queue capacity (what adaptive routing compares occupancy with).
    queue_cap_bytes: u64,
    routing: Box<dyn RoutingScheme>,
    /// Plain layered routing (`RoutingScheme::layer_priorities` is set): the datapath then
    /// decides layer, intermediate and channel itself, without a call per hop.
    layered: bool,
    /// Its priority per layer number, 0 for layers without one (`layer_channel`): what plain
    /// layered routing's hop reads, indexed by a `u8` without a check or an `Option`.
    layer_channels: [u8; 256],
    /// Whether the routing scheme reacts to queue occupancy (adaptive routing).
    watch_queues: bool,
    /// Every port's queue, under the run's one discipline.
    queues: Queues,
    layer_choice: LayerChoice,
    /// Flows grouped into barrier-separated phases (an application loop), if any.
    phases: Option<Phases>,
}

/// One flow of the workload.
#[derive(Clone, Copy, Debug)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
}

/// The switches a flow's packets can head for: its source's and destination's, in every plane
/// (a flow's plane is chosen at its start, and ACKs travel back in it).
fn endpoint_switches(records: &[FlowRecord], spec: &NetworkSpec) -> Vec<bool> {
    let planes = spec.n_planes();
    let mut wanted = vec![false; spec.n_switches];
    for f in records {
        for host in [f.src, f.dst] {
            for &s in &spec.host_switch[host as usize * planes..][..planes] {
                wanted[s as usize] = true;
            }
        }
    }
    wanted
}

#[inline]
fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

/// The one place a transport is chosen; a new transport adds its arm here.
fn transport_for(
    cfg: &SimConfig,
    n_flows: usize,
    spec: &NetworkSpec,
) -> Box<dyn Transport<Datapath>> {
    match cfg.transport {
        TransportKind::Ndp => Box::new(Ndp::new(n_flows, spec.n_hosts())),
        TransportKind::Tcp => Box::new(Tcp::new(n_flows, false)),
        TransportKind::Dctcp => Box::new(Tcp::new(n_flows, true)),
        TransportKind::Mptcp => Box::new(Mptcp::new(
            &vec![cfg.mptcp.subflows_per_plane as usize * spec.n_planes(); n_flows],
            cfg.mptcp,
            cfg.fatpaths_layers.clone(),
            cfg.seed,
        )),
    }
}

impl Simulator {
    pub fn new(spec: &NetworkSpec, flows: &[FlowSpec], cfg: SimConfig) -> Result<Self, String> {
        Self::build(spec, flows, &[], &[], cfg, None)
    }

    /// Flows where `after[i] != NO_FLOW` start `start` after flow `after[i]` finished at its
    /// receiver (request-response chains); each flow may be waited for by one other.
    pub fn chained(
        spec: &NetworkSpec,
        flows: &[FlowSpec],
        after: &[u32],
        cfg: SimConfig,
    ) -> Result<Self, String> {
        Self::build(spec, flows, after, &[], cfg, None)
    }

    /// Chained flows (`after`, as `chained`) or flows in phases: a flow of phase k > 0 starts
    /// `start` after the last flow of phase k - 1 finished at its receiver (a barrier; see
    /// `phases`). A workload has one or the other.
    pub fn scheduled(
        spec: &NetworkSpec,
        flows: &[FlowSpec],
        after: &[u32],
        phase: &[u32],
        cfg: SimConfig,
    ) -> Result<Self, String> {
        Self::build(spec, flows, after, phase, cfg, None)
    }

    /// A simulation driven by a transport built by the caller (MPTCP with per-connection
    /// subflow counts, say) instead of the one `cfg.transport` names.
    pub fn with_transport(
        spec: &NetworkSpec,
        flows: &[FlowSpec],
        cfg: SimConfig,
        transport: Box<dyn Transport<Datapath>>,
    ) -> Result<Self, String> {
        Self::build(spec, flows, &[], &[], cfg, Some(transport))
    }

    fn build(
        spec: &NetworkSpec,
        flows: &[FlowSpec],
        after: &[u32],
        phase: &[u32],
        cfg: SimConfig,
        transport: Option<Box<dyn Transport<Datapath>>>,
    ) -> Result<Self, String> {
        spec.validate()?;
        if cfg.mtu == 0 || cfg.header == 0 || cfg.ack_bytes == 0 {
            return Err("mtu, header and ack_bytes must be positive".into());
        }
        if cfg
            .fatpaths_layers
            .iter()
            .any(|&l| l as usize >= spec.n_layers())
            || cfg.fatpaths_layers.is_empty()
        {
            return Err(format!(
                "fatpaths_layers must be a non-empty subset of 0..{}",
                spec.n_layers()
            ));
        }
        let n_hosts = spec.n_hosts() as u32;
        let mut records = Vec::with_capacity(flows.len());
        for (i, f) in flows.iter().enumerate() {
            if f.src >= n_hosts || f.dst >= n_hosts || f.src == f.dst {
                return Err(format!(
                    "flow {i}: hosts ({}, {}) invalid for {n_hosts} hosts",
                    f.src, f.dst
                ));
            }
            let size = f.size.max(1);
            let n_packets = size.div_ceil(cfg.mtu as u64);
            if n_packets > u32::MAX as u64 / 2 {
                return Err(format!("flow {i}: {size} bytes is too large"));
            }
            records.push(FlowRecord {
                src: f.src,
                dst: f.dst,
                size,
                start: f.start,
                n_packets: n_packets as u32,
                last_payload: (size - (n_packets - 1) * cfg.mtu as u64) as u32,
                finish: NO_TIME,
                sender_done: NO_TIME,
                trims: 0,
                drops: 0,
                retransmits: 0,
                spurious: 0,
                packets_sent: 0,
                delivered: 0,
                layers_used: 0,
                layer: 0,
                entropy: hash32(i as u32 ^ hash32(cfg.seed as u32 ^ (cfg.seed >> 32) as u32)),
                spray_cursor: 0,
                spray_deck: std::array::from_fn(|i| i as u8),
                last_send: NO_TIME,
                highest_arrived: 0,
                out_of_order: 0,
                plane: 0,
                successor: NO_FLOW,
                waiting: false,
            });
        }
        chain_flows(&mut records, after)?;
        let phases = Phases::new(phase, records.len())?;
        if let Some(phases) = &phases {
            if !after.is_empty() {
                return Err("a workload has chained flows or phases, not both".into());
            }
            for (i, fl) in records.iter_mut().enumerate() {
                fl.waiting = phases.waits(i);
            }
        }
        choose_planes(&mut records, spec, cfg.plane_choice);
        check_routing(&cfg, spec)?;
        let ports = build_ports(spec);
        if ports.len() > MAX_OPERAND as usize + 1 {
            // An arrival carries its port in the event's narrower operand.
            return Err(format!("at most {} ports", MAX_OPERAND as u64 + 1));
        }
        let routing = scheme_for(
            cfg.routing,
            spec,
            cfg.ugal,
            cfg.adaptive,
            cfg.channels,
            &cfg.layer_priority,
            cfg.seed,
        );
        let kshortest =
            cfg.transport == TransportKind::Mptcp && cfg.mptcp.paths == SubflowPaths::KShortest;
        // Plain layered routing sends every packet to its flow's source or destination, never
        // via an intermediate: its table needs only the flows' endpoints' switches.
        let endpoints = routing
            .layer_priorities()
            .is_some()
            .then(|| endpoint_switches(&records, spec));
        let table = |spec: &NetworkSpec| match &endpoints {
            Some(wanted) => ForwardingTable::towards(spec, wanted),
            None => ForwardingTable::build(spec, routing.vias_without_hosts()),
        };
        let fib = if cfg.routing.minimal_layer_only() || kshortest {
            // MIN, INR and UGAL-L spread over every minimal path, whatever layer 1 was compiled
            // with: the paper's schemes assume all of them.
            let mut minimal = spec.clone();
            minimal.multipath[0] = true;
            table(&minimal)
        } else {
            table(spec)
        };
        // Most events are due at most a hop ahead: a full packet's serialisation and its
        // link's latency. The event queue's wheel spans that (`EventQueue::with_window`).
        let hop = ports
            .iter()
            .map(|p| p.latency + p.serialisation(cfg.mtu + cfg.header))
            .max()
            .unwrap_or(0);
        let mut events = EventQueue::with_window(hop);
        for (i, f) in records.iter().enumerate() {
            if !f.waiting {
                events.push(f.start, EventKind::FlowStart, i as u32, 0);
            }
        }
        let n_flows = records.len();
        let transport = transport.unwrap_or_else(|| transport_for(&cfg, n_flows, spec));
        let layer_choice = LayerChoice::new(
            cfg.layer_policy,
            cfg.fatpaths_layers.clone(),
            if cfg.load_balancing == LoadBalancing::FatPaths {
                n_flows
            } else {
                0
            },
        );
        let queues = Queues::for_config(
            &cfg,
            &ports,
            transport.trims(),
            n_flows * spec.n_planes(),
            spec.n_hosts() * spec.n_planes(),
        );
        let net = Datapath {
            core: Core {
                packets: Arena(Vec::with_capacity(1 << 16)),
                free_packets: Vec::new(),
                flows: records,
                counters: Counters::default(),
                copies: CopyLedger::new(n_flows),
                rng: SimRng::new(cfg.seed),
                events,
                ports: PortTable::new(ports),
                now: 0,
                header: cfg.header,
                n_links: spec.n_links() as u32,
            },
            layer_choice,
            queue_cap_bytes: cfg.queue_packets as u64 * cfg.mtu as u64,
            queues,
            cfg,
            nr: spec.n_switches as u32,
            planes: spec.n_planes() as u32,
            host_switch: spec.host_switch.clone(),
            fib,
            watch_queues: routing.watches_queues(),
            layered: routing.layer_priorities().is_some(),
            layer_channels: std::array::from_fn(|layer| {
                routing
                    .layer_priorities()
                    .map_or(0, |priorities| layer_channel(priorities, layer as u8))
            }),
            routing,
            phases,
        };
        // `forward::<true>` skips the queue watch: plain layered routing reacts to no queue.
        assert!(
            !(net.watch_queues && net.layered),
            "a layered routing scheme that watches queues needs forward::<true> to call it"
        );
        Ok(Simulator {
            net,
            transport,
            active: Vec::new(),
            rto_scan_pending: false,
            suspect: None,
        })
    }

    /// Runs every event up to and including `horizon`; returns whether events remain.
    pub fn run_until(&mut self, horizon: Time) -> bool {
        loop {
            let ev = match self.net.core.events.pop_until(horizon) {
                Ok(ev) => ev,
                Err(pending) => {
                    if pending {
                        self.net.core.now = self.net.core.now.max(horizon);
                    }
                    return pending;
                }
            };
            self.net.prefetch_ahead();
            self.net.core.now = ev.time;
            self.net.core.counters.events += 1;
            match ev.kind() {
                EventKind::Arrive => {
                    if let Some(p) = self.net.arrive(ev.a, ev.b()) {
                        if p.kind == PacketKind::Data {
                            self.transport.on_data(&mut self.net, p);
                        } else {
                            self.transport.on_feedback(&mut self.net, p);
                        }
                    }
                }
                EventKind::TxDone => self.net.tx_done(ev.a, ev.b() != 0),
                EventKind::Timer => self.transport.on_timer(&mut self.net, ev.a),
                EventKind::FlowStart => self.start_flow(ev.a),
                EventKind::RtoScan => self.rto_scan(),
                EventKind::Pfc => self.net.pfc_frame(PfcFrame::from_event(ev.a, ev.b())),
            }
        }
    }

    pub fn now(&self) -> Time {
        self.net.core.now
    }

    pub fn counters(&self) -> &Counters {
        &self.net.core.counters
    }

    pub fn flows(&self) -> &[FlowRecord] {
        &self.net.core.flows
    }

    /// Payload bytes of data packets still inside the network (queued or on a wire).
    pub fn payload_in_network(&self) -> u64 {
        self.net.payload_in_network()
    }

    /// The run's accounting identities (see `invariants`), checked now.
    pub fn invariants(&self) -> Vec<Invariant> {
        let net = &self.net;
        let min_fct = |f: &FlowRecord| -> Time {
            let wire = f.size + f.n_packets as u64 * net.cfg.header as u64;
            let nic = &net.core.ports[net.host_nic_port(f.src, 0)];
            // Rounded down, and spread over every plane's NIC (MPTCP may use them all).
            wire * 8_000_000 / nic.rate_mbps / net.planes as u64
        };
        let pfc = net.queues.lossless().map(|q| q.conservation());
        invariants::check(
            &net.core.counters,
            &net.core.flows,
            net.packets_inside(),
            &min_fct,
            pfc,
        )
    }

    /// The most events that were pending at once.
    pub fn peak_pending_events(&self) -> usize {
        self.net.core.events.peak_len
    }

    /// Packet slots allocated: the most packets that were in the network at once.
    pub fn packet_arena(&self) -> usize {
        self.net.core.packets.0.len()
    }

    pub fn forwarding_table_bytes(&self) -> usize {
        self.net.fib.memory_bytes()
    }

    /// The routing scheme's own counters (adaptive routing's convergence).
    pub fn routing_counters(&self) -> Vec<(&'static str, i64)> {
        self.net.routing.counters()
    }

    /// PFC counters of a lossless run.
    pub fn pfc_counters(&self) -> Option<&PfcCounters> {
        self.net.queues.lossless().map(|q| &q.counters)
    }

    /// A deadlock: a cycle of paused, non-empty (port, priority) queues, each waiting for the
    /// next, that was already there at the previous call and has sent nothing since. Call it
    /// between slices of `run_until`; a cycle that persists without progress can never clear,
    /// since every queue in it waits for the next one to send.
    pub fn check_deadlock(&mut self) -> Option<Vec<(u32, u8)>> {
        let pfc = self.net.queues.lossless()?;
        let Some(cycle) = pfc.paused_cycle() else {
            self.suspect = None;
            return None;
        };
        let mut key = cycle.clone();
        key.sort_unstable();
        let progress = pfc.progress(&key);
        let confirmed = self
            .suspect
            .as_ref()
            .is_some_and(|(k, p)| *k == key && *p == progress);
        self.suspect = Some((key, progress));
        confirmed.then_some(cycle)
    }

    // ---- flows ---------------------------------------------------------------------------

    fn start_flow(&mut self, f: u32) {
        self.net.core.counters.flows_started += 1;
        let n_packets = self.net.core.flows[f as usize].n_packets;
        self.net.core.copies.start(f as usize, n_packets);
        self.active.push(f);
        if !self.rto_scan_pending {
            self.rto_scan_pending = true;
            let at = self.net.core.now + self.rto_scan_period();
            self.net.core.events.push(at, EventKind::RtoScan, 0, 0);
        }
        self.transport.start(&mut self.net, f as usize);
    }

    fn rto_scan_period(&self) -> Time {
        let cfg = &self.net.cfg;
        match cfg.rto_granularity {
            0 => (cfg.min_rto / 4).max(1),
            grid => grid,
        }
    }

    fn rto_scan(&mut self) {
        let mut active = std::mem::take(&mut self.active);
        active.retain(|&f| !self.net.sender_done(f as usize));
        for &f in &active {
            self.transport.check_timeout(&mut self.net, f as usize);
        }
        active.retain(|&f| !self.net.sender_done(f as usize));
        // Flows may have started during the scan; keep both.
        active.append(&mut self.active);
        self.active = active;
        if self.active.is_empty() {
            self.rto_scan_pending = false;
        } else {
            let at = self.net.core.now + self.rto_scan_period();
            self.net.core.events.push(at, EventKind::RtoScan, 0, 0);
        }
    }
}

impl Datapath {
    /// Starts loading what an event a few places ahead will touch (its packet or its port):
    /// the arena and port tables are far larger than the caches, and the calendar queue's
    /// current bucket already knows which events come next.
    #[inline]
    fn prefetch_ahead(&self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(ev) = self.core.events.peek_ahead(PREFETCH_DISTANCE) {
            match ev.kind() {
                // An arrival reads its packet, the packet's tag and the link it crossed.
                EventKind::Arrive => {
                    prefetch(&self.core.packets.0, ev.a);
                    prefetch(self.core.ports.as_slice(), ev.b());
                }
                // A departure reads its port's queues and then its rate and latency.
                EventKind::TxDone => {
                    self.queues.prefetch(ev.a);
                    prefetch(self.core.ports.as_slice(), ev.a);
                }
                _ => {}
            }
        }
    }

    // ---- packets -------------------------------------------------------------------------

    #[inline]
    fn alloc_packet(&mut self, p: Packet) -> u32 {
        match self.core.free_packets.pop() {
            Some(i) => {
                self.core.packets[i] = Slot {
                    pkt: p,
                    tag: NEW_TAG,
                };
                i
            }
            None => {
                self.core.packets.0.push(Slot {
                    pkt: p,
                    tag: NEW_TAG,
                });
                (self.core.packets.0.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn free_packet(&mut self, i: u32) {
        self.core.free_packets.push(i);
    }

    #[inline]
    fn payload_of(&self, p: &Packet) -> u64 {
        (p.size - self.cfg.header) as u64
    }

    /// Payload bytes of data packet `seq` of flow `f`.
    #[inline]
    fn payload_bytes(&self, f: usize, seq: u32) -> u32 {
        let fl = &self.core.flows[f];
        if seq + 1 == fl.n_packets {
            fl.last_payload
        } else {
            self.cfg.mtu
        }
    }

    /// Data packets inside the network, whole and trimmed.
    fn packets_inside(&self) -> InNetwork {
        let mut free = vec![false; self.core.packets.0.len()];
        for &i in &self.core.free_packets {
            free[i as usize] = true;
        }
        let mut inside = InNetwork::default();
        for (p, _) in self
            .core
            .packets
            .0
            .iter()
            .map(|s| &s.pkt)
            .zip(free)
            .filter(|(_, f)| !f)
        {
            if p.kind != PacketKind::Data {
                continue;
            }
            if p.flags & flags::TRIMMED != 0 {
                inside.headers += 1;
            } else {
                inside.data += 1;
            }
        }
        inside
    }

    fn payload_in_network(&self) -> u64 {
        let mut free = vec![false; self.core.packets.0.len()];
        for &i in &self.core.free_packets {
            free[i as usize] = true;
        }
        self.core
            .packets
            .0
            .iter()
            .map(|s| &s.pkt)
            .zip(free)
            .filter(|(p, f)| !f && p.kind == PacketKind::Data)
            .map(|(p, _)| self.payload_of(p))
            .sum()
    }

    // ---- hosts ---------------------------------------------------------------------------

    #[inline]
    fn host_nic_port(&self, host: u32, plane: u8) -> u32 {
        2 * self.core.n_links + 2 * (host * self.planes + plane as u32)
    }

    #[inline]
    fn host_facing_port(&self, host: u32, plane: u8) -> u32 {
        2 * self.core.n_links + 2 * (host * self.planes + plane as u32) + 1
    }

    #[inline]
    fn host_switch(&self, host: u32, plane: u8) -> u32 {
        self.host_switch[(host * self.planes + plane as u32) as usize]
    }

    /// Hands a packet to the source host's NIC.
    fn send_from_host(&mut self, host: u32, pkt: u32) {
        let p = self.core.packets[pkt].pkt;
        if p.kind == PacketKind::Data {
            self.core.counters.data_packets_sent += 1;
            self.core.counters.payload_injected += self.payload_of(&p);
        } else {
            self.core.counters.control_packets_sent += 1;
        }
        self.core.packets[pkt].tag.prio = self.channel(p.layer, 0);
        self.enqueue::<true>(self.host_nic_port(host, p.plane), pkt);
    }

    /// Builds data packet `seq` of flow `f` on the flow's current path and hands it to the
    /// source NIC; both window-based transports send through here.
    fn transmit_data(&mut self, f: usize, seq: u32, is_rtx: bool) {
        let (layer, entropy) = self.data_path(f);
        let path = SubflowPath {
            plane: self.core.flows[f].plane,
            layer,
            entropy,
            subflow: 0,
            subflow_seq: 0,
        };
        self.transmit_on(f, seq, is_rtx, path);
    }

    /// Builds data packet `seq` of flow `f` on `path` and hands it to the source NIC.
    fn transmit_on(&mut self, f: usize, seq: u32, is_rtx: bool, path: SubflowPath) {
        let fl = &mut self.core.flows[f];
        fl.packets_sent += 1;
        if is_rtx {
            fl.retransmits += 1;
        }
        let (src, dst) = (fl.src, fl.dst);
        if self.core.copies.queued(f, seq, is_rtx) {
            fl.spurious += 1;
            self.core.counters.spurious_retransmissions += 1;
        }
        let size = self.payload_bytes(f, seq) + self.cfg.header;
        let pkt = self.alloc_packet(Packet {
            sent_at: self.core.now,
            flow: f as u32,
            seq,
            aux: path.subflow_seq,
            entropy: path.entropy,
            dst,
            size,
            kind: PacketKind::Data,
            flags: 0,
            layer: path.layer,
            plane: path.plane,
            subflow: path.subflow,
        });
        self.send_from_host(src, pkt);
    }

    /// Layer and entropy for the next data packet of flow `f`; starts flowlets.
    fn data_path(&mut self, f: usize) -> (u8, u32) {
        let now = self.core.now;
        let gap = self.cfg.flowlet_gap;
        let lb = self.cfg.load_balancing;
        let fl = &mut self.core.flows[f];
        let first = fl.last_send == NO_TIME;
        let new_flowlet = starts_flowlet(fl.last_send, now, gap);
        fl.last_send = now;
        let chosen = match lb {
            LoadBalancing::Ecmp => (0, fl.entropy),
            LoadBalancing::Spray => {
                // Packets draw their low entropy digits from a per-flow deck reshuffled every
                // SPRAY_DECK packets: short-term balanced over the first hops' equal-cost
                // choices yet random, like htsim's `-strat perm` path permutations. Higher
                // digits (fabrics with more paths than the deck) are plain random.
                let at = (fl.spray_cursor % SPRAY_DECK as u32) as usize;
                if at == 0 {
                    for i in (1..SPRAY_DECK).rev() {
                        let j = self.core.rng.below(i as u32 + 1) as usize;
                        fl.spray_deck.swap(i, j);
                    }
                }
                fl.spray_cursor = fl.spray_cursor.wrapping_add(1);
                let high = self.core.rng.next_u32() / SPRAY_DECK as u32;
                (0, fl.spray_deck[at] as u32 + SPRAY_DECK as u32 * high)
            }
            LoadBalancing::LetFlow => {
                if new_flowlet {
                    fl.entropy = self.core.rng.next_u32();
                }
                (0, fl.entropy)
            }
            LoadBalancing::FatPaths => {
                if new_flowlet {
                    let window_based = self.cfg.transport != TransportKind::Ndp;
                    fl.layer = if first {
                        self.layer_choice.first(&mut self.core.rng, f, window_based)
                    } else {
                        self.layer_choice.flowlet(&mut self.core.rng, f)
                    };
                    fl.entropy = self.core.rng.next_u32();
                }
                (fl.layer, fl.entropy)
            }
        };
        fl.layers_used |= 1u64 << (chosen.0 as u32).min(63);
        chosen
    }

    /// Layer and entropy for feedback travelling back to the source of flow `f`.
    fn feedback_path(&mut self, f: usize, data_layer: u8) -> (u8, u32) {
        match self.cfg.load_balancing {
            LoadBalancing::Spray => (data_layer, self.core.rng.next_u32()),
            _ => (data_layer, hash32(self.core.flows[f].entropy ^ 0xFEED_BACC)),
        }
    }

    /// FatPaths' reaction to what a transport learnt about a layer (see `layers`).
    fn layer_signal(&mut self, f: usize, layer: u8, signal: LayerSignal) {
        if self.cfg.load_balancing != LoadBalancing::FatPaths {
            return;
        }
        let current = self.core.flows[f].layer;
        if let Some(pick) = self
            .layer_choice
            .signal(&mut self.core.rng, f, current, layer, signal)
        {
            self.core.flows[f].layer = pick;
            self.core.flows[f].entropy = self.core.rng.next_u32();
            self.core.counters.layer_changes += 1;
        }
    }

    // ---- switching -----------------------------------------------------------------------

    /// A packet reached the far end of `port`: forwarded by a switch, or taken out of the
    /// network and returned when it reached a host.
    #[inline]
    fn arrive(&mut self, pkt: u32, port: u32) -> Option<Packet> {
        let node = self.core.ports[port].to;
        if node >= self.nr {
            let p = self.core.packets[pkt].pkt;
            self.free_packet(pkt);
            if p.kind == PacketKind::Data && p.flags & flags::TRIMMED != 0 {
                self.core.counters.header_arrivals += 1;
            } else if p.kind == PacketKind::Data {
                self.core.counters.data_arrivals += 1;
                self.core.copies.delivered(p.flow as usize, p.seq);
                let fl = &mut self.core.flows[p.flow as usize];
                if p.seq + 1 < fl.highest_arrived {
                    fl.out_of_order += 1;
                    self.core.counters.out_of_order += 1;
                }
                fl.highest_arrived = fl.highest_arrived.max(p.seq + 1);
            }
            Some(p)
        } else {
            // Plain layered routing, decided here once, has its own copy of the hop.
            if self.layered {
                self.forward::<true>(pkt, node, port);
            } else {
                self.forward_routed(pkt, node, port);
            }
            None
        }
    }

    /// `forward` for a routing scheme that decides intermediates and channels, out of the
    /// event loop's code.
    #[inline(never)]
    fn forward_routed(&mut self, pkt: u32, switch: u32, in_port: u32) {
        self.forward::<false>(pkt, switch, in_port);
    }

    /// `LAYERED`: plain layered routing (`layered`), which never sends a packet
    /// via an intermediate and never watches queues.
    #[inline(always)]
    fn forward<const LAYERED: bool>(&mut self, pkt: u32, switch: u32, in_port: u32) {
        // The fields this hop reads, not the whole packet: a copy of it cost more than them.
        let slot = &self.core.packets[pkt];
        let (packet_layer, dst, plane, entropy, is_data) = (
            slot.pkt.layer,
            slot.pkt.dst,
            slot.pkt.plane,
            slot.pkt.entropy,
            slot.pkt.kind == PacketKind::Data,
        );
        // The tag's fields one by one, and written back only where they change: a copy of the
        // whole tag in and out cost about 20 instructions per hop.
        let (tag_via, tag_prio, tag_hops) =
            (slot.tag.route.via, slot.tag.prio, slot.tag.route.hops);
        debug_assert_eq!(LAYERED, self.layered);
        // Plain layered routing never sets an intermediate (only `inject` does): it heads for
        // the destination's switch, and its tags keep `NO_VIA`.
        debug_assert!(!LAYERED || tag_via == NO_VIA);
        let mut via = if LAYERED { NO_VIA } else { tag_via };
        let layer = if LAYERED {
            packet_layer
        } else {
            self.routing.layer(packet_layer)
        };
        let dst_switch = self.host_switch(dst, plane);
        // Plain layered routing never sends a packet via an intermediate.
        if !LAYERED && in_port >= 2 * self.core.n_links && dst_switch != switch {
            let view = InjectView {
                fib: &self.fib,
                layer: layer as usize,
                queues: &self.queues,
                buffer: self.queue_cap_bytes,
            };
            let at = Injection {
                switch,
                target: dst_switch,
                entropy,
                flow: self.core.packets[pkt].pkt.flow,
                now: self.core.now,
            };
            via = self.routing.inject(&view, at);
            self.core.counters.indirect_packets += (via != NO_VIA) as u64;
        }
        if !LAYERED && via == switch {
            via = NO_VIA;
        }
        let target = if LAYERED || via == NO_VIA {
            dst_switch
        } else {
            via
        };
        let out = if target == switch {
            self.host_facing_port(dst, plane)
        } else {
            let cands = self
                .fib
                .candidates(layer as usize, switch as usize, target as usize);
            match cands.len() {
                0 => {
                    self.core.counters.unroutable += 1;
                    self.lose(pkt);
                    return;
                }
                1 => cands[0],
                n => {
                    // Mixed-radix walk: each multi-way switch consumes one digit of the entropy,
                    // so a counter as entropy enumerates every combination of choices (all
                    // equal-cost paths) and a constant one pins a single path.
                    let n = n as u32;
                    let pick = cands[(entropy % n) as usize];
                    self.core.packets[pkt].pkt.entropy = entropy / n;
                    pick
                }
            }
        };
        let to_switch = out < 2 * self.core.n_links;
        // A hop towards a switch takes its layer's channel; the last one, to a host, keeps it.
        let next_prio = if to_switch {
            self.core.counters.data_hops += is_data as u64;
            self.channel(packet_layer, tag_hops)
        } else {
            tag_prio
        };
        let slot = &mut self.core.packets[pkt];
        let tag = &mut slot.tag;
        if !LAYERED && via != tag_via {
            tag.route.via = via;
        }
        tag.ingress = in_port;
        tag.in_prio = tag_prio;
        tag.prio = next_prio;
        tag.route.hops = tag_hops.saturating_add(to_switch as u8);
        if !LAYERED && self.watch_queues && is_data && to_switch {
            let (flow, size) = (slot.pkt.flow, slot.pkt.size);
            let queued = self.port_bytes(out) + size as u64;
            let to = self.core.ports[out].to;
            self.routing
                .on_queued(flow, switch, to, queued, self.core.now);
        }
        self.enqueue::<false>(out, pkt);
    }

    /// The virtual channel of a packet of `layer` about to take its hop number `hops`.
    #[inline]
    fn channel(&self, layer: u8, hops: u8) -> u8 {
        if self.layered {
            self.layer_channels[layer as usize]
        } else {
            self.routing.channel(layer, hops)
        }
    }

    /// Bytes waiting in `port`'s queues, every priority.
    fn port_bytes(&self, port: u32) -> u64 {
        self.queues.queued_bytes(port)
    }

    /// Accounts for a packet that leaves the network without being delivered.
    fn lose(&mut self, pkt: u32) {
        self.split().1.lose(pkt);
    }

    /// The queues, and the rest of the datapath as what their discipline acts on.
    #[inline]
    fn split(&mut self) -> (&mut Queues, &mut Core) {
        (&mut self.queues, &mut self.core)
    }

    /// Hands packet `pkt` to `port`: on the wire at once if the port is idle and its
    /// discipline lets it, else to the discipline.
    ///
    /// `NIC`: the port is a host's NIC (`send_from_host`) rather than a switch's port
    /// (`forward`). The callers know, and a test of the port's number on every packet cost
    /// about 4 instructions.
    #[inline]
    fn enqueue<const NIC: bool>(&mut self, port: u32, pkt: u32) {
        debug_assert_eq!(NIC, is_nic(port, self.core.n_links));
        let planes = self.planes as usize;
        let (queues, fx) = self.split();
        // One dispatch per packet: the port's whole handling is compiled per discipline.
        with_discipline!(queues, q => fx.offer::<_, NIC>(q, port, pkt, planes));
    }

    /// `nic`: the port is a host's NIC, as its departure event says (`EventKind::TxDone`):
    /// the event's operand saves testing the port's number on every departure.
    fn tx_done(&mut self, port: u32, nic: bool) {
        debug_assert_eq!(nic, is_nic(port, self.core.n_links));
        let (queues, fx) = self.split();
        if nic {
            with_discipline!(queues, q => fx.serve::<_, true>(q, port));
        } else {
            with_discipline!(queues, q => fx.serve::<_, false>(q, port));
        }
    }

    fn pfc_frame(&mut self, frame: PfcFrame) {
        let (queues, fx) = self.split();
        let pfc = queues.lossless_mut().expect("lossless run");
        if pfc.apply(frame) {
            fx.wake(pfc, frame.port);
        }
    }

    // ---- flows ---------------------------------------------------------------------------

    fn flow_finished_at_receiver(&mut self, f: usize) {
        if self.core.flows[f].finish == NO_TIME {
            self.core.flows[f].finish = self.core.now;
            self.core.counters.flows_finished += 1;
            let next = self.core.flows[f].successor;
            if next != NO_FLOW {
                // The chained flow's `start` was its delay after this one; now it is a time.
                let fl = &mut self.core.flows[next as usize];
                fl.waiting = false;
                fl.start += self.core.now;
                self.core
                    .events
                    .push(fl.start, EventKind::FlowStart, next, 0);
            }
            self.release_phase(f);
        }
    }

    /// The barrier: when `f` was the last flow of its phase, the next phase's flows start,
    /// each its `start` (a delay until now) later.
    fn release_phase(&mut self, f: usize) {
        let Some(phases) = self.phases.as_mut() else {
            return;
        };
        for &next in phases.finished(f) {
            let fl = &mut self.core.flows[next as usize];
            fl.waiting = false;
            fl.start += self.core.now;
            self.core
                .events
                .push(fl.start, EventKind::FlowStart, next, 0);
        }
    }
}

impl Host for Datapath {
    #[inline]
    fn now(&self) -> Time {
        self.core.now
    }

    #[inline]
    fn config(&self) -> &SimConfig {
        &self.cfg
    }

    #[inline]
    fn n_packets(&self, flow: usize) -> u32 {
        self.core.flows[flow].n_packets
    }

    #[inline]
    fn endpoints(&self, flow: usize) -> (u32, u32) {
        (self.core.flows[flow].src, self.core.flows[flow].dst)
    }

    #[inline]
    fn received_all(&self, flow: usize) -> bool {
        self.core.flows[flow].finish != NO_TIME
    }

    #[inline]
    fn sender_done(&self, flow: usize) -> bool {
        self.core.flows[flow].sender_done != NO_TIME
    }

    fn finish_at_receiver(&mut self, flow: usize) {
        self.flow_finished_at_receiver(flow);
    }

    fn finish_at_sender(&mut self, flow: usize) {
        self.core.flows[flow].sender_done = self.core.now;
        self.core.copies.release(flow);
    }

    #[inline]
    fn waiting_at_source(&self, flow: usize, seq: u32) -> bool {
        self.core.copies.waiting_at_source(flow, seq)
    }

    #[inline]
    fn departed_at(&self, flow: usize, seq: u32) -> Time {
        self.core.copies.departed_at(flow, seq)
    }

    #[inline]
    fn send_data(&mut self, flow: usize, seq: u32, is_rtx: bool) {
        self.transmit_data(flow, seq, is_rtx);
    }

    #[inline]
    fn send(&mut self, host: u32, packet: Packet) {
        let pkt = self.alloc_packet(packet);
        self.send_from_host(host, pkt);
    }

    #[inline]
    fn feedback_path(&mut self, flow: usize, data_layer: u8) -> (u8, u32) {
        Datapath::feedback_path(self, flow, data_layer)
    }

    #[inline]
    fn current_layer(&self, flow: usize) -> u8 {
        self.core.flows[flow].layer
    }

    fn layer_signal(&mut self, flow: usize, layer: u8, signal: LayerSignal) {
        Datapath::layer_signal(self, flow, layer, signal);
    }

    #[inline]
    fn count_delivered(&mut self, packet: &Packet) {
        let payload = self.payload_of(packet);
        self.core.counters.payload_delivered += payload;
        self.core.flows[packet.flow as usize].delivered += payload;
    }

    #[inline]
    fn count_duplicate(&mut self, packet: &Packet) {
        self.core.counters.payload_duplicate += self.payload_of(packet);
    }

    fn count_timeout(&mut self) {
        self.core.counters.timeouts += 1;
    }

    #[inline]
    fn set_timer(&mut self, at: Time, operand: u32) {
        self.core.events.push(at, EventKind::Timer, operand, 0);
    }

    #[inline]
    fn nic_serialisation(&self, host: u32, bytes: u32) -> Time {
        self.core.ports[self.host_nic_port(host, 0)].serialisation(bytes)
    }

    #[inline]
    fn planes(&self) -> u8 {
        self.planes as u8
    }

    #[inline]
    fn plane(&self, flow: usize) -> u8 {
        self.core.flows[flow].plane
    }

    #[inline]
    fn send_subflow_data(&mut self, flow: usize, seq: u32, is_rtx: bool, path: SubflowPath) {
        let fl = &mut self.core.flows[flow];
        fl.last_send = self.core.now;
        fl.layers_used |= 1u64 << (path.layer as u32).min(63);
        self.transmit_on(flow, seq, is_rtx, path);
    }
}

/// Links each flow of `after` to the flow it waits for.
fn chain_flows(records: &mut [FlowRecord], after: &[u32]) -> Result<(), String> {
    if after.is_empty() {
        return Ok(());
    }
    if after.len() != records.len() {
        return Err("after needs one entry per flow".into());
    }
    for (i, &a) in after.iter().enumerate() {
        if a == NO_FLOW {
            continue;
        }
        if a as usize >= records.len() || a as usize == i {
            return Err(format!(
                "flow {i}: waits for flow {a}, which does not exist"
            ));
        }
        if records[a as usize].successor != NO_FLOW {
            return Err(format!("flow {a}: more than one flow waits for it"));
        }
        records[a as usize].successor = i as u32;
        records[i].waiting = true;
    }
    Ok(())
}

/// The plane of every flow, under `choice`. Round robin goes through each source's flows in
/// start order (chained flows after the rest, in index order).
fn choose_planes(records: &mut [FlowRecord], spec: &NetworkSpec, choice: PlaneChoice) {
    let planes = spec.n_planes();
    if planes == 1 {
        return;
    }
    let nr = spec.n_switches;
    let attach = |h: u32, p: usize| spec.host_switch[h as usize * planes + p] as usize;
    match choice {
        PlaneChoice::Hash => {
            for fl in records.iter_mut() {
                fl.plane = (hash32(fl.entropy ^ 0x91A2_E5C3) % planes as u32) as u8;
            }
        }
        PlaneChoice::RoundRobin => {
            let mut order: Vec<usize> = (0..records.len()).collect();
            order.sort_by_key(|&i| (records[i].waiting, records[i].start, i));
            let mut next = vec![0usize; spec.n_hosts()];
            for i in order {
                let cursor = &mut next[records[i].src as usize];
                records[i].plane = (*cursor % planes) as u8;
                *cursor += 1;
            }
        }
        PlaneChoice::FewestHops => {
            for fl in records.iter_mut() {
                let hops: Vec<u8> = (0..planes)
                    .map(|p| spec.dist[attach(fl.src, p) * nr + attach(fl.dst, p)])
                    .collect();
                let fewest = *hops.iter().min().expect("at least two planes");
                if fewest == UNREACHABLE {
                    continue;
                }
                let tied: Vec<usize> = (0..planes).filter(|&p| hops[p] == fewest).collect();
                fl.plane = tied[(hash32(fl.entropy) % tied.len() as u32) as usize] as u8;
            }
        }
    }
}

/// Rejects routing and priority settings the fabric cannot honour.
fn check_routing(cfg: &SimConfig, spec: &NetworkSpec) -> Result<(), String> {
    let too_high = |c: u8| c as usize >= PRIORITIES;
    if cfg.channels == 0 || cfg.channels as usize > PRIORITIES {
        return Err(format!("channels must lie in 1..={PRIORITIES}"));
    }
    if cfg.layer_priority.iter().any(|&c| too_high(c)) {
        return Err(format!("layer priorities must lie in 0..{PRIORITIES}"));
    }
    if cfg.routing.minimal_layer_only() && spec.layer_links[..spec.n_links()].contains(&0) {
        return Err("MIN, INR and UGAL-L need layer 1 to hold every link".into());
    }
    if cfg.lossless && cfg.pfc_xoff_bytes < (cfg.mtu + cfg.header) as u64 {
        return Err("the PFC xoff threshold must hold at least one packet".into());
    }
    Ok(())
}

/// The injecting switch's view for the routing scheme: candidates and local queue occupancy.
struct InjectView<'a> {
    fib: &'a ForwardingTable,
    layer: usize,
    queues: &'a Queues,
    buffer: u64,
}

impl SwitchView for InjectView<'_> {
    fn port_for(&self, switch: u32, target: u32, entropy: u32) -> Option<u32> {
        let cands = self
            .fib
            .candidates(self.layer, switch as usize, target as usize);
        (!cands.is_empty()).then(|| cands[(entropy % cands.len() as u32) as usize])
    }

    fn queued_bytes(&self, port: u32) -> u64 {
        self.queues.queued_bytes(port)
    }

    fn buffer_bytes(&self) -> u64 {
        self.buffer
    }
}

/// The datapath as a queue discipline acts on it: losing, trimming and marking packets (with
/// their accounting), its random numbers, and PFC frames; and what a port's sending uses.
///
/// Its own struct, so that `Datapath::split` lends the queues and the rest as two pointers.
/// It was a struct of a reference per field, built for every packet a port took and for every
/// departure: about 10 instructions each, 140 M on the k=16 benchmark (3% of the run).
struct Core {
    /// Packets in flight, each with its tag in one cache line (an arrival reads both).
    packets: Arena,
    free_packets: Vec<u32>,
    flows: Vec<FlowRecord>,
    counters: Counters,
    /// Where every data packet's copies are (source NIC, network, delivered).
    copies: CopyLedger,
    rng: SimRng,
    events: EventQueue,
    ports: PortTable<PortSpec>,
    now: Time,
    /// `SimConfig::header`, beside what uses it on every trim.
    header: u32,
    n_links: u32,
}

/// Whether `port` is a host's NIC (host -> switch).
#[inline]
fn is_nic(port: u32, n_links: u32) -> bool {
    port >= 2 * n_links && (port - 2 * n_links).is_multiple_of(2)
}

/// A port's sending, generic over its discipline so that each discipline gets its own copy.
impl Core {
    /// The number of NIC port `port`: NICs are numbered host by host and plane by plane.
    #[inline(always)]
    fn nic_index(&self, port: u32) -> usize {
        ((port - 2 * self.n_links) / 2) as usize
    }

    /// Packet `pkt` reaches `port`'s queue.
    #[inline(always)]
    fn offer<Q: QueueDiscipline, const NIC: bool>(
        &mut self,
        q: &mut Q,
        port: u32,
        pkt: u32,
        planes: usize,
    ) {
        // What an idle port needs first; the rest of the packet only if it has to wait.
        let slot = &self.packets[pkt];
        let (size, prio) = (slot.pkt.size, slot.tag.prio);
        if q.transmitter(port).busy_until <= self.now && q.may_bypass(port, prio) {
            q.bypassed(port, size);
            self.transmit(q, port, Queued { pkt, size }, NIC);
            return;
        }
        let Slot { pkt: p, tag } = self.packets[pkt];
        let nic = NIC.then(|| self.nic_index(port));
        let arrival = Arrival {
            pkt,
            size: p.size,
            control: p.kind != PacketKind::Data || p.flags & flags::TRIMMED != 0,
            nic: nic.map(|nic| NicLane {
                nic,
                lane: p.flow as usize * planes + p.plane as usize,
            }),
            prio: tag.prio,
            ingress: tag.ingress,
            in_prio: tag.in_prio,
        };
        let fate = q.enqueue(port, arrival, self);
        // A lossy port sends whatever it kept (and one that dropped the arrival either holds
        // packets, with a departure scheduled, or holds none); PFC may hold packets back.
        let ready = if Q::HOLDS_BACK {
            q.ready(port)
        } else {
            fate != Fate::Dropped
        };
        let tx = q.transmitter_mut(port);
        if ready && !tx.wake_pending {
            tx.wake_pending = true;
            let at = tx.busy_until.max(self.now);
            self.events.push(at, EventKind::TxDone, port, NIC as u32);
        }
    }

    /// `port` is free to send its next packet; `NIC`: it is a host's NIC.
    #[inline(always)]
    fn serve<Q: QueueDiscipline, const NIC: bool>(&mut self, q: &mut Q, port: u32) {
        let nic = NIC.then(|| self.nic_index(port));
        let Some(next) = q.dequeue(port, nic, self) else {
            q.transmitter_mut(port).wake_pending = false;
            return;
        };
        self.transmit(q, port, next, nic.is_some());
        // `wake` without its checks: this departure's event is the one pending, and the port
        // is busy from now on. Its flag stays set while a next departure is scheduled.
        let ready = q.ready(port);
        let tx = q.transmitter_mut(port);
        tx.wake_pending = ready;
        if ready {
            self.events
                .push(tx.busy_until, EventKind::TxDone, port, NIC as u32);
        }
    }

    /// Puts `entry` on `port`'s wire; `from_nic`: the port is a host's NIC (the caller knows).
    #[inline(always)]
    fn transmit<Q: QueueDiscipline>(
        &mut self,
        q: &mut Q,
        port: u32,
        entry: Queued,
        from_nic: bool,
    ) {
        let spec = self.ports[port];
        let ser = spec.serialisation(entry.size);
        let pkt = entry.pkt;
        let done = self.now + ser;
        q.transmitter_mut(port).busy_until = done;
        if from_nic {
            self.left_source(pkt);
        }
        self.events
            .push(done + spec.latency, EventKind::Arrive, pkt, port);
    }

    /// A packet starts serialisation at its source NIC: from now on it can be lost.
    #[inline(always)]
    fn left_source(&mut self, pkt: u32) {
        let p = &self.packets[pkt].pkt;
        if p.kind == PacketKind::Data {
            let (flow, seq) = (p.flow as usize, p.seq);
            self.copies.departed(flow, seq, self.now);
        }
    }

    /// Schedules the next departure of `port` if it has something it may send. A port that
    /// holds packets always has one scheduled, unless its discipline holds them back (PFC).
    #[inline(always)]
    fn wake<Q: QueueDiscipline>(&mut self, q: &mut Q, port: u32) {
        let ready = q.ready(port);
        let tx = q.transmitter_mut(port);
        if ready && !tx.wake_pending {
            tx.wake_pending = true;
            let at = tx.busy_until.max(self.now);
            let nic = is_nic(port, self.n_links);
            self.events.push(at, EventKind::TxDone, port, nic as u32);
        }
    }
}

impl Effects for Core {
    #[inline(always)]
    fn rng(&mut self) -> &mut SimRng {
        &mut self.rng
    }

    #[inline(always)]
    fn lose(&mut self, pkt: u32) {
        let p = self.packets[pkt].pkt;
        match p.kind {
            PacketKind::Data if p.flags & flags::TRIMMED != 0 => self.counters.header_drops += 1,
            PacketKind::Data => {
                self.counters.data_drops += 1;
                self.counters.payload_dropped += (p.size - self.header) as u64;
                self.copies.lost(p.flow as usize, p.seq);
            }
            _ => self.counters.control_drops += 1,
        }
        self.flows[p.flow as usize].drops += 1;
        self.free_packets.push(pkt);
    }

    #[inline(always)]
    fn trim(&mut self, pkt: u32) {
        let header = self.header;
        let p = &mut self.packets[pkt].pkt;
        let payload = (p.size - header) as u64;
        p.size = header;
        p.flags |= flags::TRIMMED;
        let (flow, seq) = (p.flow as usize, p.seq);
        self.copies.lost(flow, seq);
        self.counters.trims += 1;
        self.counters.payload_trimmed += payload;
        self.flows[flow].trims += 1;
    }

    #[inline(always)]
    fn mark(&mut self, pkt: u32) {
        self.packets[pkt].pkt.flags |= flags::ECN_CE;
        self.counters.ecn_marks += 1;
    }

    /// Sends a PAUSE or RESUME back over the link that `frame.port` feeds.
    #[inline(always)]
    fn pfc_frame(&mut self, frame: PfcFrame) {
        let at = self.now + self.ports[frame.port].latency;
        self.events
            .push(at, EventKind::Pfc, frame.port, frame.operand());
    }
}
