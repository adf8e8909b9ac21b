//! verify's route check over the rows read back from rendered configs: the first fault of each
//! row, the table a packet follows (the first line per switch and destination), and the walk of
//! every routed pair through it. A q=19 Slim Fly has 4.7 M rows and 4.7 M walks; as numpy
//! passes they took two seconds of temporaries, here one pass each.

use rayon::prelude::*;

/// No route line for this (switch, destination) in this table.
pub const NO_HOP: i32 = -1;

/// Row faults by position in verify's `ROUTE_FAULTS`: a row is reported under its first.
const UNKNOWN_PREFIX: i8 = 0;
const CROSS_PLANE: i8 = 1;
const BAD_NEXT_HOP: i8 = 2;
const OWN_SUBNET: i8 = 3;
const OUTSIDE_LAYER: i8 = 4;
const NOT_SHORTEST: i8 = 5;
const DIFFERS: i8 = 6;
const SOUND: i8 = -1;

/// The resolved rows: table (-1: the prefix is no layer subnet), switch, destination switch,
/// next-hop switch and the link of the next-hop address (-1 where they did not resolve).
pub struct Rows<'a> {
    pub table: &'a [i32],
    pub switch: &'a [i32],
    pub dest: &'a [i32],
    pub hop: &'a [i32],
    pub link: &'a [i32],
}

/// What the rows are held against, all from `fabric.json` and `routing.npz`.
pub struct Reference<'a> {
    pub nr: usize,
    pub layers: usize,
    pub link_a: &'a [i32],
    pub link_b: &'a [i32],
    /// Plane of each switch; None with one plane, where nothing can cross.
    pub plane: Option<&'a [i32]>,
    /// [layer, link]: whether the layer holds the link; None when the fabric has no layers.
    pub layer_links: Option<&'a [bool]>,
    /// [layer, switch, destination] hop distances over the layer's own links.
    pub dist: &'a [i16],
    /// [layer, switch, destination] the compiler's single next hop; None with ECMP.
    pub model: Option<&'a [i32]>,
}

impl Reference<'_> {
    fn fault(&self, table: i32, s: i32, t: i32, n: i32, link: i32) -> i8 {
        if table < 0 {
            return UNKNOWN_PREFIX;
        }
        if let Some(plane) = self.plane {
            let own = plane[s as usize];
            if (t >= 0 && plane[t as usize] != own) || (n >= 0 && plane[n as usize] != own) {
                return CROSS_PLANE;
            }
        }
        let attached = link >= 0
            && n != s
            && (self.link_a[link as usize] == s || self.link_b[link as usize] == s);
        if !attached {
            return BAD_NEXT_HOP;
        }
        if t == s {
            return OWN_SUBNET;
        }
        let layer = table as usize % self.layers;
        if let Some(holds) = self.layer_links {
            if !holds[layer * self.link_a.len() + link as usize] {
                return OUTSIDE_LAYER;
            }
        }
        let nr = self.nr;
        let base = layer * nr * nr;
        let (s, t, n) = (s as usize, t as usize, n as usize);
        if i32::from(self.dist[base + n * nr + t]) != i32::from(self.dist[base + s * nr + t]) - 1 {
            return NOT_SHORTEST;
        }
        if let Some(model) = self.model {
            if model[base + s * nr + t] != n as i32 {
                return DIFFERS;
            }
        }
        SOUND
    }
}

/// The first fault of every row, or -1 where the row is sound.
pub fn route_faults(rows: &Rows<'_>, reference: &Reference<'_>) -> Vec<i8> {
    (0..rows.table.len())
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|i| {
            reference.fault(
                rows.table[i],
                rows.switch[i],
                rows.dest[i],
                rows.hop[i],
                rows.link[i],
            )
        })
        .collect()
}

/// `(hop, row)`, each [table, switch, destination]: the next hop of the first route line there
/// (what a packet follows) and that line's row; NO_HOP and -1 where there is none.
pub fn primary_tables(rows: &Rows<'_>, tables: usize, nr: usize) -> (Vec<i32>, Vec<i64>) {
    let cells = tables * nr * nr;
    let mut hop = vec![NO_HOP; cells];
    let mut row = vec![-1i64; cells];
    for i in 0..rows.table.len() {
        let table = rows.table[i];
        if table < 0 {
            continue;
        }
        let cell = (table as usize * nr + rows.switch[i] as usize) * nr + rows.dest[i] as usize;
        if row[cell] < 0 {
            row[cell] = i as i64;
            hop[cell] = rows.hop[i];
        }
    }
    (hop, row)
}

