//! The simulated network: ports (one per link direction and per host attachment) and the
//! per-layer forwarding candidates every switch chooses among.
//!
//! Node ids: switches are `0..n_switches`, host `h` is node `n_switches + h`. Port ids: link `e`
//! gives port `2e` (a -> b) and `2e + 1` (b -> a); NIC `n = h * planes + plane` of host `h` gives
//! port `2E + 2n` (host -> switch) and the switch's host-facing port `2E + 2n + 1`.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::packet::Time;
use crate::support::graph;

pub const UNREACHABLE: u8 = u8::MAX;

/// Everything the simulator needs to know about the fabric and its compiled routing.
#[derive(Clone, Debug, Default)]
pub struct NetworkSpec {
    pub n_switches: usize,
    /// Planes: NICs per host, each attached to a switch of its own plane (0 counts as 1).
    pub planes: usize,
    /// The switch each host NIC is attached to: NIC `plane` of host h at `h * planes + plane`.
    pub host_switch: Vec<u32>,
    /// Rate of each host NIC, indexed as `host_switch`.
    pub host_gbps: Vec<f64>,
    pub host_latency: Time,
    pub link_a: Vec<u32>,
    pub link_b: Vec<u32>,
    pub link_gbps: Vec<f64>,
    pub link_latency: Time,
    /// `layer_links[l * E + e] != 0` when link `e` belongs to layer `l`.
    pub layer_links: Vec<u8>,
    /// `dist[(l * Nr + s) * Nr + t]`: hops from switch s to switch t inside layer l.
    pub dist: Vec<u8>,
    /// `next_hop[(l * Nr + s) * Nr + t]`: the compiled next switch (-1 at s == t); empty when
    /// every layer is multipath (their forwarding reads only `dist`).
    pub next_hop: Vec<i32>,
    /// Per layer: spread over all equal-cost next hops (true) or use the compiled one.
    pub multipath: Vec<bool>,
}

impl NetworkSpec {
    pub fn n_hosts(&self) -> usize {
        self.host_switch.len() / self.n_planes()
    }

    pub fn n_planes(&self) -> usize {
        self.planes.max(1)
    }

    pub fn n_links(&self) -> usize {
        self.link_a.len()
    }

    pub fn n_layers(&self) -> usize {
        self.multipath.len()
    }

    /// Checks shapes and index ranges; returns a message naming the first inconsistency.
    pub fn validate(&self) -> Result<(), String> {
        let nr = self.n_switches;
        let e = self.n_links();
        let l = self.n_layers();
        if l == 0 {
            return Err("the network has no layers".into());
        }
        graph::checked_edges(nr, &self.link_a, &self.link_b).map_err(|m| format!("links: {m}"))?;
        if self.link_gbps.len() != e {
            return Err("link_gbps needs one rate per link".into());
        }
        if !self.host_switch.len().is_multiple_of(self.n_planes()) {
            return Err(format!(
                "host_switch needs {} NICs per host",
                self.n_planes()
            ));
        }
        if self.n_planes() > u8::MAX as usize {
            return Err("at most 255 planes".into());
        }
        if self.host_gbps.len() != self.host_switch.len() {
            return Err("host_gbps needs one rate per host NIC".into());
        }
        if self.layer_links.len() != l * e {
            return Err(format!("layer_links must be {l} x {e}"));
        }
        if self.dist.len() != l * nr * nr {
            return Err(format!("dist must be {l} x {nr} x {nr}"));
        }
        // Next hops may be left out when every layer forwards over all equal-cost ones.
        let needs_next_hops = self.multipath.iter().any(|&m| !m);
        if self.next_hop.len() != l * nr * nr && (needs_next_hops || !self.next_hop.is_empty()) {
            return Err(format!(
                "next_hop must be {l} x {nr} x {nr}, or empty when every layer is multipath"
            ));
        }
        if let Some(h) = self.host_switch.iter().position(|&s| s as usize >= nr) {
            let h = h / self.n_planes();
            return Err(format!("host {h} is attached to a switch outside 0..{nr}"));
        }
        if self
            .link_gbps
            .iter()
            .chain(&self.host_gbps)
            .any(|&g| g.is_nan() || g <= 0.0)
        {
            return Err("link and host rates must be positive".into());
        }
        Ok(())
    }
}

