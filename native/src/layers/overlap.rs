//! Minimise-path-overlap layers (FatPaths, Listing 2).
//!
//! Each sparse layer is grown path by path. Switch pairs are served in order of how many
//! almost-minimal paths they already own (fewest first, random ties); a served pair gets the
//! least-weight path of length in [Lmin, Lmax] that is monotone in the layer's permutation and
//! uses only links the layer still allows. Link weights count how often a link was chosen and
//! persist across layers, so later layers steer away from the links of earlier ones.
//!
//! Forbidding chords keeps a path from being shortcut by a single link; the explicit check
//! (`keeps_chosen_paths_shortest`) also rejects shortcuts built from several links, so every
//! chosen path is a shortest path of its finished layer and destination-based forwarding in
//! that layer really uses it.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::routing::mix64;
use crate::support::graph::{self, Csr};

/// Pair keys are already well mixed by construction; a multiply is enough of a hash.
#[derive(Default)]
pub struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 pair keys are hashed")
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type PairMap<V> = HashMap<u64, V, BuildHasherDefault<PairHasher>>;
type PairSet = HashSet<u64, BuildHasherDefault<PairHasher>>;

/// Candidates tried per served pair before it is left for a later layer.
const CANDIDATES_PER_PAIR: usize = 16;
/// Weight dominates; the low bits break ties between equal-weight paths at random.
const WEIGHT_SHIFT: u32 = 20;
const TIE_MASK: u64 = (1 << 16) - 1;

#[inline]
fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    ((lo as u64) << 32) | hi as u64
}

/// The fabric with link ids next to each neighbour (sorted, so links can be looked up).
struct Fabric {
    nr: usize,
    /// Row `switch`: `(neighbour, link)`.
    links: Csr<(u32, u32)>,
}

impl Fabric {
    fn new(nr: usize, edges: &[(u32, u32)]) -> Self {
        let mut links = graph::incidence(nr, edges);
        links.sort_rows();
        Fabric { nr, links }
    }

    #[inline]
    fn around(&self, node: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.links.row(node as usize).iter().copied()
    }

    fn link_between(&self, a: u32, b: u32) -> Option<u32> {
        let row = self.links.row(a as usize);
        let found = row.binary_search_by_key(&b, |&(n, _)| n).ok()?;
        Some(row[found].1)
    }

    /// Hop distances between all switch pairs, row-major (u8::MAX = unreachable).
    fn hop_distances(&self) -> Vec<u8> {
        let nr = self.nr;
        let mut dist = vec![u8::MAX; nr * nr];
        let mut queue = Vec::with_capacity(nr);
        for (source, row) in dist.chunks_mut(nr.max(1)).enumerate().take(nr) {
            queue.clear();
            queue.push(source as u32);
            row[source] = 0;
            let mut head = 0;
            while head < queue.len() {
                let node = queue[head];
                head += 1;
                for (next, _) in self.around(node) {
                    if row[next as usize] == u8::MAX {
                        row[next as usize] = row[node as usize].saturating_add(1);
                        queue.push(next);
                    }
                }
            }
        }
        dist
    }
}

/// Depth-limited BFS over the layer plus a few links not yet in it, with reusable scratch.
struct LayerSearch {
    stamp: Vec<u32>,
    depth: Vec<u8>,
    epoch: u32,
    reached: Vec<u32>,
}

impl LayerSearch {
    fn new(nr: usize) -> Self {
        LayerSearch {
            stamp: vec![0; nr],
            depth: vec![0; nr],
            epoch: 0,
            reached: Vec::new(),
        }
    }

    /// Switches within `limit` hops of `from`; their depths stay readable via `depth_of`.
    fn ball(&mut self, layer: &[Vec<u32>], extra: &[(u32, u32)], from: u32, limit: u8) {
        self.epoch += 1;
        self.reached.clear();
        self.reached.push(from);
        self.stamp[from as usize] = self.epoch;
        self.depth[from as usize] = 0;
        let mut head = 0;
        while head < self.reached.len() {
            let node = self.reached[head];
            head += 1;
            let d = self.depth[node as usize];
            if d == limit {
                continue;
            }
            let via_extra = extra.iter().filter_map(|&(a, b)| {
                if a == node {
                    Some(b)
                } else if b == node {
                    Some(a)
                } else {
                    None
                }
            });
            for next in layer[node as usize].iter().copied().chain(via_extra) {
                if self.stamp[next as usize] != self.epoch {
                    self.stamp[next as usize] = self.epoch;
                    self.depth[next as usize] = d + 1;
                    self.reached.push(next);
                }
            }
        }
    }

