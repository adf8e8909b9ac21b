//! Multipath TCP: each connection is a set of TCP (or DCTCP) subflows, each pinned to one plane
//! and one path, whose congestion avoidance is coupled by Linked Increases (RFC 6356).
//!
//! The subflows are flows of an ordinary `Tcp` that sees the network through `Subflows`, a
//! `Host` that maps subflow numbers onto the connection's data: a subflow's next new packet
//! takes the connection's next unsent packet (so faster subflows carry more data), its
//! retransmissions resend what it carried before, and the connection is done at the receiver
//! once every data packet arrived on some subflow, at the sender once every subflow's
//! cumulative ACKs cover all of it. Data sent on a subflow stays on it (no reinjection).
//!
//! On the wire a data packet names its connection (`flow`), its data packet (`seq`), its
//! subflow (`subflow`) and its number within the subflow (`aux`); ACKs carry the subflow's
//! cumulative ACK in `aux`, as TCP's do.

use super::config::{MptcpParams, SimConfig, SubflowPaths};
use super::layer_choice::LayerSignal;
use super::packet::{Packet, Time, NO_TIME};
use super::tcp::{CoupledIncrease, Tcp};
use super::transport::{Host, SubflowPath, Transport};

#[inline]
fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

#[derive(Clone, Debug, Default)]
struct Connection {
    first: u32,
    count: u32,
    n_packets: u32,
    /// The next data packet no subflow has taken yet.
    next_data: u32,
    /// Data packets the receiver holds.
    delivered: u32,
    /// Data packets the sender knows were received (sum of the subflows' cumulative ACKs).
    acked: u32,
}

#[derive(Clone, Debug, Default)]
struct Subflow {
    conn: u32,
    index: u8,
    plane: u8,
    layer: u8,
    entropy: u32,
    /// The data packet each of the subflow's packets carries.
    data_seq: Vec<u32>,
    /// Cumulative ACK: subflow packets below it reached the receiver.
    acked: u32,
    done: bool,
}

/// Linked Increases (RFC 6356, section 3), in packets: per acknowledged packet a subflow grows
/// by min(α / Σw, 1 / w_i), with α = Σw · max(w_i / rtt_i²) / (Σ w_i / rtt_i)², so that the
/// connection takes no more at a shared bottleneck than one TCP on its best path would.
struct LinkedIncreases {
    /// Per subflow: its connection's first subflow and subflow count.
    group: Vec<(u32, u32)>,
}

impl CoupledIncrease for LinkedIncreases {
    fn increase(&self, window: &dyn Fn(usize) -> (f64, Time), flow: usize, acked: u32) -> f64 {
        let (first, count) = self.group[flow];
        let (mut total, mut best, mut rate) = (0.0, 0.0f64, 0.0);
        for g in first as usize..(first + count) as usize {
            let (w, rtt) = window(g);
            total += w;
            // Subflows without an RTT sample yet count in the total window only.
            if rtt > 0 {
                let r = rtt as f64;
                best = best.max(w / (r * r));
                rate += w / r;
            }
        }
        let own = window(flow).0.max(1.0);
        let uncoupled = acked as f64 / own;
        let total = total.max(1.0);
        if rate == 0.0 {
            return uncoupled.min(acked as f64 / total);
        }
        let alpha = total * best / (rate * rate);
        (alpha * acked as f64 / total).min(uncoupled)
    }
}

/// MPTCP connections over `Tcp` subflows.
pub struct Mptcp {
    tcp: Tcp,
    conns: Vec<Connection>,
    subflows: Vec<Subflow>,
    params: MptcpParams,
    /// Layers `SubflowPaths::Layers` cycles through.
    layers: Vec<u8>,
    seed: u32,
}

impl Mptcp {
    /// Connection i runs `subflows[i]` subflows, spread round robin over the planes: subflow j
    /// takes plane j mod P and is the (j div P)-th path in it.
    pub fn new(subflows: &[usize], params: MptcpParams, layers: Vec<u8>, seed: u64) -> Self {
        let mut conns = Vec::with_capacity(subflows.len());
        let mut flows = Vec::new();
        let mut group = Vec::new();
        for (c, &count) in subflows.iter().enumerate() {
            let count = count.clamp(1, u8::MAX as usize) as u32;
            let first = flows.len() as u32;
            conns.push(Connection {
                first,
                count,
                ..Connection::default()
            });
            for index in 0..count {
                flows.push(Subflow {
                    conn: c as u32,
                    index: index as u8,
                    ..Subflow::default()
                });
                group.push((first, count));
            }
        }
        let coupling = Box::new(LinkedIncreases { group });
        Mptcp {
            tcp: Tcp::coupled(flows.len(), params.dctcp_subflows, coupling),
            conns,
            subflows: flows,
            params,
            layers: if layers.is_empty() { vec![0] } else { layers },
            seed: mix(seed as u32 ^ mix((seed >> 32) as u32)),
        }
    }