/// One table as a packet sees it: per (switch, destination) the hop it follows and whether
/// the line it follows is sound.
pub struct Table<'a> {
    pub nr: usize,
    pub hop: &'a [i32],
    pub row: &'a [i64],
    pub fault: &'a [i8],
    /// The layer's up*/down* rank, whose walks must not turn up after going down.
    pub rank: Option<&'a [i64]>,
}

impl Table<'_> {
    fn sound(&self, at: usize, t: usize) -> bool {
        let row = self.row[at * self.nr + t];
        row >= 0 && self.fault[row as usize] < 0
    }

    /// Where the walk from s to t fails, or None when it arrives.
    fn walk(&self, s: usize, t: usize) -> Option<usize> {
        let mut here = s;
        let mut went_down = false;
        // Sound hops bring each packet one hop closer, so a walk ends within nr steps; the
        // bound only guards against a distance table that says otherwise.
        for _ in 0..=self.nr {
            if !self.sound(here, t) {
                return Some(here);
            }
            let next = self.hop[here * self.nr + t] as usize;
            if let Some(rank) = self.rank {
                let up = rank[next] < rank[here];
                if up && went_down {
                    return Some(here);
                }
                went_down |= !up;
            }
            if next == t {
                return None;
            }
            here = next;
        }
        Some(here)
    }
}

