//! Random early drop on the instantaneous queue (htsim's `randomqueue` drops at random too): an
//! arrival finding `min` or more packets queued is dropped with a probability rising linearly
//! to 1 at the capacity; a full queue drops at the tail.

use super::droptail::entry;
use super::fifos::{lossy_common, PortFifos};
use super::{Arrival, Effects, Fate, QueueDiscipline};

pub struct Red {
    fifos: PortFifos,
    /// Packets queued from which arrivals may be dropped early.
    min: u32,
    /// The capacity in packets.
    cap: u32,
}

impl Red {
    pub fn new(fifos: PortFifos, min: u32, cap: u32) -> Self {
        Red { fifos, min, cap }
    }

    /// Whether an arrival at switch port `port` is dropped early.
    #[inline(always)]
    fn drops_early(&self, port: u32, rng: &mut super::SimRng) -> bool {
        let queued = self.fifos.data_packets(port) as u32;
        if queued < self.min || queued >= self.cap {
            // Below the threshold nothing is dropped; a full queue drops at the tail anyway.
            return false;
        }
        let band = self.cap - self.min + 1;
        rng.below(band) < queued - self.min + 1
    }
}

impl QueueDiscipline for Red {
    lossy_common!();

    #[inline(always)]
    fn enqueue(&mut self, port: u32, a: Arrival, fx: &mut impl Effects) -> Fate {
        if let Some(at) = a.nic {
            return self.fifos.hold_at_nic(port, at, &a);
        }
        if !self.drops_early(port, fx.rng()) && self.fifos.fits(port, a.size) {
            return self.fifos.push_data(port, entry(&a));
        }
        fx.lose(a.pkt);
        Fate::Dropped
    }
}
