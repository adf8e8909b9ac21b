//! Addresses read back out of rendered iproute2 scripts, for `verify`: a switch's
//! `interfaces.sh` (addresses, host routes) and the host plans (`hosts/HOST.sh`). A Slim Fly
//! q=19 has 722 switch scripts of 400 lines and 10,830 host plans; Python spends seconds
//! splitting their lines.
//!
//! Each reader reads exactly what its Python reader reads (`verify/readers.py`: `shell` with
//! routes off, and `_read_hosts`). Text Python could split differently (see
//! `route_lines::plain`) and files that cannot be read are handed back to Python, which reads
//! them itself (and raises its own error for a file it cannot read).

use rayon::prelude::*;

use crate::verify::route_lines::{plain, split_words, strip};

/// (line, interface or device, address as written)
pub type AddressLine = (u32, String, String);

/// What a switch's iproute2 script without routes holds, line numbers 1-based.
#[derive(Debug, Default, PartialEq)]
pub struct ShellLines {
    pub addresses: Vec<AddressLine>,
    pub host_routes: Vec<AddressLine>,
    /// Lines that are neither blank, inert, addresses nor host routes: (line, stripped text).
    pub unparsed: Vec<(u32, String)>,
}

/// Statements of the scripts that carry nothing to check (`_SHELL_INERT`).
const SHELL_INERT: [&[u8]; 5] = [
    b"#",
    b"set -e",
    b"sysctl ",
    b"ip link set ",
    b"ip -6 neigh replace proxy ",
];

fn text(word: &[u8]) -> String {
    String::from_utf8_lossy(word).into_owned()
}

/// The words after `ip` or `ip -6` (whatever the first word is, as in Python).
fn statement<'a>(parts: &'a [&'a [u8]]) -> &'a [&'a [u8]] {
    if parts.get(1) == Some(&&b"-6"[..]) {
        &parts[2..]
    } else {
        &parts[parts.len().min(1)..]
    }
}

/// The lines of a switch script read without routes; None for text Python must read.
pub fn shell_lines(text_bytes: &[u8]) -> Option<ShellLines> {
    if !plain(text_bytes) {
        return None;
    }
    let mut lines = ShellLines::default();
    for (index, raw) in text_bytes.split(|&b| b == b'\n').enumerate() {
        let number = index as u32 + 1;
        let stripped = strip(raw);
        if stripped.is_empty() || SHELL_INERT.iter().any(|p| stripped.starts_with(p)) {
            continue;
        }
        let parts = split_words(stripped);
        match statement(&parts) {
            [b"addr", b"replace", address, b"dev", interface, ..] => {
                lines
                    .addresses
                    .push((number, text(interface), text(address)));
            }
            [b"route", b"replace", destination, b"dev", interface] => {
                lines
                    .host_routes
                    .push((number, text(interface), text(destination)));
            }
            _ => lines.unparsed.push((number, text(stripped))),
        }
    }
    Some(lines)
}

/// The address lines of a host plan: `ip [-6] addr replace ADDRESS [dev DEVICE ...]`, the
/// device `eth0` when none is named; None for text Python must read.
pub fn host_plan_addresses(text_bytes: &[u8]) -> Option<Vec<AddressLine>> {
    if !plain(text_bytes) {
        return None;
    }
    let mut addresses = Vec::new();
    for (index, raw) in text_bytes.split(|&b| b == b'\n').enumerate() {
        let parts = split_words(raw);
        match statement(&parts) {
            [b"addr", b"replace", address, b"dev", device, ..] => {
                addresses.push((index as u32 + 1, text(device), text(address)));
            }
            [b"addr", b"replace", address, ..] => {
                addresses.push((index as u32 + 1, "eth0".to_string(), text(address)));
            }
            _ => {}
        }
    }
    Some(addresses)
}

/// Address lines of every host plan at `paths`, read and parsed in parallel, in input order.
pub fn read_host_plans(paths: &[String]) -> Vec<Option<Vec<AddressLine>>> {
    paths
        .par_iter()
        .map(|path| {
            std::fs::read(path)
                .ok()
                .and_then(|t| host_plan_addresses(&t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: u32, name: &str, address: &str) -> AddressLine {
        (number, name.to_string(), address.to_string())
    }

    #[test]
    fn switch_script_addresses_host_routes_and_the_rest() {
        let script = b"#!/bin/sh\nset -e\n  ip addr replace 10.0.0.1/32 dev lo \r\n\
            ip -6 addr replace fd00::1/64 dev e1 noprefixroute\n\
            ip route replace 10.0.0.2/32 dev e2\n\
            ip route replace 10.0.0.3/32 dev e2 extra\n\
            ip addr replace 10.0.0.4/31\nip link set dev e1 up\n\nbogus\n";
        let read = shell_lines(script).unwrap();
        assert_eq!(
            read.addresses,
            [line(3, "lo", "10.0.0.1/32"), line(4, "e1", "fd00::1/64")]
        );
        assert_eq!(read.host_routes, [line(5, "e2", "10.0.0.2/32")]);
        assert_eq!(
            read.unparsed,
            [
                (6, "ip route replace 10.0.0.3/32 dev e2 extra".to_string()),
                (7, "ip addr replace 10.0.0.4/31".to_string()),
                (10, "bogus".to_string()),
            ]
        );
    }

    #[test]
    fn host_plan_devices_default_to_eth0() {
        let plan = b"# addr replace\nip addr replace 10.0.0.2/27 dev eth1\n\
            ip -6 addr replace fd00::2/64\nip mptcp endpoint add 10.0.0.2 dev eth0 signal\n\
            ip addr replace 10.0.0.3/27 via x\n";
        let read = host_plan_addresses(plan).unwrap();
        assert_eq!(
            read,
            [
                line(2, "eth1", "10.0.0.2/27"),
                line(3, "eth0", "fd00::2/64"),
                line(5, "eth0", "10.0.0.3/27"),
            ]
        );
    }

    #[test]
    fn text_python_would_split_differently_is_left_to_python() {
        assert!(shell_lines(b"ip addr replace a dev b\x0c\n").is_none());
        assert!(host_plan_addresses("ip addr replace \u{e9}\n".as_bytes()).is_none());
        let missing = vec!["/nonexistent/fatpaths/plan.sh".to_string()];
        assert_eq!(read_host_plans(&missing), [None]);
    }
}

pub mod python {
    use pyo3::prelude::*;

    use super::AddressLine;

    type Shell = (Vec<AddressLine>, Vec<AddressLine>, Vec<(u32, String)>);

    /// A switch's iproute2 script read without routes, as `(addresses, host_routes,
    /// unparsed)`: (line, interface, address) and (line, stripped text); None when Python
    /// must read the file (text it would split differently, or a file that cannot be read).
    #[pyfunction]
    pub fn read_shell_addresses(py: Python<'_>, path: String) -> Option<Shell> {
        crate::support::pool::detached(py, || {
            let text = std::fs::read(path).ok()?;
            let read = super::shell_lines(&text)?;
            Some((read.addresses, read.host_routes, read.unparsed))
        })
    }

    /// The (line, device, address) address lines of each host plan at `paths`, in order;
    /// None for a plan Python must read.
    #[pyfunction]
    pub fn read_host_plans(py: Python<'_>, paths: Vec<String>) -> Vec<Option<Vec<AddressLine>>> {
        crate::support::pool::detached(py, || super::read_host_plans(&paths))
    }
}
