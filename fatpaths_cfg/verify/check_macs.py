"""The VLAN encoding's checks: static MAC entries instead of routes, and the trunks' VLANs."""

from __future__ import annotations

import numpy as np

from fatpaths_cfg.verify.context import Room, RouteArrays
from fatpaths_cfg.verify.findings import BAD_NEXT_HOP, MISSING_ROUTE, OUTSIDE_LAYER, Finding
from fatpaths_cfg.verify.readers import normalise_mac


class MacChecks(Room):
    """Static MAC entries read as routes, each host in every VLAN, each trunk with its layers'
    VLANs."""

    def host_macs(self) -> dict[str, int]:
        plan = self.loaded.addresses
        macs = plan.host_macs if plan is not None else []
        return {normalise_mac(mac): host for host, mac in enumerate(macs) if mac}

    def resolve_macs(self) -> RouteArrays:
        """Static MAC entries as routes: (layer of the VLAN, switch, host's switch, neighbour
        behind the port). Entries for a host port deliver locally and are checked here."""
        macs = self.parsed.macs
        host_of = self.host_macs()
        ports: dict[tuple[int, str], tuple[int, int]] = {}
        for link in self.fabric.links:
            ports[(link.a, link.a_port)] = (link.index, link.b)
            ports[(link.b, link.b_port)] = (link.index, link.a)
        host_ports = {(h.switch, h.port) for h in self.fabric.hosts}
        size = len(macs)
        table = np.full(size, -1, dtype=np.int64)
        dest = np.full(size, -1, dtype=np.int64)
        hop = np.full(size, -1, dtype=np.int64)
        via = np.full(size, -1, dtype=np.int64)
        keep = np.ones(size, dtype=bool)
        for row in range(size):
            s, host = macs.switch[row], host_of.get(macs.mac[row])
            layer = self.index.vlans.get(macs.vlan[row])
            if host is None or layer is None:
                continue
            t = self.fabric.hosts[host].switch
            table[row], dest[row] = layer - 1, t
            if (s, macs.port[row]) in host_ports:
                keep[row] = False
                if s != t or self.fabric.hosts[host].port != macs.port[row]:
                    self.ctx.add(
                        Finding(
                            BAD_NEXT_HOP,
                            f"layer {layer}: {self.names[s]} delivers host "
                            f"{self.fabric.hosts[host].name} to host port {macs.port[row]}",
                            self.parsed.location(macs.file[row], macs.line[row]),
                            layer,
                            self.names[s],
                            self.fabric.hosts[host].name,
                        )
                    )
                continue
            found = ports.get((s, macs.port[row]))
            if found is not None:
                via[row], hop[row] = found
        rows = np.flatnonzero(keep)
        return RouteArrays(
            table=table[rows],
            switch=np.asarray(macs.switch, dtype=np.int64)[rows],
            dest=dest[rows],
            hop=hop[rows],
            link=via[rows],
            file=np.asarray(macs.file, dtype=np.int64)[rows],
            line=np.asarray(macs.line, dtype=np.int64)[rows],
            row=rows,
        )

    def check_mac_completeness(self) -> set[tuple[int, int, int]]:
        """Every switch needs an entry for every host in every layer's VLAN (flooding is off,
        so a missing entry drops the host's traffic). Returns the (table, switch, host switch)
        keys reported."""
        macs = self.parsed.macs
        host_of = self.host_macs()
        hosts = len(self.fabric.hosts)
        layers = self.index.layers
        seen = np.zeros((layers, self.nr, hosts), dtype=bool)
        for s, vlan, mac in zip(macs.switch, macs.vlan, macs.mac, strict=True):
            layer, host = self.index.vlans.get(vlan), host_of.get(mac)
            if layer is not None and host is not None:
                seen[layer - 1, s, host] = True
        reported: set[tuple[int, int, int]] = set()
        vlan_of = {layer: vlan for vlan, layer in self.index.vlans.items()}
        read = {self.fabric.switch_index[n] for n in self.parsed.switch_file}
        for layer, s, host in zip(*np.nonzero(~seen), strict=True):
            if int(s) not in read:
                continue
            h = self.fabric.hosts[int(host)]
            reported.add((int(layer), int(s), h.switch))
            self.ctx.add(
                Finding(
                    MISSING_ROUTE,
                    f"layer {layer + 1}: {self.names[s]} has no static MAC entry for host "
                    f"{h.name} in VLAN {vlan_of.get(int(layer) + 1)}: its frames are dropped",
                    self.ctx.switch_location(int(s)),
                    int(layer) + 1,
                    self.names[s],
                    h.name,
                )
            )
        return reported

    def check_trunks(self) -> None:
        """A link port must carry exactly the VLANs of the layers that use its link."""
        vlan_of = {layer: vlan for vlan, layer in self.index.vlans.items()}
        trunks = {(t.switch, t.port): t for t in self.parsed.trunks}
        masks = self.loaded.layer_masks
        for link in self.fabric.links:
            want = frozenset(vlan_of[i + 1] for i, m in enumerate(masks) if m[link.index])
            for switch, port in ((link.a, link.a_port), (link.b, link.b_port)):
                name = self.names[switch]
                if name not in self.parsed.switch_file:
                    continue
                trunk = trunks.get((name, port))
                if trunk is not None and trunk.vlans == want:
                    continue
                have = "no allowed-VLAN list" if trunk is None else f"VLANs {sorted(trunk.vlans)}"
                self.ctx.add(
                    Finding(
                        OUTSIDE_LAYER,
                        f"{name} port {port} (link {link.index}) carries {have}; its layers "
                        f"need VLANs {sorted(want)}",
                        self.parsed.location(trunk.file, trunk.line)
                        if trunk
                        else self.ctx.switch_location(switch),
                        source=name,
                    )
                )
