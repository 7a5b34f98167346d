//! Calls quiver from a `no_std` binary so that the check covers real code paths, not just linking.
#![no_std]
#![no_main]

#[cfg(feature = "alloc")]
extern crate alloc;

/// A file's trailer: footer length 0 and the magic (not a valid footer: parsing must fail cleanly).
static TRAILER: [u8; 10] = *b"\0\0\0\0ARROW1";

/// An Arrow IPC file to read without an allocator: quiver's own `trips.arrow` example when the
/// check is built by `.ci/run`, which runs it; any file works.
static FILE: &[u8] = include_bytes!("../../../examples/data/trips.arrow");

/// Bytes of JSON the file gives (written to a sink that only counts).
struct Count(usize);

impl embedded_io::ErrorType for Count {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Opens `file`, reads every batch and encodes it to NDJSON through a 256-byte buffer, with no
/// allocation; returns the bytes of JSON, or `None` on an error.
fn no_alloc_json(file: &[u8]) -> Option<usize> {
    use quiver::json::{EncoderOptions, JsonFormat};
    use quiver::no_alloc::{Batch, Encoder, FileReader};
    let mut scratch = [0u8; 64 * 1024];
    let mut reader: FileReader<_> = FileReader::open(file, &mut scratch).ok()?;
    let mut out = Count(0);
    for i in 0..reader.num_batches() {
        let batch: Batch = reader.batch(i).ok()?;
        let options = EncoderOptions::default();
        let mut encoder: Encoder = Encoder::new(&batch, JsonFormat::LineDelimited, options).ok()?;
        encoder.write_through(&mut out, &mut [0u8; 256]).ok()?;
    }
    Some(out.0)
}

#[unsafe(no_mangle)]
pub extern "C" fn main() -> i32 {
    // The flatbuffer views need no allocator.
    let footer_ok = quiver::format::Footer::parse(&TRAILER).is_ok();
    let footer_ok = footer_ok && no_alloc_json(FILE).is_some_and(|bytes| bytes > 0);
    #[cfg(feature = "alloc")]
    let footer_ok = footer_ok
        && quiver::ipc::FileReader::open(&TRAILER[..], quiver::ipc::ReaderOptions::default()).is_ok();
    i32::from(footer_ok)
}

#[cfg(feature = "alloc")]
mod allocator {
    use core::alloc::{GlobalAlloc, Layout};

    /// An allocator that has no memory: enough to type-check the alloc build.
    struct Empty;

    // SAFETY: `alloc` always reports failure with a null pointer, which the contract allows, and
    // `dealloc` is never given a pointer since none is ever handed out.
    unsafe impl GlobalAlloc for Empty {
        unsafe fn alloc(&self, _: Layout) -> *mut u8 {
            core::ptr::null_mut()
        }

        unsafe fn dealloc(&self, _: *mut u8, _: Layout) {}
    }

    #[global_allocator]
    static ALLOCATOR: Empty = Empty;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