    #[inline]
    fn depth_of(&self, node: u32) -> Option<u8> {
        (self.stamp[node as usize] == self.epoch).then(|| self.depth[node as usize])
    }
}

/// Best monotone partial paths from one end, one slot per (hop count, switch).
struct Frontier {
    cost: Vec<Vec<u64>>,
    parent: Vec<Vec<u32>>,
    stamp: Vec<Vec<u32>>,
    members: Vec<Vec<u32>>,
    epoch: u32,
}

impl Frontier {
    fn new(nr: usize, levels: usize) -> Self {
        Frontier {
            cost: vec![vec![0; nr]; levels + 1],
            parent: vec![vec![0; nr]; levels + 1],
            stamp: vec![vec![0; nr]; levels + 1],
            members: vec![Vec::new(); levels + 1],
            epoch: 0,
        }
    }

    #[inline]
    fn get(&self, level: usize, node: u32) -> Option<u64> {
        (self.stamp[level][node as usize] == self.epoch).then(|| self.cost[level][node as usize])
    }

    /// Grow `levels` hops from `start`, stepping only to switches `admit` accepts after `node`.
    fn grow(
        &mut self,
        fabric: &Fabric,
        start: u32,
        levels: usize,
        link_cost: &[u64],
        allowed: &[bool],
        admit: impl Fn(u32, u32) -> bool,
    ) {
        self.epoch += 1;
        for level in self.members.iter_mut() {
            level.clear();
        }
        self.stamp[0][start as usize] = self.epoch;
        self.cost[0][start as usize] = 0;
        self.members[0].push(start);
        for level in 1..=levels {
            let (done, rest) = self.members.split_at_mut(level);
            for &node in &done[level - 1] {
                let base = self.cost[level - 1][node as usize];
                for (next, link) in fabric.around(node) {
                    if !allowed[link as usize] || !admit(node, next) {
                        continue;
                    }
                    let cost = base + link_cost[link as usize];
                    let slot = next as usize;
                    if self.stamp[level][slot] != self.epoch {
                        self.stamp[level][slot] = self.epoch;
                        self.cost[level][slot] = cost;
                        self.parent[level][slot] = node;
                        rest[0].push(next);
                    } else if cost < self.cost[level][slot] {
                        self.cost[level][slot] = cost;
                        self.parent[level][slot] = node;
                    }
                }
            }
        }
    }

    /// Switches from the frontier's start to `node` at `level`, start first.
    fn walk_back(&self, mut node: u32, level: usize) -> Vec<u32> {
        let mut nodes = vec![node];
        for l in (1..=level).rev() {
            node = self.parent[l][node as usize];
            nodes.push(node);
        }
        nodes.reverse();
        nodes
    }
}

/// What the algorithm built: one link mask per layer and the paths it chose, per layer.
pub struct OverlapLayers {
    pub masks: Vec<Vec<bool>>,
    pub paths: Vec<Vec<Vec<u32>>>,
}

/// Per-layer state that is reset when the next layer starts.
struct LayerState {
    in_layer: Vec<bool>,
    allowed: Vec<bool>,
    adjacency: Vec<Vec<u32>>,
    required: PairMap<u8>,
    settled: PairSet,
}

pub struct OverlapParams<'a> {
    pub permutations: &'a [Vec<u32>],
    pub paths_per_layer: usize,
    /// Longest path allowed; `None` = diameter + 1.
    pub max_length: Option<u8>,
    pub seed: u64,
}

