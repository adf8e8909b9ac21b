//! A ring buffer of `Copy` items for the lossy FIFOs: `VecDeque`'s operations, but each small
//! enough to be compiled into the datapath's arrival and departure code (the standard
//! `push_back` stays a call there, once per queued packet), with growth kept out of line. The
//! slots number a power of two, so that an index masked by their number less one is always
//! in range and needs no bounds check.

///
/// 32 bytes (the slots' vector and two `u32`s), so that a port's transmitter, byte counts and
/// priority FIFO share one cache line (`fifos::Fifos`).
#[derive(Debug)]
pub struct Ring<T> {
    /// The slots; their number is zero or a power of two, below 2^32.
    buf: Vec<T>,
    head: u32,
    len: u32,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub fn push_back(&mut self, item: T) {
        if self.len as usize == self.buf.len() {
            self.grow(item);
        }
        let i = (self.head as usize + self.len as usize) & (self.buf.len() - 1);
        debug_assert!(i < self.buf.len());
        // SAFETY: the slots number a power of two (`grow`), so `i`, masked by their number
        // less one, is one of them.
        unsafe { *self.buf.get_unchecked_mut(i) = item };
        self.len += 1;
    }

    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        debug_assert!((self.head as usize) < self.buf.len());
        // SAFETY: `head` is always masked by the slots' number less one (a power of two).
        let item = unsafe { *self.buf.get_unchecked(self.head as usize) };
        // The slots number at most 2^31 (`grow`), so their number less one fits a `u32`.
        self.head = (self.head + 1) & (self.buf.len() - 1) as u32;
        self.len -= 1;
        Some(item)
    }

    #[inline(always)]
    pub fn pop_back(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.buf[(self.head as usize + self.len as usize) & (self.buf.len() - 1)])
    }

    /// Doubles the slots (at least 4), the items in order from slot 0; `fill` pads the rest.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (2 * self.buf.len()).max(4);
        assert!(cap <= 1 << 31, "a FIFO of more than 2^31 packets");
        let mut buf = Vec::with_capacity(cap);
        let mask = self.buf.len().wrapping_sub(1);
        let head = self.head as usize;
        buf.extend((0..self.len as usize).map(|i| self.buf[(head + i) & mask]));
        buf.resize(cap, fill);
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_vecdeque_across_wraps_and_growth() {
        let mut ring = Ring::default();
        let mut model = VecDeque::new();
        let mut x: u32 = 1;
        for step in 0..5_000u32 {
            // A fixed pseudo-random mix of pushes and pops from both ends.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            match x % 5 {
                0..=2 => {
                    ring.push_back(step);
                    model.push_back(step);
                }
                3 => assert_eq!(ring.pop_front(), model.pop_front()),
                _ => assert_eq!(ring.pop_back(), model.pop_back()),
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.is_empty(), model.is_empty());
        }
        while let Some(v) = model.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert_eq!(ring.pop_front(), None);
        assert_eq!(ring.pop_back(), None);
    }
}