/// One entry per port, indexed by port number without a bounds check.
///
/// Every port number the datapath holds is below the number of ports (`build_ports`): a link's
/// two ports are `2e` and `2e + 1` for a link `e` of the network, a forwarding table's
/// candidates are such ports, and a host's two ports are numbered from its index and plane,
/// both checked when the simulator is built (`Simulator::build`); events and queues carry only
/// numbers from these. Debug builds check. A port's transmitter, FIFOs and link are read on
/// every arrival and departure, each with its check where the optimiser could not share one:
/// 142 M instructions on the k=16 benchmark (3%). Crate-private, as the promise is the
/// crate's: nothing outside it can hand the table a number of its own.
#[derive(Debug, Default)]
pub(crate) struct PortTable<T>(Vec<T>);

impl<T> PortTable<T> {
    pub fn new(entries: Vec<T>) -> Self {
        assert!(entries.len() <= u32::MAX as usize, "port numbers are u32");
        PortTable(entries)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }
}

impl<T> std::ops::Index<u32> for PortTable<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, port: u32) -> &T {
        debug_assert!((port as usize) < self.0.len(), "port {port}");
        // SAFETY: every port number is below the number of ports (see the type's comment).
        unsafe { self.0.get_unchecked(port as usize) }
    }
}

impl<T> std::ops::IndexMut<u32> for PortTable<T> {
    #[inline(always)]
    fn index_mut(&mut self, port: u32) -> &mut T {
        debug_assert!((port as usize) < self.0.len(), "port {port}");
        // SAFETY: as `index`.
        unsafe { self.0.get_unchecked_mut(port as usize) }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct PortSpec {
    /// Node at the far end.
    pub to: u32,
    /// Picoseconds per byte when the rate divides 8 Tb/s (every 10/25/40/50/100/400G rate);
    /// 0 otherwise.
    ps_per_byte: u32,
    pub rate_mbps: u64,
    pub latency: Time,
}

impl PortSpec {
    pub fn new(to: u32, rate_mbps: u64, latency: Time) -> Self {
        let ps_per_byte = if 8_000_000 % rate_mbps == 0 {
            u32::try_from(8_000_000 / rate_mbps).unwrap_or(0)
        } else {
            0
        };
        PortSpec {
            to,
            ps_per_byte,
            rate_mbps,
            latency,
        }
    }

    /// Serialisation time of `bytes` at this port's rate, rounded to the nearest picosecond.
    /// At a rate that divides 8 Tb/s the time is a whole number of picoseconds per byte, and a
    /// multiplication gives exactly what the division does; it is on every packet's every hop.
    #[inline]
    pub fn serialisation(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            bytes as u64 * self.ps_per_byte as u64
        } else {
            (bytes as u64 * 8_000_000 + self.rate_mbps / 2) / self.rate_mbps
        }
    }
}

pub fn gbps_to_mbps(gbps: f64) -> u64 {
    ((gbps * 1000.0).round() as u64).max(1)
}

pub fn build_ports(spec: &NetworkSpec) -> Vec<PortSpec> {
    let nr = spec.n_switches as u32;
    let mut ports = Vec::with_capacity(2 * spec.n_links() + 2 * spec.n_hosts());
    for e in 0..spec.n_links() {
        let rate_mbps = gbps_to_mbps(spec.link_gbps[e]);
        let latency = spec.link_latency;
        ports.push(PortSpec::new(spec.link_b[e], rate_mbps, latency));
        ports.push(PortSpec::new(spec.link_a[e], rate_mbps, latency));
    }
    let planes = spec.n_planes();
    for (nic, &sw) in spec.host_switch.iter().enumerate() {
        let h = nic / planes;
        let rate_mbps = gbps_to_mbps(spec.host_gbps[nic]);
        let latency = spec.host_latency;
        ports.push(PortSpec::new(sw, rate_mbps, latency));
        ports.push(PortSpec::new(nr + h as u32, rate_mbps, latency));
    }
    ports
}

/// Per (layer, switch, destination switch) the output ports a packet may take.
///
/// A switch's rows repeat the same few lists (a fat tree's edge switch sends every remote
/// destination over the same up ports), so each distinct list of a (layer, switch) is kept
/// once, in `lists`, as its length followed by its ports, and a row holds only where its list
/// starts. A lookup reads one `u32` of the large row index and then the small, much-read list
/// pool, where a plain CSR read two places of two large arrays. On the k=16 fat-tree benchmark
/// the table went from 1.2 MB to 0.19 MB, the run's simulated read misses of a 2 MB cache from
/// 32.5 M to 29.1 M and its CPU time by about a tenth; a 9-layer Slim Fly q=19's table from
/// 22.4 to 12.4 MB, built in the same time. The lists keep their ports in link order, so a
/// packet's pick among them is the one the CSR gave.
pub struct ForwardingTable {
    nr: usize,
    /// The column of each switch as a destination (`NO_COLUMN`: none).
    column: Vec<u32>,
    columns: usize,
    /// Row `(layer * nr + switch) * columns + column[destination]`: where its list starts in
    /// `lists`.
    rows: Vec<u32>,
    /// The distinct lists, each its length and then its ports; `lists[0]` is the empty list.
    lists: Vec<u32>,
}

/// A switch that is no destination of the table.
const NO_COLUMN: u32 = u32::MAX;

impl ForwardingTable {
    /// The table towards every switch (`every_switch`) or, when packets only ever head for a
    /// switch with hosts (every routing scheme but one whose intermediates may be any switch),
    /// towards those: a fat tree's hosts hang off two fifths of its switches, and the rows a
    /// packet reads sit that much closer together.
    pub fn build(spec: &NetworkSpec, every_switch: bool) -> Self {
        let mut has_hosts = vec![every_switch; spec.n_switches];
        for &s in &spec.host_switch {
            has_hosts[s as usize] = true;
        }
        Self::towards(spec, &has_hosts)
    }