/// Every failed walk over the routed pairs ([source, destination] mask) as (source,
/// destination, switch where it failed), sources in order, destinations in order within each.
pub fn walk_failures(table: &Table<'_>, routed: &[bool]) -> Vec<(i64, i64, i64)> {
    let nr = table.nr;
    (0..nr)
        .into_par_iter()
        .flat_map_iter(|s| {
            (0..nr).filter_map(move |t| {
                if !routed[s * nr + t] {
                    return None;
                }
                table.walk(s, t).map(|at| (s as i64, t as i64, at as i64))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line 0 - 1 - 2 with links 0 (0-1) and 1 (1-2), one layer holding both.
    fn line_reference<'a>(dist: &'a [i16], model: Option<&'a [i32]>) -> Reference<'a> {
        Reference {
            nr: 3,
            layers: 1,
            link_a: &[0, 1],
            link_b: &[1, 2],
            plane: None,
            layer_links: Some(&[true, true]),
            dist,
            model,
        }
    }

    const LINE_DIST: [i16; 9] = [0, 1, 2, 1, 0, 1, 2, 1, 0];

    #[test]
    fn each_row_gets_its_first_fault() {
        let reference = line_reference(&LINE_DIST, None);
        // sound 0->2 via 1; unknown prefix; next hop not attached (0 -> 2 over link 1);
        // own subnet; 1->2 via 0 goes away from 2.
        let rows = Rows {
            table: &[0, -1, 0, 0, 0],
            switch: &[0, 0, 0, 1, 1],
            dest: &[2, 2, 2, 1, 2],
            hop: &[1, 1, 2, 2, 0],
            link: &[0, 0, 1, 1, 0],
        };
        assert_eq!(
            route_faults(&rows, &reference),
            vec![
                SOUND,
                UNKNOWN_PREFIX,
                BAD_NEXT_HOP,
                OWN_SUBNET,
                NOT_SHORTEST
            ]
        );
    }

    #[test]
    fn a_route_off_the_compilers_table_differs() {
        let model = [-1, 1, 1, 0, -1, 2, 1, 1, -1];
        let reference = line_reference(&LINE_DIST, Some(&model));
        let rows = Rows {
            table: &[0, 0],
            switch: &[0, 1],
            dest: &[2, 2],
            hop: &[1, 2],
            link: &[0, 1],
        };
        assert_eq!(route_faults(&rows, &reference), vec![SOUND, SOUND]);
        let wrong_model = [-1, 1, 1, 0, -1, 0, 1, 1, -1];
        let reference = line_reference(&LINE_DIST, Some(&wrong_model));
        assert_eq!(route_faults(&rows, &reference), vec![SOUND, DIFFERS]);
    }

    #[test]
    fn the_first_line_of_a_cell_is_the_one_followed() {
        let rows = Rows {
            table: &[0, 0, -1],
            switch: &[0, 0, 1],
            dest: &[2, 2, 2],
            hop: &[1, 2, 0],
            link: &[0, 1, 0],
        };
        let (hop, row) = primary_tables(&rows, 1, 3);
        assert_eq!(hop[2], 1);
        assert_eq!(row[2], 0);
        assert_eq!(row[5], -1);
        assert_eq!(hop[5], NO_HOP);
    }

    #[test]
    fn walks_fail_where_the_route_is_missing_or_faulty() {
        // Towards 2: 0 -> 1 sound, 1 has no route. Towards 0: 2 -> 1 -> 0 sound.
        let hop = [-1, 1, 1, 0, -1, -1, 1, 1, -1];
        let row = [-1, -1, 0, 1, -1, -1, 2, -1, -1];
        let fault = [SOUND, SOUND, SOUND];
        let routed = [false, true, true, true, false, true, true, true, false];
        let table = Table {
            nr: 3,
            hop: &hop,
            row: &row,
            fault: &fault,
            rank: None,
        };
        let failures = walk_failures(&table, &routed);
        // 1 -> 0 and 2 -> 1 -> 0 arrive; every other walk meets a switch without a line.
        assert_eq!(failures, vec![(0, 1, 0), (0, 2, 1), (1, 2, 1), (2, 1, 2)]);
    }

    #[test]
    fn an_up_turn_after_going_down_breaks_the_walk() {
        // Ranks put 1 at the root, then 0, then 2: 0 -> 2 goes down, 2 -> 1 goes up again.
        let hop = [-1, 2, 2, 0, -1, 0, 1, 1, -1];
        let row = [-1, 0, 1, 2, -1, 3, 4, 5, -1];
        let fault = [SOUND; 6];
        let mut routed = [false; 9];
        routed[1] = true; // 0 -> 1
        let rank = [1i64, 0, 2];
        let table = Table {
            nr: 3,
            hop: &hop,
            row: &row,
            fault: &fault,
            rank: Some(&rank),
        };
        assert_eq!(walk_failures(&table, &routed), vec![(0, 1, 2)]);
    }
}

pub mod python {
    use numpy::ndarray::{Array1, Array3};
    use numpy::{
        IntoPyArray, PyArray1, PyArray3, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
        PyUntypedArrayMethods,
    };
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    fn same_length(lengths: &[usize], what: &str) -> PyResult<()> {
        if lengths.iter().any(|&n| n != lengths[0]) {
            return Err(PyValueError::new_err(format!(
                "{what} must have the same length"
            )));
        }
        Ok(())
    }

    /// The first fault of each route row (its position in verify's ROUTE_FAULTS), -1 where
    /// sound. `dist` and `model` are [layer, switch, destination]; `layer_links` [layer, link].
    #[pyfunction]
    #[pyo3(signature = (table, switch, dest, hop, link, link_a, link_b, plane, layer_links, dist, model))]
    #[allow(clippy::too_many_arguments)]
    pub fn route_faults<'py>(
        py: Python<'py>,
        table: PyReadonlyArray1<'py, i32>,
        switch: PyReadonlyArray1<'py, i32>,
        dest: PyReadonlyArray1<'py, i32>,
        hop: PyReadonlyArray1<'py, i32>,
        link: PyReadonlyArray1<'py, i32>,
        link_a: PyReadonlyArray1<'py, i32>,
        link_b: PyReadonlyArray1<'py, i32>,
        plane: Option<PyReadonlyArray1<'py, i32>>,
        layer_links: Option<PyReadonlyArray2<'py, bool>>,
        dist: PyReadonlyArray3<'py, i16>,
        model: Option<PyReadonlyArray3<'py, i32>>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let rows = super::Rows {
            table: table.as_slice()?,
            switch: switch.as_slice()?,
            dest: dest.as_slice()?,
            hop: hop.as_slice()?,
            link: link.as_slice()?,
        };
        same_length(
            &[
                rows.table.len(),
                rows.switch.len(),
                rows.dest.len(),
                rows.hop.len(),
                rows.link.len(),
            ],
            "route columns",
        )?;
        let shape = dist.shape().to_vec();
        let (layers, nr) = (shape[0], shape[1]);
        if shape[2] != nr || layers == 0 {
            return Err(PyValueError::new_err(
                "dist must be [layer, nr, nr], layers > 0",
            ));
        }
        let link_a = link_a.as_slice()?;
        let link_b = link_b.as_slice()?;
        same_length(&[link_a.len(), link_b.len()], "link ends")?;
        if let Some(holds) = &layer_links {
            if holds.shape() != [layers, link_a.len()] {
                return Err(PyValueError::new_err("layer_links must be [layer, link]"));
            }
        }
        if let Some(model) = &model {
            if model.shape() != shape.as_slice() {
                return Err(PyValueError::new_err("model must be shaped like dist"));
            }
        }
        let plane = plane.as_ref().map(|p| p.as_slice()).transpose()?;
        if plane.is_some_and(|p| p.len() != nr) {
            return Err(PyValueError::new_err(
                "plane must have one entry per switch",
            ));
        }
        // Indices are checked once here so the row loop can trust them.
        let in_range = |values: &[i32], bound: usize| values.iter().all(|&v| v < bound as i32);
        let placed_ok = (0..rows.table.len()).all(|i| rows.table[i] < 0 || rows.dest[i] >= 0);
        if !placed_ok
            || !in_range(rows.switch, nr)
            || rows.switch.iter().any(|&s| s < 0)
            || !in_range(rows.dest, nr)
            || !in_range(rows.hop, nr)
            || !in_range(rows.link, link_a.len())
            || !in_range(link_a, nr)
            || !in_range(link_b, nr)
        {
            return Err(PyValueError::new_err(
                "a switch or link index is out of range",
            ));
        }
        let reference = super::Reference {
            nr,
            layers,
            link_a,
            link_b,
            plane,
            layer_links: layer_links.as_ref().map(|h| h.as_slice()).transpose()?,
            dist: dist.as_slice()?,
            model: model.as_ref().map(|m| m.as_slice()).transpose()?,
        };
        let faults = crate::support::pool::detached(py, || super::route_faults(&rows, &reference));
        Ok(Array1::from_vec(faults).into_pyarray(py))
    }

    type PrimaryTables<'py> = (Bound<'py, PyArray3<i32>>, Bound<'py, PyArray3<i64>>);

    /// `(hop, row)`, [table, switch, destination]: the first route line of each cell.
    #[pyfunction]
    pub fn primary_tables<'py>(
        py: Python<'py>,
        table: PyReadonlyArray1<'py, i32>,
        switch: PyReadonlyArray1<'py, i32>,
        dest: PyReadonlyArray1<'py, i32>,
        hop: PyReadonlyArray1<'py, i32>,
        tables: usize,
        nr: usize,
    ) -> PyResult<PrimaryTables<'py>> {
        let rows = super::Rows {
            table: table.as_slice()?,
            switch: switch.as_slice()?,
            dest: dest.as_slice()?,
            hop: hop.as_slice()?,
            link: &[],
        };
        same_length(
            &[
                rows.table.len(),
                rows.switch.len(),
                rows.dest.len(),
                rows.hop.len(),
            ],
            "route columns",
        )?;
        let placed = (0..rows.table.len()).filter(|&i| rows.table[i] >= 0);
        for i in placed {
            let (t, s, d) = (rows.table[i], rows.switch[i], rows.dest[i]);
            if t as usize >= tables || s < 0 || s as usize >= nr || d < 0 || d as usize >= nr {
                return Err(PyValueError::new_err(format!(
                    "route row {i} is outside {tables} tables of {nr} switches"
                )));
            }
        }
        let (hop, row) = py.detach(|| super::primary_tables(&rows, tables, nr));
        let shape = (tables, nr, nr);
        Ok((
            Array3::from_shape_vec(shape, hop)
                .expect("shape")
                .into_pyarray(py),
            Array3::from_shape_vec(shape, row)
                .expect("shape")
                .into_pyarray(py),
        ))
    }

    type Failures<'py> = (
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
        Bound<'py, PyArray1<i64>>,
    );

    /// The failed walks of one table over the routed pairs: (source, destination, switch
    /// where the walk failed), in source then destination order.
    #[pyfunction]
    #[pyo3(signature = (hop, row, fault, routed, rank=None))]
    pub fn walk_failures<'py>(
        py: Python<'py>,
        hop: PyReadonlyArray2<'py, i32>,
        row: PyReadonlyArray2<'py, i64>,
        fault: PyReadonlyArray1<'py, i8>,
        routed: PyReadonlyArray2<'py, bool>,
        rank: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Failures<'py>> {
        let nr = hop.shape()[0];
        if hop.shape() != [nr, nr] || row.shape() != [nr, nr] || routed.shape() != [nr, nr] {
            return Err(PyValueError::new_err("hop, row and routed must be nr x nr"));
        }
        let fault = fault.as_slice()?;
        let hop = hop.as_slice()?;
        let row = row.as_slice()?;
        let rank = rank.as_ref().map(|r| r.as_slice()).transpose()?;
        if rank.is_some_and(|r| r.len() != nr) {
            return Err(PyValueError::new_err("rank must have one entry per switch"));
        }
        // A sound cell's hop is followed, so it must name a switch.
        let followed_ok = (0..nr * nr).all(|cell| {
            let r = row[cell];
            r < 0
                || ((r as usize) < fault.len()
                    && (fault[r as usize] >= 0 || (0..nr as i32).contains(&hop[cell])))
        });
        if !followed_ok {
            return Err(PyValueError::new_err(
                "a sound route's next hop is no switch, or a row is out of range",
            ));
        }
        let table = super::Table {
            nr,
            hop,
            row,
            fault,
            rank,
        };
        let routed = routed.as_slice()?;
        let failures = crate::support::pool::detached(py, || super::walk_failures(&table, routed));
        let column = |pick: fn(&(i64, i64, i64)) -> i64| {
            Array1::from_iter(failures.iter().map(pick)).into_pyarray(py)
        };
        Ok((column(|f| f.0), column(|f| f.1), column(|f| f.2)))
    }
}
