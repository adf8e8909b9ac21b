//! ECN marking (htsim's `ecnqueue`) on top of any lossy discipline: a packet that joins a switch
//! port's data FIFO behind `threshold` or more packets is marked congestion experienced.

use super::fifos::{PortFifos, SwitchPolicy};
use super::{Arrival, Effects, Fate};

pub struct Ecn<P> {
    inner: P,
    threshold: u32,
}

impl<P: SwitchPolicy> Ecn<P> {
    pub fn new(inner: P, threshold: u32) -> Self {
        Ecn { inner, threshold }
    }
}

impl<P: SwitchPolicy> SwitchPolicy for Ecn<P> {
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        let fate = self.inner.admit(fifos, port, a, fx);
        // The FIFO now holds the arrival too: more than `threshold` means it found as many.
        if fate == Fate::Data && fifos.data_packets(port) > self.threshold as usize {
            fx.mark(a.pkt);
        }
        fate
    }
}
