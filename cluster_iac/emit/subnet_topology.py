"""The planned topology file written straight from the plan's link columns, record by record.

The same text as ibnetdiscover.topology_text(plan.subnet.topology(...)), which stays the
plain version and the oracle (tests/test_subnet_manager.py compares the two on every
example): at 100,000 GPUs the file has 700,000 lines, and building a Topology of named
tuples first, then formatting it port by port, took seconds of CPU. Here each device's
quoted id and description are formatted once, each link's two lines once, and each switch's
lines land in a slot per port, so the records come out in port order without sorting.
"""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.formats.ibnetdiscover import check_description
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import node_guids, sm_hosts, switch_port

RECORDS_PER_CHUNK = 512
"""Records joined into one piece of the file (a few hundred kB): fewer writes than one a
record, and never the whole 40 MB text at once."""


def topology_chunks(plan: Plan, network: str, header: tuple[str, ...]) -> Iterator[str]:
    """The topology file's text, in pieces (see the module docstring)."""
    tier = plan.fabric_wiring[network].tier
    links = plan.links
    rows = [i for i, name in enumerate(links.network) if name == network]
    a_device, a_port, b_device, b_port = (links.a_device, links.a_port, links.b_device,
                                          links.b_port)
    switches = [name for level in ("leaf", "spine", "core")
                for name, t in tier.items() if t == level]
    ports = {s.name: s.ports for s in plan.switches}
    number = {name: switch_port(name) for name in {b_port[i] for i in rows}
              | {a_port[i] for i in rows if tier.get(a_device[i]) != "node"}}
    checked = _Checked()
    # host adapters, numbered in cabling order with the master's first (as topology())
    adapters = [i for i in rows if tier.get(a_device[i]) == "node"]
    masters = sm_hosts(plan, network)[:1]
    adapters.sort(key=lambda i: a_device[i] not in masters)
    adapter_of = {i: n for n, i in enumerate(adapters)}
    names = [f"{checked(a_device[i])} {checked(a_port[i])}" for i in adapters]
    guids, port_guids = node_guids(plan, names, switches)
    ca_number = [guids[name] for name in names]
    ca_ref = [f'"H-{guid:016x}"' for guid in ca_number]
    ca_guid = [f"({port_guids[name]:x})" for name in names]
    ca_tail = [f'\t\t# "{name}"' for name in names]
    ca_line = [""] * len(adapters)
    ref = {name: f'"S-{guids[name]:016x}"' for name in switches}
    tail = {name: f'\t\t# "{checked(name)}"' for name in switches}
    slots = {name: [""] * (ports[name] + 1) for name in switches}
    for i in rows:
        b = b_device[i]
        bn = number[b_port[i]]
        b_slots = slots[b]
        n = adapter_of.get(i)
        if n is not None:
            line = f"[{bn}]\t{ca_ref[n]}[1]{ca_guid[n]}{ca_tail[n]}"
            ca_line[n] = f"[1]{ca_guid[n]}\t{ref[b]}[{bn}]{tail[b]}"
        else:
            a = a_device[i]
            an = number[a_port[i]]
            line = f"[{bn}]\t{ref[a]}[{an}]{tail[a]}"
            _put(slots[a], an, f"[{an}]\t{ref[b]}[{bn}]{tail[b]}", a)
        _put(b_slots, bn, line, b)

    def adapter(n: int) -> str:
        return (f"\n\ncaguid=0x{ca_number[n]:x}\nCa\t1 {ca_ref[n]}{ca_tail[n]}\n"
                f"{ca_line[n]}")

    def switch(name: str) -> str:
        guid = guids[name]
        lines = "\n".join(filter(None, slots[name]))
        return (f"\n\nswitchguid=0x{guid:x}({guid:x})\nSwitch\t{ports[name]} {ref[name]}"
                f"{tail[name]} enhanced port 0 lid 0 lmc 0\n{lines}")

    first = 1 if masters and adapters else 0
    yield "\n".join(f"# {line}" if line else "#" for line in header)
    yield "".join(map(adapter, range(first)))
    for start in range(0, len(switches), RECORDS_PER_CHUNK):
        yield "".join(map(switch, switches[start:start + RECORDS_PER_CHUNK]))
    for start in range(first, len(adapters), RECORDS_PER_CHUNK):
        yield "".join(map(adapter, range(start, min(start + RECORDS_PER_CHUNK,
                                                     len(adapters)))))
    yield "\n"


def _put(slots: list[str], port: int, line: str, device: str) -> None:
    if port >= len(slots):
        raise ValueError(f"{device} has no port {port}")
    if slots[port]:
        raise ValueError(f"port {port} of {device} is cabled twice")
    slots[port] = line


class _Checked(dict[str, str]):
    """A name checked as a node description (ibnetdiscover.check_description) once."""

    def __call__(self, name: str) -> str:
        if name not in self:
            check_description(name)
            self[name] = name
        return name