    /// The table towards the switches `wanted` marks, and no others. Plain layered routing
    /// needs only its flows' endpoints: a small run on a large fabric (64 flows into one host
    /// of a k=16 fat tree) then builds a few columns instead of every host switch's, where
    /// the table cost about 5% of the whole process.
    pub fn towards(spec: &NetworkSpec, wanted: &[bool]) -> Self {
        let nr = spec.n_switches;
        debug_assert_eq!(wanted.len(), nr);
        let targets: Vec<usize> = (0..nr).filter(|&t| wanted[t]).collect();
        let mut column = vec![NO_COLUMN; nr];
        for (c, &t) in targets.iter().enumerate() {
            column[t] = c as u32;
        }
        let e_count = spec.n_links();
        let edges: Vec<(u32, u32)> = spec
            .link_a
            .iter()
            .copied()
            .zip(spec.link_b.iter().copied())
            .collect();
        // Switch-facing ports of every switch (link e leaves a over port 2e, b over 2e + 1) with
        // the link they use, in link order: candidates keep that order, and entropy picks by it.
        let links = graph::incidence(nr, &edges);
        let port = |s: usize, e: u32| 2 * e + (spec.link_a[e as usize] as usize != s) as u32;
        // A neighbour's whole row of distances at a time pays off when most switches are
        // targets; for a few, each target's column of neighbours is read instead (the same
        // candidates in the same order: neighbours in link order).
        let whole_rows = targets.len() * 4 >= nr;
        let build_row = |row: usize| {
            let (layer, s) = (row / nr, row % nr);
            let in_layer: Vec<(u32, u32)> = links
                .row(s)
                .iter()
                .filter(|&&(_, e)| spec.layer_links[layer * e_count + e as usize] != 0)
                .map(|&(n, e)| (n, port(s, e)))
                .collect();
            let base = (layer * nr + s) * nr;
            let layer_base = layer * nr * nr;
            let own = &spec.dist[base..base + nr];
            // Multipath: bit i of `closer[t]` says that neighbour i (in link order) is one
            // hop nearer to t. Built a neighbour's contiguous row at a time: reading each
            // destination's column of neighbours misses the cache once the distances
            // outgrow it (a 1,682-switch Slim Fly's tables: 167 ms, against 268 ms).
            let closer: Option<Vec<u64>> =
                (whole_rows && spec.multipath[layer] && in_layer.len() <= 64).then(|| {
                    let mut closer = vec![0u64; nr];
                    for (i, &(n, _)) in in_layer.iter().enumerate() {
                        let row = &spec.dist[layer_base + n as usize * nr..][..nr];
                        for ((bits, &theirs), &mine) in closer.iter_mut().zip(row).zip(own) {
                            *bits |= ((theirs as u16 + 1 == mine as u16) as u64) << i;
                        }
                    }
                    closer
                });
            // Per target, where its list starts among this row block's distinct lists (0:
            // the empty list, which every block's numbering leaves to the table's first entry).
            let mut starts = vec![0u32; targets.len()];
            let mut lists: Vec<u32> = Vec::new();
            let mut seen: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
            let mut ports = Vec::new();
            for (&t, start) in targets.iter().zip(starts.iter_mut()) {
                let d = own[t];
                if t == s || d == UNREACHABLE {
                    continue;
                }
                ports.clear();
                if let Some(closer) = &closer {
                    let mut bits = closer[t];
                    while bits != 0 {
                        ports.push(in_layer[bits.trailing_zeros() as usize].1);
                        bits &= bits - 1;
                    }
                } else if spec.multipath[layer] {
                    for &(n, p) in &in_layer {
                        if spec.dist[layer_base + n as usize * nr + t] as u16 + 1 == d as u16 {
                            ports.push(p);
                        }
                    }
                } else {
                    let nh = spec.next_hop[base + t];
                    // A compiled next hop whose link is missing from the layer's list still
                    // has to be honoured: the switch would forward over any link to it.
                    let port = in_layer
                        .iter()
                        .find(|&&(n, _)| n as i32 == nh)
                        .map(|&(_, p)| p)
                        .or_else(|| {
                            links
                                .row(s)
                                .iter()
                                .find(|&&(n, _)| n as i32 == nh)
                                .map(|&(_, e)| port(s, e))
                        });
                    if let Some(p) = port {
                        ports.push(p);
                    }
                }
                if ports.is_empty() {
                    continue;
                }
                *start = match seen.get(&ports) {
                    Some(&at) => at,
                    None => {
                        // Numbered from 1 within the block; made absolute below.
                        let at = lists.len() as u32 + 1;
                        lists.push(ports.len() as u32);
                        lists.extend_from_slice(&ports);
                        seen.insert(ports.clone(), at);
                        at
                    }
                };
            }
            (starts, lists)
        };
        let n_rows = spec.n_layers() * nr;
        // A small table is built on this thread: starting the thread pool for it would cost
        // more than the work (a few columns of a large fabric, or a small fabric).
        let rows: Vec<(Vec<u32>, Vec<u32>)> = if n_rows * targets.len() < 1 << 16 {
            (0..n_rows).map(build_row).collect()
        } else {
            (0..n_rows).into_par_iter().map(build_row).collect()
        };
        let mut starts = Vec::with_capacity(rows.len() * targets.len());
        // The empty list first: a row without candidates starts at 0.
        let mut lists = Vec::with_capacity(1 + rows.iter().map(|r| r.1.len()).sum::<usize>());
        lists.push(0);
        for (block_starts, block_lists) in rows {
            // A block's starts count from 1 (its first list) and move to where it lands.
            let base = u32::try_from(lists.len() - 1).expect("fewer than 2^32 list entries");
            starts.extend(
                block_starts
                    .into_iter()
                    .map(|at| if at == 0 { 0 } else { at + base }),
            );
            lists.extend(block_lists);
        }
        assert!(
            u32::try_from(lists.len()).is_ok(),
            "fewer than 2^32 list entries"
        );
        ForwardingTable {
            nr,
            column,
            columns: targets.len(),
            rows: starts,
            lists,
        }
    }