    fn view<'a, H: Host>(&'a mut self, host: &'a mut H) -> (&'a mut Tcp, Subflows<'a, H>) {
        (
            &mut self.tcp,
            Subflows {
                host,
                conns: &mut self.conns,
                subflows: &mut self.subflows,
            },
        )
    }

    /// Pins every subflow of connection `c` to its plane and path.
    fn place_subflows(&mut self, c: usize, planes: u8) {
        let planes = planes.max(1) as u32;
        let conn = &self.conns[c];
        let base = mix(c as u32 ^ self.seed);
        for sf in &mut self.subflows[conn.first as usize..(conn.first + conn.count) as usize] {
            let (plane, k) = (sf.index as u32 % planes, sf.index as u32 / planes);
            sf.plane = plane as u8;
            match self.params.paths {
                SubflowPaths::KShortest => {
                    // Consecutive entropy values differ in the digit the first multi-way switch
                    // consumes, so they start down different equal-cost paths.
                    sf.layer = 0;
                    sf.entropy = base.wrapping_add(k);
                }
                SubflowPaths::Layers => {
                    sf.layer = self.layers[k as usize % self.layers.len()];
                    sf.entropy = mix(base ^ sf.index as u32);
                }
            }
        }
    }
}

impl<H: Host> Transport<H> for Mptcp {
    fn trims(&self) -> bool {
        false
    }

    fn start(&mut self, host: &mut H, c: usize) {
        self.conns[c].n_packets = host.n_packets(c);
        self.place_subflows(c, host.planes());
        let (first, count) = (self.conns[c].first, self.conns[c].count);
        let (tcp, mut view) = self.view(host);
        for sf in first..first + count {
            <Tcp as Transport<Subflows<'_, H>>>::start(tcp, &mut view, sf as usize);
        }
    }

    fn on_data(&mut self, host: &mut H, p: Packet) {
        let sf = self.conns[p.flow as usize].first + p.subflow as u32;
        let (tcp, mut view) = self.view(host);
        let inner = Packet {
            flow: sf,
            seq: p.aux,
            aux: 0,
            ..p
        };
        tcp.on_data(&mut view, inner);
    }

    fn on_feedback(&mut self, host: &mut H, p: Packet) {
        let c = p.flow as usize;
        if host.sender_done(c) {
            return;
        }
        let sf = self.conns[c].first + p.subflow as u32;
        let subflow = &mut self.subflows[sf as usize];
        if p.aux > subflow.acked {
            self.conns[c].acked += p.aux - subflow.acked;
            subflow.acked = p.aux;
        }
        let (tcp, mut view) = self.view(host);
        tcp.on_feedback(&mut view, Packet { flow: sf, ..p });
        if self.conns[c].acked >= self.conns[c].n_packets {
            host.finish_at_sender(c);
        }
    }

    fn on_timer(&mut self, host: &mut H, sf: u32) {
        let (tcp, mut view) = self.view(host);
        <Tcp as Transport<Subflows<'_, H>>>::on_timer(tcp, &mut view, sf);
    }

    fn check_timeout(&mut self, host: &mut H, c: usize) {
        let (first, count) = (self.conns[c].first, self.conns[c].count);
        for sf in first..first + count {
            let s = &self.subflows[sf as usize];
            // A subflow with nothing unacknowledged has nothing to time out.
            if s.done || s.data_seq.len() as u32 <= s.acked {
                continue;
            }
            let (tcp, mut view) = self.view(host);
            <Tcp as Transport<Subflows<'_, H>>>::check_timeout(tcp, &mut view, sf as usize);
        }
    }
}

/// The network as a subflow's TCP sees it: flow numbers are subflows, data packets are the
/// subflow's own numbering.
struct Subflows<'a, H: Host> {
    host: &'a mut H,
    conns: &'a mut [Connection],
    subflows: &'a mut [Subflow],
}

