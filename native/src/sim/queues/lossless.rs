//! Lossless Ethernet queues: priority flow control (IEEE 802.1Qbb) per output port and priority.
//!
//! Every port keeps one FIFO per priority. A switch counts, per ingress (the port a packet
//! arrived over) and priority, the bytes it buffers; at `xoff` it sends a PAUSE for that
//! priority upstream, at `xon` a RESUME. Frames take the link's latency to arrive, so a switch
//! keeps accepting what is already on the wire: the *headroom* (twice the bandwidth-delay
//! product plus two full packets) that a real switch reserves for it. Nothing is ever dropped;
//! a buffer that would have overflowed its headroom is counted instead. Pauses propagate
//! because a paused port's queue fills the ingress counters of the switch that feeds it.
//!
//! A dependency cycle among paused ports is a deadlock: each waits for the next to drain.
//!
//! This is htsim's `queue_lossless`; hosts' NICs queue here too, charged to no switch.

use std::collections::VecDeque;

use super::super::network::PortSpec;
use super::{prefetch, Arrival, Effects, Fate, QueueDiscipline, Queued, Transmitter};

pub const PRIORITIES: usize = 8;
/// A packet injected by a host: it is charged to no switch ingress.
pub const NO_INGRESS: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct PfcEntry {
    pub pkt: u32,
    pub size: u32,
    /// Port the packet arrived over, and the priority it arrived with (what it is charged to).
    pub ingress: u32,
    pub in_prio: u8,
}

/// A PAUSE (or RESUME) for `prio`, travelling to the sender of port `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcFrame {
    pub port: u32,
    pub prio: u8,
    pub pause: bool,
}

impl PfcFrame {
    /// Packs the frame's priority and kind into one event operand.
    pub fn operand(&self) -> u32 {
        self.prio as u32 | (self.pause as u32) << 8
    }

