//! Output queues: one discipline per run, each its own type, split as htsim splits its queues.
//!
//! - `droptail`: drop-tail, and drop-front (the oldest waiting packets go to make room);
//! - `red`: random early drop on the instantaneous queue (htsim's `randomqueue`);
//! - `ecn`: ECN marking above a threshold, wrapped around any lossy discipline (`ecnqueue`);
//! - `ndp_trim`: NDP's trimming queue with a priority lane for headers (`compositequeue`);
//! - `lossless`: PFC per priority (`queue_lossless`).
//!
//! The lossy disciplines differ only in what happens to a packet arriving at a switch port: each
//! is a `fifos::SwitchPolicy`, and `fifos::Lossy` (a `QueueDiscipline`, as PFC's queues are)
//! holds the packets they all share (a data and a priority FIFO per port, in `ring` buffers,
//! and the hosts' per-flow lanes from `nic`), so that a departure is the same code whatever
//! the policy. Each port's `Transmitter` (when it is busy until) lives
//! beside its queue, so that a packet's arrival reads both from one place; the engine drives
//! it and asks the discipline only for what to queue and what to send next.
//!
//! `Queues` picks the discipline once from the run's configuration: the lossy FIFOs under a
//! `Policy`, or PFC. The engine matches on it once per packet offered to a port and once per
//! departure (`with_discipline!`), around code compiled for each of the two; a lossy arrival
//! that has to wait matches once more, on its policy. No call per packet goes through a
//! vtable.

pub mod droptail;
pub mod ecn;
pub mod fifos;
pub mod lossless;
pub mod ndp_trim;
pub mod nic;
pub mod red;
pub mod ring;
#[cfg(test)]
mod tests;

use super::config::{DropPolicy, SimConfig};
use super::network::PortSpec;
use super::packet::Time;
use super::random::SimRng;

use droptail::{DropFront, DropTail};
use ecn::Ecn;
use fifos::{Lossy, PortFifos, SwitchPolicy};
use lossless::{PfcFrame, PfcQueues};
use ndp_trim::NdpTrim;
use red::Red;

/// A queue entry carries the packet's size so that serving a queue never has to touch the
/// packet itself (the arena is large and cold; the queue's ring buffer is hot).
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub pkt: u32,
    pub size: u32,
}

/// What the engine records of a port's sending.
#[derive(Clone, Copy, Debug, Default)]
pub struct Transmitter {
    pub busy_until: Time,
    /// A `TxDone` is scheduled for the port.
    pub wake_pending: bool,
}

