//! Native hot paths of fatpaths, exposed to Python as `fatpaths_cfg._native`.
//!
//! The folders mirror the Python packages that call them: `layers` (`fatpaths_cfg/layers/`),
//! `render`, `verify`, `inventory`, `sim`, and `support` for what every stage shares; `routing`
//! (per-layer forwarding tables) mirrors the module `fatpaths_cfg/routing.py`. Each stage keeps
//! its Python binding beside it, in a `python` submodule that converts numpy arrays and checks
//! them; this file only registers them.

pub mod inventory;
pub mod layers;
pub mod render;
pub mod routing;
pub mod sim;
pub mod support;
pub mod verify;

use pyo3::prelude::*;

use layers::overlap;
use verify::{address_lines, deadlock, route_check, route_lines};

/// How this module was built: "pgo" when `.ci/pgo_build.py` built it with a profile of its
/// training run (it sets `FATPATHS_NATIVE_BUILD`), else "plain" (`pip install -e .`, cargo).
/// Benchmarks print it beside their figures.
const BUILD: &str = match option_env!("FATPATHS_NATIVE_BUILD") {
    Some(build) => build,
    None => "plain",
};

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BUILD", BUILD)?;
    m.add_function(wrap_pyfunction!(routing::python::layer_forwarding, m)?)?;
    m.add_function(wrap_pyfunction!(routing::python::layer_forwarding_into, m)?)?;
    m.add_function(wrap_pyfunction!(routing::python::layer_distances, m)?)?;
    m.add_function(wrap_pyfunction!(overlap::python::overlap_layers, m)?)?;
    m.add_function(wrap_pyfunction!(
        deadlock::python::layers_are_deadlock_free,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(deadlock::python::route_dependencies, m)?)?;
    m.add_function(wrap_pyfunction!(deadlock::python::dependency_cycle, m)?)?;
    m.add_function(wrap_pyfunction!(route_lines::python::read_route_lines, m)?)?;
    m.add_function(wrap_pyfunction!(render::route_text::python::route_text, m)?)?;
    m.add_function(wrap_pyfunction!(route_check::python::route_faults, m)?)?;
    m.add_function(wrap_pyfunction!(route_check::python::primary_tables, m)?)?;
    m.add_function(wrap_pyfunction!(route_check::python::walk_failures, m)?)?;
    m.add_function(wrap_pyfunction!(
        address_lines::python::read_shell_addresses,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(address_lines::python::read_host_plans, m)?)?;
    m.add_function(wrap_pyfunction!(
        inventory::plain_yaml::python::load_plain_yaml,
        m
    )?)?;
    m.add_class::<sim::python::PacketSimulator>()?;
    Ok(())
}