impl<H: Host> Subflows<'_, H> {
    /// The packet as the engine knows it: the connection's flow.
    fn outer(&self, p: &Packet) -> Packet {
        Packet {
            flow: self.subflows[p.flow as usize].conn,
            ..*p
        }
    }
}

impl<H: Host> Host for Subflows<'_, H> {
    fn now(&self) -> Time {
        self.host.now()
    }

    fn config(&self) -> &SimConfig {
        self.host.config()
    }

    /// What the subflow carried so far plus what no subflow has taken yet: the most it may
    /// still be asked to carry.
    fn n_packets(&self, sf: usize) -> u32 {
        let s = &self.subflows[sf];
        let c = &self.conns[s.conn as usize];
        s.data_seq.len() as u32 + (c.n_packets - c.next_data)
    }

    fn endpoints(&self, sf: usize) -> (u32, u32) {
        self.host.endpoints(self.subflows[sf].conn as usize)
    }

    fn received_all(&self, sf: usize) -> bool {
        self.host.received_all(self.subflows[sf].conn as usize)
    }

    fn sender_done(&self, sf: usize) -> bool {
        self.subflows[sf].done || self.host.sender_done(self.subflows[sf].conn as usize)
    }

    /// The connection, not the subflow, finishes at the receiver (see `count_delivered`).
    fn finish_at_receiver(&mut self, _sf: usize) {}

    fn finish_at_sender(&mut self, sf: usize) {
        self.subflows[sf].done = true;
    }

    fn send_data(&mut self, sf: usize, seq: u32, is_rtx: bool) {
        let s = &mut self.subflows[sf];
        let data = match s.data_seq.get(seq as usize) {
            Some(&d) => d,
            None => {
                let c = &mut self.conns[s.conn as usize];
                let d = c.next_data;
                c.next_data += 1;
                s.data_seq.push(d);
                d
            }
        };
        let path = SubflowPath {
            plane: s.plane,
            layer: s.layer,
            entropy: s.entropy,
            subflow: s.index,
            subflow_seq: seq,
        };
        let conn = s.conn as usize;
        self.host.send_subflow_data(conn, data, is_rtx, path);
    }

    fn send(&mut self, host: u32, packet: Packet) {
        let p = self.outer(&packet);
        self.host.send(host, p);
    }

    fn feedback_path(&mut self, sf: usize, data_layer: u8) -> (u8, u32) {
        let s = &self.subflows[sf];
        let (layer, entropy) = self.host.feedback_path(s.conn as usize, data_layer);
        (layer, mix(entropy ^ s.index as u32))
    }

    fn current_layer(&self, sf: usize) -> u8 {
        self.subflows[sf].layer
    }

    /// Subflows keep their paths: MPTCP moves load between them, not them between paths.
    fn layer_signal(&mut self, _sf: usize, _layer: u8, _signal: LayerSignal) {}

    fn count_delivered(&mut self, packet: &Packet) {
        let p = self.outer(packet);
        self.host.count_delivered(&p);
        let c = &mut self.conns[p.flow as usize];
        c.delivered += 1;
        if c.delivered == c.n_packets {
            self.host.finish_at_receiver(p.flow as usize);
        }
    }

    fn count_duplicate(&mut self, packet: &Packet) {
        let p = self.outer(packet);
        self.host.count_duplicate(&p);
    }

    fn count_timeout(&mut self) {
        self.host.count_timeout();
    }

    fn set_timer(&mut self, at: Time, sf: u32) {
        self.host.set_timer(at, sf);
    }

    fn nic_serialisation(&self, host: u32, bytes: u32) -> Time {
        self.host.nic_serialisation(host, bytes)
    }

    fn planes(&self) -> u8 {
        self.host.planes()
    }

    fn plane(&self, sf: usize) -> u8 {
        self.subflows[sf].plane
    }

    /// Not mapped yet: subflow timeouts keep their measured behaviour (the LIA fairness test)
    /// until the host-queue guard is validated for coupled subflows.
    fn waiting_at_source(&self, _sf: usize, _seq: u32) -> bool {
        false
    }

    fn departed_at(&self, sf: usize, seq: u32) -> Time {
        let s = &self.subflows[sf];
        s.data_seq
            .get(seq as usize)
            .map_or(NO_TIME, |&d| self.host.departed_at(s.conn as usize, d))
    }

    fn send_subflow_data(&mut self, sf: usize, seq: u32, is_rtx: bool, path: SubflowPath) {
        let conn = self.subflows[sf].conn as usize;
        self.host.send_subflow_data(conn, seq, is_rtx, path);
    }
}
