//! Per-layer forwarding: all-pairs BFS distances and one next hop per (switch, destination).
//!
//! Tables are computed per destination (one BFS from every destination switch), which is the
//! natural shape of destination-based forwarding and parallelises across destinations.

use rayon::prelude::*;

use crate::support::graph::Csr;

pub const UNREACHABLE: u8 = u8::MAX;

/// SplitMix64 finaliser: a cheap, well-mixed hash for seeded tie-breaking.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[inline]
fn tie_priority(seed: u64, switch: usize, neighbour: u32, destination: usize) -> u64 {
    mix64(seed ^ mix64(((switch as u64) << 40) ^ ((destination as u64) << 20) ^ neighbour as u64))
}

/// How ties between equal-cost next hops are broken: by a seeded hash of the switches'
/// positions, or (`keys`, one per switch, a hash of its name) of their names. With names, the
/// winner among a switch's candidates is a pure function of who the candidates are
/// (highest random weight), so a next hop that stays among the shortest stays chosen when
/// cables elsewhere come or go, and reordering the inventory changes nothing.
///
/// `prefer` (nr x nr, [switch][destination], -1 = none) holds the next hops of an earlier
/// compile: one that is still among a switch's equal-cost neighbours wins the tie, so a change
/// moves only the routes whose old next hop stopped being a shortest-path one.
#[derive(Clone, Copy)]
pub struct TieBreak<'a> {
    pub seed: u64,
    pub keys: Option<&'a [u64]>,
    pub prefer: Option<&'a [i32]>,
}

impl TieBreak<'_> {
    pub fn seeded(seed: u64) -> Self {
        TieBreak {
            seed,
            keys: None,
            prefer: None,
        }
    }

    #[inline]
    fn priority(&self, switch: usize, neighbour: u32, destination: usize) -> u64 {
        if let Some(prefer) = self.prefer {
            let nr = prefer.len().isqrt();
            if prefer[switch * nr + destination] == neighbour as i32 {
                return 0;
            }
        }
        // Never 0, which is the preferred hop's.
        self.hashed(switch, neighbour, destination).max(1)
    }

    #[inline]
    fn hashed(&self, switch: usize, neighbour: u32, destination: usize) -> u64 {
        match self.keys {
            None => tie_priority(self.seed, switch, neighbour, destination),
            Some(keys) => mix64(
                self.seed
                    ^ mix64(
                        keys[switch] ^ mix64(keys[destination] ^ mix64(keys[neighbour as usize])),
                    ),
            ),
        }
    }
}

/// Scratch space of one search: the queue of switches found, each switch's best tie-break
/// priority so far, and the switches not yet found.
#[derive(Default)]
struct Search {
    queue: Vec<u32>,
    best_priority: Vec<u64>,
    unvisited: Vec<u32>,
}

