//! Where the copies of every data packet are: waiting at the source's NIC, in the network, or
//! delivered. The ledger lets a transport time a packet from when it left its host, not from
//! when it was queued there, and lets the run count *spurious* retransmissions: copies sent
//! while an earlier copy of the same packet was still queued or travelling (and so might still
//! arrive) or had already arrived whole.
//!
//! It sits below the engine and the transports: the engine keeps it up to date as packets move,
//! transports read it through `Host`.

use super::packet::{Time, NO_TIME};

/// The copies of one data packet of one flow.
#[derive(Clone, Copy, Debug)]
struct Copies {
    /// When the latest copy started serialisation at the source NIC (`NO_TIME`: none did).
    departed: Time,
    /// Copies queued at the source NIC.
    at_source: u16,
    /// Copies between the source NIC and the receiver, payload intact.
    in_network: u16,
    /// Whether a copy reached the receiver with its payload.
    delivered: bool,
}

const NONE_SENT: Copies = Copies {
    departed: NO_TIME,
    at_source: 0,
    in_network: 0,
    delivered: false,
};

/// Per flow and data packet, its copies; flows hold state only while their sender runs.
#[derive(Debug, Default)]
pub struct CopyLedger {
    flows: Vec<Vec<Copies>>,
    /// Retransmissions sent while an earlier copy was queued, travelling or delivered.
    pub spurious: u64,
}

impl CopyLedger {
    pub fn new(n_flows: usize) -> Self {
        CopyLedger {
            flows: vec![Vec::new(); n_flows],
            spurious: 0,
        }
    }

    /// Flow `f` starts with `n_packets` data packets, none sent.
    pub fn start(&mut self, f: usize, n_packets: u32) {
        self.flows[f] = vec![NONE_SENT; n_packets as usize];
    }

    /// Flow `f`'s sender is done: it sends nothing more, so its state can go. Copies still
    /// travelling afterwards are ignored.
    pub fn release(&mut self, f: usize) {
        self.flows[f] = Vec::new();
    }

    #[inline]
    fn slot(&mut self, f: usize, seq: u32) -> Option<&mut Copies> {
        self.flows[f].get_mut(seq as usize)
    }

    /// A copy of packet `seq` of flow `f` joins the source NIC's queue; returns whether it is a
    /// spurious retransmission (counted here).
    #[inline]
    pub fn queued(&mut self, f: usize, seq: u32, is_rtx: bool) -> bool {
        let Some(c) = self.slot(f, seq) else {
            return false;
        };
        let spurious = is_rtx && (c.at_source > 0 || c.in_network > 0 || c.delivered);
        c.at_source = c.at_source.saturating_add(1);
        self.spurious += spurious as u64;
        spurious
    }

    /// A copy starts serialisation at the source NIC at `now`.
    #[inline]
    pub fn departed(&mut self, f: usize, seq: u32, now: Time) {
        if let Some(c) = self.slot(f, seq) {
            c.at_source = c.at_source.saturating_sub(1);
            c.in_network = c.in_network.saturating_add(1);
            c.departed = now;
        }
    }

    /// A copy reached the receiver with its payload.
    #[inline]
    pub fn delivered(&mut self, f: usize, seq: u32) {
        if let Some(c) = self.slot(f, seq) {
            c.in_network = c.in_network.saturating_sub(1);
            c.delivered = true;
        }
    }

    /// A copy lost its payload in the network (trimmed or dropped).
    #[inline]
    pub fn lost(&mut self, f: usize, seq: u32) {
        if let Some(c) = self.slot(f, seq) {
            c.in_network = c.in_network.saturating_sub(1);
        }
    }

    /// Whether a copy of packet `seq` of flow `f` still waits at the source NIC.
    #[inline]
    pub fn waiting_at_source(&self, f: usize, seq: u32) -> bool {
        self.flows[f]
            .get(seq as usize)
            .is_some_and(|c| c.at_source > 0)
    }

    /// When the latest copy of packet `seq` of flow `f` left the source (`NO_TIME`: none did).
    #[inline]
    pub fn departed_at(&self, f: usize, seq: u32) -> Time {
        self.flows[f]
            .get(seq as usize)
            .map_or(NO_TIME, |c| c.departed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_sent_while_the_original_waits_or_travels_is_spurious() {
        let mut ledger = CopyLedger::new(1);
        ledger.start(0, 2);
        assert!(!ledger.queued(0, 0, false));
        assert!(ledger.waiting_at_source(0, 0));
        assert_eq!(ledger.departed_at(0, 0), NO_TIME);
        // Retransmitted while the original still waits at the NIC.
        assert!(ledger.queued(0, 0, true));
        ledger.departed(0, 0, 5);
        ledger.departed(0, 0, 7);
        assert!(!ledger.waiting_at_source(0, 0));
        assert_eq!(ledger.departed_at(0, 0), 7);
        // Retransmitted while copies travel.
        assert!(ledger.queued(0, 0, true));
        assert_eq!(ledger.spurious, 2);
    }

    #[test]
    fn a_copy_that_replaces_lost_ones_is_not_spurious_and_one_after_delivery_is() {
        let mut ledger = CopyLedger::new(1);
        ledger.start(0, 1);
        ledger.queued(0, 0, false);
        ledger.departed(0, 0, 1);
        ledger.lost(0, 0);
        assert!(!ledger.queued(0, 0, true));
        ledger.departed(0, 0, 2);
        ledger.delivered(0, 0);
        assert!(ledger.queued(0, 0, true));
        assert_eq!(ledger.spurious, 1);
        ledger.release(0);
        // After release nothing is tracked, nor counted.
        assert!(!ledger.queued(0, 0, true));
        assert!(!ledger.waiting_at_source(0, 0));
    }
}
