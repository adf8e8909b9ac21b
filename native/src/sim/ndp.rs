//! NDP, the "purified" receiver-driven transport.
//!
//! A source sends its first window at line rate and afterwards one packet per pull. Switches
//! trim instead of dropping, so the receiver learns of every loss within one trip and NACKs it;
//! every arrival, whole or trimmed, earns the source one more pull. Pulls leave a receiver's
//! pacer at (just under) its NIC rate, so the sum of its incoming flows cannot exceed its link.

use std::collections::VecDeque;

use super::config::LoadBalancing;
use super::layer_choice::LayerSignal;
use super::packet::{flags, Packet, PacketKind, Time, NO_TIME};
use super::transport::{Host, Transport, NDP_INITIAL_RTO};

const UNSENT: u8 = 0;
const IN_FLIGHT: u8 = 1;
const ACKED: u8 = 2;
const QUEUED: u8 = 3;

#[derive(Default)]
struct NdpFlow {
    // source side
    next_new: u32,
    acked: u32,
    last_pull: u32,
    max_pull: u32,
    rtx: VecDeque<u32>,
    state: Vec<u8>,
    last_progress: Time,
    /// Smoothed RTT and its variation from ACKs (0: no sample yet), and the timeout they give.
    srtt: Time,
    rttvar: Time,
    rto: Time,
    // receiver side
    received: Vec<u64>,
    received_count: u32,
    pull_no: u32,
    last_layer: u8,
    /// Pull numbers waiting in the receiver's pacer, oldest first.
    pulls: VecDeque<u32>,
}

/// A receiving host's pulls: one per packet that arrived, released one per packet time. Flows
/// with waiting pulls take turns, one pull each (htsim's fair pull queue), so a short flow's
/// one pull does not wait behind every window-full that long flows have queued.
#[derive(Default)]
struct PullPacer {
    /// Flows with pulls waiting, in the order their turns come.
    turns: VecDeque<u32>,
    last_pull: Option<Time>,
    tick_pending: bool,
    /// `Ndp::pull_spacing`, once worked out (0 until then): every pull asks for it, and its
    /// floating-point division and rounding (a library call) made the pacer's two functions
    /// cost about 120 M instructions on the k=16 benchmark, about 60 M without.
    spacing: Time,
}

/// NDP's sources and receivers: per-flow state and one pull pacer per receiving host.
pub struct Ndp {
    flows: Vec<NdpFlow>,
    pacers: Vec<PullPacer>,
}

impl Ndp {
    pub fn new(n_flows: usize, n_hosts: usize) -> Self {
        Ndp {
            flows: (0..n_flows).map(|_| NdpFlow::default()).collect(),
            pacers: (0..n_hosts).map(|_| PullPacer::default()).collect(),
        }
    }
}

impl Ndp {
    /// Spacing of one full packet at the receiver's NIC rate, slowed by the pull-rate factor
    /// so that pulled data never quite fills the last hop.
    fn pull_spacing(&mut self, host: &impl Host, receiver: u32) -> Time {
        let pacer = &mut self.pacers[receiver as usize];
        if pacer.spacing == 0 {
            let cfg = host.config();
            let full = host.nic_serialisation(receiver, cfg.mtu + cfg.header) as f64;
            pacer.spacing = (full / cfg.pull_rate).round() as Time;
        }
        pacer.spacing
    }

    /// Sends the next packet of flow `f`: a queued retransmission first, else new data.
    /// Returns false when there is nothing to send.
    fn send_packet(&mut self, host: &mut impl Host, f: usize) -> bool {
        let n = host.n_packets(f);
        let st = &mut self.flows[f];
        let (seq, is_rtx) = loop {
            if let Some(q) = st.rtx.pop_front() {
                if st.state[q as usize] == QUEUED {
                    break (q, true);
                }
            } else if st.next_new < n {
                st.next_new += 1;
                break (st.next_new - 1, false);
            } else {
                return false;
            }
        };
        st.state[seq as usize] = IN_FLIGHT;
        host.send_data(f, seq, is_rtx);
        true
    }

    fn pull_packets(&mut self, host: &mut impl Host, f: usize, pull_no: u32) {
        let st = &mut self.flows[f];
        st.max_pull = st.max_pull.max(pull_no);
        while self.flows[f].last_pull < self.flows[f].max_pull {
            if !self.send_packet(host, f) {
                break;
            }
            self.flows[f].last_pull += 1;
        }
    }

