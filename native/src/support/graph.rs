//! Graphs in compressed sparse row (CSR) form, and the one check of an edge list, shared by
//! layers, routing, the deadlock check and the simulator.

/// Rows of items stored back to back: row `r` is `items[offsets[r]..offsets[r + 1]]`.
///
/// Offsets are u32 because the tables this holds (adjacency, forwarding candidates, channels)
/// stay far below 4 G items, and halving the offsets keeps more of a big table in cache.
#[derive(Clone, Debug)]
pub struct Csr<T> {
    offsets: Vec<u32>,
    items: Vec<T>,
}

fn offset(at: usize) -> u32 {
    u32::try_from(at).expect("a CSR table holds fewer than 2^32 items")
}

impl<T> Csr<T> {
    /// Rows given in order.
    pub fn from_rows<R: IntoIterator<Item = T>>(rows: impl IntoIterator<Item = R>) -> Self {
        let mut offsets = vec![0u32];
        let mut items = Vec::new();
        for row in rows {
            items.extend(row);
            offsets.push(offset(items.len()));
        }
        Csr { offsets, items }
    }

    /// Rows of the given lengths over `items`, which hold the rows back to back.
    pub fn from_lengths(lengths: impl IntoIterator<Item = u32>, items: Vec<T>) -> Self {
        let mut offsets = vec![0u32];
        let mut at = 0u32;
        for length in lengths {
            at = at.checked_add(length).expect("row lengths fit the items");
            offsets.push(at);
        }
        assert_eq!(at as usize, items.len(), "row lengths add up to the items");
        Csr { offsets, items }
    }

    /// `rows` rows filled from (row, item) pairs by a counting sort: each row holds its items
    /// in the order the pairs give them. The pairs are walked twice (counted, then placed).
    pub fn grouped(rows: usize, pairs: impl Iterator<Item = (usize, T)> + Clone) -> Self
    where
        T: Copy + Default,
    {
        let mut offsets = vec![0u32; rows + 1];
        for (row, _) in pairs.clone() {
            offsets[row + 1] += 1;
        }
        for r in 0..rows {
            offsets[r + 1] += offsets[r];
        }
        let mut fill = offsets.clone();
        let mut items = vec![T::default(); offsets[rows] as usize];
        for (row, item) in pairs {
            items[fill[row] as usize] = item;
            fill[row] += 1;
        }
        Csr { offsets, items }
    }

    #[inline]
    pub fn row(&self, r: usize) -> &[T] {
        &self.items[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }

    /// Position of row `r`'s first item among all items (items are numbered row by row).
    #[inline]
    pub fn start(&self, r: usize) -> usize {
        self.offsets[r] as usize
    }

    pub fn n_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Items in all rows.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<u32>() * self.offsets.len()
            + std::mem::size_of::<T>() * self.items.len()
    }
}

impl<T: Ord> Csr<T> {
    /// Sorts every row, so that results do not depend on the order edges were given in.
    pub fn sort_rows(&mut self) {
        for r in 0..self.n_rows() {
            let range = self.offsets[r] as usize..self.offsets[r + 1] as usize;
            self.items[range].sort_unstable();
        }
    }
}

/// The edges at every node of an undirected graph: row `node` lists `(neighbour, edge id)`
/// for each edge at `node`, in edge order.
pub fn incidence(n: usize, edges: &[(u32, u32)]) -> Csr<(u32, u32)> {
    Csr::grouped(
        n,
        edges.iter().enumerate().flat_map(|(id, &(u, v))| {
            let id = offset(id);
            [(u as usize, (v, id)), (v as usize, (u, id))]
        }),
    )
}

/// Sorted neighbour lists of an undirected graph (a neighbour appears once per edge).
pub fn neighbours(n: usize, edges: &[(u32, u32)]) -> Csr<u32> {
    let at = incidence(n, edges);
    let mut adjacency = Csr {
        items: at.items.iter().map(|&(neighbour, _)| neighbour).collect(),
        offsets: at.offsets,
    };
    adjacency.sort_rows();
    adjacency
}

/// The edges `(u[i], v[i])` over nodes `0..n`, checked: as many `u` as `v`, every endpoint
/// in range, no loops. The message names the first offending edge.
pub fn checked_edges<T: Copy + Into<i64>>(
    n: usize,
    u: &[T],
    v: &[T],
) -> Result<Vec<(u32, u32)>, String> {
    if u.len() != v.len() {
        return Err(format!(
            "edge endpoint arrays differ in length ({} and {})",
            u.len(),
            v.len()
        ));
    }
    u.iter()
        .zip(v)
        .enumerate()
        .map(|(i, (&a, &b))| {
            let (a, b) = (a.into(), b.into());
            let inside = |x: i64| 0 <= x && x < n as i64;
            if inside(a) && inside(b) && a != b {
                Ok((a as u32, b as u32))
            } else {
                Err(format!("edge {i} ({a}, {b}) is a loop or leaves 0..{n}"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incidence_keeps_edge_order_and_neighbours_are_sorted() {
        let edges = [(0, 2), (0, 1), (2, 1), (0, 2)];
        let at = incidence(3, &edges);
        assert_eq!(at.row(0), &[(2, 0), (1, 1), (2, 3)]);
        assert_eq!(at.row(1), &[(0, 1), (2, 2)]);
        assert_eq!(at.start(2), 5);
        let adj = neighbours(3, &edges);
        assert_eq!(adj.row(0), &[1, 2, 2]);
        assert_eq!(adj.row(2), &[0, 0, 1]);
        assert_eq!(adj.n_rows(), 3);
    }

    #[test]
    fn rows_from_lengths_match_rows_given_whole() {
        let a = Csr::from_lengths([2, 0, 1], vec![7, 8, 9]);
        let b = Csr::from_rows([vec![7, 8], vec![], vec![9]]);
        for r in 0..3 {
            assert_eq!(a.row(r), b.row(r));
        }
        assert_eq!(a.memory_bytes(), 4 * (4 + 3));
    }

    #[test]
    fn edge_check_names_the_first_bad_edge() {
        assert_eq!(
            checked_edges(3, &[0i32, 1], &[1, 2]),
            Ok(vec![(0, 1), (1, 2)])
        );
        let loop_ = checked_edges(3, &[0u32, 1], &[1, 1]).unwrap_err();
        assert!(loop_.starts_with("edge 1 (1, 1)"), "{loop_}");
        assert!(checked_edges(3, &[-1i32], &[1]).is_err());
        assert!(checked_edges(3, &[0i32], &[3]).is_err());
        assert!(checked_edges(3, &[0i32], &[]).is_err());
    }
}
