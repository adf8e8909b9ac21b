//! Packets and simulated time: the vocabulary the engine and the transports share.
//!
//! It sits below both so that a transport can build and read packets without knowing the
//! engine that carries them.

/// Simulated time in picoseconds.
pub type Time = u64;

/// "Never", for times that have not happened (a flow not finished yet, no packet sent yet).
pub const NO_TIME: Time = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    Data,
    Ack,
    Nack,
    Pull,
}

pub mod flags {
    /// Payload cut off by a full queue; only the header travels on.
    pub const TRIMMED: u8 = 1;
    /// Congestion experienced: set by a switch queue above the ECN threshold.
    pub const ECN_CE: u8 = 2;
    /// ECN echo on an ACK.
    pub const ECE: u8 = 4;
    /// An NDP ACK or NACK that also carries a pull.
    pub const PULL: u8 = 8;
    /// An NDP NACK asking the source to move the flow to another layer (FatPaths).
    pub const NEW_LAYER: u8 = 16;
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// When the source sent the data packet (echoed on ACKs for RTT estimation).
    pub sent_at: Time,
    pub flow: u32,
    /// Packet number within the flow.
    pub seq: u32,
    /// NDP: cumulative pull number. TCP ACK: cumulative ACK (next packet expected).
    pub aux: u32,
    /// Per-switch hashing input that selects among equal-cost next hops.
    pub entropy: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub kind: PacketKind,
    pub flags: u8,
    pub layer: u8,
    /// Plane (NIC of the source and destination host) the packet travels in; it never changes.
    pub plane: u8,
    /// MPTCP: the subflow of the connection `flow` that carries the packet (0 otherwise).
    pub subflow: u8,
}
