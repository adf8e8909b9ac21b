//! Channel dependency graph (CDG) of one layer's destination-based routes, and its acyclicity.
//!
//! A channel is a directed link. A route entering switch n over (s->n) and leaving over (n->m)
//! makes (s->n) wait on (n->m); a cycle of such waits can deadlock a lossless (PFC) fabric.

use rayon::prelude::*;

use crate::routing::transpose_into;
use crate::support::graph::Csr;

/// Channels of a layer: channel (s -> n) is numbered `hops.start(s) + position of n in
/// hops.row(s)`, where row s lists the distinct next hops switch s uses, sorted.
struct Channels {
    hops: Csr<u32>,
}

impl Channels {
    fn from_table(nr: usize, next_hop: &[i32]) -> Self {
        let rows: Vec<Vec<u32>> = (0..nr)
            .into_par_iter()
            .map_init(
                || vec![false; nr],
                |seen, s| {
                    let mut hops: Vec<u32> = Vec::new();
                    for &n in &next_hop[s * nr..(s + 1) * nr] {
                        if n >= 0 && !seen[n as usize] {
                            seen[n as usize] = true;
                            hops.push(n as u32);
                        }
                    }
                    for &n in &hops {
                        seen[n as usize] = false;
                    }
                    hops.sort_unstable();
                    hops
                },
            )
            .collect();
        Channels {
            hops: Csr::from_rows(rows),
        }
    }

    /// The channel each (switch, destination) route leaves by, [destination][switch] like
    /// `towards` in `dependency_bitsets`; `u32::MAX` where there is no route.
    fn of_routes_towards(&self, nr: usize, next_hop: &[i32]) -> Vec<u32> {
        let mut leaving = vec![u32::MAX; nr * nr];
        leaving.par_chunks_mut(nr.max(1)).enumerate().for_each_init(
            || vec![u32::MAX; nr],
            |channel_to, (s, out)| {
                // Only the hops of s are looked up below, and each was just set.
                for (j, &n) in self.hops.row(s).iter().enumerate() {
                    channel_to[n as usize] = (self.first(s) + j) as u32;
                }
                for (t, &n) in next_hop[s * nr..(s + 1) * nr].iter().enumerate() {
                    if n >= 0 {
                        out[t] = channel_to[n as usize];
                    }
                }
            },
        );
        let mut towards = vec![u32::MAX; nr * nr];
        transpose_into(&leaving, nr, &mut towards);
        towards
    }

    /// Number of the first channel out of switch `s`.
    #[inline]
    fn first(&self, s: usize) -> usize {
        self.hops.start(s)
    }

    fn count(&self) -> usize {
        self.hops.len()
    }

    fn out_degree(&self, s: usize) -> usize {
        self.hops.row(s).len()
    }
}

/// Dependency sets as bitsets: bit j of channel c = (s -> n) means c waits on the j-th channel
/// out of n. Only switches that carry traffic towards t count: with `endpoints` (switches that
/// have hosts), those on a route from an endpoint to an endpoint destination; routes towards
/// host-less switches (fat-tree cores) never carry host traffic and must not add waits.
fn dependency_bitsets(
    nr: usize,
    next_hop: &[i32],
    endpoints: Option<&[bool]>,
) -> (Channels, Vec<u64>, usize) {
    let channels = Channels::from_table(nr, next_hop);
    let max_out = (0..nr).map(|s| channels.out_degree(s)).max().unwrap_or(0);
    let words = max_out.div_ceil(64).max(1);
    // Column-major copies so that walks towards one destination read contiguous memory.
    let mut towards = vec![-1i32; nr * nr];
    transpose_into(next_hop, nr, &mut towards);
    let leaving = channels.of_routes_towards(nr, next_hop);
    let bits = (0..nr)
        .into_par_iter()
        .fold(
            || (vec![0u64; channels.count() * words], vec![false; nr]),
            |(mut bits, mut carries), t| {
                let row = &towards[t * nr..(t + 1) * nr];
                let leaving_row = &leaving[t * nr..(t + 1) * nr];
                match endpoints {
                    Some(endpoints) if !endpoints[t] => return (bits, carries),
                    Some(endpoints) => {
                        carries.fill(false);
                        for s in (0..nr).filter(|&s| endpoints[s]) {
                            let mut node = s;
                            while node != t && !carries[node] {
                                carries[node] = true;
                                let n = row[node];
                                if n < 0 {
                                    break;
                                }
                                node = n as usize;
                            }
                        }
                    }
                    None => carries.fill(true),
                }
                for s in 0..nr {
                    let n = row[s];
                    if !carries[s] || n < 0 {
                        continue;
                    }
                    let m = row[n as usize];
                    if m < 0 {
                        continue;
                    }
                    let a = leaving_row[s] as usize;
                    let b = leaving_row[n as usize] as usize - channels.first(n as usize);
                    bits[a * words + b / 64] |= 1u64 << (b % 64);
                }
                (bits, carries)
            },
        )
        .map(|(bits, _)| bits)
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x |= y);
            a
        })
        .unwrap_or_else(|| vec![0u64; channels.count() * words]);
    (channels, bits, words)
}

