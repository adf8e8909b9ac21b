//! NDP, the "purified" receiver-driven transport.
//!
//! A source sends its first window at line rate and afterwards one packet per pull. Switches
//! trim instead of dropping, so the receiver learns of every loss within one trip and NACKs it;
//! every arrival, whole or trimmed, earns the source one more pull. Pulls leave a receiver's
//! pacer at (just under) its NIC rate, so the sum of its incoming flows cannot exceed its link.

use std::collections::VecDeque;

use super::config::LoadBalancing;
use super::engine::{flags, Packet, PacketKind, Simulator, NO_TIME};
use super::events::{EventKind, Time};

const UNSENT: u8 = 0;
const IN_FLIGHT: u8 = 1;
const ACKED: u8 = 2;
const QUEUED: u8 = 3;

#[derive(Default)]
pub struct NdpFlow {
    // source side
    next_new: u32,
    acked: u32,
    last_pull: u32,
    max_pull: u32,
    rtx: VecDeque<u32>,
    state: Vec<u8>,
    last_progress: Time,
    // receiver side
    received: Vec<u64>,
    received_count: u32,
    pull_no: u32,
    last_layer: u8,
}

#[derive(Default)]
pub struct PullPacer {
    queue: VecDeque<(u32, u32)>,
    last_pull: Option<Time>,
    tick_pending: bool,
}

pub struct NdpState {
    pub flows: Vec<NdpFlow>,
    pub pacers: Vec<PullPacer>,
}

impl NdpState {
    pub fn new(n_flows: usize, n_hosts: usize) -> Self {
        NdpState {
            flows: (0..n_flows).map(|_| NdpFlow::default()).collect(),
            pacers: (0..n_hosts).map(|_| PullPacer::default()).collect(),
        }
    }
}

impl Simulator {
    /// Spacing of one full packet at the receiver's NIC rate, slowed by the pull-rate factor
    /// so that pulled data never quite fills the last hop.
    fn pull_spacing(&self, host: u32) -> Time {
        let nic = &self.ports[self.host_nic_port(host) as usize];
        let full = nic.serialisation(self.cfg.mtu + self.cfg.header) as f64;
        (full / self.cfg.pull_rate).round() as Time
    }

    pub(super) fn ndp_start(&mut self, f: usize) {
        let n = self.flows[f].n_packets;
        let st = &mut self.ndp.flows[f];
        st.state = vec![UNSENT; n as usize];
        st.received = vec![0; (n as usize).div_ceil(64)];
        st.last_progress = self.now;
        for _ in 0..self.cfg.initial_window.min(n) {
            self.ndp_send_packet(f);
        }
    }

    /// Sends the next packet of flow `f`: a queued retransmission first, else new data.
    /// Returns false when there is nothing to send.
    fn ndp_send_packet(&mut self, f: usize) -> bool {
        let n = self.flows[f].n_packets;
        let st = &mut self.ndp.flows[f];
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
        self.transmit_data(f, seq, is_rtx);
        true
    }

    fn ndp_pull_packets(&mut self, f: usize, pull_no: u32) {
        let st = &mut self.ndp.flows[f];
        st.max_pull = st.max_pull.max(pull_no);
        while self.ndp.flows[f].last_pull < self.ndp.flows[f].max_pull {
            if !self.ndp_send_packet(f) {
                break;
            }
            self.ndp.flows[f].last_pull += 1;
        }
    }

    pub(super) fn ndp_on_data(&mut self, pkt: u32) {
        let p = self.packets[pkt as usize];
        self.free_packet(pkt);
        let f = p.flow as usize;
        let fl = &self.flows[f];
        if fl.finish != NO_TIME && p.flags & flags::TRIMMED == 0 {
            // A late duplicate of a flow that is already complete.
            self.counters.payload_duplicate += self.payload_of(&p);
            return;
        }
        let (src, dst) = (fl.src, fl.dst);
        self.ndp.flows[f].last_layer = p.layer;
        let (layer, entropy) = self.feedback_path(f, p.layer);
        let mut reply = Packet {
            sent_at: p.sent_at,
            flow: p.flow,
            seq: p.seq,
            aux: 0,
            entropy,
            dst: src,
            size: self.cfg.header,
            kind: PacketKind::Ack,
            flags: 0,
            layer,
        };
        if p.flags & flags::TRIMMED != 0 {
            reply.kind = PacketKind::Nack;
            if self.cfg.load_balancing == LoadBalancing::FatPaths {
                reply.flags |= flags::NEW_LAYER;
            }
            if self.flows[f].finish != NO_TIME {
                let r = self.alloc_packet(reply);
                self.send_from_host(dst, r);
                return;
            }
            self.ndp_request_pull(f, dst, reply);
            return;
        }
        let st = &mut self.ndp.flows[f];
        let (word, bit) = (p.seq as usize / 64, 1u64 << (p.seq % 64));
        if st.received[word] & bit == 0 {
            st.received[word] |= bit;
            st.received_count += 1;
            self.counters.payload_delivered += self.payload_of(&p);
            self.flows[f].delivered += self.payload_of(&p);
        } else {
            self.counters.payload_duplicate += self.payload_of(&p);
        }
        if p.flags & flags::ECN_CE != 0 {
            reply.flags |= flags::ECE;
        }
        if self.ndp.flows[f].received_count == self.flows[f].n_packets {
            self.flow_finished_at_receiver(f);
            // Everything is here: no more pulls for this flow.
            self.ndp.flows[f].received = Vec::new();
            let r = self.alloc_packet(reply);
            self.send_from_host(dst, r);
        } else {
            self.ndp_request_pull(f, dst, reply);
        }
    }