pub fn overlap_layers(nr: usize, edges: &[(u32, u32)], params: &OverlapParams) -> OverlapLayers {
    let fabric = Fabric::new(nr, edges);
    let hops = fabric.hop_distances();
    let diameter = hops
        .iter()
        .copied()
        .filter(|&d| d != u8::MAX)
        .max()
        .unwrap_or(0);
    let max_length = params
        .max_length
        .unwrap_or(diameter.saturating_add(1))
        .max(2);
    let mut weight = vec![0u64; edges.len()];
    let mut owned: PairMap<u16> = PairMap::default();
    let mut result = OverlapLayers {
        masks: Vec::new(),
        paths: Vec::new(),
    };
    let mut forward = Frontier::new(nr, max_length.div_ceil(2) as usize);
    let mut backward = Frontier::new(nr, (max_length / 2) as usize);
    let mut search = LayerSearch::new(nr);

    for (number, permutation) in params.permutations.iter().enumerate() {
        let layer_seed = mix64(params.seed ^ mix64(number as u64 + 1));
        let mut rank = vec![0u32; nr];
        for (position, &switch) in permutation.iter().enumerate() {
            rank[switch as usize] = position as u32;
        }
        let mut state = LayerState {
            in_layer: vec![false; edges.len()],
            allowed: vec![true; edges.len()],
            adjacency: vec![Vec::new(); nr],
            required: PairMap::default(),
            settled: PairSet::default(),
        };
        let link_cost: Vec<u64> = (0..edges.len())
            .map(|e| (weight[e] << WEIGHT_SHIFT) | (mix64(layer_seed ^ e as u64) & TIE_MASK))
            .collect();
        let mut chosen = Vec::new();
        for (_, low, high) in serving_order(permutation, &owned, &hops, layer_seed) {
            if chosen.len() >= params.paths_per_layer {
                break;
            }
            if state.settled.contains(&pair_key(low, high)) {
                continue;
            }
            let min_length = hops[low as usize * nr + high as usize].saturating_add(1);
            let search_space = PathSearch {
                fabric: &fabric,
                rank: &rank,
                link_cost: &link_cost,
                max_length,
            };
            let Some(path) = search_space.least_weight_path(
                &mut forward,
                &mut backward,
                &mut search,
                &state,
                low,
                high,
                min_length,
            ) else {
                continue;
            };
            commit_path(&fabric, &hops, &path, &mut state, &mut weight, &mut owned);
            chosen.push(path);
        }
        result.masks.push(state.in_layer);
        result.paths.push(chosen);
    }
    result
}

/// Pairs (low, high) with pi(low) < pi(high), fewest owned paths first, ties at random.
fn serving_order(
    permutation: &[u32],
    owned: &PairMap<u16>,
    hops: &[u8],
    layer_seed: u64,
) -> Vec<(u64, u32, u32)> {
    let nr = permutation.len();
    let mut order = Vec::with_capacity(nr * nr.saturating_sub(1) / 2);
    for (i, &low) in permutation.iter().enumerate() {
        for &high in &permutation[i + 1..] {
            if hops[low as usize * nr + high as usize] == u8::MAX {
                continue;
            }
            let key = pair_key(low, high);
            let count = owned.get(&key).copied().unwrap_or(0) as u64;
            order.push(((count << 40) | (mix64(layer_seed ^ key) >> 24), low, high));
        }
    }
    order.sort_unstable();
    order
}

struct PathSearch<'a> {
    fabric: &'a Fabric,
    rank: &'a [u32],
    link_cost: &'a [u64],
    max_length: u8,
}

impl PathSearch<'_> {
    /// Least-weight monotone path low -> high of length in [min_length, max_length] over allowed
    /// links that keeps every chosen path of the layer shortest; None if there is none.
    #[allow(clippy::too_many_arguments)]
    fn least_weight_path(
        &self,
        forward: &mut Frontier,
        backward: &mut Frontier,
        search: &mut LayerSearch,
        state: &LayerState,
        low: u32,
        high: u32,
        min_length: u8,
    ) -> Option<Vec<u32>> {
        if min_length > self.max_length {
            return None;
        }
        let rank = self.rank;
        let (r_low, r_high) = (rank[low as usize], rank[high as usize]);
        let half_up = self.max_length.div_ceil(2) as usize;
        let half_down = (self.max_length / 2) as usize;
        forward.grow(
            self.fabric,
            low,
            half_up,
            self.link_cost,
            &state.allowed,
            |a, b| rank[b as usize] > rank[a as usize] && rank[b as usize] <= r_high,
        );
        backward.grow(
            self.fabric,
            high,
            half_down,
            self.link_cost,
            &state.allowed,
            |a, b| rank[b as usize] < rank[a as usize] && rank[b as usize] >= r_low,
        );
        // A path of length L meets in the middle after ceil(L/2) hops from `low`.
        let mut candidates: Vec<(u64, u32, u8)> = Vec::new();
        for length in min_length..=self.max_length {
            let up = length.div_ceil(2) as usize;
            let down = length as usize - up;
            for &middle in &forward.members[up] {
                if let (Some(a), Some(b)) = (forward.get(up, middle), backward.get(down, middle)) {
                    candidates.push((a + b, middle, length));
                }
            }
        }
        candidates.sort_unstable();
        candidates
            .into_iter()
            .take(CANDIDATES_PER_PAIR)
            .find_map(|(_, middle, length)| {
                let up = length.div_ceil(2) as usize;
                let mut path = forward.walk_back(middle, up);
                let mut tail = backward.walk_back(middle, length as usize - up);
                tail.reverse();
                path.extend_from_slice(&tail[1..]);
                keeps_chosen_paths_shortest(self.fabric, state, search, &path, self.max_length)
                    .then_some(path)
            })
    }
}

