//! The Python face of the simulator: one class, built from three dicts of flat numpy arrays
//! and scalars (network, flows, config), advanced in slices so Python can draw progress.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::config::{
    DropPolicy, LoadBalancing, MptcpParams, PlaneChoice, SimConfig, SubflowPaths, TransportKind,
};
use super::engine::{FlowRecord, FlowSpec, Simulator, NO_FLOW};
use super::layer_choice::LayerPolicy;
use super::network::NetworkSpec;
use super::packet::NO_TIME;
use super::switch_routing::{AdaptiveParams, RoutingKind, UgalParams};

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(format!("missing key '{key}'")))
}

fn scalar<'py, T>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    item(d, key)?.extract::<T>().map_err(Into::into)
}

/// A scalar the caller may leave out (options newer than some callers).
fn optional<'py, T>(d: &Bound<'py, PyDict>, key: &str, default: T) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    match d.get_item(key)? {
        Some(v) => v.extract::<T>().map_err(Into::into),
        None => Ok(default),
    }
}

fn array<'py, T: numpy::Element + Copy>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Vec<T>> {
    let any = item(d, key)?;
    let arr = any.extract::<PyReadonlyArray1<'py, T>>().map_err(|e| {
        PyValueError::new_err(format!(
            "'{key}' must be a 1-D array of the right dtype: {e}"
        ))
    })?;
    Ok(arr.as_array().iter().copied().collect())
}

fn unsigned(values: Vec<i32>, key: &str) -> PyResult<Vec<u32>> {
    values
        .into_iter()
        .map(|v| {
            u32::try_from(v)
                .map_err(|_| PyValueError::new_err(format!("negative entry in '{key}'")))
        })
        .collect()
}

fn network_from(d: &Bound<'_, PyDict>) -> PyResult<NetworkSpec> {
    Ok(NetworkSpec {
        n_switches: scalar(d, "n_switches")?,
        planes: optional(d, "planes", 1)?,
        host_switch: unsigned(array(d, "host_switch")?, "host_switch")?,
        host_gbps: array(d, "host_gbps")?,
        host_latency: scalar(d, "host_latency_ps")?,
        link_a: unsigned(array(d, "link_a")?, "link_a")?,
        link_b: unsigned(array(d, "link_b")?, "link_b")?,
        link_gbps: array(d, "link_gbps")?,
        link_latency: scalar(d, "link_latency_ps")?,
        layer_links: array(d, "layer_links")?,
        dist: array(d, "dist")?,
        next_hop: array(d, "next_hop")?,
        multipath: scalar(d, "multipath")?,
    })
}

/// Per flow, the flow it waits for (`after`, -1: none), or nothing when no flow waits.
fn chain_from(d: &Bound<'_, PyDict>) -> PyResult<Vec<u32>> {
    if d.get_item("after")?.is_none() {
        return Ok(Vec::new());
    }
    let after: Vec<i32> = array(d, "after")?;
    Ok(after
        .into_iter()
        .map(|a| u32::try_from(a).unwrap_or(NO_FLOW))
        .collect())
}

/// Per flow, its phase (iteration of an application loop), or nothing without phases.
fn phase_from(d: &Bound<'_, PyDict>) -> PyResult<Vec<u32>> {
    if d.get_item("phase")?.is_none() {
        return Ok(Vec::new());
    }
    unsigned(array(d, "phase")?, "phase")
}

fn flows_from(d: &Bound<'_, PyDict>) -> PyResult<Vec<FlowSpec>> {
    let src = unsigned(array(d, "src")?, "src")?;
    let dst = unsigned(array(d, "dst")?, "dst")?;
    let size: Vec<i64> = array(d, "size")?;
    let start: Vec<i64> = array(d, "start_ps")?;
    if dst.len() != src.len() || size.len() != src.len() || start.len() != src.len() {
        return Err(PyValueError::new_err("flow arrays differ in length"));
    }
    if size.iter().chain(&start).any(|&v| v < 0) {
        return Err(PyValueError::new_err(
            "flow sizes and start times must be non-negative",
        ));
    }
    Ok((0..src.len())
        .map(|i| FlowSpec {
            src: src[i],
            dst: dst[i],
            size: size[i] as u64,
            start: start[i] as u64,
        })
        .collect())
}

