//! TCP's retransmission timeout, driven by hand through a recording `Host`: the initial RTO
//! before the first RTT sample (RFC 6298, 2.1) and srtt + 4 rttvar floored at the minimum RTO
//! after it (2.2, 2.3).

use super::config::{SimConfig, TransportKind};
use super::layer_choice::LayerSignal;
use super::packet::{Packet, PacketKind, Time, NO_TIME};
use super::tcp::Tcp;
use super::transport::{Host, SubflowPath, Transport, TCP_INITIAL_RTO};

const US: Time = 1_000_000;

/// One flow of `packets` packets between hosts 0 and 1; records what TCP sends and when it
/// times out, and lets the test set the clock.
struct Recorder {
    cfg: SimConfig,
    now: Time,
    packets: u32,
    /// (seq, is_rtx) of every data packet sent.
    sent: Vec<(u32, bool)>,
    timeouts: u32,
    done: bool,
}

impl Recorder {
    fn new(cfg: SimConfig, packets: u32) -> Self {
        Recorder {
            cfg,
            now: 0,
            packets,
            sent: Vec::new(),
            timeouts: 0,
            done: false,
        }
    }
}

impl Host for Recorder {
    fn now(&self) -> Time {
        self.now
    }
    fn config(&self) -> &SimConfig {
        &self.cfg
    }
    fn n_packets(&self, _flow: usize) -> u32 {
        self.packets
    }
    fn endpoints(&self, _flow: usize) -> (u32, u32) {
        (0, 1)
    }
    fn received_all(&self, _flow: usize) -> bool {
        false
    }
    fn sender_done(&self, _flow: usize) -> bool {
        self.done
    }
    fn finish_at_receiver(&mut self, _flow: usize) {}
    fn finish_at_sender(&mut self, _flow: usize) {
        self.done = true;
    }
    /// Every packet left the NIC at once: only the timer decides.
    fn waiting_at_source(&self, _flow: usize, _seq: u32) -> bool {
        false
    }
    fn departed_at(&self, _flow: usize, _seq: u32) -> Time {
        NO_TIME
    }
    fn send_data(&mut self, _flow: usize, seq: u32, is_rtx: bool) {
        self.sent.push((seq, is_rtx));
    }
    fn send(&mut self, _host: u32, _packet: Packet) {}
    fn feedback_path(&mut self, _flow: usize, data_layer: u8) -> (u8, u32) {
        (data_layer, 0)
    }
    fn current_layer(&self, _flow: usize) -> u8 {
        0
    }
    fn layer_signal(&mut self, _flow: usize, _layer: u8, _signal: LayerSignal) {}
    fn count_delivered(&mut self, _packet: &Packet) {}
    fn count_duplicate(&mut self, _packet: &Packet) {}
    fn count_timeout(&mut self) {
        self.timeouts += 1;
    }
    fn set_timer(&mut self, _at: Time, _operand: u32) {}
    fn nic_serialisation(&self, _host: u32, _bytes: u32) -> Time {
        0
    }
    fn planes(&self) -> u8 {
        1
    }
    fn plane(&self, _flow: usize) -> u8 {
        0
    }
    fn send_subflow_data(&mut self, flow: usize, seq: u32, is_rtx: bool, _path: SubflowPath) {
        self.send_data(flow, seq, is_rtx);
    }
}

fn cfg(min_rto: Time, initial_rto: Time) -> SimConfig {
    SimConfig {
        transport: TransportKind::Tcp,
        initial_window: 2,
        min_rto,
        initial_rto,
        ..SimConfig::default()
    }
}

/// The cumulative ACK `cum` for data packet `seq` sent at `sent_at`, arriving now.
fn ack(seq: u32, cum: u32, sent_at: Time) -> Packet {
    Packet {
        sent_at,
        flow: 0,
        seq,
        aux: cum,
        entropy: 0,
        dst: 0,
        size: 64,
        kind: PacketKind::Ack,
        flags: 0,
        layer: 0,
        plane: 0,
        subflow: 0,
    }
}