/// Successor lists from the bitsets (head switch of each channel is needed to decode them).
fn successor_lists(nr: usize, channels: &Channels, bits: &[u64], words: usize) -> Vec<Vec<u32>> {
    let mut successors = vec![Vec::new(); channels.count()];
    for s in 0..nr {
        for (j, &n) in channels.hops.row(s).iter().enumerate() {
            let a = channels.first(s) + j;
            let base = channels.first(n as usize);
            for w in 0..words {
                let mut word = bits[a * words + w];
                while word != 0 {
                    let bit = word.trailing_zeros() as usize;
                    successors[a].push((base + w * 64 + bit) as u32);
                    word &= word - 1;
                }
            }
        }
    }
    successors
}

/// Kahn's algorithm: the graph is acyclic iff every node can be peeled off at in-degree zero.
pub fn is_acyclic(successors: &[Vec<u32>]) -> bool {
    !unpeeled(successors.len(), |c| &successors[c]).contains(&true)
}

/// A cycle of the dependency graph given as (channel, channel) pairs, as the channels it
/// passes in order (each waits on the next, the last on the first); empty when acyclic.
///
/// Kahn's peeling leaves exactly the channels with a waiting predecessor that is itself left,
/// so from any of them, stepping to a left predecessor must come back round: that stretch,
/// reversed, is the cycle. The smallest channel and predecessor are taken, so the witness is
/// the same on every run.
pub fn dependency_cycle(pairs: &[(u64, u64)]) -> Vec<u64> {
    let mut channels: Vec<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    channels.par_sort_unstable();
    channels.dedup();
    let position = |c: u64| channels.binary_search(&c).expect("a listed channel") as u32;
    let edges: Vec<(u32, u32)> = pairs
        .par_iter()
        .map(|&(a, b)| (position(a), position(b)))
        .collect();
    let size = channels.len();
    let successors = Csr::grouped(size, edges.iter().map(|&(a, b)| (a as usize, b)));
    let left = unpeeled(size, |c| successors.row(c));
    let Some(start) = left.iter().position(|&l| l) else {
        return Vec::new();
    };
    let predecessors = Csr::grouped(size, edges.iter().map(|&(a, b)| (b as usize, a)));
    let mut seen = vec![usize::MAX; size];
    let mut walk: Vec<u32> = Vec::new();
    let mut here = start as u32;
    while seen[here as usize] == usize::MAX {
        seen[here as usize] = walk.len();
        walk.push(here);
        here = *predecessors
            .row(here as usize)
            .iter()
            .filter(|&&p| left[p as usize])
            .min()
            .expect("a channel left by the peeling waits on another left one");
    }
    let mut cycle: Vec<u64> = walk[seen[here as usize]..]
        .iter()
        .map(|&c| channels[c as usize])
        .collect();
    cycle.reverse();
    cycle
}

