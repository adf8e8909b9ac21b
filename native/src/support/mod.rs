//! What every stage may use and none owns (as `fatpaths_cfg/support/`): graphs in CSR form
//! (`graph`) and the thread pool that forked processes need (`pool`).

pub mod graph;
pub mod pool;