/// The first time on a `step` grid from `from` at which the flow times out (scanning up to
/// `limit`), and the state after it.
fn first_timeout(tcp: &mut Tcp, host: &mut Recorder, from: Time, step: Time, limit: Time) -> Time {
    let before = host.timeouts;
    let mut t = from;
    while t <= limit {
        host.now = t;
        tcp.check_timeout(host, 0);
        if host.timeouts > before {
            return t;
        }
        t += step;
    }
    panic!("no timeout up to {limit} ps");
}

fn started(cfg: SimConfig) -> (Tcp, Recorder) {
    let mut tcp = Tcp::new(1, false);
    let mut host = Recorder::new(cfg, 100);
    tcp.start(&mut host, 0);
    assert_eq!(host.sent, vec![(0, false), (1, false)]);
    (tcp, host)
}

#[test]
fn the_default_initial_rto_is_one_millisecond() {
    assert_eq!(SimConfig::default().initial_rto, 1_000 * US);
    assert_eq!(TCP_INITIAL_RTO, 1_000 * US);
}

#[test]
fn without_a_sample_the_first_timeout_fires_at_the_initial_rto() {
    for initial in [1_000 * US, 1_000_000 * US] {
        let (mut tcp, mut host) = started(cfg(200 * US, initial));
        // Nothing before the initial RTO (a 200 us floor alone would fire 5000 times sooner).
        let at = first_timeout(&mut tcp, &mut host, 0, 100 * US, 2 * initial);
        assert_eq!(at, initial, "initial RTO {initial} ps");
        // The timeout goes back to the first unacknowledged packet, one packet window.
        assert_eq!(host.sent.last(), Some(&(0, true)));
        assert_eq!(host.sent.len(), 3);
    }
}

#[test]
fn the_minimum_rto_floors_the_initial_rto() {
    let (mut tcp, mut host) = started(cfg(5_000 * US, 1_000 * US));
    let at = first_timeout(&mut tcp, &mut host, 0, 100 * US, 10_000 * US);
    assert_eq!(at, 5_000 * US);
}

#[test]
fn after_a_sample_the_rto_is_srtt_plus_four_rttvar_floored_at_the_minimum() {
    let (mut tcp, mut host) = started(cfg(200 * US, 1_000_000 * US));
    // First sample 100 us: srtt 100, rttvar 50, RTO 100 + 4 * 50 = 300 us.
    host.now = 100 * US;
    tcp.on_feedback(&mut host, ack(0, 1, 0));
    let at = first_timeout(&mut tcp, &mut host, 100 * US, US, 2_000 * US);
    assert_eq!(at, 100 * US + 300 * US);

    // Second sample 200 us (fresh flow, same first sample): rttvar (3 * 50 + 100) / 4 = 62.5,
    // srtt (7 * 100 + 200) / 8 = 112.5, RTO 112.5 + 250 = 362.5 us.
    let (mut tcp, mut host) = started(cfg(200 * US, 1_000_000 * US));
    host.now = 100 * US;
    tcp.on_feedback(&mut host, ack(0, 1, 0));
    host.now = 300 * US;
    tcp.on_feedback(&mut host, ack(1, 2, 100 * US));
    let at = first_timeout(&mut tcp, &mut host, 300 * US, US / 2, 2_000 * US);
    assert_eq!(at, 300 * US + 362 * US + US / 2);

    // The same samples under a 1 ms floor: the floor wins.
    let (mut tcp, mut host) = started(cfg(1_000 * US, 1_000_000 * US));
    host.now = 100 * US;
    tcp.on_feedback(&mut host, ack(0, 1, 0));
    let at = first_timeout(&mut tcp, &mut host, 100 * US, US, 5_000 * US);
    assert_eq!(at, 100 * US + 1_000 * US);
}

#[test]
fn a_timeout_before_the_first_sample_backs_off_from_the_initial_rto() {
    let (mut tcp, mut host) = started(cfg(200 * US, 1_000 * US));
    let first = first_timeout(&mut tcp, &mut host, 0, 100 * US, 10_000 * US);
    // Karn: no sample from the retransmission; the next timeout waits twice as long.
    let second = first_timeout(&mut tcp, &mut host, first, 100 * US, 10_000 * US);
    assert_eq!((first, second), (1_000 * US, 3_000 * US));
}