/// Distances to `destination` (row) and each switch's next hop towards it, over plain shortest
/// paths. Ties between equal-cost neighbours are broken by a seeded hash of
/// (switch, neighbour, destination) so that different destinations spread over different links.
///
/// The search runs level by level. While the level just found is smaller than what is left to
/// find, it scans the level's neighbours (top-down); after that, each switch still unfound
/// scans its own neighbours for ones on the level (bottom-up). Either way every equal-cost
/// neighbour of a switch is seen, so the next hop is the same; bottom-up skips the deepest
/// levels' many switches whose neighbours are all found already.
fn shortest_path_row(
    adj: &Csr<u32>,
    destination: usize,
    component_size: usize,
    tie: TieBreak,
    dist_row: &mut [u8],
    next_row: &mut [i32],
    search: &mut Search,
) {
    let nr = dist_row.len();
    dist_row.fill(UNREACHABLE);
    next_row.fill(-1);
    let Search {
        queue,
        best_priority,
        unvisited,
    } = search;
    best_priority.clear();
    best_priority.resize(nr, u64::MAX);
    queue.clear();
    unvisited.clear();
    dist_row[destination] = 0;
    queue.push(destination as u32);
    let mut level_start = 0;
    let mut level = 0u8;
    let mut bottom_up = false;
    // A hop's priority is worked out only once a second candidate appears: in the low-diameter
    // topologies most pairs have a single shortest path, and hashing was most of the time.
    loop {
        let level_end = queue.len();
        // Once the whole component is found, nothing lies beyond the deepest level.
        if level_start == level_end || level_end == component_size {
            break;
        }
        let next_dist = level.saturating_add(1);
        if !bottom_up && level_end - level_start > component_size - level_end {
            bottom_up = true;
            unvisited.extend((0..nr as u32).filter(|&v| dist_row[v as usize] == UNREACHABLE));
        }
        if bottom_up {
            let mut kept = 0;
            for i in 0..unvisited.len() {
                let switch = unvisited[i] as usize;
                let mut hop = u32::MAX;
                let mut best = u64::MAX;
                for &nb in adj.row(switch) {
                    if dist_row[nb as usize] != level {
                        continue;
                    }
                    if hop == u32::MAX {
                        hop = nb;
                        continue;
                    }
                    if best == u64::MAX {
                        best = tie.priority(switch, hop, destination);
                    }
                    let prio = tie.priority(switch, nb, destination);
                    if prio < best {
                        best = prio;
                        hop = nb;
                    }
                }
                if hop == u32::MAX {
                    unvisited[kept] = switch as u32;
                    kept += 1;
                } else {
                    dist_row[switch] = next_dist;
                    next_row[switch] = hop as i32;
                    queue.push(switch as u32);
                }
            }
            unvisited.truncate(kept);
        } else {
            for head in level_start..level_end {
                let node = queue[head] as usize;
                for &nb in adj.row(node) {
                    let nbu = nb as usize;
                    if dist_row[nbu] == UNREACHABLE {
                        dist_row[nbu] = next_dist;
                        next_row[nbu] = node as i32;
                        queue.push(nb);
                        continue;
                    }
                    if dist_row[nbu] != next_dist {
                        continue;
                    }
                    if best_priority[nbu] == u64::MAX {
                        let current = next_row[nbu] as u32;
                        best_priority[nbu] = tie.priority(nbu, current, destination);
                    }
                    let prio = tie.priority(nbu, node as u32, destination);
                    if prio < best_priority[nbu] {
                        best_priority[nbu] = prio;
                        next_row[nbu] = node as i32;
                    }
                }
            }
        }
        level_start = level_end;
        level = next_dist;
    }
}

/// `rows` x `columns` row-major `source` into `columns` x `rows` row-major `target`, in
/// parallel over blocks of target rows: each block reads short runs of every source row, so
/// both sides stay in cache (a plain strided copy of a q=37 table misses on every element).
pub fn transpose_into<T: Copy + Send + Sync>(source: &[T], rows: usize, target: &mut [T]) {
    const BLOCK: usize = 64;
    let columns = source.len().checked_div(rows).unwrap_or(0);
    assert_eq!(target.len(), source.len(), "transpose keeps the size");
    if columns == 0 {
        return;
    }
    target
        .par_chunks_mut(BLOCK * rows)
        .enumerate()
        .for_each(|(block, chunk)| {
            let first = block * BLOCK;
            let count = chunk.len() / rows;
            for r in 0..rows {
                let run = &source[r * columns + first..r * columns + first + count];
                for (c, &value) in run.iter().enumerate() {
                    chunk[c * rows + r] = value;
                }
            }
        });
}

/// The order up*/down* routes follow: each switch's rank (0 is the top) and the switches sorted
/// by rank.
struct UpDownOrder<'a> {
    rank: &'a [u32],
    by_rank: Vec<u32>,
}

