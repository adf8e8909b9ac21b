//! Native hot paths of fatpaths, exposed to Python as `fatpaths_cfg._native`.

pub mod deadlock;
pub mod graph;
pub mod layers;
pub mod routing;
pub mod sim;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Per-layer forwarding tables.
///
/// Returns `(dist, next_hop)`, both shaped `[destination, switch]`: `dist` as uint8 (255 =
/// unreachable), `next_hop` as int32 (-1 at the destination itself and where unreachable).
/// With `rank` given, routes are up*/down* over that order (deadlock-free); otherwise shortest.
#[pyfunction]
#[pyo3(signature = (nr, edge_u, edge_v, seed, rank=None))]
fn layer_forwarding<'py>(
    py: Python<'py>,
    nr: usize,
    edge_u: PyReadonlyArray1<'py, i32>,
    edge_v: PyReadonlyArray1<'py, i32>,
    seed: u64,
    rank: Option<PyReadonlyArray1<'py, i32>>,
) -> PyResult<(Bound<'py, PyArray2<u8>>, Bound<'py, PyArray2<i32>>)> {
    let edges = graph::checked_edges(nr, edge_u.as_slice()?, edge_v.as_slice()?)
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
    let adj = graph::neighbours(nr, &edges);
    let (dist, next) = py.detach(|| routing::layer_forwarding(&adj, seed, rank_vec.as_deref()));
    let dist = Array2::from_shape_vec((nr, nr), dist).expect("shape");
    let next = Array2::from_shape_vec((nr, nr), next).expect("shape");
    Ok((dist.into_pyarray(py), next.into_pyarray(py)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(layer_forwarding, m)?)?;
    m.add_function(wrap_pyfunction!(
        deadlock::python::layer_is_deadlock_free,
        m
    )?)?;
    m.add_class::<sim::python::PacketSimulator>()?;
    m.add_function(wrap_pyfunction!(layers::python::overlap_layers_py, m)?)?;
    Ok(())
}
