//! ECN marking (htsim's `ecnqueue`) on top of any lossy discipline: a packet that joins a switch
//! port's data FIFO behind `threshold` or more packets is marked congestion experienced.

use super::{Arrival, Effects, Fate, QueueDiscipline, Queued, Transmitter};

pub struct Ecn<D> {
    inner: D,
    threshold: u32,
}

impl<D: QueueDiscipline> Ecn<D> {
    pub fn new(inner: D, threshold: u32) -> Self {
        Ecn { inner, threshold }
    }
}

impl<D: QueueDiscipline> QueueDiscipline for Ecn<D> {
    #[inline(always)]
    fn transmitter(&self, port: u32) -> &Transmitter {
        self.inner.transmitter(port)
    }

    #[inline(always)]
    fn transmitter_mut(&mut self, port: u32) -> &mut Transmitter {
        self.inner.transmitter_mut(port)
    }

    #[inline(always)]
    fn prefetch(&self, port: u32) {
        self.inner.prefetch(port)
    }

    #[inline(always)]
    fn may_bypass(&self, port: u32, prio: u8) -> bool {
        self.inner.may_bypass(port, prio)
    }

    #[inline(always)]
    fn bypassed(&mut self, port: u32, size: u32) {
        self.inner.bypassed(port, size)
    }

    #[inline(always)]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        let fate = self.inner.enqueue(port, a, fx);
        // The FIFO now holds the arrival too: more than `threshold` means it found as many.
        if fate == Fate::Data && self.inner.data_packets(port) > self.threshold as usize {
            fx.mark(a.pkt);
        }
        fate
    }

    #[inline(always)]
    fn dequeue(&mut self, port: u32, nic: Option<usize>, fx: &mut impl Effects) -> Option<Queued> {
        self.inner.dequeue(port, nic, fx)
    }

    #[inline(always)]
    fn ready(&self, port: u32) -> bool {
        self.inner.ready(port)
    }

    #[inline(always)]
    fn queued_bytes(&self, port: u32) -> u64 {
        self.inner.queued_bytes(port)
    }

    #[inline(always)]
    fn data_packets(&self, port: u32) -> usize {
        self.inner.data_packets(port)
    }
}
