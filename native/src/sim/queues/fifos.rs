//! The packets of a lossy run's ports: per port a data FIFO and a priority FIFO, and at hosts'
//! NICs the per-flow lanes of `nic::HostQueues` instead of the data FIFO. Every lossy
//! discipline keeps its packets here and treats hosts' NICs alike; they differ in what a switch
//! port does with an arrival (`SwitchPolicy::admit`).

use super::super::network::PortTable;
use super::nic::HostQueues;
use super::ring::Ring;
use super::{Arrival, Fate, NicLane, QueueDiscipline, Queued, Transmitter};

/// Two cache lines (`prefetch` loads both). The first holds what a packet that finds the port
/// idle reads (the transmitter and both byte counts: it goes straight onto the wire) and the
/// priority FIFO a departure tries first; the data FIFO is in the second. The port a packet is
/// forwarded to is known only once its hop is chosen, too late to prefetch, so the first line
/// is a miss the second need not add.
#[derive(Default)]
#[repr(C, align(64))]
pub struct Fifos {
    pub tx: Transmitter,
    /// Bytes in `low`, or at a NIC in its lanes.
    pub low_bytes: u64,
    pub high_bytes: u64,
    /// Control packets and trimmed headers, served first: at hosts' NICs for every transport
    /// (as htsim's host queue), at switches for NDP.
    pub high: Ring<Queued>,
    /// Data packets (a host's NIC keeps them in its lanes instead); at switches that trim
    /// nothing, control packets too.
    pub low: Ring<Queued>,
}

const _: () = assert!(std::mem::offset_of!(Fifos, low) == 64);

pub struct PortFifos {
    ports: PortTable<Fifos>,
    /// Data waiting at hosts' NICs, one lane per flow and plane, served round robin.
    host: HostQueues<Queued>,
    /// Bytes a switch port's data FIFO holds at most.
    pub cap: u64,
}

impl PortFifos {
    pub fn new(n_ports: usize, cap: u64, n_lanes: usize, n_nics: usize) -> Self {
        PortFifos {
            ports: PortTable::new((0..n_ports).map(|_| Fifos::default()).collect()),
            host: HostQueues::new(n_lanes, n_nics),
            cap,
        }
    }

    #[inline(always)]
    pub fn transmitter(&self, port: u32) -> &Transmitter {
        &self.ports[port].tx
    }

    #[inline(always)]
    pub fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter {
        &mut self.ports[port].tx
    }

    #[inline(always)]
    pub fn prefetch(&self, port: u32) {
        super::prefetch_lines(self.ports.as_slice(), port);
    }

    #[inline(always)]
    pub fn port(&mut self, port: u32) -> &mut Fifos {
        &mut self.ports[port]
    }

    #[inline(always)]
    pub fn is_empty(&self, port: u32) -> bool {
        let f = &self.ports[port];
        f.low_bytes == 0 && f.high_bytes == 0
    }

    #[inline(always)]
    pub fn queued_bytes(&self, port: u32) -> u64 {
        let f = &self.ports[port];
        f.low_bytes + f.high_bytes
    }

    #[inline(always)]
    pub fn data_packets(&self, port: u32) -> usize {
        self.ports[port].low.len()
    }

    /// Whether `size` more bytes fit into `port`'s data FIFO.
    #[inline(always)]
    pub fn fits(&self, port: u32, size: u32) -> bool {
        self.ports[port].low_bytes + size as u64 <= self.cap
    }

    /// At a host's NIC every packet is kept: control packets in the priority FIFO, data in its
    /// flow's lane (the host's memory is not the switch buffer).
    #[inline(always)]
    pub fn hold_at_nic(&mut self, port: u32, at: NicLane, a: &Arrival) -> Fate {
        let entry = Queued {
            pkt: a.pkt,
            size: a.size,
        };
        let f = &mut self.ports[port];
        if a.control {
            f.high.push_back(entry);
            f.high_bytes += a.size as u64;
        } else {
            self.host.push(at.nic, at.lane, entry);
            f.low_bytes += a.size as u64;
        }
        Fate::Held
    }

