//! Flows grouped into phases separated by barriers: an application loop (a stencil's halo
//! exchange, say) whose iteration k + 1 starts only once every flow of iteration k has reached
//! its receiver. A flow of phase k > 0 waits; when the last flow of phase k - 1 finishes, each
//! flow of phase k starts its own `start` later (the compute time before it sends). Phase 0's
//! flows start at their `start` as any flow does.
//!
//! The barrier itself costs nothing here: no barrier messages cross the network, so an
//! iteration's time is its compute time plus its slowest flow.

/// Which flows belong to which phase, and how many of each phase are still running.
#[derive(Clone, Debug)]
pub struct Phases {
    /// The phase of every flow.
    of: Vec<u32>,
    /// Flows not yet finished, per phase.
    remaining: Vec<u32>,
    /// The flows of phase p are `members[first[p]..first[p + 1]]`, in index order.
    first: Vec<usize>,
    members: Vec<u32>,
}

impl Phases {
    /// Phases from one entry per flow; every phase from 0 to the highest must hold a flow
    /// (an empty phase would be a barrier nobody reaches). `None`: no phases given.
    pub fn new(phase: &[u32], n_flows: usize) -> Result<Option<Self>, String> {
        if phase.is_empty() {
            return Ok(None);
        }
        if phase.len() != n_flows {
            return Err("phase needs one entry per flow".into());
        }
        let count = *phase.iter().max().expect("non-empty") as usize + 1;
        if count > n_flows {
            return Err(format!(
                "phase {} is above the {n_flows} flows' phases: phases must run 0, 1, 2 ...",
                count - 1
            ));
        }
        let mut remaining = vec![0u32; count];
        for &p in phase {
            remaining[p as usize] += 1;
        }
        if let Some(empty) = remaining.iter().position(|&c| c == 0) {
            return Err(format!(
                "phase {empty} holds no flow: phases must run 0, 1, 2 ... without gaps"
            ));
        }
        let mut first = vec![0usize; count + 1];
        for p in 0..count {
            first[p + 1] = first[p] + remaining[p] as usize;
        }
        let mut cursor = first.clone();
        let mut members = vec![0u32; n_flows];
        for (i, &p) in phase.iter().enumerate() {
            members[cursor[p as usize]] = i as u32;
            cursor[p as usize] += 1;
        }
        Ok(Some(Phases {
            of: phase.to_vec(),
            remaining,
            first,
            members,
        }))
    }

    /// Whether `flow` waits for a barrier before it starts.
    pub fn waits(&self, flow: usize) -> bool {
        self.of[flow] > 0
    }

    /// Records that `flow` finished (call once per flow); the flows of the next phase when it
    /// was the last of its own, else nothing.
    pub fn finished(&mut self, flow: usize) -> &[u32] {
        let p = self.of[flow] as usize;
        self.remaining[p] -= 1;
        if self.remaining[p] > 0 || p + 1 >= self.remaining.len() {
            return &[];
        }
        &self.members[self.first[p + 1]..self.first[p + 2]]
    }
}

#[cfg(test)]
mod tests {
    use super::Phases;

    #[test]
    fn the_next_phase_is_released_by_the_last_flow_of_its_predecessor_only() {
        let mut phases = Phases::new(&[0, 1, 0, 1, 2], 5).unwrap().unwrap();
        assert!(!phases.waits(0) && phases.waits(1) && phases.waits(4));
        assert!(phases.finished(2).is_empty());
        assert_eq!(phases.finished(0), &[1, 3]);
        assert!(phases.finished(3).is_empty());
        assert_eq!(phases.finished(1), &[4]);
        assert!(phases.finished(4).is_empty());
    }

    #[test]
    fn phases_with_gaps_or_the_wrong_length_are_refused() {
        assert!(Phases::new(&[], 3).unwrap().is_none());
        assert!(Phases::new(&[0, 2], 2).unwrap_err().contains("above"));
        assert!(Phases::new(&[0, 2, 2], 3)
            .unwrap_err()
            .contains("phase 1 holds no flow"));
        assert!(Phases::new(&[0], 2)
            .unwrap_err()
            .contains("one entry per flow"));
    }
}
