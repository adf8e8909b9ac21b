//! The event queue: a min-heap of compact, copyable events ordered by (time, insertion order).
//!
//! Insertion order breaks ties, so simultaneous events run first-scheduled first and a run is
//! reproducible. Events carry two u32 operands instead of boxed closures: no allocation per
//! event, 24 bytes each.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::packet::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// A flow's first byte is ready at its source host (`a` = flow).
    FlowStart = 0,
    /// An output port finished serialising a packet (`a` = port).
    TxDone = 1,
    /// A packet reached the far end of a link (`a` = packet, `b` = port it crossed).
    Arrive = 2,
    /// A timer a transport set (`a` = its operand, e.g. the host whose pull pacer is due).
    Timer = 3,
    /// Periodic retransmission-timeout scan over active senders.
    RtoScan = 4,
    /// A PFC frame reached the sender of a port (`a` = port, `b` = `PfcFrame::operand`).
    Pfc = 5,
}

impl EventKind {
    #[inline]
    fn from_bits(bits: u64) -> Self {
        match bits & 7 {
            0 => EventKind::FlowStart,
            1 => EventKind::TxDone,
            2 => EventKind::Arrive,
            3 => EventKind::Timer,
            4 => EventKind::RtoScan,
            _ => EventKind::Pfc,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: Time,
    /// Insertion counter shifted left by 3, with the kind in the low three bits.
    order: u64,
    pub a: u32,
    pub b: u32,
}

impl Event {
    #[inline]
    pub fn kind(&self) -> EventKind {
        EventKind::from_bits(self.order)
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.order == other.order
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    // Reversed so that std's max-heap pops the earliest event.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.order).cmp(&(self.time, self.order))
    }
}

impl Event {
    #[inline]
    fn key(&self) -> (Time, u64) {
        (self.time, self.order)
    }
}

/// log2 of a calendar bucket's width in picoseconds (about a nanosecond): narrow enough that a
/// bucket holds tens of events in a busy fabric, so sorting one is cheap.
const BUCKET_SHIFT: u32 = 10;

/// Buckets in the wheel (a 16.8 us window); later events wait in an overflow heap.
const WHEEL_BITS: u32 = 14;
const WHEEL: u64 = 1 << WHEEL_BITS;

/// A calendar queue: a wheel of unsorted buckets one nanosecond wide, the bucket being drained
/// kept sorted, and a binary heap for events beyond the wheel. Pushing is O(1) and popping
/// amortised O(log bucket size), against O(log pending) cache-missing steps for a heap of all
/// pending events.
pub struct EventQueue {
    buckets: Vec<Vec<Event>>,
    /// One bit per bucket: non-empty.
    occupied: Vec<u64>,
    /// The bucket being drained, sorted ascending from `head`.
    current: Vec<Event>,
    head: usize,
    /// Absolute slot (time >> BUCKET_SHIFT) of `current`.
    current_slot: u64,
    overflow: BinaryHeap<Event>,
    len: usize,
    inserted: u64,
    pub peak_len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            buckets: (0..WHEEL).map(|_| Vec::new()).collect(),
            occupied: vec![0; (WHEEL / 64) as usize],
            current: Vec::with_capacity(1024),
            head: 0,
            current_slot: 0,
            overflow: BinaryHeap::new(),
            len: 0,
            inserted: 0,
            peak_len: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, time: Time, kind: EventKind, a: u32, b: u32) {
        let order = (self.inserted << 3) | kind as u64;
        self.inserted += 1;
        let ev = Event { time, order, a, b };
        let slot = time >> BUCKET_SHIFT;
        if slot <= self.current_slot {
            // Same bucket as the one being drained (time never runs backwards, so never
            // earlier): keep it sorted. New events sort last among equal times.
            let tail = &self.current[self.head..];
            let at = self.head + tail.partition_point(|e| e.key() <= ev.key());
            self.current.insert(at, ev);
        } else if slot < self.current_slot + WHEEL {
            let i = (slot & (WHEEL - 1)) as usize;
            self.buckets[i].push(ev);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.overflow.push(ev);
        }
        self.len += 1;
        if self.len > self.peak_len {
            self.peak_len = self.len;
        }
    }

    /// The next occupied wheel slot after the current one, if any.
    fn next_wheel_slot(&self) -> Option<u64> {
        let start = ((self.current_slot + 1) & (WHEEL - 1)) as usize;
        let words = self.occupied.len();
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=words).find_map(|k| {
                let w = (w0 + k) % words;
                let bits = self.occupied[w];
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        // Bucket index back to absolute slot: the distance ahead of the current bucket.
        let distance = (found as u64).wrapping_sub(self.current_slot) & (WHEEL - 1);
        Some(self.current_slot + if distance == 0 { WHEEL } else { distance })
    }

    /// Makes the earliest pending bucket current. Returns false when nothing is pending.
    fn advance(&mut self) -> bool {
        let wheel = self.next_wheel_slot();
        let spill = self.overflow.peek().map(|e| e.time >> BUCKET_SHIFT);
        let slot = match (wheel, spill) {
            (Some(w), Some(o)) => w.min(o),
            (Some(w), None) => w,
            (None, Some(o)) => o,
            (None, None) => return false,
        };
        self.current_slot = slot;
        self.current.clear();
        self.head = 0;
        let i = (slot & (WHEEL - 1)) as usize;
        if wheel == Some(slot) {
            std::mem::swap(&mut self.current, &mut self.buckets[i]);
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        // The window moved: bring overflow events that now fit into the wheel.
        while let Some(e) = self.overflow.peek() {
            let s = e.time >> BUCKET_SHIFT;
            if s >= slot + WHEEL {
                break;
            }
            let e = self.overflow.pop().expect("peeked");
            if s == slot {
                self.current.push(e);
            } else {
                let j = (s & (WHEEL - 1)) as usize;
                self.buckets[j].push(e);
                self.occupied[j / 64] |= 1 << (j % 64);
            }
        }
        // A bucket holds its events in insertion order (events brought in from the overflow
        // heap come first, heap-ordered, and were all inserted before any event pushed straight
        // into the wheel for the same slot), and mostly as a few runs already ascending in
        // time (events scheduled a fixed delay after an advancing clock). A stable sort by time
        // alone then gives the (time, insertion) order and merges those runs in near-linear
        // time, where a full-key quicksort took a fifth of the engine's instructions.
        self.current.sort_by_key(|e| e.time);
        let in_order = self
            .current
            .windows(2)
            .all(|w| w[0].time < w[1].time || w[0].order < w[1].order);
        if !in_order {
            // Never expected (see above); the full key keeps the order exact regardless.
            self.current.sort_unstable_by_key(|e| e.key());
        }
        true
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        Some(self.current[self.head].time)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let ev = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        Some(ev)
    }

    /// The event `k` places behind the next one, if it is in the bucket being drained.
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&Event> {
        self.current.get(self.head + k)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.push(30, EventKind::TxDone, 1, 0);
        q.push(10, EventKind::Arrive, 2, 0);
        q.push(10, EventKind::FlowStart, 3, 0);
        q.push(20, EventKind::Timer, 4, 0);
        let order: Vec<(u64, u32, EventKind)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time, e.a, e.kind()))
            .collect();
        assert_eq!(
            order,
            vec![
                (10, 2, EventKind::Arrive),
                (10, 3, EventKind::FlowStart),
                (20, 4, EventKind::Timer),
                (30, 1, EventKind::TxDone)
            ]
        );
        assert_eq!(q.peak_len, 4);
    }

    #[test]
    fn ties_pop_in_insertion_order_across_overflow_wheel_and_current_bucket() {
        // Three events at one far time T, inserted through each path a bucket fills by: the
        // overflow heap (T beyond the wheel), the wheel (T within it), the bucket being drained
        // (T now). Between them, events at other times in the same bucket, unsorted.
        let t = (WHEEL + 5) << BUCKET_SHIFT;
        let mut q = EventQueue::new();
        q.push(t, EventKind::Arrive, 1, 0);
        q.push(t + 7, EventKind::Arrive, 2, 0);
        q.push(6 << BUCKET_SHIFT, EventKind::Timer, 0, 0);
        assert_eq!(q.pop().map(|e| e.a), Some(0));
        // The window moved to slot 6: T is within the wheel, its events moved there.
        q.push(t, EventKind::Arrive, 3, 0);
        q.push(t + 3, EventKind::Arrive, 4, 0);
        q.push(t - 1, EventKind::Arrive, 5, 0);
        assert_eq!(q.pop().map(|e| (e.time, e.a)), Some((t - 1, 5)));
        assert_eq!(q.pop().map(|e| (e.time, e.a)), Some((t, 1)));
        // T is the current bucket's time now.
        q.push(t, EventKind::Arrive, 6, 0);
        let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time, e.a))
            .collect();
        assert_eq!(rest, vec![(t, 3), (t, 6), (t + 3, 4), (t + 7, 2)]);
    }

    #[test]
    fn matches_a_reference_heap_across_wheel_and_overflow() {
        // Random pushes interleaved with pops, spanning same-bucket, in-wheel and far-future
        // times: the calendar queue must pop exactly what a plain heap pops.
        let mut rng = crate::sim::random::SimRng::new(3);
        let mut q = EventQueue::new();
        let mut reference: BinaryHeap<Event> = BinaryHeap::new();
        let mut now = 0u64;
        let mut inserted = 0u64;
        for step in 0..200_000u32 {
            if rng.below(3) != 0 || reference.is_empty() {
                let delta = match rng.below(4) {
                    0 => rng.below(1024) as u64,
                    1 => rng.below(1 << 20) as u64,
                    2 => rng.next_u64() % (1u64 << 28),
                    _ => 0,
                };
                q.push(now + delta, EventKind::Arrive, step, 0);
                reference.push(Event {
                    time: now + delta,
                    order: (inserted << 3) | 2,
                    a: step,
                    b: 0,
                });
                inserted += 1;
            } else {
                let (got, want) = (q.pop().unwrap(), reference.pop().unwrap());
                assert_eq!((got.time, got.a), (want.time, want.a));
                now = got.time;
            }
        }
        while let Some(want) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.time, e.a)), Some((want.time, want.a)));
        }
        assert!(q.pop().is_none());
        assert!(q.is_empty());
    }
}
