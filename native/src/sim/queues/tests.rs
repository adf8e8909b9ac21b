//! Each discipline on its own, against a recording `Effects`.

use super::droptail::{DropFront, DropTail};
use super::ecn::Ecn;
use super::fifos::{Lossy, PortFifos, SwitchPolicy};
use super::lossless::{PfcFrame, PfcQueues, NO_INGRESS};
use super::ndp_trim::NdpTrim;
use super::red::Red;
use super::{Arrival, Effects, Fate, NicLane, QueueDiscipline};
use crate::sim::network::PortSpec;
use crate::sim::random::SimRng;

const SIZE: u32 = 100;

struct Record {
    rng: SimRng,
    lost: Vec<u32>,
    trimmed: Vec<u32>,
    marked: Vec<u32>,
    frames: Vec<PfcFrame>,
}

impl Record {
    fn new() -> Self {
        Record {
            rng: SimRng::new(7),
            lost: vec![],
            trimmed: vec![],
            marked: vec![],
            frames: vec![],
        }
    }
}

impl Effects for Record {
    fn rng(&mut self) -> &mut SimRng {
        &mut self.rng
    }
    fn lose(&mut self, pkt: u32) {
        self.lost.push(pkt);
    }
    fn trim(&mut self, pkt: u32) {
        self.trimmed.push(pkt);
    }
    fn mark(&mut self, pkt: u32) {
        self.marked.push(pkt);
    }
    fn pfc_frame(&mut self, frame: PfcFrame) {
        self.frames.push(frame);
    }
}

fn data(pkt: u32) -> Arrival {
    Arrival {
        pkt,
        size: SIZE,
        control: false,
        nic: None,
        prio: 0,
        ingress: NO_INGRESS,
        in_prio: 0,
    }
}

/// One port whose data FIFO holds `packets` arrivals, under `policy`.
fn lossy<P: SwitchPolicy>(packets: u64, policy: P) -> Lossy<P> {
    Lossy::new(PortFifos::new(1, packets * SIZE as u64, 1, 1), policy)
}

fn drain(q: &mut impl QueueDiscipline, fx: &mut Record) -> Vec<u32> {
    std::iter::from_fn(|| q.dequeue(0, None, fx).map(|e| e.pkt)).collect()
}

#[test]
fn drop_tail_loses_the_arrival_and_drop_front_the_oldest() {
    let mut fx = Record::new();
    let mut tail = lossy(2, DropTail);
    let fates: Vec<_> = (0..3).map(|p| tail.enqueue(0, data(p), &mut fx)).collect();
    assert_eq!(fates, [Fate::Data, Fate::Data, Fate::Dropped]);
    assert_eq!(fx.lost, [2]);
    assert_eq!(drain(&mut tail, &mut fx), [0, 1]);

    let mut fx = Record::new();
    let mut front = lossy(2, DropFront);
    for p in 0..3 {
        assert_eq!(front.enqueue(0, data(p), &mut fx), Fate::Data);
    }
    assert_eq!(fx.lost, [0]);
    assert_eq!(drain(&mut front, &mut fx), [1, 2]);
}

#[test]
fn red_drops_only_between_its_threshold_and_the_capacity() {
    let mut fx = Record::new();
    let mut red = lossy(1000, Red::new(4, 8));
    for p in 0..4 {
        assert_eq!(red.enqueue(0, data(p), &mut fx), Fate::Data);
    }
    assert!(fx.lost.is_empty());
    // From 4 queued on, an arrival may be dropped; at 7 queued the chance is 4 in 5.
    let mut p = 4;
    while fx.lost.is_empty() {
        red.enqueue(0, data(p), &mut fx);
        p += 1;
        assert!(
            red.data_packets(0) < 8,
            "RED never dropped below the capacity"
        );
    }
}

#[test]
fn ecn_marks_arrivals_that_find_the_threshold_queued() {
    let mut fx = Record::new();
    let mut q = lossy(4, Ecn::new(DropTail, 2));
    for p in 0..5 {
        q.enqueue(0, data(p), &mut fx);
    }
    // Packets 2 and 3 found two and three queued; 4 was dropped, so it is not marked.
    assert_eq!(fx.marked, [2, 3]);
    assert_eq!(fx.lost, [4]);
}

#[test]
fn ndp_trim_cuts_payloads_and_serves_headers_and_control_first() {
    let mut fx = Record::new();
    let mut q = lossy(1, NdpTrim::new(10));
    assert_eq!(q.enqueue(0, data(0), &mut fx), Fate::Data);
    let mut p = 1;
    while p < 40 {
        assert_eq!(q.enqueue(0, data(p), &mut fx), Fate::Trimmed);
        p += 1;
    }
    // The arrival lost its payload, or, some of the time, the packet queued before it.
    assert_eq!(fx.trimmed.len(), 39);
    let arrivals = (1..40).zip(&fx.trimmed).filter(|(p, t)| p == *t).count();
    assert!(
        0 < arrivals && arrivals < 39,
        "{arrivals} of 39 trims hit the arrival"
    );
    // The priority FIFO holds twice the data FIFO's bytes: 20 headers of 10 bytes.
    assert_eq!(fx.lost.len(), 19);
    let control = Arrival {
        control: true,
        ..data(99)
    };
    assert_eq!(q.enqueue(0, control, &mut fx), Fate::Dropped);
    let sent = drain(&mut q, &mut fx);
    assert_eq!(sent.len(), 21);
    // Every header goes before the one whole packet.
    assert!(sent[..20].iter().all(|p| fx.trimmed.contains(p)));
    assert!(!fx.trimmed.contains(&sent[20]));
}

#[test]
fn hosts_nics_keep_every_packet_whatever_the_discipline() {
    let mut fx = Record::new();
    let mut q = lossy(1, DropTail);
    let at = NicLane { nic: 0, lane: 0 };
    for p in 0..5 {
        let a = Arrival {
            nic: Some(at),
            ..data(p)
        };
        assert_eq!(q.enqueue(0, a, &mut fx), Fate::Held);
    }
    assert!(fx.lost.is_empty());
    let sent: Vec<_> =
        std::iter::from_fn(|| q.dequeue(0, Some(0), &mut fx).map(|e| e.pkt)).collect();
    assert_eq!(sent, [0, 1, 2, 3, 4]);
}

#[test]
fn lossless_pauses_the_ingress_and_never_drops() {
    let ports = vec![PortSpec::new(1, 10_000, 1_000_000); 2];
    let mut fx = Record::new();
    let mut q = PfcQueues::new(&ports, 2 * SIZE as u64, SIZE as u64, SIZE);
    for p in 0..3 {
        let a = Arrival {
            ingress: 1,
            ..data(p)
        };
        assert_eq!(q.enqueue(0, a, &mut fx), Fate::Held);
    }
    assert_eq!(fx.frames.len(), 1);
    assert!(fx.frames[0].pause && fx.frames[0].port == 1);
    assert_eq!(drain(&mut q, &mut fx), [0, 1, 2]);
    assert!(fx.lost.is_empty());
    assert!(
        fx.frames.last().is_some_and(|f| !f.pause),
        "resumed once drained"
    );
}