fn config_from(d: &Bound<'_, PyDict>) -> PyResult<SimConfig> {
    let transport: String = scalar(d, "transport")?;
    let lb: String = scalar(d, "load_balancing")?;
    let routing: String = optional(d, "routing", "layers".to_string())?;
    let base = SimConfig::default();
    let ugal = UgalParams {
        n_i: optional(d, "ugal_n_i", base.ugal.n_i)?,
        c: optional(d, "ugal_c", base.ugal.c)?,
        threshold: optional(d, "ugal_threshold", base.ugal.threshold)?,
    };
    let adaptive = AdaptiveParams {
        threshold_bytes: optional(d, "adaptive_threshold_bytes", base.adaptive.threshold_bytes)?,
        notify_delay: optional(d, "notify_delay_ps", base.adaptive.notify_delay)?,
    };
    let policy: String = scalar(d, "layer_policy")?;
    let header: u32 = scalar(d, "header")?;
    let drop: String = optional(d, "drop_policy", "tail".to_string())?;
    let plane_choice: String = optional(d, "plane_choice", "hash".to_string())?;
    let paths: String = optional(d, "subflow_paths", "kshortest".to_string())?;
    let mptcp = MptcpParams {
        subflows_per_plane: optional(d, "subflows_per_plane", base.mptcp.subflows_per_plane)?,
        paths: SubflowPaths::parse(&paths)
            .ok_or_else(|| PyValueError::new_err(format!("unknown subflow paths '{paths}'")))?,
        dctcp_subflows: optional(d, "dctcp_subflows", base.mptcp.dctcp_subflows)?,
    };
    Ok(SimConfig {
        transport: TransportKind::parse(&transport)
            .ok_or_else(|| PyValueError::new_err(format!("unknown transport '{transport}'")))?,
        load_balancing: LoadBalancing::parse(&lb)
            .ok_or_else(|| PyValueError::new_err(format!("unknown load balancing '{lb}'")))?,
        mtu: scalar(d, "mtu")?,
        header,
        ack_bytes: optional(d, "ack_bytes", header)?,
        queue_packets: scalar(d, "queue_packets")?,
        ecn_threshold_packets: scalar(d, "ecn_threshold_packets")?,
        drop_policy: DropPolicy::parse(&drop)
            .ok_or_else(|| PyValueError::new_err(format!("unknown drop policy '{drop}'")))?,
        red_min_packets: optional(d, "red_min_packets", base.red_min_packets)?,
        initial_window: scalar(d, "initial_window")?,
        initial_ssthresh: optional(d, "initial_ssthresh", base.initial_ssthresh)?,
        min_rto: scalar(d, "min_rto_ps")?,
        initial_rto: optional(d, "initial_rto_ps", base.initial_rto)?,
        rto_granularity: optional(d, "rto_granularity_ps", base.rto_granularity)?,
        flowlet_gap: scalar(d, "flowlet_gap_ps")?,
        pull_rate: scalar(d, "pull_rate")?,
        fatpaths_layers: scalar(d, "fatpaths_layers")?,
        tcp_pacing: scalar(d, "tcp_pacing")?,
        layer_policy: LayerPolicy::parse(&policy)
            .ok_or_else(|| PyValueError::new_err(format!("unknown layer policy '{policy}'")))?,
        seed: scalar(d, "seed")?,
        routing: RoutingKind::parse(&routing)
            .ok_or_else(|| PyValueError::new_err(format!("unknown routing '{routing}'")))?,
        ugal,
        adaptive,
        channels: optional(d, "channels", base.channels)?,
        layer_priority: optional(d, "layer_priority", base.layer_priority)?,
        lossless: optional(d, "lossless", base.lossless)?,
        pfc_xoff_bytes: optional(d, "pfc_xoff_bytes", base.pfc_xoff_bytes)?,
        pfc_xon_bytes: optional(d, "pfc_xon_bytes", base.pfc_xon_bytes)?,
        plane_choice: PlaneChoice::parse(&plane_choice).ok_or_else(|| {
            PyValueError::new_err(format!("unknown plane choice '{plane_choice}'"))
        })?,
        mptcp,
    })
}

/// A packet-level simulation of one workload on one fabric.
///
/// `PacketSimulator(network, flows, config)`; then `run_until(t_ps)` repeatedly (returns
/// whether events remain), and `flow_results()` / `counters()` at any point.
#[pyclass(module = "fatpaths_cfg._native")]
pub struct PacketSimulator {
    sim: Simulator,
}

fn times(values: impl Iterator<Item = u64>) -> Vec<i64> {
    values
        .map(|t| if t == NO_TIME { -1 } else { t as i64 })
        .collect()
}

#[pymethods]
impl PacketSimulator {
    #[new]
    fn new(
        py: Python<'_>,
        network: &Bound<'_, PyDict>,
        flows: &Bound<'_, PyDict>,
        config: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let spec = network_from(network)?;
        let after = chain_from(flows)?;
        let phase = phase_from(flows)?;
        let flows = flows_from(flows)?;
        let cfg = config_from(config)?;
        let sim = py
            .detach(|| Simulator::scheduled(&spec, &flows, &after, &phase, cfg))
            .map_err(PyValueError::new_err)?;
        Ok(PacketSimulator { sim })
    }

    /// Processes every event up to `horizon_ps`; returns whether events remain after it.
    fn run_until(&mut self, py: Python<'_>, horizon_ps: u64) -> bool {
        let sim = &mut self.sim;
        crate::support::pool::detached(py, || sim.run_until(horizon_ps))
    }

    #[getter]
    fn now_ps(&self) -> u64 {
        self.sim.now()
    }

    #[getter]
    fn events_processed(&self) -> u64 {
        self.sim.counters().events
    }

