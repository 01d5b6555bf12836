//! Readers that bound decompression: a byte counter on the compressed side and a guard on the
//! decompressed side that stops a gzip bomb (too high an expansion ratio, or too many bytes in
//! all) and leaves the reason on a [`Tripwire`], since tar wraps the I/O error it sees.

use super::ExtractLimits;
use std::cell::{Cell, RefCell};
use std::io::Read;
use std::rc::Rc;

/// Counts the bytes read through it.
pub(super) struct Counted<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R> Counted<R> {
    pub(super) fn new(inner: R) -> (Self, Rc<Cell<u64>>) {
        let count = Rc::new(Cell::new(0));
        (Counted { inner, count: count.clone() }, count)
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// Why a guard stopped the stream, readable after tar has wrapped the error.
#[derive(Clone, Default)]
pub(super) struct Tripwire(Rc<RefCell<Option<String>>>);

impl Tripwire {
    pub(super) fn reason(&self) -> Option<String> {
        self.0.borrow().clone()
    }

    fn trip(&self, reason: String) -> std::io::Error {
        *self.0.borrow_mut() = Some(reason.clone());
        std::io::Error::other(reason)
    }
}

/// Stops the decompressed stream when it grows too large or too fast for its compressed size.
pub(super) struct RatioGuard<R> {
    inner: R,
    compressed: Rc<Cell<u64>>,
    decompressed: u64,
    tripwire: Tripwire,
    max_ratio: u64,
    ratio_floor: u64,
    max_stream: u64,
}

impl<R> RatioGuard<R> {
    pub(super) fn new(inner: R, compressed: Rc<Cell<u64>>, tripwire: Tripwire, limits: &ExtractLimits) -> Self {
        // Headers and padding come on top of file contents: allow 2 KiB per entry of overhead.
        let overhead = limits.max_entries.saturating_mul(2048);
        RatioGuard {
            inner,
            compressed,
            decompressed: 0,
            tripwire,
            max_ratio: limits.max_ratio,
            ratio_floor: limits.ratio_floor_bytes,
            max_stream: limits.max_total_bytes.saturating_add(overhead),
        }
    }
}

impl<R: Read> Read for RatioGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.decompressed += n as u64;
        if self.decompressed > self.max_stream {
            return Err(self
                .tripwire
                .trip(format!("decompresses to more than {} bytes; refusing to extract", self.max_stream)));
        }
        let compressed = self.compressed.get().max(1);
        if self.decompressed > self.ratio_floor && self.decompressed / compressed > self.max_ratio {
            return Err(self.tripwire.trip(format!(
                "gzip expansion ratio above {}:1 ({} bytes from {compressed}); looks like a gzip bomb, refusing to extract",
                self.max_ratio, self.decompressed
            )));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_ratio: u64, floor: u64) -> ExtractLimits {
        ExtractLimits { max_ratio, ratio_floor_bytes: floor, ..ExtractLimits::default() }
    }

    #[test]
    fn ratio_guard_trips_past_the_floor() {
        let counter = Rc::new(Cell::new(10));
        let tripwire = Tripwire::default();
        let mut guard = RatioGuard::new(std::io::repeat(0).take(10_000), counter, tripwire.clone(), &limits(100, 100));
        let err = std::io::copy(&mut guard, &mut std::io::sink()).unwrap_err();
        assert!(err.to_string().contains("gzip bomb"));
        assert!(tripwire.reason().unwrap().contains("ratio above 100:1"));
    }

    #[test]
    fn ratio_guard_lets_ordinary_ratios_through() {
        let counter = Rc::new(Cell::new(1_000));
        let mut guard =
            RatioGuard::new(std::io::repeat(0).take(10_000), counter, Tripwire::default(), &limits(100, 100));
        assert_eq!(std::io::copy(&mut guard, &mut std::io::sink()).unwrap(), 10_000);
    }

    #[test]
    fn counted_counts() {
        let (mut reader, count) = Counted::new(&b"hello"[..]);
        std::io::copy(&mut reader, &mut std::io::sink()).unwrap();
        assert_eq!(count.get(), 5);
    }
}
