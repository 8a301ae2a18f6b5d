"""The planned topology file written straight from the plan's link columns, record by record.

The same text as ibnetdiscover.topology_text(plan.subnet.topology(...)), which stays the
plain version and the oracle (tests/test_subnet_manager.py compares the two on every
example): at 100,000 GPUs the file has 700,000 lines, and building a Topology of named
tuples first, then formatting it port by port, took seconds of CPU. Here each device's
quoted id and description are formatted once, each link's two lines once, and each switch's
lines land in a slot per port, so the records come out in port order without sorting.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

from cluster_iac.formats.ibnetdiscover import check_description
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import fabric_rows, node_guids, sm_hosts, switch_port

RECORDS_PER_CHUNK = 512
"""Records joined into one piece of the file (a few hundred kB): fewer writes than one a
record, and never the whole 40 MB text at once."""


def topology_chunks(plan: Plan, network: str, header: tuple[str, ...]) -> Iterator[str]:
    """The topology file's text, in pieces (see the module docstring)."""
    tier = plan.fabric_wiring[network].tier
    links = plan.links
    hosts, cabled = fabric_rows(plan, network)  # host to switch, switch to switch
    h_device, h_port, h_switch, h_switch_port = (
        [column[i] for i in hosts]
        for column in (links.a_device, links.a_port, links.b_device, links.b_port))
    a_switch, a_port, b_switch, b_port = (
        [column[i] for i in cabled]
        for column in (links.a_device, links.a_port, links.b_device, links.b_port))
    switches = [name for level in ("leaf", "spine", "core")
                for name, t in tier.items() if t == level]
    ports = {s.name: s.ports for s in plan.switches}
    number = {name: switch_port(name) for name in {*h_switch_port, *a_port, *b_port}}
    for name in chain(dict.fromkeys(h_device), dict.fromkeys(h_port), switches):
        check_description(name)
    # host adapters, numbered in cabling order with the master's first (as topology())
    names = [f"{device} {port}" for device, port in zip(h_device, h_port, strict=True)]
    masters = sm_hosts(plan, network)[:1]
    order = ([k for k, device in enumerate(h_device) if device in masters]
             + [k for k, device in enumerate(h_device) if device not in masters])
    guids, port_guids = node_guids(plan, [names[k] for k in order], switches)
    ref = {name: f'"S-{guids[name]:016x}"' for name in switches}
    tail = {name: f'\t\t# "{name}"' for name in switches}
    h_number = list(map(number.__getitem__, h_switch_port))
    a_number = list(map(number.__getitem__, a_port))
    b_number = list(map(number.__getitem__, b_port))
    # each switch port's line, the far end after its number: a host's links at the switch
    # end, then each switch-to-switch link at its A end and at its B end
    ca_number = list(map(guids.__getitem__, names))
    ca_ref = [f'"H-{guid:016x}"' for guid in ca_number]
    ca_guid = [f"({port_guids[name]:x})" for name in names]
    ca_tail = [f'\t\t# "{name}"' for name in names]
    lines = [f"[{n}]\t{at}[1]{guid}{tail}"
             for n, at, guid, tail in zip(h_number, ca_ref, ca_guid, ca_tail, strict=True)]
    lines += [f"[{an}]\t{ref[b]}[{bn}]{tail[b]}"
              for an, b, bn in zip(a_number, b_switch, b_number, strict=True)]
    lines += [f"[{bn}]\t{ref[a]}[{an}]{tail[a]}"
              for bn, a, an in zip(b_number, a_switch, a_number, strict=True)]
    ends = (chain(h_switch, a_switch, b_switch), chain(h_number, a_number, b_number))
    slots = {name: [""] * (ports[name] + 1) for name in switches}
    if not _placed(slots, *ends, lines):
        _refuse(zip(hosts, h_switch, h_number, strict=True),
                zip(cabled, a_switch, a_number, strict=True),
                zip(cabled, b_switch, b_number, strict=True), ports=ports)

    def adapter(k: int) -> str:
        switch, n = h_switch[k], h_number[k]
        return (f"\n\ncaguid=0x{ca_number[k]:x}\nCa\t1 {ca_ref[k]}{ca_tail[k]}\n"
                f"[1]{ca_guid[k]}\t{ref[switch]}[{n}]{tail[switch]}")

    def switch(name: str) -> str:
        guid = guids[name]
        lines = "\n".join(filter(None, slots[name]))
        return (f"\n\nswitchguid=0x{guid:x}({guid:x})\nSwitch\t{ports[name]} {ref[name]}"
                f"{tail[name]} enhanced port 0 lid 0 lmc 0\n{lines}")

    first = 1 if masters and order else 0
    yield "\n".join(f"# {line}" if line else "#" for line in header)
    yield "".join(map(adapter, order[:first]))
    for start in range(0, len(switches), RECORDS_PER_CHUNK):
        yield "".join(map(switch, switches[start:start + RECORDS_PER_CHUNK]))
    for start in range(first, len(order), RECORDS_PER_CHUNK):
        yield "".join(map(adapter, order[start:start + RECORDS_PER_CHUNK]))
    yield "\n"


def _placed(slots: dict[str, list[str]], devices: Iterable[str], numbers: Iterable[int],
            lines: Sequence[str]) -> bool:
    """Each line in its switch's slot for its port, so a record's lines come out in port
    order without sorting; False when a port is beyond its switch's or is cabled twice (as
    many slots filled as lines, counted once, or a slot past the end)."""
    try:
        for device, port, line in zip(devices, numbers, lines, strict=True):
            slots[device][port] = line
    except IndexError:
        return False
    return sum(len(held) - held.count("") for held in slots.values()) == len(lines)


def _refuse(*ends: Iterable[tuple[int, str, int]], ports: dict[str, int]) -> None:
    """The ValueError of the first switch port, in table order, that is beyond its switch's
    ports or cabled twice (each row's A end before its B end)."""
    seen: set[tuple[str, int]] = set()
    for _row, device, port in sorted(chain(*ends), key=lambda end: end[0]):
        if port > ports[device]:
            raise ValueError(f"{device} has no port {port}")
        if (device, port) in seen:
            raise ValueError(f"port {port} of {device} is cabled twice")
        seen.add((device, port))
    raise AssertionError("a switch port misplaced, yet none found")
