//! Calls quiver from a `no_std` binary so that the check covers real code paths, not just linking.
#![no_std]
#![no_main]

#[cfg(feature = "alloc")]
extern crate alloc;

/// A file's trailer: footer length 0 and the magic (not a valid footer: parsing must fail cleanly).
static TRAILER: [u8; 10] = *b"\0\0\0\0ARROW1";

#[unsafe(no_mangle)]
pub extern "C" fn main() -> i32 {
    // The flatbuffer views need no allocator.
    let footer_ok = quiver::format::Footer::parse(&TRAILER).is_ok();
    #[cfg(feature = "alloc")]
    let footer_ok = footer_ok
        && quiver::FileReader::open(&TRAILER[..], quiver::ReaderOptions::default()).is_ok();
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
