//! NDP's trimming queue (htsim's `compositequeue`): a data packet that does not fit loses its
//! payload instead of the whole packet, and the header, like every control packet, takes a
//! priority FIFO served first, so the receiver learns of the loss at once.

use super::droptail::entry;
use super::fifos::{PortFifos, SwitchPolicy};
use super::{Arrival, Effects, Fate, Queued};

pub struct NdpTrim {
    /// Bytes of a trimmed packet.
    header: u32,
}

impl NdpTrim {
    pub fn new(header: u32) -> Self {
        NdpTrim { header }
    }
}

impl SwitchPolicy for NdpTrim {
    #[inline(always)]
    fn admit(&self, fifos: &mut PortFifos, port: u32, a: &Arrival, fx: &mut impl Effects) -> Fate {
        if a.control {
            if fifos.push_priority(port, entry(a)) {
                return Fate::Held;
            }
            fx.lose(a.pkt);
            return Fate::Dropped;
        }
        if fifos.fits(port, a.size) {
            return fifos.push_data(port, entry(a));
        }
        // As in NDP switches: trim the arrival or, half of the time, the newest queued packet,
        // so that no flow is systematically the one that loses its payload.
        let victim = if fx.rng().coin() {
            let f = fifos.port(port);
            match f.low.pop_back() {
                Some(v) => {
                    f.low_bytes -= v.size as u64;
                    f.low.push_back(entry(a));
                    f.low_bytes += a.size as u64;
                    v.pkt
                }
                None => a.pkt,
            }
        } else {
            a.pkt
        };
        fx.trim(victim);
        let header = Queued {
            pkt: victim,
            size: self.header,
        };
        if !fifos.push_priority(port, header) {
            fx.lose(victim);
        }
        Fate::Trimmed
    }
}