/// Asks the CPU to start loading the cache line at `ptr` (a hint: it never faults).
#[inline(always)]
fn prefetch_address(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching is a hint and never faults, even for an address out of range.
        unsafe { _mm_prefetch(ptr as *const i8, _MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Asks the CPU to start loading `items[i]` (a hint: it never faults, whatever `i`).
#[inline(always)]
pub fn prefetch<T>(items: &[T], i: u32) {
    prefetch_address(items.as_ptr().wrapping_add(i as usize) as *const u8);
}

/// `prefetch` for every cache line of `items[i]`.
#[inline(always)]
pub fn prefetch_lines<T>(items: &[T], i: u32) {
    let ptr = items.as_ptr().wrapping_add(i as usize) as *const u8;
    for line in (0..std::mem::size_of::<T>()).step_by(64) {
        prefetch_address(ptr.wrapping_add(line));
    }
}

/// A packet arriving at a port, as much of it as a discipline decides on.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub pkt: u32,
    pub size: u32,
    /// A control packet or a trimmed header (served first where there is a priority lane).
    pub control: bool,
    /// At a host's NIC: which NIC, and the packet's lane there (its flow and plane).
    pub nic: Option<NicLane>,
    /// Priority (virtual channel) of the hop the packet is queued for.
    pub prio: u8,
    /// Port the packet arrived over at this switch, and the priority it arrived with.
    pub ingress: u32,
    pub in_prio: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct NicLane {
    pub nic: usize,
    pub lane: usize,
}

/// Where an arrival ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// At the tail of a switch port's data FIFO (what ECN marking looks at).
    Data,
    /// In a priority FIFO, a NIC's lane or a PFC queue.
    Held,
    /// Lost.
    Dropped,
    /// Its payload, or that of the packet it displaced, was cut to a header.
    Trimmed,
}

/// What a discipline may do to packets beyond queuing them; the datapath does the accounting.
pub trait Effects {
    fn rng(&mut self) -> &mut SimRng;
    /// The packet leaves the network undelivered.
    fn lose(&mut self, pkt: u32);
    /// Cuts the packet's payload: it goes on as a header.
    fn trim(&mut self, pkt: u32);
    /// Sets congestion experienced.
    fn mark(&mut self, pkt: u32);
    /// Sends a PAUSE or RESUME upstream.
    fn pfc_frame(&mut self, frame: PfcFrame);
}

/// A port's queue discipline. The engine calls `enqueue` only for a packet that cannot go on
/// the wire at once (the port is sending, or already holds packets, or may not send it).
pub trait QueueDiscipline {
    /// Whether the discipline may keep a port from sending what it holds (PFC's pauses): if
    /// not, a port sends every packet it did not drop.
    const HOLDS_BACK: bool;
    fn transmitter(&self, port: u32) -> &Transmitter;
    fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter;
    /// Starts loading what serving `port` reads first.
    fn prefetch(&self, port: u32);
    /// Whether a packet with priority `prio` may skip the queue of `port`, whose transmitter is
    /// idle: nothing is waiting that it would overtake, and nothing holds it back.
    fn may_bypass(&self, port: u32, prio: u8) -> bool;
    /// A packet skipped the queue and went on the wire.
    fn bypassed(&mut self, port: u32, size: u32);
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate;
    /// The next packet `port` sends (`nic`: the NIC it is, if a host's).
    fn dequeue(&mut self, port: u32, nic: Option<usize>, fx: &mut impl Effects) -> Option<Queued>;
    /// Whether `port` holds a packet it may send now.
    fn ready(&self, port: u32) -> bool;
    /// Bytes waiting at `port`, every lane and priority.
    fn queued_bytes(&self, port: u32) -> u64;
    /// Packets in the data FIFO of switch port `port`.
    fn data_packets(&self, port: u32) -> usize;
}

/// The arrival policy of a lossy run, picked once; one variant per type (and per type under
/// ECN marking).
pub enum Policy {
    DropTail(DropTail),
    DropFront(DropFront),
    Red(Red),
    NdpTrim(NdpTrim),
    EcnDropTail(Ecn<DropTail>),
    EcnDropFront(Ecn<DropFront>),
    EcnRed(Ecn<Red>),
    EcnNdpTrim(Ecn<NdpTrim>),
}

impl SwitchPolicy for Policy {
    /// The one `match` of a lossy arrival that cannot go on the wire at once, around the
    /// policy's decision compiled per type.
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        match self {
            Policy::DropTail(p) => p.admit(fifos, port, a, fx),
            Policy::DropFront(p) => p.admit(fifos, port, a, fx),
            Policy::Red(p) => p.admit(fifos, port, a, fx),
            Policy::NdpTrim(p) => p.admit(fifos, port, a, fx),
            Policy::EcnDropTail(p) => p.admit(fifos, port, a, fx),
            Policy::EcnDropFront(p) => p.admit(fifos, port, a, fx),
            Policy::EcnRed(p) => p.admit(fifos, port, a, fx),
            Policy::EcnNdpTrim(p) => p.admit(fifos, port, a, fx),
        }
    }
}

/// The run's queues: the lossy FIFOs under an arrival policy, or PFC's queues.
pub enum Queues {
    Lossy(Lossy<Policy>),
    Lossless(PfcQueues),
}

/// Runs `$body` with `$q` bound to the discipline inside `$queues`: the one `match` of a call,
/// around code compiled once for the lossy FIFOs and once for PFC.
macro_rules! with_discipline {
    ($queues:expr, $q:ident => $body:expr) => {
        match $queues {
            Queues::Lossy($q) => $body,
            Queues::Lossless($q) => $body,
        }
    };
}

pub(crate) use with_discipline;

impl Queues {
    /// The discipline `cfg` asks for: PFC if lossless, else trimming if the transport trims,
    /// else its drop policy; ECN marking on top of a lossy one if it has a threshold.
    pub fn for_config(
        cfg: &SimConfig,
        ports: &[PortSpec],
        trimming: bool,
        n_lanes: usize,
        n_nics: usize,
    ) -> Self {
        if cfg.lossless {
            return Queues::Lossless(PfcQueues::new(
                ports,
                cfg.pfc_xoff_bytes,
                cfg.pfc_xon_bytes,
                cfg.mtu + cfg.header,
            ));
        }
        let cap = cfg.queue_packets as u64 * cfg.mtu as u64;
        let fifos = PortFifos::new(ports.len(), cap, n_lanes, n_nics);
        let marking = cfg.ecn_threshold_packets;
        let ecn = marking > 0;
        let policy = match (trimming, cfg.drop_policy) {
            (true, _) => {
                let trim = NdpTrim::new(cfg.header);
                if ecn {
                    Policy::EcnNdpTrim(Ecn::new(trim, marking))
                } else {
                    Policy::NdpTrim(trim)
                }
            }
            (false, DropPolicy::Tail) if ecn => Policy::EcnDropTail(Ecn::new(DropTail, marking)),
            (false, DropPolicy::Tail) => Policy::DropTail(DropTail),
            (false, DropPolicy::Front) if ecn => Policy::EcnDropFront(Ecn::new(DropFront, marking)),
            (false, DropPolicy::Front) => Policy::DropFront(DropFront),
            (false, DropPolicy::Red) => {
                let red = Red::new(cfg.red_min_packets, cfg.queue_packets);
                if ecn {
                    Policy::EcnRed(Ecn::new(red, marking))
                } else {
                    Policy::Red(red)
                }
            }
        };
        Queues::Lossy(Lossy::new(fifos, policy))
    }

    /// The PFC queues of a lossless run.
    pub fn lossless(&self) -> Option<&PfcQueues> {
        match self {
            Queues::Lossless(q) => Some(q),
            _ => None,
        }
    }

    pub fn lossless_mut(&mut self) -> Option<&mut PfcQueues> {
        match self {
            Queues::Lossless(q) => Some(q),
            _ => None,
        }
    }
}

impl QueueDiscipline for Queues {
    const HOLDS_BACK: bool = true;

    #[inline]
    fn transmitter(&self, port: u32) -> &Transmitter {
        with_discipline!(self, q => q.transmitter(port))
    }

    #[inline]
    fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter {
        with_discipline!(self, q => q.transmitter_mut(port))
    }

    #[inline]
    fn prefetch(&self, port: u32) {
        with_discipline!(self, q => q.prefetch(port))
    }

    #[inline]
    fn may_bypass(&self, port: u32, prio: u8) -> bool {
        with_discipline!(self, q => q.may_bypass(port, prio))
    }

    #[inline]
    fn bypassed(&mut self, port: u32, size: u32) {
        with_discipline!(self, q => q.bypassed(port, size))
    }

    #[inline]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        with_discipline!(self, q => q.enqueue(port, a, fx))
    }

    #[inline]
    fn dequeue(&mut self, port: u32, nic: Option<usize>, fx: &mut impl Effects) -> Option<Queued> {
        with_discipline!(self, q => q.dequeue(port, nic, fx))
    }

    #[inline]
    fn ready(&self, port: u32) -> bool {
        with_discipline!(self, q => q.ready(port))
    }

    #[inline]
    fn queued_bytes(&self, port: u32) -> u64 {
        with_discipline!(self, q => q.queued_bytes(port))
    }

    #[inline]
    fn data_packets(&self, port: u32) -> usize {
        with_discipline!(self, q => q.data_packets(port))
    }
}
