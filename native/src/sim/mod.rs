//! Packet-level discrete-event simulator of a layered fabric (the engine behind
//! `fatpaths simulate`).
//!
//! The model follows htsim's level of abstraction: hosts with a NIC, per-port output queues on
//! switches, links with a rate and a latency, store-and-forward switching, time in integer
//! picoseconds. Forwarding is per destination switch and per layer, read from the same tables
//! that `fatpaths compile` writes, so a simulated packet takes exactly the paths a real switch
//! would.
//!
//! Layout, each module using only those listed before it: `packet` (packets and time),
//! `copies` (where each data packet's copies are), `random`, `layer_choice` (FatPaths' layer
//! choice), `network` (ports and forwarding candidates), `switch_routing` (switch-side routing
//! schemes and virtual channels), `config`, `queues` (the queue disciplines: drop-tail, RED,
//! ECN marking, NDP trimming, PFC, and hosts' NIC lanes), `events` (the event queue),
//! `transport` (the `Transport` and `Host` traits), `ndp` and `tcp` (transports, TCP covering
//! NewReno and DCTCP), `mptcp` (TCP subflows over several planes with coupled congestion
//! control), `phases` (flows in barrier-separated phases), `engine` (the datapath and the event loop), `invariants` (the accounting
//! identities every run is checked against), `python` (the small PyO3 surface).

pub mod config;
pub mod copies;
pub mod engine;
pub mod events;
pub mod invariants;
pub mod layer_choice;
pub mod mptcp;
pub mod ndp;
pub mod network;
pub mod packet;
pub mod phases;
pub mod python;
pub mod queues;
pub mod random;
pub mod switch_routing;
pub mod tcp;
pub mod transport;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_mptcp;
#[cfg(test)]
mod tests_phases;
#[cfg(test)]
mod tests_switch_routing;
#[cfg(test)]
mod tests_tcp_options;
#[cfg(test)]
mod tests_tcp_rto;
