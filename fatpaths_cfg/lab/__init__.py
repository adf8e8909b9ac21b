"""`fatpaths lab`: run a compiled fabric on real Linux forwarding in network namespaces.

One namespace per switch and per host, a veth pair per link and host uplink, the compiled FRR
configs in zebra/staticd per switch, the compiled host plans on the hosts. `up` records every
object it creates in `OUT/lab/state.json` before creating it, so `down` removes exactly those,
also after a crash. `clab` writes the same lab as a containerlab topology.
"""
