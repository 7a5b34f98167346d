//! [`ReadTask`]: blocking work on a thread of its own, as a future, for the async sources.
//!
//! It uses nothing else of the crate.
//!
//! The std sources implement [`AsyncRandomAccess`](quiver::source::AsyncRandomAccess) without
//! an async runtime: a read (or a simulated delay) runs on a fresh thread and the future
//! completes when it ends, waking whoever polled it. Any executor can run them, and the I/O
//! overlaps with the caller's work on the polling thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// The result of `work` once its thread has finished, and the waker to call then.
type Slot<T> = Arc<Mutex<(Option<T>, Option<Waker>)>>;

/// A future for blocking work running on its own thread.
#[derive(Debug)]
pub struct ReadTask<T> {
    slot: Slot<T>,
}

impl<T: Send + 'static> ReadTask<T> {
    /// Starts `work` on a new thread, now.
    pub fn spawn(work: impl FnOnce() -> T + Send + 'static) -> Self {
        let slot: Slot<T> = Arc::new(Mutex::new((None, None)));
        let done = Arc::clone(&slot);
        std::thread::spawn(move || {
            let result = work();
            let waker = {
                let mut slot = done.lock().unwrap_or_else(PoisonError::into_inner);
                slot.0 = Some(result);
                slot.1.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        ReadTask { slot }
    }

    /// A task that is already done.
    pub fn ready(value: T) -> Self {
        ReadTask {
            slot: Arc::new(Mutex::new((Some(value), None))),
        }
    }
}

impl<T> Future for ReadTask<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
