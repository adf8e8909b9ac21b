//! The event queue: compact, copyable events ordered by (time, insertion order).
//!
//! Insertion order breaks ties, so simultaneous events run first-scheduled first and a run is
//! reproducible. Events carry two u32 operands instead of boxed closures: no allocation per
//! event, 16 bytes each. An event's insertion number is kept only where order is not implied by
//! position (the two heaps beside the wheel); see `EventQueue`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::packet::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// A flow's first byte is ready at its source host (`a` = flow).
    FlowStart = 0,
    /// An output port finished serialising a packet (`a` = port, `b` = 1 if it is a host's NIC).
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

/// Bits of `b` the operand may use; the kind sits above them.
const OPERAND_BITS: u32 = 29;
/// The largest `b` operand an event carries (ports are numbered below it: `Simulator::build`).
pub const MAX_OPERAND: u32 = (1 << OPERAND_BITS) - 1;

impl EventKind {
    /// The kind whose discriminant is `bits`, which only ever come from `Event::new`.
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        debug_assert!(bits <= EventKind::Pfc as u32);
        // SAFETY: `EventKind` is `repr(u8)` with discriminants 0..=5, and `bits` are the ones
        // `Event::new` stored from a valid kind. A `match` here cost 8 instructions per event
        // (on top of the dispatch on the kind it produced): 2% of a busy run.
        unsafe { std::mem::transmute::<u8, EventKind>(bits as u8) }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: Time,
    pub a: u32,
    /// The `b` operand below `OPERAND_BITS`, the kind above.
    b_kind: u32,
}

impl Event {
    #[inline]
    fn new(time: Time, kind: EventKind, a: u32, b: u32) -> Self {
        debug_assert!(b <= MAX_OPERAND);
        Event {
            time,
            a,
            b_kind: b | (kind as u32) << OPERAND_BITS,
        }
    }

    #[inline]
    pub fn kind(&self) -> EventKind {
        EventKind::from_bits(self.b_kind >> OPERAND_BITS)
    }

    #[inline]
    pub fn b(&self) -> u32 {
        self.b_kind & MAX_OPERAND
    }
}

/// An event with its insertion number, for the heaps, where position does not give it.
#[derive(Clone, Copy, Debug)]
struct Numbered {
    event: Event,
    order: u64,
}

impl Numbered {
    #[inline]
    fn key(&self) -> (Time, u64) {
        (self.event.time, self.order)
    }
}

impl PartialEq for Numbered {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Numbered {}
impl PartialOrd for Numbered {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Numbered {
    // Reversed so that std's max-heap pops the earliest event.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// log2 of a calendar bucket's width in picoseconds (about 4 ns). Wider buckets mean more events
/// to sort per bucket but fewer buckets in use at once: a busy fabric schedules most events
/// about a link's latency ahead, and the buckets that span that stay in the first-level cache
/// at this width. On the k=16 fat-tree benchmark, 4 ns buckets ran 16% faster than 1 ns ones
/// (least CPU time of five runs each, alternating); 2, 8 and 16 ns ones ran slower than 4 ns.
const BUCKET_SHIFT: u32 = 12;

/// Bits of time sorted per pass of the bucket sort (`sort_current`).
const RADIX_BITS: u32 = 6;

/// Buckets in the wheel at most (a 16.8 us window); later events wait in an overflow heap.
const WHEEL_BITS: u32 = 12;
const WHEEL: u64 = 1 << WHEEL_BITS;
/// Buckets in the wheel at least: one word of the occupied bits.
const MIN_WHEEL: u64 = 64;

/// A calendar queue: a wheel of unsorted buckets 4 ns wide, the bucket being drained kept
/// sorted (with a small heap beside it for events scheduled into it while it drains), and a
/// binary heap for events beyond the wheel. Pushing is O(1) and popping amortised O(log bucket
/// size), against O(log pending) cache-missing steps for a heap of all pending events.
///
/// Buckets hold bare events: a bucket receives its events in insertion order and is sorted
/// stably by time, so position keeps the order, and every event of the bucket being drained
/// was inserted before any in `late` (which fills only while it drains). Only the heaps need
/// insertion numbers. 16-byte events instead of 24 move a third fewer bytes through the sort.
///
/// The wheel spans as few buckets as the run's events need (`with_window`): every bucket keeps
/// the memory of the largest load it held, and a wheel wider than the events' reach spreads
/// each push and sort over more of it than the caches and the TLB hold. On the k=16 fat-tree
/// benchmark (events at most 1.3 us ahead), 512 buckets instead of 4,096 cut the peak resident
/// memory from 117 to 67 MB and the CPU time by about an eighth (1.32 -> 1.17 s, least of nine
/// runs each) with 1% fewer instructions and misses: the time went to what a cache model
/// leaves out, most likely TLB misses (docs/guide/performance.md).
pub struct EventQueue {
    /// Fixed-size, so that an index masked to the wheel needs no bounds check; the first
    /// `wheel` are used.
    buckets: Box<[Vec<Event>; WHEEL as usize]>,
    /// Buckets in use (a power of two from `MIN_WHEEL` to `WHEEL`), and that less one.
    wheel: u64,
    mask: u64,
    /// One bit per bucket: non-empty.
    occupied: [u64; (WHEEL / 64) as usize],
    /// The bucket being drained, sorted ascending from `head`.
    current: Vec<Event>,
    head: usize,
    /// Absolute slot (time >> BUCKET_SHIFT) of `current`.
    current_slot: u64,
    overflow: BinaryHeap<Numbered>,
    /// Events pushed into the bucket being drained: a heap beside it, where inserting into
    /// the sorted bucket would move half of it each time.
    late: BinaryHeap<Numbered>,
    /// Scratch space of the bucket sort (kept to reuse its memory).
    sorted: Vec<Event>,
    /// Events per time within a bucket (`BUCKET_SHIFT` bits), zero between sorts.
    time_counts: Box<[u32; BUCKET]>,
    /// The times within the bucket being sorted that its events have, each once.
    times: Vec<u16>,
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
    /// A queue with the widest wheel, for events at any distance.
    pub fn new() -> Self {
        Self::with_window(Time::MAX)
    }

