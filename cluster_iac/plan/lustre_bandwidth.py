"""Lustre bandwidth from hardware: RAID groups of drives, servers, the fabric and the clients.

- A RAID group streams at (its data drives) x (one drive's sequential rate): RAID 6 of n drives
  reads and writes full stripes at (n - 2) x, RAID 5 (n - 1) x, RAID 10 reads n x and writes
  n/2 x, RAID 1 reads n x and writes 1 x, RAID 0 n x both (the sequential columns of the
  standard RAID-level comparison, e.g. Wikipedia "Standard RAID levels"). Parity is the write
  penalty of a full-stripe write; a partial stripe costs more (read-modify-write), which the
  Lustre manual avoids by making a full stripe one 1 MiB RPC (checks: LUSTRE-RAID-STRIPE).
- A server delivers at most min(sum of its OSTs, its drive controllers' host links).
- A host's NICs carry Lustre only on the interfaces LNet is given (lnet.interfaces, else the
  network's one interface; lnetctl(8), LNet multi-rail): of its ports on the LNet network, as
  many as it has interfaces, line rate x min(1, interfaces / ports).
- The aggregate is the maximum flow from the OSSs' drives through those NIC links, the fabric's
  switch-to-switch links and the clients' NIC links to the clients (max-flow = min-cut, Ford
  and Fulkerson 1956): never more than any of those terms, and less when, for example, the
  servers hang off one leaf whose uplinks are oversubscribed. Link capacities are line rates
  (Gb/s / 8): an upper bound, as a measured figure must be below it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

# raid level -> (read factor, write factor) as functions of the group's drive count n
RAID_FACTORS = {
    "raid0": (lambda n: n, lambda n: n),
    "raid1": (lambda n: n, lambda n: 1),
    "raid5": (lambda n: n - 1, lambda n: n - 1),
    "raid6": (lambda n: n - 2, lambda n: n - 2),
    "raid10": (lambda n: n, lambda n: n / 2),
}
# Drives' worth of usable capacity in a group of n
RAID_DATA = {"raid0": lambda n: n, "raid1": lambda n: 1, "raid5": lambda n: n - 1,
             "raid6": lambda n: n - 2, "raid10": lambda n: n / 2}
# Fewest drives mdadm builds each level from
RAID_MIN_DRIVES = {"raid0": 2, "raid1": 2, "raid5": 3, "raid6": 4, "raid10": 2}
BITS_PER_BYTE = 8
MB_PER_GB = 1000
SOURCE, SINK = ("source",), ("sink",)  # tuples: no host or switch is named so


def group_rates_gbs(raid: str, drives: int, read_mbs: float,
                    write_mbs: float) -> tuple[float, float]:
    """(read, write) of one RAID group in GB/s."""
    read, write = RAID_FACTORS[raid]
    return read(drives) * read_mbs / MB_PER_GB, write(drives) * write_mbs / MB_PER_GB


def max_flow_gbs(graph: nx.Graph | None, servers: dict[str, float | None],
                 clients: Iterable[str] | dict[str, float]) -> float:
    """Largest flow from the servers (each capped at its value; None = uncapped) to the
    clients (a mapping: each capped at its value too) over the fabric graph, whose edges carry
    ``links`` x ``speed_gbps``. The clients are merged into one sink and the servers fed from
    one source; both directions of every cable carry their line rate (full duplex), so reads
    and writes use the same graph."""
    caps = clients if isinstance(clients, dict) else {}
    if graph is None:
        return 0.0
    flow = nx.DiGraph()
    for a, b, data in graph.edges(data=True):
        capacity = data["links"] * data["speed_gbps"] / BITS_PER_BYTE
        flow.add_edge(a, b, capacity=capacity)
        flow.add_edge(b, a, capacity=capacity)
    for server, cap in servers.items():
        if server in flow:
            flow.add_edge(SOURCE, server, **({} if cap is None else {"capacity": cap}))
    sinks = 0
    for client in clients:
        if client in flow and client not in servers:
            # uncapped without a cap: the client's own links are its limit
            flow.add_edge(client, SINK, **({"capacity": caps[client]} if client in caps
                                           else {}))
            sinks += 1
    if SOURCE not in flow or not sinks:
        return 0.0
    value: float = nx.maximum_flow_value(flow, SOURCE, SINK)
    return value


def link_gbs(graph: nx.Graph | None, host: str) -> float:
    """A host's NIC bandwidth into the fabric: its cables' line rates, GB/s."""
    if graph is None or host not in graph:
        return 0.0
    return float(sum(d["links"] * d["speed_gbps"] for _, _, d in graph.edges(host, data=True))
                 / BITS_PER_BYTE)


def limiting_term(terms: dict[str, Any], bound: float) -> str:
    """The name of the smallest term that equals the bound (within rounding)."""
    present = {name: value for name, value in terms.items() if value is not None}
    if not present:
        return "none"
    name = min(present, key=lambda k: present[k])
    return name if abs(present[name] - bound) <= 1e-6 * max(1.0, bound) else "fabric"