    /// Sends an ACK or NACK that earns the source one pull: piggybacked when the pacer is
    /// idle and due, otherwise queued as a separate PULL behind the other flows' pulls.
    fn ndp_request_pull(&mut self, f: usize, host: u32, mut reply: Packet) {
        let spacing = self.pull_spacing(host);
        let now = self.now;
        let st = &mut self.ndp.flows[f];
        st.pull_no += 1;
        reply.aux = st.pull_no;
        let pull_no = st.pull_no;
        let pacer = &mut self.ndp.pacers[host as usize];
        let due = pacer.last_pull.is_none_or(|t| now >= t + spacing);
        if pacer.queue.is_empty() && !pacer.tick_pending && due {
            reply.flags |= flags::PULL;
            pacer.last_pull = Some(now);
        } else {
            pacer.queue.push_back((f as u32, pull_no));
            if !pacer.tick_pending {
                pacer.tick_pending = true;
                let at = pacer.last_pull.map_or(now, |t| (t + spacing).max(now));
                self.events.push(at, EventKind::PacerTick, host, 0);
            }
        }
        let r = self.alloc_packet(reply);
        self.send_from_host(host, r);
    }

    pub(super) fn ndp_pacer_tick(&mut self, host: u32) {
        let spacing = self.pull_spacing(host);
        let pacer = &mut self.ndp.pacers[host as usize];
        pacer.tick_pending = false;
        while let Some((f, pull_no)) = self.ndp.pacers[host as usize].queue.pop_front() {
            if self.flows[f as usize].finish != NO_TIME {
                continue;
            }
            let src = self.flows[f as usize].src;
            let data_layer = self.ndp.flows[f as usize].last_layer;
            let (layer, entropy) = self.feedback_path(f as usize, data_layer);
            let pull = self.alloc_packet(Packet {
                sent_at: self.now,
                flow: f,
                seq: 0,
                aux: pull_no,
                entropy,
                dst: src,
                size: self.cfg.header,
                kind: PacketKind::Pull,
                flags: 0,
                layer,
            });
            self.send_from_host(host, pull);
            self.ndp.pacers[host as usize].last_pull = Some(self.now);
            break;
        }
        let pacer = &mut self.ndp.pacers[host as usize];
        if !pacer.queue.is_empty() {
            pacer.tick_pending = true;
            self.events
                .push(self.now + spacing, EventKind::PacerTick, host, 0);
        }
    }

    pub(super) fn ndp_on_feedback(&mut self, pkt: u32) {
        let p = self.packets[pkt as usize];
        self.free_packet(pkt);
        let f = p.flow as usize;
        if self.flows[f].sender_done != NO_TIME {
            return;
        }
        let now = self.now;
        let st = &mut self.ndp.flows[f];
        st.last_progress = now;
        match p.kind {
            PacketKind::Ack => {
                if st.state[p.seq as usize] != ACKED {
                    st.state[p.seq as usize] = ACKED;
                    st.acked += 1;
                }
                if st.acked == self.flows[f].n_packets {
                    self.flows[f].sender_done = now;
                    // Release the per-packet state of a finished source.
                    let st = &mut self.ndp.flows[f];
                    st.state = Vec::new();
                    st.rtx = VecDeque::new();
                    return;
                }
                if p.flags & flags::PULL != 0 {
                    self.ndp_pull_packets(f, p.aux);
                }
            }
            PacketKind::Nack => {
                if st.state[p.seq as usize] == IN_FLIGHT {
                    st.state[p.seq as usize] = QUEUED;
                    st.rtx.push_back(p.seq);
                }
                if p.flags & flags::NEW_LAYER != 0 {
                    self.change_layer(f);
                }
                let st = &self.ndp.flows[f];
                if p.flags & flags::PULL != 0 {
                    self.ndp_pull_packets(f, p.aux);
                } else if st.last_pull < st.max_pull {
                    // Credit left over from a pull that found nothing to send.
                    self.ndp_pull_packets(f, st.max_pull);
                }
            }
            PacketKind::Pull => self.ndp_pull_packets(f, p.aux),
            PacketKind::Data => unreachable!("data is delivered to receivers"),
        }
    }

    /// A source that heard nothing for a timeout resends everything in flight. This only
    /// fires when headers or feedback were lost (queues for headers overflowed).
    pub(super) fn ndp_check_timeout(&mut self, f: usize) {
        let now = self.now;
        let st = &mut self.ndp.flows[f];
        if now < st.last_progress + self.cfg.min_rto {
            return;
        }
        st.last_progress = now;
        let mut resend = 0u32;
        for seq in 0..st.next_new {
            if st.state[seq as usize] == IN_FLIGHT {
                st.state[seq as usize] = QUEUED;
                st.rtx.push_back(seq);
                resend += 1;
            }
        }
        self.counters.timeouts += 1;
        for _ in 0..resend.max(1) {
            if !self.ndp_send_packet(f) {
                break;
            }
        }
    }
}