    /// Appends `entry` to `port`'s data FIFO (the caller checked that it fits).
    #[inline(always)]
    pub fn push_data(&mut self, port: u32, entry: Queued) -> Fate {
        let f = &mut self.ports[port];
        f.low.push_back(entry);
        f.low_bytes += entry.size as u64;
        Fate::Data
    }

    /// Appends `entry` to switch port `port`'s priority FIFO, which holds twice the data FIFO's
    /// bytes; returns false (the caller loses it) if it is full.
    #[inline(always)]
    pub fn push_priority(&mut self, port: u32, entry: Queued) -> bool {
        let size = entry.size as u64;
        let f = &mut self.ports[port];
        if f.high_bytes + size > 2 * self.cap {
            return false;
        }
        f.high.push_back(entry);
        f.high_bytes += size;
        true
    }

    /// The next packet `port` sends: the priority FIFO first, then the NIC's lanes or the data
    /// FIFO.
    #[inline(always)]
    pub fn pop(&mut self, port: u32, nic: Option<usize>) -> Option<Queued> {
        let f = &mut self.ports[port];
        if let Some(e) = f.high.pop_front() {
            f.high_bytes -= e.size as u64;
            return Some(e);
        }
        let e = match nic {
            Some(nic) => self.host.pop(nic)?,
            None => f.low.pop_front()?,
        };
        f.low_bytes -= e.size as u64;
        Some(e)
    }
}

/// What a lossy discipline decides: where a packet arriving at a switch port goes (its data
/// FIFO or its priority FIFO), or whether it is dropped, trimmed or marked. Everything else
/// (hosts' NICs, the transmitters, the order of departures) every lossy discipline shares in
/// `Lossy`.
pub trait SwitchPolicy {
    /// Packet `a` arrives at switch port `port`, whose packets `fifos` holds.
    fn admit(
        &self,
        fifos: &mut PortFifos,
        port: u32,
        a: &Arrival,
        fx: &mut impl super::Effects,
    ) -> Fate;
}

/// A lossy run's queues: the FIFOs and transmitters that every lossy discipline shares, and
/// the policy `P` that decides on arrivals at switch ports. A departure is the same code for
/// every policy; only an arrival that cannot go on the wire at once consults `P`.
pub struct Lossy<P> {
    pub fifos: PortFifos,
    pub policy: P,
}

impl<P: SwitchPolicy> Lossy<P> {
    pub fn new(fifos: PortFifos, policy: P) -> Self {
        Lossy { fifos, policy }
    }
}

impl<P: SwitchPolicy> QueueDiscipline for Lossy<P> {
    const HOLDS_BACK: bool = false;

    #[inline(always)]
    fn transmitter(&self, port: u32) -> &Transmitter {
        self.fifos.transmitter(port)
    }

    #[inline(always)]
    fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter {
        self.fifos.transmitter_mut(port)
    }

    #[inline(always)]
    fn prefetch(&self, port: u32) {
        self.fifos.prefetch(port)
    }

    #[inline(always)]
    fn may_bypass(&self, port: u32, _prio: u8) -> bool {
        self.fifos.is_empty(port)
    }

    #[inline(always)]
    fn bypassed(&mut self, _port: u32, _size: u32) {}

    #[inline(always)]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl super::Effects) -> Fate {
        match a.nic {
            Some(at) => self.fifos.hold_at_nic(port, at, &a),
            None => self.policy.admit(&mut self.fifos, port, &a, fx),
        }
    }

    #[inline(always)]
    fn dequeue(
        &mut self,
        port: u32,
        nic: Option<usize>,
        _fx: &mut impl super::Effects,
    ) -> Option<Queued> {
        self.fifos.pop(port, nic)
    }

    #[inline(always)]
    fn ready(&self, port: u32) -> bool {
        !self.fifos.is_empty(port)
    }

    #[inline(always)]
    fn queued_bytes(&self, port: u32) -> u64 {
        self.fifos.queued_bytes(port)
    }

    #[inline(always)]
    fn data_packets(&self, port: u32) -> usize {
        self.fifos.data_packets(port)
    }
}
