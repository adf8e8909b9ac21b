//! TCP NewReno and DCTCP, counted in packets.
//!
//! The receiver ACKs every packet cumulatively (no delayed ACKs) and echoes the ECN mark of the
//! packet it acknowledges, which is what DCTCP's receiver state machine reduces to without
//! delayed ACKs. Losses are repaired by fast retransmit with NewReno partial-ACK recovery, or by
//! a retransmission timeout that restarts from the first unacknowledged packet.

use super::layer_choice::LayerSignal;
use super::packet::{flags, Packet, PacketKind, Time};
use super::transport::{Host, Transport};

/// DCTCP's gain for the marked-fraction moving average (1/16, as in the DCTCP paper).
const DCTCP_G: f64 = 1.0 / 16.0;
const MAX_BACKOFF: u32 = 6;

#[derive(Default)]
struct TcpFlow {
    // source side
    snd_una: u32,
    snd_nxt: u32,
    high_sent: u32,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    recover: u32,
    in_recovery: bool,
    srtt: Time,
    rttvar: Time,
    rto: Time,
    backoff: u32,
    last_progress: Time,
    alpha: f64,
    window_end: u32,
    acked_in_window: u32,
    marked_in_window: u32,
    /// Pacing: earliest time of the next data packet, and whether a timer waits for it.
    next_send: Time,
    pacing_timer: bool,
    // receiver side
    received: Vec<u64>,
    cum: u32,
}

/// Congestion avoidance's window growth when it depends on other flows' windows (MPTCP's
/// coupled congestion control over subflows); slow start and window cuts stay per flow.
pub trait CoupledIncrease: Send + Sync {
    /// Packets the window of `flow` grows by for `acked` newly acknowledged packets;
    /// `window(g)` is flow g's congestion window (packets) and smoothed RTT (0: no sample yet).
    fn increase(&self, window: &dyn Fn(usize) -> (f64, Time), flow: usize, acked: u32) -> f64;
}

/// TCP's sources and receivers; with `dctcp`, windows also shrink with the fraction of ECN
/// marks.
pub struct Tcp {
    flows: Vec<TcpFlow>,
    dctcp: bool,
    coupling: Option<Box<dyn CoupledIncrease>>,
}

impl Tcp {
    pub fn new(n_flows: usize, dctcp: bool) -> Self {
        Tcp {
            flows: (0..n_flows).map(|_| TcpFlow::default()).collect(),
            dctcp,
            coupling: None,
        }
    }

    /// TCP whose congestion avoidance grows windows as `coupling` says (MPTCP subflows).
    pub fn coupled(n_flows: usize, dctcp: bool, coupling: Box<dyn CoupledIncrease>) -> Self {
        Tcp {
            coupling: Some(coupling),
            ..Tcp::new(n_flows, dctcp)
        }
    }

    fn avoidance_increase(&self, f: usize, acked: u32) -> f64 {
        match &self.coupling {
            None => acked as f64 / self.flows[f].cwnd,
            Some(c) => {
                let window = |g: usize| (self.flows[g].cwnd, self.flows[g].srtt);
                c.increase(&window, f, acked)
            }
        }
    }

    fn send_window(&mut self, host: &mut impl Host, f: usize) {
        let n = host.n_packets(f);
        let pacing = host.config().tcp_pacing;
        loop {
            let now = host.now();
            let st = &mut self.flows[f];
            let window = st.cwnd.max(1.0) as u32;
            if st.snd_nxt >= n || st.snd_nxt - st.snd_una >= window {
                return;
            }
            if pacing && st.srtt > 0 {
                if now < st.next_send {
                    if !st.pacing_timer {
                        st.pacing_timer = true;
                        host.set_timer(st.next_send, f as u32);
                    }
                    return;
                }
                // One window per smoothed RTT: the rate ACK clocking reaches in steady state,
                // without the line-rate bursts that overflow shallow queues.
                let spacing = (st.srtt as f64 / st.cwnd.max(1.0)) as Time;
                st.next_send = st.next_send.max(now) + spacing;
            }
            let seq = st.snd_nxt;
            st.snd_nxt += 1;
            self.send_seq(host, f, seq);
        }
    }

