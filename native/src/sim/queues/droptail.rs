//! Drop-tail queues (htsim's `queue`): a full data FIFO loses the arrival, or, dropping at the
//! front, its oldest packets until the arrival fits. Control packets share the data FIFO.

use super::fifos::{lossy_common, PortFifos};
use super::{Arrival, Effects, Fate, QueueDiscipline, Queued};

pub struct DropTail {
    fifos: PortFifos,
}

impl DropTail {
    pub fn new(fifos: PortFifos) -> Self {
        DropTail { fifos }
    }
}

impl QueueDiscipline for DropTail {
    lossy_common!();

    #[inline(always)]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        if let Some(at) = a.nic {
            return self.fifos.hold_at_nic(port, at, &a);
        }
        if self.fifos.fits(port, a.size) {
            return self.fifos.push_data(port, entry(&a));
        }
        fx.lose(a.pkt);
        Fate::Dropped
    }
}

/// Drops the oldest waiting packets until the arrival fits: the loss sits at the head of the
/// queue, so the receiver sees the gap (and the sender its duplicate ACKs) a queue earlier.
pub struct DropFront {
    fifos: PortFifos,
}

impl DropFront {
    pub fn new(fifos: PortFifos) -> Self {
        DropFront { fifos }
    }
}

impl QueueDiscipline for DropFront {
    lossy_common!();

    #[inline(always)]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        if let Some(at) = a.nic {
            return self.fifos.hold_at_nic(port, at, &a);
        }
        while !self.fifos.fits(port, a.size) {
            let f = self.fifos.port(port);
            let Some(oldest) = f.low.pop_front() else {
                // Too large even for the empty FIFO.
                fx.lose(a.pkt);
                return Fate::Dropped;
            };
            f.low_bytes -= oldest.size as u64;
            fx.lose(oldest.pkt);
        }
        self.fifos.push_data(port, entry(&a))
    }
}

#[inline(always)]
pub(super) fn entry(a: &Arrival) -> Queued {
    Queued {
        pkt: a.pkt,
        size: a.size,
    }
}
