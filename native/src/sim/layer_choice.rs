//! FatPaths' host-side layer choice: which layer a flowlet takes, and how a flow reacts when a
//! layer signals congestion.
//!
//! The paper (Sections III and VI, Appendix on TCP integration) picks a layer per flowlet at
//! the endpoint, lets the NDP receiver ask for another layer when payloads are trimmed, and has
//! TCP start on the minimal layer and move "whenever the congestion window is reduced". Two
//! policies implement that:
//!
//! * `Uniform` (the baseline, this simulator's first implementation): every flowlet and every
//!   trim-triggered move draws uniformly, with no memory; window-based transports move only
//!   between flowlets.
//! * `Adaptive` (the default): each flow keeps a score per layer, raised by acknowledged
//!   deliveries and halved by congestion on that layer (a trim, a window cut, a timeout, a high
//!   ECN fraction). Flowlets draw layers in proportion to the scores; a congestion signal on the
//!   layer the flow is using moves it at once to another layer drawn the same way, and a signal
//!   about a layer the flow already left only lowers that layer's score.

use super::packet::Time;
use super::random::SimRng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerPolicy {
    Uniform,
    Adaptive,
}

impl LayerPolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "uniform" => Some(LayerPolicy::Uniform),
            "adaptive" => Some(LayerPolicy::Adaptive),
            _ => None,
        }
    }
}

/// What a transport learnt about the layer a packet travelled on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LayerSignal {
    /// A data packet sent on the layer was acknowledged whole.
    Delivered,
    /// NDP: the payload was trimmed on the layer.
    Trimmed,
    /// TCP: three duplicate ACKs cut the window.
    WindowCut,
    /// A retransmission timeout fired while the flow used the layer.
    Timeout,
    /// DCTCP: the fraction of ECN-marked ACKs over the last window.
    EcnFraction(f64),
}

/// Score a layer starts from and returns to with repeated success.
const FULL_SCORE: f32 = 1.0;
/// Lowest score: a congested layer stays possible, so the flow can find it recovered.
const MIN_SCORE: f32 = 1.0 / 64.0;
/// Step by which a delivery moves a score towards `FULL_SCORE` (an exponential average over
/// about 16 deliveries, one NDP window and a half).
const SUCCESS_GAIN: f32 = 1.0 / 16.0;
/// An ECN fraction of at least this much counts as congestion and moves the flow; below it, it
/// only lowers the layer's score (DCTCP marks some packets even on a well-used path).
pub const ECN_REPICK_FRACTION: f64 = 0.5;

/// Per-flow layer scores for the `Adaptive` policy (a flat flows × layers table).
pub struct LayerChoice {
    policy: LayerPolicy,
    layers: Vec<u8>,
    scores: Vec<f32>,
}

impl LayerChoice {
    pub fn new(policy: LayerPolicy, layers: Vec<u8>, n_flows: usize) -> Self {
        let scores = match policy {
            LayerPolicy::Adaptive => vec![FULL_SCORE; n_flows * layers.len()],
            LayerPolicy::Uniform => Vec::new(),
        };
        LayerChoice {
            policy,
            layers,
            scores,
        }
    }

    pub fn policy(&self) -> LayerPolicy {
        self.policy
    }

    fn slot(&self, layer: u8) -> Option<usize> {
        self.layers.iter().position(|&l| l == layer)
    }

    fn scores_of(&mut self, flow: usize) -> &mut [f32] {
        let k = self.layers.len();
        &mut self.scores[flow * k..(flow + 1) * k]
    }

    /// The layer of a flow's first packet: the minimal layer for window-based transports (the
    /// paper's TCP initialises its layer tag to 1), otherwise a draw as for any flowlet.
    pub fn first(&mut self, rng: &mut SimRng, flow: usize, start_minimal: bool) -> u8 {
        if start_minimal && self.policy == LayerPolicy::Adaptive && self.slot(0).is_some() {
            return 0;
        }
        self.draw(rng, flow, None)
    }

    /// The layer of a new flowlet.
    pub fn flowlet(&mut self, rng: &mut SimRng, flow: usize) -> u8 {
        self.draw(rng, flow, None)
    }

    /// Applies `signal` about `layer` to `flow`, which currently uses `current`; returns the
    /// layer the flow should move to, if any.
    pub fn signal(
        &mut self,
        rng: &mut SimRng,
        flow: usize,
        current: u8,
        layer: u8,
        signal: LayerSignal,
    ) -> Option<u8> {
        if self.layers.len() < 2 {
            return None;
        }
        match self.policy {
            LayerPolicy::Uniform => match signal {
                LayerSignal::Trimmed => Some(self.draw(rng, flow, Some(current))),
                _ => None,
            },
            LayerPolicy::Adaptive => {
                let slot = self.slot(layer)?;
                let scores = self.scores_of(flow);
                let congested = match signal {
                    LayerSignal::Delivered => {
                        scores[slot] += (FULL_SCORE - scores[slot]) * SUCCESS_GAIN;
                        false
                    }
                    LayerSignal::EcnFraction(f) => {
                        scores[slot] = (scores[slot] * (1.0 - f as f32 / 2.0)).max(MIN_SCORE);
                        f >= ECN_REPICK_FRACTION
                    }
                    LayerSignal::Trimmed | LayerSignal::WindowCut | LayerSignal::Timeout => {
                        scores[slot] = (scores[slot] / 2.0).max(MIN_SCORE);
                        true
                    }
                };
                (congested && layer == current).then(|| self.draw(rng, flow, Some(current)))
            }
        }
    }