    /// Sends an ACK or NACK that earns the source one pull: piggybacked when the pacer is
    /// idle and due, otherwise queued as a separate PULL behind the other flows' pulls.
    fn request_pull(&mut self, host: &mut impl Host, f: usize, receiver: u32, mut reply: Packet) {
        let spacing = self.pull_spacing(host, receiver);
        let now = host.now();
        let st = &mut self.flows[f];
        st.pull_no += 1;
        reply.aux = st.pull_no;
        let pull_no = st.pull_no;
        let pacer = &mut self.pacers[receiver as usize];
        let due = pacer.last_pull.is_none_or(|t| now >= t + spacing);
        if pacer.turns.is_empty() && !pacer.tick_pending && due {
            reply.flags |= flags::PULL;
            pacer.last_pull = Some(now);
        } else {
            if st.pulls.is_empty() {
                pacer.turns.push_back(f as u32);
            }
            st.pulls.push_back(pull_no);
            if !pacer.tick_pending {
                pacer.tick_pending = true;
                let at = pacer.last_pull.map_or(now, |t| (t + spacing).max(now));
                host.set_timer(at, receiver);
            }
        }
        host.send(receiver, reply);
    }
}

impl<H: Host> Transport<H> for Ndp {
    fn trims(&self) -> bool {
        true
    }

    fn start(&mut self, host: &mut H, f: usize) {
        let n = host.n_packets(f);
        let st = &mut self.flows[f];
        st.state = vec![UNSENT; n as usize];
        st.received = vec![0; (n as usize).div_ceil(64)];
        st.last_progress = host.now();
        st.rto = host.config().min_rto.max(NDP_INITIAL_RTO);
        for _ in 0..host.config().initial_window.min(n) {
            self.send_packet(host, f);
        }
    }

    fn on_data(&mut self, host: &mut H, p: Packet) {
        let f = p.flow as usize;
        if host.received_all(f) && p.flags & flags::TRIMMED == 0 {
            // A late duplicate of a flow that is already complete.
            host.count_duplicate(&p);
            return;
        }
        let (src, dst) = host.endpoints(f);
        self.flows[f].last_layer = p.layer;
        let (layer, entropy) = host.feedback_path(f, p.layer);
        let mut reply = Packet {
            sent_at: p.sent_at,
            flow: p.flow,
            seq: p.seq,
            aux: 0,
            entropy,
            dst: src,
            size: host.config().ack_bytes,
            kind: PacketKind::Ack,
            flags: 0,
            layer,
            plane: p.plane,
            subflow: 0,
        };
        if p.flags & flags::TRIMMED != 0 {
            reply.kind = PacketKind::Nack;
            if host.config().load_balancing == LoadBalancing::FatPaths {
                reply.flags |= flags::NEW_LAYER;
            }
            if host.received_all(f) {
                host.send(dst, reply);
                return;
            }
            self.request_pull(host, f, dst, reply);
            return;
        }
        let st = &mut self.flows[f];
        let (word, bit) = (p.seq as usize / 64, 1u64 << (p.seq % 64));
        if st.received[word] & bit == 0 {
            st.received[word] |= bit;
            st.received_count += 1;
            host.count_delivered(&p);
        } else {
            host.count_duplicate(&p);
        }
        if p.flags & flags::ECN_CE != 0 {
            reply.flags |= flags::ECE;
        }
        if self.flows[f].received_count == host.n_packets(f) {
            host.finish_at_receiver(f);
            // Everything is here: no more pulls for this flow.
            self.flows[f].received = Vec::new();
            host.send(dst, reply);
        } else {
            self.request_pull(host, f, dst, reply);
        }
    }