    fn send_seq(&mut self, host: &mut impl Host, f: usize, seq: u32) {
        let st = &mut self.flows[f];
        let is_rtx = seq < st.high_sent;
        st.high_sent = st.high_sent.max(seq + 1);
        host.send_data(f, seq, is_rtx);
    }
}

impl<H: Host> Transport<H> for Tcp {
    fn trims(&self) -> bool {
        false
    }

    fn start(&mut self, host: &mut H, f: usize) {
        let n = host.n_packets(f);
        let cfg = host.config();
        let iw = cfg.initial_window.max(1) as f64;
        // RFC 6298 (2.1): no sample yet, so the initial RTO; the floor still applies.
        let (rto, now) = (cfg.initial_rto.max(cfg.min_rto), host.now());
        let ssthresh = match cfg.initial_ssthresh {
            0 => f64::MAX,
            packets => packets as f64,
        };
        let st = &mut self.flows[f];
        st.cwnd = iw;
        st.ssthresh = ssthresh;
        st.rto = rto;
        st.last_progress = now;
        st.alpha = 1.0;
        st.received = vec![0; (n as usize).div_ceil(64)];
        self.send_window(host, f);
        self.flows[f].window_end = self.flows[f].snd_nxt;
    }

    fn on_data(&mut self, host: &mut H, p: Packet) {
        let f = p.flow as usize;
        let n = host.n_packets(f);
        let st = &mut self.flows[f];
        let (word, bit) = (p.seq as usize / 64, 1u64 << (p.seq % 64));
        if st.received.get(word).is_some_and(|w| w & bit == 0) {
            st.received[word] |= bit;
            while st.cum < n && st.received[st.cum as usize / 64] & (1u64 << (st.cum % 64)) != 0 {
                st.cum += 1;
            }
            host.count_delivered(&p);
        } else {
            host.count_duplicate(&p);
        }
        let cum = self.flows[f].cum;
        if cum == n {
            host.finish_at_receiver(f);
        }
        let (layer, entropy) = host.feedback_path(f, p.layer);
        let (src, dst) = host.endpoints(f);
        let ack = Packet {
            sent_at: p.sent_at,
            flow: p.flow,
            seq: p.seq,
            aux: cum,
            entropy,
            dst: src,
            size: host.config().ack_bytes,
            kind: PacketKind::Ack,
            flags: if p.flags & flags::ECN_CE != 0 {
                flags::ECE
            } else {
                0
            },
            layer,
            // Back in the data's plane, the only one that connects the two NICs.
            plane: p.plane,
            subflow: p.subflow,
        };
        host.send(dst, ack);
    }