/// Up*/down* routing over the order `rank` (rank 0 is the top). A switch takes a purely
/// downward (rank-increasing) path whenever one exists, otherwise it climbs to the upward
/// neighbour with the shortest remaining route. Once a route turns down it never climbs again,
/// so the channel dependency graph is acyclic (no down->up turn), and every pair is routed as
/// long as every switch but the top has an upward neighbour.
fn up_down_row(
    adj: &Csr<u32>,
    destination: usize,
    tie: TieBreak,
    UpDownOrder { rank, by_rank }: &UpDownOrder,
    dist_row: &mut [u8],
    next_row: &mut [i32],
    queue: &mut Vec<u32>,
) {
    dist_row.fill(UNREACHABLE);
    next_row.fill(-1);
    queue.clear();
    // Downward-only distances: BFS from the destination that walks edges towards lower rank
    // (i.e. reverses down-hops).
    dist_row[destination] = 0;
    queue.push(destination as u32);
    let mut head = 0;
    while head < queue.len() {
        let node = queue[head] as usize;
        head += 1;
        for &nb in adj.row(node) {
            let nbu = nb as usize;
            if rank[nbu] < rank[node] && dist_row[nbu] == UNREACHABLE {
                dist_row[nbu] = dist_row[node].saturating_add(1);
                queue.push(nb);
            }
        }
    }
    for &node in queue.iter().skip(1) {
        let node = node as usize;
        let want = dist_row[node] - 1;
        let mut best: Option<(u64, u32)> = None;
        for &nb in adj.row(node) {
            if rank[nb as usize] > rank[node] && dist_row[nb as usize] == want {
                let prio = tie.priority(node, nb, destination);
                if best.is_none_or(|(p, _)| prio < p) {
                    best = Some((prio, nb));
                }
            }
        }
        next_row[node] = best.map_or(-1, |(_, nb)| nb as i32);
    }
    // Switches without a downward path climb; upward neighbours have a lower rank, so visiting
    // in rank order means their routes are final before they are used.
    for &node in by_rank {
        let node = node as usize;
        if dist_row[node] != UNREACHABLE {
            continue;
        }
        let mut best: Option<(u8, u64, u32)> = None;
        for &nb in adj.row(node) {
            let nbu = nb as usize;
            if rank[nbu] < rank[node] && dist_row[nbu] != UNREACHABLE {
                let key = (dist_row[nbu], tie.priority(node, nb, destination));
                if best.is_none_or(|(d, p, _)| key < (d, p)) {
                    best = Some((key.0, key.1, nb));
                }
            }
        }
        if let Some((d, _, nb)) = best {
            dist_row[node] = d.saturating_add(1);
            next_row[node] = nb as i32;
        }
    }
}

/// The size of each switch's connected component.
fn component_sizes(adj: &Csr<u32>) -> Vec<usize> {
    let nr = adj.n_rows();
    let mut label = vec![u32::MAX; nr];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for start in 0..nr {
        if label[start] != u32::MAX {
            continue;
        }
        let id = sizes.len() as u32;
        let mut size = 0;
        label[start] = id;
        stack.push(start as u32);
        while let Some(node) = stack.pop() {
            size += 1;
            for &nb in adj.row(node as usize) {
                if label[nb as usize] == u32::MAX {
                    label[nb as usize] = id;
                    stack.push(nb);
                }
            }
        }
        sizes.push(size);
    }
    label.iter().map(|&id| sizes[id as usize]).collect()
}

/// Hop counts between every pair of switches, [destination][switch] row-major (the same as
/// [switch][destination]: links are undirected), with no next hops: what equal-cost routing and
/// the topology figures read, without the tie-breaking search `layer_forwarding` spends most of
/// its time on in fabrics with many equal-cost paths (a k=16 fat tree: about 4 ms of 5).
pub fn layer_distances(adj: &Csr<u32>) -> Vec<u8> {
    let nr = adj.n_rows();
    let mut dist = vec![UNREACHABLE; nr * nr];
    dist.par_chunks_mut(nr.max(1)).enumerate().for_each_init(
        Vec::new,
        |queue: &mut Vec<u32>, (destination, row)| {
            queue.clear();
            row[destination] = 0;
            queue.push(destination as u32);
            let mut head = 0;
            while head < queue.len() {
                let node = queue[head] as usize;
                head += 1;
                // Saturating, as `layer_forwarding`'s levels: a path longer than 254 hops
                // reads as unreachable in both.
                let next = row[node].saturating_add(1);
                for &nb in adj.row(node) {
                    if row[nb as usize] == UNREACHABLE {
                        row[nb as usize] = next;
                        queue.push(nb);
                    }
                }
            }
        },
    );
    dist
}