    /// A queue whose wheel reaches at least `reach` ps past the bucket being drained (as far
    /// as `WHEEL` buckets go): the furthest most events are scheduled ahead. Events beyond it
    /// wait in the overflow heap, correct but slower.
    pub fn with_window(reach: Time) -> Self {
        let needed = (reach >> BUCKET_SHIFT).saturating_add(2);
        let wheel = needed.clamp(MIN_WHEEL, WHEEL).next_power_of_two();
        EventQueue {
            wheel,
            mask: wheel - 1,
            // Built on the heap: a wheel of empty vectors is 96 KB, too much for a thread's stack.
            buckets: (0..WHEEL)
                .map(|_| Vec::new())
                .collect::<Box<[_]>>()
                .try_into()
                .expect("WHEEL buckets"),
            occupied: [0; (WHEEL / 64) as usize],
            current: Vec::with_capacity(1024),
            head: 0,
            current_slot: 0,
            overflow: BinaryHeap::new(),
            late: BinaryHeap::new(),
            sorted: Vec::with_capacity(1024),
            time_counts: vec![0; BUCKET]
                .into_boxed_slice()
                .try_into()
                .expect("BUCKET counters"),
            times: Vec::with_capacity(64),
            len: 0,
            inserted: 0,
            peak_len: 0,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, time: Time, kind: EventKind, a: u32, b: u32) {
        let event = Event::new(time, kind, a, b);
        let slot = time >> BUCKET_SHIFT;
        if slot <= self.current_slot {
            // Same bucket as the one being drained (time never runs backwards, so never
            // earlier). Its (time, insertion) key sorts it among the bucket's late events.
            let order = self.number();
            self.late.push(Numbered { event, order });
        } else if slot < self.current_slot + self.wheel {
            let i = self.bucket(slot);
            let bucket = &mut self.buckets[i];
            // The bit is set while the bucket holds events: only its first event sets it.
            if bucket.is_empty() {
                self.occupied[i / 64] |= 1 << (i % 64);
            }
            bucket.push(event);
        } else {
            let order = self.number();
            self.overflow.push(Numbered { event, order });
        }
        self.len += 1;
        if self.len > self.peak_len {
            self.peak_len = self.len;
        }
    }

    /// The next insertion number. Only events in a heap carry one, and a heap's events are
    /// compared only with each other's (bucket events by position, `late`'s with the bucket's
    /// by time alone), so numbering just those keeps every comparison's order.
    #[inline(always)]
    fn number(&mut self) -> u64 {
        self.inserted += 1;
        self.inserted
    }

    /// The bucket of absolute slot `slot`: below `wheel`, and below `WHEEL` as the compiler
    /// sees it, so that indexing the buckets needs no bounds check.
    #[inline(always)]
    fn bucket(&self, slot: u64) -> usize {
        (slot & self.mask & (WHEEL - 1)) as usize
    }

    /// The next occupied wheel slot after the current one, if any.
    fn next_wheel_slot(&self) -> Option<u64> {
        let start = self.bucket(self.current_slot + 1);
        let words = (self.wheel / 64) as usize;
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
        let distance = (found as u64).wrapping_sub(self.current_slot) & self.mask;
        Some(self.current_slot + if distance == 0 { self.wheel } else { distance })
    }

    /// Makes the earliest pending bucket current. Returns false when nothing is pending.
    fn advance(&mut self) -> bool {
        let wheel = self.next_wheel_slot();
        let spill = self.overflow.peek().map(|e| e.event.time >> BUCKET_SHIFT);
        let slot = match (wheel, spill) {
            (Some(w), Some(o)) => w.min(o),
            (Some(w), None) => w,
            (None, Some(o)) => o,
            (None, None) => return false,
        };
        self.current_slot = slot;
        self.current.clear();
        self.head = 0;
        let i = self.bucket(slot);
        if wheel == Some(slot) {
            std::mem::swap(&mut self.current, &mut self.buckets[i]);
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        // The window moved: bring overflow events that now fit into the wheel.
        while let Some(e) = self.overflow.peek() {
            let s = e.event.time >> BUCKET_SHIFT;
            if s >= slot + self.wheel {
                break;
            }
            let e = self.overflow.pop().expect("peeked").event;
            if s == slot {
                self.current.push(e);
            } else {
                let j = self.bucket(s);
                self.buckets[j].push(e);
                self.occupied[j / 64] |= 1 << (j % 64);
            }
        }
        self.sort_current();
        true
    }

    /// Sorts the bucket being made current into (time, insertion) order.
    ///
    /// A bucket holds its events in insertion order: events brought in from the overflow heap
    /// come first, heap-ordered, and were all inserted before any event pushed straight into
    /// the wheel for the same slot. A stable sort by time is then the (time, insertion) order.
    /// Within a bucket, time differs only in its low `BUCKET_SHIFT` bits.
    ///
    /// One read of the bucket counts its events per time and notes the times it holds. A busy
    /// fabric's events share few times (links of one rate and latency: on the k=16 fat-tree
    /// benchmark at most 41 in a bucket of about 300 events, and all but 32 of 39,000 buckets
    /// held few enough), so those few times are sorted and the events go to their places in
    /// one stable pass. A bucket of many times takes a least-significant-digit radix sort
    /// instead, two stable passes of 64 counters, which took about half the instructions of
    /// the stable comparison sort before it. On the
    /// benchmark the one pass saved 79 M instructions of 3.96 G (simulated cache misses alike:
    /// the second pass hit the caches).
    fn sort_current(&mut self) {
        let n = self.current.len();
        if n < 2 {
            return;
        }
        let counts = &mut *self.time_counts;
        self.times.clear();
        for e in &self.current {
            let count = &mut counts[time_in_bucket(e)];
            if *count == 0 {
                self.times.push(time_in_bucket(e) as u16);
            }
            *count += 1;
        }
        // The scratch space is filled only where it is shorter than the bucket: filling it anew
        // for every bucket cost a pass.
        if self.sorted.len() < n {
            self.sorted.resize(n, self.current[0]);
        }
        if self.times.len() <= FEW_TIMES || self.times.len() * 8 <= n {
            self.times.sort_unstable();
            let mut sum = 0;
            for &t in &self.times {
                let count = counts[t as usize];
                counts[t as usize] = sum;
                sum += count;
            }
            let to = &mut self.sorted[..n];
            for e in &self.current {
                let at = &mut counts[time_in_bucket(e)];
                debug_assert!((*at as usize) < n);
                // SAFETY: `at` starts at the number of events at earlier times and grows by one
                // per event at its time, so it stays below `n`, the length of `to`.
                unsafe { *to.get_unchecked_mut(*at as usize) = *e };
                *at += 1;
            }
            for &t in &self.times {
                counts[t as usize] = 0;
            }
            // The scratch space holds the bucket now; the bucket's memory becomes the scratch.
            std::mem::swap(&mut self.current, &mut self.sorted);
            self.current.truncate(n);
        } else {
            // Both digits' counts from the times' counts; then a pass per digit, the low one
            // into the scratch space and the high one back into the bucket.
            let mut low = [0u32; RADIX];
            let mut high = [0u32; RADIX];
            for &t in &self.times {
                let count = std::mem::take(&mut counts[t as usize]);
                low[t as usize & (RADIX - 1)] += count;
                high[t as usize >> RADIX_BITS] += count;
            }
            scatter(&self.current, &mut self.sorted[..n], &mut low, 0);
            scatter(&self.sorted[..n], &mut self.current, &mut high, RADIX_BITS);
        }
        debug_assert!(self.current.windows(2).all(|w| w[0].time <= w[1].time));
        debug_assert!(self
            .times
            .iter()
            .all(|&t| self.time_counts[t as usize] == 0));
    }

    /// The next event, if it is due at `horizon` or before; `Err(pending)` otherwise, with
    /// whether any event is pending at all.
    #[inline]
    pub fn pop_until(&mut self, horizon: Time) -> Result<Event, bool> {
        if self.head == self.current.len() && self.late.is_empty() && !self.advance() {
            return Err(false);
        }
        // On a tie the bucket's event goes first: it was inserted before any of `late`'s.
        let from_late = match (self.current.get(self.head), self.late.peek()) {
            (Some(c), Some(l)) => l.event.time < c.time,
            (None, _) => true,
            (Some(_), None) => false,
        };
        let ev = if from_late {
            let ev = self.late.peek().expect("late holds the next event").event;
            if ev.time > horizon {
                return Err(true);
            }
            self.late.pop();
            ev
        } else {
            let ev = self.current[self.head];
            if ev.time > horizon {
                return Err(true);
            }
            self.head += 1;
            ev
        };
        self.len -= 1;
        Ok(ev)
    }

    /// The next event, whenever it is due.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.pop_until(Time::MAX).ok()
    }

    /// An event about `k` places behind the next one, if it is in the bucket being drained
    /// (events in `late` are not counted: this is a hint for prefetching).
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

const RADIX: usize = 1 << RADIX_BITS;
/// Times within a bucket.
const BUCKET: usize = 1 << BUCKET_SHIFT;
/// A bucket holding at most this many times (or few for its events) is sorted in one pass.
const FEW_TIMES: usize = 32;

/// `e`'s time within its bucket.
#[inline(always)]
fn time_in_bucket(e: &Event) -> usize {
    (e.time as usize) & (BUCKET - 1)
}
// Two digits cover every time bit that differs within a bucket.
const _: () = assert!(2 * RADIX_BITS == BUCKET_SHIFT);

/// The `RADIX_BITS` bits of `e`'s time at `shift`.
#[inline(always)]
fn digit(e: &Event, shift: u32) -> usize {
    ((e.time >> shift) as usize) & (RADIX - 1)
}

/// One stable counting-sort pass of `from` into `to` (as long as `from`) by the digit at
/// `shift`, whose counts are `at`.
fn scatter(from: &[Event], to: &mut [Event], at: &mut [u32; RADIX], shift: u32) {
    let mut sum = 0;
    for slot in at.iter_mut() {
        let count = *slot;
        *slot = sum;
        sum += count;
    }
    debug_assert_eq!(from.len(), to.len());
    for e in from {
        let d = digit(e, shift);
        debug_assert!((at[d] as usize) < to.len());
        // SAFETY: `at[d]` starts at the number of events with a smaller digit and grows by one
        // per event with digit d, so it stays below `from.len()`, which is `to.len()`.
        unsafe { *to.get_unchecked_mut(at[d] as usize) = *e };
        at[d] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_keeps_its_kind_and_operands() {
        let kinds = [
            EventKind::FlowStart,
            EventKind::TxDone,
            EventKind::Arrive,
            EventKind::Timer,
            EventKind::RtoScan,
            EventKind::Pfc,
        ];
        for kind in kinds {
            for b in [0, 1, 0x1FF, MAX_OPERAND] {
                let e = Event::new(5, kind, u32::MAX, b);
                assert_eq!((e.kind(), e.a, e.b()), (kind, u32::MAX, b));
            }
        }
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }

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

    /// A bucket of few times (sorted in one pass) and one of many (the radix sort): both pop
    /// by time, and events at one time in the order they were pushed.
    #[test]
    fn a_bucket_of_few_or_many_times_pops_in_time_then_insertion_order() {
        for distinct in [3u64, 200] {
            let mut q = EventQueue::new();
            let base = 7 << BUCKET_SHIFT;
            // Times scattered over the bucket, each pushed three times, out of order.
            let mut pushed = Vec::new();
            for round in 0..3u32 {
                for i in 0..distinct {
                    let time = base + (i * 2_654_435_761) % distinct * (BUCKET as u64 / distinct);
                    let a = round * 1_000 + i as u32;
                    q.push(time, EventKind::Arrive, a, 0);
                    pushed.push((time, a));
                }
            }
            // A stable sort by time of the pushes is the expected order.
            pushed.sort_by_key(|&(time, _)| time);
            let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
                .map(|e| (e.time, e.a))
                .collect();
            assert_eq!(popped, pushed, "{distinct} times in the bucket");
        }
    }

    #[test]
    fn ties_pop_in_insertion_order_across_overflow_wheel_and_current_bucket() {
        ties_across_paths(EventQueue::new());
        ties_across_paths(EventQueue::with_window(0));
    }

    fn ties_across_paths(mut q: EventQueue) {
        // Three events at one far time T, inserted through each path a bucket fills by: the
        // overflow heap (T beyond the wheel), the wheel (T within it), the bucket being drained
        // (T now). Between them, events at other times in the same bucket, unsorted.
        let t = (q.wheel + 5) << BUCKET_SHIFT;
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
    fn pop_until_stops_at_the_horizon_and_tells_what_is_pending() {
        let mut q = EventQueue::new();
        q.push(100, EventKind::Arrive, 1, 0);
        // Pushed into the bucket being drained once it is current: served from `late`.
        assert_eq!(q.pop_until(100).map(|e| e.a), Ok(1));
        q.push(150, EventKind::Arrive, 2, 0);
        q.push(120, EventKind::Arrive, 3, 0);
        assert_eq!(q.pop_until(110).map(|e| e.a), Err(true));
        assert_eq!(q.pop_until(130).map(|e| e.a), Ok(3));
        assert_eq!(q.pop_until(200).map(|e| e.a), Ok(2));
        assert_eq!(q.pop_until(200).map(|e| e.a), Err(false));
        assert!(q.is_empty());
    }

    #[test]
    fn a_busy_bucket_pops_in_time_then_insertion_order() {
        // Hundreds of events in one bucket, times spread over every bit the bucket sort
        // passes over, many of them equal.
        let mut q = EventQueue::new();
        let base = 7u64 << BUCKET_SHIFT;
        let mut want = Vec::new();
        let mut x = 12345u64;
        for i in 0..600u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = base + (x >> 33) % (1 << BUCKET_SHIFT) / 7 * 7;
            q.push(t, EventKind::Timer, i, 0);
            want.push((t, i));
        }
        want.sort_by_key(|&(t, i)| (t, i));
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time, e.a))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_wheel_spans_the_reach_asked_for_in_whole_powers_of_two() {
        let bucket = 1u64 << BUCKET_SHIFT;
        // Nothing ahead, or less than a bucket: the smallest wheel.
        assert_eq!(EventQueue::with_window(0).wheel, MIN_WHEEL);
        // The k=16 benchmark's hop (1 us of latency, 4,000 B at 100 Gb/s): 512 buckets.
        assert_eq!(EventQueue::with_window(1_320_000).wheel, 512);
        // Exactly so many buckets ahead, and the two the bucket being drained adds.
        assert_eq!(EventQueue::with_window(126 * bucket).wheel, 128);
        assert_eq!(EventQueue::with_window(127 * bucket).wheel, 256);
        // No further than the widest wheel, however far.
        assert_eq!(EventQueue::with_window(Time::MAX).wheel, WHEEL);
        assert_eq!(EventQueue::new().wheel, WHEEL);
        for reach in [0, 1_000, 1_320_000, 5_000_000, 1 << 40] {
            let q = EventQueue::with_window(reach);
            assert!(q.wheel.is_power_of_two() && q.mask == q.wheel - 1);
            // An event `reach` ahead of the start of the current bucket fits in the wheel.
            assert!(
                q.wheel == WHEEL || (reach >> BUCKET_SHIFT) + 1 < q.wheel,
                "{reach}"
            );
        }
    }

    #[test]
    fn matches_a_reference_heap_across_wheel_and_overflow() {
        // Every wheel width, the narrowest most often beyond its reach.
        for reach in [0, 300_000, 1_320_000, Time::MAX] {
            matches_a_reference_heap(reach);
        }
    }

    fn matches_a_reference_heap(reach: Time) {
        // Random pushes interleaved with pops, spanning same-bucket, in-wheel and far-future
        // times: the calendar queue must pop exactly what a plain heap pops.
        let mut rng = crate::sim::random::SimRng::new(3);
        let mut q = EventQueue::with_window(reach);
        let mut reference: BinaryHeap<Numbered> = BinaryHeap::new();
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
                reference.push(Numbered {
                    event: Event::new(now + delta, EventKind::Arrive, step, 0),
                    order: inserted,
                });
                inserted += 1;
            } else {
                let (got, want) = (q.pop().unwrap(), reference.pop().unwrap().event);
                assert_eq!((got.time, got.a), (want.time, want.a));
                now = got.time;
            }
        }
        while let Some(Numbered { event: want, .. }) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.time, e.a)), Some((want.time, want.a)));
        }
        assert!(q.pop().is_none());
        assert!(q.is_empty());
    }
}
