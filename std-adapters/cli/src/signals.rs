//! The signals that end a run writing a file or an upload: from the first call of [`watch`] on,
//! SIGINT, SIGTERM and SIGHUP end the process with 128 + the signal number, after the cleanups
//! registered with it have run (`output` removes its partial file, `upload` aborts its
//! multipart upload).
//!
//! It uses nothing of the crate: the modules that leave something behind register a cleanup.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io;
use std::sync::{Mutex, OnceLock, PoisonError};

/// What runs on the signal thread before the process exits, in the order registered. A cleanup
/// may keep a lock taken (forgetting its guard), so that nothing it guards happens after.
static CLEANUPS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `cleanup` (once, however often it is passed) and starts the signal thread once.
/// Called from the main thread only.
pub fn watch(cleanup: fn()) -> io::Result<()> {
    let mut cleanups = CLEANUPS.lock().unwrap_or_else(PoisonError::into_inner);
    if !cleanups.iter().any(|c| *c as usize == cleanup as usize) {
        cleanups.push(cleanup);
    }
    drop(cleanups);
    static WATCHING: OnceLock<()> = OnceLock::new();
    if WATCHING.get().is_some() {
        return Ok(());
    }
    // The handlers are in place when `new` returns; a signal from then on waits in `signals`
    // until the thread takes it.
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the exit, so that no cleanup is registered after.
                let cleanups = CLEANUPS.lock().unwrap_or_else(PoisonError::into_inner);
                for cleanup in cleanups.iter() {
                    cleanup();
                }
                std::process::exit(128 + signal);
            }
        })?;
    let _ = WATCHING.set(());
    Ok(())
}