/// True if adding `path` leaves it and every path already chosen in the layer shortest.
fn keeps_chosen_paths_shortest(
    fabric: &Fabric,
    state: &LayerState,
    search: &mut LayerSearch,
    path: &[u32],
    max_length: u8,
) -> bool {
    let new_links: Vec<(u32, u32)> = path
        .windows(2)
        .filter(|w| {
            let link = fabric
                .link_between(w[0], w[1])
                .expect("path follows fabric links");
            !state.in_layer[link as usize]
        })
        .map(|w| (w[0], w[1]))
        .collect();
    let length = (path.len() - 1) as u8;
    let (first, last) = (path[0], path[path.len() - 1]);
    search.ball(&state.adjacency, &new_links, first, length - 1);
    if search.depth_of(last).is_some() {
        return false;
    }
    // A shortcut for a chosen pair (x, y) of length L crosses some new link (a, b) with
    // d(x, a) + 1 + d(b, y) < L, so x and y lie within L - 2 hops of a and b.
    let radius = max_length - 2;
    let mut near_a: Vec<(u32, u8)> = Vec::new();
    for &(a, b) in &new_links {
        search.ball(&state.adjacency, &new_links, a, radius);
        near_a.clear();
        near_a.extend(
            search
                .reached
                .iter()
                .map(|&x| (x, search.depth[x as usize])),
        );
        search.ball(&state.adjacency, &new_links, b, radius);
        for &(x, dx) in &near_a {
            for &y in &search.reached {
                if x == y {
                    continue;
                }
                if let Some(&required) = state.required.get(&pair_key(x, y)) {
                    if dx + 1 + search.depth[y as usize] < required {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Put the path into the layer: links, forbidden chords, settled pairs and weights.
fn commit_path(
    fabric: &Fabric,
    hops: &[u8],
    path: &[u32],
    state: &mut LayerState,
    weight: &mut [u64],
    owned: &mut PairMap<u16>,
) {
    let nr = fabric.nr;
    for w in path.windows(2) {
        let link = fabric
            .link_between(w[0], w[1])
            .expect("path follows fabric links") as usize;
        weight[link] += 1;
        if !state.in_layer[link] {
            state.in_layer[link] = true;
            state.adjacency[w[0] as usize].push(w[1]);
            state.adjacency[w[1] as usize].push(w[0]);
        }
    }
    for i in 0..path.len() {
        for j in i + 1..path.len() {
            let (a, b) = (path[i], path[j]);
            let span = (j - i) as u8;
            if span >= 2 {
                if let Some(chord) = fabric.link_between(a, b) {
                    state.allowed[chord as usize] = false;
                }
            }
            // Pairs closer on the path than their Lmin can no longer get an almost-minimal
            // path in this layer; the others now own one. Either way they are done here.
            let key = pair_key(a, b);
            state.settled.insert(key);
            if span > hops[a as usize * nr + b as usize] {
                state.required.insert(key, span);
                *owned.entry(key).or_insert(0) += 1;
            }
        }
    }
}

/// Adjacency helper for tests and callers that want the layer as a graph.
pub fn layer_adjacency(nr: usize, edges: &[(u32, u32)], mask: &[bool]) -> Csr<u32> {
    let kept: Vec<(u32, u32)> = edges
        .iter()
        .zip(mask)
        .filter(|(_, &keep)| keep)
        .map(|(&e, _)| e)
        .collect();
    graph::neighbours(nr, &kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn petersen() -> Vec<(u32, u32)> {
        let mut edges = Vec::new();
        for i in 0..5u32 {
            edges.push((i, (i + 1) % 5));
            edges.push((i, i + 5));
            edges.push((5 + i, 5 + (i + 2) % 5));
        }
        edges
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect()
    }

    fn params(perms: &[Vec<u32>]) -> OverlapParams<'_> {
        OverlapParams {
            permutations: perms,
            paths_per_layer: usize::MAX,
            max_length: None,
            seed: 5,
        }
    }

    #[test]
    fn chosen_paths_are_monotone_and_shortest_in_their_layer() {
        let edges = petersen();
        let perms: Vec<Vec<u32>> = vec![
            (0..10).collect(),
            (0..10).rev().collect(),
            vec![0, 5, 1, 6, 2, 7, 3, 8, 4, 9],
        ];
        let built = overlap_layers(10, &edges, &params(&perms));
        for (layer, paths) in built.paths.iter().enumerate() {
            assert!(!paths.is_empty(), "layer {layer} chose no path");
            let adj = layer_adjacency(10, &edges, &built.masks[layer]);
            let (dist, _) =
                crate::routing::layer_forwarding(&adj, crate::routing::TieBreak::seeded(1), None);
            let mut rank = [0usize; 10];
            for (p, &s) in perms[layer].iter().enumerate() {
                rank[s as usize] = p;
            }
            for path in paths {
                assert!(path
                    .windows(2)
                    .all(|w| rank[w[0] as usize] < rank[w[1] as usize]));
                let (s, t) = (path[0] as usize, path[path.len() - 1] as usize);
                assert_eq!(dist[t * 10 + s] as usize, path.len() - 1, "path {path:?}");
            }
        }
    }

    #[test]
    fn paths_per_layer_caps_each_layer() {
        let edges = petersen();
        let perms: Vec<Vec<u32>> = vec![(0..10).collect(); 2];
        let capped = OverlapParams {
            paths_per_layer: 2,
            ..params(&perms)
        };
        let built = overlap_layers(10, &edges, &capped);
        assert!(built.paths.iter().all(|p| p.len() <= 2));
    }
}

pub mod python {
    use numpy::ndarray::Array2;
    use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// Minimise-path-overlap layers: one layer per row of `permutations` (int32[count, nr]).
    ///
    /// Returns `(masks, path_layer, path_offsets, path_nodes)`: `masks` bool[count, E] over the
    /// input links; chosen path p belongs to layer `path_layer[p]` and visits
    /// `path_nodes[path_offsets[p]:path_offsets[p + 1]]` in increasing permutation order.
    #[pyfunction]
    #[pyo3(signature = (nr, edge_u, edge_v, permutations, paths_per_layer, seed, max_length=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub fn overlap_layers<'py>(
        py: Python<'py>,
        nr: usize,
        edge_u: PyReadonlyArray1<'py, i32>,
        edge_v: PyReadonlyArray1<'py, i32>,
        permutations: PyReadonlyArray2<'py, i32>,
        paths_per_layer: usize,
        seed: u64,
        max_length: Option<u8>,
    ) -> PyResult<(
        Bound<'py, PyArray2<bool>>,
        Bound<'py, PyArray1<i32>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i32>>,
    )> {
        let edges =
            crate::support::graph::checked_edges(nr, edge_u.as_slice()?, edge_v.as_slice()?)
                .map_err(PyValueError::new_err)?;
        let perms = permutations.as_array();
        if perms.ncols() != nr {
            return Err(PyValueError::new_err(
                "each permutation must list every switch once",
            ));
        }
        let mut rows = Vec::with_capacity(perms.nrows());
        for row in perms.rows() {
            let mut seen = vec![false; nr];
            for &s in row {
                if s < 0 || s as usize >= nr || std::mem::replace(&mut seen[s as usize], true) {
                    return Err(PyValueError::new_err(
                        "permutation rows must be permutations",
                    ));
                }
            }
            rows.push(row.iter().map(|&s| s as u32).collect::<Vec<u32>>());
        }
        let params = super::OverlapParams {
            permutations: &rows,
            paths_per_layer,
            max_length,
            seed,
        };
        let built =
            crate::support::pool::detached(py, || super::overlap_layers(nr, &edges, &params));
        let flat: Vec<bool> = built.masks.iter().flatten().copied().collect();
        let masks = Array2::from_shape_vec((rows.len(), edges.len()), flat).expect("shape");
        let (mut layer_of, mut offsets, mut nodes) = (Vec::new(), vec![0i64], Vec::new());
        for (layer, paths) in built.paths.iter().enumerate() {
            for path in paths {
                layer_of.push(layer as i32);
                nodes.extend(path.iter().map(|&s| s as i32));
                offsets.push(nodes.len() as i64);
            }
        }
        Ok((
            masks.into_pyarray(py),
            layer_of.into_pyarray(py),
            offsets.into_pyarray(py),
            nodes.into_pyarray(py),
        ))
    }
}