/// Returns (distance, next hop) matrices indexed [destination][switch], row-major.
pub fn layer_forwarding(
    adj: &Csr<u32>,
    tie: TieBreak,
    rank: Option<&[u32]>,
) -> (Vec<u8>, Vec<i32>) {
    let nr = adj.n_rows();
    let mut dist = vec![UNREACHABLE; nr * nr];
    let mut next = vec![-1i32; nr * nr];
    let order = rank.map(|rank| {
        let mut by_rank: Vec<u32> = (0..nr as u32).collect();
        by_rank.sort_by_key(|&n| rank[n as usize]);
        UpDownOrder { rank, by_rank }
    });
    let component_sizes = component_sizes(adj);
    dist.par_chunks_mut(nr.max(1))
        .zip(next.par_chunks_mut(nr.max(1)))
        .enumerate()
        .for_each_init(
            Search::default,
            |search, (destination, (dist_row, next_row))| match &order {
                Some(order) => up_down_row(
                    adj,
                    destination,
                    tie,
                    order,
                    dist_row,
                    next_row,
                    &mut search.queue,
                ),
                None => shortest_path_row(
                    adj,
                    destination,
                    component_sizes[destination],
                    tie,
                    dist_row,
                    next_row,
                    search,
                ),
            },
        );
    (dist, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32) -> Csr<u32> {
        let edges: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        crate::support::graph::neighbours(n as usize, &edges)
    }

    #[test]
    fn transpose_matches_the_definition_for_any_shape() {
        // Sizes around the block of 64 rows, and non-square tables.
        for (rows, columns) in [(1, 1), (3, 200), (200, 3), (64, 64), (65, 129), (130, 63)] {
            let source: Vec<u32> = (0..rows * columns).map(|i| i as u32 * 7 + 1).collect();
            let mut target = vec![0u32; rows * columns];
            transpose_into(&source, rows, &mut target);
            for r in 0..rows {
                for c in 0..columns {
                    assert_eq!(
                        target[c * rows + r],
                        source[r * columns + c],
                        "{rows}x{columns}"
                    );
                }
            }
        }
    }

    #[test]
    fn distances_alone_equal_the_full_search() {
        // Split random graphs (some disconnected) and a ring: the distance-only search must
        // give exactly the distances of the full search.
        let mut graphs = vec![ring(9)];
        for seed in 0..6u64 {
            let nr = 40;
            let mut edges = Vec::new();
            for a in 0..nr as u32 {
                for b in a + 1..nr as u32 {
                    let h = mix64(seed ^ ((a as u64) << 20) ^ b as u64);
                    // Two halves joined only for even seeds.
                    let same_half = (a < 20) == (b < 20);
                    if h % 100 < 8 && (same_half || seed % 2 == 0) {
                        edges.push((a, b));
                    }
                }
            }
            graphs.push(crate::support::graph::neighbours(nr, &edges));
        }
        for adj in &graphs {
            let (dist, _) = layer_forwarding(adj, TieBreak::seeded(1), None);
            assert_eq!(layer_distances(adj), dist);
        }
    }

    #[test]
    fn ties_go_to_the_lowest_priority_neighbour() {
        // A 4x4 torus has many equal-cost next hops: each chosen one must have the smallest
        // tie priority among the neighbours one hop closer.
        let side = 4u32;
        let mut edges = Vec::new();
        for x in 0..side {
            for y in 0..side {
                let node = x * side + y;
                edges.push((node, ((x + 1) % side) * side + y));
                edges.push((node, x * side + (y + 1) % side));
            }
        }
        let n = (side * side) as usize;
        let adj = crate::support::graph::neighbours(n, &edges);
        let (dist, next) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(11), None);
        let mut ties = 0;
        for t in 0..n {
            for s in (0..n).filter(|&s| s != t) {
                let closer: Vec<u32> = adj
                    .row(s)
                    .iter()
                    .copied()
                    .filter(|&nb| dist[t * n + nb as usize] + 1 == dist[t * n + s])
                    .collect();
                ties += usize::from(closer.len() > 1);
                let best = closer
                    .iter()
                    .copied()
                    .min_by_key(|&nb| tie_priority(11, s, nb, t))
                    .expect("a closer neighbour");
                assert_eq!(next[t * n + s], best as i32);
            }
        }
        assert!(ties > 0);
    }

    #[test]
    fn every_next_hop_is_the_best_closer_neighbour_in_split_random_graphs() {
        // Two random components and an isolated switch: the search stops early once a
        // component is found, and must still settle every tie and leave the rest unreachable.
        let n = 61usize;
        let mut edges = Vec::new();
        let mut state = 5u64;
        for _ in 0..150 {
            state = mix64(state);
            let (a, b) = ((state % 40) as u32, ((state >> 20) % 40) as u32);
            if a != b {
                edges.push((a, b));
            }
            let (c, d) = (
                40 + (state >> 40) as u32 % 20,
                40 + (state >> 50) as u32 % 20,
            );
            if c != d {
                edges.push((c, d));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let adj = crate::support::graph::neighbours(n, &edges);
        let sizes = component_sizes(&adj);
        assert_eq!(sizes[60], 1);
        let (dist, next) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(3), None);
        for t in 0..n {
            // Plain BFS distances, scanning every switch.
            let mut want = vec![UNREACHABLE; n];
            want[t] = 0;
            let mut queue = vec![t];
            let mut head = 0;
            while head < queue.len() {
                let node = queue[head];
                head += 1;
                for &nb in adj.row(node) {
                    if want[nb as usize] == UNREACHABLE {
                        want[nb as usize] = want[node] + 1;
                        queue.push(nb as usize);
                    }
                }
            }
            assert_eq!(&dist[t * n..(t + 1) * n], &want[..]);
            for s in (0..n).filter(|&s| s != t) {
                let best = adj
                    .row(s)
                    .iter()
                    .copied()
                    .filter(|&nb| want[s] != UNREACHABLE && want[nb as usize] + 1 == want[s])
                    .min_by_key(|&nb| tie_priority(3, s, nb, t));
                assert_eq!(next[t * n + s], best.map_or(-1, |nb| nb as i32), "{s}->{t}");
            }
        }
    }

    /// A 4x4 torus: every non-adjacent pair has several equal-cost next hops.
    fn torus_edges() -> Vec<(u32, u32)> {
        let at = |r: u32, c: u32| (r % 4) * 4 + (c % 4);
        (0..4)
            .flat_map(|r| {
                (0..4).flat_map(move |c| [(at(r, c), at(r, c + 1)), (at(r, c), at(r + 1, c))])
            })
            .collect()
    }

    #[test]
    fn keyed_ties_follow_names_not_positions() {
        let edges = torus_edges();
        let keys: Vec<u64> = (0..16u64).map(|i| mix64(i * 7919 + 3)).collect();
        let adj = crate::support::graph::neighbours(16, &edges);
        let tie = TieBreak {
            seed: 5,
            keys: Some(&keys),
            prefer: None,
        };
        let (_, next) = layer_forwarding(&adj, tie, None);
        // The same switches numbered backwards: position p holds switch 15 - p.
        let flip = |x: u32| 15 - x;
        let flipped: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (flip(a), flip(b))).collect();
        let flipped_keys: Vec<u64> = (0..16).map(|p| keys[15 - p]).collect();
        let adj_f = crate::support::graph::neighbours(16, &flipped);
        let tie_f = TieBreak {
            seed: 5,
            keys: Some(&flipped_keys),
            prefer: None,
        };
        let (_, next_f) = layer_forwarding(&adj_f, tie_f, None);
        let mut ties = 0;
        for t in 0..16 {
            for s in 0..16 {
                let hop = next[t * 16 + s];
                let hop_f = next_f[(15 - t) * 16 + (15 - s)];
                assert_eq!(hop_f, if hop < 0 { -1 } else { 15 - hop }, "s={s} t={t}");
                ties += usize::from(t != s);
            }
        }
        assert!(ties > 0);
    }

    #[test]
    fn a_preferred_next_hop_wins_while_it_is_among_the_shortest() {
        let edges = torus_edges();
        let adj = crate::support::graph::neighbours(16, &edges);
        let (dist, free) = layer_forwarding(&adj, TieBreak::seeded(9), None);
        // Prefer, everywhere, the closer neighbour that the free choice did not take.
        let mut prefer = vec![-1i32; 256];
        let mut moved = 0;
        for t in 0..16 {
            for s in 0..16 {
                let other = adj.row(s).iter().copied().find(|&nb| {
                    dist[t * 16 + nb as usize] + 1 == dist[t * 16 + s]
                        && nb as i32 != free[t * 16 + s]
                });
                if let Some(nb) = other {
                    prefer[s * 16 + t] = nb as i32;
                    moved += 1;
                }
            }
        }
        // A preferred hop that is not closer (a neighbour away from t) must not be taken.
        prefer[16] = 2; // switch 1 towards 0
        let tie = TieBreak {
            seed: 9,
            keys: None,
            prefer: Some(&prefer),
        };
        let (_, next) = layer_forwarding(&adj, tie, None);
        for t in 0..16 {
            for s in 0..16 {
                let wanted = prefer[s * 16 + t];
                if wanted >= 0 && dist[t * 16 + wanted as usize] + 1 == dist[t * 16 + s] {
                    assert_eq!(next[t * 16 + s], wanted);
                } else {
                    assert_eq!(next[t * 16 + s], free[t * 16 + s]);
                }
            }
        }
        assert!(moved > 20);
        assert_eq!(next[1], 0); // towards 0, switch 1 goes straight
    }

    #[test]
    fn ring_distances_are_cyclic() {
        let adj = ring(6);
        let (dist, next) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(1), None);
        // row = destination 0
        assert_eq!(&dist[0..6], &[0, 1, 2, 3, 2, 1]);
        assert_eq!(next[1], 0);
        assert_eq!(next[5], 0);
        assert!(next[3] == 2 || next[3] == 4);
    }

    #[test]
    fn next_hop_is_one_step_closer_everywhere() {
        let adj = ring(9);
        let (dist, next) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(7), None);
        for t in 0..9 {
            for s in 0..9 {
                if s == t {
                    assert_eq!(next[t * 9 + s], -1);
                } else {
                    let n = next[t * 9 + s] as usize;
                    assert_eq!(dist[t * 9 + n] + 1, dist[t * 9 + s]);
                }
            }
        }
    }

    #[test]
    fn up_down_routes_every_pair_without_down_up_turns() {
        let adj = ring(7);
        let rank: Vec<u32> = vec![0, 1, 3, 5, 6, 4, 2];
        let (dist, next) = layer_forwarding(&adj, crate::routing::TieBreak::seeded(3), Some(&rank));
        for t in 0..7usize {
            for s in 0..7usize {
                if s == t {
                    continue;
                }
                let mut node = s;
                let mut went_down = false;
                let mut hops = 0;
                while node != t {
                    let nb = next[t * 7 + node];
                    assert!(nb >= 0, "no route {s}->{t}");
                    let nb = nb as usize;
                    let down = rank[nb] > rank[node];
                    assert!(down || !went_down, "down->up turn on {s}->{t}");
                    went_down |= down;
                    node = nb;
                    hops += 1;
                    assert!(hops <= 7);
                }
                assert_eq!(hops as u8, dist[t * 7 + s]);
            }
        }
    }
}

