//! rayon's global thread pool belongs to the process that started it. A process forked after
//! that (the compile's render workers, verify's checks beside the caller) inherits the pool's
//! bookkeeping but none of its threads, and its first parallel loop would wait for them
//! forever. So every call from Python runs its work through `detached`, which gives a forked
//! process a pool of its own.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The process whose threads the global pool has (0 until some work claims it).
static GLOBAL_POOL_OWNER: AtomicU32 = AtomicU32::new(0);
/// A forked process's own pool, tagged with the process it was built in.
static FORKED_POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// `work` without the interpreter lock, on a thread pool that has threads in this process.
pub fn detached<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, work: F) -> T {
    py.detach(|| in_own_pool(work))
}

pub fn in_own_pool<T: Send, F: FnOnce() -> T + Send>(work: F) -> T {
    let pid = std::process::id();
    match GLOBAL_POOL_OWNER.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => work(),
        Err(owner) if owner == pid => work(),
        Err(_) => forked_pool(pid).install(work),
    }
}

fn forked_pool(pid: u32) -> Arc<ThreadPool> {
    let mut slot = FORKED_POOL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((owner, pool)) = slot.as_ref() {
        if *owner == pid {
            return Arc::clone(pool);
        }
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .build()
            .expect("a thread pool for this process"),
    );
    *slot = Some((pid, Arc::clone(&pool)));
    pool
}