    /// A layer drawn in proportion to the flow's scores (uniformly under `Uniform`), never
    /// `avoid` when another layer exists.
    fn draw(&mut self, rng: &mut SimRng, flow: usize, avoid: Option<u8>) -> u8 {
        let k = self.layers.len();
        let skip = avoid.and_then(|l| self.slot(l)).filter(|_| k > 1);
        if self.policy == LayerPolicy::Uniform {
            let n = k as u32 - skip.is_some() as u32;
            let mut i = rng.below(n) as usize;
            if skip.is_some_and(|s| i >= s) {
                i += 1;
            }
            return self.layers[i];
        }
        let scores = &self.scores[flow * k..(flow + 1) * k];
        let total: f32 = (0..k).filter(|&i| Some(i) != skip).map(|i| scores[i]).sum();
        let mut x = (rng.next_u32() as f64 / 4_294_967_296.0) as f32 * total;
        let mut last = 0;
        for i in (0..k).filter(|&i| Some(i) != skip) {
            last = i;
            if x < scores[i] {
                return self.layers[i];
            }
            x -= scores[i];
        }
        self.layers[last]
    }
}

/// Whether a packet sent at `now` after the flow's previous one at `last_send` starts a new
/// flowlet (an idle gap longer than `gap`).
#[inline]
pub fn starts_flowlet(last_send: Time, now: Time, gap: Time) -> bool {
    last_send == super::packet::NO_TIME || now.saturating_sub(last_send) > gap
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(choice: &mut LayerChoice, n: usize) -> [usize; 3] {
        let mut rng = SimRng::new(7);
        let mut count = [0; 3];
        for _ in 0..n {
            count[choice.flowlet(&mut rng, 0) as usize] += 1;
        }
        count
    }

    #[test]
    fn adaptive_avoids_the_layer_that_just_trimmed() {
        let mut choice = LayerChoice::new(LayerPolicy::Adaptive, vec![0, 1, 2], 1);
        let mut rng = SimRng::new(3);
        for _ in 0..200 {
            let moved = choice.signal(&mut rng, 0, 1, 1, LayerSignal::Trimmed);
            assert!(moved.is_some_and(|l| l != 1), "{moved:?}");
        }
    }

    #[test]
    fn adaptive_only_scores_a_layer_the_flow_already_left() {
        let mut choice = LayerChoice::new(LayerPolicy::Adaptive, vec![0, 1, 2], 1);
        let mut rng = SimRng::new(3);
        assert_eq!(choice.signal(&mut rng, 0, 2, 1, LayerSignal::Trimmed), None);
        assert_eq!(choice.scores[1], 0.5);
    }

    #[test]
    fn adaptive_flowlets_prefer_layers_that_deliver() {
        let mut choice = LayerChoice::new(LayerPolicy::Adaptive, vec![0, 1, 2], 1);
        let mut rng = SimRng::new(3);
        for _ in 0..4 {
            choice.signal(&mut rng, 0, 0, 2, LayerSignal::Trimmed);
        }
        let count = draws(&mut choice, 3000);
        // Layer 2's score is 1/16 of the others': about 3% of draws, not a third.
        assert!(
            count[2] < 200 && count[0] > 1200 && count[1] > 1200,
            "{count:?}"
        );
        for _ in 0..200 {
            choice.signal(&mut rng, 0, 0, 2, LayerSignal::Delivered);
        }
        let count = draws(&mut choice, 3000);
        assert!(count[2] > 800, "recovered layer still avoided: {count:?}");
    }

    #[test]
    fn uniform_has_no_memory_and_ignores_window_signals() {
        let mut choice = LayerChoice::new(LayerPolicy::Uniform, vec![0, 1, 2], 1);
        let mut rng = SimRng::new(3);
        for _ in 0..4 {
            assert!(choice
                .signal(&mut rng, 0, 2, 2, LayerSignal::Trimmed)
                .is_some_and(|l| l != 2));
        }
        assert_eq!(
            choice.signal(&mut rng, 0, 2, 2, LayerSignal::WindowCut),
            None
        );
        let count = draws(&mut choice, 3000);
        assert!(count.iter().all(|&c| c > 900), "{count:?}");
    }

    #[test]
    fn ecn_moves_a_flow_only_above_the_fraction() {
        let mut choice = LayerChoice::new(LayerPolicy::Adaptive, vec![0, 1], 1);
        let mut rng = SimRng::new(3);
        assert_eq!(
            choice.signal(&mut rng, 0, 0, 0, LayerSignal::EcnFraction(0.2)),
            None
        );
        assert_eq!(
            choice.signal(&mut rng, 0, 0, 0, LayerSignal::EcnFraction(0.8)),
            Some(1)
        );
    }

    #[test]
    fn window_based_flows_start_on_the_minimal_layer() {
        let mut choice = LayerChoice::new(LayerPolicy::Adaptive, vec![0, 1, 2], 4);
        let mut rng = SimRng::new(3);
        assert!((0..4).all(|f| choice.first(&mut rng, f, true) == 0));
    }
}