pub mod python {
    use numpy::ndarray::Array2;
    use numpy::{
        IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray2,
        PyUntypedArrayMethods,
    };
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    /// `(dist, next_hop)` as numpy arrays.
    type ForwardingArrays<'py> = (Bound<'py, PyArray2<u8>>, Bound<'py, PyArray2<i32>>);

    /// Per-layer forwarding tables.
    ///
    /// Returns `(dist, next_hop)`, both shaped `[destination, switch]`: `dist` as uint8 (255 =
    /// unreachable), `next_hop` as int32 (-1 at the destination itself and where unreachable).
    /// With `rank` given, routes are up*/down* over that order (deadlock-free); otherwise shortest.
    #[pyfunction]
    #[pyo3(signature = (nr, edge_u, edge_v, seed, rank=None, keys=None, prefer=None))]
    #[allow(clippy::too_many_arguments)]
    pub fn layer_forwarding<'py>(
        py: Python<'py>,
        nr: usize,
        edge_u: PyReadonlyArray1<'py, i32>,
        edge_v: PyReadonlyArray1<'py, i32>,
        seed: u64,
        rank: Option<PyReadonlyArray1<'py, i32>>,
        keys: Option<PyReadonlyArray1<'py, u64>>,
        prefer: Option<PyReadonlyArray2<'py, i32>>,
    ) -> PyResult<ForwardingArrays<'py>> {
        let (dist, next) = tables(py, nr, edge_u, edge_v, seed, rank, keys, prefer)?;
        let dist = Array2::from_shape_vec((nr, nr), dist).expect("shape");
        let next = Array2::from_shape_vec((nr, nr), next).expect("shape");
        Ok((dist.into_pyarray(py), next.into_pyarray(py)))
    }

    /// Hop counts between every pair of switches as a numpy uint8 array (255 = unreachable),
    /// symmetric: `layer_forwarding`'s `dist` without its next hops.
    #[pyfunction]
    pub fn layer_distances<'py>(
        py: Python<'py>,
        nr: usize,
        edge_u: PyReadonlyArray1<'py, i32>,
        edge_v: PyReadonlyArray1<'py, i32>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let edges =
            crate::support::graph::checked_edges(nr, edge_u.as_slice()?, edge_v.as_slice()?)
                .map_err(PyValueError::new_err)?;
        let adj = crate::support::graph::neighbours(nr, &edges);
        let dist = crate::support::pool::detached(py, || super::layer_distances(&adj));
        let dist = Array2::from_shape_vec((nr, nr), dist).expect("shape");
        Ok(dist.into_pyarray(py))
    }

    #[allow(clippy::too_many_arguments)]
    fn tables<'py>(
        py: Python<'py>,
        nr: usize,
        edge_u: PyReadonlyArray1<'py, i32>,
        edge_v: PyReadonlyArray1<'py, i32>,
        seed: u64,
        rank: Option<PyReadonlyArray1<'py, i32>>,
        keys: Option<PyReadonlyArray1<'py, u64>>,
        prefer: Option<PyReadonlyArray2<'py, i32>>,
    ) -> PyResult<(Vec<u8>, Vec<i32>)> {
        let edges =
            crate::support::graph::checked_edges(nr, edge_u.as_slice()?, edge_v.as_slice()?)
                .map_err(PyValueError::new_err)?;
        let rank_vec: Option<Vec<u32>> = match rank {
            Some(r) => {
                let r = r.as_slice()?;
                if r.len() != nr {
                    return Err(PyValueError::new_err("rank must have one entry per switch"));
                }
                Some(r.iter().map(|&x| x as u32).collect())
            }
            None => None,
        };
        let keys = keys.as_ref().map(|k| k.as_slice()).transpose()?;
        if keys.is_some_and(|k| k.len() != nr) {
            return Err(PyValueError::new_err("keys must have one entry per switch"));
        }
        let prefer = prefer.as_ref().map(|p| p.as_slice()).transpose()?;
        if prefer.is_some_and(|p| p.len() != nr * nr) {
            return Err(PyValueError::new_err("prefer must be nr x nr"));
        }
        let adj = crate::support::graph::neighbours(nr, &edges);
        let tie = super::TieBreak { seed, keys, prefer };
        Ok(crate::support::pool::detached(py, || {
            super::layer_forwarding(&adj, tie, rank_vec.as_deref())
        }))
    }

    /// `layer_forwarding` written into `dist_out` and `next_out` (C-contiguous, nr x nr) as
    /// [switch, destination], the way operators and configs read them: the transpose runs
    /// here, blocked and in parallel, instead of as a strided numpy copy.
    #[pyfunction]
    #[pyo3(signature = (nr, edge_u, edge_v, seed, rank, dist_out, next_out, keys=None, prefer=None))]
    #[allow(clippy::too_many_arguments)]
    pub fn layer_forwarding_into<'py>(
        py: Python<'py>,
        nr: usize,
        edge_u: PyReadonlyArray1<'py, i32>,
        edge_v: PyReadonlyArray1<'py, i32>,
        seed: u64,
        rank: Option<PyReadonlyArray1<'py, i32>>,
        mut dist_out: PyReadwriteArray2<'py, u8>,
        mut next_out: PyReadwriteArray2<'py, i32>,
        keys: Option<PyReadonlyArray1<'py, u64>>,
        prefer: Option<PyReadonlyArray2<'py, i32>>,
    ) -> PyResult<()> {
        for shape in [dist_out.shape(), next_out.shape()] {
            if shape != [nr, nr] {
                return Err(PyValueError::new_err("outputs must be nr x nr"));
            }
        }
        let (dist, next) = tables(py, nr, edge_u, edge_v, seed, rank, keys, prefer)?;
        let dist_target = dist_out.as_slice_mut()?;
        let next_target = next_out.as_slice_mut()?;
        crate::support::pool::detached(py, || {
            super::transpose_into(&dist, nr, dist_target);
            super::transpose_into(&next, nr, next_target);
        });
        Ok(())
    }
}