    fn on_feedback(&mut self, host: &mut H, p: Packet) {
        let f = p.flow as usize;
        if host.sender_done(f) {
            return;
        }
        let n = host.n_packets(f);
        let now = host.now();
        let min_rto = host.config().min_rto;
        let dctcp = self.dctcp;
        let ece = p.flags & flags::ECE != 0;
        let cum = p.aux;
        let st = &mut self.flows[f];
        if cum > st.snd_una {
            let newly = cum - st.snd_una;
            // Karn: no RTT samples from ACKs that may answer a retransmission.
            if !st.in_recovery && st.backoff == 0 {
                let sample = now - p.sent_at;
                if st.srtt == 0 {
                    st.srtt = sample;
                    st.rttvar = sample / 2;
                } else {
                    let err = st.srtt.abs_diff(sample);
                    st.rttvar = (3 * st.rttvar + err) / 4;
                    st.srtt = (7 * st.srtt + sample) / 8;
                }
                st.rto = (st.srtt + 4 * st.rttvar).max(min_rto);
            }
            st.snd_una = cum;
            st.snd_nxt = st.snd_nxt.max(cum);
            st.backoff = 0;
            st.last_progress = now;
            st.dupacks = 0;
            host.layer_signal(f, p.layer, LayerSignal::Delivered);
            let st = &mut self.flows[f];
            st.acked_in_window += newly;
            if ece {
                st.marked_in_window += newly;
            }
            let mut retransmit = None;
            if st.in_recovery {
                if cum >= st.recover {
                    st.in_recovery = false;
                    st.cwnd = st.ssthresh;
                } else {
                    // Partial ACK: the next hole is lost too; repair it without leaving recovery.
                    retransmit = Some(cum);
                    st.cwnd = (st.cwnd - newly as f64 + 1.0).max(1.0);
                }
            } else if st.cwnd < st.ssthresh {
                st.cwnd += newly as f64;
            } else {
                let grow = self.avoidance_increase(f, newly);
                self.flows[f].cwnd += grow;
            }
            let st = &mut self.flows[f];
            if st.snd_una >= st.window_end {
                // Once per window of data: DCTCP's α update and cut, and for any marking
                // transport the window's marked fraction as a congestion signal to FatPaths.
                let fraction = st.marked_in_window as f64 / st.acked_in_window.max(1) as f64;
                let marked = st.marked_in_window > 0;
                if dctcp {
                    st.alpha = (1.0 - DCTCP_G) * st.alpha + DCTCP_G * fraction;
                    if marked && !st.in_recovery {
                        st.cwnd = (st.cwnd * (1.0 - st.alpha / 2.0)).max(1.0);
                        st.ssthresh = st.cwnd;
                    }
                }
                st.acked_in_window = 0;
                st.marked_in_window = 0;
                st.window_end = st.snd_nxt;
                if marked {
                    host.layer_signal(f, p.layer, LayerSignal::EcnFraction(fraction));
                }
            }
            let st = &mut self.flows[f];
            if cum >= n {
                host.finish_at_sender(f);
                st.received = Vec::new();
                return;
            }
            if let Some(seq) = retransmit {
                self.send_seq(host, f, seq);
            }
        } else if cum == st.snd_una && st.snd_nxt > st.snd_una {
            st.dupacks += 1;
            if ece {
                st.marked_in_window += 1;
            }
            if !st.in_recovery && st.dupacks == 3 {
                let flight = (st.snd_nxt - st.snd_una) as f64;
                st.ssthresh = (flight / 2.0).max(2.0);
                st.cwnd = st.ssthresh + 3.0;
                st.recover = st.snd_nxt;
                st.in_recovery = true;
                let seq = st.snd_una;
                // The window was cut: FatPaths moves the flow off the layer that lost it.
                host.layer_signal(f, p.layer, LayerSignal::WindowCut);
                self.send_seq(host, f, seq);
            } else if st.in_recovery {
                st.cwnd += 1.0;
            }
        }
        self.send_window(host, f);
    }

    /// A paced flow's next packet is due (the engine's periodic scan drives timeouts).
    fn on_timer(&mut self, host: &mut H, flow: u32) {
        let f = flow as usize;
        self.flows[f].pacing_timer = false;
        if !host.sender_done(f) {
            self.send_window(host, f);
        }
    }

    fn check_timeout(&mut self, host: &mut H, f: usize) {
        let now = host.now();
        let st = &mut self.flows[f];
        let rto = st.rto << st.backoff;
        if now < st.last_progress + rto {
            return;
        }
        // While the oldest unacknowledged packet still waits at the source's NIC it cannot have
        // been lost. (The clock itself keeps running from the last progress: restarting it at a
        // fast retransmission's departure would delay recovery from a lost retransmission.)
        if st.snd_una < st.high_sent && host.waiting_at_source(f, st.snd_una) {
            return;
        }
        let st = &mut self.flows[f];
        let flight = (st.snd_nxt - st.snd_una) as f64;
        st.ssthresh = (flight / 2.0).max(2.0);
        st.cwnd = 1.0;
        st.snd_nxt = st.snd_una;
        st.in_recovery = false;
        st.dupacks = 0;
        st.backoff = (st.backoff + 1).min(MAX_BACKOFF);
        st.last_progress = now;
        st.window_end = st.snd_una + 1;
        host.count_timeout();
        let layer = host.current_layer(f);
        host.layer_signal(f, layer, LayerSignal::Timeout);
        self.send_window(host, f);
    }
}
