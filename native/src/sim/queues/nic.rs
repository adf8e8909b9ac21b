//! The data queue of a host's NIC: one FIFO per flow (a *lane*), the lanes served round robin,
//! one packet per turn, as htsim's host queue serves its flows (control packets go first, in a
//! queue of their own that the engine keeps).
//!
//! One FIFO for every flow of a host let a short flow's packets, and its retransmissions, wait
//! behind the whole backlog that the host's long flows had queued (NDP receivers pull at their
//! own NIC's rate, so a host sending to several receivers is pulled faster than it can send):
//! a one-packet flow could take 27 times its size's median completion time. Served round
//! robin, a flow waits for at most one packet of each other flow per packet of its own.

use std::collections::VecDeque;

/// Per NIC, the lanes holding packets in service order; per lane, its packets.
#[derive(Debug)]
pub struct HostQueues<T> {
    lanes: Vec<VecDeque<T>>,
    turns: Vec<VecDeque<u32>>,
}

impl<T> HostQueues<T> {
    /// `n_lanes` lanes (one per flow and plane) over `n_nics` NICs; nothing allocated until a
    /// lane first holds a packet.
    pub fn new(n_lanes: usize, n_nics: usize) -> Self {
        HostQueues {
            lanes: (0..n_lanes).map(|_| VecDeque::new()).collect(),
            turns: (0..n_nics).map(|_| VecDeque::new()).collect(),
        }
    }

    /// Queues `item` in `lane` at `nic`; a lane that was empty takes the last turn.
    #[inline]
    pub fn push(&mut self, nic: usize, lane: usize, item: T) {
        let q = &mut self.lanes[lane];
        if q.is_empty() {
            self.turns[nic].push_back(lane as u32);
        }
        q.push_back(item);
    }

    /// The next packet `nic` sends: the head of the lane whose turn it is, which then goes to
    /// the back of the turns if it holds more.
    #[inline]
    pub fn pop(&mut self, nic: usize) -> Option<T> {
        let lane = self.turns[nic].pop_front()? as usize;
        let q = &mut self.lanes[lane];
        let item = q.pop_front().expect("a lane with a turn holds a packet");
        if q.is_empty() {
            // A finished flow's lane keeps no memory once a long backlog drained.
            if q.capacity() > 64 {
                *q = VecDeque::new();
            }
        } else {
            self.turns[nic].push_back(lane as u32);
        }
        Some(item)
    }

    /// Whether `nic` holds no data packet.
    #[inline]
    pub fn is_empty(&self, nic: usize) -> bool {
        self.turns[nic].is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_take_turns_one_packet_at_a_time() {
        let mut q = HostQueues::new(3, 2);
        for i in 0..4 {
            q.push(0, 0, ('a', i));
        }
        q.push(0, 1, ('b', 0));
        q.push(1, 2, ('c', 0));
        q.push(0, 1, ('b', 1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop(0)).collect();
        assert_eq!(
            order,
            [('a', 0), ('b', 0), ('a', 1), ('b', 1), ('a', 2), ('a', 3)]
        );
        assert!(q.is_empty(0));
        // The other NIC's lane was untouched.
        assert!(!q.is_empty(1));
        assert_eq!(q.pop(1), Some(('c', 0)));
        assert_eq!(q.pop(1), None);
    }

    #[test]
    fn a_lane_that_empties_rejoins_at_the_back() {
        let mut q = HostQueues::new(2, 1);
        q.push(0, 0, 1);
        q.push(0, 1, 10);
        q.push(0, 1, 11);
        assert_eq!(q.pop(0), Some(1));
        q.push(0, 0, 2);
        // Lane 1's turn came before lane 0 rejoined; then they alternate.
        assert_eq!(q.pop(0), Some(10));
        assert_eq!(q.pop(0), Some(2));
        assert_eq!(q.pop(0), Some(11));
    }
}