/// Per node, whether Kahn's peeling leaves it (it is on a cycle or waits behind one).
fn unpeeled<'a>(size: usize, successors: impl Fn(usize) -> &'a [u32]) -> Vec<bool> {
    let mut indegree = vec![0u32; size];
    for c in 0..size {
        for &b in successors(c) {
            indegree[b as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..size as u32)
        .filter(|&c| indegree[c as usize] == 0)
        .collect();
    let mut left = vec![true; size];
    while let Some(c) = ready.pop() {
        left[c as usize] = false;
        for &b in successors(c as usize) {
            indegree[b as usize] -= 1;
            if indegree[b as usize] == 0 {
                ready.push(b);
            }
        }
    }
    left
}

pub fn layer_is_deadlock_free(nr: usize, next_hop: &[i32], endpoints: Option<&[bool]>) -> bool {
    let (channels, bits, words) = dependency_bitsets(nr, next_hop, endpoints);
    let successors = successor_lists(nr, &channels, &bits, words);
    is_acyclic(&successors)
}

/// `layer_is_deadlock_free` of each layer's table in `tables` (layers of nr x nr), the layers
/// checked side by side: most of one check (building the dependency sets) runs on one core.
pub fn layers_are_deadlock_free(
    layers: usize,
    nr: usize,
    tables: &[i32],
    endpoints: Option<&[bool]>,
) -> Vec<bool> {
    if nr == 0 {
        return vec![true; layers];
    }
    tables
        .par_chunks(nr * nr)
        .map(|table| layer_is_deadlock_free(nr, table, endpoints))
        .collect()
}

/// Routes given as rows (switch, destination, next hop), tagged with their layer (1-based; 0
/// for rows that carry nothing, such as unresolved or faulty ones). Several rows per (switch,
/// destination) are an ECMP set, and each member counts.
pub struct RouteRows<'a> {
    pub nr: usize,
    pub layer: &'a [u16],
    pub switch: &'a [i32],
    pub dest: &'a [i32],
    pub hop: &'a [i32],
}

/// The sorted unique dependencies ((tail, head) channel ids, channel = tail switch * nr + head
/// switch) of each layer 1..=layers: a packet for t entering n over (s->n) waits on every
/// (n->m) that n routes t over. With `endpoints`, only routes towards switches with hosts
/// count (nothing else is ever sent).
pub fn route_dependencies(
    rows: &RouteRows<'_>,
    layers: usize,
    endpoints: Option<&[bool]>,
) -> Vec<Vec<(u64, u64)>> {
    let mut of_layer: Vec<Vec<u32>> = vec![Vec::new(); layers];
    for (i, &layer) in rows.layer.iter().enumerate() {
        let wanted = endpoints.is_none_or(|e| e[rows.dest[i] as usize]);
        if layer > 0 && wanted {
            of_layer[layer as usize - 1].push(i as u32);
        }
    }
    of_layer
        .par_iter()
        .map(|members| layer_dependencies(rows, members))
        .collect()
}

fn layer_dependencies(rows: &RouteRows<'_>, members: &[u32]) -> Vec<(u64, u64)> {
    let nr = rows.nr;
    // The rows of each (switch, destination) cell, and of each switch.
    let cells = Csr::grouped(
        nr * nr,
        members.iter().map(|&i| {
            let row = i as usize;
            (rows.switch[row] as usize * nr + rows.dest[row] as usize, i)
        }),
    );
    let of_switch = Csr::grouped(
        nr,
        members
            .iter()
            .map(|&i| (rows.switch[i as usize] as usize, i)),
    );
    // Per switch s, its waits (n, m) sorted and deduplicated in cache: sorted by s, then n,
    // then m, they are sorted by channel pair, since channel (s->n) = s * nr + n.
    let per_switch: Vec<Vec<(u64, u64)>> = (0..nr)
        .into_par_iter()
        .map(|s| {
            let mut waits: Vec<u64> = Vec::new();
            for &i in of_switch.row(s) {
                let (t, n) = (
                    rows.dest[i as usize] as usize,
                    rows.hop[i as usize] as usize,
                );
                for &j in cells.row(n * nr + t) {
                    let m = rows.hop[j as usize] as u64;
                    waits.push(((n as u64) << 32) | m);
                }
            }
            waits.sort_unstable();
            waits.dedup();
            let (s, nr) = (s as u64, nr as u64);
            waits
                .into_iter()
                .map(|wait| {
                    let (n, m) = (wait >> 32, wait & u64::from(u32::MAX));
                    (s * nr + n, n * nr + m)
                })
                .collect()
        })
        .collect();
    per_switch.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every switch of an nr-ring forwards clockwise to every destination.
    fn clockwise_ring(nr: usize) -> Vec<i32> {
        let mut next = vec![-1i32; nr * nr];
        for s in 0..nr {
            for t in 0..nr {
                if s != t {
                    next[s * nr + t] = ((s + 1) % nr) as i32;
                }
            }
        }
        next
    }

    #[test]
    fn the_cycle_witness_is_a_cycle_of_the_graph() {
        // 1 -> 2 -> 3 -> 1 with 0 feeding it and 4 hanging off it.
        let pairs = [(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)];
        let cycle = dependency_cycle(&pairs);
        assert_eq!(cycle.len(), 3);
        for (i, &c) in cycle.iter().enumerate() {
            let next = cycle[(i + 1) % cycle.len()];
            assert!(pairs.contains(&(c, next)));
        }
        assert!(dependency_cycle(&[(0, 1), (1, 2), (0, 2)]).is_empty());
        assert!(dependency_cycle(&[]).is_empty());
    }

    #[test]
    fn ecmp_rows_wait_on_every_member_of_the_next_set() {
        // 0 -> {1, 2} -> 3 towards 3: (0->1) waits on (1->3), (0->2) on (2->3).
        let rows = RouteRows {
            nr: 4,
            layer: &[1, 1, 1, 1, 0],
            switch: &[0, 0, 1, 2, 1],
            dest: &[3, 3, 3, 3, 3],
            hop: &[1, 2, 3, 3, 0],
        };
        let deps = route_dependencies(&rows, 1, None);
        assert_eq!(deps, vec![vec![(1, 7), (2, 11)]]);
        let no_hosts_at_3 = [true, true, true, false];
        assert_eq!(
            route_dependencies(&rows, 1, Some(&no_hosts_at_3)),
            vec![Vec::<(u64, u64)>::new()]
        );
    }

    #[test]
    fn clockwise_ring_routes_are_cyclic() {
        let nr = 4;
        let next = clockwise_ring(nr);
        assert!(!layer_is_deadlock_free(nr, &next, None));
    }

    #[test]
    fn routes_that_carry_no_host_traffic_add_no_waits() {
        // Clockwise 4-ring, but only switches 0 and 1 have hosts: 0->1 and 1->0 (the long way
        // round, 1->2->3->0) never close the cycle 0->1->2->3->0 on their own.
        let nr = 4;
        let next = clockwise_ring(nr);
        let endpoints = [true, true, false, false];
        assert!(layer_is_deadlock_free(nr, &next, Some(&endpoints)));
        assert!(!layer_is_deadlock_free(nr, &next, None));
    }

    #[test]
    fn each_layer_gets_its_own_verdict_in_order() {
        let nr = 4;
        let ring = clockwise_ring(nr);
        let mut none = vec![-1i32; nr * nr];
        none[1] = 1; // 0 -> 1 directly: no dependency at all
        let tables: Vec<i32> = [&none, &ring, &none]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        assert_eq!(
            layers_are_deadlock_free(3, nr, &tables, None),
            vec![true, false, true]
        );
        assert_eq!(layers_are_deadlock_free(2, 0, &[], None), vec![true, true]);
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
        assert!(layer_is_deadlock_free(nr, &next, None));
    }
}

pub mod python {
    use numpy::ndarray::{Array1, Array2};
    use numpy::{
        IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
        PyUntypedArrayMethods,
    };
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// Per layer, true when the routes of `next_hop[layer, s, t]` (int32, square tables) have
    /// an acyclic channel dependency graph, i.e. the layer cannot deadlock under PFC. With
    /// `endpoints` (bool per switch), only routes between switches that have hosts count.
    #[pyfunction]
    #[pyo3(signature = (next_hop, endpoints=None))]
    pub fn layers_are_deadlock_free(
        py: Python<'_>,
        next_hop: PyReadonlyArray3<'_, i32>,
        endpoints: Option<PyReadonlyArray1<'_, bool>>,
    ) -> PyResult<Vec<bool>> {
        let shape = next_hop.shape();
        if shape[1] != shape[2] {
            return Err(PyValueError::new_err(
                "next_hop must be square tables [layer, switch, destination]",
            ));
        }
        let nr = shape[1];
        let tables = next_hop.as_slice()?;
        let endpoints = match &endpoints {
            Some(e) if e.len() != nr => {
                return Err(PyValueError::new_err(
                    "endpoints must have one entry per switch",
                ))
            }
            Some(e) => Some(e.as_slice()?),
            None => None,
        };
        Ok(crate::support::pool::detached(py, || {
            super::layers_are_deadlock_free(shape[0], nr, tables, endpoints)
        }))
    }

    type Dependencies<'py> = Vec<Bound<'py, PyArray2<i64>>>;

    /// Per layer 1..=layers, the sorted unique (channel, channel) dependencies (int64, M x 2,
    /// channel = tail * nr + head) of the route rows tagged with that layer (0: no layer).
    #[pyfunction]
    #[pyo3(signature = (nr, layers, layer, switch, dest, hop, endpoints=None))]
    #[allow(clippy::too_many_arguments)]
    pub fn route_dependencies<'py>(
        py: Python<'py>,
        nr: usize,
        layers: usize,
        layer: PyReadonlyArray1<'py, u16>,
        switch: PyReadonlyArray1<'py, i32>,
        dest: PyReadonlyArray1<'py, i32>,
        hop: PyReadonlyArray1<'py, i32>,
        endpoints: Option<PyReadonlyArray1<'py, bool>>,
    ) -> PyResult<Dependencies<'py>> {
        let rows = super::RouteRows {
            nr,
            layer: layer.as_slice()?,
            switch: switch.as_slice()?,
            dest: dest.as_slice()?,
            hop: hop.as_slice()?,
        };
        let count = rows.layer.len();
        if [rows.switch.len(), rows.dest.len(), rows.hop.len()] != [count; 3] {
            return Err(PyValueError::new_err(
                "route columns must have the same length",
            ));
        }
        let switch_ok = |v: i32| v >= 0 && (v as usize) < nr;
        let rows_ok = (0..count).all(|i| {
            rows.layer[i] == 0
                || (rows.layer[i] as usize <= layers
                    && switch_ok(rows.switch[i])
                    && switch_ok(rows.dest[i])
                    && switch_ok(rows.hop[i]))
        });
        if !rows_ok {
            return Err(PyValueError::new_err(
                "a routed row names no switch, or a layer past the last",
            ));
        }
        let endpoints = match &endpoints {
            Some(e) if e.len() != nr => {
                return Err(PyValueError::new_err(
                    "endpoints must have one entry per switch",
                ))
            }
            Some(e) => Some(e.as_slice()?),
            None => None,
        };
        let per_layer = crate::support::pool::detached(py, || {
            super::route_dependencies(&rows, layers, endpoints)
        });
        Ok(per_layer
            .into_iter()
            .map(|pairs| {
                let flat: Vec<i64> = pairs
                    .into_iter()
                    .flat_map(|(a, b)| [a as i64, b as i64])
                    .collect();
                let rows = flat.len() / 2;
                Array2::from_shape_vec((rows, 2), flat)
                    .expect("shape")
                    .into_pyarray(py)
            })
            .collect())
    }

    /// One cycle of the dependency graph `pairs` (int64, M x 2, (channel, channel)) as its
    /// channels in order, each waiting on the next and the last on the first; empty when the
    /// graph is acyclic.
    #[pyfunction]
    pub fn dependency_cycle<'py>(
        py: Python<'py>,
        pairs: PyReadonlyArray2<'py, i64>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let shape = pairs.shape();
        if shape.len() != 2 || shape[1] != 2 {
            return Err(PyValueError::new_err("pairs must be M x 2"));
        }
        let flat = pairs.as_slice()?;
        if flat.iter().any(|&c| c < 0) {
            return Err(PyValueError::new_err("channel ids are not negative"));
        }
        let list: Vec<(u64, u64)> = flat
            .chunks_exact(2)
            .map(|p| (p[0] as u64, p[1] as u64))
            .collect();
        let cycle = crate::support::pool::detached(py, || super::dependency_cycle(&list));
        Ok(Array1::from_iter(cycle.into_iter().map(|c| c as i64)).into_pyarray(py))
    }
}
