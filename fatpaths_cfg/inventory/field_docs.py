"""What every inventory field means, one line each, put into the JSON Schema's `description`s
(editors show them; the documentation's inventory reference is generated from that schema).

A test holds this table to the models: every field has a line, and no line names a field that
does not exist.
"""

from __future__ import annotations

FIELD_DOCS: dict[str, dict[str, str]] = {
    "InventorySpec": {
        "fabric": "The fabric's name: names the output, the lab's namespaces and fabric.json.",
        "description": "Free text, kept in fabric.json.",
        "defaults": "Values every switch, link and host takes unless it gives its own.",
        "switches": "The switches, by name (wiring written out); empty with `generate`.",
        "links": "The cables between switches, each as two `switch:port` ends.",
        "hosts": "The hosts and the switch port each is cabled to.",
        "generate": "A topology generator instead of written-out wiring: `kind` and its "
        "parameters.",
        "routing": "The layers: how many, how sparse, by which algorithm, and the forwarding "
        "inside them.",
        "addressing": "How layers are encoded (address prefixes or VLANs) and the address pools.",
        "mgmt": "Management addresses of switches that do not give their own `mgmt`.",
    },
    "Defaults": {
        "platform": "Network OS of every switch without its own `platform`.",
        "link_speed": "Speed of every cable without its own `speed` (e.g. 100G, 400G).",
        "host_speed": "Speed of the host cables (default: `link_speed`).",
        "host_flow_rate": "Pace host traffic to this rate (tc on each host's uplink): the "
        "half-rate rule under which adaptive re-routing settles on a rearrangeable Clos.",
        "port_prefix": "Name of numbered ports: `ports: 48` means Ethernet1..Ethernet48.",
    },
    "SwitchSpec": {
        "name": "The switch's name (letters, digits, `-`, `_`, `.`); unique among switches "
        "and hosts.",
        "platform": "Its network OS (default: `defaults.platform`).",
        "ports": "Its ports: a count (numbered with `defaults.port_prefix`) or a list of names; "
        "without it, the ports its cables name.",
        "mgmt": "Its management address (what `deploy` dials unless a devices file says "
        "otherwise).",
        "role": "A free label (spine, leaf, ...), kept in fabric.json.",
        "plane": "The parallel dataplane it belongs to (0-based); without it, inferred from the "
        "host uplinks' order.",
    },
    "LinkSpec": {
        "a": "One end, `switch:port`.",
        "b": "The other end, `switch:port`.",
        "speed": "This cable's speed (default: `defaults.link_speed`).",
    },
    "HostSpec": {
        "name": "The host's name; unique among switches and hosts.",
        "uplink": "The switch port it is cabled to, `switch:port` (one plane).",
        "uplinks": "One `switch:port` per plane, in plane order (parallel dataplanes).",
    },
    "GenerateSpec": {
        "kind": "The topology: its parameters are listed in this block's description.",
    },
    "RoutingSpec": {
        "layers": "n: layer 1 holds every link, layers 2..n the sparser subsets.",
        "rho": "Share of the links a random layer keeps, each cable drawn by a hash of its name.",
        "algorithm": "How layers 2..n are chosen: random, overlap (FatPaths' Listing 2), or "
        "the spain, past and kshortest baselines.",
        "seed": "Seed of every random choice (layers, tie-breaks); `compile --seed` overrides it.",
        "ecmp_within_layer": "Keep every equal-cost next hop inside a layer, not one.",
        "acyclic": "Route every layer up*/down* over one order: deadlock-free layers for a "
        "lossless (PFC) fabric.",
        "paths_per_layer": "M, the paths the overlap algorithm places per layer (default 4 * "
        "switches); for kshortest, the pairs sampled.",
        "max_resamples": "Unused since layers are completed by name instead of redrawn (schema "
        "fatpaths.fabric/2); still accepted, so older inventories load.",
        "past_random_root": "PAST's non-minimal variant: each destination's tree grows from a "
        "random switch.",
        "backup": "`lfa`: per route a floating static route through a loop-free alternate of "
        "the same layer, taken when the primary's cable goes down.",
    },
    "AddressingSpec": {
        "encoding": "How a packet names its layer: `prefix` (the destination address) or "
        "`vlan` (a VLAN per layer).",
        "family": "IP families: ipv4, ipv6 or dual.",
        "host_pool_v4": "IPv4 pool of the host subnets: plane | layer | switch | host bits.",
        "link_pool_v4": "IPv4 pool of the switch-to-switch /31s, a slot per switch port.",
        "loopback_pool_v4": "IPv4 pool of the switch loopbacks.",
        "host_pool_v6": "IPv6 pool of the host subnets (/64 each).",
        "link_pool_v6": "IPv6 pool of the switch-to-switch /127s.",
        "loopback_pool_v6": "IPv6 pool of the switch loopbacks.",
        "vlan_base": "VLAN id of layer 1 with `encoding: vlan`; layer n takes vlan_base + n - 1.",
    },
    "MgmtSpec": {
        "pool": "Switch i (in name order) gets the pool's (i+1)-th address.",
        "addresses": "Per-switch exceptions, name: address.",
    },
}
