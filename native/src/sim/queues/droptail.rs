//! Drop-tail queues (htsim's `queue`): a full data FIFO loses the arrival, or, dropping at the
//! front, its oldest packets until the arrival fits. Control packets share the data FIFO.

use super::fifos::{PortFifos, SwitchPolicy};
use super::{Arrival, Effects, Fate, Queued};

pub struct DropTail;

impl SwitchPolicy for DropTail {
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        if fifos.fits(port, a.size) {
            return fifos.push_data(port, entry(a));
        }
        fx.lose(a.pkt);
        Fate::Dropped
    }
}

/// Drops the oldest waiting packets until the arrival fits: the loss sits at the head of the
/// queue, so the receiver sees the gap (and the sender its duplicate ACKs) a queue earlier.
pub struct DropFront;

impl SwitchPolicy for DropFront {
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        while !fifos.fits(port, a.size) {
            let f = fifos.port(port);
            let Some(oldest) = f.low.pop_front() else {
                // Too large even for the empty FIFO.
                fx.lose(a.pkt);
                return Fate::Dropped;
            };
            f.low_bytes -= oldest.size as u64;
            fx.lose(oldest.pkt);
        }
        fifos.push_data(port, entry(a))
    }
}

#[inline(always)]
pub(super) fn entry(a: &Arrival) -> Queued {
    Queued {
        pkt: a.pkt,
        size: a.size,
    }
}