    fn on_feedback(&mut self, host: &mut H, p: Packet) {
        let f = p.flow as usize;
        if host.sender_done(f) {
            return;
        }
        let now = host.now();
        let st = &mut self.flows[f];
        st.last_progress = now;
        match p.kind {
            PacketKind::Ack => {
                // Each copy echoes its own send time, so even an ACK of a retransmission is an
                // unambiguous sample (htsim's NDP estimates its timeout the same way).
                let sample = now - p.sent_at;
                if st.srtt == 0 {
                    st.srtt = sample;
                    st.rttvar = sample / 2;
                } else {
                    st.rttvar = (3 * st.rttvar + st.srtt.abs_diff(sample)) / 4;
                    st.srtt = (7 * st.srtt + sample) / 8;
                }
                st.rto = (st.srtt + 4 * st.rttvar).max(host.config().min_rto);
                if st.state[p.seq as usize] != ACKED {
                    st.state[p.seq as usize] = ACKED;
                    st.acked += 1;
                    host.layer_signal(f, p.layer, LayerSignal::Delivered);
                }
                let st = &mut self.flows[f];
                if st.acked == host.n_packets(f) {
                    host.finish_at_sender(f);
                    // Release the per-packet state of a finished source.
                    st.state = Vec::new();
                    st.rtx = VecDeque::new();
                    return;
                }
                if p.flags & flags::PULL != 0 {
                    self.pull_packets(host, f, p.aux);
                }
            }
            PacketKind::Nack => {
                if st.state[p.seq as usize] == IN_FLIGHT {
                    st.state[p.seq as usize] = QUEUED;
                    st.rtx.push_back(p.seq);
                }
                if p.flags & flags::NEW_LAYER != 0 {
                    host.layer_signal(f, p.layer, LayerSignal::Trimmed);
                }
                let st = &self.flows[f];
                if p.flags & flags::PULL != 0 {
                    self.pull_packets(host, f, p.aux);
                } else if st.last_pull < st.max_pull {
                    // Credit left over from a pull that found nothing to send.
                    self.pull_packets(host, f, st.max_pull);
                }
            }
            PacketKind::Pull => self.pull_packets(host, f, p.aux),
            PacketKind::Data => unreachable!("data is delivered to receivers"),
        }
    }

    /// The receiver's pull pacer may release its next pull.
    fn on_timer(&mut self, host: &mut H, receiver: u32) {
        let spacing = self.pull_spacing(host, receiver);
        let pacer = &mut self.pacers[receiver as usize];
        pacer.tick_pending = false;
        while let Some(f) = self.pacers[receiver as usize].turns.pop_front() {
            let st = &mut self.flows[f as usize];
            if host.received_all(f as usize) {
                // Everything is here: its pulls would only send what is no longer needed.
                st.pulls = VecDeque::new();
                continue;
            }
            let pull_no = st.pulls.pop_front().expect("a flow with a turn has a pull");
            if !st.pulls.is_empty() {
                self.pacers[receiver as usize].turns.push_back(f);
            }
            let (src, _) = host.endpoints(f as usize);
            let data_layer = self.flows[f as usize].last_layer;
            let (layer, entropy) = host.feedback_path(f as usize, data_layer);
            let now = host.now();
            let pull = Packet {
                sent_at: now,
                flow: f,
                seq: 0,
                aux: pull_no,
                entropy,
                dst: src,
                size: host.config().ack_bytes,
                kind: PacketKind::Pull,
                flags: 0,
                layer,
                plane: host.plane(f as usize),
                subflow: 0,
            };
            host.send(receiver, pull);
            self.pacers[receiver as usize].last_pull = Some(now);
            break;
        }
        let pacer = &mut self.pacers[receiver as usize];
        if !pacer.turns.is_empty() {
            pacer.tick_pending = true;
            host.set_timer(host.now() + spacing, receiver);
        }
    }

    /// A source that heard nothing for a timeout resends what it sent at least a timeout ago.
    /// This only fires when headers or feedback were lost (queues for headers overflowed).
    /// The timeout is TCP's estimate from the flow's RTT samples, floored at the minimum RTO,
    /// and `NDP_INITIAL_RTO` before the first sample: a fixed 200 µs fired for packets still
    /// crossing several full 8-packet queues of a long path (58 µs each at 10 Gb/s).
    /// The clock of a packet starts when it left the source's NIC: a packet still queued there
    /// cannot have been lost, and on a host whose flows together exceed its NIC the wait can be
    /// far longer than the minimum RTO, which used to resend packets that had never left and
    /// pile their copies into the same queue.
    fn check_timeout(&mut self, host: &mut H, f: usize) {
        let now = host.now();
        let st = &mut self.flows[f];
        let rto = st.rto;
        if now < st.last_progress + rto {
            return;
        }
        let (mut resend, mut outstanding) = (0u32, false);
        for seq in 0..st.next_new {
            if st.state[seq as usize] != IN_FLIGHT {
                continue;
            }
            outstanding = true;
            let departed = host.departed_at(f, seq);
            let lost = !host.waiting_at_source(f, seq)
                && departed != NO_TIME
                && now >= departed.max(st.last_progress) + rto;
            if lost {
                st.state[seq as usize] = QUEUED;
                st.rtx.push_back(seq);
                resend += 1;
            }
        }
        if resend == 0 && outstanding {
            // Everything in flight is still at the NIC or left it less than a timeout ago.
            return;
        }
        st.last_progress = now;
        host.count_timeout();
        // With nothing in flight (a lost pull), one new packet restarts the pull clock.
        for _ in 0..resend.max(1) {
            if !self.send_packet(host, f) {
                break;
            }
        }
    }
}
