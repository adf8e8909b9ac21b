//! The contract between the engine and a transport.
//!
//! A transport sees the network only through `Host`: it sends packets from hosts, reads its
//! flows' endpoints and sizes, reports progress and sets timers. The engine owns queues,
//! forwarding and the event loop and calls the transport back through `Transport`, so a new
//! transport (MPTCP, a PFC-aware one) is a new module that implements both sides of this file,
//! not an edit of the engine.

use super::config::SimConfig;
use super::layer_choice::LayerSignal;
use super::packet::{Packet, Time};

/// TCP's retransmission timeout before its first RTT sample, the default of
/// `SimConfig::initial_rto`: 1 ms. A real stack starts its data after a handshake whose RTT
/// sample puts the RTO at its floor for data-centre round trips; this simulator has no SYN, so
/// a first window runs under this value. RFC 6298's 1 s (for no sample at all) made a flow that
/// lost its first window's tail wait a second: 2-3% of the flows of a loaded Slim Fly, while
/// removing few spurious retransmissions (those follow later timeouts, and recovery without
/// SACK). Paths whose round trip exceeds 1 ms need a larger value.
pub const TCP_INITIAL_RTO: Time = 1_000_000_000;

/// NDP's timeout before its first RTT sample. NDP's timeout is a last resort for lost
/// headers and pulls (trimming switches report every loss), its clock runs per packet from
/// when the packet left the source's NIC, and 1 ms covers a first window crossing a few
/// full 8-packet queues of a long path, where a 200 µs floor alone fired before any
/// acknowledgement could return.
pub const NDP_INITIAL_RTO: Time = 1_000_000_000;

/// Where a data packet goes when the transport, not the engine's load balancing, picks its
/// path (MPTCP subflows), and the subflow it belongs to.
#[derive(Clone, Copy, Debug)]
pub struct SubflowPath {
    pub plane: u8,
    pub layer: u8,
    /// Per-switch hashing input that selects among equal-cost next hops.
    pub entropy: u32,
    pub subflow: u8,
    /// The packet's number within its subflow (carried in `Packet::aux`).
    pub subflow_seq: u32,
}

/// What a transport may see and do: the hosts' side of the network.
pub trait Host {
    fn now(&self) -> Time;
    fn config(&self) -> &SimConfig;
    /// Data packets flow `flow` is cut into.
    fn n_packets(&self, flow: usize) -> u32;
    /// Source and destination host of flow `flow`.
    fn endpoints(&self, flow: usize) -> (u32, u32);
    /// Whether the receiver already holds every byte of flow `flow`.
    fn received_all(&self, flow: usize) -> bool;
    /// Whether the sender already learnt that every byte of flow `flow` was acknowledged.
    fn sender_done(&self, flow: usize) -> bool;
    /// Records that the receiver now holds every byte (only the first call counts).
    fn finish_at_receiver(&mut self, flow: usize);
    /// Records that the sender now knows every byte was acknowledged.
    fn finish_at_sender(&mut self, flow: usize);
    /// Whether a copy of data packet `seq` of `flow` still waits at the source's NIC: it cannot
    /// have been lost, so a retransmission timer must not count that wait.
    fn waiting_at_source(&self, flow: usize, seq: u32) -> bool;
    /// When the latest copy of data packet `seq` of `flow` left the source's NIC (`NO_TIME`:
    /// none did); retransmission timers run from here.
    fn departed_at(&self, flow: usize, seq: u32) -> Time;
    /// Sends data packet `seq` of `flow` from its source on the path the load balancing picks.
    fn send_data(&mut self, flow: usize, seq: u32, is_rtx: bool);
    /// Sends a control packet (ACK, NACK, PULL) from `host`.
    fn send(&mut self, host: u32, packet: Packet);
    /// Layer and entropy for feedback travelling back to the source of `flow`.
    fn feedback_path(&mut self, flow: usize, data_layer: u8) -> (u8, u32);
    /// The layer `flow`'s data currently takes.
    fn current_layer(&self, flow: usize) -> u8;
    /// Reports what the transport learnt about `layer` for `flow` (deliveries and congestion);
    /// FatPaths' layer policy may move the flow to another layer in response.
    fn layer_signal(&mut self, flow: usize, layer: u8, signal: LayerSignal);
    /// Counts the payload of data packet `packet` as delivered for the first time.
    fn count_delivered(&mut self, packet: &Packet);
    /// Counts the payload of data packet `packet` as a duplicate.
    fn count_duplicate(&mut self, packet: &Packet);
    fn count_timeout(&mut self);
    /// Calls `Transport::on_timer(operand)` back at time `at`.
    fn set_timer(&mut self, at: Time, operand: u32);
    /// Serialisation time of `bytes` on `host`'s NIC.
    fn nic_serialisation(&self, host: u32, bytes: u32) -> Time;
    /// Planes of the fabric: NICs per host.
    fn planes(&self) -> u8;
    /// The plane a single-path flow sends in (its control packets too).
    fn plane(&self, flow: usize) -> u8;
    /// Sends data packet `seq` of `flow` on `path` instead of the load balancing's choice.
    fn send_subflow_data(&mut self, flow: usize, seq: u32, is_rtx: bool, path: SubflowPath);
}

/// A transport protocol: the per-flow state machines at sources and receivers.
///
/// `Send + Sync` because the simulator runs outside the Python lock and its Python object may
/// be used from any thread.
pub trait Transport<H: Host>: Send + Sync {
    /// Whether switches trim payloads instead of dropping them and serve headers and control
    /// packets first (NDP's switch model), rather than tail-drop one FIFO.
    fn trims(&self) -> bool;
    /// The flow's first byte is ready at its source.
    fn start(&mut self, host: &mut H, flow: usize);
    /// A data packet (whole or trimmed) reached its receiver.
    fn on_data(&mut self, host: &mut H, packet: Packet);
    /// A control packet reached the source of its flow.
    fn on_feedback(&mut self, host: &mut H, packet: Packet);
    /// A timer set with `Host::set_timer` expired.
    fn on_timer(&mut self, host: &mut H, operand: u32);
    /// Periodic check of an unfinished sender for a retransmission timeout.
    fn check_timeout(&mut self, host: &mut H, flow: usize);
}
