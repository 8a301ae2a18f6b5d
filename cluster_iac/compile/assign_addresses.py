"""IPv4 addresses from per-class pools of each network, every pool in name order.

Each subnet is cut into pools, each a fixed share of the subnet in this order, so that adding
a device takes the next address of its own pool and moves no other address:

| network         | pools, each a share of the subnet                                      |
|-----------------|------------------------------------------------------------------------|
| management, bmc | infrastructure 1/16, compute 1/2, switches 1/16, fabric 1/8,           |
|                 | nvlink 1/8, pdus 1/8                                                   |
| ipoib, storage  | infrastructure 1/8, compute 7/8                                        |

- infrastructure: the reserved addresses first (gateway, VIPs), then controllers, login,
  service and Lustre servers; compute: compute nodes; switches: the network's own access,
  aggregation and core switches; fabric: the management ports (mgmt0) of compute and storage
  fabric switches; nvlink: those of NVLink switch trays; pdus: the PDUs' network cards.
  PDUs come by rack, racks without compute nodes first.
  Fabric, NVLink and PDU ports sit on the BMC network, or on the management network when
  there is no BMC network.
- Inside a pool, devices take addresses in natural name order (dgx-9 before dgx-10); switches
  in growth order: upper tiers, then racks without compute nodes, then compute racks and fabric
  leaves (compute fabric before storage), each by name, so a new rack or scalable unit appends.
- The network address and, below /31, the broadcast address are never given out.
A pool with more devices than addresses is a located error that names the pool and its range.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from ipaddress import IPv4Network
from itertools import chain, compress
from operator import attrgetter
from socket import inet_aton
from struct import unpack
from typing import NamedTuple

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.sorting import natural_sorted
from cluster_iac.compile.build_management import growth_sorted
from cluster_iac.plan import Plan
from cluster_iac.plan.kept import Lock
from cluster_iac.plan.node_types import NIC_ROLE
from cluster_iac.plan.power import rack_pdus
from cluster_iac.spec import ClusterSpec

# Networks whose devices include switches and PDUs (their management ports live there).
DEVICE_NETWORKS = ("management", "bmc")
POOLS: dict[str, tuple[tuple[str, Fraction], ...]] = {
    "device": (("infrastructure", Fraction(1, 16)), ("compute", Fraction(1, 2)),
               ("switches", Fraction(1, 16)), ("fabric", Fraction(1, 8)),
               ("nvlink", Fraction(1, 8)), ("pdus", Fraction(1, 8))),
    "host": (("infrastructure", Fraction(1, 8)), ("compute", Fraction(7, 8))),
}


class PoolOverflow(ValueError):
    """A pool holds fewer addresses than it has devices."""


def assign_addresses(spec: ClusterSpec, plan: Plan) -> Plan:
    """network -> device -> address; a pool too small for its devices is a located error."""
    addresses: dict[str, dict[str, str]] = {}
    problems: list[Diagnostic] = []
    order = Order(plan)
    for network in ("management", "bmc", "ipoib", "storage"):
        ipnet = getattr(plan.settings.networks, network)
        if ipnet is None:
            continue
        members = pools(plan, network, order)
        try:
            held, found = locked(plan.lock, network, ipnet.cidr, members)
            problems += found
            addresses[network] = allocate(ipnet.cidr, ipnet.reserved, members,
                                          layout(network), held)
        except PoolOverflow as exc:
            problems.append(Diagnostic(
                "SPEC-SUBNET-TOO-SMALL", f"networks.{network}.cidr {ipnet.cidr}: {exc}",
                ("networks", network, "cidr"),
                hint="use a larger subnet: each pool is a fixed share of it (README, 'IP plan')"))
    if problems:
        raise CompileError(problems)
    return replace(plan, addresses=addresses)


def layout(network: str) -> tuple[tuple[str, Fraction], ...]:
    return POOLS["device" if network in DEVICE_NETWORKS else "host"]


class Order:
    """Hosts in name order, switches in growth order and racks (those without compute nodes
    first) by name: sorted once for all networks, each of which takes its own in this order."""

    def __init__(self, plan: Plan) -> None:
        self.hosts = natural_sorted(plan.nodes, attrgetter("hostname"))
        self.switches = growth_sorted(plan, plan.switches)
        compute_racks = {n.rack for n in plan.nodes if n.role == "compute"}
        self.racks = natural_sorted(plan.racks, attrgetter("name"),
                                    first=lambda r: r.name in compute_racks)


def pools(plan: Plan, network: str, order: Order | None = None) -> dict[str, list[str]]:
    """Pool -> the devices on ``network`` that take an address from it, in name order."""
    order = order or Order(plan)
    role = NIC_ROLE.get(network)
    on_network = {name: role is None or nt.nic_count(role) > 0
                  for name, nt in plan.node_types.items()}
    hosts = [n for n in order.hosts if on_network[n.node_type]]
    found: dict[str, list[str]] = {
        "infrastructure": [n.hostname for n in hosts if n.role != "compute"],
        "compute": [n.hostname for n in hosts if n.role == "compute"],
    }
    if network not in DEVICE_NETWORKS:
        return found
    by_pool: dict[str, list[str]] = {"switches": [], "fabric": [], "nvlink": []}
    carries_ports = network == "bmc" or plan.settings.networks.bmc is None
    for sw in order.switches:
        if sw.network == network:
            by_pool["switches"].append(sw.name)
        elif carries_ports and sw.network in ("compute", "storage", "nvlink"):
            by_pool["nvlink" if sw.network == "nvlink" else "fabric"].append(sw.name)
    found.update((pool, names) for pool, names in by_pool.items() if names or pool == "switches")
    if carries_ports:  # racks without compute nodes first, as for switches
        pdus = rack_pdus(plan)
        found["pdus"] = list(chain.from_iterable(pdus[r.name] for r in order.racks))
    return found


class Held(NamedTuple):
    """What the lock holds on one network: the devices' own addresses, and every address
    no new device may take (those, and retired devices')."""

    own: dict[str, str]
    taken: set[int]


def locked(lock: Lock, network: str, cidr: IPv4Network, members: dict[str, list[str]],
           ) -> tuple[Held, list[Diagnostic]]:
    """The lock's addresses on ``network``; one outside the subnet (or its network or
    broadcast address) is a conflict at its lock line."""
    held, problems = Held({}, set()), list[Diagnostic]()
    if not lock.exists:
        return held, problems
    present = set(chain.from_iterable(members.values()))
    size = cidr.num_addresses
    base = int(cidr.network_address)
    usable = range(1, size - 1) if cidr.prefixlen < 31 else range(size)
    low, high = base + usable.start, base + usable.stop - 1
    entries = list(lock.of_kind("address", network))
    devices = [entry.key[2] for entry in entries]
    addresses = [entry.value[0] for entry in entries]
    # each address as its number: their four bytes each (the lock read them as dotted IPv4)
    # joined, and read as big-endian 32-bit numbers at once
    numbers = list(unpack(f">{len(addresses)}I", b"".join(map(inet_aton, addresses))))
    if numbers and (min(numbers) < low or max(numbers) > high):
        inside = [low <= number <= high for number in numbers]
        for entry, device, address, fits in zip(entries, devices, addresses, inside,
                                                strict=True):
            if not fits and device in present:
                problems.append(lock.error(
                    entry, "LOCK-CONFLICT", f"{device}'s {network} address {address} is not "
                    f"a usable address of networks.{network}.cidr {cidr}",
                    lock.way_out(device), column=len(f"address {network} {device} ") + 1,
                    cause=("networks", network, "cidr")))
        devices, addresses, numbers = (list(compress(column, inside))
                                       for column in (devices, addresses, numbers))
    held.taken.update(numbers)
    if present.issuperset(devices):
        held.own.update(zip(devices, addresses, strict=True))
    else:
        held.own.update((device, address) for device, address
                        in zip(devices, addresses, strict=True) if device in present)
    return held, problems


def allocate(cidr: IPv4Network, reserved: int, members: dict[str, list[str]],
             shares: tuple[tuple[str, Fraction], ...], held: Held | None = None,
             ) -> dict[str, str]:
    """Device -> address: each pool's devices in order from the pool's first address; the
    first pool starts after the ``reserved`` addresses. A device ``held`` keeps its address,
    and the others skip every held one. Raises PoolOverflow naming the pool, its range and
    the counts."""
    size = cidr.num_addresses
    base = int(cidr.network_address)
    first_usable = 1 if cidr.prefixlen < 31 else 0
    last_usable = size - 2 if cidr.prefixlen < 31 else size - 1
    result: dict[str, str] = {}
    start = Fraction(0)
    for index, (pool, share) in enumerate(shares):
        low, high = int(start * size), int((start + share) * size) - 1
        start += share
        if index == 0:
            low = first_usable + reserved
        low, high = max(low, first_usable), min(high, last_usable)
        names = members.get(pool, [])
        if held is not None and held.taken:
            result.update(_around(names, held, base, low, high, pool))
            continue
        free = max(0, high - low + 1)
        if len(names) > free:
            raise _overflow(pool, base, low, high, free, len(names),
                            f" after {reserved} reserved" if index == 0 else "")
        result.update(zip(names, _dotted_run(base + low, len(names)), strict=True))
    return result


def _around(names: list[str], held: Held, base: int, low: int, high: int,
            pool: str) -> dict[str, str]:
    """The pool's devices: each held one at its own address, each other at the pool's next
    address that no device holds."""
    found: dict[str, str] = {}
    offset = low
    for name in names:
        own = held.own.get(name)
        if own is not None:
            found[name] = own
            continue
        while offset <= high and base + offset in held.taken:
            offset += 1
        if offset > high:
            new = sum(1 for n in names if n not in held.own)
            free = sum(1 for o in range(low, high + 1) if base + o not in held.taken)
            raise _overflow(pool, base, low, high, free, new, " not held by the lock")
        found[name] = _dotted(base + offset)
        offset += 1
    return found


def _overflow(pool: str, base: int, low: int, high: int, free: int, devices: int,
              which: str) -> PoolOverflow:
    where = f"{_dotted(base + low)}-{_dotted(base + high)}" if high >= low else "no addresses"
    return PoolOverflow(f"pool '{pool}' ({where}, {free} addresses{which}) is too small "
                        f"for its {devices} devices")


_OCTETS = [str(n) for n in range(256)]


def _dotted_run(first: int, n: int) -> list[str]:
    """The n addresses from ``first``, dotted: each /24's first three octets written once."""
    found: list[str] = []
    address, end = first, first + n
    while address < end:
        stop = min(end, (address | 255) + 1)  # the end of this /24, or of the run
        prefix = f"{address >> 24}.{(address >> 16) & 255}.{(address >> 8) & 255}."
        found += map(prefix.__add__, _OCTETS[address & 255:(address & 255) + stop - address])
        address = stop
    return found


def _dotted(address: int) -> str:
    return f"{address >> 24}.{(address >> 16) & 255}.{(address >> 8) & 255}.{address & 255}"
