//! Accounting identities every run must satisfy, checked from the engine's counters whenever a
//! caller asks (at the end of a run, typically). They are cheap: a pass over the flows and one
//! over the packet arena. A run that breaks one is not to be trusted, whatever its FCTs say.

use super::engine::{Counters, FlowRecord};
use super::packet::{Time, NO_TIME};

/// One identity and whether the run satisfied it; `detail` says by how much it did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    pub name: &'static str,
    pub holds: bool,
    pub detail: String,
}

/// Packets inside the network when the check runs (queued anywhere, NICs included, or on a
/// wire).
#[derive(Clone, Copy, Debug, Default)]
pub struct InNetwork {
    /// Data packets with their payload.
    pub data: u64,
    /// Trimmed data packets (headers).
    pub headers: u64,
}

fn invariant(name: &'static str, failure: Option<String>) -> Invariant {
    Invariant {
        name,
        holds: failure.is_none(),
        detail: failure.unwrap_or_default(),
    }
}

/// Checks every identity. `min_fct(flow)` is the least time a flow can take: its bytes
/// serialised at its source's NICs. `pfc` is the lossless queues' own conservation check.
pub fn check(
    counters: &Counters,
    flows: &[FlowRecord],
    in_network: InNetwork,
    min_fct: &dyn Fn(&FlowRecord) -> Time,
    pfc: Option<Result<(), String>>,
) -> Vec<Invariant> {
    let mut out = vec![
        invariant("bytes_delivered", bytes_delivered(counters, flows)),
        invariant("packets_conserved", packets_conserved(counters, in_network)),
        invariant(
            "retransmissions_follow_losses",
            retransmissions(counters, flows),
        ),
        invariant("fct_at_least_serialisation", fct_bound(flows, min_fct)),
    ];
    if let Some(pfc) = pfc {
        out.push(invariant("pfc_conserves_packets", pfc.err()));
    }
    out
}

/// Unique bytes delivered are the bytes of the finished flows plus part of each unfinished one.
fn bytes_delivered(c: &Counters, flows: &[FlowRecord]) -> Option<String> {
    let total: u64 = flows.iter().map(|f| f.delivered).sum();
    if total != c.payload_delivered {
        return Some(format!(
            "flows hold {total} bytes, the receivers counted {}",
            c.payload_delivered
        ));
    }
    let bad = flows.iter().enumerate().find(|(_, f)| {
        let finished = f.finish != NO_TIME;
        (finished && f.delivered != f.size) || (!finished && f.delivered >= f.size)
    });
    bad.map(|(i, f)| {
        format!(
            "flow {i}: {} of {} bytes delivered, {}",
            f.delivered,
            f.size,
            if f.finish != NO_TIME {
                "finished"
            } else {
                "unfinished"
            }
        )
    })
}

/// Every data packet sent arrived whole, was trimmed, was dropped or is still inside; every
/// trimmed one's header arrived, was dropped or is still inside.
fn packets_conserved(c: &Counters, inside: InNetwork) -> Option<String> {
    let accounted = c.data_arrivals + c.trims + c.data_drops + inside.data;
    if c.data_packets_sent != accounted {
        return Some(format!(
            "{} data packets sent; {} arrived, {} trimmed, {} dropped, {} inside",
            c.data_packets_sent, c.data_arrivals, c.trims, c.data_drops, inside.data
        ));
    }
    let headers = c.header_arrivals + c.header_drops + inside.headers;
    (c.trims != headers).then(|| {
        format!(
            "{} trims; {} headers arrived, {} dropped, {} inside",
            c.trims, c.header_arrivals, c.header_drops, inside.headers
        )
    })
}

/// A retransmission that is not spurious replaces copies that were all lost, so there are at
/// most as many of them as losses (trims and drops of data packets).
fn retransmissions(c: &Counters, flows: &[FlowRecord]) -> Option<String> {
    let rtx: u64 = flows.iter().map(|f| f.retransmits as u64).sum();
    let needed = rtx.saturating_sub(c.spurious_retransmissions);
    let losses = c.trims + c.data_drops;
    (needed > losses).then(|| {
        format!(
            "{rtx} retransmissions, {} spurious, but only {losses} losses",
            c.spurious_retransmissions
        )
    })
}

fn fct_bound(flows: &[FlowRecord], min_fct: &dyn Fn(&FlowRecord) -> Time) -> Option<String> {
    flows.iter().enumerate().find_map(|(i, f)| {
        let fast = f.finish != NO_TIME && f.finish < f.start.saturating_add(min_fct(f));
        fast.then(|| {
            format!(
                "flow {i} took {} ps, its bytes need {} ps at its NIC",
                f.finish.saturating_sub(f.start),
                min_fct(f)
            )
        })
    })
}