    /// A confirmed deadlock of a lossless run: the cycle of paused (port, priority) queues, in
    /// wait order, or None. Call between `run_until` slices; a cycle counts once it persisted
    /// across two calls without sending a byte.
    fn check_deadlock(&mut self) -> Option<Vec<(u32, u8)>> {
        self.sim.check_deadlock()
    }

    /// Per-flow outcome arrays; times are -1 for flows that did not finish.
    fn flow_results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let flows = self.sim.flows();
        let d = PyDict::new(py);
        let col =
            |f: fn(&FlowRecord) -> u64| -> Vec<i64> { flows.iter().map(|r| f(r) as i64).collect() };
        d.set_item(
            "finish_ps",
            PyArray1::from_vec(py, times(flows.iter().map(|r| r.finish))),
        )?;
        // Chained flows start when their predecessor finished, not at a time given up front.
        d.set_item(
            "start_ps",
            PyArray1::from_vec(
                py,
                times(
                    flows
                        .iter()
                        .map(|r| if r.waiting { NO_TIME } else { r.start }),
                ),
            ),
        )?;
        d.set_item("plane", PyArray1::from_vec(py, col(|r| r.plane as u64)))?;
        d.set_item(
            "sender_done_ps",
            PyArray1::from_vec(py, times(flows.iter().map(|r| r.sender_done))),
        )?;
        d.set_item("trims", PyArray1::from_vec(py, col(|r| r.trims as u64)))?;
        d.set_item("drops", PyArray1::from_vec(py, col(|r| r.drops as u64)))?;
        d.set_item(
            "retransmits",
            PyArray1::from_vec(py, col(|r| r.retransmits as u64)),
        )?;
        d.set_item(
            "spurious",
            PyArray1::from_vec(py, col(|r| r.spurious as u64)),
        )?;
        d.set_item(
            "packets_sent",
            PyArray1::from_vec(py, col(|r| r.packets_sent as u64)),
        )?;
        d.set_item("delivered", PyArray1::from_vec(py, col(|r| r.delivered)))?;
        d.set_item(
            "out_of_order",
            PyArray1::from_vec(py, col(|r| r.out_of_order as u64)),
        )?;
        let layers: Vec<u64> = flows.iter().map(|r| r.layers_used).collect();
        d.set_item("layers_used", PyArray1::from_vec(py, layers))?;
        Ok(d)
    }

    /// The run's accounting identities checked now: `(name, holds, detail)` each.
    fn invariants(&self) -> Vec<(&'static str, bool, String)> {
        self.sim
            .invariants()
            .into_iter()
            .map(|i| (i.name, i.holds, i.detail))
            .collect()
    }

    /// Whole-run counters (events, packets, bytes by fate, drops, marks, memory).
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.sim.counters();
        let d = PyDict::new(py);
        let entries: [(&str, u64); 24] = [
            ("events", c.events),
            ("data_packets_sent", c.data_packets_sent),
            ("control_packets_sent", c.control_packets_sent),
            ("payload_injected", c.payload_injected),
            ("payload_delivered", c.payload_delivered),
            ("payload_duplicate", c.payload_duplicate),
            ("payload_trimmed", c.payload_trimmed),
            ("payload_dropped", c.payload_dropped),
            ("trims", c.trims),
            ("data_drops", c.data_drops),
            ("header_drops", c.header_drops),
            ("control_drops", c.control_drops),
            ("unroutable", c.unroutable),
            ("ecn_marks", c.ecn_marks),
            ("layer_changes", c.layer_changes),
            ("timeouts", c.timeouts),
            ("flows_started", c.flows_started),
            ("flows_finished", c.flows_finished),
            ("data_hops", c.data_hops),
            ("indirect_packets", c.indirect_packets),
            ("out_of_order", c.out_of_order),
            ("spurious_retransmissions", c.spurious_retransmissions),
            ("data_arrivals", c.data_arrivals),
            ("header_arrivals", c.header_arrivals),
        ];
        for (k, v) in entries {
            d.set_item(k, v)?;
        }
        for (k, v) in self.sim.routing_counters() {
            d.set_item(k, v)?;
        }
        if let Some(pfc) = self.sim.pfc_counters() {
            d.set_item("pfc_pause_frames", pfc.pause_frames)?;
            d.set_item("pfc_resume_frames", pfc.resume_frames)?;
            d.set_item("pfc_headroom_overflows", pfc.headroom_overflows)?;
            d.set_item("pfc_peak_ingress_bytes", pfc.peak_ingress_bytes)?;
        }
        d.set_item("payload_in_network", self.sim.payload_in_network())?;
        d.set_item("now_ps", self.sim.now())?;
        d.set_item("peak_pending_events", self.sim.peak_pending_events() as u64)?;
        d.set_item("packet_arena", self.sim.packet_arena() as u64)?;
        d.set_item(
            "forwarding_table_bytes",
            self.sim.forwarding_table_bytes() as u64,
        )?;
        Ok(d)
    }
}
