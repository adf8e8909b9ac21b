//! Layer construction (`fatpaths_cfg/layers/`): the minimise-path-overlap search (`overlap`,
//! called by `layers/overlap.py`).

pub mod overlap;