    pub fn from_event(port: u32, operand: u32) -> Self {
        PfcFrame {
            port,
            prio: (operand & 0xFF) as u8,
            pause: operand >> 8 != 0,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct PfcCounters {
    pub pause_frames: u64,
    pub resume_frames: u64,
    /// Arrivals beyond xoff + headroom: a real switch would have dropped them.
    pub headroom_overflows: u64,
    /// The most bytes one ingress priority ever held.
    pub peak_ingress_bytes: u64,
    /// Packets that joined a queue, and packets that left one.
    pub packets_queued: u64,
    pub packets_dequeued: u64,
}

pub struct PfcQueues {
    /// `queues[port * PRIORITIES + prio]`.
    queues: Vec<VecDeque<PfcEntry>>,
    queued: Vec<u64>,
    /// Per port: priorities the downstream switch has paused (bit mask).
    paused: Vec<u8>,
    /// `ingress_bytes[port * PRIORITIES + prio]`: bytes the switch at the far end of `port`
    /// buffers that arrived over it with that priority.
    ingress_bytes: Vec<u64>,
    /// Per port: priorities for which that far-end switch has sent a PAUSE (bit mask).
    pause_sent: Vec<u8>,
    /// Per port: bytes it has put on the wire (progress, for deadlock confirmation).
    sent: Vec<u64>,
    headroom: Vec<u64>,
    transmitters: Vec<Transmitter>,
    xoff: u64,
    xon: u64,
    pub counters: PfcCounters,
}

impl PfcQueues {
    pub fn new(ports: &[PortSpec], xoff: u64, xon: u64, packet_bytes: u32) -> Self {
        let n = ports.len();
        let headroom = ports
            .iter()
            .map(|p| 2 * p.latency * p.rate_mbps / 8_000_000 + 2 * packet_bytes as u64)
            .collect();
        PfcQueues {
            queues: (0..n * PRIORITIES).map(|_| VecDeque::new()).collect(),
            queued: vec![0; n],
            paused: vec![0; n],
            ingress_bytes: vec![0; n * PRIORITIES],
            pause_sent: vec![0; n],
            sent: vec![0; n],
            headroom,
            transmitters: vec![Transmitter::default(); n],
            xoff,
            xon: xon.min(xoff),
            counters: PfcCounters::default(),
        }
    }

    pub fn is_empty(&self, port: u32) -> bool {
        self.queued[port as usize] == 0
    }

    pub fn queued_bytes(&self, port: u32) -> u64 {
        self.queued[port as usize]
    }

    pub fn is_paused(&self, port: u32, prio: u8) -> bool {
        self.paused[port as usize] & (1 << prio) != 0
    }

    /// Whether `port` holds a packet of a priority it may send.
    pub fn has_ready(&self, port: u32) -> bool {
        (0..PRIORITIES as u8).any(|c| !self.is_paused(port, c) && !self.queue(port, c).is_empty())
    }

    fn queue(&self, port: u32, prio: u8) -> &VecDeque<PfcEntry> {
        &self.queues[port as usize * PRIORITIES + prio as usize]
    }

    /// Counts a packet put on the wire without waiting (an idle port, nothing queued).
    pub fn sent_directly(&mut self, port: u32, size: u32) {
        self.sent[port as usize] += size as u64;
    }

    /// Queues `entry` at `port` with priority `prio`; returns the PAUSE it triggers, if any.
    pub fn push(&mut self, port: u32, entry: PfcEntry, prio: u8) -> Option<PfcFrame> {
        let size = entry.size as u64;
        self.queues[port as usize * PRIORITIES + prio as usize].push_back(entry);
        self.queued[port as usize] += size;
        self.counters.packets_queued += 1;
        if entry.ingress == NO_INGRESS {
            return None;
        }
        let at = entry.ingress as usize * PRIORITIES + entry.in_prio as usize;
        self.ingress_bytes[at] += size;
        let held = self.ingress_bytes[at];
        self.counters.peak_ingress_bytes = self.counters.peak_ingress_bytes.max(held);
        if held > self.xoff + self.headroom[entry.ingress as usize] {
            self.counters.headroom_overflows += 1;
        }
        let bit = 1u8 << entry.in_prio;
        if held >= self.xoff && self.pause_sent[entry.ingress as usize] & bit == 0 {
            self.pause_sent[entry.ingress as usize] |= bit;
            self.counters.pause_frames += 1;
            return Some(PfcFrame {
                port: entry.ingress,
                prio: entry.in_prio,
                pause: true,
            });
        }
        None
    }

    /// Takes the next packet `port` may send: the highest unpaused priority first, so packets
    /// further along their path (higher hop-count channels) drain first. Returns it with the
    /// RESUME its departure triggers, if any.
    pub fn pop(&mut self, port: u32) -> Option<(PfcEntry, Option<PfcFrame>)> {
        let prio = (0..PRIORITIES as u8)
            .rev()
            .find(|&c| !self.is_paused(port, c) && !self.queue(port, c).is_empty())?;
        let entry = self.queues[port as usize * PRIORITIES + prio as usize]
            .pop_front()
            .expect("non-empty");
        let size = entry.size as u64;
        self.queued[port as usize] -= size;
        self.sent[port as usize] += size;
        self.counters.packets_dequeued += 1;
        if entry.ingress == NO_INGRESS {
            return Some((entry, None));
        }
        let at = entry.ingress as usize * PRIORITIES + entry.in_prio as usize;
        self.ingress_bytes[at] -= size;
        let bit = 1u8 << entry.in_prio;
        let frame = if self.ingress_bytes[at] <= self.xon
            && self.pause_sent[entry.ingress as usize] & bit != 0
        {
            self.pause_sent[entry.ingress as usize] &= !bit;
            self.counters.resume_frames += 1;
            Some(PfcFrame {
                port: entry.ingress,
                prio: entry.in_prio,
                pause: false,
            })
        } else {
            None
        };
        Some((entry, frame))
    }

    /// Whether the queues hold exactly what joined them and did not leave, per port in bytes
    /// and per (ingress, priority) counter; a message naming the first mismatch otherwise.
    pub fn conservation(&self) -> Result<(), String> {
        let held: u64 = self.queues.iter().map(|q| q.len() as u64).sum();
        let c = &self.counters;
        if c.packets_queued != c.packets_dequeued + held {
            return Err(format!(
                "{} packets queued, {} dequeued, {held} held",
                c.packets_queued, c.packets_dequeued
            ));
        }
        let mut ingress = vec![0u64; self.ingress_bytes.len()];
        let mut port_bytes = vec![0u64; self.queued.len()];
        for (i, q) in self.queues.iter().enumerate() {
            for e in q {
                port_bytes[i / PRIORITIES] += e.size as u64;
                if e.ingress != NO_INGRESS {
                    ingress[e.ingress as usize * PRIORITIES + e.in_prio as usize] += e.size as u64;
                }
            }
        }
        if let Some(port) = (0..port_bytes.len()).find(|&p| port_bytes[p] != self.queued[p]) {
            return Err(format!(
                "port {port} counts {} bytes queued, holds {}",
                self.queued[port], port_bytes[port]
            ));
        }
        match ingress
            .iter()
            .zip(&self.ingress_bytes)
            .position(|(a, b)| a != b)
        {
            Some(i) => Err(format!(
                "ingress port {} priority {} counts {} bytes, holds {}",
                i / PRIORITIES,
                i % PRIORITIES,
                self.ingress_bytes[i],
                ingress[i]
            )),
            None => Ok(()),
        }
    }

    /// A frame reached the sender of `frame.port`; returns whether the port may send again.
    pub fn apply(&mut self, frame: PfcFrame) -> bool {
        let bit = 1u8 << frame.prio;
        if frame.pause {
            self.paused[frame.port as usize] |= bit;
            false
        } else {
            self.paused[frame.port as usize] &= !bit;
            true
        }
    }

    /// Bytes each of `ports` has sent so far.
    pub fn progress(&self, ports: &[(u32, u8)]) -> Vec<u64> {
        ports.iter().map(|&(p, _)| self.sent[p as usize]).collect()
    }

    /// A cycle of (port, priority) queues, each paused and non-empty, each waiting for the
    /// next: X waits for Y when Y holds packets that arrived over X, so X's pause cannot lift
    /// before Y sends. Returned in wait order.
    pub fn paused_cycle(&self) -> Option<Vec<(u32, u8)>> {
        let n = self.queues.len();
        let blocked = |q: usize| {
            let (port, prio) = ((q / PRIORITIES) as u32, (q % PRIORITIES) as u8);
            self.is_paused(port, prio) && !self.queues[q].is_empty()
        };
        // waits[x] lists the blocked queues holding packets that came in over blocked queue x.
        let mut waits: Vec<Vec<usize>> = vec![Vec::new(); n];
        for y in (0..n).filter(|&y| blocked(y)) {
            for e in &self.queues[y] {
                if e.ingress == NO_INGRESS {
                    continue;
                }
                let x = e.ingress as usize * PRIORITIES + e.in_prio as usize;
                if blocked(x) && !waits[x].contains(&y) {
                    waits[x].push(y);
                }
            }
        }
        find_cycle(&waits).map(|c| {
            c.into_iter()
                .map(|q| ((q / PRIORITIES) as u32, (q % PRIORITIES) as u8))
                .collect()
        })
    }
}

/// Some directed cycle of `graph`, by iterative depth-first search.
fn find_cycle(graph: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0 unvisited, 1 on the current path, 2 finished.
    let mut state = vec![0u8; graph.len()];
    for root in 0..graph.len() {
        if state[root] != 0 || graph[root].is_empty() {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (v, ref mut next)) = path.last_mut() {
            if let Some(&w) = graph[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        path.push((w, 0));
                    }
                    1 => {
                        let from = path.iter().position(|&(u, _)| u == w).expect("on path");
                        return Some(path[from..].iter().map(|&(u, _)| u).collect());
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                path.pop();
            }
        }
    }
    None
}

impl QueueDiscipline for PfcQueues {
    const HOLDS_BACK: bool = true;

    #[inline]
    fn transmitter(&self, port: u32) -> &Transmitter {
        &self.transmitters[port as usize]
    }

    #[inline]
    fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter {
        &mut self.transmitters[port as usize]
    }

    #[inline]
    fn prefetch(&self, port: u32) {
        prefetch(&self.transmitters, port);
    }

    #[inline]
    fn may_bypass(&self, port: u32, prio: u8) -> bool {
        self.is_empty(port) && !self.is_paused(port, prio)
    }

    #[inline]
    fn bypassed(&mut self, port: u32, size: u32) {
        self.sent_directly(port, size);
    }

    #[inline]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        // A packet still at its host's NIC carries NO_INGRESS: the NIC queue is host memory,
        // charged to no switch.
        let entry = PfcEntry {
            pkt: a.pkt,
            size: a.size,
            ingress: a.ingress,
            in_prio: a.in_prio,
        };
        if let Some(frame) = self.push(port, entry, a.prio) {
            fx.pfc_frame(frame);
        }
        Fate::Held
    }

    #[inline]
    fn dequeue(&mut self, port: u32, _nic: Option<usize>, fx: &mut impl Effects) -> Option<Queued> {
        let (entry, frame) = self.pop(port)?;
        if let Some(frame) = frame {
            fx.pfc_frame(frame);
        }
        Some(Queued {
            pkt: entry.pkt,
            size: entry.size,
        })
    }

    #[inline]
    fn ready(&self, port: u32) -> bool {
        self.has_ready(port)
    }

    #[inline]
    fn queued_bytes(&self, port: u32) -> u64 {
        PfcQueues::queued_bytes(self, port)
    }

    fn data_packets(&self, port: u32) -> usize {
        (0..PRIORITIES as u8)
            .map(|c| self.queue(port, c).len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_cycle_and_only_when_there_is_one() {
        let dag = vec![vec![1, 2], vec![2], vec![]];
        assert_eq!(find_cycle(&dag), None);
        let ring = vec![vec![1], vec![2], vec![0], vec![0]];
        assert_eq!(find_cycle(&ring), Some(vec![0, 1, 2]));
    }
}
