//! Channel dependency graph (CDG) of one layer's destination-based routes, and its acyclicity.
//!
//! A channel is a directed link. A route entering switch n over (s->n) and leaving over (n->m)
//! makes (s->n) wait on (n->m); a cycle of such waits can deadlock a lossless (PFC) fabric.

/// Dependencies of the routes given by `next_hop[s * nr + t]` (next switch from s towards t,
/// negative on the diagonal or where unreachable), deduplicated, as successor lists per channel
/// where channels are numbered by `channel_of(s, n)`.
fn dependency_lists(nr: usize, next_hop: &[i32]) -> (Vec<Vec<u32>>, Vec<u32>) {
    // Channel ids are handed out on first use; the table is dense but u32 keeps it small.
    let mut channel = vec![u32::MAX; nr * nr];
    let mut count = 0u32;
    let mut id = |a: usize, b: usize, channel: &mut Vec<u32>| -> u32 {
        let slot = &mut channel[a * nr + b];
        if *slot == u32::MAX {
            *slot = count;
            count += 1;
        }
        *slot
    };
    let mut successors: Vec<Vec<u32>> = Vec::new();
    for s in 0..nr {
        for t in 0..nr {
            let n = next_hop[s * nr + t];
            if n < 0 {
                continue;
            }
            let n = n as usize;
            let m = next_hop[n * nr + t];
            if m < 0 {
                continue;
            }
            let a = id(s, n, &mut channel);
            let b = id(n, m as usize, &mut channel);
            let needed = a.max(b) as usize + 1;
            if successors.len() < needed {
                successors.resize_with(needed, Vec::new);
            }
            successors[a as usize].push(b);
        }
    }
    for list in successors.iter_mut() {
        list.sort_unstable();
        list.dedup();
    }
    (successors, channel)
}

/// Kahn's algorithm: the graph is acyclic iff every node can be peeled off at in-degree zero.
pub fn is_acyclic(successors: &[Vec<u32>]) -> bool {
    let size = successors.len();
    let mut indegree = vec![0u32; size];
    for list in successors {
        for &b in list {
            indegree[b as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..size as u32)
        .filter(|&c| indegree[c as usize] == 0)
        .collect();
    let mut peeled = 0usize;
    while let Some(c) = ready.pop() {
        peeled += 1;
        for &b in &successors[c as usize] {
            indegree[b as usize] -= 1;
            if indegree[b as usize] == 0 {
                ready.push(b);
            }
        }
    }
    peeled == size
}

pub fn layer_is_deadlock_free(nr: usize, next_hop: &[i32]) -> bool {
    let (successors, _) = dependency_lists(nr, next_hop);
    is_acyclic(&successors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clockwise_ring_routes_are_cyclic() {
        // 4-ring, every switch forwards clockwise to every destination.
        let nr = 4;
        let mut next = vec![-1i32; nr * nr];
        for s in 0..nr {
            for t in 0..nr {
                if s != t {
                    next[s * nr + t] = ((s + 1) % nr) as i32;
                }
            }
        }
        assert!(!layer_is_deadlock_free(nr, &next));
    }

    #[test]
    fn line_routes_are_acyclic() {
        // Path 0-1-2-3: routes go left or right, never turning, so no cycle.
        let nr = 4;
        let mut next = vec![-1i32; nr * nr];
        for s in 0..nr {
            for t in 0..nr {
                if s < t {
                    next[s * nr + t] = (s + 1) as i32;
                } else if s > t {
                    next[s * nr + t] = (s - 1) as i32;
                }
            }
        }
        assert!(layer_is_deadlock_free(nr, &next));
    }
}

pub mod python {
    use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// True when the routes of `next_hop[s, t]` (int32, square) have an acyclic channel
    /// dependency graph, i.e. the layer cannot deadlock under PFC.
    #[pyfunction]
    pub fn layer_is_deadlock_free(
        py: Python<'_>,
        next_hop: PyReadonlyArray2<'_, i32>,
    ) -> PyResult<bool> {
        let shape = next_hop.shape();
        if shape[0] != shape[1] {
            return Err(PyValueError::new_err(
                "next_hop must be square [switch, destination]",
            ));
        }
        let nr = shape[0];
        let table = next_hop.as_slice()?.to_vec();
        Ok(py.detach(|| super::layer_is_deadlock_free(nr, &table)))
    }
}
