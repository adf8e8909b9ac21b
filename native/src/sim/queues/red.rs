//! Random early drop on the instantaneous queue (htsim's `randomqueue` drops at random too): an
//! arrival finding `min` or more packets queued is dropped with a probability rising linearly
//! to 1 at the capacity; a full queue drops at the tail.

use super::droptail::entry;
use super::fifos::{PortFifos, SwitchPolicy};
use super::{Arrival, Effects, Fate};

pub struct Red {
    /// Packets queued from which arrivals may be dropped early.
    min: u32,
    /// The capacity in packets.
    cap: u32,
}

impl Red {
    pub fn new(min: u32, cap: u32) -> Self {
        Red { min, cap }
    }

    /// Whether an arrival at switch port `port` is dropped early.
    #[inline(always)]
    fn drops_early(&self, fifos: &PortFifos, port: u32, rng: &mut super::SimRng) -> bool {
        let queued = fifos.data_packets(port) as u32;
        if queued < self.min || queued >= self.cap {
            // Below the threshold nothing is dropped; a full queue drops at the tail anyway.
            return false;
        }
        let band = self.cap - self.min + 1;
        rng.below(band) < queued - self.min + 1
    }
}

impl SwitchPolicy for Red {
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        if !self.drops_early(fifos, port, fx.rng()) && fifos.fits(port, a.size) {
            return fifos.push_data(port, entry(a));
        }
        fx.lose(a.pkt);
        Fate::Dropped
    }
}