    /// The output ports towards `destination` (none if it is not one of the table's).
    #[inline]
    pub fn candidates(&self, layer: usize, switch: usize, destination: usize) -> &[u32] {
        let column = self.column[destination];
        debug_assert!(
            column != NO_COLUMN,
            "switch {destination} is no destination"
        );
        if column == NO_COLUMN {
            return &[];
        }
        let start = self.rows[(layer * self.nr + switch) * self.columns + column as usize] as usize;
        let len = self.lists[start] as usize;
        &self.lists[start + 1..start + 1 + len]
    }

    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<u32>() * (self.rows.len() + self.lists.len())
    }
}

#[cfg(test)]
mod tests {
    use super::{ForwardingTable, NetworkSpec, PortSpec};
    use crate::sim::tests::fabric;

    /// A ring of six with a chord 0 - 3; switches 1 and 4 have no hosts.
    fn ring_with_chord() -> NetworkSpec {
        fabric(
            6,
            &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3)],
            &[2, 0, 2, 2, 0, 2],
            10.0,
        )
    }

    #[test]
    fn a_table_towards_switches_with_hosts_holds_their_rows_unchanged() {
        let spec = ring_with_chord();
        let (every, hosted) = (
            ForwardingTable::build(&spec, true),
            ForwardingTable::build(&spec, false),
        );
        for s in 0..6 {
            for t in [0, 2, 3, 5] {
                assert_eq!(every.candidates(0, s, t), hosted.candidates(0, s, t));
                assert_eq!(every.candidates(0, s, t).is_empty(), s == t);
            }
            assert!(!every.candidates(0, s, (s + 1) % 6).is_empty());
        }
        assert!(hosted.memory_bytes() < every.memory_bytes());
    }

    #[test]
    fn a_table_towards_a_few_switches_holds_their_rows_unchanged() {
        // One target is few enough for the per-target scan of neighbours (1 * 4 < 6
        // switches), two are read from whole rows (2 * 4 >= 6): both must give the full
        // table's candidates, in its order, in a smaller table.
        let spec = ring_with_chord();
        let every = ForwardingTable::build(&spec, true);
        for targets in [vec![3], vec![0, 3]] {
            let wanted: Vec<bool> = (0..6).map(|t| targets.contains(&t)).collect();
            let few = ForwardingTable::towards(&spec, &wanted);
            for s in 0..6 {
                for &t in &targets {
                    assert_eq!(
                        few.candidates(0, s, t),
                        every.candidates(0, s, t),
                        "{s} -> {t}"
                    );
                }
            }
            assert!(few.memory_bytes() < every.memory_bytes());
        }
    }

    #[test]
    fn a_switch_keeps_each_distinct_list_of_candidates_once() {
        // Leaf-spine: leaves 0-3 with hosts, spines 4 and 5, every leaf on both spines.
        let edges: Vec<(u32, u32)> = (0..4).flat_map(|l| [(l, 4), (l, 5)]).collect();
        let spec = fabric(6, &edges, &[1, 1, 1, 1, 0, 0], 10.0);
        let table = ForwardingTable::build(&spec, false);
        for leaf in 0..4usize {
            // Link 2l is leaf l - spine 4, link 2l + 1 leaf l - spine 5; leaf l is their a end.
            let up = [2 * (2 * leaf as u32), 2 * (2 * leaf as u32 + 1)];
            let remote: Vec<usize> = (0..4).filter(|&t| t != leaf).collect();
            for &t in &remote {
                assert_eq!(table.candidates(0, leaf, t), up, "{leaf} -> {t}");
            }
            // The three remote leaves' rows are one list, stored once.
            let first = table.candidates(0, leaf, remote[0]).as_ptr();
            for &t in &remote[1..] {
                assert!(std::ptr::eq(table.candidates(0, leaf, t).as_ptr(), first));
            }
            assert!(table.candidates(0, leaf, leaf).is_empty());
        }
        for spine in [4usize, 5] {
            for leaf in 0..4usize {
                // The spine is the b end of its link to the leaf: port 2e + 1.
                let e = 2 * leaf as u32 + (spine == 5) as u32;
                assert_eq!(table.candidates(0, spine, leaf), [2 * e + 1]);
            }
        }
        // Row starts for 6 switches x 4 destinations, the empty list's one entry, per leaf one
        // list of two (3 entries), per spine four lists of one (8): where a CSR would hold
        // 25 offsets and 32 ports.
        assert_eq!(table.memory_bytes(), 4 * (24 + 1 + 4 * 3 + 2 * 8));
    }

    #[test]
    fn serialisation_by_multiplication_equals_the_rounded_division() {
        // Rates that divide 8 Tb/s take the multiplication, others the division; both must
        // give the division's rounding to the nearest picosecond.
        for rate in [
            1_000, 10_000, 25_000, 40_000, 100_000, 400_000, 3_000, 56_000, 99_999,
        ] {
            let port = PortSpec::new(0, rate, 0);
            for bytes in [0u32, 1, 40, 64, 1_500, 4_000, 9_000, 65_535] {
                let want = (bytes as u64 * 8_000_000 + rate / 2) / rate;
                assert_eq!(port.serialisation(bytes), want, "{rate} Mb/s, {bytes} B");
            }
        }
    }
}
